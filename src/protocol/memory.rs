//! Messages of the memory-events analysis (ascend-memory.md): the per-rank summary,
//! the events table pages, the allocator curves, the live set at an instant, allocation sites
//! and call stacks. Re-exported from [`crate::protocol`].

use serde::{Deserialize, Serialize};

/// Match quality counts of one rank (ascend-memory.md §6.4).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MatchCountsDto {
    /// `ts == t`.
    pub exact: u64,
    /// `ts < t ≤ ts + dur`.
    pub enclosing: u64,
    /// `ts + dur < t`.
    pub nearest_before: u64,
    /// Stack inherited from the forward op.
    pub via_forward: u64,
    /// No stack.
    pub none: u64,
}

/// One group of a live set or of allocation sites.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupDto {
    /// Group key (a frame, a name…); `""` means "no user frame" / "no stack".
    pub key: String,
    /// Rows in the group.
    pub count: u64,
    /// Σ size of the group, KiB.
    pub size_kb: f64,
}

/// One allocator pool of a rank (ascend-memory.md §4.1, §8.2 `component`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoolDto {
    /// `PTA`, `GE` or `OTHER`.
    pub pool: String,
    /// For people: `PyTorch allocator`, `CANN graph engine workspace`, `other op names`.
    pub label: String,
    /// Which rows belong to it, in words (`op names starting cann::`).
    pub rule: String,
    /// Rows of the pool.
    pub rows: u64,
    /// The pool's allocator peak, MiB.
    pub peak_allocated_mb: Option<f64>,
    /// Its instant, ms.
    pub peak_time_ms: Option<f64>,
    /// Reserved at the peak, MiB.
    pub reserved_at_peak_mb: Option<f64>,
    /// The pool's rows live at its peak.
    pub live_at_peak_rows: u64,
    /// Their Σ size, KiB.
    pub live_at_peak_kb: f64,
}

/// Per-rank summary of the memory analysis (ascend-memory.md §9.5–9.6).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemorySummaryDto {
    /// Rank folder index.
    pub rank: u32,
    /// Role.
    pub role: String,
    /// Rank id.
    pub rank_id: i64,
    /// Rows (events) read.
    pub rows: u64,
    /// Rows with `size_kb > 0`.
    pub alloc_count: u64,
    /// Rows with `size_kb < 0`.
    pub free_count: u64,
    /// Σ positive `size_kb`.
    pub alloc_kb: f64,
    /// Σ |negative `size_kb`|.
    pub free_kb: f64,
    /// Rows with a call stack by match quality.
    pub matches: MatchCountsDto,
    /// Peak of `total_allocated_mb` over the allocator samples, MiB.
    pub peak_allocated_mb: Option<f64>,
    /// Time of that peak, ms.
    pub peak_time_ms: Option<f64>,
    /// Reserved MiB at that peak.
    pub reserved_at_peak_mb: Option<f64>,
    /// Rows live at the allocator peak.
    pub live_at_peak_rows: u64,
    /// Σ KiB live at the allocator peak.
    pub live_at_peak_kb: f64,
    /// Live set at the peak grouped by `user_frame`, largest first.
    pub live_at_peak_by_user_frame: Vec<GroupDto>,
    /// Live set at the peak grouped by `name`, largest first.
    pub live_at_peak_by_name: Vec<GroupDto>,
    /// Every allocator pool with rows (PTA first): which rows, its own peak and live set.
    /// The `peak_*` / `live_at_peak_*` fields above are the first pool's.
    #[serde(default)]
    pub pools: Vec<PoolDto>,
    /// Peak of the reconstructed live bytes (operator rows only), MiB.
    pub peak_live_mb: f64,
    /// Time of that peak, ms.
    pub peak_live_time_ms: Option<f64>,
    /// Rows never released inside the capture.
    pub unreleased_rows: u64,
    /// First and last event time, ms.
    pub t_range_ms: Option<(f64, f64)>,
    /// True when no call stack could be matched (banner: re-profile with `with_stack=True`).
    pub no_stacks: bool,
}

