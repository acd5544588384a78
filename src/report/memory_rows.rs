//! `MemoryEventRow` exports (ascend-memory.md §8): the 12 parity columns
//! first (exact names and order), then the §8.2 extension columns. CSV and
//! JSON; the CLI and the page's export both call these, so their bytes are
//! identical for the same input.
//!
//! Floats are written as Python `repr` (shortest round-trip, [`super::float`]);
//! nulls are empty CSV cells / JSON `null`; `nan`/`inf` are `nan`/`inf` in CSV
//! (as pandas writes them) and `null` in JSON. CSV quoting is minimal, line
//! terminator `\n`.

use std::borrow::Cow;
use std::io::{self, Write};

use super::float::{exact_number_text, fixed_number_text, write_py_repr};
use super::frame::{Frame, FrameBuilder, Kind};
use crate::analysis::memory_result::{MemoryRun, RowRef};
use crate::base::units::ns_to_us;

/// One output column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Col {
    /// 1 `name`.
    Name,
    /// 2 `role`.
    Role,
    /// 3 `rank_id`.
    RankId,
    /// 4 `call_stack` (parity match).
    CallStack,
    /// 5 `call_stack_top`.
    CallStackTop,
    /// 6 `size_kb`.
    SizeKb,
    /// 7 `start_time_ms`.
    StartTimeMs,
    /// 8 `duration_ms`.
    DurationMs,
    /// 9 `total_allocated_mb`.
    TotalAllocatedMb,
    /// 10 `total_reserved_mb`.
    TotalReservedMb,
    /// 11 `total_active_mb`.
    TotalActiveMb,
    /// 12 `device_type`.
    DeviceType,
    /// `user_frame`.
    UserFrame,
    /// `user_frame_status`.
    UserFrameStatus,
    /// `match_quality`.
    MatchQuality,
    /// `match_lag_us`.
    MatchLagUs,
    /// `matched_op_ts_us`.
    MatchedOpTsUs,
    /// `stack_origin`.
    StackOrigin,
    /// `call_stack_frames` (the default-mode stack, full text).
    CallStackFrames,
    /// `released`.
    Released,
    /// `release_time_ms`.
    ReleaseTimeMs,
    /// `active_release_time_ms`.
    ActiveReleaseTimeMs,
    /// `active_duration_ms`.
    ActiveDurationMs,
    /// `release_total_allocated_mb`.
    ReleaseTotalAllocatedMb,
    /// `release_total_reserved_mb`.
    ReleaseTotalReservedMb,
    /// `release_total_active_mb`.
    ReleaseTotalActiveMb,
    /// `stream_ptr`.
    StreamPtr,
    /// `component`.
    Component,
    /// `phase`.
    Phase,
    /// `source_dir`.
    SourceDir,
    /// `source_index`.
    SourceIndex,
    /// `source_line`.
    SourceLine,
    /// `start_time_ns`.
    StartTimeNs,
}

/// The 12 parity columns (§8.1), in order.
pub const PARITY_COLUMNS: [Col; 12] = [
    Col::Name,
    Col::Role,
    Col::RankId,
    Col::CallStack,
    Col::CallStackTop,
    Col::SizeKb,
    Col::StartTimeMs,
    Col::DurationMs,
    Col::TotalAllocatedMb,
    Col::TotalReservedMb,
    Col::TotalActiveMb,
    Col::DeviceType,
];

/// The §8.2 extension columns, in order (written after [`PARITY_COLUMNS`]).
pub const EXTENSION_COLUMNS: [Col; 21] = [
    Col::UserFrame,
    Col::UserFrameStatus,
    Col::MatchQuality,
    Col::MatchLagUs,
    Col::MatchedOpTsUs,
    Col::StackOrigin,
    Col::CallStackFrames,
    Col::Released,
    Col::ReleaseTimeMs,
    Col::ActiveReleaseTimeMs,
    Col::ActiveDurationMs,
    Col::ReleaseTotalAllocatedMb,
    Col::ReleaseTotalReservedMb,
    Col::ReleaseTotalActiveMb,
    Col::StreamPtr,
    Col::Component,
    Col::Phase,
    Col::SourceDir,
    Col::SourceIndex,
    Col::SourceLine,
    Col::StartTimeNs,
];

