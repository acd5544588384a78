//! Cross-rank comparison (anomaly.md §13.4): per-rank step service and busy
//! union, a slow-rank flag (> 5 % above the median and robust z-score > 3),
//! and the bubble pattern side by side.
//!
//! **Grouping by role (Decision; §13.4 is silent on it):** ranks of different roles (the
//! parent folder: actor / ref / critic of an RL run, or `actor_update` /
//! `actor_compute_log_prob`) run different work, so one median over all of them flags a role,
//! not a slow rank. When the ranks hold more than one role, [`flag_slow_by_role`] computes the
//! median, MAD and robust z within each role and says the group in [`RankRow::group`]; with
//! one role (or none) it is [`flag_slow`] over every row, `group` `None`. The straggler view
//! (`analysis::gpu_straggler::stragglers_by_role`) groups the same way.

use super::AnomalyResult;
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::analysis::intervals::percentile;
use crate::base::units::ns_to_ms;

/// One row of the cross-rank table.
#[derive(Clone, Debug, PartialEq)]
pub struct RankRow {
    /// Rank id.
    pub rank_id: i64,
    /// Number of steps.
    pub steps: usize,
    /// Mean step service, ms.
    pub service_ms_avg: f64,
    /// Mean device busy union, ms.
    pub busy_union_ms_avg: f64,
    /// Mean underfeed ratio.
    pub underfeed_ratio_avg: f64,
    /// Communication total, ms (communication.json when present, else kernels).
    pub comm_total_ms: f64,
    /// Elapse-weighted comm wait ratio.
    pub comm_wait_ratio_weighted: Option<f64>,
    /// Bubbles per step (mean of `bubble_count`).
    pub bubble_count_avg: f64,
    /// Dominant idle pattern of `g0`.
    pub dominant_idle_pattern: &'static str,
    /// `(x − median) / (1.4826 · MAD)`; `+∞` when MAD is 0 and x > median (Decision); `None`
    /// when the rank was not compared: the only rank of its role, or of the table (Decision).
    pub robust_z: Option<f64>,
    /// Slow-rank flag.
    pub slow: bool,
    /// The role whose ranks `robust_z` and `slow` were computed among ([`flag_slow_by_role`]);
    /// `None` when every row was compared with every other (one role).
    pub group: Option<String>,
}

/// Builds the table from `(rank_id, result)` pairs, in the given order.
pub fn compare(ranks: &[(i64, &AnomalyResult)], cfg: &AnomalyConfig) -> Vec<RankRow> {
    let mut rows: Vec<RankRow> = ranks.iter().map(|&(id, r)| row_of(id, r)).collect();
    flag_slow(&mut rows, cfg);
    rows
}

/// The row of one rank, before [`flag_slow`] (`robust_z` `None`, `slow` false).
pub fn row_of(id: i64, r: &AnomalyResult) -> RankRow {
    let n = r.steps.len().max(1) as f64;
    let sum = |f: &dyn Fn(&super::StepResult) -> f64| r.steps.iter().map(f).sum::<f64>() / n;
    RankRow {
        rank_id: id,
        steps: r.steps.len(),
        service_ms_avg: sum(&|s| ns_to_ms(s.metrics.service_ns)),
        busy_union_ms_avg: sum(&|s| ns_to_ms(s.metrics.busy_ns)),
        underfeed_ratio_avg: sum(&|s| s.metrics.underfeed_ratio),
        comm_total_ms: r
            .comm
            .communication_json_ms
            .unwrap_or(r.comm.kernel_details_ms),
        comm_wait_ratio_weighted: r.comm.wait_ratio_weighted,
        bubble_count_avg: sum(&|s| s.metrics.bubble_count() as f64),
        dominant_idle_pattern: r
            .groups
            .first()
            .map(|g| g.dominant_idle_pattern.as_str())
            .unwrap_or("none"),
        robust_z: None,
        slow: false,
        group: None,
    }
}

/// Robust z-scores of `xs` (anomaly.md §13.4, the one MAD rule of the cross-rank table and
/// the cluster summary's outliers): `(median, z)` with `z[i] = (xs[i] − median) / (1.4826 · MAD)`,
/// MAD the median of `|x − median|` (percentile type 7); when MAD is 0, `+∞` above the median
/// and 0 elsewhere (Decision). Empty `xs`: median 0, no scores.
pub fn robust_z(xs: &[f64]) -> (f64, Vec<f64>) {
    let med = percentile(xs, 0.5);
    let dev: Vec<f64> = xs.iter().map(|x| (x - med).abs()).collect();
    let mad = percentile(&dev, 0.5);
    let z = xs
        .iter()
        .map(|x| {
            let d = x - med;
            if mad > 0.0 {
                d / (1.4826 * mad)
            } else if d > 0.0 {
                f64::INFINITY
            } else {
                0.0
            }
        })
        .collect();
    (med, z)
}

