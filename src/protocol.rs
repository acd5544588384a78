//! The worker ↔ UI API boundary: one closed vocabulary of plain-data messages (house-style §8.8).
//!
//! Every way the UI can make the core do work is a [`Request`] variant; every answer is a
//! [`Response`]. Both travel inside an [`Envelope`] whose `seq` pairs a reply with its request
//! (progress and problems carry the `seq` of the `Run` that caused them).
//!
//! Transport (the `worker` and `ui` edges): the envelope is converted with
//! `serde-wasm-bindgen` and posted with `postMessage`. `File` objects travel beside an
//! [`Request::Open`] message, in the order of its `files`. Export bytes travel beside a
//! [`Response::ExportChunk`] as a transferred `ArrayBuffer`, never as one JS string.
//!
//! Units are in the field names: `_ms` milliseconds (absolute, epoch-based, as in the CSV),
//! `_kb` KiB, `_mb` MiB, `bytes` bytes.
//!
//! Rank folders are addressed by their index in [`InventoryDto::ranks`]. Every worker builds
//! the same inventory from the same file list, so indices agree across the pool.

pub mod snapshot;

use serde::{Deserialize, Serialize};

/// A message with its sequence number.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Envelope<T> {
    /// Sequence number chosen by the UI; replies repeat it.
    pub seq: u32,
    /// The message.
    pub body: T,
}

/// One input file as the UI sees it: the path relative to the dropped root and the size.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMeta {
    /// Path relative to the dropped root, `/`-separated (`webkitRelativePath` or the path
    /// rebuilt from a directory drop).
    pub path: String,
    /// Size in bytes.
    pub size: u64,
}

/// The analyses the page offers. Issues 3 and 4 add their variants here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AnalysisKind {
    /// Ascend operator memory events matched to call stacks (ascend-memory.md).
    Memory,
    /// Steps, bubbles and anomalies (anomaly.md; issue 3 adds its view).
    Anomaly,
}

/// UI → worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Request {
    /// The files this worker may read (the `File` objects travel beside, same order).
    /// Replies [`Response::Inventory`]: classification only, no file is parsed.
    Open {
        /// Names and sizes.
        files: Vec<FileMeta>,
    },
    /// Runs `analysis` on the rank folders `ranks` (indices into [`InventoryDto::ranks`]).
    /// Replies [`Response::Progress`] while reading, then one [`Response::RankDone`] or
    /// [`Response::RankFailed`] per rank, then [`Response::Problems`] and [`Response::RunDone`].
    Run {
        /// Which analysis.
        analysis: AnalysisKind,
        /// Rank folder indices.
        ranks: Vec<u32>,
    },
    /// A page of memory event rows (sorted and filtered in the worker). Replies [`Response::Rows`].
    Rows(RowsQuery),
    /// Downsampled memory curves for a chart `width_px` wide. Replies [`Response::Curve`].
    Curve {
        /// Rank folder index.
        rank: u32,
        /// Visible time window in ms (absolute); `None` = everything.
        x_range: Option<(f64, f64)>,
        /// Chart width in pixel columns (one min/max pair per column).
        width_px: u32,
    },
    /// The largest allocations live at time `t_ms`. Replies [`Response::LiveAt`].
    LiveAt {
        /// Rank folder index.
        rank: u32,
        /// Instant in ms (absolute).
        t_ms: f64,
        /// At most this many allocations.
        limit: u32,
    },
    /// Allocation sites grouped by `group_by`, largest first. Replies [`Response::Sites`].
    Sites {
        /// Rank folder index.
        rank: u32,
        /// Grouping key.
        group_by: SiteKey,
        /// At most this many groups.
        limit: u32,
    },
    /// The full call stack of one row. Replies [`Response::Stack`].
    Stack {
        /// Rank folder index.
        rank: u32,
        /// Row id ([`MemoryRowDto::row`]).
        row: u32,
    },
    /// Writes an export of the ranks this worker analysed. Replies [`Response::ExportChunk`]s
    /// then [`Response::ExportDone`].
    Export {
        /// What to write.
        what: ExportKind,
    },
}

/// Worker → UI.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Response {
    /// The worker's wasm is loaded and it accepts requests.
    Ready,
    /// What was dropped, classified (reply to [`Request::Open`]).
    Inventory(InventoryDto),
    /// Bytes read of one file (at least every 250 ms while reading, and at its end).
    Progress(ProgressDto),
    /// One rank folder finished.
    RankDone(MemorySummaryDto),
    /// One rank folder could not be analysed; the others go on.
    RankFailed {
        /// Rank folder index.
        rank: u32,
        /// What went wrong, with the file and position when known.
        message: String,
    },
    /// Findings that did not stop the analysis (capped list plus exact counts).
    Problems(ProblemsDto),
    /// Every rank of a [`Request::Run`] is finished (done or failed).
    RunDone {
        /// Rank folders analysed.
        done: u32,
        /// Rank folders that failed.
        failed: u32,
    },
    /// Reply to [`Request::Rows`].
    Rows(RowsPage),
    /// Reply to [`Request::Curve`].
    Curve(CurveDto),
    /// Reply to [`Request::LiveAt`].
    LiveAt(LiveAtDto),
    /// Reply to [`Request::Sites`].
    Sites(SitesDto),
    /// Reply to [`Request::Stack`].
    Stack(StackDto),
    /// One piece of an export; its bytes travel beside as a transferred `ArrayBuffer`.
    ExportChunk {
        /// Number of bytes in the attached buffer.
        bytes: u64,
    },
    /// The export is complete: the UI joins the chunks into one `Blob` and downloads it.
    ExportDone {
        /// Suggested file name.
        file_name: String,
        /// MIME type.
        mime: String,
    },
    /// Posted by the worker edge after each request: the size of its wasm linear memory
    /// (it never shrinks, so this is the peak so far; peers.md §5 budget meter).
    WorkerStats {
        /// `WebAssembly.Memory` buffer size, bytes.
        wasm_memory_bytes: u64,
    },
    /// The request could not be served (unknown rank, nothing loaded, bad input message…).
    Failed(Failure),
}

