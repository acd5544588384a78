//! `trace_view.json` → [`HostOpTable`]: the `cpu_op` events and `fwdbwd` flow
//! points the memory matching needs (ascend-memory.md §5.1–5.2, §10.3 `MEM-TV-*`).
//!
//! Streams the file with the shared splitter; for each event the key scanner
//! reads `cat` first, and only `cpu_op` / `fwdbwd` events are looked at further
//! (their `args` keys are read with the same scanner; no DOM is built).
//!
//! * [`TraceMode::Parity`]: keeps `cpu_op` events whose `args` hold a
//!   `Call stack` key; an object-wrapped file gives an empty index; a missing
//!   or unreadable `ts`, a truncated or malformed file fail the rank (§5.1, §7).
//! * [`TraceMode::Default`]: keeps every `cpu_op` (with or without stack) with
//!   exact ns times, `pid`/`tid` as opaque keys, `Sequence number`,
//!   `Fwd thread id`, and the `fwdbwd` flows; tolerates the wrapper
//!   (`MEM-TV-001`) and truncation (`MEM-TV-002`, with the byte offset).

use rustc_hash::FxHashMap as HashMap;
use std::io::Read;
use std::ops::ControlFlow;
use std::sync::Arc;

use crate::base::{Position, Problem, Problems, Severity};
use crate::ingest::{ChunkReader, Progress};
use crate::model::host_events::{FlowPoint, HostOp, HostOpTable};
use crate::model::stacks::{StackId, StackPool};
use crate::model::strings::StringPool;
use crate::parse::number::{parse_f64_python, parse_i64, parse_time_ns};
use crate::parse::trace_json::diag::{self, Issue, TraceDiagnostics};
use crate::parse::trace_json::scan::{
    decimal_text, decode_str, skip_ws, string_end, value_end, End, StrFlaws,
};
use crate::parse::trace_json::{for_each_indexed_event, Event, TraceScan};
use crate::parse::{ParseError, ParseErrorKind};

/// Which rules the index follows (ascend-memory.md §5.1 / §5.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TraceMode {
    /// Lenient, everything §5.2 keeps.
    #[default]
    Default,
    /// Upstream `_build_call_stack_index`.
    Parity,
}

/// Counts of one read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceStats {
    /// What the splitter saw (event count, wrapper, truncation, bytes).
    pub scan: TraceScan,
    /// `cpu_op` events kept.
    pub cpu_ops: u64,
    /// Of those, with a `Call stack` key.
    pub with_stack: u64,
    /// `fwdbwd` flow points kept.
    pub flows: u64,
    /// `cpu_op` events skipped for lack of a readable `ts` (default mode).
    pub bad_ts: u64,
}

/// Reads one `trace_view.json` from `reader` into a new [`HostOpTable`], interning op names in
/// `strings` (the rank's pool, shared with the memory rows) and stacks in `stacks`.
///
/// `file` names the file in problems; problems (`MEM-TV-001` wrapper, `MEM-TV-010` time
/// range, and the findings of [`diag`] with the [`diag::MEMORY`] codes) go to `problems`. The same as feeding a [`HostOpsReader`] from
/// [`for_each_event`] (which `engine::read::rank` does, beside the other consumers of the
/// same pass).
///
/// # Errors
///
/// See [`HostOpsReader::finish`].
pub fn read_host_ops<R: Read>(
    reader: &mut ChunkReader<R>,
    file: &str,
    mode: TraceMode,
    strings: &mut StringPool,
    stacks: &mut StackPool,
    problems: &mut Problems,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Result<(HostOpTable, TraceStats), ParseError> {
    let mut r = HostOpsReader::new(file, mode, strings, stacks, problems);
    let file: Arc<str> = file.into();
    let res = for_each_indexed_event(reader, &file, on_progress, &mut |ev, at| {
        r.indexed_event(ev, at)
    });
    r.finish(res)
}

/// The call-stack index as a push consumer of one `trace_view.json` pass: feed it every
/// event of [`for_each_event`] with [`HostOpsReader::event`], then [`HostOpsReader::finish`]
/// with the splitter's result. Borrowing the rank's pools and problem list for the pass.
pub struct HostOpsReader<'a> {
    file: Arc<str>,
    mode: TraceMode,
    strings: Slot<'a, StringPool>,
    stacks: Slot<'a, StackPool>,
    problems: Slot<'a, Problems>,
    host: HostOpTable,
    stats: TraceStats,
    fatal: Option<ParseError>,
    cpu_op: memchr::memmem::Finder<'static>,
    fwdbwd: memchr::memmem::Finder<'static>,
    /// Raw (escaped) `Call stack` bytes → interned stack and what was wrong with its text:
    /// decode each distinct stack once.
    raw_stacks: HashMap<Box<[u8]>, (StackId, StrFlaws)>,
    /// Findings in the values decoded here (the splitter notes the structural ones).
    diag: TraceDiagnostics,
    last_thread: Option<(Vec<u8>, Vec<u8>, u32)>,
    out_of_range: crate::base::arith::Tally,
}