/// Sets `robust_z` and `slow` of every row (§13.4): [`robust_z`] of `service_ms_avg` over
/// the rows; slow when > `slow_rank_excess` above the median and z > `slow_rank_z`. Needs ≥ 2
/// rows: one row has no peer, so it is not compared (`robust_z` `None`, never slow).
pub fn flag_slow(rows: &mut [RankRow], cfg: &AnomalyConfig) {
    if rows.len() < 2 {
        for r in rows.iter_mut() {
            r.robust_z = None;
            r.slow = false;
        }
        return;
    }
    let xs: Vec<f64> = rows.iter().map(|r| r.service_ms_avg).collect();
    let (med, z) = robust_z(&xs);
    for (r, z) in rows.iter_mut().zip(z) {
        r.robust_z = Some(z);
        r.slow = r.service_ms_avg > med * (1.0 + cfg.slow_rank_excess) && z > cfg.slow_rank_z;
    }
}

/// The role groups of `roles` (first-appearance order, row indices in order) when they hold
/// more than one distinct role, else `None` (one group: every row). The one grouping rule of
/// the slow-rank flag and the straggler view.
pub fn role_groups<S: AsRef<str>>(roles: &[S]) -> Option<Vec<(String, Vec<usize>)>> {
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, r) in roles.iter().enumerate() {
        let r = r.as_ref();
        match groups.iter_mut().find(|(g, _)| g == r) {
            Some((_, v)) => v.push(i),
            None => groups.push((r.to_string(), vec![i])),
        }
    }
    (groups.len() > 1).then_some(groups)
}

/// [`flag_slow`] within each role when `roles` (one per row) hold more than one role
/// ([`role_groups`]; each row's `group` says its role), else over every row (`group` `None`).
/// A role with one rank is not compared (its z is `None`) and never slow.
pub fn flag_slow_by_role<S: AsRef<str>>(rows: &mut [RankRow], roles: &[S], cfg: &AnomalyConfig) {
    let Some(groups) = role_groups(&roles[..roles.len().min(rows.len())]) else {
        for r in rows.iter_mut() {
            r.group = None;
        }
        flag_slow(rows, cfg);
        return;
    };
    for (role, idx) in groups {
        let mut sub: Vec<RankRow> = idx.iter().map(|&i| rows[i].clone()).collect();
        flag_slow(&mut sub, cfg);
        for (&i, mut r) in idx.iter().zip(sub) {
            r.group = Some(role.clone());
            rows[i] = r;
        }
    }
}

/// What names a rank's report scope besides its rank id: its report file suffix
/// (`_<role>_rank<N>_<trace>`, anomaly.md §1.6) without `rank<N>`, which is also the scope its
/// GPU collectives are matched in (communication.md §4.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scope {
    /// The ranks hold several roles ([`role_groups`]): the rank's role is part of its scope.
    pub role: bool,
    /// Another rank of its role has its id (two traces of one rank, `GPU-DISC-002`): the
    /// rank's trace or folder name is part of its scope.
    pub trace: bool,
}

/// The [`Scope`] of each of `ranks` (its role, `""` when unknown, and its rank id), in order:
/// the one rule of the report file names (`engine::export::anomaly::report_stem`) and of the
/// GPU collectives' scope (`engine::export::comm::scoped_kernels`).
pub fn scopes<S: AsRef<str>>(ranks: &[(S, i64)]) -> Vec<Scope> {
    let roles: Vec<&str> = ranks.iter().map(|(r, _)| r.as_ref()).collect();
    let role = role_groups(&roles).is_some();
    let mut count: std::collections::BTreeMap<(&str, i64), usize> = Default::default();
    for (r, id) in ranks {
        *count.entry((r.as_ref(), *id)).or_default() += 1;
    }
    ranks
        .iter()
        .map(|(r, id)| Scope {
            role,
            trace: count.get(&(r.as_ref(), *id)).is_some_and(|&c| c > 1),
        })
        .collect()
}

/// The key [`scopes`] decides a cross-rank row's scope by: its group (`""` with one role)
/// and its rank id. The rows are grouped exactly when the ranks hold several roles
/// ([`flag_slow_by_role`]), so the rows' keys give the scopes their ranks' roles give.
pub fn scope_key(row: &RankRow) -> (&str, i64) {
    (row.group.as_deref().unwrap_or(""), row.rank_id)
}
