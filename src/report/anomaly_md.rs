//! The human-readable anomaly report (anomaly.md §7–8): Hidden Issue Discovery,
//! the Bubble-first Summary (five questions), the structure drill-down and
//! breakdown, op rankings, AICPU and small-op judgements, recommendations,
//! the cross-rank table. Formatting only: every number comes from the result.

use std::fmt::Write;

use super::anomaly_json::{kernel_text, RankMeta};
use crate::analysis::anomaly::cross_rank::RankRow;
use crate::analysis::anomaly::groups::Level;
use crate::analysis::anomaly::tags::Tag;
use crate::analysis::anomaly::AnomalyResult;
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::analysis::bubbles::Scope;
use crate::analysis::host_evidence::Label;
use crate::base::units::ns_to_ms;
use crate::model::kernels::KernelTable;
use crate::report::float::ns_to_us_text;

mod across;
mod comm;
mod headline;
mod outside;
mod overruns;
mod readings;

pub use comm::{write_comm_section, CommSection};
pub use headline::headline;
use overruns::write_overruns;
pub use readings::readings;

fn ms(ns: i64) -> String {
    format!("{:.3} ms", ns_to_ms(ns))
}

fn ratio(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.2}"))
        .unwrap_or_else(|| "null".into())
}

/// Renders the report of one rank. `cross_check` are the §13.1 lines, `cross` the cross-rank table,
/// `gpu` the GPU section's input on a GPU rank (`report::gpu_md`). No communication section:
/// [`render_with`].
pub fn render(
    k: &KernelTable,
    r: &AnomalyResult,
    meta: &RankMeta,
    cross_check: &[String],
    cross: &[RankRow],
    gpu: Option<&super::gpu_md::GpuReportInput<'_>>,
    cfg: &AnomalyConfig,
) -> String {
    render_with(k, r, meta, cross_check, cross, gpu, None, cfg)
}

