//! `analysis.db` → the `step_trace_time.csv` rows ([`StepTraceRow`]) and the
//! `communication.json` ops ([`CommOp`]) (ascend-db.md §6).

use std::ops::ControlFlow;

use rustc_hash::FxHashMap as HashMap;

use super::schema::{real, text, Select};
use super::{scan, DbFile};
use crate::base::Problems;
use crate::model::side_tables::{CommOp, StepTraceRow};
use crate::parse::number::parse_time_ns;

/// A µs value as the text export writes it (Python `repr`, the shortest text that reads back
/// as the same double), in exact ns, as the CSV reader parses that text.
fn us_to_ns(v: f64) -> Option<i64> {
    if !v.is_finite() {
        return None;
    }
    parse_time_ns(&format!("{v}")).ok().map(|t| t.ns)
}

/// `StepTraceTime` rows, in table order; `None` when the table is missing (not a problem:
/// the text export may have no `step_trace_time.csv` either).
pub fn step_trace(f: &DbFile<'_>, problems: &mut Problems) -> Option<Vec<StepTraceRow>> {
    const T: &str = "StepTraceTime";
    if f.schema.lacks(T, &["step"]).is_some() {
        return None;
    }
    let mut q = Select::new(&f.schema, T);
    let step = q.col("step");
    let cols = [
        q.col("computing"),
        q.col("communication_not_overlapped"),
        q.col("communication"),
        q.col("free"),
        q.col("stage"),
        q.col("bubble"),
        q.col("preparing"),
    ];
    let sql = q.sql("ORDER BY t.rowid");
    let mut out = Vec::new();
    let _ = scan(
        f,
        T,
        &sql,
        problems,
        &mut || ControlFlow::Continue(()),
        &mut |id, r| {
            let v = |i: usize| real(r, cols[i]).and_then(us_to_ns);
            out.push(StepTraceRow {
                step: text(r, step),
                line: u64::try_from(id).unwrap_or(0).saturating_add(1),
                computing_ns: v(0),
                comm_not_overlapped_ns: v(1),
                communication_ns: v(2),
                free_ns: v(3),
                stage_ns: v(4),
                bubble_ns: v(5),
                preparing_ns: v(6),
            });
        },
    );
    Some(out)
}

type OpKey = (String, String, String, String);

/// `CommAnalyzerTime` ops with their `CommAnalyzerBandwidth` transports, ordered as the
/// `communication.json` reader gives them (step key, then `collective` before `p2p`, then the
/// `op@group` key); `None` when the table is missing.
pub fn comm_ops(f: &DbFile<'_>, problems: &mut Problems) -> Option<Vec<CommOp>> {
    const T: &str = "CommAnalyzerTime";
    const B: &str = "CommAnalyzerBandwidth";
    if f.schema
        .lacks(T, &["hccl_op_name", "start_timestamp", "step", "type"])
        .is_some()
    {
        return None;
    }
    // Transports: the first row of each (op, group, step, type, transport), as the JSON
    // holds one size and bandwidth per transport.
    let mut bw: HashMap<OpKey, Vec<(String, f64, f64)>> = HashMap::default();
    if f.schema
        .lacks(
            B,
            &[
                "hccl_op_name",
                "group_name",
                "transport_type",
                "transit_size",
                "bandwidth",
                "step",
                "type",
            ],
        )
        .is_none()
    {
        let mut q = Select::new(&f.schema, B);
        let c = [
            q.col("hccl_op_name"),
            q.col("group_name"),
            q.col("step"),
            q.col("type"),
            q.col("transport_type"),
            q.col("transit_size"),
            q.col("bandwidth"),
        ];
        let sql = q.sql("ORDER BY t.rowid");
        let _ = scan(
            f,
            B,
            &sql,
            problems,
            &mut || ControlFlow::Continue(()),
            &mut |_, r| {
                let key = (text(r, c[0]), text(r, c[1]), text(r, c[2]), text(r, c[3]));
                let tr = text(r, c[4]);
                let v = bw.entry(key).or_default();
                if !v.iter().any(|(t, _, _)| *t == tr) {
                    v.push((
                        tr,
                        real(r, c[5]).unwrap_or(0.0),
                        real(r, c[6]).unwrap_or(0.0),
                    ));
                }
            },
        );
    }
    let mut q = Select::new(&f.schema, T);
    let c = [
        q.col("hccl_op_name"),
        q.col("group_name"),
        q.col("step"),
        q.col("type"),
        q.col("start_timestamp"),
        q.col("elapse_time"),
        q.col("transit_time"),
        q.col("wait_time"),
        q.col("synchronization_time"),
        q.col("idle_time"),
    ];
    let sql = q.sql("ORDER BY t.rowid");
    let mut out = Vec::new();
    let _ = scan(
        f,
        T,
        &sql,
        problems,
        &mut || ControlFlow::Continue(()),
        &mut |_, r| {
            let Some(start_us) = real(r, c[4]) else {
                return;
            };
            let g = |i: usize| real(r, c[i]).unwrap_or(0.0);
            let (transit, wait, sync) = (g(6), g(7), g(8));
            let ratio = |x: f64| {
                if x + transit == 0.0 {
                    0.0
                } else {
                    super::round_to(x / (x + transit), 4)
                }
            };
            let key = (text(r, c[0]), text(r, c[1]), text(r, c[2]), text(r, c[3]));
            let tr = bw.get(&key).cloned().unwrap_or_default();
            let size = |k: &str| {
                tr.iter()
                    .find(|(t, _, _)| t == k)
                    .map_or(0.0, |(_, s, _)| *s)
            };
            // The JSON always lists SDMA (zero when unused), so it is the on-chip size.
            let onchip = size("SDMA");
            let mut live: Vec<&(String, f64, f64)> =
                tr.iter().filter(|(_, s, _)| *s != 0.0).collect();
            live.sort_by(|a, b| a.0.cmp(&b.0));
            out.push(CommOp {
                step_key: key.2.clone(),
                group_kind: key.3.clone(),
                collective_name: key.0.clone(),
                group_name: key.1.clone(),
                start_ns: (start_us * 1000.0).round() as i64,
                elapse_ms: g(5),
                wait_ms: wait,
                wait_ratio: ratio(wait),
                sync_ms: sync,
                sync_ratio: ratio(sync),
                transit_ms: transit,
                idle_ms: g(9),
                message_size_bytes: (onchip + size("RDMA")) * 1_048_576.0,
                transport_types: live.iter().map(|t| t.0.clone()).collect(),
                bandwidth_gbps: live.iter().map(|t| (t.0.clone(), t.2)).collect(),
            });
        },
    );
    let kind_rank = |k: &str| if k == "collective" { 0 } else { 1 };
    crate::base::sort::sort_by_key(&mut out, |o| {
        (
            o.step_key.clone(),
            kind_rank(&o.group_kind),
            format!("{}@{}", o.collective_name, o.group_name),
        )
    });
    Some(out)
}