/// Column of the memory events table (sort key).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MemColumn {
    /// Row order after the stable sort by start time (the export order).
    Row,
    /// Operator name.
    Name,
    /// Signed size, KiB.
    SizeKb,
    /// Allocation time.
    StartTimeMs,
    /// Duration.
    DurationMs,
    /// Allocator allocated total.
    TotalAllocatedMb,
    /// Allocator reserved total.
    TotalReservedMb,
    /// Allocator active total.
    TotalActiveMb,
    /// First user frame.
    UserFrame,
    /// First listed frame (innermost).
    CallStackTop,
    /// Match quality.
    MatchQuality,
}

/// How to order rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SortKey {
    /// Column.
    pub column: MemColumn,
    /// Largest first.
    pub descending: bool,
}

/// Which rows to keep.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RowFilter {
    /// Case-insensitive substring of the name or of any stack frame; empty = all.
    pub text: String,
    /// Minimum `size_kb` (inclusive).
    pub min_kb: Option<f64>,
    /// Maximum `size_kb` (inclusive).
    pub max_kb: Option<f64>,
}

/// A page request for the events table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowsQuery {
    /// Rank folder index.
    pub rank: u32,
    /// First row of the page in the sorted, filtered order.
    pub offset: u32,
    /// Rows wanted.
    pub limit: u32,
    /// Order; `None` = export order.
    pub sort: Option<SortKey>,
    /// Filter.
    pub filter: RowFilter,
}

/// One memory event row as the table shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryRowDto {
    /// Row id within the rank (export order, from 0).
    pub row: u32,
    /// Operator name.
    pub name: String,
    /// Signed size, KiB.
    pub size_kb: f64,
    /// Allocation time, ms.
    pub start_time_ms: f64,
    /// Duration, ms (`0.0` = not released).
    pub duration_ms: f64,
    /// Allocated total at allocation, MiB.
    pub total_allocated_mb: f64,
    /// Reserved total at allocation, MiB.
    pub total_reserved_mb: f64,
    /// Active total at allocation, MiB.
    pub total_active_mb: f64,
    /// First listed frame (innermost in real data).
    pub call_stack_top: String,
    /// First user frame (ascend-memory.md §6.3), `""` when none.
    pub user_frame: String,
    /// `exact`, `enclosing`, `nearest_before`, `via_forward` or `none`.
    pub match_quality: String,
    /// CSV line of the row.
    pub source_line: u64,
}

/// A page of rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowsPage {
    /// Rank folder index.
    pub rank: u32,
    /// Rows of the rank.
    pub total_rows: u32,
    /// Rows passing the filter.
    pub matching_rows: u32,
    /// Offset of `rows[0]` in the sorted, filtered order.
    pub offset: u32,
    /// The page.
    pub rows: Vec<MemoryRowDto>,
}

/// One downsampled series: per pixel column the minimum and maximum (NaN = no data).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesDto {
    /// Legend name, e.g. `allocated (allocator)`.
    pub name: String,
    /// Per column minimum, MiB.
    pub min: Vec<f64>,
    /// Per column maximum, MiB.
    pub max: Vec<f64>,
}

/// Chart data for one rank and one window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurveDto {
    /// Rank folder index.
    pub rank: u32,
    /// Window start, ms.
    pub x0_ms: f64,
    /// Window end, ms.
    pub x1_ms: f64,
    /// Full data range, ms (for "reset zoom").
    pub full_range_ms: (f64, f64),
    /// Series, each `width_px` long.
    pub series: Vec<SeriesDto>,
    /// Largest value over all series in the window, MiB (y axis).
    pub y_max_mb: f64,
    /// The pool's allocator peak: time ms and allocated MiB.
    pub peak: Option<(f64, f64)>,
    /// Number of samples behind the curves.
    pub samples: u64,
    /// The allocator pool drawn (`PTA`, `GE`, `OTHER`; ascend-memory.md §8.2 `component`);
    /// `None` when the rank has no rows.
    #[serde(default)]
    pub pool: Option<String>,
}

/// The allocations live at one instant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveAtDto {
    /// Rank folder index.
    pub rank: u32,
    /// Instant, ms.
    pub t_ms: f64,
    /// Allocator totals holding at that instant, MiB: allocated, reserved, active.
    pub totals_mb: Option<(f64, f64, f64)>,
    /// Reconstructed live bytes at that instant (operator rows), MiB.
    pub live_mb: f64,
    /// Number of live rows.
    pub live_rows: u64,
    /// The largest live rows.
    pub largest: Vec<MemoryRowDto>,
    /// The allocator pool whose rows and totals these are (`PTA`, `GE`, `OTHER`).
    #[serde(default)]
    pub pool: Option<String>,
}

