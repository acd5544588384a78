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

use std::io::Read;
use std::ops::ControlFlow;
use std::sync::Arc;

use crate::base::{Position, Problem, Problems, Severity};
use crate::ingest::{ChunkReader, Progress};
use crate::model::host_events::{FlowPoint, HostOp, HostOpTable};
use crate::model::stacks::StackPool;
use crate::model::strings::StringPool;
use crate::parse::number::{parse_f64_python, parse_i64, parse_time_ns};
use crate::parse::trace_json::scan::{as_str, decimal_text, fields};
use crate::parse::trace_json::{for_each_event, TraceScan};
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
/// `file` names the file in problems; problems (`MEM-TV-001`, `MEM-TV-002`, `MEM-TV-003`,
/// `MEM-TV-004`) go to `problems`.
///
/// # Errors
///
/// Default mode: only an empty file ([`ParseErrorKind::Empty`]) or one that is not a trace at
/// all (syntax error before the first event) or unreadable. A syntax error after events were
/// read keeps them (`MEM-TV-004`). Parity mode: also a wrapped file gives `Ok` with no ops,
/// and a truncated file, a syntax error anywhere or a kept event without a numeric `ts` fail.
pub fn read_host_ops<R: Read>(
    reader: &mut ChunkReader<R>,
    file: &str,
    mode: TraceMode,
    strings: &mut StringPool,
    stacks: &mut StackPool,
    problems: &mut Problems,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Result<(HostOpTable, TraceStats), ParseError> {
    let file: Arc<str> = file.into();
    let mut host = HostOpTable::new();
    let mut stats = TraceStats::default();
    let mut fatal: Option<ParseError> = None;
    let mut on_event = |ev: &[u8], at: u64| -> ControlFlow<()> {
        let Some([cat, ph, name, ts, dur, pid, tid, args, id]) = fields(
            ev,
            ["cat", "ph", "name", "ts", "dur", "pid", "tid", "args", "id"],
        ) else {
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
            let Some(t) = ts
                .and_then(decimal_text)
                .and_then(|s| parse_time_ns(s).ok())
            else {
                return ControlFlow::Continue(());
            };
            let thread = host.thread_key(&text(pid), &text(tid));
            let idv = strings.intern(&text(id));
            host.push_flow(FlowPoint {
                id: idv,
                is_start,
                ts_ns: t.ns,
                thread,
            });
            stats.flows += 1;
            return ControlFlow::Continue(());
        }
        let [stack, seq, fwd] = args
            .and_then(|a| fields(a, ["Call stack", "Sequence number", "Fwd thread id"]))
            .unwrap_or([None, None, None]);
        if mode == TraceMode::Parity && stack.is_none() {
            return ControlFlow::Continue(());
        }
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
                fatal = Some(ParseError::new(
                    Position::file(file.clone()).at_byte(at).in_column("ts"),
                    ParseErrorKind::Syntax { expected: "a numeric `ts` in every cpu_op event with a Call stack (RL-Insight fails the rank)" },
                ));
                problems.push(Problem::new(Severity::Error, "MEM-TV-003", Position::file(file.clone()).at_byte(at).in_column("ts"),
                    format!("trace_view.json: cpu_op event at byte {at} has no numeric ts (found {got})")));
                return ControlFlow::Break(());
            }
            _ => {
                stats.bad_ts += 1;
                return ControlFlow::Continue(());
            }
        };
        let name = name.and_then(as_str);
        let name = strings.intern(name.as_deref().unwrap_or(""));
        let dur_ns = dur
            .and_then(decimal_text)
            .and_then(|s| parse_time_ns(s).ok())
            .map(|t| t.ns)
            .unwrap_or(0);
        let stack = stack.map(|raw| {
            let s = as_str(raw);
            stacks.intern(s.as_deref().unwrap_or(""))
        });
        let thread = host.thread_key(&text(pid), &text(tid));
        let int = |raw: Option<&[u8]>| raw.and_then(decimal_text).and_then(|s| parse_i64(s).ok());
        host.push(HostOp {
            name,
            ts_ns,
            ts_us,
            dur_ns,
            thread,
            seq: int(seq),
            fwd_tid: int(fwd),
            stack,
        });
        stats.cpu_ops += 1;
        if stack.is_some() {
            stats.with_stack += 1;
        }
        ControlFlow::Continue(())
    };
    let res = for_each_event(reader, &file, on_progress, &mut on_event);
    if let Some(e) = fatal {
        return Err(e);
    }
    let scan = match (res, mode) {
        (Ok(s), _) => s,
        (Err(e), TraceMode::Parity) => return Err(e),
        (Err(e), TraceMode::Default) => {
            if stats.cpu_ops == 0 && stats.flows == 0 || matches!(e.kind(), ParseErrorKind::Empty) {
                return Err(e);
            }
            problems.push(Problem::new(
                Severity::Error,
                "MEM-TV-004",
                e.position().clone(),
                format!("trace_view.json: {e}; the events read before it are used"),
            ));
            TraceScan {
                bytes: e.position().byte.unwrap_or(0),
                ..Default::default()
            }
        }
    };
    let pos = || Position::file(file.clone());
    if scan.wrapped {
        match mode {
            TraceMode::Parity => {
                stats.scan = scan;
                return Ok((HostOpTable::new(), TraceStats { scan: stats.scan, ..Default::default() }));
            }
            TraceMode::Default => problems.push(Problem::new(Severity::Warning, "MEM-TV-001", pos(),
                "trace_view.json is wrapped in an object; RL-Insight would find no call stacks here")),
        }
    }
    if let Some(at) = scan.truncated_at {
        if mode == TraceMode::Parity {
            return Err(ParseError::new(
                pos().at_byte(at),
                ParseErrorKind::Syntax {
                    expected: "the end of the event array (the file is truncated)",
                },
            ));
        }
        problems.push(Problem::new(
            Severity::Warning,
            "MEM-TV-002",
            pos().at_byte(at),
            format!("trace_view.json ends early (at byte {at}); events read so far are used"),
        ));
    }
    if stats.bad_ts > 0 {
        problems.push(Problem::new(
            Severity::Warning,
            "MEM-TV-003",
            pos(),
            format!(
                "trace_view.json: {} cpu_op events without a readable ts were skipped",
                stats.bad_ts
            ),
        ));
    }
    stats.scan = scan;
    Ok((host, stats))
}

#[cfg(test)]
mod tests;
