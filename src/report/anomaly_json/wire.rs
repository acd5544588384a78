//! Serde wire types of the anomaly JSON (anomaly.md §6, plus the per-rank
//! wrapper of the anomaly JSON). Field names are the spec's; `_ms` = µs / 1000,
//! `_us` in µs, `*_pct` fractions. `Option` fields serialise as `null`.

// Field names, types and units are exactly the spec tables of anomaly.md §4.2, §4.4,
// §6.1–6.6 and §8 (linked from each struct doc); documenting each field again would copy them.
#![allow(missing_docs)]

use crate::report::float::ExactUs;
use serde::Serialize;

/// One rank: `{"rank_id","role","anomaly_discovery","steps","structures",…}`.
#[derive(Clone, Debug, Serialize)]
pub struct RankJson {
    /// Rank id (from the inventory), or null when unknown.
    pub rank_id: Option<i64>,
    /// Role (RL workflow part) or null.
    pub role: Option<String>,
    /// Rank folder, as the user sees it.
    pub rank_dir: String,
    /// The skill-schema object (§6).
    pub anomaly_discovery: DiscoveryJson,
    /// Per-step metrics (§6.3 ext `steps[]`).
    pub steps: Vec<StepJson>,
    /// Structure breakdown of every step (§4).
    pub structures: Vec<StructureJson>,
    /// Tool info: version, compat, inputs, problems.
    pub proflens: ToolJson,
    /// GPU ranks only: HTA breakdowns, kernel categories, overlap, memory, straggler
    /// row (`report::anomaly_json::gpu`); absent on Ascend ranks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<super::gpu::GpuJson>,
}

/// `proflens` block.
#[derive(Clone, Debug, Serialize)]
pub struct ToolJson {
    /// Crate version.
    pub version: &'static str,
    /// `rulebook` or `script`.
    pub compat: &'static str,
    /// Input files used, relative paths.
    pub inputs: Vec<String>,
    /// Problems found while reading (file:line — message).
    pub problems: Vec<String>,
    /// Kernels whose busy end was clipped at the next kernel of their stream
    /// Decision); absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernel_overruns: Vec<OverrunJson>,
}

/// One clipped kernel: `{row, name, task_type, stream, start_us, end_us, clipped_at_us,
/// overrun_us, next_row, next_name}` (times exact µs; `row` = source line, 0 from a trace).
#[derive(Clone, Debug, Serialize)]
pub struct OverrunJson {
    pub row: u64,
    pub name: String,
    pub task_type: String,
    pub stream: String,
    pub start_us: ExactUs,
    pub end_us: ExactUs,
    pub clipped_at_us: ExactUs,
    pub overrun_us: ExactUs,
    pub next_row: u64,
    pub next_name: String,
}

/// §6.1 root.
#[derive(Clone, Debug, Serialize)]
pub struct DiscoveryJson {
    pub enabled: bool,
    pub dominant_group_id: Option<String>,
    pub global_device_gap_analysis: GlobalJson,
    pub step_group_anomalies: Vec<GroupJson>,
    pub bubble_windows: Vec<BubbleJson>,
    pub wait_anchor_ops: Vec<WaitAnchorJson>,
    pub soft_root_cause_summary: Vec<SummaryJson>,
    pub requires_host_followup: bool,
    pub confidence: &'static str,
    pub recommendations: Vec<RecommendationJson>,
    pub structures: Vec<StructureJson>,
    pub comm_totals: CommTotalsJson,
    pub capabilities: CapabilitiesJson,
    pub host_evidence_policy: HostPolicyJson,
    pub step_detection_method: &'static str,
    pub last_step_end: &'static str,
    pub limitations: Vec<String>,
    pub tags: Vec<&'static str>,
    pub aicpu_ops: Vec<AicpuJson>,
    pub pmu_judgement: serde_json::Value,
}

/// §6.2
#[derive(Clone, Debug, Serialize)]
pub struct GlobalJson {
    pub capture_span_ms: f64,
    pub device_busy_union_ms: f64,
    pub device_gap_ms: f64,
    pub device_gap_ratio: f64,
    pub largest_gap_ms: f64,
    pub top_gap_windows: Vec<GapJson>,
    pub capture_start_us: ExactUs,
    pub capture_end_us: ExactUs,
    pub gap_count: usize,
}

/// A `{start_us, end_us, duration_ms}` window.
#[derive(Clone, Debug, Serialize)]
pub struct GapJson {
    pub start_us: ExactUs,
    pub end_us: ExactUs,
    pub duration_ms: f64,
}

