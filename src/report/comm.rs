//! The communication document (`proflens comm --json`, `comm.json` of `analyze --out-dir`) and
//! its CSV tables (`--csv-dir`), from one [`CommReport`] (docs/rules/communication.md §7).
//!
//! Every table is one list of objects per row with fixed keys; the CSV of a table has the same
//! columns in the same order. Units: decimal MB, ms, GB/s = MB/ms for Ascend rows; MiB, µs,
//! GiB/s for the GPU `collectives`. Non-finite numbers are `null`.

use serde_json::{json, Value};

use crate::analysis::comm::CommReport;

/// One table: its name, columns, rows (one value per column).
pub struct Table {
    /// The document key and CSV file stem.
    pub name: &'static str,
    /// Column names.
    pub columns: &'static [&'static str],
    /// Rows.
    pub rows: Vec<Vec<Value>>,
}

fn num(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

fn opt(x: Option<f64>) -> Value {
    x.map_or(Value::Null, num)
}

/// The tables of `rep`, in document order.
pub fn tables(rep: &CommReport) -> Vec<Table> {
    let mut out = Vec::new();
    out.push(Table {
        name: "time_summary",
        columns: &[
            "step",
            "group",
            "rank",
            "n_ops",
            "elapse_ms",
            "transit_ms",
            "wait_ms",
            "sync_ms",
            "idle_ms",
            "wait_ratio",
            "sync_ratio",
        ],
        rows: rep
            .time_summary
            .iter()
            .map(|t| {
                vec![
                    json!(t.step),
                    json!(t.group),
                    json!(t.rank),
                    json!(t.n_ops),
                    num(t.elapse_ms),
                    num(t.transit_ms),
                    num(t.wait_ms),
                    num(t.sync_ms),
                    num(t.idle_ms),
                    num(t.wait_ratio),
                    num(t.sync_ratio),
                ]
            })
            .collect(),
    });
    out.push(Table {
        name: "bandwidth_summary",
        columns: &[
            "step",
            "group",
            "rank",
            "transport",
            "size_mb",
            "time_ms",
            "bandwidth_gbps",
            "large_packet_ratio",
        ],
        rows: rep
            .bandwidth_summary
            .iter()
            .map(|b| {
                vec![
                    json!(b.step),
                    json!(b.group),
                    json!(b.rank),
                    json!(b.transport),
                    num(b.size_mb),
                    num(b.time_ms),
                    num(b.bandwidth_gbps),
                    opt(b.large_packet_ratio),
                ]
            })
            .collect(),
    });
    let matrix_row = |m: &crate::analysis::comm::MatrixRow, kind: bool| {
        let mut v = vec![
            json!(m.step),
            json!(m.group),
            json!(m.src),
            json!(m.dst),
            json!(m.transport),
            num(m.size_mb),
            num(m.time_ms),
            num(m.bandwidth_gbps),
            json!(m.mapped_from_metadata),
        ];
        if kind {
            v.push(json!(m.kind));
            v.push(json!(m.op_name));
        }
        v
    };
    const MATRIX: &[&str] = &[
        "step",
        "group",
        "src",
        "dst",
        "transport",
        "size_mb",
        "time_ms",
        "bandwidth_gbps",
        "mapped_from_metadata",
    ];
    out.push(Table {
        name: "matrix",
        columns: MATRIX,
        rows: rep.matrix.iter().map(|m| matrix_row(m, false)).collect(),
    });
    out.push(Table {
        name: "matrix_by_kind",
        columns: &[
            "step",
            "group",
            "src",
            "dst",
            "transport",
            "size_mb",
            "time_ms",
            "bandwidth_gbps",
            "mapped_from_metadata",
            "kind",
            "op_name",
        ],
        rows: rep
            .matrix_by_kind
            .iter()
            .map(|m| matrix_row(m, true))
            .collect(),
    });
    out.push(Table {
        name: "dropped_links",
        columns: &[
            "step",
            "group",
            "kind",
            "src_local",
            "dst_local",
            "rank",
            "size_mb",
            "time_ms",
            "reason",
        ],
        rows: rep
            .dropped_links
            .iter()
            .map(|d| {
                vec![
                    json!(d.step),
                    json!(d.group),
                    json!(d.kind),
                    json!(d.src_local),
                    json!(d.dst_local),
                    json!(d.rank),
                    num(d.size_mb),
                    num(d.time_ms),
                    json!(d.reason),
                ]
            })
            .collect(),
    });
    out.push(Table {
        name: "slow_links",
        columns: &[
            "name",
            "count",
            "mean_ns",
            "std_ns",
            "min_ns",
            "q1_ns",
            "median_ns",
            "q3_ns",
            "max_ns",
            "sum_ns",
            "offset_ratio",
            "ops",
        ],
        rows: rep
            .slow_links
            .iter()
            .map(|s| {
                vec![
                    json!(s.name),
                    json!(s.count),
                    num(s.mean_ns),
                    num(s.std_ns),
                    num(s.min_ns),
                    num(s.q1_ns),
                    num(s.median_ns),
                    num(s.q3_ns),
                    num(s.max_ns),
                    num(s.sum_ns),
                    num(s.offset_ratio),
                    json!(s.ops.join(";")),
                ]
            })
            .collect(),
    });
    out.push(Table {
        name: "slow_ranks",
        columns: &[
            "rank",
            "group",
            "op",
            "n",
            "test",
            "statistic",
            "threshold",
            "time_us",
            "mean_us",
            "start_us",
        ],
        rows: rep
            .slow_ranks
            .iter()
            .map(|s| {
                vec![
                    json!(s.rank),
                    json!(s.group),
                    json!(s.op),
                    json!(s.n),
                    json!(s.evidence.test),
                    num(s.evidence.statistic),
                    num(s.evidence.threshold),
                    num(s.time_us),
                    num(s.mean_us),
                    num(s.start_us),
                ]
            })
            .collect(),
    });
    out.push(Table {
        name: "partial_ops",
        columns: &["step", "group", "op", "ranks", "missing"],
        rows: rep
            .partial_ops
            .iter()
            .map(|p| {
                vec![
                    json!(p.step),
                    json!(p.group),
                    json!(p.op),
                    json!(p.ranks),
                    json!(p.missing),
                ]
            })
            .collect(),
    });
    out.push(Table {
        name: "collectives",
        columns: &[
            "collective_id",
            "collective",
            "group_size",
            "full_msg_mb",
            "comm_latency_us",
            "skew_start_us",
            "skew_end_us",
            "algo_bw_gbps",
            "bus_bw_gbps",
        ],
        rows: rep
            .collectives
            .iter()
            .map(|c| {
                vec![
                    json!(c.collective_id),
                    json!(c.collective),
                    json!(c.group_size),
                    num(c.full_msg_mb),
                    num(c.comm_latency_us),
                    num(c.skew_start_us),
                    num(c.skew_end_us),
                    opt(c.algo_bw_gbps),
                    opt(c.bus_bw_gbps),
                ]
            })
            .collect(),
    });
    out
}

/// The JSON document: `mode`, `ranks`, `groups`, `slow_rank_ops_tested`, then every table as
/// a list of objects, keys in column order (written by hand: object keys keep their order).
pub fn to_json(rep: &CommReport, parity: bool) -> String {
    let text = |v: &Value| serde_json::to_string(v).unwrap_or_else(|_| "null".into());
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
        "  \"slow_rank_ops_tested\": {}",
        rep.slow_rank_ops_tested
    ));
    for t in tables(rep) {
        s.push_str(&format!(",\n  \"{}\": [", t.name));
        for (i, r) in t.rows.iter().enumerate() {
            s.push_str(if i == 0 { "\n    {" } else { ",\n    {" });
            for (j, (c, v)) in t.columns.iter().zip(r).enumerate() {
                if j > 0 {
                    s.push_str(", ");
                }
                s.push_str(&format!("\"{c}\": {}", text(v)));
            }
            s.push('}');
        }
        s.push_str(if t.rows.is_empty() { "]" } else { "\n  ]" });
    }
    s.push_str("\n}\n");
    s
}

/// The CSV text of one table (header, one line per row; strings unquoted unless needed).
pub fn to_csv(t: &Table) -> String {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let _ = w.write_record(t.columns);
    for r in &t.rows {
        let cells: Vec<String> = r
            .iter()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            })
            .collect();
        let _ = w.write_record(&cells);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