/// Why a request failed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// Human message: what was asked, what was wrong.
    pub message: String,
}

/// Bytes read of one file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProgressDto {
    /// Index of the file in the [`Request::Open`] list.
    pub file: u32,
    /// Bytes read so far.
    pub bytes_done: u64,
    /// File size in bytes.
    pub bytes_total: u64,
    /// Read rate since the file was opened, MB/s (MiB per second).
    pub mb_per_s: f64,
}

/// Severity of a problem (ascend-memory.md §10.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum SeverityDto {
    /// Context only.
    Info,
    /// Data kept with a caveat.
    Warning,
    /// Data dropped (a row, a file, a rank).
    Error,
}

/// One problem, ready to show: where, what was found, what was expected.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProblemDto {
    /// How bad.
    pub severity: SeverityDto,
    /// Stable code such as `MEM-CSV-003`.
    pub code: String,
    /// File path relative to the dropped root.
    pub file: String,
    /// 1-based line, when the format has lines.
    pub line: Option<u64>,
    /// Byte offset from the start of the file, when known.
    pub byte: Option<u64>,
    /// Column or key concerned.
    pub column: Option<String>,
    /// Message.
    pub message: String,
}

/// The problems of a run: the first ones in full and the exact totals.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProblemsDto {
    /// Problems kept in full, in the order found.
    pub kept: Vec<ProblemDto>,
    /// Number of problems, kept or not.
    pub total: u64,
    /// Exact count per code.
    pub by_code: Vec<(String, u64)>,
}

/// Kind of an input file as the inventory classifies it (formats.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileDto {
    /// Index in the [`Request::Open`] list.
    pub file: u32,
    /// Path relative to the dropped root.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Classification, e.g. `operator_memory.csv`, `trace_view.json`, `other`.
    pub kind: String,
}

/// Whether one analysis can run on a rank folder, and if not, what is missing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapabilityDto {
    /// The analysis.
    pub analysis: AnalysisKind,
    /// True when the required files are present.
    pub can_run: bool,
    /// Required inputs that are absent, each naming the file and how to get it.
    pub missing: Vec<String>,
    /// Optional inputs that are absent, and what the result lacks because of it.
    pub degraded: Vec<String>,
}

/// One rank folder (one `*ascend_pt` capture) found in the drop.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankFolderDto {
    /// Index in [`InventoryDto::ranks`] (the address used by every request).
    pub index: u32,
    /// Relative path of the capture folder.
    pub dir: String,
    /// Role (metadata `role`, else the parent folder name, else `unknown`).
    pub role: String,
    /// Rank id, when determinable (ascend-memory.md §3.1).
    pub rank_id: Option<i64>,
    /// How the rank id was found, e.g. `the profiler_info file name`.
    pub rank_source: String,
    /// Profiler level from `profiler_info` config, e.g. `Level1`.
    pub level: Option<String>,
    /// Export type from `profiler_info` config, e.g. `Text`.
    pub export_type: Option<String>,
    /// torch_npu version, when present.
    pub torch_npu_version: Option<String>,
    /// CANN version, when present.
    pub cann_version: Option<String>,
    /// Files of this folder.
    pub files: Vec<FileDto>,
    /// One entry per analysis.
    pub analyses: Vec<CapabilityDto>,
    /// Notes on how rank and role were found (fallbacks, mismatches), as `CODE: message`.
    pub notes: Vec<String>,
    /// Files inside the folder that no analysis reads (count, bytes).
    pub other_files: (u64, u64),
}

/// What was dropped, before any parsing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InventoryDto {
    /// Rank folders, in deterministic order (role, rank, source order).
    pub ranks: Vec<RankFolderDto>,
    /// Snapshot pickle candidates (torch-snapshot.md; issue 4).
    pub snapshots: Vec<FileDto>,
    /// Files outside every rank folder (listed, never silently dropped); `kind` holds the reason.
    pub ignored: Vec<FileDto>,
    /// Total bytes dropped.
    pub total_bytes: u64,
    /// Inventory-level problems (no rank folder, unreadable metadata…).
    pub problems: Vec<ProblemDto>,
}

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
    /// Allocator peak: time ms and allocated MiB.
    pub peak: Option<(f64, f64)>,
    /// Number of samples behind the curves.
    pub samples: u64,
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

/// Export formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ExportKind {
    /// Rows as CSV (parity columns first), byte-identical to `proflens memory --format csv`.
    MemoryCsv,
    /// Rows as JSON, byte-identical to `proflens memory --format json`.
    MemoryJson,
    /// Per-rank summary as Markdown.
    MemorySummaryMd,
}
