//! Per-rank summary of the memory events ("per-rank summary";
//! ascend-memory.md §9.5–9.6 peak and live set, §11 naive curve, §12 quantities).

use super::memory_curve::naive_curve;
use super::memory_match::MatchQuality;
use super::memory_peak::{group_rows, Group, Peak};
use super::memory_pool::{pool_series, Component, PoolSeries};
use super::memory_result::RankMemory;
use super::user_frame::UserFrameStatus;

/// Groups kept in "top" lists (§9.6).
pub const TOP_GROUPS: usize = 15;
/// Largest single live rows kept (§9.6).
pub const TOP_ROWS: usize = 10;

/// The allocator peak with readable names (§9.6).
#[derive(Clone, Debug, PartialEq)]
pub struct PeakSummary {
    /// The raw peak.
    pub peak: Peak,
    /// Name of the row that produced the peak sample.
    pub peak_name: String,
    /// Live set grouped by `user_frame` (`""` = no user frame), top 15 by KB.
    pub live_by_user_frame: Vec<Group<String>>,
    /// Live set grouped by op name, top 15 by KB.
    pub live_by_name: Vec<Group<String>>,
    /// The 10 largest live rows (row indices), by size descending then row.
    pub largest_live: Vec<u32>,
}

/// One allocator pool of a rank (ascend-memory.md §4.1, §8.2 `component`): its rows and its
/// own peak and live set.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolSummary {
    /// The pool.
    pub component: Component,
    /// Rows of the pool.
    pub rows: u64,
    /// The pool's peak (§9.6 over its own series), when any of its rows has an allocated total.
    pub peak: Option<PeakSummary>,
}

/// One rank's summary.
#[derive(Clone, Debug, PartialEq)]
pub struct RankSummary {
    /// Rows.
    pub rows: u64,
    /// Rows with `size_kb > 0`.
    pub alloc_rows: u64,
    /// Rows with `size_kb < 0`.
    pub free_rows: u64,
    /// Σ positive `size_kb`.
    pub alloc_kb: f64,
    /// Σ |negative `size_kb`|.
    pub free_kb: f64,
    /// Σ `size_kb` (signed).
    pub sum_size_kb: f64,
    /// Rows whose parity `call_stack` is non-empty.
    pub rows_with_call_stack: u64,
    /// Default-mode rows per quality, [`MatchQuality::ALL`] order.
    pub quality_counts: [u64; 5],
    /// Rows with `duration_ms == 0`.
    pub zero_duration_rows: u64,
    /// Rows without `Release Time`.
    pub unreleased_rows: u64,
    /// Max `total_allocated_mb` (parity column) and the row reaching it first.
    pub max_total_allocated: Option<(f64, u32)>,
    /// Every allocator pool with rows, PTA first ([`Component::ALL`] order), each with its own
    /// peak (§9.6 per pool).
    pub pools: Vec<PoolSummary>,
    /// Naive curve (§11): distinct time points and peak MB.
    pub naive_points: usize,
    /// Naive curve peak, MB.
    pub naive_peak_mb: f64,
    /// Naive curve peak time, ms relative to the first allocation.
    pub naive_peak_rel_ms: f64,
    /// Allocations (`size_kb > 0`) grouped by `user_frame`, top 15 by KB.
    pub top_sites: Vec<Group<String>>,
    /// Distinct op names.
    pub distinct_names: u64,
}

/// Computes the summary of `r`.
pub fn summarize(r: &RankMemory) -> RankSummary {
    summarize_with(r, &pool_series(r))
}

