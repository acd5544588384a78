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

use serde::{Deserialize, Serialize};

pub mod anomaly;
pub mod memory;
pub mod snapshot;

#[allow(unused_imports)]
pub use anomaly::*;
pub use memory::*;
#[allow(unused_imports)]
pub use snapshot::*;

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

/// The analyses the page offers. Memory and Anomaly run on rank folders
/// ([`InventoryDto::ranks`]); Snapshot runs on snapshot pickles ([`InventoryDto::snapshots`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum AnalysisKind {
    /// Ascend operator memory events matched to call stacks (ascend-memory.md).
    Memory,
    /// Steps, bubbles and anomalies (anomaly.md).
    Anomaly,
    /// PyTorch allocator snapshot peaks (torch-snapshot.md).
    Snapshot,
}

impl AnalysisKind {
    /// Every analysis, in the order the UI schedules them.
    pub const ALL: [AnalysisKind; 3] = [
        AnalysisKind::Memory,
        AnalysisKind::Anomaly,
        AnalysisKind::Snapshot,
    ];
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
    /// Runs `analysis` on `targets`: rank folder indices ([`InventoryDto::ranks`]) for Memory
    /// and Anomaly, snapshot indices ([`InventoryDto::snapshots`]) for Snapshot.
    /// Replies [`Response::Progress`] while reading, then per target one "done" reply of the
    /// analysis (e.g. [`Response::RankDone`] for Memory) or a [`Response::RankFailed`], then
    /// [`Response::Problems`] and [`Response::RunDone`].
    Run {
        /// Which analysis.
        analysis: AnalysisKind,
        /// Target indices (see above).
        targets: Vec<u32>,
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
    /// A query of the snapshot view (issue 4); replies [`Response::Snapshot`] (or export
    /// chunks for [`SnapRequest::Export`]).
    Snapshot(SnapRequest),
    /// A steps / bubbles view query about one rank folder the worker ran the anomaly analysis
    /// on. Replies [`Response::Anomaly`].
    Anomaly(AnomalyQuery),
    /// Writes an anomaly export (re-analysing every rank folder as `proflens anomaly` does).
    /// Replies [`Response::ExportChunk`]s then [`Response::ExportDone`].
    AnomalyExport {
        /// What to write.
        what: AnomalyExportKind,
        /// Rank folder of the per-rank Markdown reports.
        rank: Option<u32>,
    },
    /// The steps/bubbles timeline of an anomaly-analysed rank for one visible window, merged
    /// for a chart `width_px` wide (views::timeline). Replies [`Response::Timeline`].
    Timeline {
        /// Rank folder index.
        rank: u32,
        /// Visible window, ms relative to [`TimelineDto::origin_ms`]; `None` = everything.
        x_range_ms: Option<(f64, f64)>,
        /// Chart width in pixels.
        width_px: u32,
    },
    /// The kernel (device lane) or host event (host lane) under the pointer.
    /// Replies [`Response::KernelAt`].
    KernelAt {
        /// Rank folder index.
        rank: u32,
        /// Instant, ms relative to [`TimelineDto::origin_ms`].
        t_ms: f64,
        /// Lane id ([`LaneDto::id`]).
        lane: u32,
        /// Accept the nearest item within this distance, ms (a few pixels).
        slop_ms: f64,
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
    /// One rank folder finished the memory analysis.
    RankDone(MemorySummaryDto),
    /// One target (rank folder or snapshot) could not be analysed; the others go on.
    RankFailed {
        /// The analysis that failed.
        analysis: AnalysisKind,
        /// Target index (rank folder or snapshot, see [`Request::Run`]).
        rank: u32,
        /// What went wrong, with the file and position when known.
        message: String,
    },
    /// Findings that did not stop the analysis (capped list plus exact counts).
    Problems(ProblemsDto),
    /// Every target of a [`Request::Run`] is finished (done or failed).
    RunDone {
        /// The analysis of the run.
        analysis: AnalysisKind,
        /// Targets analysed.
        done: u32,
        /// Targets that failed.
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
    /// A reply of the snapshot analysis (issue 4): a file's summary (its "done" reply to
    /// [`Request::Run`]) or the answer to a [`Request::Snapshot`] query.
    Snapshot(SnapResponse),
    /// One rank folder finished the anomaly analysis.
    AnomalyDone(AnomalySummaryDto),
    /// Reply to [`Request::Anomaly`].
    Anomaly(AnomalyReply),
    /// Reply to [`Request::Timeline`].
    Timeline(TimelineDto),
    /// Reply to [`Request::KernelAt`]; `None` when nothing is that close.
    KernelAt(Option<TimelineItemDto>),
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
