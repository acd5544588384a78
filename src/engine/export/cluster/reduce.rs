//! The reduce of the cluster path (`docs/cluster-summary.md` §4): rank summaries in,
//! one [`ClusterSummary`] out. Every cross-rank result is computed here, with the rules of
//! `analysis::anomaly::cross_rank` ([`flag_slow`], [`robust_z`], spec defaults).
//!
//! ```text
//! Reducer::push(RankSummary)   keeps the rank (duplicate target: first kept, one problem)
//! Reducer::problem(..)         a located problem of a part file (bad line, unreadable file)
//! Reducer::finish(roots, run)  order ranks → cross_rank (per role) → slow_ranks → matrices
//!                              → outliers (per role, metric, step) → problem totals
//! ```
//!
//! Memory: the kept ranks (each ≤ 64 KiB) and, at `finish`, the matrices (ranks × steps × 5).

use rustc_hash::FxHashSet as HashSet;
use std::collections::BTreeMap;

use crate::analysis::anomaly::cross_rank::{flag_slow, robust_z, RankRow};
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::protocol::cluster::{
    ClusterSummary, CommSlowLink, CommSlowRank, CrossRankRow, Matrices, Outlier, ProblemCounts,
    ProblemSeverity, ProblemSummary, RankStatus, RankSummary, RunInfo, StepSummary, FORMAT,
    MAX_OUTLIERS, MAX_PROBLEMS, VERSION,
};

/// Problem codes of the reduce.
pub mod codes {
    /// A line of a part file is not a rank summary (JSON error, wrong fields).
    pub const BAD_LINE: &str = "CLUSTER-PART-001";
    /// A part file cannot be read.
    pub const UNREADABLE: &str = "CLUSTER-PART-002";
    /// The same target appears twice: the first line is kept.
    pub const DUPLICATE: &str = "CLUSTER-PART-003";
}

/// The matrices' metrics, in the order of [`Matrices`], with the step field each reads.
pub const METRICS: [(&str, fn(&StepSummary) -> f64); 5] = [
    ("service_ms", |s| s.service_ms),
    ("underfeed_ratio", |s| s.underfeed_ratio),
    ("device_busy_union_ms", |s| s.device_busy_union_ms),
    ("internal_bubble_total_ms", |s| s.internal_bubble_total_ms),
    ("bubble_count", |s| s.bubble_count as f64),
];

/// Collects rank summaries and part problems; [`Reducer::finish`] builds the summary.
#[derive(Default)]
pub struct Reducer {
    ranks: Vec<RankSummary>,
    targets: HashSet<String>,
    problems: Vec<ProblemSummary>,
    problems_dropped: u64,
    counts: ProblemCounts,
}

impl Reducer {
    /// An empty reducer.
    pub fn new() -> Reducer {
        Reducer::default()
    }

    /// Keeps `r`; a target already kept is not kept again (a [`codes::DUPLICATE`] warning at
    /// `file`, `location`).
    pub fn push(&mut self, r: RankSummary, file: &str, location: &str) {
        if !self.targets.insert(r.target.clone()) {
            let msg = format!(
                "target {} is summarised twice: the first summary is kept",
                r.target
            );
            self.problem(
                ProblemSeverity::Warning,
                codes::DUPLICATE,
                file,
                location,
                msg,
            );
            return;
        }
        self.ranks.push(r);
    }

    /// Records a problem of the reduce's input (counted; the first [`MAX_PROBLEMS`] kept).
    pub fn problem(
        &mut self,
        severity: ProblemSeverity,
        code: &str,
        file: &str,
        location: &str,
        message: String,
    ) {
        match severity {
            ProblemSeverity::Error => self.counts.errors += 1,
            ProblemSeverity::Warning => self.counts.warnings += 1,
        }
        if self.problems.len() >= MAX_PROBLEMS {
            self.problems_dropped += 1;
            return;
        }
        self.problems.push(ProblemSummary {
            severity,
            code: code.to_string(),
            file: file.to_string(),
            location: location.to_string(),
            message,
        });
    }

