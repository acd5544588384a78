//! The anomaly JSON (anomaly.md §6): [`build`] turns an
//! [`AnomalyResult`](crate::analysis::anomaly::AnomalyResult) into the wire
//! types of [`wire`] — unit conversion and formatting only, never recomputation.

pub mod gpu;
pub mod wire;

use crate::analysis::anomaly::{AnomalyResult, StepResult};
use crate::analysis::anomaly_config::{AnomalyConfig, Compat, LastStepEnd};
use crate::analysis::intervals::Interval;
use crate::analysis::structure::{PartSummary, Perspectives, Structure};
use crate::base::units::{ns_to_ms, ns_to_us};
use crate::model::kernels::KernelTable;
use crate::report::float::ExactUs;
use wire::*;

/// Identity of the rank the result belongs to.
#[derive(Clone, Debug, Default)]
pub struct RankMeta {
    /// Rank id, when known.
    pub rank_id: Option<i64>,
    /// Role, when known.
    pub role: Option<String>,
    /// Rank folder path.
    pub rank_dir: String,
    /// Input files read.
    pub inputs: Vec<String>,
    /// Problems, already formatted (`file:line — message`).
    pub problems: Vec<String>,
}

fn kernel(k: &KernelTable, i: usize) -> KernelJson {
    KernelJson {
        name: k.name_of(i).to_string(),
        task_type: k.core_of(i).to_string(),
        task_class: k.task_class_label(i),
        dur_us: ns_to_us(k.dur_ns()[i]),
        wait_us: ns_to_us(k.wait_ns()[i]),
        stream: k.stream_of(i).to_string(),
        start_us: ExactUs(k.start_ns()[i]),
        row: k.row_of(i),
    }
}

/// `"<name> (<core_raw>, <dur>us, stream <s>)"` (§5.6 evidence strings).
pub fn kernel_text(k: &KernelTable, i: usize) -> String {
    k.evidence_text(i)
}

fn perspectives(p: &Perspectives) -> PerspectivesJson {
    PerspectivesJson {
        wall_ms: ns_to_ms(p.wall_ns),
        busy_union_ms: ns_to_ms(p.busy_ns),
        kernel_sum_ms: ns_to_ms(p.kernel_sum_ns),
        total_cost_ms: ns_to_ms(p.total_cost_ns),
    }
}

fn window(i: Interval) -> WindowJson {
    WindowJson {
        start_us: ExactUs(i.start_ns),
        end_us: ExactUs(i.end_ns),
    }
}

/// The clipped kernels of `k` (Decision), in table order.
pub fn overruns(k: &KernelTable) -> Vec<OverrunJson> {
    k.overruns()
        .iter()
        .map(|o| OverrunJson {
            row: k.row_of(o.kernel),
            name: k.name_of(o.kernel).to_string(),
            task_type: k.core_of(o.kernel).to_string(),
            stream: k.stream_of(o.kernel).to_string(),
            start_us: ExactUs(k.start_ns()[o.kernel]),
            end_us: ExactUs(k.end_ns(o.kernel)),
            clipped_at_us: ExactUs(k.busy_end_ns(o.kernel)),
            overrun_us: ExactUs(o.overrun_ns),
            next_row: k.row_of(o.next),
            next_name: k.name_of(o.next).to_string(),
        })
        .collect()
}

