//! The delta tables of `proflens diff` (docs/frames.md §3.9) as lines of [`Cell`]s for the CSV
//! and the frame (`report::table_csv`): the rows of the `--json` document, one table per array,
//! nothing recomputed. Traces, rank folders and runs ([`TraceDiffJson`]): [`OPS_COLUMNS`] (its
//! `ops`, one line per op or kernel name) and [`STEP_COLUMNS`] (its `steps`, one line per step
//! pair). Snapshots ([`DiffJson`]): [`SITE_COLUMNS`] (`sites_at_peak` then `sites_at_end` of
//! every device, one line per site). Formatting only.

use std::borrow::Cow;

use super::frame::{Cell, Kind};
use super::snapshot_diff::{DiffJson, SiteDeltaJson};
use super::trace_diff::TraceDiffJson;

/// The lines of a table, one `Vec` of cells per line.
pub type Lines<'a> = Vec<Vec<Cell<'a>>>;

/// The ops table: `ops[]` of the trace diff (µs as floats, as the JSON).
pub const OPS_COLUMNS: &[(&str, Kind)] = &[
    ("name", Kind::Text),
    ("a_count", Kind::I64),
    ("b_count", Kind::I64),
    ("delta_count", Kind::I64),
    ("a_time_us", Kind::F64),
    ("b_time_us", Kind::F64),
    ("delta_time_us", Kind::F64),
    ("change", Kind::Text),
];

/// The steps table: `steps[]` of the trace diff (null where a side has no such step).
pub const STEP_COLUMNS: &[(&str, Kind)] = &[
    ("step_id", Kind::Text),
    ("b_step_id", Kind::Text),
    ("a_service_ms", Kind::F64),
    ("b_service_ms", Kind::F64),
    ("delta_service_ms", Kind::F64),
    ("a_device_busy_union_ms", Kind::F64),
    ("b_device_busy_union_ms", Kind::F64),
    ("delta_device_busy_union_ms", Kind::F64),
    ("a_underfeed_ms", Kind::F64),
    ("b_underfeed_ms", Kind::F64),
    ("delta_underfeed_ms", Kind::F64),
    ("a_bubble_count", Kind::I64),
    ("b_bubble_count", Kind::I64),
    ("delta_bubble_count", Kind::I64),
    ("a_bubble_total_ms", Kind::F64),
    ("b_bubble_total_ms", Kind::F64),
    ("delta_bubble_total_ms", Kind::F64),
];

/// The sites table of a snapshot diff: `sites_at_peak` and `sites_at_end` of every device.
pub const SITE_COLUMNS: &[(&str, Kind)] = &[
    ("device", Kind::I64),
    ("b_device", Kind::I64),
    ("at", Kind::Text),
    ("site", Kind::Text),
    ("link", Kind::Text),
    ("a_bytes", Kind::I64),
    ("b_bytes", Kind::I64),
    ("delta_bytes", Kind::I64),
    ("change", Kind::Text),
];

fn int(n: impl TryInto<i64>) -> Cell<'static> {
    n.try_into().map_or(Cell::Null, Cell::I64)
}

fn f(x: Option<f64>) -> Cell<'static> {
    x.map_or(Cell::Null, Cell::F64)
}

fn text(s: &str) -> Cell<'_> {
    Cell::Str(Cow::Borrowed(s))
}

/// The lines of [`OPS_COLUMNS`], in the JSON's order (largest |Δ time| first).
pub fn ops_lines(j: &TraceDiffJson) -> Lines<'_> {
    j.ops
        .iter()
        .map(|o| {
            vec![
                text(&o.name),
                int(o.a_count),
                int(o.b_count),
                Cell::I64(o.delta_count),
                Cell::F64(o.a_time_us),
                Cell::F64(o.b_time_us),
                Cell::F64(o.delta_time_us),
                text(o.change),
            ]
        })
        .collect()
}

/// The lines of [`STEP_COLUMNS`], in the JSON's order.
pub fn step_lines(j: &TraceDiffJson) -> Lines<'_> {
    j.steps
        .iter()
        .map(|s| {
            vec![
                text(&s.step_id),
                s.b_step_id.as_deref().map_or(Cell::Null, text),
                f(s.a_service_ms),
                f(s.b_service_ms),
                f(s.delta_service_ms),
                f(s.a_device_busy_union_ms),
                f(s.b_device_busy_union_ms),
                f(s.delta_device_busy_union_ms),
                f(s.a_underfeed_ms),
                f(s.b_underfeed_ms),
                f(s.delta_underfeed_ms),
                s.a_bubble_count.map_or(Cell::Null, int),
                s.b_bubble_count.map_or(Cell::Null, int),
                s.delta_bubble_count.map_or(Cell::Null, Cell::I64),
                f(s.a_bubble_total_ms),
                f(s.b_bubble_total_ms),
                f(s.delta_bubble_total_ms),
            ]
        })
        .collect()
}

/// The lines of [`SITE_COLUMNS`]: per device (in the JSON's order), its sites at the peak
/// (`at` = `peak`), then at the end (`end`), each in the JSON's order.
pub fn site_lines(j: &DiffJson) -> Lines<'_> {
    let mut out = Vec::new();
    for d in &j.devices {
        let parts: [(&str, &[SiteDeltaJson]); 2] =
            [("peak", &d.sites_at_peak), ("end", &d.sites_at_end)];
        for (at, sites) in parts {
            for s in sites {
                out.push(vec![
                    Cell::I64(i64::from(d.device)),
                    d.b_device.map_or(Cell::Null, |x| Cell::I64(i64::from(x))),
                    text(at),
                    text(&s.site),
                    s.link.as_deref().map_or(Cell::Null, text),
                    int(s.a_bytes),
                    int(s.b_bytes),
                    Cell::I64(s.delta_bytes),
                    text(s.change),
                ]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::table_csv::{names, write_csv};

    #[test]
    fn the_columns_match_the_lines() {
        let j = DiffJson {
            kind: "snapshot",
            a: crate::report::snapshot_diff::SideJson {
                file: "a".into(),
                bytes: 1,
            },
            b: crate::report::snapshot_diff::SideJson {
                file: "b".into(),
                bytes: 1,
            },
            curve: "active",
            devices: Vec::new(),
        };
        let mut out = Vec::new();
        write_csv(&names(SITE_COLUMNS), site_lines(&j).into_iter(), &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "device,b_device,at,site,link,a_bytes,b_bytes,delta_bytes,change\n"
        );
    }
}
