//! Payloads of the steps / bubbles / anomalies view (anomaly.md). Plain data computed
//! by `views::anomaly*` in the worker from one rank's analysis; the UI only renders them.
//!
//! Units are in the field names: `_us` microseconds (absolute, the kernel clock), `_ms`
//! milliseconds (durations), `_ratio` / `_pct` fractions in [0, 1]. Every query names the rank
//! folder by its index in the inventory (`rank`), so the UI sends it to the worker that owns it.
//!
//! One request variant ([`AnomalyQuery`]) and one response variant ([`AnomalyReply`]) carry the
//! whole view vocabulary, so other views of the same analysis (the timeline) append variants here.

use serde::{Deserialize, Serialize};

mod cross_rank;
mod timeline;

pub use cross_rank::*;
pub use timeline::*;

/// One tag with where it was found (anomaly.md §5.10).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TagDto {
    /// Spec spelling, e.g. `PRELAUNCH_GAP_HEAVY`.
    pub tag: String,
    /// `step` (per-step tags, §5.10.1 / §5.10.3), `group` (dominant group) or `rank` (top level).
    pub scope: String,
    /// Steps carrying it (step scope), else 0.
    pub steps: u32,
    /// `high` for the HEAVY tags and risk tags that set a follow-up, `medium` for other risks,
    /// `info` for capture-boundary / pattern notes (display emphasis only; the analysis' own
    /// severity is [`AnomalySummaryDto::severity`]).
    pub level: String,
}

/// Summary of one rank's anomaly analysis (the cards; also the cross-rank inputs, §13.4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnomalySummaryDto {
    /// Rank folder index.
    pub rank: u32,
    /// Rank id, when known.
    pub rank_id: Option<i64>,
    /// Role (parent folder).
    pub role: String,
    /// Rank folder path.
    pub dir: String,
    /// False when no kernel intervals were available (aggregate-only input).
    pub enabled: bool,
    /// Number of steps.
    pub steps: u32,
    /// §3.1 `step_detection_method` (`marker`, `pseudo`, …).
    pub step_detection_method: String,
    /// Kernels of the rank.
    pub kernels: u64,
    /// Mean step service, ms.
    pub service_ms_avg: f64,
    /// Mean step device busy union, ms.
    pub busy_union_ms_avg: f64,
    /// Mean step underfeed ratio.
    pub underfeed_ratio_avg: f64,
    /// Mean internal bubbles per step.
    pub bubble_count_avg: f64,
    /// Dominant group's `dominant_idle_pattern` (§5.11.2), `none` without groups.
    pub dominant_idle_pattern: String,
    /// Dominant group's severity (§5.11.1): `none`, `medium`, `high`.
    pub severity: String,
    /// Dominant group's `hidden_issue_present`.
    pub hidden_issue_present: bool,
    /// Dominant group's `host_risk_level` (§5.11.3).
    pub host_risk_level: String,
    /// §5.17 confidence.
    pub confidence: String,
    /// §5.11.4 `requires_host_followup`.
    pub requires_host_followup: bool,
    /// Every tag of the rank, step tags first (emission order).
    pub tags: Vec<TagDto>,
    /// Emitted bubble windows (§5.6).
    pub bubbles: u32,
    /// Candidate labels over the emitted windows with their counts (filter choices).
    pub labels: Vec<(String, u32)>,
    /// Global capture span, ms (§5.5).
    pub capture_span_ms: f64,
    /// Global device gap ratio (§5.5).
    pub device_gap_ratio: f64,
    /// Largest global gap, ms.
    pub largest_gap_ms: f64,
    /// Capture start and end, µs (kernel clock), when kernels exist.
    pub capture_us: Option<(f64, f64)>,
    /// True for a GPU rank (a PyTorch profiler trace).
    #[serde(default)]
    pub gpu: bool,
    /// A GPU rank's devices as the whole trace names them (`deviceProperties[].name`,
    /// distinct, `", "`-joined): the member may follow the events, past the head the
    /// inventory read, so the rank card takes it from here when its own is empty.
    #[serde(default)]
    pub gpu_device: Option<String>,
    /// A GPU rank's runtime as the whole trace's members name it
    /// (`ingest::kineto::runtime_text`), for the same use.
    #[serde(default)]
    pub gpu_runtime: Option<String>,
    /// The origin of every relative time of the tab (tables, bubble panel, timeline), µs on the
    /// kernel clock: `views::anomaly::time_origin_ns`. `None` without steps and kernels.
    #[serde(default)]
    pub origin_us: Option<f64>,
    /// Communication total, ms (communication.json when present, else comm kernels).
    pub comm_total_ms: f64,
    /// Elapse-weighted `Wait Time Ratio` of communication.json.
    pub comm_wait_ratio_weighted: Option<f64>,
    /// Device streams (sorted keys).
    pub streams: Vec<String>,
    /// §9 limitation notes (thin data: Level0, no stacks, one step…), for the UI's notes.
    pub limitations: Vec<String>,
    /// The run's check of the rank number against the `distributedInfo` it read after the
    /// trace events (formats.md §8), for the rank card: `(code of the inventory's note it
    /// replaces, the check as `CODE: message`)`; `None` when the run checked nothing.
    #[serde(default)]
    pub rank_check: Option<(String, String)>,
}

