//! Group aggregation and decision tables (anomaly.md §5.10.2, §5.10.3 group
//! risk tags, §5.10.5, §5.11, §5.16).

use rustc_hash::FxHashMap as HashMap;

use super::tags::Tag;
use super::{BubbleResult, StepResult};
use crate::analysis::anomaly_config::{AnomalyConfig, Compat};
use crate::analysis::bubbles::{GlobalGaps, Scope};
use crate::analysis::intervals::{mean, percentile, Interval};
use crate::base::units::ns_to_ms;

/// avg / median / p90 / p95 of one metric over a group's steps (§5.16).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Stat {
    /// Arithmetic mean.
    pub avg: f64,
    /// Median (type 7).
    pub median: f64,
    /// p90 (type 7).
    pub p90: f64,
    /// p95 (type 7).
    pub p95: f64,
}

impl Stat {
    /// The four statistics of `v`.
    pub fn of(v: &[f64]) -> Self {
        Stat {
            avg: mean(v),
            median: percentile(v, 0.5),
            p90: percentile(v, 0.9),
            p95: percentile(v, 0.95),
        }
    }
}

/// The seven aggregated step metrics of §5.16 (ms, ratio for underfeed).
pub const GROUP_METRICS: [&str; 7] = [
    "service_ms",
    "device_busy_union_ms",
    "underfeed_ratio",
    "prelaunch_gap_ms",
    "tail_gap_ms",
    "internal_bubble_total_ms",
    "largest_internal_bubble_ms",
];

/// Dominant idle pattern (§5.11.2; schema enum).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdlePattern {
    /// Prelaunch gaps dominate.
    Prelaunch,
    /// Internal bubbles dominate.
    InternalBubble,
    /// Tail gaps dominate.
    Tail,
    /// Gaps between step windows dominate.
    InterStep,
    /// Two patterns within 0.7×.
    Mixed,
    /// Nothing notable.
    None,
}

impl IdlePattern {
    /// The schema spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            IdlePattern::Prelaunch => "prelaunch",
            IdlePattern::InternalBubble => "internal_bubble",
            IdlePattern::Tail => "tail",
            IdlePattern::InterStep => "inter_step",
            IdlePattern::Mixed => "mixed",
            IdlePattern::None => "none",
        }
    }
}

/// Severity / risk levels (§5.11.1, §5.11.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// `none` (severity) — also used as `low` for host risk.
    None,
    /// `low` (host risk only).
    Low,
    /// `medium`.
    Medium,
    /// `high`.
    High,
}

impl Level {
    /// Spelling as severity (`none|medium|high`).
    pub fn severity_str(self) -> &'static str {
        match self {
            Level::None | Level::Low => "none",
            Level::Medium => "medium",
            Level::High => "high",
        }
    }
    /// Spelling as host risk (`low|medium|high`).
    pub fn risk_str(self) -> &'static str {
        match self {
            Level::None | Level::Low => "low",
            Level::Medium => "medium",
            Level::High => "high",
        }
    }
}

/// One step group after aggregation (§6.3).
#[derive(Clone, Debug, PartialEq)]
pub struct GroupResult {
    /// `g0`, …
    pub group_id: String,
    /// Indices into the step results.
    pub steps: Vec<usize>,
    /// FNV-1a template hash of its first step.
    pub template_hash: u64,
    /// The seven metrics, in [`GROUP_METRICS`] order.
    pub stats: [Stat; 7],
    /// §5.10.2
    pub recurring_bubble_pattern: bool,
    /// False when `group_size < 2` (rulebook).
    pub recurrence_assessable: bool,
    /// Fraction of steps with `bubble_count > 0`.
    pub recurrence_fraction: f64,
    /// Stable signature or position bin found, with how it was found.
    pub stable_positions: Option<String>,
    /// §5.11.2
    pub dominant_idle_pattern: IdlePattern,
    /// Group-level tags (§5.10.2–5.10.3).
    pub group_tags: Vec<Tag>,
    /// §5.10.5
    pub dominant_anomaly_tags: Vec<Tag>,
    /// §5.11.1
    pub hidden_issue_present: bool,
    /// §5.11.1 (+ AICPU escalation).
    pub severity: Level,
    /// §5.11.3
    pub host_risk_level: Level,
    /// §5.11.4 (filled after the summary is known).
    pub requires_followup: bool,
    /// §5.13: some step has WAIT_POLLUTION_RISK.
    pub wait_not_reliable_for_rootcause: bool,
    /// Duration-weighted mean host coverage over the group's significant windows.
    pub wmean_host: f64,
    /// Same for sync overlap.
    pub wmean_sync: f64,
    /// Elapse-weighted `Wait Time Ratio` of its comm ops, when any.
    pub comm_wait_ratio_weighted: Option<f64>,
}

