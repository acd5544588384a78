//! `kernel_details.csv` and msprof `op_summary*.csv` → [`KernelTableBuilder`]
//! rows (formats.md §3.1–3.4, anomaly.md §1.2). Every column set: Level0's 8
//! columns, with or without `OP State` / `HF32 Eligible` / `Device_id`,
//! `Block Dim` or `Block Num`, `HCCL` or `COMMUNICATION`, op_summary renames.
//! Columns are resolved by name (any known alias). Bad rows become
//! [`Problem`]s with their line; the rest of the file is used.

use std::io::Read;
use std::ops::ControlFlow;

use super::table::{CsvTable, RowRead};
use crate::base::{Problem, Problems, Severity};
use crate::ingest::Progress;
use crate::model::kernels::{KernelRow, KernelTableBuilder};
use crate::parse::number::{is_null, parse_f64, parse_i64, parse_time_ns};
use crate::parse::{ParseError, ParseErrorKind};

/// Problem codes of this parser.
pub mod codes {
    /// A required cell (name, start, duration) is missing, `N/A` or not a number: row dropped.
    pub const BAD_REQUIRED: &str = "ANOM-KD-001";
    /// Negative duration: row dropped.
    pub const NEGATIVE_DURATION: &str = "ANOM-KD-002";
    /// Zero duration: kept (counts in the inventory, adds no busy time).
    pub const ZERO_DURATION: &str = "ANOM-KD-003";
    /// Wait cell not a number or negative: treated as 0.
    pub const BAD_WAIT: &str = "ANOM-KD-004";
    /// Start time in exponent form: precision lost, kept.
    pub const PRECISION_LOST: &str = "ANOM-KD-005";
    /// Row narrower or wider than the header.
    pub const ROW_WIDTH: &str = "ANOM-KD-006";
    /// Row not valid UTF-8: dropped.
    pub const INVALID_UTF8: &str = "ANOM-KD-007";
    /// Optional columns absent (Level0 has no `Stream ID`, …): informational.
    pub const MISSING_OPTIONAL: &str = "ANOM-KD-008";
    /// Start or end outside the model's time range (`base::arith::TIME_LIMIT_NS`): row dropped.
    pub const OUT_OF_RANGE: &str = "ANOM-KD-009";
    /// A record longer than the CSV record cap: the rows before it are kept, the rest is not read.
    pub const RECORD_TOO_LONG: &str = "ANOM-KD-013";
}

/// What the header said and how many rows were used.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelCsvInfo {
    /// `kernel_details` or `op_summary` (by the start-column alias found).
    pub flavour: &'static str,
    /// Data rows read.
    pub rows_read: u64,
    /// Rows handed to the builder.
    pub rows_kept: u64,
    /// Optional columns that are absent.
    pub missing_optional: Vec<&'static str>,
    /// The file has a `Stream ID` column.
    pub has_stream: bool,
    /// The file only has aggregate columns (`Count`, `Total …`): no intervals (§1.2.3).
    pub aggregate_only: bool,
    /// Progress callback asked to stop.
    pub stopped: bool,
}

const NAME: &[&str] = &["Name", "Op Name", "OP Name"];
const TYPE: &[&str] = &["Type", "OP Type", "Op Type"];
const CORE: &[&str] = &["Task Type", "Accelerator Core"];
const START: &[&str] = &["Start Time(us)", "Task Start Time(us)"];
const DUR: &[&str] = &["Duration(us)", "Task Duration(us)"];
const WAIT: &[&str] = &["Wait Time(us)", "Task Wait Time(us)"];