    /// Ranks kept so far.
    pub fn len(&self) -> usize {
        self.ranks.len()
    }

    /// True when no rank was kept.
    pub fn is_empty(&self) -> bool {
        self.ranks.is_empty()
    }

    /// The cluster summary over the kept ranks (see the module doc).
    pub fn finish(self, roots: Vec<String>, run: RunInfo) -> ClusterSummary {
        let mut ranks = self.ranks;
        crate::base::sort::sort_by(&mut ranks, |a, b| rank_order(a).cmp(&rank_order(b)));
        let cross_rank = cross_rank(&ranks);
        let slow_ranks = cross_rank
            .iter()
            .filter(|r| r.slow)
            .map(|r| r.rank_id)
            .collect();
        let comm_slow_ranks = comm_slow_ranks(&ranks);
        let comm_slow_links = comm_slow_links(&ranks);
        let matrices = matrices(&ranks);
        let (outliers, outliers_dropped) = outliers(&ranks, &matrices);
        let mut total = self.counts;
        for r in &ranks {
            total.errors += r.problem_counts.errors;
            total.warnings += r.problem_counts.warnings;
        }
        ClusterSummary {
            format: FORMAT.to_string(),
            version: VERSION,
            generator: format!("proflens {}", env!("CARGO_PKG_VERSION")),
            roots,
            run,
            rank_count: ranks.len() as u64,
            ranks,
            cross_rank,
            slow_ranks,
            matrices,
            outliers,
            outliers_dropped,
            problems_total: total,
            problems: self.problems,
            problems_dropped: self.problems_dropped,
            comm_slow_ranks,
            comm_slow_links,
        }
    }
}

/// The slow-link groups of the ops the rank summaries carry with a data size (communication.md
/// §2.4, ranks ascending): the same rule as `proflens comm` over the summarised ranks; ops
/// without a data size are left out, as there.
fn comm_slow_links(ranks: &[RankSummary]) -> Vec<CommSlowLink> {
    use crate::analysis::comm::slow::{slow_links, LinkOpRow, TOP_NUM};
    let mut with: Vec<(i64, &crate::protocol::cluster::CommSummary)> = ranks
        .iter()
        .filter_map(|r| Some((r.rank_id?, r.comm.as_ref()?)))
        .collect();
    crate::base::sort::sort_by_key(&mut with, |r| r.0);
    let rows: Vec<LinkOpRow> = with
        .iter()
        .flat_map(|(rank, c)| {
            c.ops.iter().map(move |o| LinkOpRow {
                rank: *rank,
                group: o.group.clone(),
                op: o.op.clone(),
                op_type: crate::analysis::comm::slow::op_type(&o.op),
                data_size: o.data_size,
                time_ns: (o.elapse_ms * 1e6).round() as i64,
            })
        })
        .collect();
    slow_links(&rows, TOP_NUM)
        .into_iter()
        .map(|s| CommSlowLink {
            name: s.name,
            count: s.count as u64,
            mean_ns: s.mean_ns,
            std_ns: s.std_ns,
            min_ns: s.min_ns,
            median_ns: s.median_ns,
            max_ns: s.max_ns,
            offset_ratio: s.offset_ratio,
            ops: s.ops,
        })
        .collect()
}

