//! Soft root-cause summary (anomaly.md §5.9), follow-up flags (§5.11.4),
//! top-level confidence (§5.17) and recommendations (§8).

use std::collections::BTreeMap;

use super::groups::{GroupResult, Level};
use super::ops::AicpuClass;
use super::tags::Tag;
use super::{AnomalyResult, BubbleResult, Capabilities, StepResult};
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::analysis::bubbles::Scope;
use crate::analysis::host_evidence::{Label, INPUT_OVERLAP_MIN};
use crate::analysis::steps::StepMethod;

/// One entry of `soft_root_cause_summary` (§6.6).
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryEntry {
    /// Label.
    pub label: Label,
    /// `high | medium | low`.
    pub confidence: &'static str,
    /// `global | group | step`.
    pub scope: &'static str,
    /// step id, group id, or `None` for global.
    pub target_id: Option<String>,
    /// Duration share among attributed windows.
    pub share: f64,
    /// Evidence strings quoting ratios and bubble ids.
    pub evidence: Vec<String>,
}

fn scope_rank(s: &str) -> u8 {
    match s {
        "global" => 0,
        "group" => 1,
        _ => 2,
    }
}

fn entries(
    scope: &'static str,
    target: Option<String>,
    ws: &[&BubbleResult],
    cfg: &AnomalyConfig,
) -> Vec<SummaryEntry> {
    let total: f64 = ws.iter().map(|b| b.window.interval.len_ns() as f64).sum();
    if total <= 0.0 {
        return Vec::new();
    }
    let mut by: BTreeMap<Label, Vec<&BubbleResult>> = BTreeMap::new();
    for b in ws {
        for &l in &b.labels {
            by.entry(l).or_default().push(b);
        }
    }
    let _ = cfg;
    by.into_iter()
        .map(|(label, bs)| {
            let d: f64 = bs.iter().map(|b| b.window.interval.len_ns() as f64).sum();
            let share = d / total;
            let wmean = |f: &dyn Fn(&BubbleResult) -> f64| {
                bs.iter()
                    .map(|b| b.window.interval.len_ns() as f64 * f(b))
                    .sum::<f64>()
                    / d.max(1.0)
            };
            let direct = match label {
                Label::SyncOrH2d => wmean(&|b| b.evidence.sync.unwrap_or(0.0)) >= 0.5,
                Label::CommWait => wmean(&|b| b.evidence.comm.unwrap_or(0.0)) >= 0.5,
                _ => false,
            };
            let confidence = if matches!(
                label,
                Label::InsufficientEvidence | Label::UntracedHostBlocking
            ) {
                "low"
            } else if share >= 0.6 && direct {
                "high"
            } else if share >= 0.3 {
                "medium"
            } else {
                "low"
            };
            let mut top: Vec<&&BubbleResult> = bs.iter().collect();
            crate::base::sort::sort_by(&mut top, |a, b| {
                b.window.interval.len_ns().cmp(&a.window.interval.len_ns())
            });
            let f = |x: Option<f64>| format!("{:.2}", x.unwrap_or(0.0));
            let evidence = top
                .iter()
                .take(3)
                .map(|b| {
                    // A window under the DataLoader quotes its input ratio too (anomaly.md §5.9).
                    let input = match b.evidence.input {
                        Some(x) if x >= INPUT_OVERLAP_MIN => format!(" input={}", f(Some(x))),
                        _ => String::new(),
                    };
                    format!(
                        "bubble {} sync={} comm={} host={}{input}",
                        b.window.bubble_id,
                        f(b.evidence.sync),
                        f(b.evidence.comm),
                        f(b.evidence.host)
                    )
                })
                .collect();
            SummaryEntry {
                label,
                confidence,
                scope,
                target_id: target.clone(),
                share,
                evidence,
            }
        })
        .collect()
}

