//! The per-rank table of a cluster summary (docs/cluster-summary.md §2, §4.1; docs/frames.md
//! §3.6): one line per `ranks[i]`, the rank's own scalar fields (identity, status, its Anomaly
//! and Memory summaries, problem counts) and its `cross_rank` row's `robust_z` / `slow` (null
//! when the rank is not in the cross-rank table). Values are read from the summary as written:
//! nothing is recomputed. The cells are defined here once and rendered by
//! [`crate::report::table_csv`] as CSV and as a frame.

use std::borrow::Cow;
use std::io::{self, Write};

use crate::protocol::cluster::{ClusterSummary, CrossRankRow, RankSummary};
use crate::report::frame::{Cell, Frame, Kind};
use crate::report::table_csv::{frame_of, names, write_csv};

/// The columns of the ranks table, with their frame types.
pub const RANK_COLUMNS: &[(&str, Kind)] = &[
    ("rank_index", Kind::I64),
    ("target", Kind::Text),
    ("kind", Kind::Text),
    ("rank_id", Kind::I64),
    ("role", Kind::Text),
    ("rank_dir", Kind::Text),
    ("status", Kind::Text),
    ("bytes_read", Kind::I64),
    ("analysis_s", Kind::F64),
    ("step_count", Kind::I64),
    ("service_ms_avg", Kind::F64),
    ("busy_union_ms_avg", Kind::F64),
    ("underfeed_ratio_avg", Kind::F64),
    ("comm_total_ms", Kind::F64),
    ("comm_wait_ratio_weighted", Kind::F64),
    ("bubble_count_avg", Kind::F64),
    ("dominant_idle_pattern", Kind::Text),
    ("dominant_anomaly_tags", Kind::TextList),
    ("robust_z", Kind::F64),
    ("slow", Kind::Bool),
    ("memory_component", Kind::Text),
    ("peak_allocated_mb", Kind::F64),
    ("peak_time_ns", Kind::I64),
    ("reserved_at_peak_mb", Kind::F64),
    ("max_reserved_mb", Kind::F64),
    ("live_kb", Kind::F64),
    ("snapshots", Kind::I64),
    ("errors", Kind::I64),
    ("warnings", Kind::I64),
];

fn int(x: impl TryInto<i64>) -> Cell<'static> {
    x.try_into().map(Cell::I64).unwrap_or(Cell::Null)
}

fn f64_of(x: Option<f64>) -> Cell<'static> {
    x.map(Cell::F64).unwrap_or(Cell::Null)
}

fn text(s: &str) -> Cell<'_> {
    Cell::Str(Cow::Borrowed(s))
}

/// The snake-case name serde writes for an enum value.
fn wire_name<T: serde::Serialize>(v: &T) -> Cell<'static> {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => Cell::Str(Cow::Owned(s)),
        _ => Cell::Null,
    }
}

/// The cells of rank `i` ([`RANK_COLUMNS`]), with its cross-rank row when it has one.
pub fn rank_cells<'a>(i: usize, r: &'a RankSummary, x: Option<&CrossRankRow>) -> Vec<Cell<'a>> {
    let a = r.anomaly.as_ref();
    let m = r.memory.as_ref();
    vec![
        int(i),
        text(&r.target),
        wire_name(&r.kind),
        r.rank_id.map(Cell::I64).unwrap_or(Cell::Null),
        r.role.as_deref().map(text).unwrap_or(Cell::Null),
        text(&r.rank_dir),
        wire_name(&r.status),
        int(r.bytes_read),
        Cell::F64(r.analysis_s),
        a.map(|a| int(a.step_count)).unwrap_or(Cell::Null),
        f64_of(a.map(|a| a.service_ms_avg)),
        f64_of(a.map(|a| a.busy_union_ms_avg)),
        f64_of(a.map(|a| a.underfeed_ratio_avg)),
        f64_of(a.map(|a| a.comm_total_ms)),
        f64_of(a.and_then(|a| a.comm_wait_ratio_weighted)),
        f64_of(a.map(|a| a.bubble_count_avg)),
        a.map(|a| text(&a.dominant_idle_pattern))
            .unwrap_or(Cell::Null),
        a.map(|a| {
            Cell::List(
                a.dominant_anomaly_tags
                    .iter()
                    .map(|t| Cow::Borrowed(t.as_str()))
                    .collect(),
            )
        })
        .unwrap_or(Cell::Null),
        f64_of(x.and_then(|x| x.robust_z)),
        x.map(|x| Cell::Bool(x.slow)).unwrap_or(Cell::Null),
        m.map(|m| text(&m.component)).unwrap_or(Cell::Null),
        f64_of(m.map(|m| m.peak_allocated_mb)),
        m.map(|m| Cell::I64(m.peak_time_ns)).unwrap_or(Cell::Null),
        f64_of(m.and_then(|m| m.reserved_at_peak_mb)),
        f64_of(m.and_then(|m| m.max_reserved_mb)),
        f64_of(m.map(|m| m.live_kb)),
        int(r.snapshots.len()),
        int(r.problem_counts.errors),
        int(r.problem_counts.warnings),
    ]
}

fn lines(s: &ClusterSummary) -> impl Iterator<Item = Vec<Cell<'_>>> {
    let mut cross: Vec<Option<&CrossRankRow>> = vec![None; s.ranks.len()];
    for x in &s.cross_rank {
        if let Some(slot) = usize::try_from(x.rank_index)
            .ok()
            .and_then(|i| cross.get_mut(i))
        {
            slot.get_or_insert(x);
        }
    }
    s.ranks
        .iter()
        .enumerate()
        .map(move |(i, r)| rank_cells(i, r, cross[i]))
}

/// Writes the ranks of `s` as CSV ([`RANK_COLUMNS`]), in `ranks` order.
///
/// Errors: only those of `out`.
pub fn write_ranks(s: &ClusterSummary, out: &mut dyn Write) -> io::Result<()> {
    write_csv(&names(RANK_COLUMNS), lines(s), out)
}

/// The ranks of `s` as a typed [`Frame`].
pub fn ranks_frame(s: &ClusterSummary) -> Frame {
    frame_of(RANK_COLUMNS, lines(s))
}
