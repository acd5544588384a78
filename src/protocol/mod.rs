//! The worker ↔ UI API boundary: one closed vocabulary of plain-data messages.
//!
//! Every way the UI can make the core do work is a [`Request`] variant; every answer is a
//! [`Response`]. Both travel inside an [`Envelope`] whose `seq` pairs a reply with its request
//! (progress and problems carry the `seq` of the `Run` that caused them).
//!
//! Transport (the `worker` and `ui` edges): the envelope is encoded as bytes by [`codec`]
//! and posted with `postMessage` as one `Uint8Array` (`{ env }`). `File` objects travel beside an
//! [`Request::Open`] message, in the order of its `files`. Export bytes travel beside a
//! [`Response::ExportChunk`] as a transferred `ArrayBuffer`, never as one JS string. Byte
//! buffers made by the core travel the same way in both directions: beside
//! [`Response::Inventory`] the side-file bundle the first worker read (posted beside `Open`
//! to the other workers, so the side files are read once per drop), beside
//! [`Response::ExportPart`] an export part (posted beside the next `ExportPart` or the
//! `ExportJoin`).
//!
//! Units are in the field names: `_ms` milliseconds (absolute, epoch-based, as in the CSV),
//! `_kb` KiB, `_mb` MiB, `bytes` bytes.
//!
//! Rank folders are addressed by their index in [`InventoryDto::ranks`]. Every worker builds
//! the same inventory from the same file list, so indices agree across the pool.

use serde::{Deserialize, Serialize};

pub mod anomaly;
pub mod cluster;
pub mod cluster_comm;
pub mod cluster_view;
pub mod codec;
pub mod comm;
pub mod compare;
pub mod gpu;
pub mod memory;
pub mod snapshot;
pub mod snapshot_allocator;
pub mod view_index;

#[allow(unused_imports)]
pub use anomaly::*;
pub use memory::*;
#[allow(unused_imports)]
pub use snapshot::*;
pub use snapshot_allocator::*;

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
    /// A cluster summary file read for the cluster view (`docs/cluster-summary.md`).
    Cluster,
    /// A rank folder's communication tables (`communication.json`,
    /// `communication_matrix.json`), joined across ranks for the Communication tab
    /// (docs/rules/communication.md).
    Comm,
}

impl AnalysisKind {
    /// Every analysis, in the order the UI schedules them.
    pub const ALL: [AnalysisKind; 5] = [
        AnalysisKind::Memory,
        AnalysisKind::Anomaly,
        AnalysisKind::Comm,
        AnalysisKind::Snapshot,
        AnalysisKind::Cluster,
    ];

    /// True when the analysis runs on `target`'s kind of input: memory and anomaly on rank
    /// folders, snapshot on snapshot files.
    pub fn applies_to(self, target: Target) -> bool {
        matches!(
            (self, target),
            (
                AnalysisKind::Memory | AnalysisKind::Anomaly | AnalysisKind::Comm,
                Target::Rank(_)
            ) | (AnalysisKind::Snapshot, Target::Snapshot(_))
                | (AnalysisKind::Cluster, Target::Summary(_))
        )
    }
}

/// What an analysis runs on: an index into the inventory's rank folders
/// ([`InventoryDto::ranks`]) or snapshot files ([`InventoryDto::snapshots`]). Every worker
/// builds the same inventory from the same file list, so a target means the same input on
/// every worker. (One definition for the engine and the wire: `engine::contract` names it.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Target {
    /// Rank folder `i` (memory, anomaly).
    Rank(u32),
    /// Snapshot file `i` (snapshot).
    Snapshot(u32),
    /// Cluster summary file `i` ([`InventoryDto::summaries`]; the cluster view).
    Summary(u32),
}

impl Target {
    /// The index, in the list its kind addresses.
    pub fn index(self) -> u32 {
        match self {
            Target::Rank(i) | Target::Snapshot(i) | Target::Summary(i) => i,
        }
    }