/// Inputs for group aggregation that come from outside the steps.
pub struct GroupCtx<'a> {
    /// All windows.
    pub bubbles: &'a [BubbleResult],
    /// Global gaps (for `inter_step`).
    pub global: &'a GlobalGaps,
    /// The merged busy segments of all kernels (their gaps are the global gaps).
    pub segs: &'a [Interval],
    /// Step windows of all steps (for inter-step gap detection).
    pub all_windows: &'a [Interval],
    /// Per step: `(Σ elapse ms, Σ elapse × wait ratio)` of its comm ops.
    pub comm_per_step: &'a [(f64, f64)],
    /// Per step: `(Σ comm-kernel wait, Σ comm-kernel dur+wait)` ns.
    pub comm_kernel_wait: &'a [(i64, i64)],
    /// `record_shapes` capability.
    pub record_shapes: bool,
    /// Sparse host evidence (§9).
    pub sparse_host: bool,
    /// Per step: the template hash and the hash of its `Input Shapes` sequence.
    pub shape_hashes: &'a [(u64, u64)],
    /// Per step: does some op name have > 1 distinct shape in the step's group (precomputed per group).
    pub multi_shape_ops: &'a dyn Fn(&[usize]) -> bool,
    /// Config.
    pub cfg: &'a AnomalyConfig,
}

