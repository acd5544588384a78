//! The memory-event and rank-table parts of the trace diff document ("Compare",
//! memory events and runs), formatted from [`crate::analysis::compare::memory`] and
//! [`crate::analysis::compare::ranks`]; nothing is recomputed here. Units: allocator totals
//! MiB (`*_mb`, ascend-memory.md §4.1 `Total Allocated(MB)`), live sizes KiB (`*_kb`, the CSV's
//! `Size(KB)`), step figures ms. Every `delta_*` is B − A.

use serde::Serialize;

use crate::analysis::compare::keyed::Delta;
use crate::analysis::compare::memory::{LiveKb, PoolComparison, PoolPeak};
use crate::analysis::compare::ranks::{RankCell, RankPair};
use crate::analysis::snapshot::links::LinkOptions;
use crate::base::format::{duration_ms, fixed, kib, mib, signed};
use crate::model::stacks::parse_frame;
use crate::report::snapshot_md::md_link;

/// One allocator pool on both sides.
#[derive(Serialize, Debug)]
pub struct PoolDiffJson {
    /// `PTA`, `GE` or `OTHER` (ascend-memory.md §8.2 `component`).
    pub component: &'static str,
    /// The pool in words.
    pub label: &'static str,
    /// Rows of the pool on A.
    pub a_rows: u64,
    /// On B.
    pub b_rows: u64,
    /// Side A's peak (`null`: no allocated total in this pool).
    pub a: Option<PoolPeakJson>,
    /// Side B's.
    pub b: Option<PoolPeakJson>,
    /// `b.peak_allocated_mb − a.peak_allocated_mb` (both present).
    pub delta_peak_allocated_mb: Option<f64>,
    /// `b.live_kb − a.live_kb` (both present).
    pub delta_live_kb: Option<f64>,
    /// Live at each side's peak by user frame (`""`: no user frame), largest |Δ| first.
    pub live_by_user_frame: Vec<LiveDeltaJson>,
    /// Live at each side's peak by op name.
    pub live_by_name: Vec<LiveDeltaJson>,
}

/// One side's allocator peak (§9.6).
#[derive(Serialize, Debug)]
pub struct PoolPeakJson {
    /// Peak `Total Allocated`, MiB.
    pub peak_allocated_mb: f64,
    /// `Total Reserved` holding at the peak, MiB.
    pub reserved_at_peak_mb: Option<f64>,
    /// `Total Active` holding at the peak, MiB.
    pub active_at_peak_mb: Option<f64>,
    /// Σ `Size(KB)` of the rows live at the peak.
    pub live_kb: f64,
    /// Rows live at the peak.
    pub live_rows: usize,
    /// Op name of the row whose sample is the peak.
    pub peak_name: String,
    /// Its physical CSV line.
    pub peak_source_line: u64,
}

/// One group (user frame or op name) on both sides.
#[derive(Serialize, Debug)]
pub struct LiveDeltaJson {
    /// The user frame (`path(line): function`) or op name.
    pub key: String,
    /// Source link of a user frame (`--link-style`), when the style gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// Live KiB on A.
    pub a_kb: f64,
    /// On B.
    pub b_kb: f64,
    /// `b_kb − a_kb`.
    pub delta_kb: f64,
    /// Live rows on A.
    pub a_rows: u64,
    /// On B.
    pub b_rows: u64,
    /// `new`, `gone`, `changed`, `same`.
    pub change: &'static str,
}

fn peak_json(p: &PoolPeak) -> PoolPeakJson {
    PoolPeakJson {
        peak_allocated_mb: p.peak.peak_allocated_mb,
        reserved_at_peak_mb: p.peak.reserved_at_peak_mb,
        active_at_peak_mb: p.peak.active_at_peak_mb,
        live_kb: p.peak.live_kb,
        live_rows: p.peak.live_rows.len(),
        peak_name: p.peak_name.clone(),
        peak_source_line: p.peak.peak_source_line,
    }
}

/// The link of a user frame `path(line): function` (`None` for op names and unparsable keys).
fn frame_link(key: &str, links: Option<&LinkOptions>) -> Option<String> {
    let f = parse_frame(key);
    if f.line == 0 {
        return None;
    }
    links?.link(f.path, f.line)
}