/// §6.3
#[derive(Clone, Debug, Serialize)]
pub struct GroupJson {
    pub group_id: String,
    pub group_size: usize,
    pub service_ms_avg: f64,
    pub device_busy_union_ms_avg: f64,
    pub underfeed_ratio_avg: f64,
    pub prelaunch_gap_ms_avg: f64,
    pub tail_gap_ms_avg: f64,
    pub internal_bubble_total_ms_avg: f64,
    pub largest_internal_bubble_ms_p95: f64,
    pub largest_internal_bubble_ms_avg: f64,
    pub recurring_bubble_pattern: bool,
    pub dominant_idle_pattern: &'static str,
    pub dominant_anomaly_tags: Vec<&'static str>,
    pub requires_followup: bool,
    /// `<metric>_median`, `_p90`, `_p95` for the seven metrics.
    pub percentiles: serde_json::Map<String, serde_json::Value>,
    pub hidden_issue_present: bool,
    pub severity: &'static str,
    pub host_risk_level: &'static str,
    pub recurrence_assessable: bool,
    pub recurrence_fraction: f64,
    pub stable_positions: Option<String>,
    pub wait_not_reliable_for_rootcause: bool,
    pub template_hash: String,
    pub step_ids: Vec<String>,
    pub group_tags: Vec<&'static str>,
    pub comm_wait_ratio_weighted: Option<f64>,
}

/// A kernel reference (bubble context, top kernels).
#[derive(Clone, Debug, Serialize)]
pub struct KernelJson {
    pub name: String,
    pub task_type: String,
    pub task_class: &'static str,
    pub dur_us: f64,
    pub wait_us: f64,
    pub stream: String,
    pub start_us: ExactUs,
    pub row: u64,
}

/// §6.4
#[derive(Clone, Debug, Serialize)]
pub struct BubbleJson {
    pub bubble_id: String,
    pub scope: &'static str,
    pub step_id: String,
    pub group_id: Option<String>,
    pub start_us: ExactUs,
    pub end_us: ExactUs,
    pub duration_ms: f64,
    pub host_visible_coverage_ratio: Option<f64>,
    pub sync_marker_overlap_ratio: Option<f64>,
    pub comm_marker_overlap_ratio: Option<f64>,
    pub candidate_labels: Vec<&'static str>,
    pub evidence_ops: Vec<String>,
    pub structure_id: Option<String>,
    pub between_structures: bool,
    pub before_kernel: Option<KernelJson>,
    pub after_kernel: Option<KernelJson>,
    pub before_main_kernel: Option<KernelJson>,
    pub after_main_kernel: Option<KernelJson>,
    pub tags: Vec<&'static str>,
    pub significant: bool,
    pub host_parallelism_hint: Option<f64>,
    pub h2d_flow_count: usize,
    /// proflens extension (GPU traces): `late_host_bound` when the next kernel was
    /// launched at or after the bubble's start, `early_queue_or_dependency` before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_kernel_launch: Option<&'static str>,
    /// proflens extension: next kernel's launch − bubble start, ms (negative = queued earlier).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_kernel_launch_lead_ms: Option<f64>,
}

/// §6.5
#[derive(Clone, Debug, Serialize)]
pub struct WaitAnchorJson {
    pub op_name: String,
    pub location: Option<String>,
    pub duration_us_avg: f64,
    pub wait_us_avg: f64,
    pub total_cost_us_avg: f64,
    pub wait_ratio: f64,
    pub is_false_hotspot_risk: bool,
    pub evidence: Vec<String>,
    pub call_count: usize,
    pub duration_us_total: f64,
    pub total_cost_rank: usize,
    pub duration_rank: usize,
    pub task_type: &'static str,
    pub input_shapes: String,
    pub wait_pollution: bool,
}

/// §6.6
#[derive(Clone, Debug, Serialize)]
pub struct SummaryJson {
    pub label: &'static str,
    pub confidence: &'static str,
    pub scope: &'static str,
    pub target_id: Option<String>,
    pub evidence: Vec<String>,
    pub share: f64,
}

/// §8
#[derive(Clone, Debug, Serialize)]
pub struct RecommendationJson {
    pub id: String,
    pub scope: &'static str,
    pub target_id: Option<String>,
    pub text: String,
    pub followup_required: bool,
    pub evidence_gap: String,
    pub priority: &'static str,
}

/// §5.2 ext `comm_totals`.
#[derive(Clone, Debug, Serialize)]
pub struct CommTotalsJson {
    pub comm_total_ms_kernel_details: f64,
    pub comm_total_ms_communication_json: Option<f64>,
    pub wait_ratio_weighted: Option<f64>,
}

/// §6.1 ext `capabilities`.
#[derive(Clone, Debug, Serialize)]
pub struct CapabilitiesJson {
    pub record_shapes: bool,
    pub record_shapes_source: &'static str,
    pub with_stack: bool,
    pub with_stack_source: &'static str,
    pub profile_memory: bool,
    pub profile_memory_source: &'static str,
    pub with_flops: bool,
    pub with_flops_source: &'static str,
    pub with_modules: bool,
    pub with_modules_source: &'static str,
    pub profiler_level: Option<String>,
    pub pmu: bool,
    pub comm_file: bool,
    pub fia: bool,
    pub trace: bool,
    pub host_event_density: f64,
}