/// One row of the step table: every §5.4 metric, §3.4 inventory, §4.5 perspectives and tags.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRowDto {
    /// Step index in the rank (time order).
    pub index: u32,
    /// `ProfilerStep#50`, `pseudo_step_0`, …
    pub step_id: String,
    /// Group id.
    pub group_id: String,
    /// Window start, µs.
    pub start_us: f64,
    /// Window end, µs.
    pub end_us: f64,
    /// `service_ms`.
    pub service_ms: f64,
    /// `device_busy_union_ms`.
    pub device_busy_union_ms: f64,
    /// `underfeed_ms`.
    pub underfeed_ms: f64,
    /// `underfeed_ratio`.
    pub underfeed_ratio: f64,
    /// `prelaunch_gap_ms`.
    pub prelaunch_gap_ms: f64,
    /// `tail_gap_ms`.
    pub tail_gap_ms: f64,
    /// `internal_bubble_total_ms`.
    pub internal_bubble_total_ms: f64,
    /// `largest_internal_bubble_ms`.
    pub largest_internal_bubble_ms: f64,
    /// `bubble_count` (all internal bubbles, not only emitted ones).
    pub bubble_count: u32,
    /// `total_kernel_count`.
    pub kernel_count: u32,
    /// AI_CORE, AI_CPU, HCCL, OTHER counts.
    pub class_counts: [u32; 4],
    /// `kernel_wait_sum_ms`.
    pub kernel_wait_sum_ms: f64,
    /// Distinct streams.
    pub stream_count: u32,
    /// Main compute stream (§4.1).
    pub main_stream: Option<String>,
    /// §4.5 `wall_ms`.
    pub wall_ms: f64,
    /// §4.5 `kernel_sum_ms`.
    pub kernel_sum_ms: f64,
    /// §4.5 `total_cost_ms`.
    pub total_cost_ms: f64,
    /// Small kernels (< 10 µs) and the §5.15 verdict.
    pub small_ops: (u32, String),
    /// Step tags.
    pub tags: Vec<String>,
    /// Union of its windows' labels.
    pub labels: Vec<String>,
    /// Truncated first/last step (§5.10.3).
    pub truncated: bool,
}

/// One device kernel as the bubble panel and the timeline show it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelDto {
    /// Index in the rank's sorted kernel table.
    pub index: u32,
    /// `Name`.
    pub name: String,
    /// Raw `Accelerator Core` / `Task Type` text.
    pub task_type: String,
    /// `AI_CORE`, `AI_CPU`, `HCCL`, `OTHER`.
    pub task_class: String,
    /// Start, µs.
    pub start_us: f64,
    /// Duration, µs.
    pub dur_us: f64,
    /// Wait, µs.
    pub wait_us: f64,
    /// Stream key.
    pub stream: String,
    /// 1-based line in the kernel CSV (0 when from the trace).
    pub row: u64,
}