/// Aggregates one group (§5.16) and applies §5.10.2, §5.10.3 (group tags), §5.10.5, §5.11.
pub fn aggregate(
    group_id: String,
    members: Vec<usize>,
    template_hash: u64,
    steps: &[StepResult],
    ctx: &GroupCtx<'_>,
) -> GroupResult {
    let cfg = ctx.cfg;
    let ms = ns_to_ms;
    let col = |f: &dyn Fn(&StepResult) -> f64| {
        members.iter().map(|&i| f(&steps[i])).collect::<Vec<f64>>()
    };
    let stats = [
        Stat::of(&col(&|s| ms(s.metrics.service_ns))),
        Stat::of(&col(&|s| ms(s.metrics.busy_ns))),
        Stat::of(&col(&|s| s.metrics.underfeed_ratio)),
        Stat::of(&col(&|s| ms(s.metrics.prelaunch_ns))),
        Stat::of(&col(&|s| ms(s.metrics.tail_ns))),
        Stat::of(&col(&|s| ms(s.metrics.internal_total_ns()))),
        Stat::of(&col(&|s| ms(s.metrics.largest_internal_ns()))),
    ];
    let n = members.len();
    let with_bubbles = members
        .iter()
        .filter(|&&i| steps[i].metrics.bubble_count() > 0)
        .count();
    let frac = if n > 0 {
        with_bubbles as f64 / n as f64
    } else {
        0.0
    };
    let stable = stable_positions(&members, steps, cfg);
    let (recurring, assessable) = match cfg.compat {
        Compat::Script => (n > 0 && frac >= cfg.recurrence_frac, n >= 2),
        Compat::Rulebook => (
            n >= 2 && frac >= cfg.recurrence_frac && stable.is_some(),
            n >= 2,
        ),
    };
    let pattern = idle_pattern(&members, steps, &stats, ctx);
    // Weighted means over the group's significant windows.
    let (mut wd, mut wh, mut ws) = (0f64, 0f64, 0f64);
    let mut comm_label = false;
    let mut in_group = vec![false; steps.len()];
    for &m in &members {
        in_group[m] = true;
    }
    for b in ctx.bubbles {
        if b.window.significant
            && b.window
                .step
                .is_some_and(|s| in_group.get(s) == Some(&true))
        {
            let d = b.window.interval.len_ns() as f64;
            wd += d;
            wh += d * b.evidence.host.unwrap_or(0.0);
            ws += d * b.evidence.sync.unwrap_or(0.0);
            comm_label |= b
                .labels
                .contains(&crate::analysis::host_evidence::Label::CommWait);
        }
    }
    let (wmean_host, wmean_sync) = if wd > 0.0 {
        (wh / wd, ws / wd)
    } else {
        (0.0, 0.0)
    };
    let under = stats[2].avg;
    let under_heavy = under >= cfg.underfeed_heavy_ratio;
    let mut group_tags = Vec::new();
    if recurring {
        group_tags.push(Tag::RecurringBubblePattern);
    }
    if under_heavy
        && recurring
        && (wmean_host >= cfg.host_launch_lag_min || wmean_sync >= cfg.sync_overlap_min)
    {
        group_tags.push(Tag::HostOriginatedRisk);
    }
    if (under_heavy && recurring && wmean_host < cfg.host_untraced_max) || ctx.sparse_host {
        group_tags.push(Tag::UntracedHostBlockingRisk);
    }
    let (el, elw) = members.iter().fold((0.0, 0.0), |a, &i| {
        (a.0 + ctx.comm_per_step[i].0, a.1 + ctx.comm_per_step[i].1)
    });
    let comm_wait_ratio_weighted = (el > 0.0).then(|| elw / el);
    let (kw, kt) = members.iter().fold((0i64, 0i64), |a, &i| {
        (
            a.0 + ctx.comm_kernel_wait[i].0,
            a.1 + ctx.comm_kernel_wait[i].1,
        )
    });
    if comm_label
        || comm_wait_ratio_weighted.is_some_and(|r| r > cfg.comm_wait_ratio_risk)
        || (kt > 0 && kw as f64 / kt as f64 > cfg.comm_wait_ratio_risk)
    {
        group_tags.push(Tag::CommSyncRisk);
    }
    if ctx.record_shapes && n >= 2 {
        let mut by_t: HashMap<u64, Vec<u64>> = HashMap::default();
        for &i in &members {
            by_t.entry(ctx.shape_hashes[i].0)
                .or_default()
                .push(ctx.shape_hashes[i].1);
        }
        let same_template_diff = by_t.values().any(|v| v.iter().any(|&x| x != v[0]));
        let services = col(&|s| ms(s.metrics.service_ns));
        let m = mean(&services);
        let cv = if m > 0.0 {
            (services.iter().map(|x| (x - m).powi(2)).sum::<f64>() / services.len() as f64).sqrt()
                / m
        } else {
            0.0
        };
        if same_template_diff || ((ctx.multi_shape_ops)(&members) && cv > cfg.shape_cv_min) {
            group_tags.push(Tag::VariableShapeSameTemplate);
        }
    }
    // §5.10.5 dominant tags: carried by ≥ 50 % of steps, plus group tags.
    let mut count: HashMap<Tag, usize> = HashMap::default();
    for &i in &members {
        for &t in &steps[i].tags {
            *count.entry(t).or_default() += 1;
        }
    }
    let mut dom: Vec<(Tag, usize)> = count
        .into_iter()
        .filter(|&(_, c)| c * 2 >= n && n > 0)
        .collect();
    // §5.11.1 "underfeed high": the HEAVY tags are step tags, so the dominant ones are known
    // before the group tags join.
    let underfeed_high = under_heavy || dom.iter().any(|d| d.0.is_heavy());
    // §5.11.3 row 3 adds UNTRACED_HOST_BLOCKING_RISK: a group tag like the others, so it
    // takes its place in the §5.10.5 order below.
    if underfeed_high
        && wmean_host < cfg.host_untraced_max
        && !group_tags.contains(&Tag::UntracedHostBlockingRisk)
    {
        group_tags.push(Tag::UntracedHostBlockingRisk);
    }
    for &t in &group_tags {
        if !dom.iter().any(|d| d.0 == t) {
            dom.push((t, n));
        }
    }
    let emit_rank = |t: Tag| if t.is_heavy() { t as u8 } else { 4 };
    crate::base::sort::sort_by(&mut dom, |a, b| {
        b.1.cmp(&a.1)
            .then(emit_rank(a.0).cmp(&emit_rank(b.0)))
            .then_with(|| a.0.as_str().cmp(b.0.as_str()))
    });
    let mut dominant_anomaly_tags: Vec<Tag> = dom.into_iter().map(|d| d.0).collect();
    // §5.11.1 hidden issue. "Largest bubble small" = no step of the group carries
    // INTERNAL_BUBBLE_HEAVY; a local large bubble (in fewer than half of the steps, so not
    // dominant and not making underfeed high) is the second row.
    let internal_heavy = members
        .iter()
        .any(|&i| steps[i].tags.contains(&Tag::InternalBubbleHeavy));
    let (hidden, mut severity) = if !underfeed_high && !internal_heavy {
        (false, Level::None)
    } else if !underfeed_high {
        (true, Level::Medium)
    } else if recurring_rulebook(n, frac, &stable, cfg) {
        (true, Level::High)
    } else {
        (true, Level::Medium)
    };
    if let Some(top) = ctx.global.top.first() {
        let boundary = ctx.bubbles.iter().any(|b| {
            b.window.scope == Scope::Global
                && b.window.interval == *top
                && b.window.capture_boundary
        });
        if boundary && !dominant_anomaly_tags.contains(&Tag::PartialCaptureBoundary) {
            dominant_anomaly_tags.push(Tag::PartialCaptureBoundary);
        }
    }
    if members
        .iter()
        .any(|&i| steps[i].tags.contains(&Tag::AicpuExposedRisk))
    {
        severity = match severity {
            Level::None | Level::Low => Level::Medium,
            _ => Level::High,
        };
    }
    // §5.11.3 host risk level.
    let host_risk_level = if !underfeed_high {
        Level::Low
    } else if wmean_host >= 0.5 || wmean_sync >= cfg.sync_overlap_min {
        Level::High
    } else {
        Level::Medium
    };
    GroupResult {
        group_id,
        template_hash,
        stats,
        recurring_bubble_pattern: recurring,
        recurrence_assessable: assessable,
        recurrence_fraction: frac,
        stable_positions: stable,
        dominant_idle_pattern: pattern,
        group_tags,
        dominant_anomaly_tags,
        hidden_issue_present: hidden,
        severity,
        host_risk_level,
        requires_followup: false,
        wait_not_reliable_for_rootcause: members
            .iter()
            .any(|&i| steps[i].tags.contains(&Tag::WaitPollutionRisk)),
        wmean_host,
        wmean_sync,
        comm_wait_ratio_weighted,
        steps: members,
    }
}