/// The slow ranks of the ops the rank summaries carry (communication.md §2.5.2 rows, ranks
/// ascending): the same rule as `proflens comm` over the summarised ranks.
fn comm_slow_ranks(ranks: &[RankSummary]) -> Vec<CommSlowRank> {
    use crate::analysis::comm::slow::{slow_ranks, OpTimeRow};
    let mut with: Vec<(i64, &crate::protocol::cluster::CommSummary)> = ranks
        .iter()
        .filter_map(|r| Some((r.rank_id?, r.comm.as_ref()?)))
        .collect();
    crate::base::sort::sort_by_key(&mut with, |r| r.0);
    let rows: Vec<OpTimeRow> = with
        .iter()
        .flat_map(|(rank, c)| {
            c.ops.iter().map(move |o| OpTimeRow {
                rank: *rank,
                group: o.group.clone(),
                op: o.op.clone(),
                start_us: o.start_us,
                time_us: o.elapse_ms * 1000.0,
            })
        })
        .collect();
    slow_ranks(&rows)
        .0
        .into_iter()
        .map(|s| CommSlowRank {
            rank_id: s.rank,
            group: s.group,
            op: s.op,
            n: s.n as u64,
            test: s.evidence.test.to_string(),
            statistic: s.evidence.statistic,
            threshold: s.evidence.threshold,
            time_us: s.time_us,
        })
        .collect()
}

/// `(role, rank_id, rank_dir, target)`, unknown role first (as the inventory: `""`), unknown
/// rank id last within its role.
fn rank_order(r: &RankSummary) -> (&str, bool, i64, &str, &str) {
    (
        r.role.as_deref().unwrap_or(""),
        r.rank_id.is_none(),
        r.rank_id.unwrap_or(0),
        &r.rank_dir,
        &r.target,
    )
}

/// Ranks (indices into `ranks`) with an anomaly analysis and not failed, grouped by role
/// (in rank order within a role).
fn role_groups(ranks: &[RankSummary]) -> BTreeMap<&str, Vec<usize>> {
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, r) in ranks.iter().enumerate() {
        if r.anomaly.is_some() && r.status != RankStatus::Failed {
            groups
                .entry(r.role.as_deref().unwrap_or(""))
                .or_default()
                .push(i);
        }
    }
    groups
}

/// The anomaly.md §13.4 table: [`flag_slow`] (spec defaults) over the ranks of each role;
/// rows in rank order.
fn cross_rank(ranks: &[RankSummary]) -> Vec<CrossRankRow> {
    let cfg = AnomalyConfig::spec_defaults();
    let mut out = Vec::new();
    for idx in role_groups(ranks).values() {
        let mut rows: Vec<RankRow> = idx
            .iter()
            .filter_map(|&i| {
                let a = ranks[i].anomaly.as_ref()?;
                Some(RankRow {
                    rank_id: ranks[i].rank_id.unwrap_or(i as i64),
                    steps: a.step_count as usize,
                    service_ms_avg: a.service_ms_avg,
                    busy_union_ms_avg: a.busy_union_ms_avg,
                    underfeed_ratio_avg: a.underfeed_ratio_avg,
                    comm_total_ms: a.comm_total_ms,
                    comm_wait_ratio_weighted: a.comm_wait_ratio_weighted,
                    bubble_count_avg: a.bubble_count_avg,
                    dominant_idle_pattern: "",
                    robust_z: None,
                    slow: false,
                    group: None,
                })
            })
            .collect();
        flag_slow(&mut rows, &cfg);
        for (&i, r) in idx.iter().zip(rows) {
            out.push(CrossRankRow {
                rank_index: i as u64,
                rank_id: r.rank_id,
                role: ranks[i].role.clone(),
                steps: r.steps as u64,
                service_ms_avg: r.service_ms_avg,
                busy_union_ms_avg: r.busy_union_ms_avg,
                underfeed_ratio_avg: r.underfeed_ratio_avg,
                comm_total_ms: r.comm_total_ms,
                comm_wait_ratio_weighted: r.comm_wait_ratio_weighted,
                bubble_count_avg: r.bubble_count_avg,
                robust_z: r.robust_z.filter(|z| z.is_finite()),
                slow: r.slow,
            });
        }
    }
    crate::base::sort::sort_by_key(&mut out, |r| r.rank_index);
    out
}

/// Step order: the trailing decimal number of the id (`ProfilerStep#50` → 50; none: after
/// every numbered id), then the id's text.
fn step_key(id: &str) -> (u64, &str) {
    let digits = id.len() - id.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let n = id[id.len() - digits..].parse::<u64>().unwrap_or(u64::MAX);
    (n, id)
}

