//! The communication document (`proflens comm --json`, `comm.json` of `analyze --out-dir`) and
//! its CSV tables (`--csv-dir`), from one [`CommReport`] (docs/rules/communication.md §7).
//!
//! Every table is one list of objects per row with fixed keys; the CSV of a table has the same
//! columns in the same order. Both, and the table's Arrow frame, are written from one list of
//! typed cells per table ([`Table`], `report::table_csv`); floats keep the shortest digits
//! (`Cell::Short`). Units: decimal MB, ms, GB/s = MB/ms for Ascend rows; MiB, µs,
//! GiB/s for the GPU `collectives`. Non-finite numbers are `null`.

use std::borrow::Cow;

use serde_json::json;

use super::frame::{Cell, Frame, Kind};
use super::table_csv::{frame_of, json_text, write_csv};
use crate::analysis::comm::{CommReport, MatrixRow};

/// One table: its name, typed columns and rows of cells: the one list the CSV, the JSON
/// document and the Arrow frame are written from.
pub struct Table<'a> {
    /// The document key and CSV file stem.
    pub name: &'static str,
    /// Column names and frame kinds.
    pub columns: &'static [(&'static str, Kind)],
    /// Rows, one cell per column.
    pub rows: Vec<Vec<Cell<'a>>>,
}

impl Table<'_> {
    /// The column names.
    pub fn names(&self) -> Vec<&'static str> {
        self.columns.iter().map(|c| c.0).collect()
    }

    /// The typed frame (the Arrow output, the Python DataFrames).
    pub fn frame(&self) -> Frame {
        frame_of(self.columns, self.rows.iter().cloned())
    }
}

/// A float cell: the shortest digits, `null` when not finite.
fn num<'a>(x: f64) -> Cell<'a> {
    if x.is_finite() {
        Cell::Short(x)
    } else {
        Cell::Null
    }
}

fn opt<'a>(x: Option<f64>) -> Cell<'a> {
    x.map_or(Cell::Null, num)
}

fn text(s: &str) -> Cell<'_> {
    Cell::Str(Cow::Borrowed(s))
}

fn int<'a>(n: impl TryInto<i64>) -> Cell<'a> {
    n.try_into().map_or(Cell::Null, Cell::I64)
}

use Kind::{Bool as B, I64List as IL, Text as T, F64 as F, I64 as I};

const TIME: &[(&str, Kind)] = &[
    ("step", T),
    ("group", T),
    ("rank", I),
    ("n_ops", I),
    ("elapse_ms", F),
    ("transit_ms", F),
    ("wait_ms", F),
    ("sync_ms", F),
    ("idle_ms", F),
    ("wait_ratio", F),
    ("sync_ratio", F),
];

const BANDWIDTH: &[(&str, Kind)] = &[
    ("step", T),
    ("group", T),
    ("rank", I),
    ("transport", T),
    ("size_mb", F),
    ("time_ms", F),
    ("bandwidth_gbps", F),
    ("large_packet_ratio", F),
];

const MATRIX: &[(&str, Kind)] = &[
    ("step", T),
    ("group", T),
    ("src", I),
    ("dst", I),
    ("transport", T),
    ("size_mb", F),
    ("time_ms", F),
    ("bandwidth_gbps", F),
    ("mapped_from_metadata", B),
];

const MATRIX_BY_KIND: &[(&str, Kind)] = &[
    ("step", T),
    ("group", T),
    ("src", I),
    ("dst", I),
    ("transport", T),
    ("size_mb", F),
    ("time_ms", F),
    ("bandwidth_gbps", F),
    ("mapped_from_metadata", B),
    ("kind", T),
    ("op_name", T),
];

const DROPPED: &[(&str, Kind)] = &[
    ("step", T),
    ("group", T),
    ("kind", T),
    ("src_local", T),
    ("dst_local", T),
    ("rank", I),
    ("size_mb", F),
    ("time_ms", F),
    ("reason", T),
];

const SLOW_LINKS: &[(&str, Kind)] = &[
    ("name", T),
    ("count", I),
    ("mean_ns", F),
    ("std_ns", F),
    ("min_ns", F),
    ("q1_ns", F),
    ("median_ns", F),
    ("q3_ns", F),
    ("max_ns", F),
    ("sum_ns", F),
    ("offset_ratio", F),
    ("ops", T),
];

const SLOW_RANKS: &[(&str, Kind)] = &[
    ("rank", I),
    ("group", T),
    ("op", T),
    ("n", I),
    ("test", T),
    ("statistic", F),
    ("threshold", F),
    ("time_us", F),
    ("mean_us", F),
    ("start_us", F),
];

