//! Every threshold of the anomaly analysis in one place, with the spec
//! defaults (anomaly.md §10). Keys mirror the spec's `anomaly.<key>` names.

/// Which of the skill's two readings to follow where its prose and its
/// reference script disagree (anomaly.md §0.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Compat {
    /// The rulebook reading (default): ANY-of-4 DEVICE_IDLE, stable positions,
    /// host-event hygiene, `host_parallelism_hint` computed, extended host classes.
    #[default]
    Rulebook,
    /// `reference_host_gap_branch.py` exactly: no hygiene, underfeed-only DEVICE_IDLE, …
    Script,
}

impl Compat {
    /// The spec's spelling: `rulebook` or `script`.
    pub fn as_str(self) -> &'static str {
        match self {
            Compat::Rulebook => "rulebook",
            Compat::Script => "script",
        }
    }
}

/// How the last step's window ends (anomaly.md §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LastStepEnd {
    /// End of the last kernel that starts in `[S_last, ∞)` (skill default).
    #[default]
    LastKernel,
    /// `ts + dur` of the last marker (flagged as a deviation in the output).
    MarkerEnd,
}

/// All thresholds (anomaly.md §10). Times in the units named by the field suffix.
#[derive(Clone, Debug, PartialEq)]
pub struct AnomalyConfig {
    /// §0.3 compatibility switch.
    pub compat: Compat,
    /// §3.2 last-step window end.
    pub last_step_end: LastStepEnd,
    /// §3.1 item 3: user step-marker regex-free pattern: a name prefix (empty = off).
    pub custom_step_prefix: String,
    /// DEVICE_IDLE, hidden issue, risk tags: `underfeed_ratio ≥` this (0.30).
    pub underfeed_heavy_ratio: f64,
    /// HEAVY tags: `G = max(gap_heavy_floor_ms, gap_heavy_service_frac × service_ms)` (1.0 ms).
    pub gap_heavy_floor_ms: f64,
    /// See `gap_heavy_floor_ms` (0.10).
    pub gap_heavy_service_frac: f64,
    /// RECURRING / stable positions fraction (0.60).
    pub recurrence_frac: f64,
    /// Stable-position bin width as a fraction of service (0.05).
    pub stable_position_bin: f64,
    /// Label 1: sync overlap ≥ (0.20).
    pub sync_overlap_min: f64,
    /// Label 2: comm overlap ≥ (0.20).
    pub comm_overlap_min: f64,
    /// Label 3 / sparse host: host coverage < (0.05).
    pub host_untraced_max: f64,
    /// Label 4: host coverage ≥ (0.10).
    pub host_launch_lag_min: f64,
    /// Label 5: parallelism hint < (1.2).
    pub host_parallelism_max: f64,
    /// Hygiene: drop host events longer than this fraction of the step service (0.5).
    pub host_long_event_frac: f64,
    /// §5.6 internal bubbles shorter than this are not emitted (50 µs).
    pub bubble_emit_floor_us: f64,
    /// §5.6 at most this many internal bubbles per step are emitted (50).
    pub bubble_emit_max_per_step: usize,
    /// §5.6 significant: ≥ max(floor, frac × service) (1.0 ms).
    pub significant_floor_ms: f64,
    /// See `significant_floor_ms` (0.01).
    pub significant_service_frac: f64,
    /// §5.5/§5.6 top-N windows (5).
    pub top_n_windows: usize,
    /// §5.12 wait anchor: `wait_ratio >` (0.95).
    pub wait_anchor_ratio: f64,
    /// §5.12 wait anchor: `duration_us_avg <` (10.0 µs).
    pub wait_anchor_dur_us: f64,
    /// §5.12 wait anchor: `total_cost_rank ≤` (10).
    pub wait_anchor_rank: usize,
    /// §4.4 wait-heavy kernel: `wait/(dur+wait) >` (0.8).
    pub wait_heavy_kernel_ratio: f64,
    /// §5.14 AICPU masked ≥ (0.9).
    pub aicpu_masked: f64,
    /// §5.14 AICPU partially exposed ≥ (0.2).
    pub aicpu_partial: f64,
    /// §5.14 AICPU adjacency to a bubble edge (5 µs).
    pub aicpu_adjacent_us: f64,
    /// §4.3/§5.15 small kernel: `dur <` (10 µs).
    pub small_kernel_us: f64,
    /// §5.15 small-op inefficiency share of the busy union (0.10).
    pub small_op_ineff_frac: f64,
    /// §5.15 run of small ops bordering a bubble (5).
    pub small_op_run: usize,
    /// §5.15 PMU bound ratio (0.8).
    pub pmu_bound_ratio: f64,
    /// §4.4 top kernels per block/side (5).
    pub top_kernels_n: usize,
    /// §3.5 grouping: count tolerance (0.02).
    pub group_count_tol: f64,
    /// §3.5 grouping: multiset Jaccard ≥ (0.90).
    pub group_jaccard_min: f64,
    /// §3.1.1 step annotations: a top-level user annotation family is a step marker when it
    /// occurs at least this many times (2).
    pub step_annotation_min_count: usize,
    /// §3.1.1 step annotations: … and its occurrences hold at least this share of the device
    /// busy union (0.5, `≥`).
    pub step_annotation_min_cover: f64,
    /// §3.2 device lag: device-side windows when, in some marker window, more than this
    /// share of the kernel time (with the overrun tails of §3.2.1) was launched in an earlier
    /// step (0.05, Decision).
    pub device_lag_share: f64,
    /// §5.11.2 `mixed` when second ≥ this × largest (0.7).
    pub mixed_ratio: f64,
    /// §5.11.2 `none` when the max < this (0.1 ms) …
    pub none_floor_ms: f64,
    /// … or < this fraction of the mean service (0.01).
    pub none_service_frac: f64,
    /// §5.11.2 `inter_step` factor (2.0).
    pub inter_step_factor: f64,
    /// §5.13 a kernel is polluted when ≥ this share of its wait lies in comm windows (0.2).
    pub wait_pollution_frac: f64,
    /// §5.13 op-level: share of polluted calls (0.5).
    pub wait_pollution_op_frac: f64,
    /// §5.13 step-level: polluted share of total wait (0.2).
    pub wait_pollution_step_frac: f64,
    /// COMM_SYNC_RISK: wait ratio > (0.5).
    pub comm_wait_ratio_risk: f64,
    /// PARTIAL_CAPTURE_BOUNDARY: edge band as a fraction of the capture span (0.01).
    pub boundary_frac: f64,
    /// PARTIAL_CAPTURE_BOUNDARY: truncated step when kernels < this × group median (0.5).
    pub truncated_step_frac: f64,
    /// VARIABLE_SHAPE: CV of service > (0.10).
    pub shape_cv_min: f64,
    /// §4.5 "≫" ratio (1.5).
    pub approx_much_greater: f64,
    /// §4.5 "≈" tolerance (0.10).
    pub approx_equal_tol: f64,
    /// §11.1 prefill FIA: dur > (10,000 µs).
    pub fia_prefill_us: f64,
    /// §11.1 decode FIA: dur < (1,000 µs).
    pub fia_decode_us: f64,
    /// §11.7 "well hidden" overlap ratio > (0.9).
    pub comm_hidden_ratio: f64,
    /// §11.7 "overlaps with" ratio ≥ (0.1).
    pub stream_overlaps_min: f64,
    /// §13.4 slow rank: service more than this fraction above the median (0.05) …
    pub slow_rank_excess: f64,
    /// … and robust z-score above this (3.0).
    pub slow_rank_z: f64,
}