/// [`summarize`] with the rank's [`pool_series`] already built (the worker keeps the series for
/// its chart, so the sort is done once).
pub fn summarize_with(r: &RankMemory, pools: &[PoolSeries]) -> RankSummary {
    let n = r.len();
    let ev = r.events();
    let mut s = RankSummary {
        rows: n as u64,
        alloc_rows: 0,
        free_rows: 0,
        alloc_kb: 0.0,
        free_kb: 0.0,
        sum_size_kb: 0.0,
        rows_with_call_stack: 0,
        quality_counts: r.quality_counts(),
        zero_duration_rows: 0,
        unreleased_rows: 0,
        max_total_allocated: None,
        pools: Vec::new(),
        naive_points: 0,
        naive_peak_mb: 0.0,
        naive_peak_rel_ms: 0.0,
        top_sites: Vec::new(),
        distinct_names: 0,
    };
    let mut names = rustc_hash::FxHashSet::default();
    for i in 0..n {
        let row = r.row(i);
        let kb = row.size_kb();
        s.sum_size_kb += kb;
        if kb > 0.0 {
            s.alloc_rows += 1;
            s.alloc_kb += kb;
        } else if kb < 0.0 {
            s.free_rows += 1;
            s.free_kb -= kb;
        }
        if !row.call_stack().is_empty() {
            s.rows_with_call_stack += 1;
        }
        if row.duration_ms() == 0.0 {
            s.zero_duration_rows += 1;
        }
        if row.release_time_ns().is_none() {
            s.unreleased_rows += 1;
        }
        let t = row.total_allocated_mb();
        if s.max_total_allocated.is_none_or(|(m, _)| t > m) {
            s.max_total_allocated = Some((t, i as u32));
        }
        names.insert(ev.name()[i]);
    }
    s.distinct_names = names.len() as u64;
    let uf = |row: u32| r.row(row as usize).user_frame().0.to_string();
    let name = |row: u32| r.row(row as usize).name().to_string();
    s.top_sites = group_rows(
        ev,
        (0..n as u32).filter(|i| ev.size_kb()[*i as usize] > 0.0),
        uf,
        TOP_GROUPS,
    );
    s.pools = pools
        .iter()
        .map(|p| PoolSummary {
            component: p.component,
            rows: p.rows,
            peak: p.peak.clone().map(|peak| {
                let mut largest = peak.live_rows.clone();
                // Largest first (`total_cmp` reversed), then by row.
                crate::base::sort::sort_by_i64_pair(&mut largest, |r| {
                    (
                        !crate::base::sort::f64_key(ev.size_kb()[r as usize]),
                        r as i64,
                    )
                });
                largest.truncate(TOP_ROWS);
                PeakSummary {
                    peak_name: name(peak.peak_row),
                    live_by_user_frame: group_rows(
                        ev,
                        peak.live_rows.iter().copied(),
                        uf,
                        TOP_GROUPS,
                    ),
                    live_by_name: group_rows(ev, peak.live_rows.iter().copied(), name, TOP_GROUPS),
                    largest_live: largest,
                    peak,
                }
            }),
        })
        .collect();
    let curve = naive_curve((0..n).map(|i| {
        let row = r.row(i);
        (
            i as u32,
            row.start_time_ms(),
            row.duration_ms(),
            row.size_kb(),
        )
    }));
    s.naive_points = curve.points.len();
    s.naive_peak_mb = curve.peak_mb;
    s.naive_peak_rel_ms = curve
        .points
        .iter()
        .find(|p| p.1 == curve.peak_mb)
        .map(|p| p.0)
        .unwrap_or(0.0);
    s
}

impl RankSummary {
    /// The peak of the main pool (PTA when it has rows, else the first pool with rows).
    pub fn allocator_peak(&self) -> Option<&PeakSummary> {
        self.pools.first().and_then(|p| p.peak.as_ref())
    }

    /// Rows of `q`.
    pub fn quality(&self, q: MatchQuality) -> u64 {
        self.quality_counts[q as usize]
    }
}

/// Rows of `r` whose `user_frame_status` is `status`.
pub fn count_user_frame_status(r: &RankMemory, status: UserFrameStatus) -> u64 {
    (0..r.len())
        .filter(|i| r.row(*i).user_frame().1 == status)
        .count() as u64
}
