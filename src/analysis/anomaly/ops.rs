//! Op-level judgements (anomaly.md §5.12–5.15): wait anchors, wait pollution,
//! AICPU classification, small ops and PMU verdicts.

use rustc_hash::FxHashMap as HashMap;

use crate::analysis::anomaly_config::AnomalyConfig;
use crate::analysis::intervals::{covered_ns, merge, Interval};
use crate::base::units::ns_to_us;
use crate::model::kernels::{KernelTable, TaskClass};

/// One op (kernels grouped by name) of the wait-anchor scan (§5.12).
#[derive(Clone, Debug, PartialEq)]
pub struct WaitAnchorOp {
    /// Kernel name.
    pub op_name: String,
    /// Invocations.
    pub call_count: usize,
    /// Mean duration, µs.
    pub duration_us_avg: f64,
    /// Σ duration, µs.
    pub duration_us_total: f64,
    /// Mean wait, µs.
    pub wait_us_avg: f64,
    /// Mean dur + wait, µs.
    pub total_cost_us_avg: f64,
    /// `wait_avg / total_cost_avg` (0 when the denominator is 0).
    pub wait_ratio: f64,
    /// Dominant task class.
    pub task_type: TaskClass,
    /// Most common `Input Shapes`.
    pub input_shapes: String,
    /// 1-based rank by total cost.
    pub total_cost_rank: usize,
    /// 1-based rank by duration.
    pub duration_rank: usize,
    /// `WAIT_ANCHOR_FALSE_HOTSPOT` (§5.12 rule).
    pub is_false_hotspot_risk: bool,
    /// ≥ 50 % of calls have polluted waits (§5.13).
    pub wait_pollution: bool,
    /// One kernel index of the op (the first call), for locating it.
    pub first_kernel: usize,
}

/// `score_wait_anchor` of the reference script (§5.12): strict `>`, strict `<`, `≤`.
pub fn score_wait_anchor(
    dur_us_avg: f64,
    wait_ratio: f64,
    total_cost_rank: usize,
    cfg: &AnomalyConfig,
) -> bool {
    wait_ratio > cfg.wait_anchor_ratio
        && dur_us_avg < cfg.wait_anchor_dur_us
        && total_cost_rank <= cfg.wait_anchor_rank
}

/// Communication windows of §5.13: comm-kernel busy intervals ∪ `communication.json` op intervals.
pub fn comm_windows(k: &KernelTable, json_ops: &[Interval]) -> Vec<Interval> {
    let mut v: Vec<Interval> = (0..k.len())
        .filter(|&i| k.comm()[i])
        .map(|i| Interval::new(k.start_ns()[i], k.end_ns(i)))
        .collect();
    v.extend_from_slice(json_ops);
    merge(v)
}

/// Polluted wait of kernel `i`, ns: `|[start − wait, start] ∩ comm|` when that is ≥ 20 % of the wait, else 0.
pub fn polluted_wait_ns(k: &KernelTable, i: usize, comm: &[Interval], cfg: &AnomalyConfig) -> i64 {
    let w = k.wait_ns()[i];
    if w <= 0 {
        return 0;
    }
    let s = k.start_ns()[i];
    let c = covered_ns(comm, Interval::new(s - w, s));
    if c as f64 / w as f64 >= cfg.wait_pollution_frac {
        c
    } else {
        0
    }
}

