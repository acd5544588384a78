//! The memory summary as Markdown (issue 2 export "summary as Markdown"): per rank the
//! counts, match quality, allocator peak and live set at it (ascend-memory.md §9.6),
//! top allocation sites by `user_frame`, the naive curve numbers (§11), and the §9.7
//! phase table over all ranks. Formatting only: numbers come from `analysis`.

use std::io::{self, Write};

use super::float::{ns_to_us_text, py_repr};
use crate::analysis::memory_curve::py_round;
use crate::analysis::memory_match::MatchQuality;
use crate::analysis::memory_phase::{phase_table, PhaseRow};
use crate::analysis::memory_result::{MemoryRun, RankStatus};
use crate::analysis::memory_summary::summarize;

fn esc(s: &str) -> String {
    s.replace('|', "\\|").replace(['\r', '\n'], " ")
}

fn r4(x: f64) -> String {
    py_repr(py_round(x, 4))
}

/// Writes the summary of `run` as Markdown to `out`. Errors: only those of `out`.
pub fn write_summary(run: &MemoryRun, out: &mut dyn Write) -> io::Result<()> {
    let mut s = String::new();
    s.push_str("# Memory events summary\n\n");
    s.push_str(&format!(
        "{} rows from {} rank folder(s).\n\n",
        run.len(),
        run.ranks.len()
    ));
    for r in &run.ranks {
        s.push_str(&format!(
            "## {} / rank {} (source {}: `{}`)\n\n",
            esc(&r.info.role),
            r.info.rank_id,
            r.info.source_index,
            esc(&r.info.source_dir)
        ));
        match &r.status {
            RankStatus::Failed(why) => {
                s.push_str(&format!("Not analysed: {}\n\n", esc(why)));
                continue;
            }
            RankStatus::Cancelled => {
                s.push_str("Cancelled.\n\n");
                continue;
            }
            RankStatus::Analysed => {}
        }
        let m = summarize(r);
        s.push_str("| Quantity | Value |\n|---|---|\n");
        let mut kv = |k: &str, v: String| s.push_str(&format!("| {k} | {v} |\n"));
        kv("phase", r.phase.as_str().into());
        kv("rows", m.rows.to_string());
        kv(
            "allocations (size > 0)",
            format!("{} rows, {} KB", m.alloc_rows, py_repr(m.alloc_kb)),
        );
        kv(
            "frees (size < 0)",
            format!("{} rows, {} KB", m.free_rows, py_repr(m.free_kb)),
        );
        kv("Σ size_kb", py_repr(m.sum_size_kb));
        kv("distinct op names", m.distinct_names.to_string());
        kv(
            "rows with a call stack (RL-Insight rule)",
            m.rows_with_call_stack.to_string(),
        );
        kv(
            "match quality",
            MatchQuality::ALL
                .iter()
                .map(|q| format!("{} {}", q.as_str(), m.quality(*q)))
                .collect::<Vec<_>>()
                .join(", "),
        );
        kv("unreleased rows", m.unreleased_rows.to_string());
        if let Some((v, row)) = m.max_total_allocated {
            let rr = r.row(row as usize);
            kv(
                "max total_allocated_mb (CSV)",
                format!(
                    "{} at {} ms (`{}`, line {})",
                    py_repr(v),
                    py_repr(rr.start_time_ms()),
                    esc(rr.name()),
                    rr.source_line()
                ),
            );
        }
        kv(
            "naive curve (operator rows only, starts at 0)",
            format!(
                "{} points, peak {} MB at +{} ms",
                m.naive_points,
                py_repr(m.naive_peak_mb),
                py_repr(m.naive_peak_rel_ms)
            ),
        );
        kv(
            "trace",
            if r.trace.present {
                format!(
                    "{} cpu_op events, {} with a Call stack",
                    r.trace.cpu_ops, r.trace.with_stack
                )
            } else {
                "no trace_view.json".into()
            },
        );
        kv(
            "problems",
            format!(
                "{} ({} errors)",
                r.problems.total(),
                r.problems
                    .kept()
                    .iter()
                    .filter(|p| p.severity == crate::base::Severity::Error)
                    .count()
            ),
        );
        s.push('\n');
        if let Some(p) = &m.allocator_peak {
            s.push_str("### Allocator peak (§9.6)\n\n");
            s.push_str(&format!(
                "Peak allocated **{} MB** at {} µs ({} sample, `{}`, line {}); reserved at peak {} MB, max reserved {} MB.\n",
                py_repr(p.peak.peak_allocated_mb),
                ns_to_us_text(p.peak.peak_time_ns),
                p.peak.peak_sample_kind.as_str(),
                esc(&p.peak_name),
                p.peak.peak_source_line,
                p.peak.reserved_at_peak_mb.map(py_repr).unwrap_or_else(|| "—".into()),
                p.peak.max_reserved_mb.map(py_repr).unwrap_or_else(|| "—".into()),
            ));
            s.push_str(&format!(
                "Live at peak: {} rows, {} KB (explains {} of the allocator level; the rest predates the capture or is not operator-tracked).\n\n",
                p.peak.live_rows.len(),
                py_repr(p.peak.live_kb),
                p.peak.explained_ratio.map(|x| format!("{}%", r4(x * 100.0))).unwrap_or_else(|| "—".into()),
            ));
            for (title, groups) in [
                ("user_frame", &p.live_by_user_frame),
                ("name", &p.live_by_name),
            ] {
                s.push_str(&format!(
                    "| Live by {title} | KB | rows | % of live |\n|---|---|---|---|\n"
                ));
                for g in groups.iter() {
                    let pct = if p.peak.live_kb != 0.0 {
                        g.kb / p.peak.live_kb * 100.0
                    } else {
                        0.0
                    };
                    let key = if g.key.is_empty() {
                        "(none)".to_string()
                    } else {
                        format!("`{}`", esc(&g.key))
                    };
                    s.push_str(&format!(
                        "| {key} | {} | {} | {} |\n",
                        py_repr(g.kb),
                        g.count,
                        r4(pct)
                    ));
                }
                s.push('\n');
            }
            s.push_str("| Largest live rows | KB | released | user_frame | line |\n|---|---|---|---|---|\n");
            for &i in &p.largest_live {
                let rr = r.row(i as usize);
                s.push_str(&format!(
                    "| `{}` | {} | {} | {} | {} |\n",
                    esc(rr.name()),
                    py_repr(rr.size_kb()),
                    rr.release_time_ns().is_some(),
                    esc(rr.user_frame().0),
                    rr.source_line()
                ));
            }
            s.push('\n');
        }
        s.push_str("### Top allocation sites (by user_frame)\n\n| user_frame | KB | rows |\n|---|---|---|\n");
        for g in &m.top_sites {
            let key = if g.key.is_empty() {
                "(none)".to_string()
            } else {
                format!("`{}`", esc(&g.key))
            };
            s.push_str(&format!("| {key} | {} | {} |\n", py_repr(g.kb), g.count));
        }
        s.push('\n');
    }
    let rows = run.rows().map(|r| PhaseRow {
        role: r.role(),
        size_kb: r.size_kb(),
        start_time_ms: r.start_time_ms(),
        duration_ms: r.duration_ms(),
        total_allocated_mb: r.total_allocated_mb(),
        total_active_mb: r.total_active_mb(),
    });
    let table = phase_table(rows);
    if !table.is_empty() {
        s.push_str("## Phases (§9.7)\n\n| phase | roles | events | allocs | deallocs | alloc_kb | dealloc_kb | net_kb | alloc_mb | peak_allocated_mb | peak_active_mb | t_start_ms | t_end_ms |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for p in table {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                p.phase.as_str(),
                esc(&p.roles.join(", ")),
                p.event_count,
                p.alloc_count,
                p.dealloc_count,
                r4(p.alloc_kb),
                r4(p.dealloc_kb),
                r4(p.net_kb()),
                r4(p.alloc_mb()),
                r4(p.peak_allocated_mb),
                r4(p.peak_active_mb),
                r4(p.t_start_ms),
                r4(p.t_end_ms),
            ));
        }
    }
    out.write_all(s.as_bytes())
}
