//! The GPU section of the anomaly report of a GPU (Kineto) rank (anomaly.md §7 on
//! GPU streams): HTA's `gpu_time_breakdown` (µs and % of the span) and `idle_by_stream`
//! (gpu-traces.md §2–§3, HTA's integral µs as the JSON gives them), the kernel categories and
//! the top kernels by time (exact µs from the integer ns, `report::float::ns_to_us_text`),
//! and the straggler table of the rank's view (one view per role when the run holds several).
//! Formatting only: every number comes from `analysis::gpu_rank::GpuSummary` and
//! `analysis::gpu_straggler`. Names from the trace are written as code spans
//! ([`md_code`], the snapshot report's escaping), so `|` or backticks never break a table.

use std::fmt::Write;

use super::snapshot_md::md_code;
use crate::analysis::gpu_kernels::Category;
use crate::analysis::gpu_rank::GpuSummary;
use crate::analysis::gpu_straggler::Stragglers;
use crate::base::format;
use crate::report::float::ns_to_us_text;

/// How many kernel names the report lists (the JSON's `top_kernels` count).
pub const TOP_KERNELS: usize = super::anomaly_json::gpu::TOP_KERNELS;

/// What the GPU section of one rank's report needs: its GPU analyses and, when it is in a
/// straggler view, `(the view's role, the view, its row)` (role `None`: one view over every
/// GPU rank).
#[derive(Clone, Debug)]
pub struct GpuReportInput<'v> {
    /// The rank's GPU analyses.
    pub summary: &'v GpuSummary,
    /// Its straggler view and row.
    pub straggler: Option<(Option<&'v str>, &'v Stragglers, usize)>,
}

fn pct(part: i64, whole: i64) -> String {
    format::percent((whole > 0).then(|| part as f64 / whole as f64), 2)
}

fn opt_us(x: Option<i64>) -> String {
    x.map_or_else(|| "—".into(), |v| v.to_string())
}

/// Writes the `## GPU` section of one rank's report to `o`.
pub fn write_gpu_section(o: &mut String, g: &GpuReportInput<'_>) {
    let s = g.summary;
    let w = &s.hta.window;
    let _ = writeln!(o, "\n## GPU (PyTorch profiler trace)\n");
    let _ = match w.last_step_start_us {
        Some(_) => writeln!(
            o,
            "HTA breakdowns in HTA's parity window: {} ProfilerSteps; the GPU events launched at or after the last step's start are left out ({} kept, {} left out). Integral µs as HTA 0.5.0.",
            w.profiler_steps, w.gpu_kept, w.gpu_dropped
        ),
        None => writeln!(
            o,
            "HTA breakdowns over the whole capture (fewer than 2 ProfilerSteps): {} GPU events. Integral µs as HTA 0.5.0.",
            w.gpu_kept
        ),
    };
    let _ = writeln!(o, "\n### gpu_time_breakdown\n");
    match &s.hta.time {
        Some(t) => {
            let _ = writeln!(o, "| | µs | % of span |\n|---|---:|---:|");
            for (name, v) in [
                ("span", t.span_us),
                ("idle", t.idle_us),
                ("compute", t.compute_us),
                ("non-compute", t.non_compute_us),
            ] {
                let _ = writeln!(o, "| {name} | {v} | {} |", pct(v, t.span_us));
            }
        }
        None => {
            let _ = writeln!(
                o,
                "No kept GPU event has a stream (a host-only trace): no breakdown."
            );
        }
    }
    if !s.hta.idle_by_stream.is_empty() {
        let _ = writeln!(o, "\n### idle_by_stream\n");
        let _ = writeln!(
            o,
            "| stream | host wait µs | kernel wait µs | other µs |\n|---:|---:|---:|---:|"
        );
        for i in &s.hta.idle_by_stream {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} |",
                i.stream,
                opt_us(i.host_wait_us),
                opt_us(i.kernel_wait_us),
                i.other_us
            );
        }
    }
    let c = &s.kernels.times;
    let all_ns = c.sum_ns.iter().fold(0i64, |a, &b| a.saturating_add(b));
    let _ = writeln!(o, "\n### Kernel categories (whole capture)\n");
    let _ = writeln!(
        o,
        "| category | kernels | time µs | busy union µs | share of kernel time |\n|---|---:|---:|---:|---:|"
    );
    for k in [Category::Compute, Category::Communication, Category::Memory] {
        let j = k as usize;
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} |",
            k.as_str(),
            c.count[j],
            ns_to_us_text(c.sum_ns[j]),
            ns_to_us_text(c.busy_ns[j]),
            pct(c.sum_ns[j], all_ns)
        );
    }
    if !s.kernels.by_name.is_empty() {
        let _ = writeln!(
            o,
            "\n### Top kernels by time ({} of {} names)\n",
            s.kernels.by_name.len().min(TOP_KERNELS),
            s.kernels.by_name.len()
        );
        let _ = writeln!(
            o,
            "| kernel | category | count | total µs | share of kernel time |\n|---|---|---:|---:|---:|"
        );
        for n in s.kernels.by_name.iter().take(TOP_KERNELS) {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} |",
                md_code(&n.name),
                n.category.as_str(),
                n.count,
                ns_to_us_text(n.total_ns),
                pct(n.total_ns, all_ns)
            );
        }
    }
    if let Some((role, v, me)) = g.straggler {
        let _ = writeln!(o, "\n### Stragglers\n");
        let group = role.map_or_else(
            || "every GPU rank of the run".to_string(),
            |r| format!("the GPU ranks of role {}", md_code(r)),
        );
        if v.matched == 0 {
            let per: Vec<String> = v
                .per_rank_collectives
                .iter()
                .map(|n| n.to_string())
                .collect();
            let _ = writeln!(
                o,
                "No collective matched over {group} (communication kernels per rank: {}): no straggler.",
                per.join(", ")
            );
            return;
        }
        let _ = writeln!(
            o,
            "Collectives matched (by order and name) over {group}: {}. The straggler of a collective is the rank that starts it last.\n",
            v.matched
        );
        let _ = writeln!(
            o,
            "| rank | started last | mean start delay µs | max start delay µs | straggler |\n|---:|---:|---:|---:|---|"
        );
        for (k, r) in v.ranks.iter().enumerate() {
            let _ = writeln!(
                o,
                "| {}{} | {} | {} | {} | {} |",
                r.rank,
                if k == me { " (this rank)" } else { "" },
                r.last_count,
                ns_to_us_text(r.mean_delay_ns),
                ns_to_us_text(r.max_delay_ns),
                if v.straggler_index == Some(k) {
                    "**straggler**"
                } else {
                    ""
                }
            );
        }
    }
}