impl<'a> HostOpsReader<'a> {
    /// A reader for `file` (named in problems) in `mode`.
    pub fn new(
        file: &str,
        mode: TraceMode,
        strings: &'a mut StringPool,
        stacks: &'a mut StackPool,
        problems: &'a mut Problems,
    ) -> Self {
        let (strings, stacks) = (Slot::Lent(strings), Slot::Lent(stacks));
        Self::with_slots(file, mode, strings, stacks, Slot::Lent(problems))
    }

    fn with_slots(
        file: &str,
        mode: TraceMode,
        strings: Slot<'a, StringPool>,
        stacks: Slot<'a, StackPool>,
        problems: Slot<'a, Problems>,
    ) -> Self {
        HostOpsReader {
            file: file.into(),
            mode,
            strings,
            stacks,
            problems,
            host: HostOpTable::new(),
            stats: TraceStats::default(),
            fatal: None,
            // Cheap pre-filter: an event can only be kept if its bytes contain one of the two
            // category values; most events (device kernels, counters, python_function) do not.
            cpu_op: memchr::memmem::Finder::new(b"cpu_op\""),
            fwdbwd: memchr::memmem::Finder::new(b"fwdbwd\""),
            raw_stacks: HashMap::default(),
            diag: TraceDiagnostics::default(),
            last_thread: None,
            out_of_range: Default::default(),
        }
    }

    /// One event object (raw bytes) at absolute byte offset `at`. `Break` only in parity
    /// mode, when the rank has failed (a kept event without a numeric `ts`): the reader
    /// needs no more events.
    pub fn event(&mut self, ev: &[u8], at: u64) -> ControlFlow<()> {
        let mode = self.mode;
        if self.cpu_op.find(ev).is_none()
            && (mode == TraceMode::Parity || self.fwdbwd.find(ev).is_none())
        {
            return ControlFlow::Continue(());
        }
        self.candidate(ev, at)
    }

    /// [`HostOpsReader::event`] of an event from the splitter. An indexed event is strictly
    /// well-formed (so [`extract`] reads it) and its top-level `cat` is in the index: when
    /// that is neither `"cpu_op"` nor (outside parity) `"fwdbwd"`, [`HostOpsReader::event`]
    /// would drop it without a finding, so it is dropped without searching its bytes.
    pub fn indexed_event(&mut self, ev: Event<'_>, at: u64) -> ControlFlow<()> {
        if !ev.is_indexed() {
            return self.event(ev.bytes(), at);
        }
        let wanted = match ev.fields_dup(["cat"]) {
            Some(([Some(c)], _)) => {
                c == b"\"cpu_op\"" || (self.mode != TraceMode::Parity && c == b"\"fwdbwd\"")
            }
            _ => false,
        };
        match wanted {
            true => self.candidate(ev.bytes(), at),
            false => ControlFlow::Continue(()),
        }
    }

