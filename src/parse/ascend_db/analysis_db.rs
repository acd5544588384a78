//! `analysis.db` → the `step_trace_time.csv` rows ([`StepTraceRow`]) (ascend-db.md §6); its
//! communication tables are read by [`super::comm`].

use std::ops::ControlFlow;

use super::schema::{real, text, Select};
use super::{scan, DbFile};
use crate::base::Problems;
use crate::model::side_tables::StepTraceRow;
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
