//! The JSON and Markdown of `proflens diff A B` on two traces, rank folders or runs
//! "Compare", traces and steps), formatted from [`crate::analysis::compare`]'s results; nothing
//! is recomputed here. Units: op times in µs (`a_time_us`; HTA's integral µs on GPU traces,
//! exact decimal µs on Ascend), step figures in ms (anomaly.md §6 names: `service_ms`,
//! `device_busy_union_ms`, `underfeed_ms`; `bubble_count` / `bubble_total_ms` are the step's
//! internal bubbles, §5.4). Every `delta_*` is B − A, computed in ns before the conversion.

use serde::Serialize;

use crate::analysis::compare::keyed::pair_delta;
use crate::analysis::compare::ops::StepChoice;
use crate::analysis::compare::ranks::{changed_most, RankPair};
use crate::analysis::compare::steps::{MatchedBy, StepFigures};
use crate::analysis::compare::RankComparison;
use crate::analysis::host_evidence::Label;
use crate::analysis::snapshot::links::LinkOptions;
use crate::base::format::{duration_ns, signed, thousands};
use crate::base::units::{ns_to_ms, ns_to_us};
use crate::report::run_diff::{
    memory_json, memory_md, ranks_json, ranks_md, PoolDiffJson, RankDiffJson,
};
use crate::report::snapshot_md::md_link;

/// The whole trace diff document.
#[derive(Serialize, Debug)]
pub struct TraceDiffJson {
    /// `"trace"`.
    pub kind: &'static str,
    /// Side A: path, capture kind, ranks.
    pub a: TraceSideJson,
    /// Side B.
    pub b: TraceSideJson,
    /// `hta_trace_diff` (both sides GPU traces: HTA 0.5.0 `TraceDiff.compare_traces`) or
    /// `kernels` (device kernels per name).
    pub ops_rule: &'static str,
    /// Which steps the ops table covers on each side.
    pub ops_steps: OpsStepsJson,
    /// One row per op or kernel name of either side, largest |Δ time| first.
    pub ops: Vec<OpDeltaJson>,
    /// `id` (the same step ids on both sides) or `order` (the ids differ: k-th with k-th).
    pub steps_matched_by: &'static str,
    /// One row per step pair.
    pub steps: Vec<StepDeltaJson>,
    /// Emitted step bubbles per §5.8 label, per side.
    pub bubble_labels: Vec<LabelMixJson>,
    /// Memory events of the compared ranks per allocator pool (empty unless both have
    /// `operator_memory.csv`; [`crate::report::run_diff`]).
    pub memory: Vec<PoolDiffJson>,
    /// Every rank of either side, by rank id.
    pub ranks: Vec<RankDiffJson>,
    /// Rank ids on both sides, the most changed first (|Δ mean step service|).
    pub ranks_changed_most: Vec<Option<i64>>,
    /// Sentences about how the sides were matched (shown in the Markdown).
    pub notes: Vec<String>,
}

/// One input side.
#[derive(Serialize, Debug, Clone)]
pub struct TraceSideJson {
    /// The path as given.
    pub path: String,
    /// `kineto` (GPU trace) or `ascend` (rank folder).
    pub capture: &'static str,
    /// Rank ids of every analysed rank, in rank order (`null`: unknown).
    pub ranks: Vec<Option<i64>>,
    /// The rank the ops and steps tables compare.
    pub rank: Option<i64>,
}

/// The steps the ops table covers.
#[derive(Serialize, Debug)]
pub struct OpsStepsJson {
    /// `first` (default), `nth` (`--step N`) or `all` (`--all-steps`).
    pub mode: &'static str,
    /// 1-based step index with `nth`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// Step names covered on side A (empty: the whole capture).
    pub a: Vec<String>,
    /// On side B.
    pub b: Vec<String>,
}

/// One op or kernel name on both sides.
#[derive(Serialize, Debug)]
pub struct OpDeltaJson {
    /// Full name.
    pub name: String,
    /// Occurrences on A.
    pub a_count: u64,
    /// Occurrences on B.
    pub b_count: u64,
    /// `b_count − a_count`.
    pub delta_count: i64,
    /// Σ duration on A, µs.
    pub a_time_us: f64,
    /// Σ duration on B, µs.
    pub b_time_us: f64,
    /// `b_time_us − a_time_us`.
    pub delta_time_us: f64,
    /// `new` (B only), `gone` (A only), `changed`, `same`.
    pub change: &'static str,
}

