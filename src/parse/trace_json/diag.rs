//! Findings in a `trace_view.json` that do not stop the read (no silent drops):
//! one diagnostics path for both trace readers (memory's `call_stack_index`, anomaly's
//! `timeline`). The splitter notes the structural findings (commas, non-object elements,
//! trailing bytes, BOM, truncation, the error that stopped the read); each reader notes the
//! findings in the values it decodes (strings, `ts`, `dur`, duplicate keys). [`push_problems`]
//! turns all of them into [`Problem`]s with the codes of the calling analysis
//! ([`MEMORY`] = `MEM-TV-*`, [`ANOMALY`] = `ANOM-TV-*`), counted, with the byte offsets of the
//! first [`FIRST_OFFSETS`] events of each kind.

use std::fmt::Write as _;

use super::scan::{index_in, StrFlaws};
use super::splitter::TraceScan;
use crate::base::{Position, Problem, Problems, Severity};

/// How many event offsets of each finding are kept for the message.
pub const FIRST_OFFSETS: usize = 5;

/// One kind of finding that is counted (per event) rather than reported one by one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Issue {
    /// A `,` right before the closing `]` (torch_npu writes `,]` when the device chunk is
    /// empty): accepted.
    TrailingComma,
    /// A doubled `,`, a `,` right after `[`, or no `,` between two events: accepted.
    Punctuation,
    /// An array element that is not an object (number, string, array…): skipped.
    NonObject,
    /// An event object whose members cannot be read (e.g. a key without `:`): skipped.
    Malformed,
    /// An event without a readable `ts` (missing, `NaN`, `1e400`, not a decimal): skipped.
    BadTs,
    /// An event whose `dur` is missing or unreadable: duration 0.
    BadDur,
    /// A string with invalid UTF-8: kept with U+FFFD replacement characters.
    InvalidUtf8,
    /// A string with a raw control byte (U+0000–U+001F) or an invalid `\` escape (invalid
    /// JSON, rejected by Perfetto and Python): kept as read.
    InvalidString,
    /// A key that occurs twice in one object: the last value wins (as `JSON.parse` and
    /// Python's `json` do).
    DuplicateKey,
    /// An array element or wrapper member larger than the cap of one event (formats.md §1.1,
    /// [`super::splitter::MAX_EVENT_BYTES`]): skipped, at the byte where it starts.
    Oversized,
}

const ISSUES: usize = 10;

impl Issue {
    fn index(self) -> usize {
        self as usize
    }
}

/// Count and first offsets of one [`Issue`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// Events with this finding.
    pub count: u64,
    /// Byte offsets of the first [`FIRST_OFFSETS`] of them (event starts; for commas, the `,`;
    /// for string flaws, the offending byte).
    pub first: Vec<u64>,
    /// The key of the first one, when the finding is about a key (`name`, `Call stack`…).
    pub key: Option<&'static str>,
}

/// Everything noted about one trace beside its events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceDiagnostics {
    seen: [Seen; ISSUES],
    /// A UTF-8 byte-order mark was skipped at byte 0.
    pub bom: bool,
    /// Byte offset of the first non-whitespace byte after the end of the trace, if any.
    pub trailing_at: Option<u64>,
}

impl TraceDiagnostics {
    /// Notes one occurrence of `issue` at byte `at`, about `key` (if any).
    pub fn note(&mut self, issue: Issue, at: u64, key: Option<&'static str>) {
        let s = &mut self.seen[issue.index()];
        s.count += 1;
        if s.first.len() < FIRST_OFFSETS {
            s.first.push(at);
        }
        if s.key.is_none() {
            s.key = key;
        }
    }
    /// Notes the flaws of the decoded string `raw` (a member value inside the event `obj`
    /// that starts at absolute byte `at`), each at the absolute offset of its offending byte
    /// (the first byte that is not UTF-8, the first raw control byte or bad `\\`), wherever
    /// the event lies in the file and however it was read.
    pub fn note_str(
        &mut self,
        flaws: StrFlaws,
        obj: &[u8],
        raw: &[u8],
        at: u64,
        key: &'static str,
    ) {
        let raw_at = at + index_in(obj, raw) as u64;
        if flaws.invalid_utf8 {
            self.note(Issue::InvalidUtf8, raw_at + flaws.utf8_at as u64, Some(key));
        }
        if flaws.invalid_json {
            self.note(
                Issue::InvalidString,
                raw_at + flaws.json_at as u64,
                Some(key),
            );
        }
    }
    /// Count and first offsets of `issue`.
    pub fn seen(&self, issue: Issue) -> &Seen {
        &self.seen[issue.index()]
    }
    /// Adds the findings of `other` (noted later in the same file) to these.
    pub fn merge(&mut self, other: &TraceDiagnostics) {
        for (a, b) in self.seen.iter_mut().zip(other.seen.iter()) {
            a.count += b.count;
            let room = FIRST_OFFSETS.saturating_sub(a.first.len());
            a.first.extend(b.first.iter().take(room));
            a.key = a.key.or(b.key);
        }
        self.bom |= other.bom;
        self.trailing_at = self.trailing_at.or(other.trailing_at);
    }
}

