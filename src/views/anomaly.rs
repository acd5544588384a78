//! The steps / bubbles view's data: one rank's [`AnomalyResult`] and kernel table
//! turned into the [`crate::protocol::anomaly`] payloads — summary cards, the step table,
//! the op tables (wait anchors §5.12, AICPU §5.14, PMU §5.15). Unit conversion and selection only: every number was computed by
//! `analysis::anomaly`; nothing here recomputes a spec rule. The cross-rank table is
//! [`super::cross_rank`].
//!
//! Bubbles live in [`super::anomaly_bubbles`], the structure tree in [`super::anomaly_structure`].

use crate::analysis::anomaly::cross_rank;
use crate::analysis::anomaly::tags::Tag;
use crate::analysis::anomaly::AnomalyResult;
use crate::base::units::{ns_to_ms, ns_to_us};
use crate::model::kernels::KernelTable;
use crate::protocol::anomaly::{
    AicpuRowDto, AnomalyOpsDto, AnomalySummaryDto, KernelDto, StepRowDto, TagDto, WaitAnchorRowDto,
};

/// Rows of the wait-anchor table sent to the UI (the JSON keeps the top 10; the UI shows more).
pub const WAIT_ANCHOR_ROWS: usize = 100;

/// Identity of the rank folder a result belongs to.
#[derive(Clone, Debug, Default)]
pub struct RankIdentity {
    /// Rank folder index in the inventory.
    pub index: u32,
    /// Rank id, when known.
    pub rank_id: Option<i64>,
    /// Role.
    pub role: String,
    /// Rank folder path.
    pub dir: String,
    /// A GPU rank (PyTorch profiler trace).
    pub gpu: bool,
}

/// One kernel for display.
pub fn kernel(k: &KernelTable, i: usize) -> KernelDto {
    KernelDto {
        index: i as u32,
        name: k.name_of(i).to_string(),
        task_type: k.core_of(i).to_string(),
        task_class: k.class()[i].as_str().to_string(),
        start_us: ns_to_us(k.start_ns()[i]),
        dur_us: ns_to_us(k.dur_ns()[i]),
        wait_us: ns_to_us(k.wait_ns()[i]),
        stream: k.stream_of(i).to_string(),
        row: k.row_of(i),
    }
}

/// Display emphasis of a tag (a UI Decision, not a spec rule): the §5.10.1 HEAVY tags and the
/// risks that call for host follow-up or that idle the compute units are `high`; other risks
/// `medium`; capture-boundary and pattern notes `info`.
pub fn tag_level(t: Tag) -> &'static str {
    match t {
        Tag::DeviceIdleGapHeavy
        | Tag::PrelaunchGapHeavy
        | Tag::TailGapHeavy
        | Tag::InternalBubbleHeavy
        | Tag::HostOriginatedRisk
        | Tag::UntracedHostBlockingRisk
        | Tag::AicpuExposedRisk => "high",
        Tag::CommSyncRisk
        | Tag::WaitPollutionRisk
        | Tag::WaitAnchorFalseHotspot
        | Tag::VariableShapeSameTemplate => "medium",
        Tag::RecurringBubblePattern | Tag::PartialCaptureBoundary => "info",
    }
}

fn tags(r: &AnomalyResult) -> Vec<TagDto> {
    let mut step_tags: Vec<(Tag, u32)> = Vec::new();
    for s in &r.steps {
        for &t in &s.tags {
            match step_tags.iter_mut().find(|(x, _)| *x == t) {
                Some(e) => e.1 += 1,
                None => step_tags.push((t, 1)),
            }
        }
    }
    crate::base::sort::sort_by_key(&mut step_tags, |&(t, _)| t);
    let mut out: Vec<TagDto> = step_tags
        .into_iter()
        .map(|(t, n)| TagDto {
            tag: t.as_str().into(),
            scope: "step".into(),
            steps: n,
            level: tag_level(t).into(),
        })
        .collect();
    let mut push = |t: Tag, scope: &str| {
        if !out.iter().any(|x| x.tag == t.as_str()) {
            out.push(TagDto {
                tag: t.as_str().into(),
                scope: scope.into(),
                steps: 0,
                level: tag_level(t).into(),
            });
        }
    };
    if let Some(g) = r.groups.first() {
        for &t in &g.group_tags {
            push(t, "group");
        }
        if g.recurring_bubble_pattern {
            push(Tag::RecurringBubblePattern, "group");
        }
    }
    for &t in &r.top_tags {
        push(t, "rank");
    }
    out
}

