//! The allocator curves of `operator_memory.csv` as a table (ascend-memory.md §9.5;
//! docs/frames.md §3.5): one line per allocator sample of every pool of every rank — at each
//! row's allocation and at each released row's release, the totals the allocator wrote
//! (`Total Allocated/Reserved/Active(MB)`), per pool (`analysis::memory_pool::pool_series`:
//! PTA, GE and OTHER totals are never mixed), in the series' order
//! (`(time, alloc before release, line)`). Ranks in §9.0 order, pools in `PTA, GE, OTHER` order.
//! Rendered by [`super::table_csv`] as CSV and as a [`Frame`]. Formatting only.

use std::borrow::Cow;
use std::io::{self, Write};

use super::frame::{Cell, Frame, Kind};
use super::table_csv::{frame_of, names, write_csv};
use crate::analysis::memory_peak::AllocatorSample;
use crate::analysis::memory_pool::{pool_series, PoolSeries};
use crate::analysis::memory_result::{MemoryRun, RankMemory};

/// The columns of the curves table, with their frame types (`time_us` is exact: `time_ns` in
/// a frame).
pub const CURVE_COLUMNS: &[(&str, Kind)] = &[
    ("rank_id", Kind::I64),
    ("role", Kind::Text),
    ("source_dir", Kind::Text),
    ("pool", Kind::Text),
    ("time_us", Kind::TimeNs),
    ("kind", Kind::Text),
    ("source_line", Kind::I64),
    ("allocated_mb", Kind::F64),
    ("reserved_mb", Kind::F64),
    ("active_mb", Kind::F64),
];

fn mb(x: Option<f64>) -> Cell<'static> {
    x.map(Cell::F64).unwrap_or(Cell::Null)
}

/// The cells of sample `s` of pool `p` of rank `r` ([`CURVE_COLUMNS`]).
pub fn curve_cells<'a>(r: &'a RankMemory, p: &PoolSeries, s: &AllocatorSample) -> Vec<Cell<'a>> {
    vec![
        Cell::I64(r.info.rank_id),
        Cell::Str(Cow::Borrowed(r.info.role.as_str())),
        Cell::Str(Cow::Borrowed(r.info.source_dir.as_str())),
        Cell::Str(Cow::Borrowed(p.component.as_str())),
        Cell::Exact(s.t_ns, 3),
        Cell::Str(Cow::Borrowed(s.kind.as_str())),
        Cell::I64(i64::try_from(s.line).unwrap_or(i64::MAX)),
        mb(s.totals.allocated),
        mb(s.totals.reserved),
        mb(s.totals.active),
    ]
}

/// The pools of every rank of `run` (ranks without rows have none).
fn pools(run: &MemoryRun) -> Vec<(&RankMemory, Vec<PoolSeries>)> {
    run.ranks
        .iter()
        .map(|r| (r.as_ref(), pool_series(r)))
        .collect()
}

fn lines<'a>(
    pools: &'a [(&'a RankMemory, Vec<PoolSeries>)],
) -> impl Iterator<Item = Vec<Cell<'a>>> + 'a {
    pools.iter().flat_map(|(r, ps)| {
        ps.iter()
            .flat_map(move |p| p.samples.iter().map(move |s| curve_cells(r, p, s)))
    })
}

/// Writes the allocator curves of `run` as CSV ([`CURVE_COLUMNS`]).
///
/// Errors: only those of `out`.
pub fn write_curves(run: &MemoryRun, out: &mut dyn Write) -> io::Result<()> {
    let p = pools(run);
    write_csv(&names(CURVE_COLUMNS), lines(&p), out)
}

/// The allocator curves of `run` as a typed [`Frame`] (`time_ns` integer ns).
pub fn curves_frame(run: &MemoryRun) -> Frame {
    let p = pools(run);
    frame_of(CURVE_COLUMNS, lines(&p))
}
