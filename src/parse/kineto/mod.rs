//! PyTorch profiler (Kineto) traces → [`GpuTrace`] (formats.md §8, gpu-traces.md §1).
//!
//! One streaming pass: the file (gzip inflated as a stream by
//! [`crate::ingest::gzip::maybe_gunzip`]) goes through the shared splitter
//! ([`for_each_member_and_event`]); each event object is read with the key scanner only
//! ([`fields_dup`], no DOM) and each top-level member (`deviceProperties`, `distributedInfo`,
//! `baseTimeNanoseconds`, `displayTimeUnit`…) with `serde_json` (they are small). Never a
//! whole-file string or tree; memory grows with the events kept.
//!
//! Categories: 2023+ names (`kernel`, `gpu_memcpy`, `gpu_memset`, `cpu_op`, `cuda_runtime`,
//! `cuda_driver`, `user_annotation`, `gpu_user_annotation`, `python_function`, `cuda_sync`,
//! `ac2g`, `async_cpu_to_gpu`) and the 2021 ones (`Kernel`, `Memcpy`, `Memset`, `Operator`,
//! `Runtime`, `async`). ROCm traces use the same categories (`hip…` runtime names); Meta's MTIA
//! traces write device ops as `mtia_ccp_events` and launches as `mtia_runtime` (read as
//! `kernel` and `cuda_runtime`, as HTA does).
//!
//! Damage: a string with a raw backslash that is not a JSON escape (a Windows path
//! `"D:\work\train.py"`) is kept **verbatim** (no escape of it decoded) and located by line,
//! column and byte ([`read_located`] finds the lines in a second streamed read of the first
//! [`MAX_LOCATED`] of them only); string `pid`s are kept as text; float `ts` are exact ns; a
//! file cut inside the array or a gzip stream cut short keeps the events before the cut.

mod args;
mod category;
pub mod marks;
mod members;
mod merge;
mod nccl;
#[cfg(not(target_arch = "wasm32"))]
pub mod ranges;
mod ranks;
mod read;
mod sniff;
mod split;

pub use marks::has_pytorch_marks;
pub use ranks::{MergedRanks, RankKey, RANK_PID_FACTOR};
#[cfg(not(target_arch = "wasm32"))]
pub use read::read_located_ranges;
pub use read::{push_problems, read, read_located, read_traces};
pub use sniff::{sniff, sniff_within};
pub use split::Split;

#[cfg(test)]
mod ranges_tests;
#[cfg(test)]
mod ranks_tests;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::ops::ControlFlow;

use rustc_hash::FxHashMap as HashMap;

use super::trace_json::diag::{Issue, TraceDiagnostics};
use super::trace_json::object::Event;
use super::trace_json::scan::{
    as_str, decode_str, first_invalid_escape, plain_text, time_ns, verbatim_str,
};
use super::trace_json::splitter::TraceScan;
use crate::base::arith::{self, Tally};
use crate::model::gpu::{
    DeviceOp, GpuTrace, GpuTraceBuilder, HostKind, HostOp, MemorySample, StepMarker,
};
use crate::model::strings::StrId;
use crate::parse::ParseError;
use args::{compact_json, int_arg};
#[cfg(test)]
use category::CATS;
use category::{cat_text, category, step_number, Cat};
use ranks::RanksSeen;
use split::{Origins, Table};

/// How many raw-backslash strings are located by line and column (the rest are counted).
pub const MAX_LOCATED: usize = 5;

/// Problem codes of this reader beyond the shared trace findings
/// ([`diag::KINETO`](super::trace_json::diag::KINETO)).
pub mod codes {
    /// A string with a raw backslash that is not a JSON escape (Windows path), kept verbatim.
    pub const RAW_BACKSLASH: &str = "GPU-TV-016";
    /// Flow ends without their other end (`s` without `f` or the reverse).
    pub const UNPAIRED_FLOW: &str = "GPU-TV-017";
    /// A top-level member (`deviceProperties`, …) that could not be read.
    pub const BAD_MEMBER: &str = "GPU-TV-018";
    /// Events dropped because a time is outside the model's range.
    pub const OUT_OF_RANGE: &str = "GPU-TV-010";
    /// A merged trace of several ranks, split into its ranks (gpu-traces.md §6).
    pub const MERGED_RANKS: &str = "GPU-TV-020";
}