fn matrices(ranks: &[RankSummary]) -> Matrices {
    let mut ids: Vec<&str> = ranks
        .iter()
        .flat_map(|r| r.steps.iter().map(|s| s.step_id.as_str()))
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    crate::base::sort::sort_by(&mut ids, |a, b| step_key(a).cmp(&step_key(b)));
    let col: BTreeMap<&str, usize> = ids.iter().enumerate().map(|(j, &s)| (s, j)).collect();
    let mut m: [Vec<Vec<Option<f64>>>; 5] = Default::default();
    for r in ranks {
        let mut rows: [Vec<Option<f64>>; 5] = std::array::from_fn(|_| vec![None; ids.len()]);
        for s in &r.steps {
            let j = col[s.step_id.as_str()];
            for (k, (_, field)) in METRICS.iter().enumerate() {
                // A repeated step id in one rank: the first step counts.
                if rows[k][j].is_none() {
                    rows[k][j] = Some(field(s)).filter(|v| v.is_finite());
                }
            }
        }
        for (k, row) in rows.into_iter().enumerate() {
            m[k].push(row);
        }
    }
    let [service_ms, underfeed_ratio, device_busy_union_ms, internal_bubble_total_ms, bubble_count] =
        m;
    Matrices {
        step_ids: ids.into_iter().map(String::from).collect(),
        service_ms,
        underfeed_ratio,
        device_busy_union_ms,
        internal_bubble_total_ms,
        bubble_count,
    }
}

fn metric_rows(m: &Matrices, k: usize) -> &[Vec<Option<f64>>] {
    match k {
        0 => &m.service_ms,
        1 => &m.underfeed_ratio,
        2 => &m.device_busy_union_ms,
        3 => &m.internal_bubble_total_ms,
        _ => &m.bubble_count,
    }
}

/// Per role, metric and step: [`robust_z`] over the ranks with a value; an outlier when
/// z > `slow_rank_z` (3, anomaly.md §13.4) and at least 2 ranks have the step. Sorted by z
/// descending (infinite first), then metric, step, rank; the first [`MAX_OUTLIERS`] kept.
fn outliers(ranks: &[RankSummary], m: &Matrices) -> (Vec<Outlier>, u64) {
    let cfg = AnomalyConfig::spec_defaults();
    let mut found: Vec<(f64, usize, usize, usize, f64, f64)> = Vec::new();
    for idx in role_groups(ranks).values() {
        for k in 0..METRICS.len() {
            let rows = metric_rows(m, k);
            for j in 0..m.step_ids.len() {
                let have: Vec<(usize, f64)> = idx
                    .iter()
                    .filter_map(|&i| rows[i][j].map(|v| (i, v)))
                    .collect();
                if have.len() < 2 {
                    continue;
                }
                let xs: Vec<f64> = have.iter().map(|p| p.1).collect();
                let (med, z) = robust_z(&xs);
                for ((i, v), z) in have.into_iter().zip(z) {
                    if z > cfg.slow_rank_z {
                        found.push((z, k, j, i, v, med));
                    }
                }
            }
        }
    }
    crate::base::sort::sort_by(&mut found, |a, b| {
        b.0.total_cmp(&a.0)
            .then(a.1.cmp(&b.1))
            .then(a.2.cmp(&b.2))
            .then(a.3.cmp(&b.3))
    });
    let dropped = found.len().saturating_sub(MAX_OUTLIERS) as u64;
    found.truncate(MAX_OUTLIERS);
    let out = found
        .into_iter()
        .map(|(z, k, j, i, value, median)| Outlier {
            metric: METRICS[k].0.to_string(),
            rank_index: i as u64,
            rank_id: ranks[i].rank_id,
            role: ranks[i].role.clone(),
            step_id: m.step_ids[j].clone(),
            value,
            median,
            robust_z: z.is_finite().then_some(z),
        })
        .collect();
    (out, dropped)
}

#[cfg(test)]
#[path = "reduce_tests.rs"]
mod tests;