const MSI_SLOW_RANKS: &[(&str, Kind)] = &[
    ("step", T),
    ("group", T),
    ("fast_rank", I),
    ("fast_us", F),
    ("rank", I),
    ("time_us", F),
    ("diff_us", F),
    ("threshold_us", F),
    ("ops", T),
];

const PARTIAL: &[(&str, Kind)] = &[
    ("step", T),
    ("group", T),
    ("op", T),
    ("ranks", IL),
    ("missing", IL),
];

const COLLECTIVES: &[(&str, Kind)] = &[
    ("collective_id", T),
    ("collective", T),
    ("group_size", I),
    ("full_msg_mb", F),
    ("comm_latency_us", F),
    ("skew_start_us", F),
    ("skew_end_us", F),
    ("algo_bw_gbps", F),
    ("bus_bw_gbps", F),
];

fn matrix_row(m: &MatrixRow, kind: bool) -> Vec<Cell<'_>> {
    let mut v = vec![
        text(&m.step),
        text(&m.group),
        Cell::I64(m.src),
        Cell::I64(m.dst),
        text(&m.transport),
        num(m.size_mb),
        num(m.time_ms),
        num(m.bandwidth_gbps),
        Cell::Bool(m.mapped_from_metadata),
    ];
    if kind {
        v.push(text(&m.kind));
        v.push(text(&m.op_name));
    }
    v
}

/// The document keys of the tables, in document order.
pub const NAMES: [&str; 10] = [
    "time_summary",
    "bandwidth_summary",
    "matrix",
    "matrix_by_kind",
    "dropped_links",
    "slow_links",
    "slow_ranks",
    "msi_slow_ranks",
    "partial_ops",
    "collectives",
];

/// The ops of a slow rank as one text cell: `name:diff_us` joined by `;`.
pub fn msi_ops_text(ops: &[(String, f64)]) -> String {
    ops.iter()
        .map(|(n, d)| format!("{n}:{d}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// The tables of `rep`, in document order.
pub fn tables(rep: &CommReport) -> Vec<Table<'_>> {
    NAMES.iter().filter_map(|n| table(rep, n)).collect()
}

/// The table called `name` (one of [`NAMES`]), `None` for any other name. Only that table's
/// cells are built (the document is written one table at a time).
pub fn table<'a>(rep: &'a CommReport, name: &str) -> Option<Table<'a>> {
    let time = rep.time_summary.iter().map(|t| {
        vec![
            text(&t.step),
            text(&t.group),
            Cell::I64(t.rank),
            int(t.n_ops),
            num(t.elapse_ms),
            num(t.transit_ms),
            num(t.wait_ms),
            num(t.sync_ms),
            num(t.idle_ms),
            num(t.wait_ratio),
            num(t.sync_ratio),
        ]
    });
    let bandwidth = rep.bandwidth_summary.iter().map(|b| {
        vec![
            text(&b.step),
            text(&b.group),
            Cell::I64(b.rank),
            text(&b.transport),
            num(b.size_mb),
            num(b.time_ms),
            num(b.bandwidth_gbps),
            opt(b.large_packet_ratio),
        ]
    });
    let dropped = rep.dropped_links.iter().map(|d| {
        vec![
            text(&d.step),
            text(&d.group),
            text(&d.kind),
            text(&d.src_local),
            text(&d.dst_local),
            Cell::I64(d.rank),
            num(d.size_mb),
            num(d.time_ms),
            text(&d.reason),
        ]
    });
    let slow_links = rep.slow_links.iter().map(|s| {
        vec![
            text(&s.name),
            int(s.count),
            num(s.mean_ns),
            num(s.std_ns),
            num(s.min_ns),
            num(s.q1_ns),
            num(s.median_ns),
            num(s.q3_ns),
            num(s.max_ns),
            num(s.sum_ns),
            num(s.offset_ratio),
            Cell::Str(Cow::Owned(s.ops.join(";"))),
        ]
    });
    let slow_ranks = rep.slow_ranks.iter().map(|s| {
        vec![
            Cell::I64(s.rank),
            text(&s.group),
            text(&s.op),
            int(s.n),
            text(s.evidence.test),
            num(s.evidence.statistic),
            num(s.evidence.threshold),
            num(s.time_us),
            num(s.mean_us),
            num(s.start_us),
        ]
    });
    let msi = rep.msi_slow_ranks.iter().map(|m| {
        vec![
            text(&m.step),
            text(&m.group),
            Cell::I64(m.fast_rank),
            num(m.fast_us),
            Cell::I64(m.rank),
            num(m.time_us),
            num(m.diff_us),
            num(m.threshold_us),
            Cell::Str(Cow::Owned(msi_ops_text(&m.ops))),
        ]
    });
    let partial = rep.partial_ops.iter().map(|p| {
        vec![
            text(&p.step),
            text(&p.group),
            text(&p.op),
            Cell::Ints(p.ranks.clone()),
            Cell::Ints(p.missing.clone()),
        ]
    });
    let collectives = rep.collectives.iter().map(|c| {
        vec![
            text(&c.collective_id),
            text(&c.collective),
            Cell::I64(c.group_size),
            num(c.full_msg_mb),
            num(c.comm_latency_us),
            opt(c.skew_start_us),
            opt(c.skew_end_us),
            opt(c.algo_bw_gbps),
            opt(c.bus_bw_gbps),
        ]
    });
    fn t<'a>(
        name: &'static str,
        columns: &'static [(&'static str, Kind)],
        rows: Vec<Vec<Cell<'a>>>,
    ) -> Table<'a> {
        Table {
            name,
            columns,
            rows,
        }
    }
    Some(match name {
        "time_summary" => t(name_of(0), TIME, time.collect()),
        "bandwidth_summary" => t(name_of(1), BANDWIDTH, bandwidth.collect()),
        "matrix" => t(
            name_of(2),
            MATRIX,
            rep.matrix.iter().map(|m| matrix_row(m, false)).collect(),
        ),
        "matrix_by_kind" => t(
            name_of(3),
            MATRIX_BY_KIND,
            rep.matrix_by_kind
                .iter()
                .map(|m| matrix_row(m, true))
                .collect(),
        ),
        "dropped_links" => t(name_of(4), DROPPED, dropped.collect()),
        "slow_links" => t(name_of(5), SLOW_LINKS, slow_links.collect()),
        "slow_ranks" => t(name_of(6), SLOW_RANKS, slow_ranks.collect()),
        "msi_slow_ranks" => t(name_of(7), MSI_SLOW_RANKS, msi.collect()),
        "partial_ops" => t(name_of(8), PARTIAL, partial.collect()),
        "collectives" => t(name_of(9), COLLECTIVES, collectives.collect()),
        _ => return None,
    })
}

