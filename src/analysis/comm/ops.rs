//! Per-op duration across ranks: who arrived last (docs/rules/communication.md §8, a proflens
//! extension). Pure; reads only the per-rank op rows, changes no other table.
//!
//! An HCCL op of one step and group (the same key `(step, "op@group")` on every rank,
//! communication.md §1.6) ends together on its ranks, so a rank that arrives early waits and
//! shows a long elapse, and the rank that arrives **last** shows the **shortest** elapse (the
//! same reading as the slow-rank rule, §2.5: "votes for the rank with the shortest op time").
//! Per op:
//!
//! * `last_rank` / `last_elapse_ms`: the rank with the smallest `Elapse Time(ms)` (ties: the
//!   lowest rank) and its elapse;
//! * `first_rank` / `max_elapse_ms`: the rank with the largest elapse (ties: lowest rank);
//! * `spread_ms = max − min elapse`: about how long the first rank waited for the last;
//! * `mean_elapse_ms`: the plain mean over the ranks that have the op;
//! * `start_spread_us`: latest minus earliest `Start Timestamp(us)` when every rank has one
//!   (clocks of different hosts may differ; shown, never used to pick `last_rank`).
//!
//! Ranks are visited in ascending order, ops in first appearance (step, group, op) order; an op
//! seen on one rank only gets a row with a spread of 0 (`n_ranks = 1`).

use rustc_hash::FxHashMap as HashMap;

use super::CommOptions;
use crate::model::comm::RankComm;

/// One op across the ranks that have it.
#[derive(Clone, Debug, PartialEq)]
pub struct OpArrival {
    /// Step key.
    pub step: String,
    /// Group hash.
    pub group: String,
    /// Op name.
    pub op: String,
    /// Ranks having the op.
    pub n_ranks: usize,
    /// The rank that arrived last (shortest elapse).
    pub last_rank: i64,
    /// Its elapse (ms).
    pub last_elapse_ms: f64,
    /// The rank that waited most (longest elapse).
    pub first_rank: i64,
    /// Its elapse (ms).
    pub max_elapse_ms: f64,
    /// Mean elapse over the ranks (ms).
    pub mean_elapse_ms: f64,
    /// `max_elapse_ms − last_elapse_ms`.
    pub spread_ms: f64,
    /// Latest − earliest start (µs) when every rank has a start.
    pub start_spread_us: Option<f64>,
}

struct Acc {
    n: usize,
    sum: f64,
    min: (f64, i64),
    max: (f64, i64),
    start: Option<(f64, f64)>,
    all_start: bool,
}

/// The per-op arrival rows of `ranks` (ascending rank order) for the steps `opts` selects.
pub fn arrivals(ranks: &[&RankComm], opts: &CommOptions) -> Vec<OpArrival> {
    let mut order: Vec<(&str, &str, &str)> = Vec::new();
    let mut acc: HashMap<(&str, &str, &str), Acc> = HashMap::default();
    for r in ranks {
        for o in r.ops.iter().filter(|o| opts.selects(&o.step)) {
            let k = (o.step.as_str(), o.group.as_str(), o.op.as_str());
            let e = o.elapse_ms;
            let a = acc.entry(k).or_insert_with(|| {
                order.push(k);
                Acc {
                    n: 0,
                    sum: 0.0,
                    min: (e, r.rank),
                    max: (e, r.rank),
                    start: None,
                    all_start: true,
                }
            });
            a.n += 1;
            a.sum += e;
            // Strict comparisons keep the lowest rank on ties (ranks ascend).
            if e < a.min.0 {
                a.min = (e, r.rank);
            }
            if e > a.max.0 {
                a.max = (e, r.rank);
            }
            match o.start_us {
                Some(s) => {
                    a.start = Some(match a.start {
                        None => (s, s),
                        Some((lo, hi)) => (lo.min(s), hi.max(s)),
                    })
                }
                None => a.all_start = false,
            }
        }
    }
    order
        .into_iter()
        .map(|k| {
            let a = &acc[&k];
            OpArrival {
                step: k.0.to_string(),
                group: k.1.to_string(),
                op: k.2.to_string(),
                n_ranks: a.n,
                last_rank: a.min.1,
                last_elapse_ms: a.min.0,
                first_rank: a.max.1,
                max_elapse_ms: a.max.0,
                mean_elapse_ms: a.sum / a.n as f64,
                spread_ms: a.max.0 - a.min.0,
                start_spread_us: a.start.filter(|_| a.all_start).map(|(lo, hi)| hi - lo),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::comm::CommTimeRow;

    fn op(step: &str, name: &str, elapse: f64, start: Option<f64>) -> CommTimeRow {
        CommTimeRow {
            step: step.into(),
            op: name.into(),
            group: "g".into(),
            elapse_ms: elapse,
            start_us: start,
            ..Default::default()
        }
    }

    fn rank(id: i64, ops: Vec<CommTimeRow>) -> RankComm {
        RankComm {
            rank: id,
            ops,
            has_time: true,
            ..Default::default()
        }
    }

    /// Hand-checked: three ranks of one allreduce; rank 3 has the shortest elapse (arrived
    /// last), rank 1 the longest; spread 2.5 − 0.5 = 2.0 ms, mean (1.0 + 2.5 + 0.5) / 3 =
    /// 1.3333… ms, starts 100, 90, 102.5 µs → spread 12.5 µs. An op on rank 0 only: n 1,
    /// spread 0, both ends rank 0. A missing start leaves `start_spread_us` empty.
    #[test]
    fn the_last_rank_has_the_shortest_elapse() {
        let r0 = rank(
            0,
            vec![
                op("step1", "hcom_allReduce__1_1", 1.0, Some(100.0)),
                op("step1", "only0", 4.0, Some(1.0)),
            ],
        );
        let r1 = rank(
            1,
            vec![
                op("step1", "hcom_allReduce__1_1", 2.5, Some(90.0)),
                op("step2", "late", 1.0, None),
            ],
        );
        let r3 = rank(
            3,
            vec![
                op("step1", "hcom_allReduce__1_1", 0.5, Some(102.5)),
                op("step2", "late", 1.0, Some(5.0)),
            ],
        );
        let rows = arrivals(&[&r0, &r1, &r3], &CommOptions::default());
        assert_eq!(rows.len(), 3);
        let a = &rows[0];
        assert_eq!(a.op, "hcom_allReduce__1_1");
        assert_eq!((a.n_ranks, a.last_rank, a.first_rank), (3, 3, 1));
        assert_eq!(
            (a.last_elapse_ms, a.max_elapse_ms, a.spread_ms),
            (0.5, 2.5, 2.0)
        );
        assert_eq!(a.mean_elapse_ms, 4.0 / 3.0);
        assert_eq!(a.start_spread_us, Some(12.5));
        let b = &rows[1];
        assert_eq!(
            (b.op.as_str(), b.n_ranks, b.last_rank, b.first_rank),
            ("only0", 1, 0, 0)
        );
        assert_eq!(b.spread_ms, 0.0);
        // Equal elapses: the lowest rank on both ends; one start missing: no start spread.
        let c = &rows[2];
        assert_eq!(
            (c.step.as_str(), c.last_rank, c.first_rank),
            ("step2", 1, 1)
        );
        assert_eq!(c.start_spread_us, None);
        let only2 = arrivals(
            &[&r0, &r1, &r3],
            &CommOptions {
                step: Some("2".into()),
                ..Default::default()
            },
        );
        assert_eq!(only2.len(), 1);
    }
}