/// Columns the bubble list sorts by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BubbleColumn {
    /// Output order (global, then steps in time; §6.1).
    Order,
    /// Start time.
    Start,
    /// Duration.
    Duration,
    /// Scope.
    Scope,
    /// Host visible coverage ratio (null sorts as −1).
    Host,
    /// Sync marker overlap ratio.
    Sync,
    /// Comm marker overlap ratio.
    Comm,
}

/// A page of the bubble list, sorted and filtered in the worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BubbleQuery {
    /// Rank folder index.
    pub rank: u32,
    /// Sort column and direction (largest first when `descending`).
    pub sort: BubbleColumn,
    /// Descending.
    pub descending: bool,
    /// Keep windows carrying this candidate label (`""` = all).
    pub label: String,
    /// Keep windows of this scope (`global`, `prelaunch`, `step_internal`, `tail`; `""` = all).
    pub scope: String,
    /// Keep windows of this step index only.
    pub step: Option<u32>,
    /// First row of the page.
    pub offset: u32,
    /// Rows wanted.
    pub limit: u32,
}

/// One emitted bubble window (anomaly.md §5.6, §6.4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BubbleRowDto {
    /// Index in the rank's emitted windows (output order): the id for [`AnomalyQuery::Bubble`].
    pub index: u32,
    /// `<step_id>:<scope>:<ordinal>`.
    pub bubble_id: String,
    /// `global`, `prelaunch`, `step_internal`, `tail`.
    pub scope: String,
    /// Step id, `global` for global windows.
    pub step_id: String,
    /// Step index, `None` for global windows.
    pub step: Option<u32>,
    /// Start, µs.
    pub start_us: f64,
    /// End, µs.
    pub end_us: f64,
    /// Duration, ms.
    pub duration_ms: f64,
    /// `host_visible_coverage_ratio`.
    pub host_ratio: Option<f64>,
    /// `sync_marker_overlap_ratio`.
    pub sync_ratio: Option<f64>,
    /// `comm_marker_overlap_ratio`.
    pub comm_ratio: Option<f64>,
    /// `candidate_labels` (§5.8 order).
    pub labels: Vec<String>,
    /// Significant (§5.6).
    pub significant: bool,
    /// Containing structure.
    pub structure_id: Option<String>,
    /// Lies between two structures.
    pub between_structures: bool,
    /// Window tags (`PARTIAL_CAPTURE_BOUNDARY`).
    pub tags: Vec<String>,
}

/// A page of bubbles.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BubblePage {
    /// Rank folder index.
    pub rank: u32,
    /// Emitted windows of the rank.
    pub total: u32,
    /// Windows passing the filter.
    pub matching: u32,
    /// Offset of `rows[0]`.
    pub offset: u32,
    /// The page.
    pub rows: Vec<BubbleRowDto>,
}

/// Everything about one bubble: window, ratios, labels, evidence, the kernels around it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BubbleDetailDto {
    /// Rank folder index.
    pub rank: u32,
    /// The row.
    pub bubble: BubbleRowDto,
    /// Its step's window, µs.
    pub step_window_us: Option<(f64, f64)>,
    /// Kernel with the greatest end ≤ the bubble start (all streams).
    pub before: Option<KernelDto>,
    /// Kernel with the smallest start ≥ the bubble end (all streams).
    pub after: Option<KernelDto>,
    /// Last main-stream kernel before.
    pub before_main: Option<KernelDto>,
    /// First main-stream kernel after.
    pub after_main: Option<KernelDto>,
    /// `evidence_ops` strings as in the JSON.
    pub evidence_ops: Vec<String>,
    /// `host_parallelism_hint` (§5.8).
    pub host_parallelism_hint: Option<f64>,
    /// `h2d_flow_count`.
    pub h2d_flow_count: u64,
    /// Why each label was given (the §5.8 rule that fired, with its numbers).
    pub reasons: Vec<String>,
}