    /// The target of `analysis` with index `i` (a rank folder for memory and anomaly, a
    /// snapshot file for snapshot).
    pub fn of(analysis: AnalysisKind, i: u32) -> Target {
        match analysis {
            AnalysisKind::Memory | AnalysisKind::Anomaly | AnalysisKind::Comm => Target::Rank(i),
            AnalysisKind::Snapshot => Target::Snapshot(i),
            AnalysisKind::Cluster => Target::Summary(i),
        }
    }
}

/// UI → worker: the whole vocabulary. Every analysis uses the same five shapes; a new
/// analysis adds a variant to [`Query`], [`Reply`], [`Summary`] and [`ExportRequest`], never a
/// new kind of message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Request {
    /// The files this worker may read (the `File` objects travel beside, same order).
    /// Replies [`Response::Inventory`]: classification only, no data file is parsed. A
    /// side-file bundle beside the request (from another worker's `Inventory` reply) is read
    /// instead of the side files.
    Open {
        /// Names and sizes.
        files: Vec<FileMeta>,
    },
    /// Runs every analysis of `analyses` that applies to a target ([`AnalysisKind::applies_to`])
    /// on each of `targets`, from ONE read of each of the target's input files (the analyses
    /// of a rank folder share the `trace_view.json` pass); the results stay in the worker for
    /// queries and exports. Replies [`Response::Progress`] while reading, then per (analysis,
    /// target) [`Response::Done`] or [`Response::TargetFailed`], then [`Response::Problems`]
    /// and [`Response::RunDone`].
    Run {
        /// Which analyses.
        analyses: Vec<AnalysisKind>,
        /// Which targets.
        targets: Vec<Target>,
    },
    /// A view query about one target of one analysis, answered from the results the worker
    /// holds. Replies [`Response::Reply`] (or [`Response::Failed`]).
    Query(Query),
    /// An export, the bytes the CLI writes, from the results this worker holds (it holds
    /// every rank folder the export covers). Replies [`Response::ExportChunk`]s then
    /// [`Response::ExportDone`] (or [`Response::Failed`]).
    Export(ExportRequest),
    /// Gathering an export over workers that each hold some rank folders: this
    /// worker's part of round `round` of [`ExportRequest::part_rounds`], written from the
    /// results it holds; no file is read. The buffers beside the request are every worker's
    /// parts of round `round - 1` (none for round 0). Replies [`Response::ExportPart`] with
    /// the part beside it (or [`Response::Failed`]).
    ExportPart {
        /// The export being gathered.
        what: ExportRequest,
        /// Which round.
        round: u32,
    },
    /// Joins every worker's parts of the last round (the buffers beside the request, in any
    /// order) into the export: the CLI's bytes, assembled by the core (`engine::export::gather`).
    /// Replies as [`Request::Export`].
    ExportJoin(ExportRequest),
    /// "Compare with…": side B's files, sent to the worker that holds side A's
    /// results. The worker inventories B, runs every analysis of B's targets from one read of
    /// each file, keeps the results, and compares them with A's stored results (never reading
    /// A again). The `File` objects travel beside, as with [`Request::Open`]. Replies
    /// [`Response::Reply`] with [`Reply::Compare`] (or [`Response::Failed`]).
    Compare(compare::CompareRequest),
    /// The Compare tab's controls: the comparison held here computed again with other
    /// options (devices, overlay axis and alignment, step, rank) from both sides' stored
    /// results — no file is read. Replies as [`Request::Compare`]; on failure the previous
    /// comparison and its exports are kept.
    CompareAgain(compare::CompareOptions),
}

impl Request {
    /// A [`Request::Run`] of one analysis on the targets with indices `targets` (rank folders
    /// for memory and anomaly, snapshot files for snapshot).
    pub fn run(analysis: AnalysisKind, targets: impl IntoIterator<Item = u32>) -> Request {
        Request::Run {
            analyses: vec![analysis],
            targets: targets
                .into_iter()
                .map(|i| Target::of(analysis, i))
                .collect(),
        }
    }
}

