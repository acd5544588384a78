//! The memory summary as Markdown (summary as Markdown): per rank the
//! counts, match quality, and per allocator pool (PTA / GE / OTHER, ascend-memory.md §8.2
//! `component`) its own peak and live set at it (§9.6); sizes in binary units (base::format),
//! top allocation sites by `user_frame`, the naive curve numbers (§11), and the §9.7
//! phase table over all ranks. Formatting only: numbers come from `analysis`.

use std::io::{self, Write};

use super::float::{ns_to_us_text, py_repr};
use crate::analysis::memory_curve::py_round;
use crate::analysis::memory_match::MatchQuality;
use crate::analysis::memory_phase::{phase_table, PhaseRow};
use crate::analysis::memory_result::RankMemory;
use crate::analysis::memory_result::{MemoryRun, RankStatus};
use crate::analysis::memory_summary::summarize;
use crate::analysis::memory_summary::PoolSummary;
use crate::base::format;
use crate::base::units::ns_to_ms;

fn esc(s: &str) -> String {
    s.replace('|', "\\|").replace(['\r', '\n'], " ")
}

fn r4(x: f64) -> String {
    py_repr(py_round(x, 4))
}

/// Writes the summary of `run` as Markdown to `out`. Errors: only those of `out`.
pub fn write_summary(run: &MemoryRun, out: &mut dyn Write) -> io::Result<()> {
    let mut s = summary_head(run.len(), run.ranks.len());
    for r in &run.ranks {
        s.push_str(&rank_section(r));
    }
    s.push_str(&phase_section(run.rows().map(|r| PhaseRow {
        role: r.role(),
        size_kb: r.size_kb(),
        start_time_ms: r.start_time_ms(),
        duration_ms: r.duration_ms(),
        total_allocated_mb: r.total_allocated_mb(),
        total_active_mb: r.total_active_mb(),
    })));
    out.write_all(s.as_bytes())
}

/// The title and the count line of the summary (`rows` over `ranks` rank folders).
pub fn summary_head(rows: usize, ranks: usize) -> String {
    format!("# Memory events summary\n\n{rows} rows from {ranks} rank folder(s).\n\n")
}