/// The problem codes of one analysis for the trace findings (ARCHITECTURE.md lists them).
#[derive(Clone, Copy, Debug)]
pub struct TraceCodes {
    /// The file ends inside the event array (warning).
    pub truncated: &'static str,
    /// An error stopped the read after the start; the events before it are used (error).
    pub stopped: &'static str,
    /// Events without a readable `ts` (warning).
    pub bad_ts: &'static str,
    /// Events with an unreadable `dur` (warning).
    pub bad_dur: &'static str,
    /// Strings with invalid UTF-8 (warning).
    pub invalid_utf8: &'static str,
    /// Strings with raw control bytes or bad escapes (warning).
    pub invalid_string: &'static str,
    /// Duplicate keys (warning).
    pub duplicate_key: &'static str,
    /// Bytes after the end of the trace (warning).
    pub trailing_bytes: &'static str,
    /// `,]` (warning).
    pub trailing_comma: &'static str,
    /// Other misplaced or missing commas (warning).
    pub punctuation: &'static str,
    /// UTF-8 byte-order mark skipped (info).
    pub bom: &'static str,
    /// Elements that are not objects (warning).
    pub non_object: &'static str,
    /// Malformed event objects (warning).
    pub malformed: &'static str,
    /// Events larger than the cap of one event, skipped (warning).
    pub oversized: &'static str,
}

/// Codes of the memory analysis (ascend-memory.md §10.3 `MEM-TV-*`).
pub const MEMORY: TraceCodes = TraceCodes {
    truncated: "MEM-TV-002",
    bad_ts: "MEM-TV-003",
    stopped: "MEM-TV-004",
    invalid_utf8: "MEM-TV-005",
    invalid_string: "MEM-TV-006",
    duplicate_key: "MEM-TV-007",
    trailing_bytes: "MEM-TV-008",
    trailing_comma: "MEM-TV-009",
    punctuation: "MEM-TV-011",
    bom: "MEM-TV-012",
    non_object: "MEM-TV-013",
    malformed: "MEM-TV-014",
    bad_dur: "MEM-TV-015",
    oversized: "MEM-TV-016",
};

/// Codes of the anomaly analysis: `ANOM-TV-001` is its historical truncation code; from 003
/// on the numbers are those of [`MEMORY`] (`ANOM-TV-002` is unused: the object wrapper is no
/// caveat for the anomaly analysis; `010` is the out-of-range time code of `base::arith`;
/// `016` an oversized event).
pub const ANOMALY: TraceCodes = TraceCodes {
    truncated: "ANOM-TV-001",
    bad_ts: "ANOM-TV-003",
    stopped: "ANOM-TV-004",
    invalid_utf8: "ANOM-TV-005",
    invalid_string: "ANOM-TV-006",
    duplicate_key: "ANOM-TV-007",
    trailing_bytes: "ANOM-TV-008",
    trailing_comma: "ANOM-TV-009",
    punctuation: "ANOM-TV-011",
    bom: "ANOM-TV-012",
    non_object: "ANOM-TV-013",
    malformed: "ANOM-TV-014",
    bad_dur: "ANOM-TV-015",
    oversized: "ANOM-TV-016",
};

/// Codes of the GPU (Kineto) trace reader (`parse::kineto`): the numbers of [`MEMORY`] under
/// `GPU-TV-` (`001` is truncation, `002` unused; `016`–`018` are the reader's own findings, `019` an oversized event).
pub const KINETO: TraceCodes = TraceCodes {
    truncated: "GPU-TV-001",
    bad_ts: "GPU-TV-003",
    stopped: "GPU-TV-004",
    invalid_utf8: "GPU-TV-005",
    invalid_string: "GPU-TV-006",
    duplicate_key: "GPU-TV-007",
    trailing_bytes: "GPU-TV-008",
    trailing_comma: "GPU-TV-009",
    punctuation: "GPU-TV-011",
    bom: "GPU-TV-012",
    non_object: "GPU-TV-013",
    malformed: "GPU-TV-014",
    bad_dur: "GPU-TV-015",
    oversized: "GPU-TV-019",
};

/// Line and column (both from 1; the column counts bytes) of each byte offset of `sorted`
/// (ascending) in the text `src`, read as a stream once up to the last offset. Offsets past
/// the end get `None`. Used to locate findings by line after a pass that only kept offsets.
///
/// Errors: those of `src`.
pub fn line_columns<R: std::io::Read>(
    mut src: R,
    sorted: &[u64],
) -> std::io::Result<Vec<Option<(u64, u64)>>> {
    let mut out = Vec::with_capacity(sorted.len());
    let (mut line, mut line_start, mut pos) = (1u64, 0u64, 0u64);
    let mut buf = vec![0u8; 64 << 10];
    let mut k = 0;
    while k < sorted.len() {
        let n = match src.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let chunk = &buf[..n];
        let mut from = 0usize;
        while k < sorted.len() && sorted[k] < pos + n as u64 {
            let upto = (sorted[k] - pos) as usize;
            for nl in memchr::memchr_iter(b'\n', &chunk[from..upto]) {
                line += 1;
                line_start = pos + (from + nl) as u64 + 1;
            }
            from = upto;
            out.push(Some((line, sorted[k] - line_start + 1)));
            k += 1;
        }
        for nl in memchr::memchr_iter(b'\n', &chunk[from..]) {
            line += 1;
            line_start = pos + (from + nl) as u64 + 1;
        }
        pos += n as u64;
    }
    out.resize(sorted.len(), None);
    Ok(out)
}