impl Col {
    /// The column's header name.
    pub fn name(self) -> &'static str {
        match self {
            Col::Name => "name",
            Col::Role => "role",
            Col::RankId => "rank_id",
            Col::CallStack => "call_stack",
            Col::CallStackTop => "call_stack_top",
            Col::SizeKb => "size_kb",
            Col::StartTimeMs => "start_time_ms",
            Col::DurationMs => "duration_ms",
            Col::TotalAllocatedMb => "total_allocated_mb",
            Col::TotalReservedMb => "total_reserved_mb",
            Col::TotalActiveMb => "total_active_mb",
            Col::DeviceType => "device_type",
            Col::UserFrame => "user_frame",
            Col::UserFrameStatus => "user_frame_status",
            Col::MatchQuality => "match_quality",
            Col::MatchLagUs => "match_lag_us",
            Col::MatchedOpTsUs => "matched_op_ts_us",
            Col::StackOrigin => "stack_origin",
            Col::CallStackFrames => "call_stack_frames",
            Col::Released => "released",
            Col::ReleaseTimeMs => "release_time_ms",
            Col::ActiveReleaseTimeMs => "active_release_time_ms",
            Col::ActiveDurationMs => "active_duration_ms",
            Col::ReleaseTotalAllocatedMb => "release_total_allocated_mb",
            Col::ReleaseTotalReservedMb => "release_total_reserved_mb",
            Col::ReleaseTotalActiveMb => "release_total_active_mb",
            Col::StreamPtr => "stream_ptr",
            Col::Component => "component",
            Col::Phase => "phase",
            Col::SourceDir => "source_dir",
            Col::SourceIndex => "source_index",
            Col::SourceLine => "source_line",
            Col::StartTimeNs => "start_time_ns",
        }
    }
}

pub use super::frame::Cell;

fn of(v: Option<f64>) -> Cell<'static> {
    v.map(Cell::F64).unwrap_or(Cell::Null)
}

fn exact(ns: Option<i64>, scale: u32) -> Cell<'static> {
    ns.map(|n| Cell::Exact(n, scale)).unwrap_or(Cell::Null)
}

/// The value of `col` for `row`.
pub fn cell<'a>(row: &RowRef<'a>, col: Col) -> Cell<'a> {
    let s = |v: &'a str| Cell::Str(Cow::Borrowed(v));
    match col {
        Col::Name => s(row.name()),
        Col::Role => s(row.role()),
        Col::RankId => Cell::I64(row.rank_id()),
        Col::CallStack => s(row.call_stack()),
        Col::CallStackTop => s(row.call_stack_top()),
        Col::SizeKb => Cell::F64(row.size_kb()),
        Col::StartTimeMs => Cell::F64(row.start_time_ms()),
        Col::DurationMs => Cell::F64(row.duration_ms()),
        Col::TotalAllocatedMb => Cell::F64(row.total_allocated_mb()),
        Col::TotalReservedMb => Cell::F64(row.total_reserved_mb()),
        Col::TotalActiveMb => Cell::F64(row.total_active_mb()),
        Col::DeviceType => s(row.device_type()),
        Col::UserFrame => s(row.user_frame().0),
        Col::UserFrameStatus => s(row.user_frame().1.as_str()),
        Col::MatchQuality => s(row.match_quality().as_str()),
        Col::MatchLagUs => of(row.match_lag_ns().map(ns_to_us)),
        Col::MatchedOpTsUs => exact(row.matched_op_ts_ns(), 3),
        Col::StackOrigin => Cell::Str(Cow::Owned(row.stack_origin())),
        Col::CallStackFrames => s(row.stack_text()),
        Col::Released => Cell::Bool(row.release_time_ns().is_some()),
        Col::ReleaseTimeMs => exact(row.release_time_ns(), 6),
        Col::ActiveReleaseTimeMs => exact(row.active_release_time_ns(), 6),
        Col::ActiveDurationMs => of(row.active_duration_ms()),
        Col::ReleaseTotalAllocatedMb => of(row.release_totals().allocated),
        Col::ReleaseTotalReservedMb => of(row.release_totals().reserved),
        Col::ReleaseTotalActiveMb => of(row.release_totals().active),
        Col::StreamPtr => s(row.stream_ptr()),
        Col::Component => s(row.component()),
        Col::Phase => s(row.phase().as_str()),
        Col::SourceDir => s(row.source_dir()),
        Col::SourceIndex => Cell::I64(row.source_index() as i64),
        Col::SourceLine => Cell::I64(row.source_line() as i64),
        Col::StartTimeNs => Cell::I64(row.start_time_ns()),
    }
}