/// One step pair; a side without the step has `null`s.
#[derive(Serialize, Debug)]
pub struct StepDeltaJson {
    /// Side A's step id (side B's when A has no partner).
    pub step_id: String,
    /// Side B's step id when it differs from `step_id` (steps matched by order).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b_step_id: Option<String>,
    /// Service window, ms.
    pub a_service_ms: Option<f64>,
    /// See `a_service_ms`.
    pub b_service_ms: Option<f64>,
    /// B − A.
    pub delta_service_ms: Option<f64>,
    /// Device busy union, ms.
    pub a_device_busy_union_ms: Option<f64>,
    /// See `a_device_busy_union_ms`.
    pub b_device_busy_union_ms: Option<f64>,
    /// B − A.
    pub delta_device_busy_union_ms: Option<f64>,
    /// Underfeed (service − busy), ms.
    pub a_underfeed_ms: Option<f64>,
    /// See `a_underfeed_ms`.
    pub b_underfeed_ms: Option<f64>,
    /// B − A.
    pub delta_underfeed_ms: Option<f64>,
    /// Internal bubbles.
    pub a_bubble_count: Option<usize>,
    /// See `a_bubble_count`.
    pub b_bubble_count: Option<usize>,
    /// B − A.
    pub delta_bubble_count: Option<i64>,
    /// Σ internal bubbles, ms.
    pub a_bubble_total_ms: Option<f64>,
    /// See `a_bubble_total_ms`.
    pub b_bubble_total_ms: Option<f64>,
    /// B − A.
    pub delta_bubble_total_ms: Option<f64>,
}

/// One §5.8 label on both sides.
#[derive(Serialize, Debug)]
pub struct LabelMixJson {
    /// The label (`possible_host_launch_lag`, …).
    pub label: &'static str,
    /// Emitted step windows carrying it on A.
    pub a_windows: u64,
    /// On B.
    pub b_windows: u64,
    /// Their Σ duration on A, ms.
    pub a_total_ms: f64,
    /// On B.
    pub b_total_ms: f64,
    /// `b_total_ms − a_total_ms`.
    pub delta_total_ms: f64,
}

type Figure = fn(&StepFigures) -> i64;

fn trio_ms(a: Option<&StepFigures>, b: Option<&StepFigures>, f: Figure) -> [Option<f64>; 3] {
    let (x, y) = (a.map(f), b.map(f));
    let d = x.zip(y).map(|(x, y)| ns_to_ms(y.saturating_sub(x)));
    [x.map(ns_to_ms), y.map(ns_to_ms), d]
}

fn step_row(a: Option<&StepFigures>, b: Option<&StepFigures>) -> StepDeltaJson {
    let id = a.or(b).map(|s| s.step_id.clone()).unwrap_or_default();
    let b_id = b.map(|s| s.step_id.clone()).filter(|x| *x != id);
    let [a_service_ms, b_service_ms, delta_service_ms] = trio_ms(a, b, |s| s.service_ns);
    let [a_busy, b_busy, d_busy] = trio_ms(a, b, |s| s.busy_ns);
    let [a_under, b_under, d_under] = trio_ms(a, b, |s| s.underfeed_ns);
    let [a_bt, b_bt, d_bt] = trio_ms(a, b, |s| s.bubble_total_ns);
    let (ac, bc) = (a.map(|s| s.bubble_count), b.map(|s| s.bubble_count));
    StepDeltaJson {
        step_id: id,
        b_step_id: b_id,
        a_service_ms,
        b_service_ms,
        delta_service_ms,
        a_device_busy_union_ms: a_busy,
        b_device_busy_union_ms: b_busy,
        delta_device_busy_union_ms: d_busy,
        a_underfeed_ms: a_under,
        b_underfeed_ms: b_under,
        delta_underfeed_ms: d_under,
        a_bubble_count: ac,
        b_bubble_count: bc,
        delta_bubble_count: ac.zip(bc).map(|(x, y)| pair_delta(x as u64, y as u64)),
        a_bubble_total_ms: a_bt,
        b_bubble_total_ms: b_bt,
        delta_bubble_total_ms: d_bt,
    }
}

