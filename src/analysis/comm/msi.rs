//! MindStudio Insight's "slow rank list" (docs/rules/communication.md §3): per step and
//! group, the rank that waited most (the largest `Total Op Info` elapse) is the fast rank, and each of the three ranks with the smallest elapse is slow when it spent at
//! least 10 % less time in the group's collectives than the fast rank, with the ops where the
//! difference is largest. A different rule from msprof-analyze's Dixon / 3σ slow ranks
//! ([`super::slow`]): it compares totals, not one op at a time, and so answers on 2–4 ranks
//! where Dixon's test never can.

use std::collections::BTreeMap;

use super::time::TimeSummaryRow;
use super::{CommOptions, GroupRow};
use crate::model::comm::RankComm;

/// `slowRankCnt`: the ranks with the smallest time that are tested.
pub const CANDIDATES: usize = 3;
/// `thresholdForSlowRank`: slow when the fast rank's time exceeds a rank's by this share of it.
pub const THRESHOLD: f64 = 0.1;
/// `slowRankOpCount`: ops listed per slow rank.
pub const TOP_OPS: usize = 3;

/// One slow rank of one (step, group).
#[derive(Clone, Debug, PartialEq)]
pub struct MsiSlowRank {
    /// Step key.
    pub step: String,
    /// Group hash.
    pub group: String,
    /// The rank with the largest communication time (it waited most).
    pub fast_rank: i64,
    /// Its time: `Σ elapse × 1000` rounded to 3 decimals (µs).
    pub fast_us: f64,
    /// The slow rank.
    pub rank: i64,
    /// Its time (µs).
    pub time_us: f64,
    /// `fast_us − time_us`, rounded to 3 decimals (µs).
    pub diff_us: f64,
    /// `0.1 × fast_us`: the least difference that makes a rank slow (µs, shown to 3 decimals).
    pub threshold_us: f64,
    /// Up to 3 ops of both ranks by name, `fast elapse − its elapse` (µs, 3 decimals)
    /// descending, stopping before the first difference ≤ 0.
    pub ops: Vec<(String, f64)>,
}

/// `ROUND(x, 3)` on the exact binary value (ties to even).
fn round3(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    format!("{x:.3}").parse().unwrap_or(x)
}

/// True when an op name keeps the group out of the rule (point-to-point and all-to-all-v ops:
/// their ranks move different amounts by design).
fn excluded_op(op: &str) -> bool {
    let l = op.to_ascii_lowercase();
    ["send", "receive", "recv", "all2allv", "alltoallv"]
        .iter()
        .any(|w| l.contains(w))
}

/// The slow rank list of every (step, group) of `time` (the time summary), the ops of `ranks`
/// (ascending, as the report holds them) and the groups' metadata names (`pp` groups are left
/// out). Rows by step, group (as `time` orders them), then slow rank from the smallest time.
pub fn slow_rank_list(
    time: &[TimeSummaryRow],
    ranks: &[&RankComm],
    groups: &[GroupRow],
    opts: &CommOptions,
) -> Vec<MsiSlowRank> {
    // Per (step, group): per rank Σ elapse (ms) of its Total Op Info rows, in first-seen order.
    let mut order: Vec<(&str, &str)> = Vec::new();
    let mut totals: BTreeMap<(&str, &str), BTreeMap<i64, f64>> = BTreeMap::new();
    for t in time {
        let k = (t.step.as_str(), t.group.as_str());
        let per = totals.entry(k).or_insert_with(|| {
            order.push(k);
            BTreeMap::new()
        });
        *per.entry(t.rank).or_insert(0.0) += t.elapse_ms;
    }
    // Per (step, group, rank): op name → elapse (ms), first occurrence kept; and the groups
    // holding an excluded op.
    let mut op_ms: BTreeMap<(&str, &str, i64), BTreeMap<&str, f64>> = BTreeMap::new();
    let mut excluded: std::collections::BTreeSet<(&str, &str)> = Default::default();
    for r in ranks {
        for o in r.ops.iter().filter(|o| opts.selects(&o.step)) {
            let k = (o.step.as_str(), o.group.as_str());
            if excluded_op(&o.op) {
                excluded.insert(k);
            }
            op_ms
                .entry((k.0, k.1, r.rank))
                .or_default()
                .entry(o.op.as_str())
                .or_insert(o.elapse_ms);
        }
    }
    let pp: std::collections::BTreeSet<&str> = groups
        .iter()
        .filter(|g| g.name == "pp")
        .map(|g| g.group.as_str())
        .collect();
    let mut out = Vec::new();
    for k in order {
        if excluded.contains(&k) || pp.contains(k.1) {
            continue;
        }
        let mut v: Vec<(i64, f64)> = totals[&k]
            .iter()
            .map(|(&r, &ms)| (r, round3(ms * 1000.0)))
            .collect();
        if v.len() < 2 {
            continue;
        }
        // Descending time; ties by the rank id's text ascending (MSI sorts rank id strings).
        crate::base::sort::sort_by(&mut v, |a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| a.0.to_string().cmp(&b.0.to_string()))
        });
        let (fast_rank, fast_us) = v[0];
        if fast_us <= 0.0 {
            continue; // every rank spent nothing: no rank is slower than another
        }
        let threshold_us = THRESHOLD * fast_us;
        let fast_ops = op_ms.get(&(k.0, k.1, fast_rank));
        for &(rank, time_us) in v.iter().rev().take(CANDIDATES) {
            if rank == fast_rank || fast_us - time_us < threshold_us {
                continue;
            }
            let mut ops: Vec<(String, f64)> = Vec::new();
            if let (Some(fast), Some(mine)) = (fast_ops, op_ms.get(&(k.0, k.1, rank))) {
                for (name, &ms) in mine {
                    if let Some(&f) = fast.get(name) {
                        ops.push((name.to_string(), round3(f * 1000.0 - ms * 1000.0)));
                    }
                }
            }
            crate::base::sort::sort_by(&mut ops, |a, b| b.1.total_cmp(&a.1));
            let keep = ops.iter().take_while(|o| o.1 > 0.0).count().min(TOP_OPS);
            ops.truncate(keep);
            out.push(MsiSlowRank {
                step: k.0.to_string(),
                group: k.1.to_string(),
                fast_rank,
                fast_us,
                rank,
                time_us,
                diff_us: round3(fast_us - time_us),
                threshold_us: round3(threshold_us),
                ops,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_and_exclusions() {
        assert_eq!(round3(2925.7200000000003), 2925.72);
        assert!(excluded_op("hcom_batchSendRecv__1_1_1"));
        assert!(excluded_op("hcom_alltoallv__1_1_1"));
        assert!(!excluded_op("hcom_allReduce__612_4_1"));
    }
}