/// A query: the variant names the analysis, the query names its target
/// ([`Query::target`]), so the UI routes it to the worker that ran that analysis on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Query {
    /// Memory events view. Replies [`Reply::Memory`].
    Memory(MemoryQuery),
    /// Steps / bubbles view and timeline. Replies [`Reply::Anomaly`].
    Anomaly(AnomalyQuery),
    /// Snapshot view. Replies [`Reply::Snapshot`].
    Snapshot(SnapQuery),
    /// Communication tab (routed to the worker that joined the ranks' tables; `Join`
    /// takes every worker's parts beside it). Replies [`Reply::Comm`].
    Comm(comm::CommQuery),
}

impl Query {
    /// The analysis the query is about.
    pub fn analysis(&self) -> AnalysisKind {
        match self {
            Query::Memory(_) => AnalysisKind::Memory,
            Query::Anomaly(_) => AnalysisKind::Anomaly,
            Query::Snapshot(_) => AnalysisKind::Snapshot,
            Query::Comm(_) => AnalysisKind::Comm,
        }
    }
    /// The target (rank folder or snapshot index) the query is about.
    pub fn target(&self) -> u32 {
        match self {
            Query::Memory(q) => q.rank(),
            Query::Anomaly(q) => q.rank(),
            Query::Snapshot(q) => q.target(),
            Query::Comm(_) => 0,
        }
    }
}

/// The answer to a [`Query`], in the same analysis' vocabulary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Reply {
    /// Answer to [`Query::Memory`].
    Memory(MemoryReply),
    /// Answer to [`Query::Anomaly`].
    Anomaly(AnomalyReply),
    /// Answer to [`Query::Snapshot`].
    Snapshot(SnapReply),
    /// Answer to [`Request::Compare`].
    Compare(Box<compare::CompareViewDto>),
    /// Answer to [`Query::Comm`].
    Comm(comm::CommReply),
}

/// What one target's analysis produced: the payload of [`Response::Done`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Summary {
    /// A rank folder's memory summary.
    Memory(MemorySummaryDto),
    /// A rank folder's steps / bubbles summary.
    Anomaly(AnomalySummaryDto),
    /// A snapshot file's summary.
    Snapshot(SnapshotSummaryDto),
    /// A cluster summary file, whole (the cluster view renders it without further queries).
    Cluster(Box<cluster_view::ClusterViewDto>),
    /// A rank folder's communication read.
    Comm(comm::CommRankDto),
}

impl Summary {
    /// The analysis it summarises.
    pub fn analysis(&self) -> AnalysisKind {
        match self {
            Summary::Memory(_) => AnalysisKind::Memory,
            Summary::Anomaly(_) => AnalysisKind::Anomaly,
            Summary::Snapshot(_) => AnalysisKind::Snapshot,
            Summary::Cluster(_) => AnalysisKind::Cluster,
            Summary::Comm(_) => AnalysisKind::Comm,
        }
    }
}

/// An export request. Memory and anomaly exports cover every rank folder, as their CLI
/// commands do: written by the worker that holds every rank folder, or gathered from the
/// workers that hold them ([`Request::ExportPart`], [`Request::ExportJoin`]); a snapshot
/// export is written by the worker that holds the snapshot, with its current settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ExportRequest {
    /// `proflens memory --format csv|json|md` over every rank folder.
    Memory(MemoryExportKind),
    /// `proflens anomaly` outputs; `rank` picks the rank of the per-rank Markdown reports.
    Anomaly {
        /// What to write.
        what: AnomalyExportKind,
        /// Rank folder of the per-rank Markdown reports.
        rank: Option<u32>,
    },
    /// `proflens snapshot --report|--json` of snapshot `target`.
    Snapshot {
        /// Snapshot index.
        target: u32,
        /// What to write.
        what: SnapExportKind,
    },
    /// `proflens diff A B --json|--md` of the comparison the worker holds
    /// ([`Request::Compare`]).
    Compare(compare::CompareExportKind),
    /// `proflens comm` outputs, from the report joined across ranks ([`comm::CommQuery::Join`]
    /// gathers round 0: every worker's per-rank tables).
    Comm(comm::CommExportKind),
}