/// What one pass saw beside the trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KinetoInfo {
    /// The splitter's report (truncation, stop, structural findings + the value findings).
    pub scan: TraceScan,
    /// Compressed bytes read when the file was gzip.
    pub compressed_bytes: Option<u64>,
    /// Events by phase that are not kept (`B`/`E`, `C`, other instants, …): `(ph, count)`.
    pub not_kept: Vec<(String, u64)>,
    /// Flow starts without an end and ends without a start.
    pub unpaired_flows: u64,
    /// Strings with a raw backslash (kept verbatim): total count.
    pub raw_backslash: u64,
    /// Absolute byte offsets of the first [`MAX_LOCATED`] raw backslashes, with the key.
    pub raw_backslash_at: Vec<(u64, &'static str)>,
    /// Events dropped because a time lies outside the model range.
    pub out_of_range: Tally,
    /// Top-level members that could not be read: `(key, byte offset)`.
    pub bad_members: Vec<(String, u64)>,
    /// The ranks of a merged multi-rank trace, when its events belong to two or more.
    pub merged: Option<MergedRanks>,
    /// The ranks a splitting read dealt the merged trace into (empty when not split).
    pub split_ranks: Vec<i64>,
    /// Rows of a split trace that no rank key placed (left out of every rank).
    pub unplaced: u64,
}

impl KinetoInfo {
    /// The error that stopped the read before any event: the trace is not usable.
    pub fn unusable(&self) -> Option<&ParseError> {
        self.scan.error.as_ref().filter(|_| self.scan.events == 0)
    }
}

/// The Kineto reader as a push consumer of one splitter pass: feed it
/// [`KinetoBuilder::member`] and [`KinetoBuilder::event`], then [`KinetoBuilder::finish`].
#[derive(Default)]
pub struct KinetoBuilder {
    b: GpuTraceBuilder,
    info: KinetoInfo,
    diag: TraceDiagnostics,
    /// Open flow starts by `(kind, id)`: launch ts.
    flow_starts: HashMap<(u8, i64), i64>,
    /// Flow ends seen before their start: `(kind, id)` → arrival ts.
    flow_ends: HashMap<(u8, i64), i64>,
    not_kept: HashMap<String, u64>,
    /// Interned raw `pid` / `tid` texts.
    ids: HashMap<Vec<u8>, StrId>,
    /// Scratch buffer of [`compact_json`].
    scratch: Vec<u8>,
    /// Plain (inflated) size of the file, until the tables are sized for it
    /// ([`KinetoBuilder::size_tables`]).
    sized_for: Option<u64>,
    /// The rank ids the events carry (gpu-traces.md §6).
    ranks: RanksSeen,
    /// The origin of every kept row, for splitting a merged trace (`split`).
    origins: Origins,
    /// The reader of a later byte range: flow ends and members kept for the merge (`merge`).
    deferred: Option<merge::Deferred>,
    /// The byte where this reader's bytes start (the table sizing counts from it).
    sized_base: u64,
}

/// What one pass read: one trace, or a merged trace dealt into its ranks (gpu-traces.md §6).
pub enum Traces {
    /// The whole file is one rank's trace.
    One(GpuTrace),
    /// A merged trace, split: one trace per rank.
    Ranks(Split),
}

impl Traces {
    /// The one trace, or `None` for a split merged trace.
    pub fn into_one(self) -> Option<GpuTrace> {
        match self {
            Traces::One(t) => Some(t),
            Traces::Ranks(_) => None,
        }
    }
}

/// Event bytes read before the tables are sized for the whole file.
const SIZE_PROBE_BYTES: u64 = 4 << 20;

/// The keys of an event this reader reads.
const KEYS: [&str; 9] = ["ph", "name", "cat", "pid", "tid", "ts", "dur", "args", "id"];

/// The `args` members this reader reads: the links and stream of an op, its `Input Dims`
/// (kept on `cpu_op`s), the other keys that show a profiler option was on (anomaly.md
/// §1.1.1; `TraceEvidence::note_args`), and the `rank` of a merged trace (gpu-traces.md §6).
const ARG_KEYS: [&str; 12] = [
    "correlation",
    "External id",
    "device",
    "stream",
    "Input Dims",
    "Input type",
    "Input Strides",
    "Concrete Inputs",
    "Call stack",
    "flops",
    "Module Hierarchy",
    "rank",
];

impl KinetoBuilder {
    /// An empty reader.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty reader of a file of `plain_bytes` (uncompressed): once the first
    /// `SIZE_PROBE_BYTES` (4 MiB) of events are read, the row tables reserve what the rest
    /// of the file holds at the same density, so they grow by copying once or not at all
    /// instead of at every doubling (a copy of the whole table each time: wasm's allocator cannot
    /// remap pages). The reservation is tried (`try_reserve`), never forced.
    pub fn sized_for(plain_bytes: u64) -> Self {
        KinetoBuilder {
            sized_for: Some(plain_bytes),
            ..Self::default()
        }
    }

