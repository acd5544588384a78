//! `operator_memory.csv` → [`MemoryEventTable`] (ascend-memory.md §4, §10.3).
//!
//! Columns are found by header name, so the 15-column and the 10-column forms
//! both load (§4.1). Cells are trimmed by the shared table reader (the trailing
//! TAB quirk, quoted or not; CRLF/LF; BOM). Two modes:
//!
//! * [`CsvMode::Default`]: lenient. `… Time(us)` cells become exact `i64` ns,
//!   empty and `N/A` cells become null, a bad row is skipped and reported with
//!   its physical line (`MEM-CSV-003`/`004`), exponent-form times are kept with
//!   `MEM-CSV-005`. Missing optional columns give one `MEM-CSV-002` each.
//! * [`CsvMode::Parity`]: upstream semantics (§4.3): Python `float()` grammar,
//!   `float(x or 0)` for duration and totals, and any bad or short row fails the
//!   whole file (RL-Insight drops the rank). A BOM makes `Name` "missing".
//!
//! Memory grows with the rows kept, never with the file. Progress is reported
//! every [`PROGRESS_ROWS`] rows; a `Break` stops reading (`stopped`).

use std::io::Read;
use std::ops::ControlFlow;
use std::sync::Arc;

use crate::base::{Position, Problem, Problems, Severity};
use crate::ingest::Progress;
use crate::model::memory_events::{MemoryEvent, MemoryEventTable, Totals};
use crate::model::strings::{StrId, StringPool};
use crate::parse::csv::{CsvTable, RowRead};
use crate::parse::number::{is_null, parse_f64, parse_f64_python, parse_time_ns, NumError};
use crate::parse::{ParseError, ParseErrorKind};

/// Rows between two progress reports.
pub const PROGRESS_ROWS: u64 = 8192;

/// Parsing rules (ascend-memory.md §4.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CsvMode {
    /// Lenient, per-row problems.
    #[default]
    Default,
    /// Upstream RL-Insight semantics; the first bad row fails the file.
    Parity,
}

/// Header names (§4.1).
pub mod col {
    /// `Name`.
    pub const NAME: &str = "Name";
    /// `Size(KB)`.
    pub const SIZE: &str = "Size(KB)";
    /// `Allocation Time(us)`.
    pub const ALLOC_TIME: &str = "Allocation Time(us)";
    /// `Release Time(us)`.
    pub const RELEASE_TIME: &str = "Release Time(us)";
    /// `Active Release Time(us)`.
    pub const ACTIVE_RELEASE_TIME: &str = "Active Release Time(us)";
    /// `Duration(us)`.
    pub const DURATION: &str = "Duration(us)";
    /// `Active Duration(us)`.
    pub const ACTIVE_DURATION: &str = "Active Duration(us)";
    /// `Allocation Total Allocated(MB)`.
    pub const A_ALLOCATED: &str = "Allocation Total Allocated(MB)";
    /// `Allocation Total Reserved(MB)`.
    pub const A_RESERVED: &str = "Allocation Total Reserved(MB)";
    /// `Allocation Total Active(MB)`.
    pub const A_ACTIVE: &str = "Allocation Total Active(MB)";
    /// `Release Total Allocated(MB)`.
    pub const R_ALLOCATED: &str = "Release Total Allocated(MB)";
    /// `Release Total Reserved(MB)`.
    pub const R_RESERVED: &str = "Release Total Reserved(MB)";
    /// `Release Total Active(MB)`.
    pub const R_ACTIVE: &str = "Release Total Active(MB)";
    /// `Stream Ptr`.
    pub const STREAM_PTR: &str = "Stream Ptr";
    /// `Device Type`.
    pub const DEVICE_TYPE: &str = "Device Type";
    /// Required in both modes (`MEM-CSV-001`).
    pub const REQUIRED: [&str; 3] = [NAME, SIZE, ALLOC_TIME];
    /// The other columns of the 15-column form (`MEM-CSV-002` when absent).
    pub const OPTIONAL: [&str; 12] = [
        RELEASE_TIME,
        ACTIVE_RELEASE_TIME,
        DURATION,
        ACTIVE_DURATION,
        A_ALLOCATED,
        A_RESERVED,
        A_ACTIVE,
        R_ALLOCATED,
        R_RESERVED,
        R_ACTIVE,
        STREAM_PTR,
        DEVICE_TYPE,
    ];
}