/// §5.12 over the kernels of the ranges `scope`, in order; returns all ops sorted by
/// total-cost rank.
pub fn wait_anchors(
    k: &KernelTable,
    scope: &[std::ops::Range<usize>],
    comm: &[Interval],
    cfg: &AnomalyConfig,
) -> Vec<WaitAnchorOp> {
    struct Acc {
        n: usize,
        dur: i64,
        wait: i64,
        polluted: usize,
        class: HashMap<TaskClass, i64>,
        shapes: HashMap<u32, usize>,
        first: usize,
    }
    let mut by: HashMap<u32, Acc> = HashMap::default();
    for i in scope.iter().flat_map(Clone::clone) {
        let a = by.entry(k.name()[i]).or_insert_with(|| Acc {
            n: 0,
            dur: 0,
            wait: 0,
            polluted: 0,
            class: HashMap::default(),
            shapes: HashMap::default(),
            first: i,
        });
        a.n += 1;
        a.dur += k.dur_ns()[i];
        a.wait += k.wait_ns()[i];
        if polluted_wait_ns(k, i, comm, cfg) > 0 {
            a.polluted += 1;
        }
        *a.class.entry(k.class()[i]).or_default() += k.dur_ns()[i];
        *a.shapes.entry(k.shapes()[i]).or_default() += 1;
    }
    let mut ops: Vec<WaitAnchorOp> = by
        .into_iter()
        .map(|(name, a)| {
            let n = a.n as f64;
            let dur_avg = ns_to_us(a.dur) / n;
            let wait_avg = ns_to_us(a.wait) / n;
            let cost = dur_avg + wait_avg;
            let task_type = a
                .class
                .iter()
                .max_by(|x, y| x.1.cmp(y.1).then(y.0.cmp(x.0)))
                .map(|(c, _)| *c)
                .unwrap_or(TaskClass::Other);
            let shape = a
                .shapes
                .iter()
                .max_by(|x, y| x.1.cmp(y.1).then_with(|| k.text(*y.0).cmp(k.text(*x.0))))
                .map(|(s, _)| k.text(*s).to_string())
                .unwrap_or_default();
            WaitAnchorOp {
                op_name: k.text(name).to_string(),
                call_count: a.n,
                duration_us_avg: dur_avg,
                duration_us_total: ns_to_us(a.dur),
                wait_us_avg: wait_avg,
                total_cost_us_avg: cost,
                wait_ratio: if cost > 0.0 { wait_avg / cost } else { 0.0 },
                task_type,
                input_shapes: shape,
                total_cost_rank: 0,
                duration_rank: 0,
                is_false_hotspot_risk: false,
                wait_pollution: a.polluted > 0
                    && a.polluted as f64 >= cfg.wait_pollution_op_frac * n,
                first_kernel: a.first,
            }
        })
        .collect();
    crate::base::sort::sort_by(&mut ops, |a, b| {
        b.duration_us_avg
            .total_cmp(&a.duration_us_avg)
            .then(b.call_count.cmp(&a.call_count))
            .then_with(|| a.op_name.cmp(&b.op_name))
    });
    for (r, o) in ops.iter_mut().enumerate() {
        o.duration_rank = r + 1;
    }
    crate::base::sort::sort_by(&mut ops, |a, b| {
        b.total_cost_us_avg
            .total_cmp(&a.total_cost_us_avg)
            .then(b.call_count.cmp(&a.call_count))
            .then_with(|| a.op_name.cmp(&b.op_name))
    });
    for (r, o) in ops.iter_mut().enumerate() {
        o.total_cost_rank = r + 1;
        o.is_false_hotspot_risk =
            score_wait_anchor(o.duration_us_avg, o.wait_ratio, o.total_cost_rank, cfg);
    }
    ops
}

/// AICPU class (§5.14).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AicpuClass {
    /// masked ≥ 0.9.
    MaskedButUndesirable,
    /// masked in [0.2, 0.9).
    PartiallyExposed,
    /// masked < 0.2.
    ExposedNotAllowed,
}

impl AicpuClass {
    /// The spec spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AicpuClass::MaskedButUndesirable => "AICPU_MASKED_BUT_UNDESIRABLE",
            AicpuClass::PartiallyExposed => "AICPU_PARTIALLY_EXPOSED",
            AicpuClass::ExposedNotAllowed => "AICPU_EXPOSED_NOT_ALLOWED",
        }
    }
    /// Class of a masked ratio.
    pub fn of(masked: f64, cfg: &AnomalyConfig) -> Self {
        if masked >= cfg.aicpu_masked {
            AicpuClass::MaskedButUndesirable
        } else if masked >= cfg.aicpu_partial {
            AicpuClass::PartiallyExposed
        } else {
            AicpuClass::ExposedNotAllowed
        }
    }
}