fn offsets(s: &Seen) -> String {
    let mut out = String::new();
    for (k, at) in s.first.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{at}");
    }
    if s.count > s.first.len() as u64 {
        out.push_str(", …");
    }
    out
}

fn events(n: u64) -> String {
    if n == 1 {
        "1 event".into()
    } else {
        format!("{n} events")
    }
}

/// Pushes the problems for everything `scan` noted about the trace `file` (its path as the
/// user sees it), with the codes of `codes`. Messages name the file by its last path part.
pub fn push_problems(file: &str, scan: &TraceScan, codes: &TraceCodes, problems: &mut Problems) {
    let name = file.rsplit('/').next().unwrap_or(file);
    let pos = || Position::file(file);
    let last = match scan.last_event_end {
        Some(end) => format!("the last one ends at byte {end}"),
        None => "none was read".to_string(),
    };
    let d = &scan.diag;
    if d.bom {
        problems.push(Problem::new(
            Severity::Info,
            codes.bom,
            pos().at_byte(0),
            format!("{name} starts with a UTF-8 byte-order mark (EF BB BF); skipped"),
        ));
    }
    if let Some(e) = &scan.error {
        problems.push(Problem::new(
            Severity::Error,
            codes.stopped,
            e.position().clone(),
            format!(
                "{}; {} before it {} used ({last}); the rest of the file is not read",
                e.kind(),
                events(scan.events),
                if scan.events == 1 { "is" } else { "are" }
            ),
        ));
    }
    if let Some(end) = scan.truncated_at {
        let inside = match scan.cut_event_at {
            Some(at) => format!(", inside the event that starts at byte {at}"),
            None => String::new(),
        };
        // A cut `.gz` says where its text ends, in the inflated bytes, and what the
        // compressed stream said (its size); a plain file's text ends with the file.
        let (text, how) = match &scan.cut_source {
            Some(why) => (" of its inflated text", format!(": {why}")),
            None => ("", String::new()),
        };
        problems.push(Problem::new(
            Severity::Warning,
            codes.truncated,
            pos().at_byte(end),
            format!(
                "{name} ends early (at byte {end}{text}{inside}){how}; events read so far are used ({}; {last})",
                events(scan.events)
            ),
        ));
    }
    if let Some(at) = d.trailing_at {
        problems.push(Problem::new(
            Severity::Warning,
            codes.trailing_bytes,
            pos().at_byte(at),
            format!("{name}: bytes after the end of the trace at byte {at}; ignored"),
        ));
    }
    let oversized = format!(
        "event (or top-level member) larger than the cap of {} MiB, located by the byte where it starts",
        super::splitter::MAX_EVENT_BYTES >> 20
    );
    let table: [(Issue, &'static str, &str, &str); ISSUES] = [
        (Issue::TrailingComma, codes.trailing_comma, "`,` right before the closing `]` (invalid JSON; torch_npu writes it when a chunk is empty)", "accepted"),
        (Issue::Punctuation, codes.punctuation, "misplaced or missing `,` between events (invalid JSON)", "accepted"),
        (Issue::NonObject, codes.non_object, "array element that is not an event object", "skipped"),
        (Issue::Malformed, codes.malformed, "event object whose members cannot be read", "skipped"),
        (Issue::BadTs, codes.bad_ts, "event without a readable `ts` (missing, NaN, out of range or not a decimal µs number)", "skipped"),
        (Issue::BadDur, codes.bad_dur, "event whose `dur` is missing or unreadable", "duration taken as 0"),
        (Issue::InvalidUtf8, codes.invalid_utf8, "string with invalid UTF-8", "kept with U+FFFD replacement characters"),
        (Issue::InvalidString, codes.invalid_string, "string with a raw control byte or an invalid `\\` escape (invalid JSON)", "kept as read"),
        (Issue::DuplicateKey, codes.duplicate_key, "object with a duplicate key", "the last value is used, as JSON.parse and Python do"),
        (Issue::Oversized, codes.oversized, &oversized, "skipped without being kept (formats.md §1.1)"),
    ];
    for (issue, code, what, outcome) in table {
        let s = d.seen(issue);
        if s.count == 0 {
            continue;
        }
        let key = s
            .key
            .map(|k| format!(" (first in `{k}`)"))
            .unwrap_or_default();
        let bytes = if s.count == 1 { "byte" } else { "bytes" };
        problems.push(Problem::new(
            Severity::Warning,
            code,
            pos().at_byte(s.first[0]),
            format!(
                "{name}: {} × {what}{key}: {outcome}; at {bytes} {}",
                s.count,
                offsets(s)
            ),
        ));
    }
}
