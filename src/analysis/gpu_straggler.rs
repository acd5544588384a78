//! Straggler view across GPU ranks (across ranks): which rank's collectives start
//! last. The *k*-th communication kernel ([`KernelClass::Communication`]) of every rank is the
//! same collective (NCCL issues collectives in the same order on every rank of a group); it
//! is matched only while the names agree, so a capture that diverges stops the matching
//! there (the count says how far it went). For each matched collective the rank that starts
//! last is its straggler and every rank's delay is its start − the earliest start (epoch ns:
//! each rank's `baseTimeNanoseconds` + file time, so ranks with different bases compare).
//!
//! Grouped by role like the slow-rank rule ([`stragglers_by_role`], the grouping of
//! `analysis::anomaly::cross_rank::role_groups`): when the ranks hold more than one role, each
//! role is its own view (its ranks run their own collectives), else one view over all.
//!
//! The other ranks wait inside the collective for the straggler, so a rank whose
//! collectives start last most often (and whose compute takes longest) is the slow one; the
//! Ascend slow-rank rule (`analysis::anomaly::cross_rank`) applies to GPU ranks unchanged
//! once they go through the anomaly pipeline.

use super::gpu_kernel_class::{ClassOfName, KernelClass};
use crate::analysis::anomaly::cross_rank::role_groups;
use crate::model::gpu::GpuTrace;

/// One rank's row of the straggler view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankDelay {
    /// The rank (as given by the caller).
    pub rank: i64,
    /// Matched collectives this rank started last.
    pub last_count: u64,
    /// Mean of (its start − earliest start), ns.
    pub mean_delay_ns: i64,
    /// Largest such delay, ns.
    pub max_delay_ns: i64,
}

/// The straggler view of a group of ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stragglers {
    /// Collectives matched on every rank (by order and name).
    pub matched: usize,
    /// Collectives per rank (the shortest bounds `matched`).
    pub per_rank_collectives: Vec<usize>,
    /// One row per rank, in the caller's order.
    pub ranks: Vec<RankDelay>,
    /// The rank that started last most often (ties: the larger total delay, then the lower
    /// rank); `None` with fewer than two ranks or no matched collective.
    pub straggler: Option<i64>,
    /// The straggler's row in [`Stragglers::ranks`]: the one row to mark (two roles of a run
    /// can hold the same rank id, so the id alone would mark both).
    pub straggler_index: Option<usize>,
}

/// Start (epoch ns) and name of each communication kernel of `t`, in start order.
pub fn collectives(t: &GpuTrace) -> Vec<(i64, &str)> {
    let mut class = ClassOfName::new(t);
    t.device_ops
        .iter()
        .filter(|d| class.of(d.name) == KernelClass::Communication)
        .map(|d| (t.epoch_ns(d.start_ns).unwrap_or(d.start_ns), t.text(d.name)))
        .collect()
}

/// The straggler view of `ranks` (`(rank, trace)`).
pub fn stragglers(ranks: &[(i64, &GpuTrace)]) -> Stragglers {
    let colls: Vec<Vec<(i64, &str)>> = ranks.iter().map(|(_, t)| collectives(t)).collect();
    let ids: Vec<i64> = ranks.iter().map(|(r, _)| *r).collect();
    stragglers_of(&ids, &colls)
}