/// Grouping of allocation sites.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SiteKey {
    /// First user frame.
    UserFrame,
    /// First listed frame.
    CallStackTop,
    /// Operator name.
    Name,
}

/// Allocation sites of one rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SitesDto {
    /// Rank folder index.
    pub rank: u32,
    /// Grouping used.
    pub group_by: SiteKey,
    /// Groups of allocations (`size_kb > 0`), largest Σ size first.
    pub groups: Vec<GroupDto>,
    /// Number of distinct groups before the limit.
    pub distinct: u64,
    /// Σ size of all allocations of the rank, KiB (for shares).
    pub total_kb: f64,
}

/// One stack frame for display.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrameDto {
    /// The frame text as recorded, e.g. `/home/u/main.py(354): train`.
    pub text: String,
    /// True for the row's user frame (ascend-memory.md §6.3).
    pub user: bool,
}

/// Full call stack of one row, frames innermost first, one per line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StackDto {
    /// Rank folder index.
    pub rank: u32,
    /// The row.
    pub row: MemoryRowDto,
    /// Frames.
    pub frames: Vec<FrameDto>,
    /// `same_op`, `forward:<name>` or `""`.
    pub stack_origin: String,
}

/// Memory export formats ([`crate::protocol::ExportRequest::Memory`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MemoryExportKind {
    /// Rows as CSV (parity columns first), byte-identical to `proflens memory --format csv`.
    MemoryCsv,
    /// Rows as JSON, byte-identical to `proflens memory --format json`.
    MemoryJson,
    /// Per-rank summary as Markdown.
    MemorySummaryMd,
}

/// The memory view's queries ([`crate::protocol::Query::Memory`]) about one rank folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum MemoryQuery {
    /// A page of memory event rows (sorted and filtered in the worker). Replies
    /// [`MemoryReply::Rows`].
    Rows(RowsQuery),
    /// Downsampled memory curves for a chart `width_px` wide. Replies [`MemoryReply::Curve`].
    Curve {
        /// Rank folder index.
        rank: u32,
        /// Visible time window in ms (absolute); `None` = everything.
        x_range: Option<(f64, f64)>,
        /// Chart width in pixel columns (one min/max pair per column).
        width_px: u32,
        /// Allocator pool (`PTA`, `GE`, `OTHER`); `None` = the rank's first pool with rows.
        #[serde(default)]
        pool: Option<String>,
    },
    /// The largest allocations live at time `t_ms`. Replies [`MemoryReply::LiveAt`].
    LiveAt {
        /// Rank folder index.
        rank: u32,
        /// Instant in ms (absolute); [`CurveDto::peak`]'s time means the peak sample itself.
        t_ms: f64,
        /// At most this many allocations.
        limit: u32,
        /// Allocator pool (`PTA`, `GE`, `OTHER`); `None` = the rank's first pool with rows.
        #[serde(default)]
        pool: Option<String>,
    },
    /// Allocation sites grouped by `group_by`, largest first. Replies [`MemoryReply::Sites`].
    Sites {
        /// Rank folder index.
        rank: u32,
        /// Grouping key.
        group_by: SiteKey,
        /// At most this many groups.
        limit: u32,
    },
    /// The full call stack of one row. Replies [`MemoryReply::Stack`].
    Stack {
        /// Rank folder index.
        rank: u32,
        /// Row id ([`MemoryRowDto::row`]).
        row: u32,
    },
}

impl MemoryQuery {
    /// The rank folder the query is about.
    pub fn rank(&self) -> u32 {
        match self {
            MemoryQuery::Rows(q) => q.rank,
            MemoryQuery::Curve { rank, .. }
            | MemoryQuery::LiveAt { rank, .. }
            | MemoryQuery::Sites { rank, .. }
            | MemoryQuery::Stack { rank, .. } => *rank,
        }
    }
}

/// Answers to [`MemoryQuery`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum MemoryReply {
    /// A page of rows.
    Rows(RowsPage),
    /// Curves.
    Curve(CurveDto),
    /// The live set at an instant.
    LiveAt(LiveAtDto),
    /// Grouped sites.
    Sites(SitesDto),
    /// One row's stack.
    Stack(StackDto),
}