/// Builds the document of two compared ranks (`a`, `b`: the sides as the CLI read them; `ranks`:
/// the rank table of both runs; `links`: how user frames are linked, as in the snapshot report).
pub fn build(
    a: TraceSideJson,
    b: TraceSideJson,
    c: &RankComparison,
    ranks: &[RankPair],
    choice: StepChoice,
    links: &LinkOptions,
) -> TraceDiffJson {
    let ops = c
        .ops
        .iter()
        .map(|d| OpDeltaJson {
            name: d.key.clone(),
            a_count: d.a.count,
            b_count: d.b.count,
            delta_count: pair_delta(d.a.count, d.b.count),
            a_time_us: ns_to_us(d.a.time_ns),
            b_time_us: ns_to_us(d.b.time_ns),
            delta_time_us: ns_to_us(d.b.time_ns.saturating_sub(d.a.time_ns)),
            change: d.change().name(),
        })
        .collect();
    let steps = c
        .steps
        .pairs
        .iter()
        .map(|&(i, j)| step_row(i.map(|i| &c.a_steps[i]), j.map(|j| &c.b_steps[j])))
        .collect();
    let mut labels: Vec<Label> = c
        .a_labels
        .keys()
        .chain(c.b_labels.keys())
        .copied()
        .collect();
    labels.sort_unstable();
    labels.dedup();
    let bubble_labels = labels
        .into_iter()
        .map(|l| {
            let (aw, at) = c.a_labels.get(&l).copied().unwrap_or_default();
            let (bw, bt) = c.b_labels.get(&l).copied().unwrap_or_default();
            LabelMixJson {
                label: l.as_str(),
                a_windows: aw,
                b_windows: bw,
                a_total_ms: ns_to_ms(at),
                b_total_ms: ns_to_ms(bt),
                delta_total_ms: ns_to_ms(bt.saturating_sub(at)),
            }
        })
        .collect();
    let mut notes = Vec::new();
    if c.steps.by == MatchedBy::Order {
        notes.push(format!(
            "The step ids differ ({} steps on A, {} on B): steps are matched by order, the k-th \
             step of A with the k-th of B.",
            c.a_steps.len(),
            c.b_steps.len()
        ));
    }
    for (name, s) in [("A", &c.a_ops), ("B", &c.b_ops)] {
        if s.missing_step {
            notes.push(format!(
                "Side {name} has {} step{}: the chosen step does not exist there, its ops table \
                 is empty.",
                s.step_count,
                if s.step_count == 1 { "" } else { "s" }
            ));
        } else if s.steps.is_empty() && choice != StepChoice::All {
            notes.push(format!(
                "Side {name} has no step: its ops table covers the whole capture."
            ));
        }
    }
    let (mode, step) = match choice {
        StepChoice::Nth(0) => ("first", None),
        StepChoice::Nth(k) => ("nth", Some(k + 1)),
        StepChoice::All => ("all", None),
    };
    TraceDiffJson {
        kind: "trace",
        a,
        b,
        ops_rule: c.ops_rule.as_str(),
        ops_steps: OpsStepsJson {
            mode,
            step,
            a: c.a_ops.steps.clone(),
            b: c.b_ops.steps.clone(),
        },
        ops,
        steps_matched_by: c.steps.by.as_str(),
        steps,
        bubble_labels,
        memory: memory_json(&c.memory, links),
        ranks: ranks_json(ranks),
        ranks_changed_most: changed_most(ranks)
            .into_iter()
            .map(|i| ranks[i].rank_id)
            .collect(),
        notes,
    }
}

fn signed_ms(d: Option<f64>) -> String {
    signed(d, |v| duration_ns((v * 1e6).round() as i64))
}

fn ms(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| duration_ns((v * 1e6).round() as i64))
}

fn us(v: f64) -> String {
    duration_ns((v * 1000.0).round() as i64)
}

fn signed_i(d: i64) -> String {
    signed(Some(d as f64), |v| thousands(v as i64))
}

fn side_line(name: &str, s: &TraceSideJson) -> String {
    let rank = s
        .rank
        .map_or("rank unknown".to_string(), |r| format!("rank {r}"));
    format!(
        "{name}: {} ({}, {} rank{}; compared: {rank})  \n",
        md_link(&s.path, None),
        s.capture,
        s.ranks.len(),
        if s.ranks.len() == 1 { "" } else { "s" }
    )
}