    /// The same reader, recording each row's origin so that [`KinetoBuilder::finish_traces`]
    /// can split a merged trace into its ranks.
    pub fn splitting(mut self) -> Self {
        self.origins.on = true;
        self
    }

    /// The origin of an event (`args.rank`, raw `pid`), or 0 when origins are not recorded.
    fn origin(&mut self, rank: Option<i64>, pid: Option<&[u8]>) -> u16 {
        if self.origins.on {
            self.origins.origin(rank, pid)
        } else {
            0
        }
    }

    /// Sizes the row tables for the whole file once `at` (the byte offset of the current event)
    /// passes `SIZE_PROBE_BYTES`: each table gets `len × (total − at) / at` more rows (+5 %).
    fn size_tables(&mut self, at: u64) {
        let Some(total) = self.sized_for else { return };
        let (at, total) = (at.saturating_sub(self.sized_base), total);
        if at < SIZE_PROBE_BYTES {
            return;
        }
        self.sized_for = None;
        let rest = total.saturating_sub(at);
        let more = |len: usize| {
            let n = crate::base::arith::rows_for_rest(len, at, rest);
            n.saturating_add(n / 20)
        };
        let t = &mut self.b.t;
        let _ = t.device_ops.try_reserve(more(t.device_ops.len()));
        let _ = t.host_ops.try_reserve(more(t.host_ops.len()));
        let _ = t.flows.try_reserve(more(t.flows.len()));
    }

    /// One top-level member of the wrapper object (`key` without quotes, `value` raw JSON).
    pub fn member(&mut self, key: &[u8], value: &[u8], at: u64) {
        if let Some(d) = &mut self.deferred {
            d.members.push((key.to_vec(), value.to_vec(), at));
            return;
        }
        if !members::read_member(&mut self.b.t.facts, key, value) {
            let k = String::from_utf8_lossy(key).into_owned();
            self.info.bad_members.push((k, at));
        }
    }