/// Per-step JSON (`steps[]`).
pub fn step_json(s: &StepResult) -> StepJson {
    let m = &s.metrics;
    StepJson {
        step_id: s.step_id.clone(),
        group_id: s.group_id.clone(),
        window: window(s.window),
        service_ms: ns_to_ms(m.service_ns),
        device_busy_union_ms: ns_to_ms(m.busy_ns),
        device_busy_union_raw_ms: None,
        underfeed_ms: ns_to_ms(m.underfeed_ns),
        underfeed_ratio: m.underfeed_ratio,
        prelaunch_gap_ms: ns_to_ms(m.prelaunch_ns),
        tail_gap_ms: ns_to_ms(m.tail_ns),
        internal_bubble_total_ms: ns_to_ms(m.internal_total_ns()),
        largest_internal_bubble_ms: ns_to_ms(m.largest_internal_ns()),
        bubble_count: m.bubble_count(),
        bubble_intervals: m.bubbles.iter().map(|b| window(*b)).collect(),
        total_kernel_count: s.inventory.total_kernel_count,
        ai_core_count: s.inventory.ai_core_count,
        ai_cpu_count: s.inventory.ai_cpu_count,
        hccl_count: s.inventory.hccl_count,
        other_count: s.inventory.other_count,
        kernel_duration_sum_ms: ns_to_ms(s.inventory.kernel_duration_sum_ns),
        kernel_wait_sum_ms: ns_to_ms(s.inventory.kernel_wait_sum_ns),
        distinct_streams: s.inventory.distinct_streams.clone(),
        stream_count: s.inventory.distinct_streams.len(),
        main_stream: s.main_stream.clone(),
        tags: s.tags.iter().map(|t| t.as_str()).collect(),
        labels: s.labels.iter().map(|l| l.as_str()).collect(),
        four_perspectives: perspectives(&s.perspectives),
        small_ops: SmallOpsJson {
            count: s.small_ops.count,
            duration_ms: ns_to_ms(s.small_ops.dur_ns),
            share_of_busy_union: s.small_ops.share_of_busy,
            longest_main_stream_run: s.small_ops.longest_main_run,
            verdict: s.small_ops.verdict,
        },
        truncated: s.truncated,
        polluted_wait_share: s.polluted_wait_share,
        segmentation: s.segmentation.method.clone(),
    }
}

fn part(k: &KernelTable, p: &PartSummary) -> PartJson {
    let ks = |v: &[usize]| v.iter().map(|&i| kernel(k, i)).collect::<Vec<_>>();
    PartJson {
        kernel_count: p.kernels.len(),
        dominant_task_type: p.dominant_task_type.clone(),
        dominant_stream: p.dominant_stream.clone(),
        top_kernels_by_duration: ks(&p.top_by_duration),
        top_kernels_by_total_cost: ks(&p.top_by_total_cost),
        wait_heavy_kernels: {
            let ratio = |i: usize| {
                let (d, w) = (k.dur_ns()[i] as f64, k.wait_ns()[i] as f64);
                w / (d + w).max(1.0)
            };
            let mut v = p.wait_heavy.clone();
            crate::base::sort::sort_by(&mut v, |&a, &b| {
                ratio(b).total_cmp(&ratio(a)).then(a.cmp(&b))
            });
            v.truncate(5);
            ks(&v)
        },
        wait_heavy_count: p.wait_heavy.len(),
        wall_ms: ns_to_ms(p.perspectives.wall_ns),
        busy_union_ms: ns_to_ms(p.perspectives.busy_ns),
        kernel_sum_ms: ns_to_ms(p.perspectives.kernel_sum_ns),
        total_cost_ms: ns_to_ms(p.perspectives.total_cost_ns),
        internal_bubble_total_ms: ns_to_ms(p.metrics.internal_total_ns()),
        largest_internal_bubble_ms: ns_to_ms(p.metrics.largest_internal_ns()),
        bubble_count: p.metrics.bubble_count(),
    }
}

/// Per-structure JSON (§4.2, §4.4).
pub fn structure_json(k: &KernelTable, step: &StepResult, s: &Structure) -> StructureJson {
    let p = &s.perspectives;
    let service = step.metrics.service_ns;
    StructureJson {
        step_id: step.step_id.clone(),
        structure_id: s.structure_id.clone(),
        structure_type: s.structure_type.clone(),
        kernel_count: s.kernels.len(),
        start_us: ExactUs(s.span.start_ns),
        end_us: ExactUs(s.span.end_ns),
        wall_ms: ns_to_ms(p.wall_ns),
        device_busy_union_ms: ns_to_ms(p.busy_ns),
        busy_union_ms: ns_to_ms(p.busy_ns),
        kernel_sum_ms: ns_to_ms(p.kernel_sum_ns),
        total_cost_ms: ns_to_ms(p.total_cost_ns),
        ai_core_pct: s.class_pct[0],
        ai_cpu_pct: s.class_pct[1],
        hccl_pct: s.class_pct[2],
        structure_share: if service > 0 {
            p.wall_ns as f64 / service as f64
        } else {
            0.0
        },
        prelaunch_gap_ms: ns_to_ms(s.metrics.prelaunch_ns),
        tail_gap_ms: ns_to_ms(s.metrics.tail_ns),
        internal_bubble_total_ms: ns_to_ms(s.metrics.internal_total_ns()),
        largest_internal_bubble_ms: ns_to_ms(s.metrics.largest_internal_ns()),
        bubble_count: s.metrics.bubble_count(),
        inter_structure_gap_ms: ns_to_ms(s.inter_structure_gap_ns),
        opens_with_gap: s.inter_structure_gap_ns > 0,
        block: part(k, &s.block),
        side: part(k, &s.side),
        block_side_gap_ms: ns_to_ms(s.block_side_gap_ns),
        comm_overlap_ratio: s.comm_overlap_ratio,
    }
}

