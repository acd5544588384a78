//! Steps of two ranks side by side (steps; anomaly.md §3, §5.4, §5.9).
//!
//! * **Matching** ([`match_steps`]): by step id when both sides have the same set of distinct
//!   ids (the pairs then follow side A's order), otherwise by order (the k-th step of A with the
//!   k-th of B; [`MatchedBy::Order`], which the outputs state); a step without a partner is
//!   paired with nothing.
//! * **Per step** ([`StepFigures`]): the §5.4 window metrics the anomaly analysis computed
//!   (`service`, busy union, underfeed, internal bubbles: count and total), never recomputed.
//! * **Bubble label mix** ([`label_mix`]): per §5.8 label, the emitted step windows carrying it
//!   (prelaunch, internal, tail; global windows overlap them and are left out, as §5.9's global
//!   summary does) and their Σ duration; a window with two labels counts in both.

use std::collections::BTreeMap;

use crate::analysis::anomaly::result::{BubbleResult, StepResult};
use crate::analysis::host_evidence::Label;

/// How the steps of the two sides were paired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchedBy {
    /// Same step ids on both sides.
    Id,
    /// The ids differ: the k-th step of A with the k-th of B.
    Order,
}

impl MatchedBy {
    /// `id` / `order`.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchedBy::Id => "id",
            MatchedBy::Order => "order",
        }
    }
}

/// One step's figures, ns (anomaly.md §5.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepFigures {
    /// Step id as the anomaly analysis names it.
    pub step_id: String,
    /// `max(0, E − S)`.
    pub service_ns: i64,
    /// Device busy union inside the window.
    pub busy_ns: i64,
    /// `max(0, service − busy)`.
    pub underfeed_ns: i64,
    /// Internal bubbles.
    pub bubble_count: usize,
    /// Σ internal bubble durations.
    pub bubble_total_ns: i64,
}

impl StepFigures {
    /// The figures of one analysed step.
    pub fn of(s: &StepResult) -> StepFigures {
        let m = &s.metrics;
        StepFigures {
            step_id: s.step_id.clone(),
            service_ns: m.service_ns,
            busy_ns: m.busy_ns,
            underfeed_ns: m.underfeed_ns,
            bubble_count: m.bubble_count(),
            bubble_total_ns: m.internal_total_ns(),
        }
    }
}

/// Paired steps: `(index in A, index in B)`, one side `None` when unpaired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepMatch {
    /// The rule used.
    pub by: MatchedBy,
    /// Pairs in output order.
    pub pairs: Vec<(Option<usize>, Option<usize>)>,
}

/// Pairs the steps of two ranks, given their step ids in step order (module doc).
pub fn match_steps(a: &[&str], b: &[&str]) -> StepMatch {
    fn ids<'s>(s: &[&'s str]) -> Option<Vec<&'s str>> {
        let mut v: Vec<&str> = s.to_vec();
        v.sort_unstable();
        let n = v.len();
        v.dedup();
        (v.len() == n).then_some(v)
    }
    match (ids(a), ids(b)) {
        (Some(x), Some(y)) if x == y => StepMatch {
            by: MatchedBy::Id,
            pairs: a
                .iter()
                .enumerate()
                .map(|(i, s)| (Some(i), b.iter().position(|t| t == s)))
                .collect(),
        },
        _ => StepMatch {
            by: MatchedBy::Order,
            pairs: (0..a.len().max(b.len()))
                .map(|k| ((k < a.len()).then_some(k), (k < b.len()).then_some(k)))
                .collect(),
        },
    }
}

/// Per label: (windows, Σ ns) of one side's emitted step windows, in label order.
pub fn label_mix(bubbles: &[BubbleResult]) -> BTreeMap<Label, (u64, i64)> {
    let mut m: BTreeMap<Label, (u64, i64)> = BTreeMap::new();
    for b in bubbles.iter().filter(|b| b.window.step.is_some()) {
        for &l in &b.labels {
            let e = m.entry(l).or_default();
            e.0 += 1;
            e.1 = e.1.saturating_add(b.window.interval.len_ns());
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(pairs: &StepMatch) -> Vec<(Option<usize>, Option<usize>)> {
        pairs.pairs.clone()
    }

    #[test]
    fn same_ids_match_by_id_else_by_order() {
        let a = ["1", "2", "3"];
        let b = ["3", "1", "2"];
        let m = match_steps(&a, &b);
        assert_eq!(m.by, MatchedBy::Id);
        assert_eq!(
            ids(&m),
            [(Some(0), Some(1)), (Some(1), Some(2)), (Some(2), Some(0))]
        );
        let c = ["7", "8"];
        let m = match_steps(&a, &c);
        assert_eq!(m.by, MatchedBy::Order);
        assert_eq!(
            ids(&m),
            [(Some(0), Some(0)), (Some(1), Some(1)), (Some(2), None)]
        );
        // Repeated ids cannot be matched by id.
        let d = ["1", "1"];
        assert_eq!(match_steps(&d, &d).by, MatchedBy::Order);
    }
}