impl Default for AnomalyConfig {
    fn default() -> Self {
        Self::spec_defaults()
    }
}

impl AnomalyConfig {
    /// The defaults of anomaly.md §10.
    pub fn spec_defaults() -> Self {
        AnomalyConfig {
            compat: Compat::Rulebook,
            last_step_end: LastStepEnd::LastKernel,
            custom_step_prefix: String::new(),
            underfeed_heavy_ratio: 0.30,
            gap_heavy_floor_ms: 1.0,
            gap_heavy_service_frac: 0.10,
            recurrence_frac: 0.60,
            stable_position_bin: 0.05,
            sync_overlap_min: 0.20,
            comm_overlap_min: 0.20,
            host_untraced_max: 0.05,
            host_launch_lag_min: 0.10,
            host_parallelism_max: 1.2,
            host_long_event_frac: 0.5,
            bubble_emit_floor_us: 50.0,
            bubble_emit_max_per_step: 50,
            significant_floor_ms: 1.0,
            significant_service_frac: 0.01,
            top_n_windows: 5,
            wait_anchor_ratio: 0.95,
            wait_anchor_dur_us: 10.0,
            wait_anchor_rank: 10,
            wait_heavy_kernel_ratio: 0.8,
            aicpu_masked: 0.9,
            aicpu_partial: 0.2,
            aicpu_adjacent_us: 5.0,
            small_kernel_us: 10.0,
            small_op_ineff_frac: 0.10,
            small_op_run: 5,
            pmu_bound_ratio: 0.8,
            top_kernels_n: 5,
            group_count_tol: 0.02,
            group_jaccard_min: 0.90,
            step_annotation_min_count: 2,
            step_annotation_min_cover: 0.5,
            device_lag_share: 0.05,
            mixed_ratio: 0.7,
            none_floor_ms: 0.1,
            none_service_frac: 0.01,
            inter_step_factor: 2.0,
            wait_pollution_frac: 0.2,
            wait_pollution_op_frac: 0.5,
            wait_pollution_step_frac: 0.2,
            comm_wait_ratio_risk: 0.5,
            boundary_frac: 0.01,
            truncated_step_frac: 0.5,
            shape_cv_min: 0.10,
            approx_much_greater: 1.5,
            approx_equal_tol: 0.10,
            fia_prefill_us: 10_000.0,
            fia_decode_us: 1_000.0,
            comm_hidden_ratio: 0.9,
            stream_overlaps_min: 0.1,
            slow_rank_excess: 0.05,
            slow_rank_z: 3.0,
        }
    }

    /// The spec defaults with the `script` compatibility switch (§0.3).
    pub fn script_compatible() -> Self {
        AnomalyConfig {
            compat: Compat::Script,
            ..Self::spec_defaults()
        }
    }

    /// `G = max(floor, frac × service_ms)` of §5.10.1, in ms.
    pub fn heavy_gap_ms(&self, service_ms: f64) -> f64 {
        self.gap_heavy_floor_ms
            .max(self.gap_heavy_service_frac * service_ms)
    }
}