    /// An event that may be kept: read and kept or dropped.
    fn candidate(&mut self, ev: &[u8], at: u64) -> ControlFlow<()> {
        let mode = self.mode;
        let Some(Ev {
            cat,
            ph,
            name,
            ts,
            dur,
            pid,
            tid,
            id,
            stack,
            seq,
            fwd,
            dup,
        }) = extract(ev)
        else {
            self.diag.note(Issue::Malformed, at, None);
            return ControlFlow::Continue(());
        };
        let cat = match cat {
            Some(b"\"cpu_op\"") => true,
            Some(b"\"fwdbwd\"") => false,
            _ => return ControlFlow::Continue(()),
        };
        let text = |raw: Option<&[u8]>| raw.and_then(decimal_text).unwrap_or("").to_string();
        if !cat {
            if mode == TraceMode::Parity {
                return ControlFlow::Continue(());
            }
            let is_start = match ph {
                Some(b"\"s\"") => true,
                Some(b"\"f\"") => false,
                _ => return ControlFlow::Continue(()),
            };
            if let Some(k) = dup {
                self.diag.note(Issue::DuplicateKey, at, Some(k));
            }
            let Some(t) = ts
                .and_then(decimal_text)
                .and_then(|s| parse_time_ns(s).ok())
            else {
                self.diag.note(Issue::BadTs, at, None);
                return ControlFlow::Continue(());
            };
            let thread = self.host.thread_key(&text(pid), &text(tid));
            let idv = self.strings.intern(&text(id));
            self.host.push_flow(FlowPoint {
                id: idv,
                is_start,
                ts_ns: t.ns,
                thread,
            });
            self.stats.flows += 1;
            return ControlFlow::Continue(());
        }
        if mode == TraceMode::Parity && stack.is_none() {
            return ControlFlow::Continue(());
        }
        if let Some(k) = dup {
            self.diag.note(Issue::DuplicateKey, at, Some(k));
        }
        let file = &self.file;
        let ts_text = ts.and_then(decimal_text);
        let ts_us = ts_text.and_then(|s| parse_f64_python(s).ok());
        let ts_ns = ts_text.and_then(|s| parse_time_ns(s).ok()).map(|t| t.ns);
        let (ts_us, ts_ns) = match (ts_us, ts_ns, mode) {
            (Some(u), Some(n), _) => (u, n),
            (Some(u), None, TraceMode::Parity) if u.is_finite() => (u, (u * 1000.0) as i64),
            (_, _, TraceMode::Parity) => {
                let got = ts
                    .map(|r| String::from_utf8_lossy(r).into_owned())
                    .unwrap_or_else(|| "nothing".into());
                self.fatal = Some(ParseError::new(
                    Position::file(file.clone()).at_byte(at).in_column("ts"),
                    ParseErrorKind::Syntax { expected: "a numeric `ts` in every cpu_op event with a Call stack (RL-Insight fails the rank)" },
                ));
                self.problems.push(Problem::new(Severity::Error, "MEM-TV-003", Position::file(file.clone()).at_byte(at).in_column("ts"),
                    format!("trace_view.json: cpu_op event at byte {at} has no numeric ts (found {got})")));
                return ControlFlow::Break(());
            }
            _ => {
                self.stats.bad_ts += 1;
                self.diag.note(Issue::BadTs, at, None);
                return ControlFlow::Continue(());
            }
        };
        let name = match name.and_then(|raw| Some((raw, decode_str(raw)?))) {
            Some((raw, (text, flaws))) => {
                self.diag.note_str(flaws, ev, raw, at, "name");
                self.strings.intern(&text)
            }
            None => self.strings.intern(""),
        };
        let dur_ns = match dur
            .and_then(decimal_text)
            .and_then(|s| parse_time_ns(s).ok())
        {
            Some(t) => t.ns,
            None => {
                self.diag.note(Issue::BadDur, at, None);
                0
            }
        };
        let stack = stack.map(|raw| {
            let (id, flaws) = match self.raw_stacks.get(raw) {
                Some(known) => *known,
                None => {
                    let (text, flaws) = decode_str(raw).unwrap_or_default();
                    let id = self.stacks.intern(&text);
                    self.raw_stacks.insert(raw.into(), (id, flaws));
                    (id, flaws)
                }
            };
            self.diag.note_str(flaws, ev, raw, at, "Call stack");
            id
        });
        let thread = match &self.last_thread {
            Some((p, t, k)) if pid == Some(p.as_slice()) && tid == Some(t.as_slice()) => *k,
            _ => {
                let k = self.host.thread_key(&text(pid), &text(tid));
                self.last_thread = Some((
                    pid.unwrap_or_default().to_vec(),
                    tid.unwrap_or_default().to_vec(),
                    k,
                ));
                k
            }
        };
        let int = |raw: Option<&[u8]>| raw.and_then(decimal_text).and_then(|s| parse_i64(s).ok());
        let op = HostOp {
            name,
            ts_ns,
            ts_us,
            dur_ns,
            thread,
            seq: int(seq),
            fwd_tid: int(fwd),
            stack,
        };
        if self.host.try_push(op).is_err() {
            self.out_of_range.record(at);
            return ControlFlow::Continue(());
        }
        self.stats.cpu_ops += 1;
        if stack.is_some() {
            self.stats.with_stack += 1;
        }
        ControlFlow::Continue(())
    }

