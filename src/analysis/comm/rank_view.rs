//! One rank's communication as its anomaly report shows it (docs/rules/anomaly.md "The
//! communication section"; the formulas of docs/rules/communication.md §2.1): the rank's totals
//! and ratios over every op of its `communication.json` (or `analysis.db`), per group, and —
//! when several ranks were analysed together — the slow-rank votes (§2.5) and slow-link groups
//! (§2.4) across them, from the same ops the anomaly analysis reads ([`CommOp`]).

use super::round::compute_ratio;
use super::slow::{op_type, slow_links, slow_ranks, LinkOpRow, OpTimeRow, TOP_NUM};
use super::{SlowLinkRow, SlowRankRow};
use crate::model::side_tables::CommOp;

/// Sums of one set of ops: count, the five times (ms) and the two ratios.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CommTotals {
    /// Ops summed.
    pub n_ops: u64,
    /// Σ elapse (ms).
    pub elapse_ms: f64,
    /// Σ transit (ms).
    pub transit_ms: f64,
    /// Σ wait (ms).
    pub wait_ms: f64,
    /// Σ synchronization (ms).
    pub sync_ms: f64,
    /// Σ idle (ms).
    pub idle_ms: f64,
    /// `compute_ratio(wait, wait + transit)`.
    pub wait_ratio: f64,
    /// `compute_ratio(sync, sync + transit)`.
    pub sync_ratio: f64,
}

impl CommTotals {
    fn add(&mut self, o: &CommOp) {
        self.n_ops += 1;
        self.elapse_ms += o.elapse_ms;
        self.transit_ms += o.transit_ms;
        self.wait_ms += o.wait_ms;
        self.sync_ms += o.sync_ms;
        self.idle_ms += o.idle_ms;
    }

    fn close(&mut self) {
        self.wait_ratio = compute_ratio(self.wait_ms, self.wait_ms + self.transit_ms);
        self.sync_ratio = compute_ratio(self.sync_ms, self.sync_ms + self.transit_ms);
    }
}

/// One rank's view: its totals and, per group (in order of first op), the group's totals.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RankCommView {
    /// Every op of the rank.
    pub total: CommTotals,
    /// `(group hash, "p2p" / "collective", totals)` per group.
    pub groups: Vec<(String, String, CommTotals)>,
}

/// The view of `ops` (one rank's, in file order); `None` when it has none.
pub fn rank_view(ops: &[CommOp]) -> Option<RankCommView> {
    if ops.is_empty() {
        return None;
    }
    let mut v = RankCommView::default();
    for o in ops {
        v.total.add(o);
        let at = match v.groups.iter().position(|g| g.0 == o.group_name) {
            Some(p) => p,
            None => {
                v.groups.push((
                    o.group_name.clone(),
                    o.group_kind.clone(),
                    CommTotals::default(),
                ));
                v.groups.len() - 1
            }
        };
        v.groups[at].2.add(o);
    }
    v.total.close();
    for g in &mut v.groups {
        g.2.close();
    }
    Some(v)
}

/// The cross-rank rules over the ranks analysed together.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CrossRankComm {
    /// Ranks with ops.
    pub ranks: usize,
    /// Ops tested by the slow-rank rule.
    pub ops_tested: usize,
    /// Every slow-rank vote (by start time).
    pub slow_ranks: Vec<SlowRankRow>,
    /// Every flagged slow-link group.
    pub slow_links: Vec<SlowLinkRow>,
    /// True when some op has a data size (the slow-link rule's key: from `trace_view.json`'s
    /// HCCL op events or the DB's `COMMUNICATION_OP`).
    pub has_data_size: bool,
}

/// The cross-rank rules over `ranks` (`(rank id, its ops)`, any order: taken ascending);
/// `None` with fewer than two ranks holding ops.
pub fn cross_rank(ranks: &[(i64, &[CommOp])]) -> Option<CrossRankComm> {
    let mut with: Vec<(i64, &[CommOp])> =
        ranks.iter().filter(|r| !r.1.is_empty()).copied().collect();
    if with.len() < 2 {
        return None;
    }
    crate::base::sort::sort_by_key(&mut with, |r| r.0);
    let mut times = Vec::new();
    let mut links = Vec::new();
    for (rank, ops) in &with {
        for o in ops.iter() {
            times.push(OpTimeRow {
                rank: *rank,
                group: o.group_name.clone(),
                op: o.collective_name.clone(),
                start_us: o.start_ns as f64 / 1000.0,
                time_us: o.elapse_ms * 1000.0,
            });
            links.push(LinkOpRow {
                rank: *rank,
                group: o.group_name.clone(),
                op: o.collective_name.clone(),
                op_type: op_type(&o.collective_name),
                data_size: o.data_size,
                time_ns: (o.elapse_ms * 1e6).round() as i64,
            });
        }
    }
    let (slow, tested) = slow_ranks(&times);
    Some(CrossRankComm {
        ranks: with.len(),
        ops_tested: tested,
        slow_ranks: slow,
        has_data_size: links.iter().any(|l| l.data_size.is_some()),
        slow_links: slow_links(&links, TOP_NUM),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(group: &str, name: &str, elapse: f64, transit: f64, wait: f64) -> CommOp {
        CommOp {
            step_key: "step1".into(),
            group_kind: "collective".into(),
            collective_name: name.into(),
            group_name: group.into(),
            start_ns: 1000,
            elapse_ms: elapse,
            wait_ms: wait,
            wait_ratio: 0.0,
            sync_ms: wait / 2.0,
            sync_ratio: 0.0,
            transit_ms: transit,
            idle_ms: elapse - wait - transit,
            message_size_bytes: 0.0,
            transport_types: vec![],
            bandwidth_gbps: vec![],
            data_size: None,
        }
    }

    #[test]
    fn totals_per_rank_and_group_and_the_dixon_vote_across_ranks() {
        let a = [op("1", "x", 2.0, 0.5, 1.0), op("2", "y", 1.0, 0.0, 0.0)];
        let v = rank_view(&a).unwrap();
        assert_eq!(v.total.n_ops, 2);
        assert_eq!((v.total.elapse_ms, v.total.wait_ratio), (3.0, 0.6667));
        assert_eq!(v.total.sync_ratio, 0.5);
        assert_eq!(v.groups.len(), 2);
        assert_eq!((v.groups[1].2.wait_ratio, v.groups[1].2.n_ops), (0.0, 1));
        assert!(rank_view(&[]).is_none());
        // Seven ranks of one op, rank 3 far shortest: Dixon votes it.
        let ops: Vec<Vec<CommOp>> = (0..7)
            .map(|r| {
                let t = if r == 3 { 0.01 } else { 1.0 + r as f64 * 0.001 };
                vec![op("1", "hcom_allReduce__001_1_1", t, 0.0, 0.0)]
            })
            .collect();
        let ranks: Vec<(i64, &[CommOp])> = ops
            .iter()
            .enumerate()
            .map(|(r, o)| (r as i64, o.as_slice()))
            .collect();
        let c = cross_rank(&ranks).unwrap();
        assert_eq!((c.ranks, c.ops_tested), (7, 1));
        assert_eq!(c.slow_ranks.len(), 1);
        assert_eq!(c.slow_ranks[0].rank, 3);
        assert!(c.slow_links.is_empty() && !c.has_data_size);
        assert!(cross_rank(&ranks[..1]).is_none());
    }
}