/// Counts and facts of one read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CsvStats {
    /// Data records seen (rows in).
    pub rows_in: u64,
    /// Rows kept in the table.
    pub rows_kept: u64,
    /// Rows skipped with an error problem.
    pub rows_skipped: u64,
    /// Number of header columns.
    pub columns: usize,
    /// A BOM was stripped.
    pub had_bom: bool,
    /// Reading stopped on request (Cancel).
    pub stopped: bool,
}

#[derive(Clone, Copy)]
struct Cols {
    name: usize,
    size: usize,
    alloc: usize,
    release: Option<usize>,
    active_release: Option<usize>,
    duration: Option<usize>,
    active_duration: Option<usize>,
    a: [Option<usize>; 3],
    r: [Option<usize>; 3],
    stream: Option<usize>,
    device: Option<usize>,
}

fn short(v: &str) -> String {
    if v.chars().count() > 80 {
        let mut s: String = v.chars().take(80).collect();
        s.push('…');
        s
    } else {
        v.to_string()
    }
}

struct RowError {
    code: &'static str,
    column: Option<&'static str>,
    value: String,
    message: String,
}

fn num_error(line: u64, column: &'static str, value: &str) -> RowError {
    RowError {
        code: "MEM-CSV-003",
        column: Some(column),
        value: short(value),
        message: format!(
            "operator_memory.csv:{line}: column '{column}': cannot read '{}' as a number",
            short(value)
        ),
    }
}