/// One node of the structure breakdown tree (step → structure → block/side → op).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TreeNodeDto {
    /// `step`, `structure`, `block`, `side`, `op`.
    pub kind: String,
    /// Label (step id, structure id, `block`/`side`, op name).
    pub label: String,
    /// Extra text (structure type, dominant stream/task type, …).
    pub detail: String,
    /// Kernels under the node.
    pub kernel_count: u32,
    /// §4.5 `wall_ms`.
    pub wall_ms: f64,
    /// §4.5 `busy_union_ms`.
    pub busy_union_ms: f64,
    /// §4.5 `kernel_sum_ms`.
    pub kernel_sum_ms: f64,
    /// §4.5 `total_cost_ms`.
    pub total_cost_ms: f64,
    /// Children, largest `kernel_sum_ms` first for ops, time order otherwise.
    pub children: Vec<TreeNodeDto>,
    /// Children left out (ops beyond the cap), with their kernel count.
    pub more: (u32, u32),
}

/// The structure breakdown of one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StructureTreeDto {
    /// Rank folder index.
    pub rank: u32,
    /// Step index.
    pub step: u32,
    /// Segmentation method (`repetition`, `fia`, `annotation`, `none`…).
    pub method: String,
    /// The step node.
    pub root: TreeNodeDto,
}

/// One op of the wait-anchor ranking (anomaly.md §5.12).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WaitAnchorRowDto {
    /// Op name.
    pub op_name: String,
    /// Calls.
    pub call_count: u32,
    /// Mean duration, µs.
    pub duration_us_avg: f64,
    /// Σ duration, µs.
    pub duration_us_total: f64,
    /// Mean wait, µs.
    pub wait_us_avg: f64,
    /// Mean duration + wait, µs.
    pub total_cost_us_avg: f64,
    /// `wait_us_avg / total_cost_us_avg`.
    pub wait_ratio: f64,
    /// Dominant task class.
    pub task_type: String,
    /// Rank by total cost (1-based).
    pub total_cost_rank: u32,
    /// Rank by duration (1-based).
    pub duration_rank: u32,
    /// `WAIT_ANCHOR_FALSE_HOTSPOT`.
    pub is_false_hotspot_risk: bool,
    /// Op-level `WAIT_POLLUTION_RISK`.
    pub wait_pollution: bool,
}

/// One AI_CPU op (anomaly.md §5.14).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AicpuRowDto {
    /// Op name.
    pub op_name: String,
    /// Calls.
    pub call_count: u32,
    /// Σ duration, ms.
    pub duration_ms: f64,
    /// Σ masked / Σ dur.
    pub masked_ratio: f64,
    /// `AICPU_MASKED_BUT_UNDESIRABLE`, `AICPU_PARTIALLY_EXPOSED`, `AICPU_EXPOSED_NOT_ALLOWED`.
    pub class: String,
    /// Exposed time, ms.
    pub exposed_ms: f64,
}

/// The op tables of one rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnomalyOpsDto {
    /// Rank folder index.
    pub rank: u32,
    /// Wait-anchor ranking, by total-cost rank (at most 100).
    pub wait_anchors: Vec<WaitAnchorRowDto>,
    /// Ops in the ranking.
    pub wait_anchor_total: u32,
    /// AICPU ops.
    pub aicpu: Vec<AicpuRowDto>,
    /// PMU verdicts `(op, verdict)`, `None` = "PMU judgement unavailable" (§5.15).
    pub pmu: Option<Vec<(String, String)>>,
}

/// What the anomaly exports write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AnomalyExportKind {
    /// The JSON array over every rank, byte-identical to `proflens anomaly <folder>`.
    Json,
    /// `anomaly_report_<dir>[_rank<N>].md` of one rank (as `--report-dir` writes it).
    ReportMd,
    /// `model_architecture_report_<dir>[_rank<N>].md` of one rank.
    ArchitectureMd,
    /// Steps of every rank as CSV.
    StepsCsv,
    /// Emitted bubble windows of every rank as CSV.
    BubblesCsv,
    /// `kernels_<dir>[[_<role>]_rank<N>].csv` of one GPU rank: its kernel table (as
    /// `--report-dir` writes it next to the reports).
    KernelsCsv,
}