/// The summary cards of one rank (and its cross-rank inputs).
pub fn summary(id: &RankIdentity, k: &KernelTable, r: &AnomalyResult) -> AnomalySummaryDto {
    let row = cross_rank::row_of(id.rank_id.unwrap_or(id.index as i64), r);
    let g0 = r.groups.first();
    let mut labels: Vec<(String, u32)> = Vec::new();
    for b in &r.bubbles {
        for l in &b.labels {
            match labels.iter_mut().find(|(x, _)| x == l.as_str()) {
                Some(e) => e.1 += 1,
                None => labels.push((l.as_str().to_string(), 1)),
            }
        }
    }
    crate::base::sort::sort_by(&mut labels, |a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut streams: Vec<String> = (0..k.len())
        .map(|i| k.stream()[i])
        .fold(Vec::<u32>::new(), |mut v, s| {
            if !v.contains(&s) {
                v.push(s);
            }
            v
        })
        .into_iter()
        .map(|s| k.text(s).to_string())
        .collect();
    crate::base::sort::sort(&mut streams);
    let cap = r.global.capture;
    AnomalySummaryDto {
        rank: id.index,
        rank_id: id.rank_id,
        role: id.role.clone(),
        dir: id.dir.clone(),
        enabled: r.enabled,
        steps: r.steps.len() as u32,
        step_detection_method: r.step_detection_method().into(),
        kernels: k.len() as u64,
        service_ms_avg: row.service_ms_avg,
        busy_union_ms_avg: row.busy_union_ms_avg,
        underfeed_ratio_avg: row.underfeed_ratio_avg,
        bubble_count_avg: row.bubble_count_avg,
        dominant_idle_pattern: row.dominant_idle_pattern.into(),
        severity: g0
            .map(|g| g.severity.severity_str())
            .unwrap_or("none")
            .into(),
        hidden_issue_present: g0.is_some_and(|g| g.hidden_issue_present),
        host_risk_level: g0
            .map(|g| g.host_risk_level.risk_str())
            .unwrap_or("low")
            .into(),
        confidence: r.confidence.into(),
        requires_host_followup: r.requires_host_followup,
        tags: tags(r),
        bubbles: r.bubbles.len() as u32,
        labels,
        capture_span_ms: ns_to_ms(cap.len_ns()),
        device_gap_ratio: if cap.len_ns() > 0 {
            r.global.gap_ns() as f64 / cap.len_ns() as f64
        } else {
            0.0
        },
        largest_gap_ms: ns_to_ms(r.global.largest_ns()),
        capture_us: (!k.is_empty()).then(|| (ns_to_us(cap.start_ns), ns_to_us(cap.end_ns))),
        gpu: id.gpu,
        gpu_device: None,
        gpu_runtime: None,
        origin_us: time_origin_ns(r, k).map(ns_to_us),
        comm_total_ms: row.comm_total_ms,
        comm_wait_ratio_weighted: row.comm_wait_ratio_weighted,
        streams,
        limitations: r.limitations.clone(),
        rank_check: None,
    }
}

/// The instant every relative time of the steps & bubbles tab counts from (table columns, the
/// bubble panel and the timeline alike): the earliest step window start, else the first
/// kernel start; `None` without steps and kernels. One origin, so a prelaunch bubble (which
/// starts at its step's window start, before the first kernel) reads the same everywhere.
pub fn time_origin_ns(r: &AnomalyResult, k: &KernelTable) -> Option<i64> {
    r.steps
        .iter()
        .map(|s| s.window.start_ns)
        .min()
        .or_else(|| k.start_ns().iter().copied().min())
}

/// The step table: one row per step, time order.
pub fn steps(r: &AnomalyResult) -> Vec<StepRowDto> {
    r.steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let m = &s.metrics;
            let inv = &s.inventory;
            StepRowDto {
                index: i as u32,
                step_id: s.step_id.clone(),
                group_id: s.group_id.clone(),
                start_us: ns_to_us(s.window.start_ns),
                end_us: ns_to_us(s.window.end_ns),
                service_ms: ns_to_ms(m.service_ns),
                device_busy_union_ms: ns_to_ms(m.busy_ns),
                underfeed_ms: ns_to_ms(m.underfeed_ns),
                underfeed_ratio: m.underfeed_ratio,
                prelaunch_gap_ms: ns_to_ms(m.prelaunch_ns),
                tail_gap_ms: ns_to_ms(m.tail_ns),
                internal_bubble_total_ms: ns_to_ms(m.internal_total_ns()),
                largest_internal_bubble_ms: ns_to_ms(m.largest_internal_ns()),
                bubble_count: m.bubble_count() as u32,
                kernel_count: inv.total_kernel_count as u32,
                class_counts: [
                    inv.ai_core_count as u32,
                    inv.ai_cpu_count as u32,
                    inv.hccl_count as u32,
                    inv.other_count as u32,
                ],
                kernel_wait_sum_ms: ns_to_ms(inv.kernel_wait_sum_ns),
                stream_count: inv.distinct_streams.len() as u32,
                main_stream: s.main_stream.clone(),
                wall_ms: ns_to_ms(s.perspectives.wall_ns),
                kernel_sum_ms: ns_to_ms(s.perspectives.kernel_sum_ns),
                total_cost_ms: ns_to_ms(s.perspectives.total_cost_ns),
                small_ops: (s.small_ops.count as u32, s.small_ops.verdict.to_string()),
                tags: s.tags.iter().map(|t| t.as_str().to_string()).collect(),
                labels: s.labels.iter().map(|l| l.as_str().to_string()).collect(),
                truncated: s.truncated,
            }
        })
        .collect()
}