/// One rank's section of the summary (§9.5–9.6 per pool, top sites), in the summary's
/// rank order; the page's gathered export joins these sections from several workers.
pub fn rank_section(r: &RankMemory) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "## {} / rank {} (source {}: `{}`)\n\n",
        esc(&r.info.role),
        r.info.rank_id,
        r.info.source_index,
        esc(&r.info.source_dir)
    ));
    if let Some(why) = not_analysed(&r.status) {
        s.push_str(&format!("{}\n\n", esc(&why)));
        return s;
    }
    let m = summarize(r);
    s.push_str("| Quantity | Value |\n|---|---|\n");
    let mut kv = |k: &str, v: String| s.push_str(&format!("| {k} | {v} |\n"));
    kv("phase", r.phase.as_str().into());
    kv("rows", m.rows.to_string());
    kv(
        "allocations (size > 0)",
        format!("{} rows, {}", m.alloc_rows, format::kib(m.alloc_kb)),
    );
    kv(
        "frees (size < 0)",
        format!("{} rows, {}", m.free_rows, format::kib(m.free_kb)),
    );
    kv("net size (Σ size)", format::kib(m.sum_size_kb));
    kv("distinct op names", m.distinct_names.to_string());
    kv(
        "rows with a call stack (reference tool's rule: a matched op with a stack)",
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
    kv(
        "naive curve (operator rows only, starts at 0)",
        format!(
            "{} points, peak {} at {} from the first allocation",
            m.naive_points,
            format::mib(m.naive_peak_mb),
            format::offset_ms(m.naive_peak_rel_ms, 0.0)
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
    let t0_ns = capture_start_ns(r);
    for pool in &m.pools {
        write_pool(&mut s, r, pool, t0_ns);
    }
    s.push_str(
        "### Top allocation sites (by user frame)\n\n| user frame | size | rows |\n|---|---|---|\n",
    );
    for g in &m.top_sites {
        let key = if g.key.is_empty() {
            "(none)".to_string()
        } else {
            format!("`{}`", esc(&g.key))
        };
        s.push_str(&format!(
            "| {key} | {} | {} |\n",
            format::kib(g.kb),
            g.count
        ));
    }
    s.push('\n');
    s
}

/// The §9.7 phase table over `rows` in §9.0 order (empty when no row has a phase).
pub fn phase_section<'a>(rows: impl Iterator<Item = PhaseRow<'a>>) -> String {
    let mut s = String::new();
    let table = phase_table(rows);
    if !table.is_empty() {
        s.push_str("## Phases (by role name)\n\n| phase | roles | events | allocs | deallocs | alloc_kb | dealloc_kb | net_kb | alloc_mb | peak_allocated_mb | peak_active_mb | t_start_ms | t_end_ms |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
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
    s
}

/// Why a rank has no summary (`Not analysed: …`, `Cancelled.`), `None` when it was analysed.
fn not_analysed(status: &RankStatus) -> Option<String> {
    match status {
        RankStatus::Failed(why) => Some(format!("Not analysed: {why}")),
        RankStatus::Cancelled => Some("Cancelled.".into()),
        RankStatus::Analysed => None,
    }
}

/// The short summary `proflens memory` prints on a terminal: per rank its rows and, per
/// allocator pool, the peak and the live set at it, in human units (plain text, a few lines).
pub fn write_brief(run: &MemoryRun, out: &mut dyn Write) -> io::Result<()> {
    let mut s = String::new();
    for r in &run.ranks {
        s.push_str(&format!(
            "{} / rank {} ({}): ",
            r.info.role, r.info.rank_id, r.info.source_dir
        ));
        if let Some(why) = not_analysed(&r.status) {
            s.push_str(&format!("{why}\n"));
            continue;
        }
        let m = summarize(r);
        s.push_str(&format!(
            "{} rows ({} allocations, {}), {} with a call stack\n",
            m.rows,
            m.alloc_rows,
            format::kib(m.alloc_kb),
            m.rows_with_call_stack
        ));
        let t0_ns = capture_start_ns(r);
        for pool in &m.pools {
            let c = pool.component;
            s.push_str(&format!(
                "  {} ({}), {} rows: ",
                c.as_str(),
                c.label(),
                pool.rows
            ));
            match &pool.peak {
                Some(p) => s.push_str(&format!(
                    "peak {} at {}, live at peak {} row{}, {}\n",
                    format::mib(p.peak.peak_allocated_mb),
                    format::offset_ms(ns_to_ms(p.peak.peak_time_ns - t0_ns), 0.0),
                    p.peak.live_rows.len(),
                    if p.peak.live_rows.len() == 1 { "" } else { "s" },
                    format::kib(p.peak.live_kb)
                )),
                None => s.push_str("no allocated total\n"),
            }
        }
    }
    out.write_all(s.as_bytes())
}

/// One allocator pool's section: which rows, its peak (§9.6 over its own series) and the live
/// set at it.
fn write_pool(s: &mut String, r: &RankMemory, pool: &PoolSummary, t0_ns: i64) {
    let c = pool.component;
    s.push_str(&format!(
        "### Allocator pool {} ({}): {} rows, {}\n\n",
        c.as_str(),
        c.label(),
        pool.rows,
        c.rule()
    ));
    let Some(p) = &pool.peak else {
        s.push_str("No allocated total in these rows.\n\n");
        return;
    };
    let at = format::offset_ms(ns_to_ms(p.peak.peak_time_ns - t0_ns), 0.0);
    let opt = |v: Option<f64>| v.map(format::mib).unwrap_or_else(|| "—".into());
    s.push_str(&format!(
        "Peak allocated **{}** at {at} from the first allocation ({} µs on the profiler clock; {} sample, `{}`, line {}); reserved at peak {}, max reserved {}.\n",
        format::mib(p.peak.peak_allocated_mb),
        ns_to_us_text(p.peak.peak_time_ns),
        p.peak.peak_sample_kind.as_str(),
        esc(&p.peak_name),
        p.peak.peak_source_line,
        opt(p.peak.reserved_at_peak_mb),
        opt(p.peak.max_reserved_mb),
    ));
    s.push_str(&format!(
        "Live at peak: {} row{} of this pool, {} (explains {} of the pool's allocated level; the rest predates the capture or is not operator-tracked).\n\n",
        p.peak.live_rows.len(),
        if p.peak.live_rows.len() == 1 { "" } else { "s" },
        format::kib(p.peak.live_kb),
        format::percent(p.peak.explained_ratio, 2),
    ));
    for (title, groups) in [
        ("user frame", &p.live_by_user_frame),
        ("name", &p.live_by_name),
    ] {
        s.push_str(&format!(
            "| Live by {title} | size | rows | % of live |\n|---|---|---|---|\n"
        ));
        for g in groups.iter() {
            let share = (p.peak.live_kb != 0.0).then(|| g.kb / p.peak.live_kb);
            let key = if g.key.is_empty() {
                "(none)".to_string()
            } else {
                format!("`{}`", esc(&g.key))
            };
            s.push_str(&format!(
                "| {key} | {} | {} | {} |\n",
                format::kib(g.kb),
                g.count,
                format::percent(share, 1)
            ));
        }
        s.push('\n');
    }
    s.push_str(
        "| Largest live rows | size | released | user frame | line |\n|---|---|---|---|---|\n",
    );
    for &i in &p.largest_live {
        let rr = r.row(i as usize);
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            esc(rr.name()),
            format::kib(rr.size_kb()),
            if rr.release_time_ns().is_some() {
                "yes"
            } else {
                "no"
            },
            esc(rr.user_frame().0),
            rr.source_line()
        ));
    }
    s.push('\n');
}

/// The earliest allocation time of a rank (ns): the origin of the report's relative times.
fn capture_start_ns(r: &RankMemory) -> i64 {
    r.events()
        .alloc_time_ns()
        .iter()
        .copied()
        .min()
        .unwrap_or(0)
}