/// Reads `src` (the bytes of `file`, `total` bytes if known) into `table`, interning names,
/// stream handles and device types in `strings`.
///
/// Problems go to `problems` (codes of §10.3). Returns the counts.
///
/// # Errors
///
/// The file cannot be used at all: empty ([`ParseErrorKind::Empty`]), unreadable
/// ([`ParseErrorKind::Read`]), required columns missing ([`ParseErrorKind::Header`], one
/// `MEM-CSV-001` problem per column is pushed too); in parity mode also the first bad row
/// ([`ParseErrorKind::Syntax`] at its line and column). Rows read before the error stay in
/// `table`; in parity mode the caller must drop them.
#[allow(clippy::too_many_arguments)] // one non-generic body; the pools are the rank's
pub fn read(
    src: &mut dyn Read,
    file: &str,
    total: Option<u64>,
    mode: CsvMode,
    strings: &mut StringPool,
    table: &mut MemoryEventTable,
    problems: &mut Problems,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Result<CsvStats, ParseError> {
    let file: Arc<str> = file.into();
    let mut t = CsvTable::open(src, file.clone(), total)?;
    let mut stats = CsvStats {
        columns: t.header().len(),
        had_bom: t.had_bom(),
        ..Default::default()
    };
    let at = || Position::file(file.clone()).at_line(1);
    if mode == CsvMode::Parity && stats.had_bom {
        // Python opens the file without BOM handling: the first header is "\ufeffName".
        problems.push(Problem::new(
            Severity::Error,
            "MEM-CSV-001",
            at().in_column(col::NAME),
            format!("operator_memory.csv: missing column '{}'", col::NAME),
        ));
        return Err(ParseError::new(
            at(),
            ParseErrorKind::Header {
                missing: vec![col::NAME.into()],
                found: t.header().names().to_vec(),
            },
        ));
    }
    let h = t.header().clone();
    let missing: Vec<String> = col::REQUIRED
        .iter()
        .filter(|c| h.index(c).is_none())
        .map(|c| c.to_string())
        .collect();
    if !missing.is_empty() {
        for c in &missing {
            problems.push(Problem::new(
                Severity::Error,
                "MEM-CSV-001",
                at().in_column(c.as_str()),
                format!("operator_memory.csv: missing column '{c}'"),
            ));
        }
        let found = h.names().to_vec();
        return Err(ParseError::new(
            at(),
            ParseErrorKind::Header { missing, found },
        ));
    }
    if mode == CsvMode::Default {
        for c in col::OPTIONAL {
            if h.index(c).is_none() {
                problems.push(Problem::new(Severity::Warning, "MEM-CSV-002", at().in_column(c),
                    format!("operator_memory.csv: column '{c}' absent (older format); related fields left empty")));
            }
        }
        if stats.had_bom {
            problems.push(Problem::new(
                Severity::Info,
                "MEM-CSV-006",
                at(),
                "operator_memory.csv: UTF-8 BOM stripped",
            ));
        }
    }
    let cols = Cols {
        name: h.index(col::NAME).unwrap_or(0),
        size: h.index(col::SIZE).unwrap_or(0),
        alloc: h.index(col::ALLOC_TIME).unwrap_or(0),
        release: h.index(col::RELEASE_TIME),
        active_release: h.index(col::ACTIVE_RELEASE_TIME),
        duration: h.index(col::DURATION),
        active_duration: h.index(col::ACTIVE_DURATION),
        a: [
            h.index(col::A_ALLOCATED),
            h.index(col::A_RESERVED),
            h.index(col::A_ACTIVE),
        ],
        r: [
            h.index(col::R_ALLOCATED),
            h.index(col::R_RESERVED),
            h.index(col::R_ACTIVE),
        ],
        stream: h.index(col::STREAM_PTR),
        device: h.index(col::DEVICE_TYPE),
    };
    let width = h.len();
    loop {
        let line = match t.read_row()? {
            RowRead::End => break,
            RowRead::Invalid { line, message } => {
                stats.rows_in += 1;
                let pos = Position::file(file.clone()).at_line(line);
                if mode == CsvMode::Parity {
                    return Err(ParseError::new(
                        pos,
                        ParseErrorKind::Syntax {
                            expected: "UTF-8 text",
                        },
                    ));
                }
                stats.rows_skipped += 1;
                problems.push(Problem::new(
                    Severity::Error,
                    "MEM-CSV-003",
                    pos,
                    format!("operator_memory.csv:{line}: {message}"),
                ));
                continue;
            }
            r @ RowRead::TooLong { line, byte, .. } => {
                problems.push(Problem::new(
                    Severity::Error,
                    "MEM-CSV-011",
                    Position::file(file.clone()).at_line(line).at_byte(byte),
                    format!(
                        "operator_memory.csv: {}",
                        r.too_long_message().unwrap_or_default()
                    ),
                ));
                break;
            }
            RowRead::Row => t.line(),
        };
        stats.rows_in += 1;
        let row = match mode {
            CsvMode::Default => default_row(&t, &cols, width, line, strings),
            CsvMode::Parity => parity_row(&t, &cols, line, strings),
        };
        match row {
            Ok((ev, _)) if ev.times_in_range().is_err() => {
                stats.rows_skipped += 1;
                problems.push(Problem::new(
                    Severity::Error,
                    "MEM-CSV-010",
                    t.position(),
                    format!(
                        "operator_memory.csv:{line}: a time lies outside the representable range ({}): row dropped",
                        crate::base::arith::Tally::time_limit_text()
                    ),
                ));
            }
            Ok((ev, warn)) => {
                if let Some(v) = warn {
                    problems.push(Problem::new(Severity::Warning, "MEM-CSV-005", t.position(),
                        format!("operator_memory.csv:{line}: '{}' has lost precision (spreadsheet export?)", short(&v))));
                }
                table.push(ev);
                stats.rows_kept += 1;
            }
            Err(e) => {
                let mut pos = t.position();
                if let Some(c) = e.column {
                    pos = pos.in_column(c);
                }
                if mode == CsvMode::Parity {
                    problems.push(Problem::new(
                        Severity::Error,
                        e.code,
                        pos.clone(),
                        e.message,
                    ));
                    return Err(ParseError::new(
                        pos,
                        ParseErrorKind::Syntax {
                            expected: "a number (RL-Insight parity fails the rank)",
                        },
                    ));
                }
                let _ = e.value;
                stats.rows_skipped += 1;
                problems.push(Problem::new(Severity::Error, e.code, pos, e.message));
            }
        }
        if stats.rows_in.is_multiple_of(PROGRESS_ROWS) && on_progress(t.progress()).is_break() {
            stats.stopped = true;
            return Ok(stats);
        }
    }
    let _ = on_progress(t.progress());
    let le = t.line_endings();
    if mode == CsvMode::Default && le.crlf > 0 && le.lf > 0 {
        problems.push(Problem::new(
            Severity::Info,
            "MEM-CSV-006",
            Position::file(file.clone()),
            format!(
                "operator_memory.csv: mixed line endings ({} CRLF, {} LF)",
                le.crlf, le.lf
            ),
        ));
    }
    Ok(stats)
}

fn intern_opt(strings: &mut StringPool, v: Option<&str>) -> StrId {
    match v {
        Some(s) if !s.is_empty() => strings.intern(s),
        _ => StrId::EMPTY,
    }
}

fn default_row<R: Read>(
    t: &CsvTable<R>,
    c: &Cols,
    width: usize,
    line: u64,
    strings: &mut StringPool,
) -> Result<(MemoryEvent, Option<String>), RowError> {
    if t.width() != width {
        return Err(RowError {
            code: "MEM-CSV-004",
            column: None,
            value: String::new(),
            message: format!(
                "operator_memory.csv:{line}: expected {width} cells, found {}",
                t.width()
            ),
        });
    }
    let cell = |i: usize| t.cell(i).unwrap_or("");
    let num = |i: Option<usize>, name: &'static str| -> Result<Option<f64>, RowError> {
        match t.cell_opt(i) {
            None => Ok(None),
            Some(v) if is_null(v) => Ok(None),
            Some(v) => parse_f64(v).map(Some).map_err(|_| num_error(line, name, v)),
        }
    };
    let time = |i: Option<usize>,
                name: &'static str,
                lost: &mut Option<String>|
     -> Result<Option<i64>, RowError> {
        match t.cell_opt(i) {
            None => Ok(None),
            Some(v) if is_null(v) => Ok(None),
            Some(v) => match parse_time_ns(v) {
                Ok(tn) => {
                    if tn.precision_lost && lost.is_none() {
                        *lost = Some(v.to_string());
                    }
                    Ok(Some(tn.ns))
                }
                Err(_) => Err(num_error(line, name, v)),
            },
        }
    };
    let mut lost = None;
    let size_text = cell(c.size);
    let size_kb = match num(Some(c.size), col::SIZE)? {
        Some(v) => v,
        None => return Err(num_error(line, col::SIZE, size_text)),
    };
    let alloc_text = cell(c.alloc);
    let Some(alloc_ns) = time(Some(c.alloc), col::ALLOC_TIME, &mut lost)? else {
        return Err(num_error(line, col::ALLOC_TIME, alloc_text));
    };
    let alloc_us =
        parse_f64(alloc_text).map_err(|_| num_error(line, col::ALLOC_TIME, alloc_text))?;
    let release = time(c.release, col::RELEASE_TIME, &mut lost)?;
    let active_release = time(c.active_release, col::ACTIVE_RELEASE_TIME, &mut lost)?;
    let duration = num(c.duration, col::DURATION)?;
    let active_duration = num(c.active_duration, col::ACTIVE_DURATION)?;
    let a = Totals {
        allocated: num(c.a[0], col::A_ALLOCATED)?,
        reserved: num(c.a[1], col::A_RESERVED)?,
        active: num(c.a[2], col::A_ACTIVE)?,
    };
    let r = Totals {
        allocated: num(c.r[0], col::R_ALLOCATED)?,
        reserved: num(c.r[1], col::R_RESERVED)?,
        active: num(c.r[2], col::R_ACTIVE)?,
    };
    let ev = MemoryEvent {
        name: strings.intern(cell(c.name)),
        size_kb,
        alloc_time_ns: alloc_ns,
        alloc_time_us: alloc_us,
        release_time_ns: release,
        active_release_time_ns: active_release,
        duration_us: duration,
        active_duration_us: active_duration,
        alloc_totals: a,
        release_totals: r,
        stream_ptr: intern_opt(strings, t.cell_opt(c.stream).filter(|v| !is_null(v))),
        device_type: intern_opt(strings, t.cell_opt(c.device)),
        line,
        precision_lost: lost.is_some(),
    };
    Ok((ev, lost))
}

