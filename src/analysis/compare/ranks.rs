//! Runs with many ranks side by side (runs): one row per rank id of either
//! side with each side's cross-rank figures (anomaly.md §13.4, [`row_of`]: mean step service,
//! busy union, underfeed ratio, bubbles per step, communication) and the PTA allocator peak
//! (ascend-memory.md §9.6), and which ranks changed most.
//!
//! Ranks are matched by rank id; ranks whose id is unknown are matched in order among
//! themselves. "Changed most" orders the ranks present on both sides by |Δ mean step service|
//! descending (ties: the larger |Δ peak allocated|, then rank order).

use crate::analysis::anomaly::cross_rank::{row_of, RankRow};
use crate::analysis::anomaly::result::AnomalyResult;

/// What the rank table reads of one rank.
#[derive(Clone, Copy)]
pub struct RankFigures<'a> {
    /// Rank id, when known.
    pub rank_id: Option<i64>,
    /// Its steps-and-bubbles result.
    pub result: &'a AnomalyResult,
    /// Peak allocated of its main allocator pool (MiB), when it has memory events.
    pub peak_allocated_mb: Option<f64>,
}

/// One side of one rank.
#[derive(Clone, Debug, PartialEq)]
pub struct RankCell {
    /// The §13.4 row (`robust_z` / `slow` not set: they compare ranks of one run).
    pub row: RankRow,
    /// Peak allocated, MiB.
    pub peak_allocated_mb: Option<f64>,
}

/// One rank on both sides.
#[derive(Clone, Debug, PartialEq)]
pub struct RankPair {
    /// Rank id (`None`: unknown on both sides).
    pub rank_id: Option<i64>,
    /// Side A.
    pub a: Option<RankCell>,
    /// Side B.
    pub b: Option<RankCell>,
}

impl RankPair {
    /// B − A of the mean step service, ms (both sides present).
    pub fn delta_service_ms(&self) -> Option<f64> {
        Some(self.b.as_ref()?.row.service_ms_avg - self.a.as_ref()?.row.service_ms_avg)
    }
    /// B − A of the peak allocated, MiB (both sides with memory events).
    pub fn delta_peak_mb(&self) -> Option<f64> {
        Some(self.b.as_ref()?.peak_allocated_mb? - self.a.as_ref()?.peak_allocated_mb?)
    }
}

/// The cell of one rank (its §13.4 row and peak).
pub fn cell(f: &RankFigures<'_>) -> RankCell {
    RankCell {
        row: row_of(f.rank_id.unwrap_or(-1), f.result),
        peak_allocated_mb: f.peak_allocated_mb,
    }
}

/// The rank table: known ids ascending, then the unknown ones in order.
pub fn rank_table(a: &[RankFigures<'_>], b: &[RankFigures<'_>]) -> Vec<RankPair> {
    let cells = |s: &[RankFigures<'_>]| -> Vec<(Option<i64>, RankCell)> {
        s.iter().map(|f| (f.rank_id, cell(f))).collect()
    };
    rank_table_cells(&cells(a), &cells(b))
}

/// [`rank_table`] from each rank's id and cell (a cell may come from another worker, whose
/// rank's result is not at hand: the page's Compare tab on a run spread over its pool).
pub fn rank_table_cells(
    a: &[(Option<i64>, RankCell)],
    b: &[(Option<i64>, RankCell)],
) -> Vec<RankPair> {
    let mut ids: Vec<i64> = a.iter().chain(b).filter_map(|f| f.0).collect();
    ids.sort_unstable();
    ids.dedup();
    let find = |s: &[(Option<i64>, RankCell)], id: i64| {
        s.iter().find(|f| f.0 == Some(id)).map(|f| f.1.clone())
    };
    let mut out: Vec<RankPair> = ids
        .into_iter()
        .map(|id| RankPair {
            rank_id: Some(id),
            a: find(a, id),
            b: find(b, id),
        })
        .collect();
    let unknown = |s: &[(Option<i64>, RankCell)]| -> Vec<RankCell> {
        s.iter()
            .filter(|f| f.0.is_none())
            .map(|f| f.1.clone())
            .collect()
    };
    let (ua, ub) = (unknown(a), unknown(b));
    for k in 0..ua.len().max(ub.len()) {
        out.push(RankPair {
            rank_id: None,
            a: ua.get(k).cloned(),
            b: ub.get(k).cloned(),
        });
    }
    out
}

/// Indices into `pairs` of the ranks on both sides, the most changed first (module doc).
pub fn changed_most(pairs: &[RankPair]) -> Vec<usize> {
    let mut v: Vec<usize> = (0..pairs.len())
        .filter(|&i| pairs[i].delta_service_ms().is_some())
        .collect();
    let abs = |x: Option<f64>| x.map_or(0.0, f64::abs);
    crate::base::sort::sort_by(&mut v, |&i, &j| {
        abs(pairs[j].delta_service_ms())
            .total_cmp(&abs(pairs[i].delta_service_ms()))
            .then(abs(pairs[j].delta_peak_mb()).total_cmp(&abs(pairs[i].delta_peak_mb())))
            .then(i.cmp(&j))
    });
    v
}

/// Peak allocated (MiB) of a rank's main allocator pool: the first pool with rows (PTA when it
/// has rows, as [`crate::analysis::memory_summary::RankSummary::allocator_peak`]).
pub fn main_pool_peak_mb(r: &crate::analysis::memory_result::RankMemory) -> Option<f64> {
    crate::analysis::memory_pool::pool_series(r)
        .first()
        .and_then(|p| p.peak.as_ref())
        .map(|p| p.peak_allocated_mb)
}