/// The straggler view of ranks `ranks[i]` whose communication kernels are `colls[i]`
/// (`(start epoch ns, name)` in start order, as [`collectives`] gives them) — the one rule,
/// for callers that hold the collectives but not the traces (the page's workers each hold
/// some ranks and send their collectives). Extra entries of the longer slice are ignored.
pub fn stragglers_of(ranks: &[i64], colls: &[Vec<(i64, &str)>]) -> Stragglers {
    let colls = &colls[..colls.len().min(ranks.len())];
    let ranks = &ranks[..colls.len()];
    let shortest = colls.iter().map(Vec::len).min().unwrap_or(0);
    let matched = (0..shortest)
        .take_while(|&k| colls.iter().all(|c| c[k].1 == colls[0][k].1))
        .count();
    let n = ranks.len();
    let (mut last, mut sum, mut max) = (vec![0u64; n], vec![0i128; n], vec![0i64; n]);
    for k in 0..matched {
        let starts: Vec<i64> = colls.iter().map(|c| c[k].0).collect();
        let first = starts.iter().copied().min().unwrap_or(0);
        let latest = starts.iter().copied().max().unwrap_or(0);
        // The lowest-index rank among those starting at the latest time.
        if let Some(r) = starts.iter().position(|&s| s == latest) {
            last[r] += 1;
        }
        for (r, &s) in starts.iter().enumerate() {
            let d = s.saturating_sub(first);
            sum[r] += d as i128;
            max[r] = max[r].max(d);
        }
    }
    let rows: Vec<RankDelay> = ranks
        .iter()
        .enumerate()
        .map(|(r, rank)| RankDelay {
            rank: *rank,
            last_count: last[r],
            mean_delay_ns: if matched > 0 {
                (sum[r] / matched as i128) as i64
            } else {
                0
            },
            max_delay_ns: max[r],
        })
        .collect();
    let straggler_index = (n >= 2 && matched > 0)
        .then(|| {
            (0..n).max_by(|&a, &b| {
                (last[a], sum[a])
                    .cmp(&(last[b], sum[b]))
                    .then(rows[b].rank.cmp(&rows[a].rank))
                    .then(b.cmp(&a))
            })
        })
        .flatten();
    Stragglers {
        matched,
        per_rank_collectives: colls.iter().map(Vec::len).collect(),
        straggler: straggler_index.map(|r| rows[r].rank),
        ranks: rows,
        straggler_index,
    }
}

/// The straggler views of ranks grouped by role ([`stragglers_by_role`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleStragglers {
    /// One view per group of two or more ranks: `(role, view)`; the role is `None` when the
    /// ranks hold one role (one view over all of them).
    pub views: Vec<(Option<String>, Stragglers)>,
    /// Per input rank, `(index in views, row in that view)`; `None` for a rank alone in its role.
    pub at: Vec<Option<(usize, usize)>>,
}

impl RoleStragglers {
    /// The view and row of input rank `i`, with the view's role.
    pub fn of(&self, i: usize) -> Option<(Option<&str>, &Stragglers, usize)> {
        let (v, row) = (*self.at.get(i)?)?;
        let (role, view) = self.views.get(v)?;
        Some((role.as_deref(), view, row))
    }
}

/// [`stragglers_of`] within each role when `roles` (one per rank) hold more than one role,
/// else over every rank (`role_groups`' rule, the slow-rank flag's). A role with one rank gets
/// no view; with fewer than two ranks there is none.
pub fn stragglers_by_role<S: AsRef<str>>(
    ranks: &[i64],
    roles: &[S],
    colls: &[Vec<(i64, &str)>],
) -> RoleStragglers {
    let n = ranks.len().min(colls.len()).min(roles.len());
    let groups: Vec<(Option<String>, Vec<usize>)> = match role_groups(&roles[..n]) {
        Some(g) => g.into_iter().map(|(r, v)| (Some(r), v)).collect(),
        None => vec![(None, (0..n).collect())],
    };
    let mut out = RoleStragglers {
        views: Vec::new(),
        at: vec![None; ranks.len()],
    };
    for (role, idx) in groups {
        if idx.len() < 2 {
            continue;
        }
        let ids: Vec<i64> = idx.iter().map(|&i| ranks[i]).collect();
        let cs: Vec<Vec<(i64, &str)>> = idx.iter().map(|&i| colls[i].clone()).collect();
        let v = out.views.len();
        for (row, &i) in idx.iter().enumerate() {
            out.at[i] = Some((v, row));
        }
        out.views.push((role, stragglers_of(&ids, &cs)));
    }
    out
}