/// The Markdown report: sides, notes, the ops that changed most (`top` rows), every step pair,
/// the bubble label mix.
pub fn render_md(j: &TraceDiffJson, top: usize) -> String {
    let mut out = String::from("# Trace comparison\n\n");
    out.push_str(&side_line("A", &j.a));
    out.push_str(&side_line("B", &j.b));
    for n in &j.notes {
        out.push_str(&format!("\n{n}\n"));
    }
    let covers = |v: &[String]| {
        if v.is_empty() {
            "the whole capture".to_string()
        } else {
            v.join(", ")
        }
    };
    out.push_str(&format!(
        "\n## Ops by name\n\nRule: {} · A: {} · B: {}\n\n",
        if j.ops_rule == "hta_trace_diff" {
            "HTA TraceDiff (CPU ops and GPU kernels, HTA's µs)"
        } else {
            "device kernels per name"
        },
        covers(&j.ops_steps.a),
        covers(&j.ops_steps.b)
    ));
    if j.ops.is_empty() {
        out.push_str("No ops on either side.\n");
    } else {
        out.push_str("| name | A count | B count | Δ count | A time | B time | Δ time | change |\n|---|--:|--:|--:|--:|--:|--:|---|\n");
        for o in j.ops.iter().take(top) {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
                md_link(&o.name, None),
                thousands(o.a_count as i64),
                thousands(o.b_count as i64),
                signed_i(o.delta_count),
                us(o.a_time_us),
                us(o.b_time_us),
                signed_ms(Some(o.delta_time_us / 1000.0)),
                o.change
            ));
        }
        let (new, gone) = (
            j.ops.iter().filter(|o| o.change == "new").count(),
            j.ops.iter().filter(|o| o.change == "gone").count(),
        );
        out.push_str(&format!(
            "\n{} names: {new} new on B, {gone} gone from A{}.\n",
            j.ops.len(),
            if j.ops.len() > top {
                format!("; {} more rows in the JSON", j.ops.len() - top)
            } else {
                String::new()
            }
        ));
    }
    out.push_str(&format!(
        "\n## Steps (matched by {})\n\n",
        j.steps_matched_by
    ));
    if j.steps.is_empty() {
        out.push_str("No steps on either side.\n");
    } else {
        out.push_str("| step | A service | B service | Δ | A busy union | B busy union | Δ | A underfeed | B underfeed | Δ | A bubbles | B bubbles | Δ total |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        for s in &j.steps {
            let id = match &s.b_step_id {
                Some(b) => format!("{} / {}", s.step_id, b),
                None => s.step_id.clone(),
            };
            let bubbles = |n: Option<usize>, t: Option<f64>| match n {
                Some(n) => format!("{n} ({})", ms(t)),
                None => "–".into(),
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                md_link(&id, None),
                ms(s.a_service_ms),
                ms(s.b_service_ms),
                signed_ms(s.delta_service_ms),
                ms(s.a_device_busy_union_ms),
                ms(s.b_device_busy_union_ms),
                signed_ms(s.delta_device_busy_union_ms),
                ms(s.a_underfeed_ms),
                ms(s.b_underfeed_ms),
                signed_ms(s.delta_underfeed_ms),
                bubbles(s.a_bubble_count, s.a_bubble_total_ms),
                bubbles(s.b_bubble_count, s.b_bubble_total_ms),
                signed_ms(s.delta_bubble_total_ms),
            ));
        }
    }
    out.push_str("\n## Bubble labels (emitted step windows)\n\n");
    if j.bubble_labels.is_empty() {
        out.push_str("No labelled bubbles on either side.\n");
    } else {
        out.push_str("| label | A windows | B windows | A total | B total | Δ total |\n|---|--:|--:|--:|--:|--:|\n");
        for l in &j.bubble_labels {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                l.label,
                l.a_windows,
                l.b_windows,
                ms(Some(l.a_total_ms)),
                ms(Some(l.b_total_ms)),
                signed_ms(Some(l.delta_total_ms))
            ));
        }
    }
    out.push_str(&memory_md(&j.memory, top));
    out.push_str(&ranks_md(&j.ranks, &j.ranks_changed_most));
    out
}
