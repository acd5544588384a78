//! The result types of the anomaly analysis of one rank (plain data, ns and f64),
//! what `report` formats and `views` will draw (anomaly.md §5–§6).

use super::groups::GroupResult;
use super::ops::{AicpuOp, SmallOps, WaitAnchorOp};
use super::summary::{Recommendation, SummaryEntry};
use super::tags::Tag;
use crate::analysis::anomaly_config::Compat;
use crate::analysis::bubbles::{GlobalGaps, Window};
use crate::analysis::host_evidence::{Evidence, Label};
use crate::analysis::intervals::{Interval, WindowMetrics};
use crate::analysis::steps::{Inventory, StepMethod};
use crate::analysis::structure::{Perspectives, Segmentation};
use crate::model::kernels::KernelTable;
use crate::model::side_tables::{CommOp, StepTraceRow};
use crate::model::trace_events::HostEventTable;

/// What is known about how the profile was captured (§1.1), before inference.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CaptureInfo {
    /// `record_shapes` from `profiler_info*.json`, when present.
    pub record_shapes: Option<bool>,
    /// `with_stack` from `profiler_info*.json`, when present.
    pub with_stack: Option<bool>,
    /// `profile_memory` from `profiler_info*.json`, when present.
    pub profile_memory: Option<bool>,
    /// `with_flops` from `profiler_info*.json`, when present.
    pub with_flops: Option<bool>,
    /// `with_modules` from `profiler_info*.json`, when present.
    pub with_modules: Option<bool>,
    /// True when the rank folder holds `operator_memory.csv` or `memory_record.csv` (written
    /// only with `profile_memory=True`).
    pub memory_files: bool,
    /// `_profiler_level` from `profiler_info*.json`, when present.
    pub profiler_level: Option<String>,
    /// True when the kernels came from `op_summary` (§1.2.3).
    pub op_summary_only: bool,
    /// True when `communication.json` was read.
    pub comm_file: bool,
    /// True when the kernels came from the trace's device lanes (no kernel CSV).
    pub kernels_from_trace: bool,
    /// True for a GPU (PyTorch profiler) trace: the Ascend side files it never has
    /// (`communication.json`, `kernel_details.csv`, PMU data) are not limitations of the
    /// capture, and the result notes the Ascend-only rules that are not applied
    /// ([`GPU_TRACE_NOTE`]). The capture options above are then the trace's own top-level
    /// members (`"record_shapes": 1`), not `profiler_info`'s.
    pub gpu_trace: bool,
}

/// The limitation every GPU trace's result carries (`CaptureInfo::gpu_trace`).
pub const GPU_TRACE_NOTE: &str = "GPU trace (PyTorch profiler): Ascend-only rules are not applied (the AI_CPU kernel class, HCCL and communication.json specifics, the step_trace_time.csv cross-check, the PMU judgement)";

/// Everything the analysis of one rank reads.
pub struct RankInput<'a> {
    /// Kernels, sorted.
    pub kernels: &'a KernelTable,
    /// Trace events, when `trace_view.json` was read.
    pub trace: Option<&'a HostEventTable>,
    /// `communication.json` ops.
    pub comm_ops: &'a [CommOp],
    /// `step_trace_time.csv` rows.
    pub step_trace: &'a [StepTraceRow],
    /// Capture info.
    pub info: CaptureInfo,
}

/// Capability flags with their sources (§1.1.1, §6.1 ext `capabilities`). Each `*_source` is
/// one of [`CapabilitySource`]'s words.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Capabilities {
    /// Shapes recorded.
    pub record_shapes: bool,
    /// Where `record_shapes` came from.
    pub record_shapes_source: &'static str,
    /// Stacks recorded.
    pub with_stack: bool,
    /// Where `with_stack` came from.
    pub with_stack_source: &'static str,
    /// Memory events recorded.
    pub profile_memory: bool,
    /// Where `profile_memory` came from.
    pub profile_memory_source: &'static str,
    /// FLOP counts recorded.
    pub with_flops: bool,
    /// Where `with_flops` came from.
    pub with_flops_source: &'static str,
    /// Module hierarchy recorded.
    pub with_modules: bool,
    /// Where `with_modules` came from.
    pub with_modules_source: &'static str,
    /// `_profiler_level`.
    pub profiler_level: Option<String>,
    /// PMU columns present.
    pub pmu: bool,
    /// `communication.json` present.
    pub comm_file: bool,
    /// FIA kernels present.
    pub fia: bool,
    /// `trace_view.json` read.
    pub trace: bool,
    /// Host events kept per 100 kernels.
    pub host_event_density: f64,
}

/// Where a capability was read from (§1.1.1), in order of precedence: what the data holds
/// first, then what the capture states, else off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapabilitySource {
    /// The trace's events hold the option's output (`trace_view.json` or the Kineto trace).
    Trace,
    /// The kernel rows carry `Input Shapes` (`kernel_details.csv`, `op_summary`).
    Kernels,
    /// The rank folder holds `operator_memory.csv` / `memory_record.csv`.
    MemoryFiles,
    /// `profiler_info*.json` says so (Ascend), the data holding none of it.
    ProfilerInfo,
    /// The Kineto trace's top-level member says so (`"record_shapes": 1`), the events holding
    /// none of it.
    TraceMetadata,
    /// Nothing says it and the data holds none of it: off.
    Absent,
}