/// The rank's `structures[]`: every structure of every step, in step order (§4.2).
pub fn structures(k: &KernelTable, r: &AnomalyResult) -> Vec<StructureJson> {
    r.steps
        .iter()
        .flat_map(|s| {
            s.segmentation
                .structures
                .iter()
                .map(move |x| structure_json(k, s, x))
        })
        .collect()
}

/// The `anomaly_discovery` object and the per-rank wrapper.
pub fn build(k: &KernelTable, r: &AnomalyResult, meta: &RankMeta, cfg: &AnomalyConfig) -> RankJson {
    let mut steps: Vec<StepJson> = r.steps.iter().map(step_json).collect();
    if !k.overruns().is_empty() {
        let raw = crate::analysis::intervals::raw_kernel_union(k);
        for (j, s) in steps.iter_mut().zip(&r.steps) {
            j.device_busy_union_raw_ms = Some(ns_to_ms(crate::analysis::intervals::covered_ns(
                &raw, s.window,
            )));
        }
    }
    let structures = structures(k, r);
    let dominant_step = r.groups.first().and_then(|g| g.steps.first()).copied();
    let dominant_structures: Vec<StructureJson> = match dominant_step {
        Some(i) => {
            let s = &r.steps[i];
            s.segmentation
                .structures
                .iter()
                .map(|x| structure_json(k, s, x))
                .collect()
        }
        None => Vec::new(),
    };
    let groups = r
        .groups
        .iter()
        .map(|g| {
            let mut pct = serde_json::Map::new();
            for (name, st) in crate::analysis::anomaly::groups::GROUP_METRICS
                .iter()
                .zip(g.stats.iter())
            {
                pct.insert(format!("{name}_median"), st.median.into());
                pct.insert(format!("{name}_p90"), st.p90.into());
                pct.insert(format!("{name}_p95"), st.p95.into());
            }
            GroupJson {
                group_id: g.group_id.clone(),
                group_size: g.steps.len(),
                service_ms_avg: g.stats[0].avg,
                device_busy_union_ms_avg: g.stats[1].avg,
                underfeed_ratio_avg: g.stats[2].avg,
                prelaunch_gap_ms_avg: g.stats[3].avg,
                tail_gap_ms_avg: g.stats[4].avg,
                internal_bubble_total_ms_avg: g.stats[5].avg,
                largest_internal_bubble_ms_p95: g.stats[6].p95,
                largest_internal_bubble_ms_avg: g.stats[6].avg,
                recurring_bubble_pattern: g.recurring_bubble_pattern,
                dominant_idle_pattern: g.dominant_idle_pattern.as_str(),
                dominant_anomaly_tags: g.dominant_anomaly_tags.iter().map(|t| t.as_str()).collect(),
                requires_followup: g.requires_followup,
                percentiles: pct,
                hidden_issue_present: g.hidden_issue_present,
                severity: g.severity.severity_str(),
                host_risk_level: g.host_risk_level.risk_str(),
                recurrence_assessable: g.recurrence_assessable,
                recurrence_fraction: g.recurrence_fraction,
                stable_positions: g.stable_positions.clone(),
                wait_not_reliable_for_rootcause: g.wait_not_reliable_for_rootcause,
                template_hash: format!("{:016x}", g.template_hash),
                step_ids: g
                    .steps
                    .iter()
                    .map(|&i| r.steps[i].step_id.clone())
                    .collect(),
                group_tags: g.group_tags.iter().map(|t| t.as_str()).collect(),
                comm_wait_ratio_weighted: g.comm_wait_ratio_weighted,
            }
        })
        .collect();
    let bubbles = r
        .bubbles
        .iter()
        .map(|b| {
            let w = &b.window;
            let mut evidence_ops = Vec::new();
            if let Some(i) = w.before {
                evidence_ops.push(format!("before: {}", kernel_text(k, i)));
            }
            if let Some(i) = w.after {
                evidence_ops.push(format!("after: {}", kernel_text(k, i)));
            }
            BubbleJson {
                bubble_id: w.bubble_id.clone(),
                scope: w.scope.as_str(),
                step_id: w
                    .step
                    .map(|s| r.steps[s].step_id.clone())
                    .unwrap_or_else(|| "global".into()),
                group_id: w.step.map(|s| r.steps[s].group_id.clone()),
                start_us: ExactUs(w.interval.start_ns),
                end_us: ExactUs(w.interval.end_ns),
                duration_ms: ns_to_ms(w.interval.len_ns()),
                host_visible_coverage_ratio: b.evidence.host,
                sync_marker_overlap_ratio: b.evidence.sync,
                comm_marker_overlap_ratio: b.evidence.comm,
                candidate_labels: b.labels.iter().map(|l| l.as_str()).collect(),
                evidence_ops,
                structure_id: b.structure_id.clone(),
                between_structures: b.between_structures,
                before_kernel: w.before.map(|i| kernel(k, i)),
                after_kernel: w.after.map(|i| kernel(k, i)),
                before_main_kernel: w.before_main.map(|i| kernel(k, i)),
                after_main_kernel: w.after_main.map(|i| kernel(k, i)),
                tags: b.tags.iter().map(|t| t.as_str()).collect(),
                significant: w.significant,
                host_parallelism_hint: b.evidence.hint,
                h2d_flow_count: b.evidence.h2d_flow_count,
                next_kernel_launch: b.next_launch.map(|n| n.timing.as_str()),
                next_kernel_launch_lead_ms: b.next_launch.map(|n| ns_to_ms(n.lead_ns)),
            }
        })
        .collect();
    let location = |first: usize| -> Option<String> {
        let s = r.steps.iter().find(|s| s.kernels.contains(&first))?;
        let st = s
            .segmentation
            .structures
            .iter()
            .find(|x| x.kernels.contains(&first))?;
        let part = if st.block.kernels.contains(&first) {
            "block"
        } else {
            "side"
        };
        Some(format!(
            "{}/{} stream {}",
            st.structure_id,
            part,
            k.stream_of(first)
        ))
    };
    let wait = r
        .wait_anchor_ops
        .iter()
        .take(10)
        .map(|o| WaitAnchorJson {
            op_name: o.op_name.clone(),
            location: location(o.first_kernel),
            duration_us_avg: o.duration_us_avg,
            wait_us_avg: o.wait_us_avg,
            total_cost_us_avg: o.total_cost_us_avg,
            wait_ratio: o.wait_ratio,
            is_false_hotspot_risk: o.is_false_hotspot_risk,
            evidence: vec![format!(
                "wait_ratio={:.3}, rank {} by total_cost, rank {} by duration",
                o.wait_ratio, o.total_cost_rank, o.duration_rank
            )],
            call_count: o.call_count,
            duration_us_total: o.duration_us_total,
            total_cost_rank: o.total_cost_rank,
            duration_rank: o.duration_rank,
            task_type: o.task_type.as_str(),
            input_shapes: o.input_shapes.clone(),
            wait_pollution: o.wait_pollution,
        })
        .collect();
    let g = &r.global;
    let rule = cfg.compat == Compat::Rulebook;
    let discovery = DiscoveryJson {
        enabled: r.enabled,
        dominant_group_id: r.groups.first().map(|g| g.group_id.clone()),
        global_device_gap_analysis: GlobalJson {
            capture_span_ms: ns_to_ms(g.capture.len_ns()),
            device_busy_union_ms: ns_to_ms(g.busy_ns),
            device_gap_ms: ns_to_ms(g.gap_ns()),
            device_gap_ratio: if g.capture.len_ns() > 0 {
                g.gap_ns() as f64 / g.capture.len_ns() as f64
            } else {
                0.0
            },
            largest_gap_ms: ns_to_ms(g.largest_ns()),
            top_gap_windows: g
                .top
                .iter()
                .map(|t| GapJson {
                    start_us: ExactUs(t.start_ns),
                    end_us: ExactUs(t.end_ns),
                    duration_ms: ns_to_ms(t.len_ns()),
                })
                .collect(),
            capture_start_us: ExactUs(g.capture.start_ns),
            capture_end_us: ExactUs(g.capture.end_ns),
            gap_count: g.gap_count,
        },
        step_group_anomalies: groups,
        bubble_windows: bubbles,
        wait_anchor_ops: wait,
        soft_root_cause_summary: r
            .soft_root_cause_summary
            .iter()
            .map(|e| SummaryJson {
                label: e.label.as_str(),
                confidence: e.confidence,
                scope: e.scope,
                target_id: e.target_id.clone(),
                evidence: e.evidence.clone(),
                share: e.share,
            })
            .collect(),
        requires_host_followup: r.requires_host_followup,
        confidence: r.confidence,
        recommendations: r
            .recommendations
            .iter()
            .map(|x| RecommendationJson {
                id: x.id.clone(),
                scope: x.scope,
                target_id: x.target_id.clone(),
                text: x.text.clone(),
                followup_required: x.followup_required,
                evidence_gap: x.evidence_gap.clone(),
                priority: x.priority,
            })
            .collect(),
        structures: dominant_structures,
        comm_totals: CommTotalsJson {
            comm_total_ms_kernel_details: r.comm.kernel_details_ms,
            comm_total_ms_communication_json: r.comm.communication_json_ms,
            wait_ratio_weighted: r.comm.wait_ratio_weighted,
        },
        capabilities: CapabilitiesJson {
            record_shapes: r.capabilities.record_shapes,
            record_shapes_source: r.capabilities.record_shapes_source,
            with_stack: r.capabilities.with_stack,
            with_stack_source: r.capabilities.with_stack_source,
            profile_memory: r.capabilities.profile_memory,
            profile_memory_source: r.capabilities.profile_memory_source,
            with_flops: r.capabilities.with_flops,
            with_flops_source: r.capabilities.with_flops_source,
            with_modules: r.capabilities.with_modules,
            with_modules_source: r.capabilities.with_modules_source,
            profiler_level: r.capabilities.profiler_level.clone(),
            pmu: r.capabilities.pmu,
            comm_file: r.capabilities.comm_file,
            fia: r.capabilities.fia,
            trace: r.capabilities.trace,
            host_event_density: r.capabilities.host_event_density,
        },
        host_evidence_policy: HostPolicyJson {
            mode: cfg.compat.as_str(),
            exclude_step_markers: rule,
            exclude_long_events_frac: rule.then_some(cfg.host_long_event_frac),
            general_class_leaf_only: rule,
            host_events_kept: r.host_policy.0,
            step_markers_excluded: r.host_policy.1,
        },
        step_detection_method: r.step_detection_method(),
        last_step_end: match cfg.last_step_end {
            LastStepEnd::LastKernel => "last_kernel",
            LastStepEnd::MarkerEnd => "marker_end",
        },
        limitations: r.limitations.clone(),
        tags: r.top_tags.iter().map(|t| t.as_str()).collect(),
        aicpu_ops: r
            .aicpu_ops
            .iter()
            .map(|o| AicpuJson {
                op_name: o.op_name.clone(),
                call_count: o.call_count,
                duration_ms: ns_to_ms(o.dur_ns),
                masked_ratio: o.masked_ratio,
                class: o.class.as_str(),
                exposed_ms: ns_to_ms(o.exposed_ns),
            })
            .collect(),
        pmu_judgement: match &r.pmu {
            None => serde_json::Value::String("PMU judgement unavailable".into()),
            Some(v) => serde_json::Value::Array(
                v.iter()
                    .map(|(n, verdict)| serde_json::json!({"op_name": n, "verdict": verdict}))
                    .collect(),
            ),
        },
    };
    RankJson {
        rank_id: meta.rank_id,
        role: meta.role.clone(),
        rank_dir: meta.rank_dir.clone(),
        anomaly_discovery: discovery,
        steps,
        structures,
        proflens: ToolJson {
            version: env!("CARGO_PKG_VERSION"),
            compat: cfg.compat.as_str(),
            inputs: meta.inputs.clone(),
            problems: meta.problems.clone(),
            kernel_overruns: overruns(k),
        },
        gpu: None,
    }
}