/// §6.1 ext `host_evidence_policy`.
#[derive(Clone, Debug, Serialize)]
pub struct HostPolicyJson {
    pub mode: &'static str,
    pub exclude_step_markers: bool,
    pub exclude_long_events_frac: Option<f64>,
    pub general_class_leaf_only: bool,
    pub host_events_kept: usize,
    pub step_markers_excluded: usize,
}

/// §5.14 op row.
#[derive(Clone, Debug, Serialize)]
pub struct AicpuJson {
    pub op_name: String,
    pub call_count: usize,
    pub duration_ms: f64,
    pub masked_ratio: f64,
    pub class: &'static str,
    pub exposed_ms: f64,
}

/// A `{start_us, end_us}` window.
#[derive(Clone, Debug, Serialize)]
pub struct WindowJson {
    pub start_us: ExactUs,
    pub end_us: ExactUs,
}

/// §4.5 four perspectives.
#[derive(Clone, Debug, Serialize)]
pub struct PerspectivesJson {
    pub wall_ms: f64,
    pub busy_union_ms: f64,
    pub kernel_sum_ms: f64,
    pub total_cost_ms: f64,
}

/// §5.15 small ops.
#[derive(Clone, Debug, Serialize)]
pub struct SmallOpsJson {
    pub count: usize,
    pub duration_ms: f64,
    pub share_of_busy_union: f64,
    pub longest_main_stream_run: usize,
    pub verdict: &'static str,
}

/// One step (§6.3 ext `steps[]`, `steps[]`).
#[derive(Clone, Debug, Serialize)]
pub struct StepJson {
    pub step_id: String,
    pub group_id: String,
    pub window: WindowJson,
    pub service_ms: f64,
    pub device_busy_union_ms: f64,
    /// The busy union without clipping overruns (only when the rank has any).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_busy_union_raw_ms: Option<f64>,
    pub underfeed_ms: f64,
    pub underfeed_ratio: f64,
    pub prelaunch_gap_ms: f64,
    pub tail_gap_ms: f64,
    pub internal_bubble_total_ms: f64,
    pub largest_internal_bubble_ms: f64,
    pub bubble_count: usize,
    pub bubble_intervals: Vec<WindowJson>,
    pub total_kernel_count: usize,
    pub ai_core_count: usize,
    pub ai_cpu_count: usize,
    pub hccl_count: usize,
    pub other_count: usize,
    pub kernel_duration_sum_ms: f64,
    pub kernel_wait_sum_ms: f64,
    pub distinct_streams: Vec<String>,
    pub stream_count: usize,
    pub main_stream: Option<String>,
    pub tags: Vec<&'static str>,
    pub labels: Vec<&'static str>,
    pub four_perspectives: PerspectivesJson,
    pub small_ops: SmallOpsJson,
    pub truncated: bool,
    pub polluted_wait_share: f64,
    pub segmentation: String,
}

/// §4.4 block / side.
#[derive(Clone, Debug, Serialize)]
pub struct PartJson {
    pub kernel_count: usize,
    pub dominant_task_type: String,
    pub dominant_stream: String,
    pub top_kernels_by_duration: Vec<KernelJson>,
    pub top_kernels_by_total_cost: Vec<KernelJson>,
    /// The five kernels with the largest wait ratio above 0.8 (§4.4), of `wait_heavy_count`.
    pub wait_heavy_kernels: Vec<KernelJson>,
    pub wait_heavy_count: usize,
    pub wall_ms: f64,
    pub busy_union_ms: f64,
    pub kernel_sum_ms: f64,
    pub total_cost_ms: f64,
    pub internal_bubble_total_ms: f64,
    pub largest_internal_bubble_ms: f64,
    pub bubble_count: usize,
}

/// §4.2 structure.
#[derive(Clone, Debug, Serialize)]
pub struct StructureJson {
    pub step_id: String,
    pub structure_id: String,
    pub structure_type: String,
    pub kernel_count: usize,
    pub start_us: ExactUs,
    pub end_us: ExactUs,
    pub wall_ms: f64,
    pub device_busy_union_ms: f64,
    pub busy_union_ms: f64,
    pub kernel_sum_ms: f64,
    pub total_cost_ms: f64,
    pub ai_core_pct: f64,
    pub ai_cpu_pct: f64,
    pub hccl_pct: f64,
    pub structure_share: f64,
    pub prelaunch_gap_ms: f64,
    pub tail_gap_ms: f64,
    pub internal_bubble_total_ms: f64,
    pub largest_internal_bubble_ms: f64,
    pub bubble_count: usize,
    pub inter_structure_gap_ms: f64,
    pub opens_with_gap: bool,
    pub block: PartJson,
    pub side: PartJson,
    pub block_side_gap_ms: f64,
    pub comm_overlap_ratio: Option<f64>,
}