fn name_of(k: usize) -> &'static str {
    NAMES[k]
}

/// The JSON document: `mode`, `ranks`, `groups`, `slow_rank_ops_tested`, `slow_link_rows`,
/// `slow_link_rows_sized` (op rows the slow-link rule saw, and those with a data size), then every table as
/// a list of objects, keys in column order (written by hand: object keys keep their order).
pub fn to_json(rep: &CommReport, parity: bool) -> String {
    let text = |v: &serde_json::Value| serde_json::to_string(v).unwrap_or_else(|_| "null".into());
    let mut s = String::from("{\n");
    s.push_str(&format!(
        "  \"mode\": \"{}\",\n",
        if parity { "parity" } else { "default" }
    ));
    s.push_str(&format!("  \"ranks\": {},\n", text(&json!(rep.ranks))));
    s.push_str("  \"groups\": [");
    for (i, g) in rep.groups.iter().enumerate() {
        s.push_str(if i == 0 { "\n    " } else { ",\n    " });
        s.push_str(&format!(
            "{{\"group\": {}, \"section\": {}, \"id\": {}, \"name\": {}, \"global_ranks\": {}, \"present\": {}, \"missing\": {}}}",
            text(&json!(g.group)),
            text(&json!(g.section)),
            text(&json!(g.id)),
            text(&json!(g.name)),
            text(&json!(g.global_ranks)),
            text(&json!(g.present)),
            text(&json!(g.missing)),
        ));
    }
    s.push_str(if rep.groups.is_empty() {
        "],\n"
    } else {
        "\n  ],\n"
    });
    s.push_str(&format!(
        "  \"slow_rank_ops_tested\": {},\n  \"slow_link_rows\": {},\n  \"slow_link_rows_sized\": {}",
        rep.slow_rank_ops_tested, rep.slow_link_rows, rep.slow_link_rows_sized
    ));
    for t in NAMES.iter().filter_map(|n| table(rep, n)) {
        s.push_str(&format!(",\n  \"{}\": [", t.name));
        for (i, r) in t.rows.iter().enumerate() {
            s.push_str(if i == 0 { "\n    {" } else { ",\n    {" });
            for (j, ((c, _), v)) in t.columns.iter().zip(r).enumerate() {
                if j > 0 {
                    s.push_str(", ");
                }
                s.push_str(&format!("\"{c}\": {}", json_text(v)));
            }
            s.push('}');
        }
        s.push_str(if t.rows.is_empty() { "]" } else { "\n  ]" });
    }
    s.push_str("\n}\n");
    s
}

/// The CSV text of one table (header, one line per row; strings unquoted unless needed).
pub fn to_csv(t: &Table<'_>) -> String {
    let mut out = Vec::new();
    let _ = write_csv(&t.names(), t.rows.iter().cloned(), &mut out);
    String::from_utf8(out).unwrap_or_default()
}