impl ExportRequest {
    /// Rounds of [`Request::ExportPart`] before [`Request::ExportJoin`] when the rank folders
    /// are spread over workers: memory 1 (each worker's rows, merged in §9.0 order by the
    /// join); anomaly 2 (round 0: each rank's cross-rank inputs, anomaly.md §13.4, and GPU
    /// collectives; round 1: each rank's pieces rendered with every rank's inputs); snapshot
    /// 0 (one worker holds the snapshot, or the comparison).
    pub fn part_rounds(&self) -> u32 {
        match self {
            ExportRequest::Memory(_) => 1,
            ExportRequest::Anomaly { .. } => 2,
            ExportRequest::Snapshot { .. } | ExportRequest::Compare(_) => 0,
            ExportRequest::Comm(_) => 1,
        }
    }
}

/// Worker → UI.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Response {
    /// The worker's wasm is loaded and it accepts requests.
    Ready,
    /// What was dropped, classified (reply to [`Request::Open`]). When the worker read the
    /// side files itself (no bundle beside the `Open`), the bundle of their bytes travels
    /// beside this reply, for the other workers' `Open`.
    Inventory(InventoryDto),
    /// Bytes read of one file (at least every 250 ms while reading, and at its end).
    Progress(ProgressDto),
    /// One target finished its analysis ([`Summary::analysis`]); its queries may follow.
    Done {
        /// Target index (rank folder or snapshot, see [`Request::Run`]).
        target: u32,
        /// The summary of the result.
        summary: Summary,
    },
    /// One target could not be analysed; the others go on.
    TargetFailed {
        /// The analysis that failed.
        analysis: AnalysisKind,
        /// Target index (rank folder or snapshot, see [`Request::Run`]).
        target: u32,
        /// What went wrong, with the file and position when known.
        message: String,
    },
    /// Findings that did not stop the analysis (capped list plus exact counts).
    Problems(ProblemsDto),
    /// Every target of a [`Request::Run`] is finished (done or failed).
    RunDone {
        /// (analysis, target) pairs analysed.
        done: u32,
        /// (analysis, target) pairs that failed.
        failed: u32,
    },
    /// Reply to [`Request::Query`].
    Reply(Reply),
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
    /// Reply to [`Request::ExportPart`]: this worker's part travels beside as a transferred
    /// `ArrayBuffer` (never through the UI's wasm memory).
    ExportPart {
        /// The round answered.
        round: u32,
        /// Number of bytes in the attached buffer.
        bytes: u64,
    },
    /// Posted by the worker edge after each request: the size of its wasm linear memory
    /// (it never shrinks, so this is the peak so far; the page's memory budget meter).
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
    /// GPU ranks (PyTorch profiler traces): device names from `deviceProperties`.
    #[serde(default)]
    pub gpu_device: Option<String>,
    /// GPU ranks: `CUDA 12.8` (from `cuda_runtime_version`), `CUDA` (from `cuda…` runtime
    /// calls or an NVIDIA device) or `ROCm`.
    #[serde(default)]
    pub gpu_runtime: Option<String>,
    /// A GPU rank (a PyTorch profiler trace): its card shows the GPU fields, not the Ascend
    /// ones (level, export, torch_npu, CANN), which such a rank never has.
    #[serde(default)]
    pub kineto: bool,
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
    /// Snapshot pickle candidates (torch-snapshot.md).
    pub snapshots: Vec<FileDto>,
    /// Cluster summary files (`"format": "proflens-cluster-summary"`).
    #[serde(default)]
    pub summaries: Vec<FileDto>,
    /// Files outside every rank folder (listed, never silently dropped); `kind` holds the reason.
    pub ignored: Vec<FileDto>,
    /// Total bytes dropped.
    pub total_bytes: u64,
    /// Inventory-level problems (no rank folder, unreadable metadata…).
    pub problems: Vec<ProblemDto>,
}
