//! The text and columnar renderings of a table given as lines of [`Cell`]s (docs/frames.md §2):
//! [`write_csv`] (header, then one CSV line per row) and [`frame_of`] (the typed [`Frame`]) take
//! the same lines, so a table's CSV and its frame agree cell by cell. Floats are Python `repr`,
//! exact times exact decimals, fixed times `scale` decimals, lists joined by `;`, nulls empty
//! cells. Quoting by the `csv` crate (minimal), line terminator `\n`. Formatting only.

use std::io::{self, Write};

use super::float::{exact_number_text, fixed_number_text, py_repr};
use super::frame::{Cell, Frame, FrameBuilder, Kind};

/// The CSV text of one cell.
pub fn csv_text(c: &Cell<'_>) -> String {
    match c {
        Cell::Str(s) => s.to_string(),
        Cell::F64(x) => py_repr(*x),
        Cell::I64(i) => i.to_string(),
        Cell::Exact(ns, scale) => exact_number_text(*ns, *scale),
        Cell::Fixed(ns, scale) => fixed_number_text(*ns, *scale),
        Cell::Bool(b) => b.to_string(),
        Cell::List(items) => items.join(";"),
        Cell::Short(x) => short_text(*x),
        Cell::Ints(v) => ints_text(v),
        Cell::Null => String::new(),
    }
}

/// [`Cell::Short`]'s text: the shortest round-trip digits as `serde_json` writes a float
/// (`0.0`, `0.000096`, `1.5e-7`, `1e16`); empty for a non-finite value.
pub fn short_text(x: f64) -> String {
    if x.is_finite() {
        ryu::Buffer::new().format_finite(x).to_string()
    } else {
        String::new()
    }
}

/// [`Cell::Ints`]' text: the JSON array `[0,1]`.
pub fn ints_text(v: &[i64]) -> String {
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(","))
}

/// The JSON text of one cell: strings quoted and escaped, lists as arrays, floats as in CSV
/// (`F64` Python `repr`, `Short` the shortest digits), nulls and non-finite floats `null`.
pub fn json_text(c: &Cell<'_>) -> String {
    match c {
        Cell::Str(s) => serde_json::to_string(s.as_ref()).unwrap_or_default(),
        Cell::F64(x) | Cell::Short(x) if !x.is_finite() => "null".into(),
        Cell::List(items) => serde_json::to_string(items).unwrap_or_default(),
        Cell::Null => "null".into(),
        other => csv_text(other),
    }
}

fn csv_err(e: csv::Error) -> io::Error {
    io::Error::other(e.to_string())
}

/// Writes `columns` as the header line, then one line per item of `lines`.
///
/// Errors: only those of `out`.
pub fn write_csv<'a>(
    columns: &[&str],
    lines: impl Iterator<Item = Vec<Cell<'a>>>,
    out: &mut dyn Write,
) -> io::Result<()> {
    write_records(Some(columns), lines, out)
}

/// Writes one CSV line per item of `lines`, no header (a table written in parts, such as the
/// page's per-worker export parts that one header precedes).
///
/// Errors: only those of `out`.
pub fn write_lines<'a>(
    lines: impl Iterator<Item = Vec<Cell<'a>>>,
    out: &mut dyn Write,
) -> io::Result<()> {
    write_records(None, lines, out)
}

fn write_records<'a>(
    header: Option<&[&str]>,
    lines: impl Iterator<Item = Vec<Cell<'a>>>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(out);
    if let Some(columns) = header {
        w.write_record(columns).map_err(csv_err)?;
    }
    for cells in lines {
        let rec: Vec<String> = cells.iter().map(csv_text).collect();
        w.write_record(&rec).map_err(csv_err)?;
    }
    w.flush()
}

/// The frame of `lines` under `columns` (CSV names and kinds; exact and fixed times become
/// `<base>_ns` integer columns).
pub fn frame_of<'a>(columns: &[(&str, Kind)], lines: impl Iterator<Item = Vec<Cell<'a>>>) -> Frame {
    let mut b = FrameBuilder::new(columns);
    for cells in lines {
        b.push(&cells);
    }
    b.finish()
}

/// The CSV names of `columns`.
pub fn names<'a>(columns: &[(&'a str, Kind)]) -> Vec<&'a str> {
    columns.iter().map(|c| c.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_render_as_their_csv_text() {
        assert_eq!(csv_text(&Cell::Fixed(12_500, 3)), "12.500");
        assert_eq!(csv_text(&Cell::Fixed(-5, 3)), "-0.005");
        assert_eq!(csv_text(&Cell::Exact(12_500, 3)), "12.5");
        assert_eq!(csv_text(&Cell::List(vec!["a".into(), "b".into()])), "a;b");
        assert_eq!(csv_text(&Cell::Null), "");
        assert_eq!(csv_text(&Cell::Short(9.6e-5)), "0.000096");
        assert_eq!(csv_text(&Cell::Short(1.5e-7)), "1.5e-7");
        assert_eq!(
            csv_text(&Cell::Short(1.5e-7)),
            serde_json::json!(1.5e-7).to_string()
        );
        assert_eq!(csv_text(&Cell::F64(9.6e-5)), "9.6e-05");
        assert_eq!(csv_text(&Cell::Short(100.0)), "100.0");
        assert_eq!(csv_text(&Cell::Short(f64::NAN)), "");
        assert_eq!(csv_text(&Cell::Ints(vec![0, 3])), "[0,3]");
        assert_eq!(json_text(&Cell::Short(f64::INFINITY)), "null");
        assert_eq!(json_text(&Cell::Str("a\"b".into())), "\"a\\\"b\"");
        assert_eq!(json_text(&Cell::Ints(vec![])), "[]");
        let mut out = Vec::new();
        let cols = [("n", Kind::I64), ("t_us", Kind::TimeNs)];
        let lines = vec![vec![Cell::I64(1), Cell::Fixed(1_000, 3)]];
        write_csv(&names(&cols), lines.clone().into_iter(), &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "n,t_us\n1,1.000\n");
        let f = frame_of(&cols, lines.into_iter());
        assert_eq!(f.columns[1].name, "t_ns");
    }
}