/// "Strong periodicity" of §5.11.1 always uses the rulebook definition.
fn recurring_rulebook(n: usize, frac: f64, stable: &Option<String>, cfg: &AnomalyConfig) -> bool {
    n >= 2 && frac >= cfg.recurrence_frac && stable.is_some()
}

/// §5.10.2 stable positions: a `(before, after)` signature or a position bin (±1) in ≥ 60 % of steps.
fn stable_positions(
    members: &[usize],
    steps: &[StepResult],
    cfg: &AnomalyConfig,
) -> Option<String> {
    let n = members.len();
    if n < 2 {
        return None;
    }
    let need = cfg.recurrence_frac * n as f64;
    // Signatures in first-seen order (steps in group order, bubbles in `top_internal` order)
    // with the number of steps that have each: the most frequent wins, a tie goes to the first
    // seen (§0.4: ties broken as stated, output deterministic).
    let mut sig: Vec<(&(String, String), usize)> = Vec::new();
    let mut at: HashMap<&(String, String), usize> = HashMap::default();
    let mut bins: Vec<Vec<i64>> = Vec::new();
    for &i in members {
        let s = &steps[i];
        let mut seen_sig = rustc_hash::FxHashSet::default();
        let mut b = Vec::new();
        for t in &s.top_internal {
            if seen_sig.insert(&t.signature) {
                let k = *at.entry(&t.signature).or_insert_with(|| {
                    sig.push((&t.signature, 0));
                    sig.len() - 1
                });
                sig[k].1 += 1;
            }
            b.push(t.bin);
        }
        bins.push(b);
    }
    let mut best: Option<(&(String, String), usize)> = None;
    for &(k, c) in &sig {
        if c as f64 >= need && best.is_none_or(|(_, bc)| c > bc) {
            best = Some((k, c));
        }
    }
    if let Some((k, _)) = best {
        return Some(format!("signature {} → {}", k.0, k.1));
    }
    let all: std::collections::BTreeSet<i64> = bins.iter().flatten().copied().collect();
    for &b in &all {
        let c = bins
            .iter()
            .filter(|v| v.iter().any(|&x| (x - b).abs() <= 1))
            .count();
        if c as f64 >= need {
            return Some(format!(
                "position bin {b} (±1) of width {}",
                cfg.stable_position_bin
            ));
        }
    }
    None
}

