//! Memory events of two Ascend ranks side by side (memory events;
//! ascend-memory.md §9.5–9.6 per allocator pool, §8.2 `component`).
//!
//! Per pool (PTA, GE, other op names: [`Component`], never mixed, as in the single analysis)
//! each side's allocator peak and live set at it come from
//! [`crate::analysis::memory_pool::pool_series`] (the §9.6 rule, not written again); the live
//! rows are then grouped by `user_frame` (`""` = no user frame, §7) and by op name on each side
//! and matched with [`super::keyed::by_key`]. Sizes are KiB as the CSV writes them (`Size(KB)`),
//! allocator totals MiB (`Total Allocated(MB)`).

use std::cmp::Ordering;

use super::keyed::{by_key, Delta, Quantity};
use crate::analysis::memory_peak::Peak;
use crate::analysis::memory_pool::{pool_series, Component};
use crate::analysis::memory_result::RankMemory;

/// Live KiB and rows of one group.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LiveKb {
    /// Σ `size_kb` of the group's live rows.
    pub kb: f64,
    /// Live rows.
    pub rows: u64,
}

impl Quantity for LiveKb {
    fn plus(self, o: Self) -> Self {
        LiveKb {
            kb: self.kb + o.kb,
            rows: self.rows.saturating_add(o.rows),
        }
    }
    fn change_size(a: Self, b: Self) -> Self {
        LiveKb {
            kb: (b.kb - a.kb).abs(),
            rows: a.rows.abs_diff(b.rows),
        }
    }
    /// KiB first, then rows.
    fn size_cmp(&self, o: &Self) -> Ordering {
        self.kb.total_cmp(&o.kb).then(self.rows.cmp(&o.rows))
    }
}

/// One side's peak of one pool.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolPeak {
    /// The §9.6 peak (allocated MiB, time, source line, reserved / active at it, live rows).
    pub peak: Peak,
    /// Op name of the row whose sample is the peak.
    pub peak_name: String,
}

/// One pool on both sides.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolComparison {
    /// The pool.
    pub component: Component,
    /// Rows of the pool on A / B.
    pub rows: (u64, u64),
    /// Side A's peak (`None`: no rows in this pool, or no allocated total).
    pub a: Option<PoolPeak>,
    /// Side B's peak.
    pub b: Option<PoolPeak>,
    /// Live at each side's peak, by user frame.
    pub by_user_frame: Vec<Delta<String, LiveKb>>,
    /// Live at each side's peak, by op name.
    pub by_name: Vec<Delta<String, LiveKb>>,
}

type Key = fn(&RankMemory, usize) -> String;

fn live(r: &RankMemory, p: Option<&PoolPeak>, key: Key) -> Vec<(String, LiveKb)> {
    let Some(p) = p else { return Vec::new() };
    let kb = r.events().size_kb();
    p.peak
        .live_rows
        .iter()
        .map(|&i| {
            let i = i as usize;
            (
                key(r, i),
                LiveKb {
                    kb: kb.get(i).copied().unwrap_or(0.0),
                    rows: 1,
                },
            )
        })
        .collect()
}

/// Compares the pools of two ranks (module doc), in [`Component::ALL`] order; a pool with rows
/// on neither side is left out.
pub fn compare_memory(a: &RankMemory, b: &RankMemory) -> Vec<PoolComparison> {
    let (pa, pb) = (pool_series(a), pool_series(b));
    let peak = |r: &RankMemory, s: &[crate::analysis::memory_pool::PoolSeries], c: Component| {
        let p = s.iter().find(|p| p.component == c)?;
        let peak = p.peak.clone()?;
        Some(PoolPeak {
            peak_name: r.row(peak.peak_row as usize).name().to_string(),
            peak,
        })
    };
    let rows = |s: &[crate::analysis::memory_pool::PoolSeries], c: Component| {
        s.iter().find(|p| p.component == c).map_or(0, |p| p.rows)
    };
    let frame: Key = |r, i| r.row(i).user_frame().0.to_string();
    let name: Key = |r, i| r.row(i).name().to_string();
    Component::ALL
        .into_iter()
        .filter(|&c| rows(&pa, c) + rows(&pb, c) > 0)
        .map(|c| {
            let (xa, xb) = (peak(a, &pa, c), peak(b, &pb, c));
            PoolComparison {
                component: c,
                rows: (rows(&pa, c), rows(&pb, c)),
                by_user_frame: by_key(live(a, xa.as_ref(), frame), live(b, xb.as_ref(), frame)),
                by_name: by_key(live(a, xa.as_ref(), name), live(b, xb.as_ref(), name)),
                a: xa,
                b: xb,
            }
        })
        .collect()
}
