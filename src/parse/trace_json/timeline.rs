//! `trace_view.json` → the anomaly analysis' trace tables
//! ([`HostEventTable`]: host events, step markers, flow ends, device-lane
//! events), anomaly.md §1.3 and formats.md §5. One streaming pass through the
//! shared splitter; each event is read with the key scanner only (no DOM).
//! Lanes are resolved after the pass, because `process_name` metadata may come
//! after the events it names.

use rustc_hash::FxHashMap as HashMap;
use std::io::Read;
use std::ops::ControlFlow;
use std::sync::Arc;

use super::diag::{Issue, TraceDiagnostics};
use super::object::Event;
use super::scan::{as_str, decimal_text, decode_str, fields, time_ns};
use super::splitter::{for_each_indexed_event, TraceScan};
use crate::base::arith::{self, Tally};
use crate::ingest::{ChunkReader, Progress};
use crate::model::trace_events::{
    DeviceEvent, FlowPoint, HostEventTable, Lane, MarkerEvent, TraceFlowKind,
};
use crate::parse::ParseError;

mod merge;
pub use merge::read_cut;

/// Device-process names of §1.3 (everything else is a host lane).
const DEVICE_PROCESSES: &[&str] = &[
    "Ascend Hardware",
    "HCCL",
    "Overlap Analysis",
    "NPU MEM",
    "HBM",
    "LLC",
    "AI Core Freq",
    "Acc PMU",
    "QoS",
    "Stars Soc Info",
];

/// What the pass saw, beside the table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimelineInfo {
    /// The splitter's report (truncation offset, wrapper form, stop).
    pub scan: TraceScan,
    /// Events that were objects but lacked a usable `ph`/`ts`.
    pub skipped: u64,
    /// `B` events never closed by an `E`.
    pub unmatched_begin: u64,
    /// Process names seen.
    pub processes: Vec<String>,
    /// Events dropped because `ts` or `ts + dur` lies outside the model's time range
    /// (`base::arith::TIME_LIMIT_NS`), with the byte offsets of the first few.
    pub out_of_range: Tally,
}

#[derive(Clone, Copy)]
struct Raw {
    name: u32,
    cat: u32,
    pid: u32,
    thread: u32,
    ts: i64,
    dur: i64,
}

/// True when `name` may delimit a step (anomaly.md §3.1): `ProfilerStep#`, `Iteration`, `Step#` or
/// the user prefix `custom_prefix` (when not empty).
pub fn is_marker_name(name: &str, custom_prefix: &str) -> bool {
    name.starts_with("ProfilerStep#")
        || name.starts_with("Iteration")
        || name.starts_with("Step#")
        || (!custom_prefix.is_empty() && name.starts_with(custom_prefix))
}