/// §5.9: labels of significant windows weighted by duration, per step, per group and globally,
/// with the group refinements of §5.8 (promotion of serialization / launch-lag labels).
pub fn soft_root_cause_summary(
    bubbles: &[BubbleResult],
    steps: &[StepResult],
    groups: &[GroupResult],
    cfg: &AnomalyConfig,
) -> Vec<SummaryEntry> {
    let sig: Vec<&BubbleResult> = bubbles
        .iter()
        .filter(|b| b.window.significant && b.window.scope != Scope::Global)
        .collect();
    let mut out = entries("global", None, &sig, cfg);
    let mut by_step: Vec<Vec<&BubbleResult>> = vec![Vec::new(); steps.len()];
    for b in &sig {
        if let Some(v) = b.window.step.and_then(|s| by_step.get_mut(s)) {
            v.push(b);
        }
    }
    for g in groups {
        let ws: Vec<&BubbleResult> = g
            .steps
            .iter()
            .flat_map(|&s| by_step[s].iter().copied())
            .collect();
        let mut e = entries("group", Some(g.group_id.clone()), &ws, cfg);
        let pre_avg = g.stats[3].avg;
        let svc_avg = g.stats[0].avg;
        e.retain(|x| match x.label {
            Label::PythonSerializationOrLock => g.recurring_bubble_pattern,
            Label::HostLaunchLag => {
                pre_avg >= cfg.gap_heavy_floor_ms.max(0.10 * svc_avg) || x.share >= 0.30
            }
            _ => true,
        });
        out.extend(e);
    }
    for (s, ws) in steps.iter().zip(&by_step) {
        out.extend(entries("step", Some(s.step_id.clone()), ws, cfg));
    }
    crate::base::sort::sort_by(&mut out, |a, b| {
        scope_rank(a.scope)
            .cmp(&scope_rank(b.scope))
            .then(b.share.total_cmp(&a.share))
    });
    out
}

/// §5.11.4 `requires_followup` per group.
pub fn set_followups(
    groups: &mut [GroupResult],
    steps: &[StepResult],
    summary: &[SummaryEntry],
    caps: &Capabilities,
) {
    for g in groups.iter_mut() {
        let top = summary
            .iter()
            .find(|e| e.scope == "group" && e.target_id.as_deref() == Some(g.group_id.as_str()));
        let low_specificity = top.is_none_or(|e| {
            matches!(
                e.label,
                Label::InsufficientEvidence | Label::UntracedHostBlocking
            ) || e.confidence == "low"
        });
        let polluted = g
            .steps
            .iter()
            .filter(|&&i| steps[i].tags.contains(&Tag::WaitPollutionRisk))
            .count();
        g.requires_followup = (g.severity == Level::High && low_specificity)
            || !caps.with_stack
            || !caps.record_shapes
            || (!g.steps.is_empty() && polluted * 2 >= g.steps.len() && polluted > 0);
    }
}

/// §5.17: start at `high`, one level down per missing piece, floor `low`.
pub fn confidence(method: StepMethod, caps: &Capabilities, op_summary_only: bool) -> &'static str {
    let mut drops = 0;
    if matches!(
        method,
        StepMethod::Pseudo | StepMethod::Macro | StepMethod::None
    ) {
        drops += 1;
    }
    if !caps.trace || caps.host_event_density == 0.0 {
        drops += 1;
    }
    if !caps.with_stack {
        drops += 1;
    }
    if op_summary_only {
        drops += 1;
    }
    match drops {
        0 => "high",
        1 => "medium",
        _ => "low",
    }
}

/// One recommendation (§8).
#[derive(Clone, Debug, PartialEq)]
pub struct Recommendation {
    /// `R1`, `R2`, …
    pub id: String,
    /// `global | step_group | structure | side | op`.
    pub scope: &'static str,
    /// Target id (group id, op name) or `None`.
    pub target_id: Option<String>,
    /// What to do.
    pub text: String,
    /// More data is needed before a root cause can be named.
    pub followup_required: bool,
    /// What evidence is missing.
    pub evidence_gap: String,
    /// `P0`–`P3`.
    pub priority: &'static str,
}