/// Reads one kernel table into `out`. `on_progress` is called every 64 Ki rows;
/// `Break` stops reading (the rows so far are kept, `stopped` is set).
///
/// Errors: [`ParseErrorKind::Header`] when `Name`, `Start Time(us)` or `Duration(us)`
/// (or their op_summary aliases) are absent — except an aggregate-only table, which is
/// `Ok` with `aggregate_only`; [`ParseErrorKind::Empty`]/`Read` from the CSV reader.
pub fn read<R: Read>(
    src: R,
    file: &str,
    total: Option<u64>,
    out: &mut KernelTableBuilder,
    problems: &mut Problems,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Result<KernelCsvInfo, ParseError> {
    let mut t = CsvTable::open(src, file, total)?;
    let h = t.header().clone();
    let (name, start, dur) = (h.index_any(NAME), h.index_any(START), h.index_any(DUR));
    let mut info = KernelCsvInfo {
        flavour: if h.index("Task Start Time(us)").is_some() {
            "op_summary"
        } else {
            "kernel_details"
        },
        ..Default::default()
    };
    if start.is_none()
        && h.names()
            .iter()
            .any(|n| n == "Count" || n.starts_with("Total "))
    {
        info.aggregate_only = true;
        return Ok(info);
    }
    let (Some(name), Some(start), Some(dur)) = (name, start, dur) else {
        let mut missing = Vec::new();
        for (idx, label) in [
            (name, "Name"),
            (start, "Start Time(us)"),
            (dur, "Duration(us)"),
        ] {
            if idx.is_none() {
                missing.push(label.to_string());
            }
        }
        return Err(ParseError::new(
            crate::base::Position::file(file).at_line(1),
            ParseErrorKind::Header {
                missing,
                found: h.names().to_vec(),
            },
        ));
    };
    let ty = h.index_any(TYPE);
    let core = h.index_any(CORE);
    let wait = h.index_any(WAIT);
    let stream = h.index("Stream ID");
    let step = h.index("Step Id");
    let shapes = h.index("Input Shapes");
    let pmu = [
        h.index("aic_mac_ratio"),
        h.index("aic_mte2_ratio"),
        h.index("memory_bound"),
    ];
    info.has_stream = stream.is_some();
    for (idx, label) in [
        (ty, "Type"),
        (core, "Accelerator Core"),
        (wait, "Wait Time(us)"),
        (stream, "Stream ID"),
        (shapes, "Input Shapes"),
    ] {
        if idx.is_none() {
            info.missing_optional.push(label);
        }
    }
    if !info.missing_optional.is_empty() {
        problems.push(Problem::new(
            Severity::Info,
            codes::MISSING_OPTIONAL,
            crate::base::Position::file(file).at_line(1),
            format!(
                "columns absent: {} (analysed without them)",
                info.missing_optional.join(", ")
            ),
        ));
    }
    let width = h.len();
    let mut row = KernelRow::default();
    loop {
        match t.read_row()? {
            RowRead::End => break,
            RowRead::Invalid { line, message } => {
                info.rows_read += 1;
                problems.push(Problem::new(
                    Severity::Error,
                    codes::INVALID_UTF8,
                    crate::base::Position::file(file).at_line(line),
                    format!("row dropped: {message}"),
                ));
                continue;
            }
            r @ RowRead::TooLong { line, byte, .. } => {
                problems.push(Problem::new(
                    Severity::Error,
                    codes::RECORD_TOO_LONG,
                    crate::base::Position::file(file)
                        .at_line(line)
                        .at_byte(byte),
                    r.too_long_message().unwrap_or_default(),
                ));
                break;
            }
            RowRead::Row => {}
        }
        info.rows_read += 1;
        if info.rows_read % 65_536 == 0 && on_progress(t.progress()).is_break() {
            info.stopped = true;
            break;
        }
        let at = || t.position();
        let cell = |i: usize| t.cell(i).unwrap_or("");
        if t.width() != width {
            problems.push(Problem::new(
                Severity::Warning,
                codes::ROW_WIDTH,
                at(),
                width_message(t.width(), h.names(), cell(start), cell(dur)),
            ));
        }
        let n = cell(name);
        let st = cell(start);
        let du = cell(dur);
        if is_null(n) {
            problems.push(Problem::new(
                Severity::Error,
                codes::BAD_REQUIRED,
                at().in_column(h.names()[name].as_str()),
                "row dropped: empty or N/A kernel name",
            ));
            continue;
        }
        let start_t = match parse_time_ns(st) {
            Ok(v) => v,
            Err(_) => {
                problems.push(Problem::new(
                    Severity::Error,
                    codes::BAD_REQUIRED,
                    at().in_column(h.names()[start].as_str()),
                    format!("row dropped: start time {st:?} is not a decimal µs number"),
                ));
                continue;
            }
        };
        if start_t.precision_lost {
            problems.push(Problem::new(
                Severity::Warning,
                codes::PRECISION_LOST,
                at().in_column(h.names()[start].as_str()),
                format!("start time {st:?} in exponent form: precision lost"),
            ));
        }
        let dur_ns = match parse_time_ns(du) {
            Ok(v) => v.ns,
            Err(_) => {
                problems.push(Problem::new(
                    Severity::Error,
                    codes::BAD_REQUIRED,
                    at().in_column(h.names()[dur].as_str()),
                    format!("row dropped: duration {du:?} is not a decimal µs number"),
                ));
                continue;
            }
        };
        if dur_ns < 0 {
            problems.push(Problem::new(
                Severity::Error,
                codes::NEGATIVE_DURATION,
                at().in_column(h.names()[dur].as_str()),
                format!("row dropped: negative duration {du}"),
            ));
            continue;
        }
        if dur_ns == 0 {
            problems.push(Problem::new(
                Severity::Warning,
                codes::ZERO_DURATION,
                at().in_column(h.names()[dur].as_str()),
                "zero duration: kept in the inventory, adds no busy time",
            ));
        }
        let wait_ns = match wait.map(cell) {
            None => 0,
            Some(w) if is_null(w) => 0,
            Some(w) => match parse_time_ns(w) {
                Ok(v) if v.ns >= 0 => v.ns,
                _ => {
                    problems.push(Problem::new(
                        Severity::Warning,
                        codes::BAD_WAIT,
                        at().in_column("Wait Time(us)"),
                        format!("wait {w:?} is not a non-negative number: treated as 0"),
                    ));
                    0
                }
            },
        };
        row.name.clear();
        row.name.push_str(n);
        row.op_type.clear();
        row.op_type.push_str(ty.map(cell).unwrap_or(""));
        row.core_raw.clear();
        row.core_raw.push_str(core.map(cell).unwrap_or(""));
        row.start_ns = start_t.ns;
        row.dur_ns = dur_ns;
        row.wait_ns = wait_ns;
        row.stream.clear();
        if let Some(s) = stream.map(cell) {
            if parse_i64(s).is_ok() {
                row.stream.push_str(s);
            }
        }
        row.step_tag = step.map(cell).and_then(|s| parse_i64(s).ok());
        row.input_shapes.clear();
        row.input_shapes.push_str(shapes.map(cell).unwrap_or(""));
        row.row = t.line();
        let pm = |i: Option<usize>| {
            i.map(cell)
                .and_then(|c| parse_f64(c).ok())
                .map(|v| v as f32)
        };
        row.pmu_mac_ratio = pm(pmu[0]);
        row.pmu_mte2_ratio = pm(pmu[1]);
        row.pmu_memory_bound = pm(pmu[2]);
        if out.try_push(&row).is_err() {
            problems.push(Problem::new(
                Severity::Error,
                codes::OUT_OF_RANGE,
                at().in_column(h.names()[start].as_str()),
                format!(
                    "row dropped: start {st} µs with duration {du} µs lies outside the representable time range ({}), or the table's durations add up past it",
                    crate::base::arith::Tally::time_limit_text()
                ),
            ));
            continue;
        }
        info.rows_kept += 1;
    }
    if on_progress(t.progress()).is_break() {
        info.stopped = true;
    }
    Ok(info)
}

/// The `ANOM-KD-006` message of a row of `got` cells under `header`: cells are read by
/// position, so a narrower row's last columns are absent, and a cell missing inside the row
/// moves every value after it one column to the left (the start and duration as read let the
/// reader check); a wider row's extra cells are ignored.
fn width_message(got: usize, header: &[String], start: &str, dur: &str) -> String {
    let width = header.len();
    if got > width {
        return format!(
            "row has {got} cells, header has {width}: the {} cell(s) after the last column are ignored",
            got - width
        );
    }
    let absent = header[got.min(width)..].join(", ");
    format!(
        "row has {got} cells, header has {width}: cells are read by position, so the last {} \
         column(s) ({absent}) are absent; if a cell is missing inside the row instead, the \
         values after it are read one column to the left (read here: start {start:?}, duration {dur:?})",
        width - got,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` read as `kernel_details.csv`: the builder, the problems and what was read.
    fn read_text(text: &[u8]) -> (KernelTableBuilder, Problems, KernelCsvInfo) {
        let mut builder = KernelTableBuilder::new();
        let mut problems = Problems::default();
        let info = read(
            text,
            "kernel_details.csv",
            None,
            &mut builder,
            &mut problems,
            &mut |_| ControlFlow::Continue(()),
        )
        .unwrap();
        (builder, problems, info)
    }

    #[test]
    fn a_row_of_another_width_says_what_was_read() {
        // The shape of a real 2023 row with its `Duration(us)` cell left out: the wait time
        // (1.8414) is read as the duration.
        let text = "Name,Start Time(us),Duration(us),Wait Time(us),Block Dim\n\
                    FlashAttentionScore,1695115378795017.5,1.8414,24\n\
                    Cast,1695115378795100,5.5,0,33,9\n";
        let (builder, problems, _) = read_text(text.as_bytes());
        let said: Vec<(&str, Option<u64>, &str)> = problems
            .kept()
            .iter()
            .filter(|p| p.code == codes::ROW_WIDTH)
            .map(|p| (p.code, p.at.line, p.message.as_str()))
            .collect();
        assert_eq!(
            said,
            [
                (
                    codes::ROW_WIDTH,
                    Some(2),
                    "row has 4 cells, header has 5: cells are read by position, so the last 1 \
                     column(s) (Block Dim) are absent; if a cell is missing inside the row \
                     instead, the values after it are read one column to the left (read here: \
                     start \"1695115378795017.5\", duration \"1.8414\")"
                ),
                (
                    codes::ROW_WIDTH,
                    Some(3),
                    "row has 6 cells, header has 5: the 1 cell(s) after the last column are ignored"
                ),
            ]
        );
        assert_eq!(builder.finish().len(), 2);
    }

    #[test]
    fn a_row_past_the_record_cap_stops_the_table_with_a_located_error() {
        // One record is at most 16 MiB; the rows before it are kept.
        let head = "Name,Start Time(us),Duration(us)\nk1,\"100.0\",1.5\nk2,\"200\n";
        let mut text = head.as_bytes().to_vec();
        text.resize(text.len() + (17 << 20), b'9');
        let (builder, problems, info) = read_text(&text);
        assert_eq!(info.rows_read, 1);
        let p = problems.kept().last().unwrap();
        assert_eq!(
            (p.code, p.at.line, p.at.byte),
            (codes::RECORD_TOO_LONG, Some(3), Some(48))
        );
        assert_eq!(builder.finish().len(), 1);
    }
}