/// Reads one `trace_view.json`. `custom_prefix` is the user step-marker prefix (may be empty).
/// The same as feeding a [`TimelineBuilder`] from [`for_each_indexed_event`] (which
/// `engine::read::rank` does, beside the other consumers of the same pass).
///
/// Errors: those of [`for_each_indexed_event`] (empty file, not a trace, UTF-16, read
/// failure), and an error that stopped the read before any event
/// ([`TimelineInfo::unusable`]). A truncated
/// array or an error after some events is not an error: [`TraceScan::truncated_at`] /
/// [`TraceScan::error`] are set and the events read are used; every finding is in
/// `info.scan.diag` (problems: [`super::diag::push_problems`]).
pub fn read<R: Read>(
    src: R,
    file: &str,
    total: Option<u64>,
    custom_prefix: &str,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Result<(HostEventTable, TimelineInfo), ParseError> {
    let mut b = TimelineBuilder::new(custom_prefix);
    let file_arc: Arc<str> = Arc::from(file);
    let mut reader = ChunkReader::new(src, total);
    let scan = for_each_indexed_event(&mut reader, &file_arc, on_progress, &mut |ev, at| {
        b.indexed_event(ev, at)
    })?;
    let (t, info) = b.finish(scan);
    match info.unusable() {
        Some(e) => Err(e.clone()),
        None => Ok((t, info)),
    }
}

impl TimelineInfo {
    /// The error that stopped the read before any event was read: the trace is not usable.
    pub fn unusable(&self) -> Option<&ParseError> {
        self.scan.error.as_ref().filter(|_| self.scan.events == 0)
    }
}

/// The anomaly trace tables as a push consumer of one `trace_view.json` pass: feed it
/// every event of [`for_each_indexed_event`] with [`TimelineBuilder::indexed_event`], then
/// [`TimelineBuilder::finish`] with the splitter's report.
#[derive(Default)]
pub struct TimelineBuilder {
    custom_prefix: String,
    t: HostEventTable,
    info: TimelineInfo,
    pid_ids: HashMap<Vec<u8>, u32>,
    pid_names: HashMap<u32, String>,
    thread_names: HashMap<u32, String>,
    thread_tid: Vec<u32>,
    thread_cache: HashMap<Vec<u8>, (u32, u32)>,
    key_buf: Vec<u8>,
    raws: Vec<Raw>,
    open: HashMap<u32, Vec<(u32, u32, i64)>>,
    /// A range after the file's first (`ranges`): an `E` without an open `B` on its thread
    /// may close one of the ranges before; kept in `pending` for [`TimelineBuilder::absorb`].
    deferring: bool,
    pending: Vec<PendingEnd>,
    /// Findings in the values decoded here (the splitter notes the structural ones).
    diag: TraceDiagnostics,
}

/// An `E` of a range after the first with no `B` open on its thread in that range: where its
/// row and marker would go (`raws.len()`, `markers.len()` at that event).
#[derive(Clone, Copy)]
struct PendingEnd {
    thread: u32,
    pid: u32,
    ts: i64,
    raw_at: usize,
    marker_at: usize,
}

/// A flow `id` value: a decimal id (number or string) as its value, any other text hashed
/// (`936`, `"936"` → 936; `"a-1"` → FxHash of the text).
fn flow_id(raw: &[u8]) -> u128 {
    let text = as_str(raw);
    let bytes = text.as_deref().map_or(raw, |t| t.as_bytes());
    match std::str::from_utf8(bytes)
        .ok()
        .and_then(|t| t.parse::<u128>().ok())
    {
        Some(v) => v,
        None => {
            use std::hash::{Hash, Hasher};
            let mut h = rustc_hash::FxHasher::default();
            bytes.hash(&mut h);
            u128::from(h.finish())
        }
    }
}

/// The keys of an event the timeline reads.
const KEYS: [&str; 8] = ["ph", "name", "cat", "pid", "tid", "ts", "dur", "args"];

impl TimelineBuilder {
    /// A builder; `custom_prefix` is the user step-marker prefix (may be empty).
    pub fn new(custom_prefix: &str) -> Self {
        TimelineBuilder {
            custom_prefix: custom_prefix.to_string(),
            t: HostEventTable::new(),
            ..Default::default()
        }
    }

    /// One event object (raw bytes) at absolute byte offset `at`. Never `Break`s.
    pub fn event(&mut self, obj: &[u8], at: u64) -> ControlFlow<()> {
        self.indexed_event(Event::plain(obj), at)
    }

    /// [`TimelineBuilder::event`] of an event from the splitter (its keys from the
    /// splitter's index when it has one).
    pub fn indexed_event(&mut self, ev: Event<'_>, at: u64) -> ControlFlow<()> {
        let Some(([ph, name, cat, pid, tid, ts, dur, args], dup)) = ev.fields_dup(KEYS) else {
            self.info.skipped += 1;
            self.diag.note(Issue::Malformed, at, None);
            return ControlFlow::Continue(());
        };
        if let Some(k) = dup {
            self.diag.note(Issue::DuplicateKey, at, Some(KEYS[k]));
        }
        let ph = ph.and_then(as_str);
        let ph = ph.as_deref().unwrap_or("");
        let name = match name.and_then(|raw| Some((raw, decode_str(raw)?))) {
            Some((raw, (text, flaws))) => {
                self.diag.note_str(flaws, ev.bytes(), raw, at, "name");
                text
            }
            None => Default::default(),
        };
        let pid_raw = pid.unwrap_or(b"null");
        let tid_raw = tid.unwrap_or(b"null");
        self.key_buf.clear();
        self.key_buf.extend_from_slice(pid_raw);
        self.key_buf.push(0);
        self.key_buf.extend_from_slice(tid_raw);
        let (pid_id, thread) = match self.thread_cache.get(self.key_buf.as_slice()) {
            Some(&x) => x,
            None => {
                let next = self.pid_ids.len() as u32;
                let pid_id = *self.pid_ids.entry(pid_raw.to_vec()).or_insert(next);
                let (thread, _) = self.t.thread_key_bytes(pid_raw, tid_raw);
                if thread as usize == self.thread_tid.len() {
                    let tid_text = decimal_text(tid_raw)
                        .unwrap_or("")
                        .trim_matches('"')
                        .to_string();
                    self.thread_tid.push(self.t.intern(&tid_text));
                }
                self.thread_cache
                    .insert(self.key_buf.clone(), (pid_id, thread));
                (pid_id, thread)
            }
        };
        if ph == "M" {
            let n = args
                .and_then(|a| fields(a, ["name"]))
                .and_then(|[n]| n)
                .and_then(as_str)
                .map(|n| n.into_owned());
            match (&*name, n) {
                ("process_name", Some(n)) => {
                    self.pid_names.insert(pid_id, n);
                }
                ("thread_name", Some(n)) => {
                    self.thread_names.insert(thread, n);
                }
                _ => {}
            }
            return ControlFlow::Continue(());
        }
        // What the events show was recorded (anomaly.md §1.1.1), until everything was seen.
        if !self.t.evidence.complete() {
            let c = cat.and_then(as_str);
            if c.as_deref() == Some("python_function") {
                self.t.evidence.stack = true;
            } else if c.as_deref() == Some("cpu_op") {
                if let Some(a) = args {
                    let mut quoted = Vec::with_capacity(24);
                    self.t.evidence.note_args(|k| {
                        quoted.clear();
                        quoted.push(b'"');
                        quoted.extend_from_slice(k.as_bytes());
                        quoted.push(b'"');
                        memchr::memmem::find(a, &quoted).is_some()
                    });
                }
            } else if name == "[memory]" {
                self.t.evidence.memory = true;
            }
        }
        let Some(ts) = ts.and_then(time_ns) else {
            self.info.skipped += 1;
            self.diag.note(Issue::BadTs, at, None);
            return ControlFlow::Continue(());
        };
        let Ok(ts) = arith::time_ns(ts.ns) else {
            self.info.out_of_range.record(at);
            return ControlFlow::Continue(());
        };
        match ph {
            "X" => {
                let d = match dur.and_then(time_ns) {
                    Some(d) => d.ns,
                    None => {
                        self.diag.note(Issue::BadDur, at, None);
                        0
                    }
                };
                // `ts + dur` must stay a model time too (a negative marker `dur` included).
                let end = arith::time_ns(d).and_then(|d| arith::add(ts, d));
                if end.and_then(arith::time_ns).is_err() {
                    self.info.out_of_range.record(at);
                    return ControlFlow::Continue(());
                }
                if is_marker_name(&name, &self.custom_prefix) {
                    self.t.markers.push(MarkerEvent {
                        name: name.to_string(),
                        ts_ns: ts,
                        dur_ns: d,
                    });
                }
                if d > 0 {
                    let cat = cat.and_then(as_str).unwrap_or_default();
                    self.raws.push(Raw {
                        name: self.t.intern(&name),
                        cat: self.t.intern(&cat),
                        pid: pid_id,
                        thread,
                        ts,
                        dur: d,
                    });
                }
            }
            "B" => {
                let cat = cat.and_then(as_str).unwrap_or_default();
                let (n, c) = (self.t.intern(&name), self.t.intern(&cat));
                self.open.entry(thread).or_default().push((n, c, ts));
            }
            "E" => {
                let popped = self.open.get_mut(&thread).and_then(Vec::pop);
                if popped.is_none() && self.deferring {
                    self.pending.push(PendingEnd {
                        thread,
                        pid: pid_id,
                        ts,
                        raw_at: self.raws.len(),
                        marker_at: self.t.markers.len(),
                    });
                }
                if let Some((n, c, b)) = popped {
                    let nm = self.t.text(n).to_string();
                    if is_marker_name(&nm, &self.custom_prefix) {
                        self.t.markers.push(MarkerEvent {
                            name: nm,
                            ts_ns: b,
                            dur_ns: ts - b,
                        });
                    }
                    if ts > b {
                        self.raws.push(Raw {
                            name: n,
                            cat: c,
                            pid: pid_id,
                            thread,
                            ts: b,
                            dur: ts - b,
                        });
                    }
                }
            }
            "s" | "f" => {
                let c = cat.and_then(as_str).unwrap_or_default();
                let kind = if c == "async_npu" || name == "torch_to_npu" {
                    Some(TraceFlowKind::TorchToNpu)
                } else if c == "HostToDevice" {
                    Some(TraceFlowKind::HostToDevice)
                } else {
                    None
                };
                if let Some(kind) = kind {
                    if ph == "f" {
                        self.t.h2d_flow_ends_ns.push(ts);
                    }
                    if let Some(([Some(id)], _)) = ev.fields_dup(["id"]) {
                        self.t.flow_points.push(FlowPoint {
                            kind,
                            id: flow_id(id),
                            start: ph == "s",
                            thread,
                            ts_ns: ts,
                        });
                    }
                }
            }
            "i" | "I" => {
                if is_marker_name(&name, &self.custom_prefix) {
                    self.t.markers.push(MarkerEvent {
                        name: name.to_string(),
                        ts_ns: ts,
                        dur_ns: 0,
                    });
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    /// A builder of a byte range after the file's first ([`super::ranges`]), to be
    /// [`absorb`](Self::absorb)ed after the ranges before it.
    pub fn deferring(mut self) -> Self {
        self.deferring = true;
        self
    }

    /// Ends the pass (`scan`: the splitter's report) and resolves lanes now that all
    /// process metadata is known.
    pub fn finish(self, scan: TraceScan) -> (HostEventTable, TimelineInfo) {
        let TimelineBuilder {
            mut t,
            mut info,
            pid_names,
            thread_names,
            thread_tid,
            raws,
            open,
            diag,
            ..
        } = self;
        info.scan = scan;
        info.scan.diag.merge(&diag);
        info.unmatched_begin = open.values().map(|v| v.len() as u64).sum();
        // Resolve lanes now that all metadata is known.
        let lane_of = |pid: u32| -> Option<Lane> {
            match pid_names.get(&pid).map(String::as_str) {
                Some("Ascend Hardware") | Some("Overlap Analysis") => None,
                Some("HCCL") => Some(Lane::HcclDevice),
                Some(n) if DEVICE_PROCESSES.contains(&n) => None,
                Some("Python") | Some("Python GC") => Some(Lane::Python),
                Some("CANN") => Some(Lane::Cann),
                _ => Some(Lane::OtherHost),
            }
        };
        for r in &raws {
            let pname = pid_names.get(&r.pid).map(String::as_str);
            // Device lanes (anomaly.md §1.3): every "Ascend Hardware" event, and the "HCCL"
            // events of op-level threads (threads not named "Plane…").
            let hccl_lane = match pname {
                Some("Ascend Hardware") => Some(false),
                Some("HCCL") => thread_names
                    .get(&r.thread)
                    .is_none_or(|n| !n.starts_with("Plane"))
                    .then_some(true),
                _ => None,
            };
            if let Some(hccl_lane) = hccl_lane {
                t.device_events.push(DeviceEvent {
                    name: r.name,
                    ts_ns: r.ts,
                    dur_ns: r.dur,
                    stream: thread_tid[r.thread as usize],
                    hccl_lane,
                });
            }
            if let Some(lane) = lane_of(r.pid) {
                t.push_ids(r.name, r.cat, r.thread, lane, r.ts, r.dur);
            }
        }
        let mut procs: Vec<String> = pid_names.into_values().collect();
        crate::base::sort::sort(&mut procs);
        procs.dedup();
        info.processes = procs;
        t.finish();
        (t, info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_markers_flows_and_begin_end_pairs() {
        let j = br#"[
          {"ph":"X","name":"ProfilerStep#3","cat":"cpu_op","pid":1,"tid":1,"ts":"100.000","dur":50},
          {"ph":"X","name":"aten::add","cat":"cpu_op","pid":1,"tid":1,"ts":"110.000","dur":5},
          {"ph":"X","name":"MatMul","pid":9,"tid":2,"ts":"120.000","dur":3},
          {"ph":"B","name":"inner","pid":1,"tid":7,"ts":"130"},
          {"ph":"E","pid":1,"tid":7,"ts":"131.5"},
          {"ph":"f","name":"HostToDevice1","cat":"HostToDevice","pid":9,"tid":2,"ts":"120.000","bp":"e","id":1},
          {"ph":"M","name":"process_name","pid":1,"args":{"name":"Python"}},
          {"ph":"M","name":"process_name","pid":9,"args":{"name":"Ascend Hardware"}}
        ]"#;
        let (t, info) = read(&j[..], "tv.json", None, "", &mut |_| {
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(t.markers.len(), 1);
        assert_eq!(t.markers[0].ts_ns, 100_000);
        assert_eq!(t.events().len(), 3); // marker, add, inner (device event not a host event)
        assert_eq!(t.device_events.len(), 1);
        assert_eq!(t.text(t.device_events[0].stream), "2");
        assert_eq!(t.h2d_flow_ends_ns, vec![120_000]);
        assert_eq!(
            info.processes,
            vec!["Ascend Hardware".to_string(), "Python".to_string()]
        );
        assert!(t
            .events()
            .iter()
            .any(|e| t.text(e.name) == "inner" && e.dur_ns == 1_500));
    }

    #[test]
    fn truncated_trace_keeps_events_read() {
        let j = br#"{"traceEvents":[{"ph":"X","name":"ProfilerStep#1","pid":1,"tid":1,"ts":"5","dur":1},{"ph":"X","na"#;
        let (t, info) = read(&j[..], "tv.json", None, "", &mut |_| {
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(t.markers.len(), 1);
        assert!(info.scan.truncated_at.is_some());
    }

    /// A raw control byte, a bad escape and invalid UTF-8 in `name` are located at the
    /// offending byte's absolute offset in the file, however the reads cut the events.
    #[test]
    fn string_flaws_at_the_offending_byte_across_reads() {
        let mut j = b"{\"traceEvents\":[\n".to_vec();
        j.extend_from_slice(br#"{"ph":"X","name":"ok","pid":1,"tid":1,"ts":"5","dur":1},"#);
        j.extend_from_slice(b"{\"ph\":\"X\",\"name\":\"ctl\x01x\\qy\",\"pid\":1,\"tid\":1,\"ts\":\"6\",\"dur\":1},\n");
        j.extend_from_slice(b"{\"ph\":\"X\",\"pid\":1,\"name\":\"caf\xc3\xa9 b\xffd\",\"tid\":1,\"ts\":\"7\",\"dur\":1}]}");
        let ctl = j.iter().position(|&b| b == 1).unwrap() as u64;
        let bad = j.iter().position(|&b| b == 0xFF).unwrap() as u64;
        for chunk in [1, 2, 3, 5, 7, 16, 61, 4096] {
            let mut reader = ChunkReader::with_sizes(&j[..], None, chunk, 1 << 20);
            let mut b = TimelineBuilder::new("");
            let file: Arc<str> = Arc::from("tv.json");
            let scan = for_each_indexed_event(
                &mut reader,
                &file,
                &mut |_| ControlFlow::Continue(()),
                &mut |ev, at| b.indexed_event(ev, at),
            )
            .unwrap();
            let (t, info) = b.finish(scan);
            assert_eq!(t.events().len(), 3);
            let d = &info.scan.diag;
            assert_eq!(
                d.seen(Issue::InvalidString).first,
                vec![ctl],
                "chunk {chunk}"
            );
            assert_eq!(d.seen(Issue::InvalidUtf8).first, vec![bad], "chunk {chunk}");
        }
    }
}