fn live_rows(d: &[Delta<String, LiveKb>], links: Option<&LinkOptions>) -> Vec<LiveDeltaJson> {
    d.iter()
        .map(|x| LiveDeltaJson {
            link: frame_link(&x.key, links),
            key: x.key.clone(),
            a_kb: x.a.kb,
            b_kb: x.b.kb,
            delta_kb: x.b.kb - x.a.kb,
            a_rows: x.a.rows,
            b_rows: x.b.rows,
            change: x.change().name(),
        })
        .collect()
}

/// The `memory` array of the document; user frames are linked with `links`.
pub fn memory_json(pools: &[PoolComparison], links: &LinkOptions) -> Vec<PoolDiffJson> {
    pools
        .iter()
        .map(|p| {
            let both = |f: fn(&PoolPeak) -> f64| Some(f(p.b.as_ref()?) - f(p.a.as_ref()?));
            PoolDiffJson {
                component: p.component.as_str(),
                label: p.component.label(),
                a_rows: p.rows.0,
                b_rows: p.rows.1,
                a: p.a.as_ref().map(peak_json),
                b: p.b.as_ref().map(peak_json),
                delta_peak_allocated_mb: both(|x| x.peak.peak_allocated_mb),
                delta_live_kb: both(|x| x.peak.live_kb),
                live_by_user_frame: live_rows(&p.by_user_frame, Some(links)),
                live_by_name: live_rows(&p.by_name, None),
            }
        })
        .collect()
}

/// One rank on both sides.
#[derive(Serialize, Debug)]
pub struct RankDiffJson {
    /// Rank id (`null`: unknown).
    pub rank: Option<i64>,
    /// Side A's figures (`null`: no such rank on A).
    pub a: Option<RankSideJson>,
    /// Side B's.
    pub b: Option<RankSideJson>,
    /// B − A of `service_ms_avg`.
    pub delta_service_ms_avg: Option<f64>,
    /// B − A of `busy_union_ms_avg`.
    pub delta_busy_union_ms_avg: Option<f64>,
    /// B − A of `bubble_count_avg`.
    pub delta_bubble_count_avg: Option<f64>,
    /// B − A of `peak_allocated_mb`.
    pub delta_peak_allocated_mb: Option<f64>,
}

/// One side of one rank (anomaly.md §13.4 figures, ascend-memory.md §9.6 peak).
#[derive(Serialize, Debug)]
pub struct RankSideJson {
    /// Steps.
    pub steps: usize,
    /// Mean step service, ms.
    pub service_ms_avg: f64,
    /// Mean device busy union, ms.
    pub busy_union_ms_avg: f64,
    /// Mean underfeed ratio.
    pub underfeed_ratio_avg: f64,
    /// Internal bubbles per step.
    pub bubble_count_avg: f64,
    /// Communication total, ms.
    pub comm_total_ms: f64,
    /// Peak allocated of the main pool, MiB (ranks with memory events).
    pub peak_allocated_mb: Option<f64>,
}

fn rank_side(c: &RankCell) -> RankSideJson {
    RankSideJson {
        steps: c.row.steps,
        service_ms_avg: c.row.service_ms_avg,
        busy_union_ms_avg: c.row.busy_union_ms_avg,
        underfeed_ratio_avg: c.row.underfeed_ratio_avg,
        bubble_count_avg: c.row.bubble_count_avg,
        comm_total_ms: c.row.comm_total_ms,
        peak_allocated_mb: c.peak_allocated_mb,
    }
}

/// The `ranks` array of the document.
pub fn ranks_json(pairs: &[RankPair]) -> Vec<RankDiffJson> {
    pairs
        .iter()
        .map(|p| {
            let d = |f: fn(&RankCell) -> f64| Some(f(p.b.as_ref()?) - f(p.a.as_ref()?));
            RankDiffJson {
                rank: p.rank_id,
                a: p.a.as_ref().map(rank_side),
                b: p.b.as_ref().map(rank_side),
                delta_service_ms_avg: p.delta_service_ms(),
                delta_busy_union_ms_avg: d(|c| c.row.busy_union_ms_avg),
                delta_bubble_count_avg: d(|c| c.row.bubble_count_avg),
                delta_peak_allocated_mb: p.delta_peak_mb(),
            }
        })
        .collect()
}