impl CapabilitySource {
    /// The JSON word (`trace`, `kernels`, `memory_files`, `profiler_info`, `trace_metadata`,
    /// `absent`).
    pub fn as_str(self) -> &'static str {
        match self {
            CapabilitySource::Trace => "trace",
            CapabilitySource::Kernels => "kernels",
            CapabilitySource::MemoryFiles => "memory_files",
            CapabilitySource::ProfilerInfo => "profiler_info",
            CapabilitySource::TraceMetadata => "trace_metadata",
            CapabilitySource::Absent => "absent",
        }
    }
}

/// The §5.7.2 ratios, labels and context of one emitted window.
#[derive(Clone, Debug, PartialEq)]
pub struct BubbleResult {
    /// The window (§5.6).
    pub window: Window,
    /// Host evidence (§5.7).
    pub evidence: Evidence,
    /// Soft-attribution labels (§5.8).
    pub labels: Vec<Label>,
    /// Window tags (`PARTIAL_CAPTURE_BOUNDARY`).
    pub tags: Vec<Tag>,
    /// Containing structure id (of its step's segmentation), if any.
    pub structure_id: Option<String>,
    /// Starts at one structure's end and ends at the next one's start.
    pub between_structures: bool,
    /// Launch timing of the kernel after the window, when its launch is known (GPU traces:
    /// `analysis::launch_timing`; `None` on Ascend captures).
    pub next_launch: Option<crate::analysis::launch_timing::NextLaunch>,
}

/// A top internal bubble of a step, for stable-position tests (§5.10.2).
#[derive(Clone, Debug, PartialEq)]
pub struct TopBubble {
    /// `(before.name, after.name)`.
    pub signature: (String, String),
    /// `floor(((start − S) / service) / bin)`.
    pub bin: i64,
}

/// Everything computed for one step.
#[derive(Clone, Debug, PartialEq)]
pub struct StepResult {
    /// `ProfilerStep#50`, …
    pub step_id: String,
    /// Group id.
    pub group_id: String,
    /// Service window.
    pub window: Interval,
    /// Kernel index range (start-in-window).
    pub kernels: std::ops::Range<usize>,
    /// §5.4 metrics (all internal bubbles, not only emitted ones).
    pub metrics: WindowMetrics,
    /// §3.4
    pub inventory: Inventory,
    /// §4.5 over the step's kernels.
    pub perspectives: Perspectives,
    /// Step tags (§5.10.1 + step-scope risk tags).
    pub tags: Vec<Tag>,
    /// Union of its windows' labels.
    pub labels: Vec<Label>,
    /// §5.15
    pub small_ops: SmallOps,
    /// First/last step with < 50 % of the group's median kernel count.
    pub truncated: bool,
    /// Polluted wait / total wait (§5.13).
    pub polluted_wait_share: f64,
    /// §4 segmentation.
    pub segmentation: Segmentation,
    /// Main compute stream key.
    pub main_stream: Option<String>,
    /// Top-5 internal bubbles (signature, bin).
    pub top_internal: Vec<TopBubble>,
    /// Comm ops whose start lies in the window (indices into the input comm ops).
    pub comm_ops: Vec<usize>,
}

/// Communication totals (§5.2).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CommTotals {
    /// Σ comm-kernel durations, ms.
    pub kernel_details_ms: f64,
    /// Σ `Elapse Time(ms)`, when `communication.json` was read.
    pub communication_json_ms: Option<f64>,
    /// Elapse-weighted `Wait Time Ratio`.
    pub wait_ratio_weighted: Option<f64>,
}

impl AnomalyResult {
    /// `step_detection_method` as written (§3.1, with `+device_lag` per §3.2).
    pub fn step_detection_method(&self) -> &'static str {
        self.step_method
            .label(self.device_lag.as_ref().is_some_and(|d| d.applied))
    }
}

/// The whole anomaly result of one rank.
#[derive(Clone, Debug, PartialEq)]
pub struct AnomalyResult {
    /// `true` when kernel intervals were available.
    pub enabled: bool,
    /// Compat mode used.
    pub compat: Compat,
    /// §3.1 method.
    pub step_method: StepMethod,
    /// Notes from step detection.
    pub step_notes: Vec<String>,
    /// The §3.2 device-lag check, when launch steps were known; `applied` says whether
    /// device-side windows replaced the marker windows.
    pub device_lag: Option<crate::analysis::device_lag::DeviceLag>,
    /// Steps.
    pub steps: Vec<StepResult>,
    /// Groups, `g0` first.
    pub groups: Vec<GroupResult>,
    /// §5.5
    pub global: GlobalGaps,
    /// §5.6 windows in output order, with evidence and labels.
    pub bubbles: Vec<BubbleResult>,
    /// §5.12 all ops by total-cost rank.
    pub wait_anchor_ops: Vec<WaitAnchorOp>,
    /// §5.14
    pub aicpu_ops: Vec<AicpuOp>,
    /// §5.15 PMU verdicts, `None` = "PMU judgement unavailable".
    pub pmu: Option<Vec<(String, &'static str)>>,
    /// §5.9
    pub soft_root_cause_summary: Vec<SummaryEntry>,
    /// §5.11.4
    pub requires_host_followup: bool,
    /// §5.17
    pub confidence: &'static str,
    /// §8
    pub recommendations: Vec<Recommendation>,
    /// §5.2
    pub comm: CommTotals,
    /// §1.1
    pub capabilities: Capabilities,
    /// Top-level tags (`PARTIAL_CAPTURE_BOUNDARY`, `UNTRACED_HOST_BLOCKING_RISK`).
    pub top_tags: Vec<Tag>,
    /// §9 limitation notes.
    pub limitations: Vec<String>,
    /// Host events kept / markers excluded (hygiene record).
    pub host_policy: (usize, usize),
    /// Globally merged busy segments (for views: timeline, overlays).
    pub busy_segments: Vec<Interval>,
}