/// Wait-anchor ranking (first [`WAIT_ANCHOR_ROWS`]), AICPU ops and PMU verdicts.
pub fn ops(rank: u32, r: &AnomalyResult) -> AnomalyOpsDto {
    AnomalyOpsDto {
        rank,
        wait_anchors: r
            .wait_anchor_ops
            .iter()
            .take(WAIT_ANCHOR_ROWS)
            .map(|o| WaitAnchorRowDto {
                op_name: o.op_name.clone(),
                call_count: o.call_count as u32,
                duration_us_avg: o.duration_us_avg,
                duration_us_total: o.duration_us_total,
                wait_us_avg: o.wait_us_avg,
                total_cost_us_avg: o.total_cost_us_avg,
                wait_ratio: o.wait_ratio,
                task_type: o.task_type.as_str().into(),
                total_cost_rank: o.total_cost_rank as u32,
                duration_rank: o.duration_rank as u32,
                is_false_hotspot_risk: o.is_false_hotspot_risk,
                wait_pollution: o.wait_pollution,
            })
            .collect(),
        wait_anchor_total: r.wait_anchor_ops.len() as u32,
        aicpu: r
            .aicpu_ops
            .iter()
            .map(|o| AicpuRowDto {
                op_name: o.op_name.clone(),
                call_count: o.call_count as u32,
                duration_ms: ns_to_ms(o.dur_ns),
                masked_ratio: o.masked_ratio,
                class: o.class.as_str().into(),
                exposed_ms: ns_to_ms(o.exposed_ns),
            })
            .collect(),
        pmu: r.pmu.as_ref().map(|v| {
            v.iter()
                .map(|(n, verdict)| (n.clone(), verdict.to_string()))
                .collect()
        }),
    }
}
