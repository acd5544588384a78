//! `step_trace_time.csv` → [`StepTraceRow`]s (formats.md §4, anomaly.md §1.5):
//! µs values parsed exactly into ns; optional leading `Device_id`, optional
//! `Preparing`. Used as a step-window fallback and a cross-check (§3.1, §13.1).

use std::io::Read;

use super::table::{CsvTable, RowRead};
use crate::base::{Problem, Problems, Severity};
use crate::model::side_tables::StepTraceRow;
use crate::parse::number::{is_null, parse_time_ns};
use crate::parse::{ParseError, ParseErrorKind};

/// Problem code: a cell that is not a number (the value is left empty).
pub const BAD_CELL: &str = "ANOM-ST-001";
/// Problem code: a row that could not be read (invalid UTF-8, or past the CSV record cap).
pub const BAD_ROW: &str = "ANOM-ST-003";

/// Reads all rows (the file is small: one row per step and rank/stage).
///
/// Errors: [`ParseErrorKind::Header`] without a `Step` column; CSV reader errors.
pub fn read<R: Read>(
    src: R,
    file: &str,
    problems: &mut Problems,
) -> Result<Vec<StepTraceRow>, ParseError> {
    let mut t = CsvTable::open(src, file, None)?;
    let h = t.header().clone();
    let Some(step) = h.index("Step") else {
        return Err(ParseError::new(
            crate::base::Position::file(file).at_line(1),
            ParseErrorKind::Header {
                missing: vec!["Step".into()],
                found: h.names().to_vec(),
            },
        ));
    };
    let cols = [
        h.index("Computing"),
        h.index("Communication(Not Overlapped)"),
        h.index("Communication"),
        h.index("Free"),
        h.index("Stage"),
        h.index("Bubble"),
        h.index("Preparing"),
    ];
    let mut out = Vec::new();
    loop {
        match t.read_row()? {
            RowRead::End => break,
            RowRead::Invalid { line, message } => {
                problems.push(Problem::new(
                    Severity::Warning,
                    BAD_ROW,
                    crate::base::Position::file(file).at_line(line),
                    format!("row dropped: {message}"),
                ));
                continue;
            }
            r @ RowRead::TooLong { line, byte, .. } => {
                problems.push(Problem::new(
                    Severity::Warning,
                    BAD_ROW,
                    crate::base::Position::file(file)
                        .at_line(line)
                        .at_byte(byte),
                    r.too_long_message().unwrap_or_default(),
                ));
                break;
            }
            RowRead::Row => {}
        }
        let mut vals = [None; 7];
        for (k, c) in cols.iter().enumerate() {
            let Some(c) = c else { continue };
            let cell = t.cell(*c).unwrap_or("");
            if is_null(cell) {
                continue;
            }
            match parse_time_ns(cell) {
                Ok(v) => vals[k] = Some(v.ns),
                Err(_) => problems.push(Problem::new(
                    Severity::Warning,
                    BAD_CELL,
                    t.position().in_column(h.names()[*c].as_str()),
                    format!("{cell:?} is not a number: left empty"),
                )),
            }
        }
        out.push(StepTraceRow {
            step: t.cell(step).unwrap_or("").to_string(),
            line: t.line(),
            computing_ns: vals[0],
            comm_not_overlapped_ns: vals[1],
            communication_ns: vals[2],
            free_ns: vals[3],
            stage_ns: vals[4],
            bubble_ns: vals[5],
            preparing_ns: vals[6],
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_rows_are_reported_not_skipped_silently() {
        // An invalid-UTF-8 row was dropped with no word; now it is ANOM-ST-003.
        let text = b"Step,Computing\n1,10\n2,\xff\n3,30\n";
        let mut problems = Problems::default();
        let rows = read(&text[..], "step_trace_time.csv", &mut problems).unwrap();
        let steps: Vec<&str> = rows.iter().map(|r| r.step.as_str()).collect();
        assert_eq!(steps, ["1", "3"]);
        let got: Vec<_> = problems
            .kept()
            .iter()
            .map(|p| (p.code, p.at.line))
            .collect();
        assert_eq!(got, [(BAD_ROW, Some(3))]);
        assert_eq!(
            problems.kept()[0].message,
            "row dropped: invalid UTF-8 in field 2"
        );
    }
}
