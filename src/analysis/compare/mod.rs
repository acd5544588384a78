//! Comparing two runs: pure functions over what the analyses of each
//! side already computed (no second parse, no rule of the single analyses written again).
//!
//! ```text
//! RankSide A ─┐  (AnomalyResult, KernelTable, GpuTrace?, RankMemory?) of one rank per side
//! RankSide B ─┴▶ compare_ranks ─▶ RankComparison { ops (ops.rs), steps + label mix (steps.rs),
//!                                                  memory pools (memory.rs) }
//! [RankFigures] A, B ─▶ ranks::rank_table ─▶ [RankPair] ─▶ ranks::changed_most
//! ```
//!
//! * [`keyed`]: the one matching rule (sum per key, new / gone, order by the size of the change).
//! * [`ops`]: ops per name (HTA's `TraceDiff` rule on two GPU traces, kernels per name otherwise).
//! * [`steps`]: steps paired by id or order, their §5.4 figures, the §5.8 label mix.
//! * [`memory`]: allocator peak and live set per pool, by user frame and by op name.
//! * [`ranks`]: the rank-by-rank table of two runs.
//! * [`snapshot`]: two snapshots' matched peaks and overlaid curves.

pub mod keyed;
pub mod memory;
pub mod ops;
pub mod ranks;
pub mod snapshot;
pub mod steps;

use std::collections::BTreeMap;

use self::keyed::{by_key, Delta};
use self::memory::{compare_memory, PoolComparison};
use self::ops::{hta_ops, kernel_ops, OpTotal, SideOps, StepChoice};
use self::steps::{label_mix, match_steps, StepFigures, StepMatch};
use crate::analysis::anomaly::result::AnomalyResult;
use crate::analysis::gpu_breakdown::hta_events;
use crate::analysis::host_evidence::Label;
use crate::analysis::memory_result::RankMemory;
use crate::model::gpu::GpuTrace;
use crate::model::kernels::KernelTable;

/// What the comparison reads of one analysed rank.
#[derive(Clone, Copy)]
pub struct RankSide<'a> {
    /// Rank id, when known.
    pub rank_id: Option<i64>,
    /// The steps-and-bubbles result (anomaly.md).
    pub result: &'a AnomalyResult,
    /// The rank's kernels (Ascend `kernel_details.csv`, or a GPU trace's device ops).
    pub kernels: &'a KernelTable,
    /// The whole Kineto trace of a GPU rank (`None` on Ascend ranks).
    pub gpu: Option<&'a GpuTrace>,
    /// Its memory events (`operator_memory.csv`), when analysed.
    pub memory: Option<&'a RankMemory>,
}

/// Which rule the ops table follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpsRule {
    /// Both sides are GPU traces: HTA's `TraceDiff.compare_traces` ([`ops::hta_ops`]).
    Hta,
    /// Otherwise: device kernels per name ([`ops::kernel_ops`]).
    Kernels,
}

impl OpsRule {
    /// `hta_trace_diff` / `kernels`.
    pub fn as_str(self) -> &'static str {
        match self {
            OpsRule::Hta => "hta_trace_diff",
            OpsRule::Kernels => "kernels",
        }
    }
}

/// Two ranks compared.
#[derive(Clone, Debug, PartialEq)]
pub struct RankComparison {
    /// The rule of the ops table.
    pub ops_rule: OpsRule,
    /// Side A's ops table (and the steps it covers).
    pub a_ops: SideOps,
    /// Side B's.
    pub b_ops: SideOps,
    /// Ops matched by name ([`keyed::by_key`] order).
    pub ops: Vec<Delta<String, OpTotal>>,
    /// How the steps were paired.
    pub steps: StepMatch,
    /// Side A's steps, in step order.
    pub a_steps: Vec<StepFigures>,
    /// Side B's.
    pub b_steps: Vec<StepFigures>,
    /// Side A's label mix: windows and Σ ns per label.
    pub a_labels: BTreeMap<Label, (u64, i64)>,
    /// Side B's.
    pub b_labels: BTreeMap<Label, (u64, i64)>,
    /// Allocator pools compared (empty unless both sides have memory events).
    pub memory: Vec<PoolComparison>,
}

fn side_ops(s: &RankSide<'_>, rule: OpsRule, choice: StepChoice) -> SideOps {
    if let (OpsRule::Hta, Some(t)) = (rule, s.gpu) {
        let ev = hta_events(t);
        let out = hta_ops(&ev, choice);
        // A trace without ProfilerStep: HTA refuses ("doesn't have any iteration"); we compare
        // the whole capture and say so (steps empty, step_count 0).
        if out.missing_step && out.step_count == 0 {
            return hta_ops(&ev, StepChoice::All);
        }
        return out;
    }
    let steps = &s.result.steps;
    match choice {
        StepChoice::Nth(_) if steps.is_empty() => kernel_ops(s.kernels, None, Vec::new(), 0),
        StepChoice::Nth(k) => match steps.get(k) {
            Some(st) => kernel_ops(
                s.kernels,
                Some(std::slice::from_ref(&st.kernels)),
                vec![st.step_id.clone()],
                steps.len(),
            ),
            None => SideOps {
                step_count: steps.len(),
                missing_step: true,
                ..SideOps::default()
            },
        },
        StepChoice::All => kernel_ops(s.kernels, None, Vec::new(), steps.len()),
    }
}

/// Compares two ranks: ops per name for `choice`, every step, the label mix.
pub fn compare_ranks(a: &RankSide<'_>, b: &RankSide<'_>, choice: StepChoice) -> RankComparison {
    let ops_rule = if a.gpu.is_some() && b.gpu.is_some() {
        OpsRule::Hta
    } else {
        OpsRule::Kernels
    };
    let a_ops = side_ops(a, ops_rule, choice);
    let b_ops = side_ops(b, ops_rule, choice);
    let ops = by_key(a_ops.ops.iter().cloned(), b_ops.ops.iter().cloned());
    let ia: Vec<&str> = a.result.steps.iter().map(|x| x.step_id.as_str()).collect();
    let ib: Vec<&str> = b.result.steps.iter().map(|x| x.step_id.as_str()).collect();
    RankComparison {
        ops_rule,
        ops,
        a_ops,
        b_ops,
        steps: match_steps(&ia, &ib),
        a_steps: a.result.steps.iter().map(StepFigures::of).collect(),
        b_steps: b.result.steps.iter().map(StepFigures::of).collect(),
        a_labels: label_mix(&a.result.bubbles),
        b_labels: label_mix(&b.result.bubbles),
        memory: match (a.memory, b.memory) {
            (Some(x), Some(y)) => compare_memory(x, y),
            _ => Vec::new(),
        },
    }
}
