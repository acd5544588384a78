//! The structure breakdown of every rank (anomaly.md §4.2, §4.4; docs/frames.md §3.8) as lines
//! of [`Cell`]s for the CSV and the frame (`report::table_csv`): one line per structure of
//! every step, the scalar fields of the `structures[]` objects of `proflens anomaly --out`
//! ([`StructureJson`]) with the rank in front, the `block` and `side` parts flattened to
//! `block_*` / `side_*` columns (their kernel lists left to the JSON). Formatting only.

use std::borrow::Cow;

use super::anomaly_json::wire::{PartJson, StructureJson};
use super::frame::{Cell, Kind};

/// One rank's structures with the rank.
pub struct StructureRank<'a> {
    /// Rank id (null when unknown).
    pub rank_id: Option<i64>,
    /// Rank folder or trace path.
    pub rank_dir: &'a str,
    /// Its `structures[]`.
    pub structures: &'a [StructureJson],
}

/// The scalar columns of a part, after its prefix.
const PART: &[(&str, Kind)] = &[
    ("kernel_count", Kind::I64),
    ("dominant_task_type", Kind::Text),
    ("dominant_stream", Kind::Text),
    ("wait_heavy_count", Kind::I64),
    ("wall_ms", Kind::F64),
    ("busy_union_ms", Kind::F64),
    ("kernel_sum_ms", Kind::F64),
    ("total_cost_ms", Kind::F64),
    ("internal_bubble_total_ms", Kind::F64),
    ("largest_internal_bubble_ms", Kind::F64),
    ("bubble_count", Kind::I64),
];

/// The columns before the parts.
const HEAD: &[(&str, Kind)] = &[
    ("rank_id", Kind::I64),
    ("rank_dir", Kind::Text),
    ("step_id", Kind::Text),
    ("structure_id", Kind::Text),
    ("structure_type", Kind::Text),
    ("kernel_count", Kind::I64),
    ("start_us", Kind::TimeNs),
    ("end_us", Kind::TimeNs),
    ("wall_ms", Kind::F64),
    ("device_busy_union_ms", Kind::F64),
    ("busy_union_ms", Kind::F64),
    ("kernel_sum_ms", Kind::F64),
    ("total_cost_ms", Kind::F64),
    ("ai_core_pct", Kind::F64),
    ("ai_cpu_pct", Kind::F64),
    ("hccl_pct", Kind::F64),
    ("structure_share", Kind::F64),
    ("prelaunch_gap_ms", Kind::F64),
    ("tail_gap_ms", Kind::F64),
    ("internal_bubble_total_ms", Kind::F64),
    ("largest_internal_bubble_ms", Kind::F64),
    ("bubble_count", Kind::I64),
    ("inter_structure_gap_ms", Kind::F64),
    ("opens_with_gap", Kind::Bool),
];

/// The columns after the parts.
const TAIL: &[(&str, Kind)] = &[
    ("block_side_gap_ms", Kind::F64),
    ("comm_overlap_ratio", Kind::F64),
];

/// The columns: [`HEAD`], `block_*` and `side_*` of [`PART`], [`TAIL`] (owned names).
pub fn columns() -> Vec<(String, Kind)> {
    let mut out: Vec<(String, Kind)> = HEAD.iter().map(|&(n, k)| (n.to_string(), k)).collect();
    for prefix in ["block", "side"] {
        out.extend(PART.iter().map(|&(n, k)| (format!("{prefix}_{n}"), k)));
    }
    out.extend(TAIL.iter().map(|&(n, k)| (n.to_string(), k)));
    out
}

fn count(n: usize) -> Cell<'static> {
    i64::try_from(n).map_or(Cell::Null, Cell::I64)
}

fn part<'a>(p: &'a PartJson, c: &mut Vec<Cell<'a>>) {
    c.extend([
        count(p.kernel_count),
        Cell::Str(Cow::Borrowed(p.dominant_task_type.as_str())),
        Cell::Str(Cow::Borrowed(p.dominant_stream.as_str())),
        count(p.wait_heavy_count),
        Cell::F64(p.wall_ms),
        Cell::F64(p.busy_union_ms),
        Cell::F64(p.kernel_sum_ms),
        Cell::F64(p.total_cost_ms),
        Cell::F64(p.internal_bubble_total_ms),
        Cell::F64(p.largest_internal_bubble_ms),
        count(p.bubble_count),
    ]);
}

/// The lines of [`columns`]: every structure of every rank, in the JSON's order.
pub fn lines<'a>(ranks: &[StructureRank<'a>]) -> Vec<Vec<Cell<'a>>> {
    ranks
        .iter()
        .flat_map(|r| {
            r.structures.iter().map(move |s| {
                let mut c = vec![
                    r.rank_id.map_or(Cell::Null, Cell::I64),
                    Cell::Str(Cow::Borrowed(r.rank_dir)),
                    Cell::Str(Cow::Borrowed(s.step_id.as_str())),
                    Cell::Str(Cow::Borrowed(s.structure_id.as_str())),
                    Cell::Str(Cow::Borrowed(s.structure_type.as_str())),
                    count(s.kernel_count),
                    Cell::Exact(s.start_us.0, 3),
                    Cell::Exact(s.end_us.0, 3),
                    Cell::F64(s.wall_ms),
                    Cell::F64(s.device_busy_union_ms),
                    Cell::F64(s.busy_union_ms),
                    Cell::F64(s.kernel_sum_ms),
                    Cell::F64(s.total_cost_ms),
                    Cell::F64(s.ai_core_pct),
                    Cell::F64(s.ai_cpu_pct),
                    Cell::F64(s.hccl_pct),
                    Cell::F64(s.structure_share),
                    Cell::F64(s.prelaunch_gap_ms),
                    Cell::F64(s.tail_gap_ms),
                    Cell::F64(s.internal_bubble_total_ms),
                    Cell::F64(s.largest_internal_bubble_ms),
                    count(s.bubble_count),
                    Cell::F64(s.inter_structure_gap_ms),
                    Cell::Bool(s.opens_with_gap),
                ];
                part(&s.block, &mut c);
                part(&s.side, &mut c);
                c.push(Cell::F64(s.block_side_gap_ms));
                c.push(s.comm_overlap_ratio.map_or(Cell::Null, Cell::F64));
                c
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_columns_are_the_head_both_parts_and_the_tail() {
        let c = columns();
        assert_eq!(c.len(), HEAD.len() + 2 * PART.len() + TAIL.len());
        assert_eq!(c[HEAD.len()].0, "block_kernel_count");
        assert_eq!(c[HEAD.len() + PART.len()].0, "side_kernel_count");
        assert_eq!(c.last().unwrap().0, "comm_overlap_ratio");
    }
}