impl Col {
    /// The column's type in a [`Frame`]: exact times become integer ns, the full stack a
    /// list of frames.
    pub fn kind(self) -> Kind {
        match self {
            Col::RankId | Col::SourceIndex | Col::SourceLine | Col::StartTimeNs => Kind::I64,
            Col::SizeKb
            | Col::StartTimeMs
            | Col::DurationMs
            | Col::TotalAllocatedMb
            | Col::TotalReservedMb
            | Col::TotalActiveMb
            | Col::MatchLagUs
            | Col::ActiveDurationMs
            | Col::ReleaseTotalAllocatedMb
            | Col::ReleaseTotalReservedMb
            | Col::ReleaseTotalActiveMb => Kind::F64,
            Col::MatchedOpTsUs | Col::ReleaseTimeMs | Col::ActiveReleaseTimeMs => Kind::TimeNs,
            Col::Released => Kind::Bool,
            Col::CallStackFrames => Kind::TextList,
            _ => Kind::Text,
        }
    }
}

/// The separator of the frames in a stack text (§6.1).
pub const FRAME_SEPARATOR: &str = ";\r\n";

/// `run`'s rows in §9.0 order as a typed [`Frame`] (docs/frames.md §3.1): the CSV's columns
/// and values, with the exact times as integer ns (`matched_op_ts_ns`, `release_time_ns`,
/// `active_release_time_ns`) and `call_stack_frames` as a list of frames.
pub fn frame(run: &MemoryRun, cols: Columns) -> Frame {
    let list = cols.list();
    let spec: Vec<(&str, Kind)> = list.iter().map(|c| (c.name(), c.kind())).collect();
    let mut b = FrameBuilder::new(&spec);
    let mut cells = Vec::with_capacity(list.len());
    for row in run.rows() {
        cells.clear();
        cells.extend(list.iter().map(|&c| {
            match c {
                Col::CallStackFrames => Cell::List(
                    row.stack_text()
                        .split(FRAME_SEPARATOR)
                        .filter(|f| !f.is_empty())
                        .map(Cow::Borrowed)
                        .collect(),
                ),
                _ => cell(&row, c),
            }
        }));
        b.push(&cells);
    }
    b.finish()
}

/// Which columns an export writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Columns {
    /// Parity + extensions (default mode).
    #[default]
    Full,
    /// The 12 parity columns only.
    Parity,
}

impl Columns {
    /// The column list: the parity columns, then (for `Full`) the extensions.
    pub fn list(self) -> Vec<Col> {
        let ext: &[Col] = match self {
            Columns::Full => &EXTENSION_COLUMNS,
            Columns::Parity => &[],
        };
        PARITY_COLUMNS.iter().chain(ext).copied().collect()
    }
}