/// [`render`] with the communication section's input (`comm`: a rank with communication ops).
#[allow(clippy::too_many_arguments)]
pub fn render_with(
    k: &KernelTable,
    r: &AnomalyResult,
    meta: &RankMeta,
    cross_check: &[String],
    cross: &[RankRow],
    gpu: Option<&super::gpu_md::GpuReportInput<'_>>,
    comm: Option<&CommSection<'_>>,
    cfg: &AnomalyConfig,
) -> String {
    let mut o = String::new();
    let rank = meta
        .rank_id
        .map(|x| x.to_string())
        .unwrap_or_else(|| "?".into());
    let _ = writeln!(
        o,
        "# Anomaly report: `{}` (rank {rank}{})\n",
        meta.rank_dir,
        meta.role
            .as_ref()
            .map(|x| format!(", role `{x}`"))
            .unwrap_or_default()
    );
    let _ = writeln!(
        o,
        "Mode `{}`; steps by `{}`; confidence **{}**; {} kernels; {} steps in {} group(s).\n",
        cfg.compat.as_str(),
        r.step_detection_method(),
        r.confidence,
        k.len(),
        r.steps.len(),
        r.groups.len()
    );
    if !r.enabled {
        let _ = writeln!(
            o,
            "**Bubble analysis unavailable**: no kernel intervals. {}\n",
            r.limitations.join("; ")
        );
        return o;
    }
    write_overruns(&mut o, k, r);
    let dom = r.groups.first();
    // ---- Hidden Issue Discovery
    let _ = writeln!(o, "## Hidden Issue Discovery\n");
    if let Some(g) = dom {
        let _ = writeln!(
            o,
            "Dominant group `{}` ({} step(s)): service {:.3} ms, busy union {:.3} ms, underfeed ratio **{:.3}**, prelaunch {:.3} ms, tail {:.3} ms, internal bubbles {:.3} ms (largest p95 {:.3} ms). Severity **{}**, host risk {}, dominant idle pattern `{}`.\n",
            g.group_id,
            g.steps.len(),
            g.stats[0].avg,
            g.stats[1].avg,
            g.stats[2].avg,
            g.stats[3].avg,
            g.stats[4].avg,
            g.stats[5].avg,
            g.stats[6].p95,
            g.severity.severity_str(),
            g.host_risk_level.risk_str(),
            g.dominant_idle_pattern.as_str()
        );
        if !g.dominant_anomaly_tags.is_empty() {
            let tags: Vec<String> = g
                .dominant_anomaly_tags
                .iter()
                .map(|t| format!("**{}**", t.as_str()))
                .collect();
            let _ = writeln!(o, "Dominant anomaly tags: {}.\n", tags.join(", "));
        }
    }
    let mut top: Vec<&crate::analysis::anomaly::BubbleResult> = r
        .bubbles
        .iter()
        .filter(|b| b.window.scope != Scope::Global && b.window.significant)
        .collect();
    crate::base::sort::sort_by(&mut top, |a, b| {
        b.window.interval.len_ns().cmp(&a.window.interval.len_ns())
    });
    let _ = writeln!(o, "### Raw kernel evidence for the top bubbles\n");
    let _ = writeln!(o, "| # | bubble_id | scope | start_us | duration_ms | before (name, type, dur, stream) | after | labels |");
    let _ = writeln!(o, "|---|---|---|---:|---:|---|---|---|");
    for (i, b) in top.iter().take(10).enumerate() {
        let w = &b.window;
        let kt = |x: Option<usize>| {
            x.map(|i| format!("`{}`", kernel_text(k, i)))
                .unwrap_or_else(|| "—".into())
        };
        let labels: Vec<&str> = b.labels.iter().map(|l| l.as_str()).collect();
        let _ = writeln!(
            o,
            "| {} | `{}` | {} | {} | {:.3} | {} | {} | {} |",
            i + 1,
            w.bubble_id,
            w.scope.as_str(),
            ns_to_us_text(w.interval.start_ns),
            ns_to_ms(w.interval.len_ns()),
            kt(w.before),
            kt(w.after),
            labels.join(", ")
        );
    }
    let _ = writeln!(o, "\n### Top 5 bubble windows\n");
    let _ = writeln!(
        o,
        "| bubble_id | scope | start_us | end_us | duration_ms | host | sync | comm |"
    );
    let _ = writeln!(o, "|---|---|---:|---:|---:|---:|---:|---:|");
    for b in top.iter().take(5) {
        let w = &b.window;
        let _ = writeln!(
            o,
            "| `{}` | {} | {} | {} | {:.3} | {} | {} | {} |",
            w.bubble_id,
            w.scope.as_str(),
            ns_to_us_text(w.interval.start_ns),
            ns_to_us_text(w.interval.end_ns),
            ns_to_ms(w.interval.len_ns()),
            ratio(b.evidence.host),
            ratio(b.evidence.sync),
            ratio(b.evidence.comm)
        );
    }
    let _ = writeln!(o, "\n### Bubble periodicity\n");
    for g in &r.groups {
        let _ = writeln!(
            o,
            "- `{}`: {:.0}% of {} step(s) have internal bubbles; stable positions: {}; recurring_bubble_pattern = **{}**{}.",
            g.group_id,
            g.recurrence_fraction * 100.0,
            g.steps.len(),
            g.stable_positions.as_deref().unwrap_or("none found"),
            g.recurring_bubble_pattern,
            if g.recurrence_assessable { "" } else { " (not assessable with one step)" }
        );
    }
    let _ = writeln!(o, "\n### Host-evidence coverage\n");
    let _ = writeln!(
        o,
        "{} host events kept ({:.1} per 100 kernels); {} step-marker event(s) excluded; policy `{}`{}. {}\n",
        r.host_policy.0,
        r.capabilities.host_event_density,
        r.host_policy.1,
        cfg.compat.as_str(),
        if cfg.compat == crate::analysis::anomaly_config::Compat::Rulebook {
            " (markers excluded, events longer than half the step dropped, leaf events only for general host coverage)"
        } else {
            " (no hygiene)"
        },
        if r.top_tags.contains(&Tag::UntracedHostBlockingRisk) {
            "**Host evidence is sparse**: causes cannot be narrowed (`UNTRACED_HOST_BLOCKING_RISK`)."
        } else {
            "Host evidence is dense enough to label bubbles."
        }
    );
    let _ = writeln!(
        o,
        "### Soft root-cause labels (possible causes, never unique)\n"
    );
    if r.soft_root_cause_summary.is_empty() {
        let _ = writeln!(o, "No significant windows were attributed.\n");
    }
    for e in r.soft_root_cause_summary.iter().take(12) {
        let _ = writeln!(
            o,
            "- {} `{}`{}: `{}` (share {:.2}, confidence {}); evidence: {}",
            e.scope,
            e.target_id.as_deref().unwrap_or("all"),
            "",
            e.label.as_str(),
            e.share,
            e.confidence,
            e.evidence.join("; ")
        );
    }
    let _ = writeln!(o, "\n### Follow-up and recommendations\n");
    for x in &r.recommendations {
        let _ = writeln!(
            o,
            "- **{}** {} [{}{}]: {}{}",
            x.priority,
            x.id,
            x.scope,
            x.target_id
                .as_ref()
                .map(|t| format!(" `{t}`"))
                .unwrap_or_default(),
            x.text,
            if x.evidence_gap.is_empty() {
                String::new()
            } else {
                format!(" (evidence gap: {})", x.evidence_gap)
            }
        );
    }
    if r.recommendations.is_empty() {
        let _ = writeln!(o, "- No recommendation triggered.");
    }
    // ---- Bubble-first Summary
    let _ = writeln!(o, "\n## Bubble-first Summary\n");
    let sig = top.len();
    let largest = top.first().map(|b| b.window.interval.len_ns()).unwrap_or(0);
    let outside = outside::longer_idle_outside_steps(r, largest);
    let _ = writeln!(
        o,
        "1. **Are there significant device idle bubbles?** {}{outside}",
        if sig > 0 {
            format!(
                "Yes: {sig} significant window(s); the largest is {} (`{}`).",
                ms(largest),
                top[0].window.bubble_id
            )
        } else {
            "No significant bubble window.".into()
        }
    );
    let _ = writeln!(
        o,
        "2. **Which step type / group do they concentrate in?** {}",
        dom.map(|g| format!(
            "Group `{}` ({} of {} steps, template {:016x}).",
            g.group_id,
            g.steps.len(),
            r.steps.len(),
            g.template_hash
        ))
        .unwrap_or_else(|| "No step group.".into())
    );
    let _ = writeln!(
        o,
        "3. **Mainly prelaunch, tail, internal or inter-step?** {}",
        dom.map(|g| format!(
            "`{}` (prelaunch {:.3} ms, tail {:.3} ms, internal {:.3} ms on average).",
            g.dominant_idle_pattern.as_str(),
            g.stats[3].avg,
            g.stats[4].avg,
            g.stats[5].avg
        ))
        .unwrap_or_default()
    );
    let _ = writeln!(
        o,
        "4. **Is there significant host-originated risk?** {}",
        dom.map(|g| format!(
            "Host risk level `{}`{}; weighted host coverage {:.2}, sync overlap {:.2}.",
            g.host_risk_level.risk_str(),
            if g.group_tags.contains(&Tag::HostOriginatedRisk) {
                " with **HOST_ORIGINATED_RISK**"
            } else {
                ""
            },
            g.wmean_host,
            g.wmean_sync
        ))
        .unwrap_or_default()
    );
    let top_label = r
        .soft_root_cause_summary
        .iter()
        .find(|e| e.scope == "global");
    let sufficient = top_label.is_some_and(|e| {
        !matches!(
            e.label,
            Label::InsufficientEvidence | Label::UntracedHostBlocking
        ) && e.confidence != "low"
    });
    let _ = writeln!(
        o,
        "5. **Is the evidence sufficient for a root cause?** {}",
        if sufficient {
            format!(
                "Partly: the leading label is `{}` ({}), still a possible cause only.",
                top_label.map(|e| e.label.as_str()).unwrap_or(""),
                top_label.map(|e| e.confidence).unwrap_or("")
            )
        } else {
            "**No**: insufficient evidence for a root cause; see the follow-up recommendations."
                .into()
        }
    );
    // ---- Structure drill-down and breakdown (dominant step)
    if let Some(si) = dom.and_then(|g| g.steps.first()).copied() {
        let s = &r.steps[si];
        let seg = &s.segmentation;
        let _ = writeln!(
            o,
            "\n## Structure-Level Bubble Drill-Down (`{}`)\n",
            s.step_id
        );
        let _ = writeln!(
            o,
            "Segmentation: `{}`{}; {} structure(s); main stream `{}`.\n",
            seg.method,
            seg.anchor
                .as_ref()
                .map(|(n, u)| format!(" (anchor `{n}`, unit {u} main-stream kernels)"))
                .unwrap_or_default(),
            seg.structures.len(),
            s.main_stream.as_deref().unwrap_or("none")
        );
        let mut by_struct: Vec<(&str, i64, usize)> = seg
            .structures
            .iter()
            .map(|x| {
                (
                    x.structure_id.as_str(),
                    x.metrics.largest_internal_ns(),
                    x.metrics.bubble_count(),
                )
            })
            .collect();
        crate::base::sort::sort_by(&mut by_struct, |a, b| b.1.cmp(&a.1));
        for (id, l, n) in by_struct.iter().take(3) {
            let _ = writeln!(
                o,
                "- `{id}`: largest internal bubble {} ({n} bubbles inside).",
                ms(*l)
            );
        }
        let between = r
            .bubbles
            .iter()
            .filter(|b| b.window.step == Some(si) && b.between_structures)
            .count();
        let inside = r
            .bubbles
            .iter()
            .filter(|b| b.window.step == Some(si) && b.structure_id.is_some())
            .count();
        let _ = writeln!(
            o,
            "- Emitted windows inside structures: {inside}; between structures: {between}.\n"
        );
        let _ = writeln!(o, "## Structure breakdown\n");
        let _ = writeln!(o, "| structure | type | kernels | wall_ms | busy_union_ms | kernel_sum_ms | total_cost_ms | AI_CORE | AI_CPU | HCCL | share | bubbles | largest_ms | inter_gap_ms |");
        let _ = writeln!(
            o,
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        for x in seg.structures.iter().take(200) {
            let p = &x.perspectives;
            let _ = writeln!(
                o,
                "| `{}` | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {} | {:.3} | {:.3} |",
                x.structure_id,
                x.structure_type,
                x.kernels.len(),
                ns_to_ms(p.wall_ns),
                ns_to_ms(p.busy_ns),
                ns_to_ms(p.kernel_sum_ns),
                ns_to_ms(p.total_cost_ns),
                x.class_pct[0] * 100.0,
                x.class_pct[1] * 100.0,
                x.class_pct[2] * 100.0,
                if s.metrics.service_ns > 0 { p.wall_ns as f64 * 100.0 / s.metrics.service_ns as f64 } else { 0.0 },
                x.metrics.bubble_count(),
                ns_to_ms(x.metrics.largest_internal_ns()),
                ns_to_ms(x.inter_structure_gap_ns)
            );
        }
        let _ = writeln!(o, "\n### Block / side\n");
        let _ = writeln!(o, "| structure | part | kernels | dominant type | dominant stream | wall_ms | busy_union_ms | kernel_sum_ms | total_cost_ms | wait-heavy | top kernel |");
        let _ = writeln!(o, "|---|---|---:|---|---|---:|---:|---:|---:|---:|---|");
        for x in seg.structures.iter().take(100) {
            for (name, p) in [("block", &x.block), ("side", &x.side)] {
                let pp = &p.perspectives;
                let _ = writeln!(
                    o,
                    "| `{}` | {name} | {} | {} | `{}` | {:.3} | {:.3} | {:.3} | {:.3} | {} | {} |",
                    x.structure_id,
                    p.kernels.len(),
                    p.dominant_task_type,
                    p.dominant_stream,
                    ns_to_ms(pp.wall_ns),
                    ns_to_ms(pp.busy_ns),
                    ns_to_ms(pp.kernel_sum_ns),
                    ns_to_ms(pp.total_cost_ns),
                    p.wait_heavy.len(),
                    p.top_by_duration
                        .first()
                        .map(|&i| format!("`{}`", kernel_text(k, i)))
                        .unwrap_or_default()
                );
            }
        }
        let p = &s.perspectives;
        let _ = writeln!(
            o,
            "\n### Four perspectives (step)\n\nwall {}, busy_union {}, kernel_sum {}, total_cost {}.",
            ms(p.wall_ns),
            ms(p.busy_ns),
            ms(p.kernel_sum_ns),
            ms(p.total_cost_ns)
        );
        for line in readings(p, cfg) {
            let _ = writeln!(o, "- {line}");
        }
        let _ = writeln!(o, "\nNo conclusion is drawn from a single metric.\n");
        let sm = &s.small_ops;
        let _ = writeln!(
            o,
            "### Small ops\n\n{} kernels under {} µs, Σ {} ({:.1}% of the busy union), longest main-stream run {}: verdict `{}`.\n",
            sm.count,
            cfg.small_kernel_us,
            ms(sm.dur_ns),
            sm.share_of_busy * 100.0,
            sm.longest_main_run,
            sm.verdict
        );
    }
    let _ = writeln!(o, "## Op rankings\n");
    let _ = writeln!(o, "| rank by total cost | rank by duration | op | calls | dur_us avg | wait_us avg | total_cost_us avg | wait ratio | false hotspot |");
    let _ = writeln!(o, "|---:|---:|---|---:|---:|---:|---:|---:|---|");
    for w in r.wait_anchor_ops.iter().take(10) {
        let _ = writeln!(
            o,
            "| {} | {} | `{}` | {} | {:.3} | {:.3} | {:.3} | {:.4} | {} |",
            w.total_cost_rank,
            w.duration_rank,
            w.op_name,
            w.call_count,
            w.duration_us_avg,
            w.wait_us_avg,
            w.total_cost_us_avg,
            w.wait_ratio,
            if w.is_false_hotspot_risk {
                "**WAIT_ANCHOR_FALSE_HOTSPOT**: tiny op with a huge wait; not a real hotspot"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(o, "\n## AICPU\n");
    if r.aicpu_ops.is_empty() {
        let _ = writeln!(o, "No AI_CPU kernels.");
    } else {
        let _ = writeln!(o, "| op | calls | duration_ms | masked ratio | class | exposed_ms |\n|---|---:|---:|---:|---|---:|");
        for a in &r.aicpu_ops {
            let _ = writeln!(
                o,
                "| `{}` | {} | {:.3} | {:.3} | {} | {:.3} |",
                a.op_name,
                a.call_count,
                ns_to_ms(a.dur_ns),
                a.masked_ratio,
                a.class.as_str(),
                ns_to_ms(a.exposed_ns)
            );
        }
    }
    let _ = writeln!(o, "\n## PMU\n");
    match &r.pmu {
        None => {
            let _ = writeln!(o, "PMU judgement unavailable");
        }
        Some(v) => {
            for (n, verdict) in v {
                let _ = writeln!(o, "- `{n}`: {verdict}");
            }
        }
    }
    let _ = writeln!(o, "\n## Steps\n\n| step | group | service_ms | busy_union_ms | underfeed | prelaunch_ms | tail_ms | internal_ms | largest_ms | bubbles | tags |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for s in r.steps.iter().take(500) {
        let m = &s.metrics;
        let tags: Vec<&str> = s.tags.iter().map(|t| t.as_str()).collect();
        let _ = writeln!(
            o,
            "| `{}` | {} | {:.3} | {:.3} | {:.4} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {} |",
            s.step_id,
            s.group_id,
            ns_to_ms(m.service_ns),
            ns_to_ms(m.busy_ns),
            m.underfeed_ratio,
            ns_to_ms(m.prelaunch_ns),
            ns_to_ms(m.tail_ns),
            ns_to_ms(m.internal_total_ns()),
            ns_to_ms(m.largest_internal_ns()),
            m.bubble_count(),
            tags.join(", ")
        );
    }
    if !cross_check.is_empty() {
        let _ = writeln!(o, "\n## step_trace_time.csv cross-check\n");
        for l in cross_check {
            let _ = writeln!(o, "- {l}");
        }
    }
    if let Some(g) = gpu {
        super::gpu_md::write_gpu_section(&mut o, g);
    }
    if let Some(c) = comm {
        write_comm_section(&mut o, meta.rank_id, c);
    }
    if cross.len() > 1 {
        across::write_across(&mut o, cross);
    }
    let _ = writeln!(o, "\n## Limitations\n");
    let c = &r.capabilities;
    let option = |name: &str, on: bool, src: &str| {
        format!("`{name}` {} ({src})", if on { "on" } else { "off" })
    };
    let _ = writeln!(
        o,
        "- Capture options (anomaly.md §1.1.1; where each was read): {}, {}, {}, {}, {}.",
        option("record_shapes", c.record_shapes, c.record_shapes_source),
        option("with_stack", c.with_stack, c.with_stack_source),
        option("profile_memory", c.profile_memory, c.profile_memory_source),
        option("with_flops", c.with_flops, c.with_flops_source),
        option("with_modules", c.with_modules, c.with_modules_source)
    );
    for l in &r.limitations {
        let _ = writeln!(o, "- {l}");
    }
    if let Some(g) = dom {
        if g.severity == Level::None && !g.hidden_issue_present {
            let _ = writeln!(
                o,
                "- No hidden issue by the decision table; local bubbles are still listed above."
            );
        }
    }
    o
}
