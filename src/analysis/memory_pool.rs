//! Allocator pools of `operator_memory.csv` (ascend-memory.md §4.1 `Name`, §8.2 `component`).
//!
//! The `Total Allocated/Reserved/Active(MB)` cells of a row are the totals of the allocator that
//! served it: `aten::…` / `npu::…` rows carry the PyTorch adapter's caching allocator (PTA),
//! `cann::…` rows the CANN graph engine's workspace allocator (GE) — two different pools (on
//! msinsight `level2`: ~1000 MiB allocated for PTA, ~50 MiB for GE). Mixing them into one series
//! draws a curve that drops to the GE level and back at every GE row. So every allocator series,
//! peak and live set of [`super::memory_peak`] is built per pool, over the rows of that pool.
//!
//! Rows are assigned by the §8.2 rule on the op name alone ([`Component::of_name`]); names with
//! neither prefix (e.g. `format_contiguousV2`) are `OTHER` and get a series of their own, since
//! no rule says whose totals they carry.

use super::memory_peak::{
    allocator_series_of, find_peak_of, live_series_of, AllocatorSample, Peak,
};
use super::memory_result::RankMemory;

/// The allocator a row belongs to (§8.2 `component`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Component {
    /// PyTorch adapter allocator: names starting `aten::` or `npu::`.
    Pta,
    /// CANN graph engine workspace allocator: names starting `cann::`.
    Ge,
    /// Any other name.
    Other,
}

impl Component {
    /// Every pool, in display order.
    pub const ALL: [Component; 3] = [Component::Pta, Component::Ge, Component::Other];

    /// The §8.2 rule: `PTA` for `aten::` / `npu::`, `GE` for `cann::`, else `OTHER`.
    pub fn of_name(name: &str) -> Component {
        if name.starts_with("aten::") || name.starts_with("npu::") {
            Component::Pta
        } else if name.starts_with("cann::") {
            Component::Ge
        } else {
            Component::Other
        }
    }

    /// `PTA` / `GE` / `OTHER` (the CSV column's values).
    pub fn as_str(self) -> &'static str {
        match self {
            Component::Pta => "PTA",
            Component::Ge => "GE",
            Component::Other => "OTHER",
        }
    }

    /// A name for people.
    pub fn label(self) -> &'static str {
        match self {
            Component::Pta => "PyTorch allocator",
            Component::Ge => "CANN graph engine workspace",
            Component::Other => "other op names",
        }
    }

    /// Which rows belong to the pool, in words.
    pub fn rule(self) -> &'static str {
        match self {
            Component::Pta => "op names starting aten:: or npu::",
            Component::Ge => "op names starting cann::",
            Component::Other => {
                "op names with neither prefix (which allocator wrote their totals is not recorded)"
            }
        }
    }

    /// Parses [`Self::as_str`].
    pub fn parse(s: &str) -> Option<Component> {
        Component::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// The pool of every row of `r`, in row order (each distinct name is classified once).
pub fn row_components(r: &RankMemory) -> Vec<Component> {
    let mut by_name: rustc_hash::FxHashMap<u32, Component> = Default::default();
    let names = r.events().name();
    names
        .iter()
        .map(|&id| {
            *by_name
                .entry(id.index() as u32)
                .or_insert_with(|| Component::of_name(r.strings().get(id)))
        })
        .collect()
}

/// One pool of one rank: its rows, allocator series (§9.5), rows-only live series and peak
/// (§9.6), all over the pool's rows only.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolSeries {
    /// The pool.
    pub component: Component,
    /// Rows of the pool.
    pub rows: u64,
    /// Allocator samples of the pool's rows, sorted (§9.5).
    pub samples: Vec<AllocatorSample>,
    /// Σ `size_kb` of the pool's live rows at each change, `(t_ns, KiB)`.
    pub live: Vec<(i64, f64)>,
    /// The pool's peak and live set at it (live rows of this pool only).
    pub peak: Option<Peak>,
}

/// The pools of `r` that have rows, in [`Component::ALL`] order.
pub fn pool_series(r: &RankMemory) -> Vec<PoolSeries> {
    let comp = row_components(r);
    let ev = r.events();
    Component::ALL
        .into_iter()
        .filter_map(|c| {
            let keep = |i: usize| comp[i] == c;
            let rows = comp.iter().filter(|&&x| x == c).count() as u64;
            if rows == 0 {
                return None;
            }
            let samples = allocator_series_of(ev, &keep);
            let peak = find_peak_of(ev, &samples, &keep);
            Some(PoolSeries {
                component: c,
                rows,
                live: live_series_of(ev, &keep),
                samples,
                peak,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_decide_the_pool() {
        assert_eq!(Component::of_name("aten::mm"), Component::Pta);
        assert_eq!(Component::of_name("npu::npu_format_cast"), Component::Pta);
        assert_eq!(Component::of_name("cann::Graph_70"), Component::Ge);
        assert_eq!(Component::of_name("format_contiguousV2"), Component::Other);
        assert_eq!(Component::of_name("ATEN::mm"), Component::Other);
        for c in Component::ALL {
            assert_eq!(Component::parse(c.as_str()), Some(c));
        }
        assert_eq!(Component::parse("pta"), None);
    }
}