fn opt(v: Option<f64>, f: fn(f64) -> String) -> String {
    v.map_or("–".into(), f)
}

fn live_table(out: &mut String, title: &str, rows: &[LiveDeltaJson], top: usize) {
    out.push_str(&format!("\n#### {title}\n\n"));
    if rows.is_empty() {
        out.push_str("Nothing live at either peak.\n");
        return;
    }
    out.push_str("| | A | B | Δ | change |\n|---|--:|--:|--:|---|\n");
    for r in rows.iter().take(top) {
        let key = if r.key.is_empty() {
            "(no user frame)".to_string()
        } else {
            md_link(&r.key, r.link.as_deref())
        };
        let n = |k: u64| format!("{k} row{}", if k == 1 { "" } else { "s" });
        out.push_str(&format!(
            "| {key} | {} ({}) | {} ({}) | {} | {} |\n",
            kib(r.a_kb),
            n(r.a_rows),
            kib(r.b_kb),
            n(r.b_rows),
            signed(Some(r.delta_kb), kib),
            r.change
        ));
    }
    if rows.len() > top {
        out.push_str(&format!("\n{} more rows in the JSON.\n", rows.len() - top));
    }
}

/// The Markdown of the memory pools (`## Memory events`), empty when no pool is compared.
pub fn memory_md(pools: &[PoolDiffJson], top: usize) -> String {
    if pools.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n## Memory events (operator_memory.csv)\n");
    for p in pools {
        out.push_str(&format!(
            "\n### {} ({}): {} rows on A, {} on B\n\n",
            p.component, p.label, p.a_rows, p.b_rows
        ));
        out.push_str("| | A | B | Δ |\n|---|--:|--:|--:|\n");
        let get = |s: &Option<PoolPeakJson>, f: fn(&PoolPeakJson) -> f64| s.as_ref().map(f);
        out.push_str(&format!(
            "| peak allocated | {} | {} | {} |\n",
            opt(get(&p.a, |x| x.peak_allocated_mb), mib),
            opt(get(&p.b, |x| x.peak_allocated_mb), mib),
            signed(p.delta_peak_allocated_mb, mib)
        ));
        out.push_str(&format!(
            "| live at the peak | {} | {} | {} |\n",
            opt(get(&p.a, |x| x.live_kb), kib),
            opt(get(&p.b, |x| x.live_kb), kib),
            signed(p.delta_live_kb, kib)
        ));
        live_table(
            &mut out,
            "Live at the peak, by user frame",
            &p.live_by_user_frame,
            top,
        );
        live_table(
            &mut out,
            "Live at the peak, by op name",
            &p.live_by_name,
            top,
        );
    }
    out
}

/// The Markdown of the rank table (`## Ranks`), with the ranks that changed most.
pub fn ranks_md(ranks: &[RankDiffJson], changed_most: &[Option<i64>]) -> String {
    let mut out = String::from("\n## Ranks\n\n");
    let id = |r: Option<i64>| r.map_or("unknown".to_string(), |x| x.to_string());
    if !changed_most.is_empty() {
        let names: Vec<String> = changed_most.iter().take(5).map(|r| id(*r)).collect();
        out.push_str(&format!(
            "Changed most (|Δ mean step service|): rank {}.\n\n",
            names.join(", rank ")
        ));
    }
    out.push_str("| rank | A steps | B steps | A mean step | B mean step | Δ | A bubbles/step | B bubbles/step | A peak | B peak | Δ peak |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    let ms = |v: f64| duration_ms(v);
    let n = |v: f64| fixed(v, 1);
    for r in ranks {
        let a = r.a.as_ref();
        let b = r.b.as_ref();
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            id(r.rank),
            a.map_or("–".into(), |x| x.steps.to_string()),
            b.map_or("–".into(), |x| x.steps.to_string()),
            opt(a.map(|x| x.service_ms_avg), ms),
            opt(b.map(|x| x.service_ms_avg), ms),
            signed(r.delta_service_ms_avg, ms),
            opt(a.map(|x| x.bubble_count_avg), n),
            opt(b.map(|x| x.bubble_count_avg), n),
            opt(a.and_then(|x| x.peak_allocated_mb), mib),
            opt(b.and_then(|x| x.peak_allocated_mb), mib),
            signed(r.delta_peak_allocated_mb, mib),
        ));
    }
    out
}