/// §8 trigger table, priorities and order.
pub fn recommendations(r: &AnomalyResult) -> Vec<Recommendation> {
    let mut v: Vec<Recommendation> = Vec::new();
    let dom = r.groups.first();
    let dom_p = dom
        .map(|g| {
            if g.severity == Level::High {
                "P0"
            } else if g.severity == Level::Medium
                || g.dominant_anomaly_tags.iter().any(|t| t.is_heavy())
            {
                "P1"
            } else {
                "P3"
            }
        })
        .unwrap_or("P3");
    let mut push = |scope: &'static str,
                    target: Option<String>,
                    text: &str,
                    follow: bool,
                    gap: &str,
                    prio: &'static str| {
        v.push(Recommendation {
            id: String::new(),
            scope,
            target_id: target,
            text: text.to_string(),
            followup_required: follow,
            evidence_gap: gap.to_string(),
            priority: prio,
        })
    };
    let heavy = dom.is_some_and(|g| g.dominant_anomaly_tags.iter().any(|t| t.is_heavy()));
    let gid = dom.map(|g| g.group_id.clone());
    if heavy && !r.capabilities.with_stack {
        push(
            "step_group",
            gid.clone(),
            "Re-profile with with_stack=True to tie bubbles to Python call sites.",
            true,
            "no call stacks",
            dom_p,
        );
    }
    let unstable = r.groups.len() > 1
        || dom.is_some_and(|g| (g.steps.len() as f64) < 0.6 * r.steps.len() as f64);
    if !r.capabilities.record_shapes && unstable {
        push("global", None, "Re-profile with record_shapes=True: step grouping is unstable and shapes could explain it.", true, "no input shapes", "P3");
    }
    if let Some(g) = dom {
        let low = r
            .soft_root_cause_summary
            .iter()
            .find(|e| e.scope == "group" && e.target_id.as_deref() == Some(g.group_id.as_str()))
            .is_none_or(|e| e.confidence == "low");
        if matches!(g.host_risk_level, Level::High | Level::Medium) && low {
            push("step_group", gid.clone(), "Sample the host side (e.g. py-spy or a thread view of the training process) during the bubbles.", true, "host activity inside bubbles is not traced", dom_p);
        }
        let polluted = g
            .steps
            .iter()
            .filter(|&&i| r.steps[i].tags.contains(&Tag::WaitPollutionRisk))
            .count();
        if polluted > 0 && polluted * 2 >= g.steps.len() {
            push("step_group", gid.clone(), "Check communication and synchronisation paths: kernel waits overlap communication windows.", true, "wait times are polluted by communication", dom_p);
        }
        let service: f64 = g
            .steps
            .iter()
            .map(|&i| r.steps[i].metrics.service_ns as f64)
            .sum();
        let inter: f64 = g
            .steps
            .iter()
            .flat_map(|&i| {
                r.steps[i]
                    .segmentation
                    .structures
                    .iter()
                    .map(|s| s.inter_structure_gap_ns as f64)
            })
            .sum();
        let between_top = r
            .bubbles
            .iter()
            .filter(|b| b.window.scope != Scope::Global)
            .take(usize::MAX)
            .collect::<Vec<_>>();
        let mut between_sorted = between_top.clone();
        crate::base::sort::sort_by(&mut between_sorted, |a, b| {
            b.window.interval.len_ns().cmp(&a.window.interval.len_ns())
        });
        if (service > 0.0 && inter >= 0.10 * service)
            || between_sorted.iter().take(5).any(|b| b.between_structures)
        {
            push("structure", gid.clone(), "Check host-side layer dispatch latency between layers: bubbles sit between structures.", false, "", dom_p);
        }
        if g.group_tags.contains(&Tag::CommSyncRisk) {
            push(
                "step_group",
                gid.clone(),
                "Compare ranks (possible slow rank) and check communication/compute overlap.",
                true,
                "other ranks' timing",
                dom_p,
            );
        }
    }
    for o in r.wait_anchor_ops.iter().filter(|o| o.is_false_hotspot_risk) {
        push(
            "op",
            Some(o.op_name.clone()),
            "Wait-anchor false hotspot: look upstream of this op; do not optimise the op itself.",
            false,
            "",
            "P2",
        );
    }
    for o in r
        .aicpu_ops
        .iter()
        .filter(|o| o.class == AicpuClass::ExposedNotAllowed)
    {
        push(
            "op",
            Some(o.op_name.clone()),
            "Exposed AI_CPU op: move it to AI_CORE (dtype, shape or operator choice).",
            false,
            "",
            "P2",
        );
    }
    if r.top_tags.contains(&Tag::PartialCaptureBoundary) {
        push(
            "global",
            None,
            "Capture more steps (a schedule with warmup) so edge gaps are not capture artifacts.",
            true,
            "capture boundary",
            "P3",
        );
    }
    let prio = |p: &str| p.as_bytes().get(1).copied().unwrap_or(b'9');
    let scope = |s: &str| match s {
        "global" => 0,
        "step_group" => 1,
        "structure" => 2,
        "side" => 3,
        _ => 4,
    };
    crate::base::sort::sort_by(&mut v, |a, b| {
        prio(a.priority)
            .cmp(&prio(b.priority))
            .then(scope(a.scope).cmp(&scope(b.scope)))
    });
    for (i, x) in v.iter_mut().enumerate() {
        x.id = format!("R{}", i + 1);
    }
    v
}