/// A query about one analysed rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum AnomalyQuery {
    /// The step table. Replies [`AnomalyReply::Steps`].
    Steps {
        /// Rank folder index.
        rank: u32,
    },
    /// A page of bubbles. Replies [`AnomalyReply::Bubbles`].
    Bubbles(BubbleQuery),
    /// One bubble in full. Replies [`AnomalyReply::Bubble`].
    Bubble {
        /// Rank folder index.
        rank: u32,
        /// [`BubbleRowDto::index`].
        index: u32,
    },
    /// The structure tree of one step. Replies [`AnomalyReply::Structure`].
    Structure {
        /// Rank folder index.
        rank: u32,
        /// Step index.
        step: u32,
    },
    /// Wait-anchor, AICPU and PMU tables. Replies [`AnomalyReply::Ops`].
    Ops {
        /// Rank folder index.
        rank: u32,
    },
    /// The steps/bubbles timeline for one visible window, merged for a chart `width_px`
    /// wide (views::timeline). Replies [`AnomalyReply::Timeline`].
    Timeline {
        /// Rank folder index.
        rank: u32,
        /// Visible window, ms relative to [`TimelineDto::origin_ms`]; `None` = everything.
        x_range_ms: Option<(f64, f64)>,
        /// Chart width in pixels.
        width_px: u32,
    },
    /// The kernel (device lane) or host event (host lane) under the pointer.
    /// Replies [`AnomalyReply::KernelAt`].
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
    /// The GPU panel of a GPU rank, memory curves `width_px` columns wide.
    /// Replies [`AnomalyReply::Gpu`].
    Gpu {
        /// Rank folder index.
        rank: u32,
        /// Width of the memory-counter chart, px.
        width_px: u32,
    },
    /// The collectives of a GPU rank, for the straggler view across ranks.
    /// Replies [`AnomalyReply::Collectives`].
    Collectives {
        /// Rank folder index.
        rank: u32,
    },
    /// Kernels and host events whose name contains `text` (ASCII case-insensitive), in time
    /// order, at most `limit` of them. Replies [`AnomalyReply::Search`].
    Search {
        /// Rank folder index.
        rank: u32,
        /// Text to find in the names.
        text: String,
        /// At most this many matches are returned (the total is counted).
        limit: u32,
    },
    /// The launch → device links of one timeline item ([`TimelineItemDto::lane`] and
    /// [`TimelineItemDto::index`]): a kernel's launching host call, or the kernels launched
    /// from inside a host event (views::timeline_flows). Replies [`AnomalyReply::Flows`].
    Flows {
        /// Rank folder index.
        rank: u32,
        /// Lane id of the item.
        lane: u32,
        /// Item index ([`TimelineItemDto::index`]).
        index: u32,
        /// At most this many links are returned (the total is counted).
        limit: u32,
    },
}

impl AnomalyQuery {
    /// The rank folder the query is about (routes it to its worker).
    pub fn rank(&self) -> u32 {
        match self {
            AnomalyQuery::Steps { rank }
            | AnomalyQuery::Bubble { rank, .. }
            | AnomalyQuery::Structure { rank, .. }
            | AnomalyQuery::Ops { rank }
            | AnomalyQuery::Gpu { rank, .. }
            | AnomalyQuery::Collectives { rank }
            | AnomalyQuery::Timeline { rank, .. }
            | AnomalyQuery::KernelAt { rank, .. }
            | AnomalyQuery::Search { rank, .. }
            | AnomalyQuery::Flows { rank, .. } => *rank,
            AnomalyQuery::Bubbles(q) => q.rank,
        }
    }
}

/// Answers to [`AnomalyQuery`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum AnomalyReply {
    /// Steps of a rank.
    Steps {
        /// Rank folder index.
        rank: u32,
        /// Rows in time order.
        steps: Vec<StepRowDto>,
    },
    /// A bubble page.
    Bubbles(BubblePage),
    /// One bubble.
    Bubble(BubbleDetailDto),
    /// A structure tree.
    Structure(StructureTreeDto),
    /// Op tables.
    Ops(AnomalyOpsDto),
    /// The GPU panel of a GPU rank.
    Gpu(Box<super::gpu::GpuPanelDto>),
    /// The collectives of a GPU rank.
    Collectives(super::gpu::CollectivesDto),
    /// The timeline of a window.
    Timeline(TimelineDto),
    /// The item under the pointer; `None` when nothing is that close.
    KernelAt(Option<TimelineItemDto>),
    /// Search matches.
    Search(TimelineSearchDto),
    /// The links of one item.
    Flows(TimelineFlowsDto),
}