/// Upstream per-row conversion (§4.3 parity table). Columns ignored by parity are read
/// leniently (bad cells become null) so the extension data stays available.
fn parity_row<R: Read>(
    t: &CsvTable<R>,
    c: &Cols,
    line: u64,
    strings: &mut StringPool,
) -> Result<(MemoryEvent, Option<String>), RowError> {
    let short_row = |col: &'static str| RowError {
        code: "MEM-CSV-004",
        column: Some(col),
        value: String::new(),
        message: format!(
            "operator_memory.csv:{line}: expected a cell in column '{col}', the row is short"
        ),
    };
    let req = |i: usize, col: &'static str| t.cell(i).ok_or_else(|| short_row(col));
    let pyf = |v: &str, col: &'static str| parse_f64_python(v).map_err(|_| num_error(line, col, v));
    // `float(x or 0)`: a missing column is `None or 0`; a short row is a missing value too.
    let or0 = |i: Option<usize>, col: &'static str| -> Result<Option<f64>, RowError> {
        match i {
            None => Ok(None),
            Some(i) => {
                let v = t.cell(i).ok_or_else(|| short_row(col))?;
                if v.is_empty() {
                    Ok(None)
                } else {
                    pyf(v, col).map(Some)
                }
            }
        }
    };
    let lenient_time = |i: Option<usize>| {
        t.cell_opt(i)
            .and_then(|v| parse_time_ns(v).ok())
            .map(|x| x.ns)
    };
    let lenient_num = |i: Option<usize>| t.cell_opt(i).and_then(|v| parse_f64(v).ok());
    let name = req(c.name, col::NAME)?;
    let size_kb = pyf(req(c.size, col::SIZE)?, col::SIZE)?;
    let alloc_text = req(c.alloc, col::ALLOC_TIME)?;
    let alloc_us = pyf(alloc_text, col::ALLOC_TIME)?;
    let alloc_ns = match parse_time_ns(alloc_text) {
        Ok(x) => x.ns,
        Err(NumError::Empty | NumError::Invalid | NumError::OutOfRange) => {
            (alloc_us * 1000.0) as i64
        }
    };
    let device = match c.device {
        Some(i) => req(i, col::DEVICE_TYPE)?,
        None => "",
    };
    let ev = MemoryEvent {
        name: strings.intern(name),
        size_kb,
        alloc_time_ns: alloc_ns,
        alloc_time_us: alloc_us,
        release_time_ns: lenient_time(c.release),
        active_release_time_ns: lenient_time(c.active_release),
        duration_us: or0(c.duration, col::DURATION)?,
        active_duration_us: lenient_num(c.active_duration),
        alloc_totals: Totals {
            allocated: or0(c.a[0], col::A_ALLOCATED)?,
            reserved: or0(c.a[1], col::A_RESERVED)?,
            active: or0(c.a[2], col::A_ACTIVE)?,
        },
        release_totals: Totals {
            allocated: lenient_num(c.r[0]),
            reserved: lenient_num(c.r[1]),
            active: lenient_num(c.r[2]),
        },
        stream_ptr: intern_opt(strings, t.cell_opt(c.stream)),
        device_type: intern_opt(strings, Some(device)),
        line,
        precision_lost: false,
    };
    Ok((ev, None))
}

#[cfg(test)]
mod tests;