    /// Ends the pass with the splitter's result `res` and returns the table and counts.
    ///
    /// # Errors
    ///
    /// Default mode: only an empty file ([`ParseErrorKind::Empty`]), one that is not a trace
    /// at all (not starting like a trace, UTF-16, or an error before the first kept event) or
    /// unreadable. An error after events were read keeps them (`MEM-TV-004`, with the offset
    /// of the error and the end of the last event). Parity mode: also a wrapped file gives
    /// `Ok` with no ops, and a truncated file, an error anywhere or a kept event without a
    /// numeric `ts` fail.
    pub fn finish(
        self,
        res: Result<TraceScan, ParseError>,
    ) -> Result<(HostOpTable, TraceStats), ParseError> {
        let HostOpsReader {
            file,
            mode,
            mut problems,
            host,
            mut stats,
            fatal,
            out_of_range,
            diag: mine,
            ..
        } = self;
        if let Some(e) = fatal {
            return Err(e);
        }
        let mut scan = res?;
        scan.diag.merge(&mine);
        let pos = || Position::file(file.clone());
        if mode == TraceMode::Parity {
            if let Some(e) = scan.error.take() {
                return Err(e);
            }
            if scan.wrapped {
                return Ok((
                    HostOpTable::new(),
                    TraceStats {
                        scan,
                        ..Default::default()
                    },
                ));
            }
            if let Some(at) = scan.truncated_at {
                return Err(ParseError::new(
                    pos().at_byte(at),
                    ParseErrorKind::Syntax {
                        expected: "the end of the event array (the file is truncated)",
                    },
                ));
            }
        } else if let Some(e) = &scan.error {
            if stats.cpu_ops == 0 && stats.flows == 0 {
                return Err(e.clone());
            }
        }
        if scan.wrapped {
            problems.push(Problem::new(Severity::Warning, "MEM-TV-001", pos(),
                "trace_view.json is wrapped in an object; RL-Insight would find no call stacks here"));
        }
        diag::push_problems(&file, &scan, &diag::MEMORY, &mut problems);
        let first = out_of_range.first_at.first().copied().unwrap_or(0);
        let what = format!("trace_view.json: cpu_op events dropped, ts or ts + dur outside the representable time range ({}); count and byte offsets", crate::base::arith::Tally::time_limit_text());
        problems.push_some(out_of_range.problem("MEM-TV-010", pos().at_byte(first), &what));
        stats.scan = scan;
        Ok((host, stats))
    }
}