fn push_csv_field(line: &mut String, v: &str) {
    if v.contains([',', '"', '\r', '\n']) {
        line.push('"');
        line.push_str(&v.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(v);
    }
}

/// The CSV header line of `cols` (with its `\n`).
pub fn csv_header(cols: Columns) -> String {
    let mut line = String::with_capacity(512);
    for (k, c) in cols.list().iter().enumerate() {
        if k > 0 {
            line.push(',');
        }
        line.push_str(c.name());
    }
    line.push('\n');
    line
}

/// Appends the CSV line of `row` (columns `list`, with its `\n`) to `line`: the one
/// renderer of a row for [`write_csv`] and the page's gathered export parts.
pub fn push_csv_row(line: &mut String, row: &RowRef<'_>, list: &[Col]) {
    for (k, c) in list.iter().enumerate() {
        if k > 0 {
            line.push(',');
        }
        match cell(row, *c) {
            Cell::Str(v) => push_csv_field(line, &v),
            Cell::F64(x) => write_py_repr(line, x),
            Cell::I64(i) => line.push_str(&i.to_string()),
            Cell::Exact(ns, scale) => line.push_str(&exact_number_text(ns, scale)),
            Cell::Fixed(ns, scale) => line.push_str(&fixed_number_text(ns, scale)),
            Cell::Bool(b) => line.push_str(if b { "true" } else { "false" }),
            Cell::List(items) => push_csv_field(line, &items.join(";")),
            c @ (Cell::Short(_) | Cell::Ints(_)) => {
                push_csv_field(line, &super::table_csv::csv_text(&c))
            }
            Cell::Null => {}
        }
    }
    line.push('\n');
}

/// Writes `run`'s rows in §9.0 order as CSV: header, then one line per row.
///
/// Errors: only those of `out`.
pub fn write_csv(run: &MemoryRun, cols: Columns, out: &mut dyn Write) -> io::Result<()> {
    let list = cols.list();
    out.write_all(csv_header(cols).as_bytes())?;
    let mut line = String::with_capacity(512);
    for row in run.rows() {
        line.clear();
        push_csv_row(&mut line, &row, &list);
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// The JSON keys of `list`, quoted.
pub fn json_keys(list: &[Col]) -> Vec<String> {
    list.iter()
        .map(|c| serde_json::to_string(c.name()).unwrap_or_default())
        .collect()
}

/// Appends the JSON object of `row` (`{…}`, no separator; keys from [`json_keys`]) to
/// `line`: the one renderer of a row for [`write_json`] and the gathered export parts.
pub fn push_json_row(line: &mut String, row: &RowRef<'_>, list: &[Col], keys: &[String]) {
    line.push('{');
    for (k, c) in list.iter().enumerate() {
        if k > 0 {
            line.push(',');
        }
        line.push_str(&keys[k]);
        line.push(':');
        match cell(row, *c) {
            Cell::Str(v) => line.push_str(&serde_json::to_string(v.as_ref()).unwrap_or_default()),
            Cell::F64(x) if x.is_finite() => write_py_repr(line, x),
            Cell::F64(_) | Cell::Null => line.push_str("null"),
            Cell::I64(i) => line.push_str(&i.to_string()),
            Cell::Exact(ns, scale) => line.push_str(&exact_number_text(ns, scale)),
            Cell::Fixed(ns, scale) => line.push_str(&fixed_number_text(ns, scale)),
            Cell::Bool(b) => line.push_str(if b { "true" } else { "false" }),
            Cell::List(items) => line.push_str(&serde_json::to_string(&items).unwrap_or_default()),
            c @ (Cell::Short(_) | Cell::Ints(_)) => line.push_str(&super::table_csv::json_text(&c)),
        }
    }
    line.push('}');
}

/// What goes before row `n` of the JSON array (`[` is written first, see [`JSON_END`]).
pub fn json_separator(n: usize) -> &'static str {
    if n == 0 {
        "\n"
    } else {
        ",\n"
    }
}

/// The end of the JSON array, after the last row.
pub const JSON_END: &[u8] = b"\n]\n";

/// Writes `run`'s rows in §9.0 order as a JSON array of objects, one object per line.
///
/// Errors: only those of `out`.
pub fn write_json(run: &MemoryRun, cols: Columns, out: &mut dyn Write) -> io::Result<()> {
    let list = cols.list();
    let keys = json_keys(&list);
    out.write_all(b"[")?;
    let mut line = String::with_capacity(1024);
    for (n, row) in run.rows().enumerate() {
        line.clear();
        line.push_str(json_separator(n));
        push_json_row(&mut line, &row, &list, &keys);
        out.write_all(line.as_bytes())?;
    }
    out.write_all(JSON_END)?;
    Ok(())
}