fn idle_pattern(
    members: &[usize],
    steps: &[StepResult],
    stats: &[Stat; 7],
    ctx: &GroupCtx<'_>,
) -> IdlePattern {
    let cfg = ctx.cfg;
    let (pre, tail, internal) = (stats[3].avg, stats[4].avg, stats[5].avg);
    let cands = [
        (IdlePattern::Prelaunch, pre),
        (IdlePattern::Tail, tail),
        (IdlePattern::InternalBubble, internal),
    ];
    let mut best = cands[0];
    for c in &cands[1..] {
        if c.1 > best.1 {
            best = *c;
        }
    }
    if members.is_empty() {
        return IdlePattern::None;
    }
    match cfg.compat {
        Compat::Script => {
            if best.1 <= 0.0 {
                IdlePattern::None
            } else {
                best.0
            }
        }
        Compat::Rulebook => {
            if best.1 < cfg.none_floor_ms || best.1 < cfg.none_service_frac * stats[0].avg {
                return IdlePattern::None;
            }
            // inter_step: inter-step global gaps inside the group's span vs intra-step gaps.
            let lo = members
                .iter()
                .map(|&i| steps[i].window.start_ns)
                .min()
                .unwrap_or(0);
            let hi = members
                .iter()
                .map(|&i| steps[i].window.end_ns)
                .max()
                .unwrap_or(0);
            let span = Interval::new(lo, hi);
            let windows = crate::analysis::intervals::merge(ctx.all_windows.to_vec());
            let inter: i64 = crate::analysis::bubbles::gaps(ctx.segs)
                .filter_map(|g| g.clip(span))
                .filter(|g| crate::analysis::intervals::covered_ns(&windows, *g) == 0)
                .map(|g| g.len_ns())
                .sum();
            let intra: i64 = members
                .iter()
                .map(|&i| {
                    steps[i].metrics.prelaunch_ns
                        + steps[i].metrics.tail_ns
                        + steps[i].metrics.internal_total_ns()
                })
                .sum();
            if inter > 0 && inter as f64 >= cfg.inter_step_factor * intra as f64 {
                return IdlePattern::InterStep;
            }
            let mut vals = [pre, tail, internal];
            crate::base::sort::sort_by(&mut vals, |a, b| b.total_cmp(a));
            if vals[1] >= cfg.mixed_ratio * vals[0] {
                IdlePattern::Mixed
            } else {
                best.0
            }
        }
    }
}