/// A pool or problem list a [`HostOpsReader`] writes to: the rank's, lent for one pass, or
/// its own (a byte range's reader, [`HostOpsReader::range`]).
enum Slot<'a, T> {
    Lent(&'a mut T),
    Own(T),
}

impl<T> std::ops::Deref for Slot<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        match self {
            Slot::Lent(t) => t,
            Slot::Own(t) => t,
        }
    }
}

impl<T> std::ops::DerefMut for Slot<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        match self {
            Slot::Lent(t) => t,
            Slot::Own(t) => t,
        }
    }
}

/// The members of one event that this reader uses (raw JSON value bytes).
#[derive(Default)]
struct Ev<'a> {
    cat: Option<&'a [u8]>,
    ph: Option<&'a [u8]>,
    name: Option<&'a [u8]>,
    ts: Option<&'a [u8]>,
    dur: Option<&'a [u8]>,
    pid: Option<&'a [u8]>,
    tid: Option<&'a [u8]>,
    id: Option<&'a [u8]>,
    stack: Option<&'a [u8]>,
    seq: Option<&'a [u8]>,
    fwd: Option<&'a [u8]>,
    /// The first key read here that occurs twice (the last value wins).
    dup: Option<&'static str>,
}

/// Walks the members of the object `obj` once, descending into `args` instead of skipping it,
/// so each byte of a kept event is scanned once more after the splitter (not twice).
/// A duplicate key: the last occurrence wins (as `JSON.parse` and Python), and the first such
/// key is named in `dup`. `None` when `obj` is not a well-formed object.
fn extract(obj: &[u8]) -> Option<Ev<'_>> {
    let mut e = Ev::default();
    let mut i = skip_ws(obj, 0);
    if obj.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut in_args = false;
    loop {
        i = skip_ws(obj, i);
        match *obj.get(i)? {
            b'}' if in_args => {
                in_args = false;
                i += 1;
                continue;
            }
            b'}' => return Some(e),
            b',' => {
                i += 1;
                continue;
            }
            b'"' => {}
            _ => return None,
        }
        let End::At(kend) = string_end(obj, i) else {
            return None;
        };
        let key = &obj[i + 1..kend - 1];
        i = skip_ws(obj, kend);
        if obj.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(obj, i + 1);
        if !in_args && key == b"args" && obj.get(i) == Some(&b'{') {
            in_args = true;
            i += 1;
            continue;
        }
        let End::At(vend) = value_end(obj, i, true) else {
            return None;
        };
        let v = Some(&obj[i..vend]);
        let (slot, name) = if in_args {
            match key {
                b"Call stack" => (&mut e.stack, "Call stack"),
                b"Sequence number" => (&mut e.seq, "Sequence number"),
                b"Fwd thread id" => (&mut e.fwd, "Fwd thread id"),
                _ => {
                    i = vend;
                    continue;
                }
            }
        } else {
            match key {
                b"cat" => (&mut e.cat, "cat"),
                b"ph" => (&mut e.ph, "ph"),
                b"name" => (&mut e.name, "name"),
                b"ts" => (&mut e.ts, "ts"),
                b"dur" => (&mut e.dur, "dur"),
                b"pid" => (&mut e.pid, "pid"),
                b"tid" => (&mut e.tid, "tid"),
                b"id" => (&mut e.id, "id"),
                _ => {
                    i = vend;
                    continue;
                }
            }
        };
        if slot.is_some() && e.dup.is_none() {
            e.dup = Some(name);
        }
        *slot = v;
        i = vend;
    }
}

mod merge;

#[cfg(test)]
mod ranges_tests;
#[cfg(test)]
mod tests;