    /// The text of a string value, with its findings noted; `None` when not a string.
    fn string<'a>(
        &mut self,
        raw: &'a [u8],
        obj: &[u8],
        at: u64,
        key: &'static str,
    ) -> Option<Cow<'a, str>> {
        if let [b'"', inner @ .., b'"'] = raw {
            if let Some(text) = plain_text(inner) {
                return Some(Cow::Borrowed(text));
            }
        }
        if let Some(k) = first_invalid_escape(raw) {
            self.info.raw_backslash += 1;
            if self.info.raw_backslash_at.len() < MAX_LOCATED {
                // `raw` is a sub-slice of `obj`: its offset inside the event.
                let inside = raw.as_ptr() as usize - obj.as_ptr() as usize;
                self.info
                    .raw_backslash_at
                    .push((at + (inside + k) as u64, key));
            }
            return verbatim_str(raw);
        }
        let (text, flaws) = decode_str(raw)?;
        self.diag.note_str(flaws, obj, raw, at, key);
        Some(text)
    }

    /// Interns a raw `pid` / `tid` value: numbers as written, strings decoded.
    fn id_text(&mut self, raw: Option<&[u8]>) -> StrId {
        let raw = raw.unwrap_or(b"");
        if let Some(&id) = self.ids.get(raw) {
            return id;
        }
        let text = match raw.first() {
            Some(b'"') => as_str(raw).map(|s| s.into_owned()).unwrap_or_default(),
            _ => String::from_utf8_lossy(raw).into_owned(),
        };
        let id = self.b.intern(&text);
        self.ids.insert(raw.to_vec(), id);
        id
    }

    fn not_kept(&mut self, ph: &str) {
        match self.not_kept.get_mut(ph) {
            Some(n) => *n += 1,
            None => {
                self.not_kept.insert(ph.to_string(), 1);
            }
        }
    }

    /// One event object (raw bytes) at absolute byte offset `at`. Never `Break`s.
    pub fn event(&mut self, obj: &[u8], at: u64) -> ControlFlow<()> {
        self.indexed_event(Event::plain(obj), at)
    }

    /// [`KinetoBuilder::event`] of an event from the splitter (its keys from the splitter's
    /// index when it has one).
    pub fn indexed_event(&mut self, ev: Event<'_>, at: u64) -> ControlFlow<()> {
        if self.sized_for.is_some() {
            self.size_tables(at);
        }
        let obj = ev.bytes();
        let Some(([ph, name, cat, pid, tid, ts, dur, args, id], dup)) = ev.fields_dup(KEYS) else {
            self.diag.note(Issue::Malformed, at, None);
            return ControlFlow::Continue(());
        };
        if let Some(k) = dup {
            self.diag.note(Issue::DuplicateKey, at, Some(KEYS[k]));
        }
        let ph = match ph {
            // The common phases without decoding.
            Some(b"\"X\"") => Cow::Borrowed("X"),
            Some(b"\"s\"") => Cow::Borrowed("s"),
            Some(b"\"f\"") => Cow::Borrowed("f"),
            _ => ph.and_then(as_str).unwrap_or_default(),
        };
        if ph == "M" {
            // Process / thread names and sort indices: lane labels only.
            self.not_kept("M");
            return ControlFlow::Continue(());
        }
        let name = match name {
            Some(raw) => self.string(raw, obj, at, "name").unwrap_or_default(),
            None => Cow::Borrowed(""),
        };
        let cat_text = cat_text(cat);
        let Some(ts) = ts.and_then(time_ns) else {
            self.diag.note(Issue::BadTs, at, None);
            return ControlFlow::Continue(());
        };
        let Ok(ts) = arith::time_ns(ts.ns) else {
            self.info.out_of_range.record(at);
            return ControlFlow::Continue(());
        };
        match &*ph {
            "X" => {
                let d = match dur.and_then(time_ns) {
                    Some(d) if d.ns >= 0 => d.ns,
                    _ => {
                        self.diag.note(Issue::BadDur, at, None);
                        0
                    }
                };
                let Ok(end) = arith::interval_ns(ts, d) else {
                    self.info.out_of_range.record(at);
                    return ControlFlow::Continue(());
                };
                let a = args.and_then(|a| ev.args_fields(a, ARG_KEYS));
                let [corr, ext, device, stream, dims, rest @ ..] = a.unwrap_or([None; 12]);
                let rank = rest[6].map(|raw| int_arg(Some(raw))).filter(|&r| r >= 0);
                if let Some(r) = rank {
                    self.ranks.arg(r, at);
                }
                let origin = self.origin(rank, pid);
                // What the events show was recorded (anomaly.md §1.1.1).
                if !self.b.t.evidence.complete() && a.is_some() {
                    let has = |k: &str| {
                        (k == "Input Dims" && dims.is_some())
                            || ARG_KEYS[5..]
                                .iter()
                                .zip(rest)
                                .any(|(key, v)| *key == k && v.is_some())
                    };
                    self.b.t.evidence.note_args(has);
                }
                self.complete(
                    &name,
                    &cat_text,
                    (pid, tid, origin),
                    [corr, ext, device, stream, dims],
                    ts,
                    end,
                    at,
                );
                if let Some(a) = args.filter(|_| nccl::is_collective(&cat_text, &name)) {
                    self.nccl(&ev, a, (ts, end), int_arg(stream.or(tid)), origin);
                }
            }
            "s" | "f" | "t" => {
                let Cat::Flow(kind) = category(&cat_text, &name) else {
                    self.not_kept(&ph);
                    return ControlFlow::Continue(());
                };
                let origin = self.origin(None, pid);
                self.flow(ph == "s", kind, int_arg(id), ts, origin);
            }
            "i" | "I" if name == "[memory]" => {
                self.b.t.evidence.memory = true;
                let a = args.and_then(|a| {
                    ev.args_fields(
                        a,
                        [
                            "Device Type",
                            "Device Id",
                            "Bytes",
                            "Total Allocated",
                            "Total Reserved",
                            "rank",
                        ],
                    )
                });
                let [dt, di, by, ta, tr, rank] = a.unwrap_or([None; 6]);
                let rank = rank.map(|raw| int_arg(Some(raw))).filter(|&r| r >= 0);
                let origin = self.origin(rank, pid);
                self.b.t.memory.push(MemorySample {
                    ts_ns: ts,
                    device_type: int_arg(dt),
                    device_id: int_arg(di),
                    bytes: int_arg(by),
                    total_allocated: int_arg(ta),
                    total_reserved: int_arg(tr),
                });
                self.origins.tag(Table::Memory, origin, &self.b.t);
            }
            other => self.not_kept(other),
        }
        ControlFlow::Continue(())
    }

    /// An `X` event from `ts` to `end` (ns); `correlation`, `External id`, `device`, `stream`
    /// and `Input Dims` of its `args`.
    #[allow(clippy::too_many_arguments)]
    fn complete(
        &mut self,
        name: &str,
        cat: &str,
        (pid, tid, origin): (Option<&[u8]>, Option<&[u8]>, u16),
        [corr, ext, device, stream, dims]: [Option<&[u8]>; 5],
        ts: i64,
        end: i64,
        at: u64,
    ) {
        let name_id = self.b.intern(name);
        match category(cat, name) {
            Cat::Device(kind) => {
                // A device op's `pid` is its device; a merged trace adds rank × 10^8 (§6).
                let p = int_arg(pid);
                if p >= 0 {
                    self.ranks.pid(p / RANK_PID_FACTOR, at);
                }
                let or_num = |v: i64, raw: Option<&[u8]>| if v >= 0 { v } else { int_arg(raw) };
                self.b.t.device_ops.push(DeviceOp {
                    kind,
                    name: name_id,
                    device: or_num(int_arg(device), pid),
                    stream: or_num(int_arg(stream), tid),
                    start_ns: ts,
                    end_ns: end,
                    correlation: int_arg(corr),
                    external_id: int_arg(ext),
                });
                self.origins.tag(Table::Device, origin, &self.b.t);
            }
            Cat::Host(HostKind::GpuUserAnnotation) => {
                let s = int_arg(stream);
                let s = if s >= 0 { s } else { int_arg(tid) };
                self.b.t.gpu_annotations.push((s, ts, end, name_id));
                self.origins.tag(Table::Annotation, origin, &self.b.t);
            }
            Cat::Host(kind) => {
                if matches!(kind, HostKind::UserAnnotation | HostKind::CpuOp) {
                    if let Some(number) = step_number(name) {
                        self.b.t.steps.push(StepMarker {
                            number,
                            name: name_id,
                            from: kind,
                            start_ns: ts,
                            dur_ns: end - ts,
                        });
                        self.origins.tag(Table::Step, origin, &self.b.t);
                    }
                }
                let cat_id = self.b.intern(cat);
                let (pid, tid) = (self.id_text(pid), self.id_text(tid));
                // The shapes of an op, for the kernels it launches (`gpu_tables::kernel_table`).
                let shapes = match dims {
                    Some(raw) if kind == HostKind::CpuOp => {
                        compact_json(raw, &mut self.scratch);
                        match std::str::from_utf8(&self.scratch) {
                            Ok(t) => self.b.intern(t),
                            Err(_) => self.b.intern(&String::from_utf8_lossy(&self.scratch)),
                        }
                    }
                    _ => StrId::EMPTY,
                };
                if kind == HostKind::PythonFunction {
                    self.b.t.evidence.stack = true;
                }
                self.b.t.host_ops.push(HostOp {
                    kind,
                    name: name_id,
                    cat: cat_id,
                    pid,
                    tid,
                    start_ns: ts,
                    dur_ns: end - ts,
                    correlation: int_arg(corr),
                    external_id: int_arg(ext),
                    stream: int_arg(stream),
                    shapes,
                });
                self.origins.tag(Table::Host, origin, &self.b.t);
            }
            Cat::Flow(_) => self.not_kept("X"),
        }
    }

    /// Ends the pass (`scan`: the splitter's report): the whole file as one trace.
    pub fn finish(self, scan: TraceScan) -> (GpuTrace, KinetoInfo) {
        let (b, _, info) = self.finish_parts(scan);
        (b.finish(), info)
    }

    /// Ends the pass of a [`KinetoBuilder::splitting`] reader: a merged trace split into its
    /// ranks (`info.split_ranks` and `info.unplaced` say how), else the one trace.
    pub fn finish_traces(self, scan: TraceScan) -> (Traces, KinetoInfo) {
        let (b, origins, mut info) = self.finish_parts(scan);
        match info.merged.clone() {
            Some(m) if origins.tagged() => {
                let s = split::split(b, &origins, &m);
                info.split_ranks = s.ranks.iter().map(|(r, _)| *r).collect();
                info.unplaced = s.unplaced;
                (Traces::Ranks(s), info)
            }
            // Not merged, or every kept row has one origin: nothing to deal.
            _ => (Traces::One(b.finish()), info),
        }
    }

    fn finish_parts(self, scan: TraceScan) -> (GpuTraceBuilder, Origins, KinetoInfo) {
        let KinetoBuilder {
            b,
            mut info,
            diag,
            flow_starts,
            flow_ends,
            not_kept,
            ranks,
            origins,
            ..
        } = self;
        info.scan = scan;
        info.merged = ranks.merged();
        info.scan.diag.merge(&diag);
        info.unpaired_flows = (flow_starts.len() + flow_ends.len()) as u64;
        let mut nk: Vec<(String, u64)> = not_kept.into_iter().collect();
        crate::base::sort::sort(&mut nk);
        info.not_kept = nk;
        (b, origins, info)
    }
}