/// One AI_CPU op (§5.14 op level).
#[derive(Clone, Debug, PartialEq)]
pub struct AicpuOp {
    /// Kernel name.
    pub op_name: String,
    /// Calls.
    pub call_count: usize,
    /// Σ duration, ns.
    pub dur_ns: i64,
    /// `Σ masked / Σ dur`.
    pub masked_ratio: f64,
    /// Class of `masked_ratio`.
    pub class: AicpuClass,
    /// `Σ (1 − masked) × d`, ns.
    pub exposed_ns: i64,
    /// Kernel indices of its calls.
    pub kernels: Vec<usize>,
}

/// §5.14: AI_CPU kernels of `scope` against the AI_CORE-family union `ai_core`.
pub fn aicpu_ops(
    k: &KernelTable,
    scope: impl IntoIterator<Item = usize>,
    ai_core: &[Interval],
    cfg: &AnomalyConfig,
) -> Vec<AicpuOp> {
    let mut by: HashMap<u32, (i64, i64, Vec<usize>)> = HashMap::default();
    for i in scope {
        if k.class()[i] != TaskClass::AiCpu || k.dur_ns()[i] <= 0 {
            continue;
        }
        let masked = covered_ns(ai_core, Interval::new(k.start_ns()[i], k.end_ns(i)));
        let e = by.entry(k.name()[i]).or_default();
        e.0 += k.dur_ns()[i];
        e.1 += masked;
        e.2.push(i);
    }
    let mut v: Vec<AicpuOp> = by
        .into_iter()
        .map(|(name, (dur, masked, kernels))| {
            let r = if dur > 0 {
                masked as f64 / dur as f64
            } else {
                0.0
            };
            AicpuOp {
                op_name: k.text(name).to_string(),
                call_count: kernels.len(),
                dur_ns: dur,
                masked_ratio: r,
                class: AicpuClass::of(r, cfg),
                exposed_ns: dur - masked,
                kernels,
            }
        })
        .collect();
    crate::base::sort::sort_by(&mut v, |a, b| {
        b.exposed_ns
            .cmp(&a.exposed_ns)
            .then_with(|| a.op_name.cmp(&b.op_name))
    });
    v
}

/// §5.10.3 AICPU_EXPOSED_RISK op rule: any op EXPOSED_NOT_ALLOWED, or PARTIALLY with exposed ≥ 0.1 ms.
pub fn aicpu_risky(op: &AicpuOp) -> bool {
    op.class == AicpuClass::ExposedNotAllowed
        || (op.class == AicpuClass::PartiallyExposed && op.exposed_ns >= 100_000)
}

/// Small-op judgement of one step (§5.15).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SmallOps {
    /// Kernels with `dur < 10 µs`.
    pub count: usize,
    /// Their Σ dur, ns.
    pub dur_ns: i64,
    /// Σ small dur / busy union.
    pub share_of_busy: f64,
    /// Longest run of consecutive small ops on the main stream.
    pub longest_main_run: usize,
    /// `likely_inefficiency` or `noise`.
    pub verdict: &'static str,
}

/// §5.15 small ops of the step kernels `range`; `main` the main stream; `bubbles` the step's internal bubbles.
pub fn small_ops(
    k: &KernelTable,
    range: std::ops::Range<usize>,
    main: Option<u32>,
    busy_ns: i64,
    bubbles: &[Interval],
    cfg: &AnomalyConfig,
) -> SmallOps {
    let small_ns = (cfg.small_kernel_us * 1000.0) as i64;
    let mut s = SmallOps::default();
    let (mut run, mut run_first) = (0usize, 0usize);
    let mut borders = false;
    let adj = (cfg.aicpu_adjacent_us * 1000.0) as i64;
    // A run borders a bubble when one of its ends lies within `adj` of a bubble's start or
    // end: the bubbles' ends, sorted once, are searched by bisection (not scanned per kernel).
    let mut ends: Vec<i64> = bubbles
        .iter()
        .flat_map(|b| [b.start_ns, b.end_ns])
        .collect();
    ends.sort_unstable();
    let near_bubble = |t: i64| {
        let j = ends.partition_point(|&e| e < t.saturating_sub(adj));
        ends.get(j).is_some_and(|&e| e - t <= adj)
    };
    for i in range {
        let small = k.dur_ns()[i] < small_ns;
        if small {
            s.count += 1;
            s.dur_ns += k.dur_ns()[i];
        }
        if main == Some(k.stream()[i]) {
            if small {
                if run == 0 {
                    run_first = i;
                }
                run += 1;
                s.longest_main_run = s.longest_main_run.max(run);
                if !borders
                    && run >= cfg.small_op_run
                    && (near_bubble(k.end_ns(i)) || near_bubble(k.start_ns()[run_first]))
                {
                    borders = true;
                }
            } else {
                run = 0;
            }
        }
    }
    s.share_of_busy = if busy_ns > 0 {
        s.dur_ns as f64 / busy_ns as f64
    } else {
        0.0
    };
    s.verdict = if s.share_of_busy >= cfg.small_op_ineff_frac || borders {
        "likely_inefficiency"
    } else {
        "noise"
    };
    s
}

/// PMU verdict of one op (§5.15), top-10 ops by duration; `None` when no PMU column exists.
pub fn pmu_verdicts(
    k: &KernelTable,
    ops: &[WaitAnchorOp],
    cfg: &AnomalyConfig,
) -> Option<Vec<(String, &'static str)>> {
    if k.pmu().is_empty() {
        return None;
    }
    let mut by_dur: Vec<&WaitAnchorOp> = ops.iter().collect();
    crate::base::sort::sort_by_key(&mut by_dur, |o| o.duration_rank);
    let b = cfg.pmu_bound_ratio as f32;
    Some(
        by_dur
            .into_iter()
            .take(10)
            .map(|o| {
                let [mac, mte2, mb] = k.pmu()[o.first_kernel];
                let v = if mac.is_some_and(|x| x > b) {
                    "compute_bound"
                } else if mte2.is_some_and(|x| x > b) || mb.is_some_and(|x| x > 1.0) {
                    "memory_bound"
                } else {
                    "latency_or_scalar_bound"
                };
                (o.op_name.clone(), v)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_wait_anchor_spec_13_5() {
        let c = AnomalyConfig::spec_defaults();
        let ratio = 200.0 / 205.0;
        assert!(score_wait_anchor(5.0, ratio, 3, &c));
        assert!(!score_wait_anchor(10.0, 200.0 / 210.0, 3, &c)); // strict <
        assert!(!score_wait_anchor(5.0, 0.95, 3, &c)); // strict >
        assert!(!score_wait_anchor(5.0, ratio, 11, &c));
        assert!(score_wait_anchor(5.0, ratio, 10, &c));
        assert!(score_wait_anchor(9.999, 0.951, 10, &c));
    }

    #[test]
    fn aicpu_class_thresholds() {
        let c = AnomalyConfig::spec_defaults();
        assert_eq!(AicpuClass::of(0.9, &c), AicpuClass::MaskedButUndesirable);
        assert_eq!(AicpuClass::of(0.8999, &c), AicpuClass::PartiallyExposed);
        assert_eq!(AicpuClass::of(0.2, &c), AicpuClass::PartiallyExposed);
        assert_eq!(AicpuClass::of(0.1999, &c), AicpuClass::ExposedNotAllowed);
    }
}
