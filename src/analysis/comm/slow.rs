//! Slow ranks and slow links (communication.md §2.4, §2.5), from the ranks' op tables.
//!
//! * Slow rank: per (group, op name) over the whole capture, the op's times on every rank;
//!   Dixon's test at 99.5 % for n ≤ 100, 3σ above; the rank with the **shortest** time is the
//!   one that arrived last (communication.md §2.5.1), one vote per op.
//! * Slow link: per (group, op name) the minimum time and the number of ranks; grouped by
//!   (op type, data size, ranks), a group is flagged when a value lies beyond mean ± 3σ
//!   (population σ) (communication.md §2.4.1).

use super::CommOptions;
use crate::model::comm::RankComm;

/// msprof-analyze's one-sided Dixon table at 99.5 % (n = 3 … 100).
pub const DIXON_TABLE_995: [f64; 98] = [
    0.994, 0.920, 0.823, 0.744, 0.680, 0.723, 0.676, 0.638, 0.707, 0.675, 0.649, 0.672, 0.649,
    0.629, 0.611, 0.595, 0.580, 0.568, 0.556, 0.545, 0.536, 0.526, 0.519, 0.510, 0.503, 0.496,
    0.489, 0.484, 0.478, 0.473, 0.468, 0.463, 0.458, 0.454, 0.450, 0.446, 0.442, 0.439, 0.435,
    0.432, 0.429, 0.425, 0.423, 0.420, 0.417, 0.414, 0.412, 0.409, 0.407, 0.405, 0.402, 0.400,
    0.398, 0.396, 0.394, 0.392, 0.391, 0.388, 0.387, 0.385, 0.383, 0.382, 0.380, 0.379, 0.377,
    0.376, 0.374, 0.372, 0.371, 0.370, 0.368, 0.368, 0.366, 0.365, 0.364, 0.363, 0.361, 0.360,
    0.359, 0.358, 0.356, 0.356, 0.355, 0.353, 0.352, 0.352, 0.351, 0.350, 0.349, 0.348, 0.347,
    0.346, 0.345, 0.344, 0.344, 0.343, 0.341, 0.341,
];

/// Largest n tested with Dixon's test; above, 3σ.
pub const MAX_DIXON_NUM: usize = 100;
/// Slow-link groups kept (`--top_num` default).
pub const TOP_NUM: usize = 15;

/// The evidence of one test: which test, its statistic and threshold.
#[derive(Clone, Debug, PartialEq)]
pub struct Evidence {
    /// `dixon` or `3sigma`.
    pub test: &'static str,
    /// Dixon's r, or the mean − 3σ bound.
    pub statistic: f64,
    /// The table value, or the mean.
    pub threshold: f64,
}

/// Dixon's r and the table value of `times` (communication.md §2.5.1); `None` when the test
/// does not apply (n ≤ 2, n > 100, ≤ 3 distinct values).
pub fn dixon_r(times: &[f64]) -> Option<(f64, f64)> {
    let n = times.len();
    if n <= 2 || n > MAX_DIXON_NUM {
        return None;
    }
    let mut x = times.to_vec();
    crate::base::sort::sort_by(&mut x, f64::total_cmp);
    let mut distinct = x.clone();
    distinct.dedup();
    if distinct.len() <= 3 {
        return None;
    }
    let (num, den) = match n {
        ..=7 => (x[1] - x[0], x[n - 1] - x[0]),
        8..=10 => (x[1] - x[0], x[n - 2] - x[0]),
        11..=13 => (x[2] - x[0], x[n - 2] - x[0]),
        _ => (x[2] - x[0], x[n - 3] - x[0]),
    };
    let r = if den == 0.0 { 0.0 } else { num / den };
    Some((r, DIXON_TABLE_995[n - 3]))
}

fn first_min(times: &[f64]) -> usize {
    let mut at = 0;
    for (i, &t) in times.iter().enumerate() {
        if t < times[at] {
            at = i;
        }
    }
    at
}

/// `judge_dixon`: the index of the slow row (the first minimum) when r exceeds the table.
pub fn judge_dixon(times: &[f64]) -> Vec<usize> {
    match dixon_r(times) {
        Some((r, t)) if r > t => vec![first_min(times)],
        _ => Vec::new(),
    }
}

fn mean_pstd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = pairwise_sum(v) / n;
    (mean, (squared_deviations(v, mean) / n).sqrt())
}

/// Σ (x − mean)² of `v`, summed as numpy does.
fn squared_deviations(v: &[f64], mean: f64) -> f64 {
    let sq: Vec<f64> = v.iter().map(|x| (x - mean) * (x - mean)).collect();
    pairwise_sum(&sq)
}

/// The sum of `a` as numpy's `add.reduce` forms it on a contiguous float64 array (pairwise
/// summation: below 8 values in order; up to 128 in eight interleaved partial sums combined
/// as `((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))`, then the rest in order; above, the two halves
/// split at a multiple of 8). msprof-analyze's means and standard deviations are numpy's and
/// pandas', so the same order of additions gives the same last bits (communication.md §2.4.1).
pub fn pairwise_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        return a.iter().fold(0.0, |s, x| s + x);
    }
    if n <= 128 {
        let mut r = [a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]];
        let full = n - n % 8;
        for chunk in a[8..full].chunks_exact(8) {
            for (acc, x) in r.iter_mut().zip(chunk) {
                *acc += x;
            }
        }
        let head = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        return a[full..].iter().fold(head, |s, x| s + x);
    }
    let mut half = n / 2;
    half -= half % 8;
    pairwise_sum(&a[..half]) + pairwise_sum(&a[half..])
}

/// `judge_norm` (3σ, population σ): every row below mean − 3σ; the first minimum too when the
/// maximum is above mean + 3σ.
pub fn judge_norm(times: &[f64]) -> Vec<usize> {
    if times.is_empty() {
        return Vec::new();
    }
    let (mean, sd) = mean_pstd(times);
    let mut out: Vec<usize> = (0..times.len())
        .filter(|&i| times[i] < mean - 3.0 * sd)
        .collect();
    let max = times.iter().copied().fold(f64::MIN, f64::max);
    if max > mean + 3.0 * sd {
        let m = first_min(times);
        if !out.contains(&m) {
            out.push(m);
        }
    }
    out
}

/// `judge_slow_rank`: Dixon for n ≤ 100, else 3σ; with the evidence.
pub fn judge_slow_rank(times: &[f64]) -> (Vec<usize>, Option<Evidence>) {
    if times.len() <= MAX_DIXON_NUM {
        match dixon_r(times) {
            Some((r, t)) => {
                let ev = Evidence {
                    test: "dixon",
                    statistic: r,
                    threshold: t,
                };
                (
                    if r > t {
                        vec![first_min(times)]
                    } else {
                        Vec::new()
                    },
                    Some(ev),
                )
            }
            None => (Vec::new(), None),
        }
    } else {
        let (mean, sd) = mean_pstd(times);
        let ev = Evidence {
            test: "3sigma",
            statistic: mean - 3.0 * sd,
            threshold: mean,
        };
        (judge_norm(times), Some(ev))
    }
}

/// One slow rank of one op.
#[derive(Clone, Debug, PartialEq)]
pub struct SlowRankRow {
    /// The slow rank (shortest op time: arrived last).
    pub rank: i64,
    /// Group hash.
    pub group: String,
    /// Op name.
    pub op: String,
    /// Ranks (rows) tested.
    pub n: usize,
    /// The test and its numbers.
    pub evidence: Evidence,
    /// The slow rank's time (µs) and the op's times' mean (µs).
    pub time_us: f64,
    /// Mean of the op's times (µs).
    pub mean_us: f64,
    /// Earliest start of the slow rank's rows (µs).
    pub start_us: f64,
}

/// One row of the slow-rank input (communication.md §2.5.2).
#[derive(Clone, Debug, PartialEq)]
pub struct OpTimeRow {
    /// The rank.
    pub rank: i64,
    /// Group hash.
    pub group: String,
    /// Op name.
    pub op: String,
    /// Start (µs).
    pub start_us: f64,
    /// Elapse (µs).
    pub time_us: f64,
}

/// The slow-rank rows of a set of op rows (ranks ascending, then file order); also returns
/// how many ops were tested.
pub fn slow_ranks(rows: &[OpTimeRow]) -> (Vec<SlowRankRow>, usize) {
    use rustc_hash::FxHashMap as HashMap;
    let kept: Vec<&OpTimeRow> = rows
        .iter()
        .filter(|r| !r.op.contains("send") && !r.op.contains("receive"))
        .collect();
    // Groups whose ops do not all occur the same number of times are dropped whole.
    let mut counts: HashMap<(&str, &str), usize> = HashMap::default();
    for r in &kept {
        *counts.entry((r.group.as_str(), r.op.as_str())).or_default() += 1;
    }
    let mut per_group: HashMap<&str, Vec<usize>> = HashMap::default();
    for ((g, _), c) in &counts {
        per_group.entry(g).or_default().push(*c);
    }
    let uneven = |g: &str| per_group[g].iter().any(|&c| c != per_group[g][0]);
    let mut order: Vec<(&str, &str)> = Vec::new();
    let mut by_op: HashMap<(&str, &str), Vec<&OpTimeRow>> = HashMap::default();
    for r in &kept {
        if uneven(r.group.as_str()) {
            continue;
        }
        let k = (r.group.as_str(), r.op.as_str());
        by_op
            .entry(k)
            .or_insert_with(|| {
                order.push(k);
                Vec::new()
            })
            .push(r);
    }
    let mut out = Vec::new();
    for k in &order {
        let rs = &by_op[k];
        let times: Vec<f64> = rs.iter().map(|r| r.time_us).collect();
        let (slow, ev) = judge_slow_rank(&times);
        let Some(ev) = ev else { continue };
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        for i in slow {
            out.push(SlowRankRow {
                rank: rs[i].rank,
                group: k.0.to_string(),
                op: k.1.to_string(),
                n: times.len(),
                evidence: ev.clone(),
                time_us: times[i],
                mean_us: mean,
                start_us: rs
                    .iter()
                    .filter(|r| r.rank == rs[i].rank)
                    .map(|r| r.start_us)
                    .fold(f64::INFINITY, f64::min),
            });
        }
    }
    crate::base::sort::sort_by(&mut out, |a, b| a.start_us.total_cmp(&b.start_us));
    (out, order.len())
}

/// The slow-rank input of `ranks` (ascending) and the slow ranks.
pub fn slow_ranks_of(ranks: &[&RankComm], opts: &CommOptions) -> (Vec<SlowRankRow>, usize) {
    let mut rows = Vec::new();
    for r in ranks {
        for o in r.ops.iter().filter(|o| opts.selects(&o.step)) {
            rows.push(OpTimeRow {
                rank: r.rank,
                group: o.group.clone(),
                op: o.op.clone(),
                start_us: o.start_us.unwrap_or(0.0),
                time_us: o.elapse_ms * 1000.0,
            });
        }
    }
    slow_ranks(&rows)
}

/// One row of the slow-link input (communication.md §2.4.1): one op on one rank.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkOpRow {
    /// The rank.
    pub rank: i64,
    /// Group hash (or id: 1:1).
    pub group: String,
    /// Op name.
    pub op: String,
    /// Op type: the name up to `__` plus `_` (`hcom_allReduce_`).
    pub op_type: String,
    /// Bytes moved (count × element size); `None` when unknown (row left out of step 2).
    pub data_size: Option<u64>,
    /// Elapse (ns).
    pub time_ns: i64,
}

/// One flagged slow-link group.
#[derive(Clone, Debug, PartialEq)]
pub struct SlowLinkRow {
    /// `"<opType><ranks>_<dataSize>"`.
    pub name: String,
    /// Rows, mean, sample std, min, Q1, median, Q3, max, sum of the per-op minimum times (ns).
    pub count: usize,
    /// Mean (ns).
    pub mean_ns: f64,
    /// Sample standard deviation (ns).
    pub std_ns: f64,
    /// Min (ns).
    pub min_ns: f64,
    /// First quartile (linear).
    pub q1_ns: f64,
    /// Median.
    pub median_ns: f64,
    /// Third quartile.
    pub q3_ns: f64,
    /// Max (ns).
    pub max_ns: f64,
    /// Sum (ns).
    pub sum_ns: f64,
    /// max(|max − mean|, |min − mean|) / std.
    pub offset_ratio: f64,
    /// Ops of the group that hold the extreme value (all their ranks, communication.md §7).
    pub ops: Vec<String>,
}

/// Linear quantile (numpy's default) of sorted `x`.
pub fn quantile(x: &[f64], q: f64) -> f64 {
    let pos = q * (x.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    x[lo] + (x[hi] - x[lo]) * (pos - lo as f64)
}

/// The flagged slow-link groups of `rows`, by offset ratio descending, at most `top`.
pub fn slow_links(rows: &[LinkOpRow], top: usize) -> Vec<SlowLinkRow> {
    use rustc_hash::FxHashMap as HashMap;
    // 1. per (group, op): min time and rank count, on every non send/receive row
    let mut per_op: HashMap<(&str, &str), (i64, usize)> = HashMap::default();
    for r in rows
        .iter()
        .filter(|r| !r.op.contains("send") && !r.op.contains("receive"))
    {
        let e = per_op
            .entry((r.group.as_str(), r.op.as_str()))
            .or_insert((i64::MAX, 0));
        e.0 = e.0.min(r.time_ns);
        e.1 += 1;
    }
    // 2. group every row by (op type, data size, ranks)
    let mut order: Vec<(&str, u64, usize)> = Vec::new();
    type GroupKey<'a> = (&'a str, u64, usize);
    let mut groups: HashMap<GroupKey, Vec<(f64, &str)>> = HashMap::default();
    for r in rows {
        let Some(size) = r.data_size else { continue };
        let (t, n) = per_op
            .get(&(r.group.as_str(), r.op.as_str()))
            .copied()
            .unwrap_or((0, 0));
        let k = (r.op_type.as_str(), size, n);
        groups
            .entry(k)
            .or_insert_with(|| {
                order.push(k);
                Vec::new()
            })
            .push((t as f64, r.op.as_str()));
    }
    let mut out = Vec::new();
    for k in order {
        let g = &groups[&k];
        let v: Vec<f64> = g.iter().map(|x| x.0).collect();
        let (mean, psd) = mean_pstd(&v);
        if psd == 0.0
            || !v
                .iter()
                .any(|&t| t > mean + 3.0 * psd || t < mean - 3.0 * psd)
        {
            continue;
        }
        let n = v.len() as f64;
        let std = (squared_deviations(&v, mean) / (n - 1.0)).sqrt();
        let mut s = v.clone();
        crate::base::sort::sort_by(&mut s, f64::total_cmp);
        let (min, max) = (s[0], s[s.len() - 1]);
        let far = if (max - mean).abs() >= (min - mean).abs() {
            max
        } else {
            min
        };
        let mut ops: Vec<String> = g
            .iter()
            .filter(|x| x.0 == far)
            .map(|x| x.1.to_string())
            .collect();
        ops.dedup();
        out.push(SlowLinkRow {
            name: format!("{}{}_{}", k.0, k.2, k.1),
            count: v.len(),
            mean_ns: mean,
            std_ns: std,
            min_ns: min,
            q1_ns: quantile(&s, 0.25),
            median_ns: quantile(&s, 0.5),
            q3_ns: quantile(&s, 0.75),
            max_ns: max,
            sum_ns: pairwise_sum(&v),
            offset_ratio: (max - mean).abs().max((min - mean).abs()) / std,
            ops,
        });
    }
    crate::base::sort::sort_by(&mut out, |a, b| b.offset_ratio.total_cmp(&a.offset_ratio));
    out.truncate(top);
    out
}

/// The op type of an HCCL op name: the name up to `__` plus `_` (`hcom_allReduce_`), the whole
/// name when it has no `__`.
pub fn op_type(op: &str) -> String {
    match op.split_once("__") {
        Some((t, _)) => format!("{t}_"),
        None => op.to_string(),
    }
}

/// The slow-link input of `ranks` (communication.md §2.4.2): one row per op of the time
/// table, its time `round(elapse ms × 1e6)` ns, its data size the rank's
/// [`RankComm::op_bytes`] of the op's name (`None` when the rank read no size source or the
/// op's element type has no size).
pub fn link_rows_of(ranks: &[&RankComm], opts: &CommOptions) -> Vec<LinkOpRow> {
    let mut out = Vec::new();
    for r in ranks {
        for o in r.ops.iter().filter(|o| opts.selects(&o.step)) {
            let op_type = op_type(&o.op);
            out.push(LinkOpRow {
                rank: r.rank,
                group: o.group.clone(),
                op: o.op.clone(),
                op_type,
                data_size: r.op_bytes.get(&o.op).copied(),
                time_ns: (o.elapse_ms * 1e6).round() as i64,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dixon_vectors_at_below_and_above_each_threshold() {
        for i in [6usize, 8, 12, 30] {
            let mut v: Vec<f64> = (0..i).map(|j| 100.0 + j as f64).collect();
            assert_eq!(
                judge_dixon(&v),
                Vec::<usize>::new(),
                "n = {i} without the 0"
            );
            v.push(0.0);
            assert_eq!(judge_dixon(&v), vec![i], "n = {}", i + 1);
        }
        assert!(judge_dixon(&[1.0, 2.0]).is_empty());
        assert!(judge_dixon(&[1.0, 2.0, 3.0, 3.0, 1.0]).is_empty());
        let (r, t) = dixon_r(&[100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 0.0]).unwrap();
        assert!((r - 0.95238).abs() < 1e-5 && t == 0.680);
        // At the threshold (strict >) no vote; above, a vote. n = 5, table 0.823:
        // sorted x = [0, a, 1.8, 1.9, 2] → r = a / 2.
        let at = [2.0 * 0.823, 1.8, 1.9, 2.0, 0.0];
        let (r, t) = dixon_r(&at).unwrap();
        assert_eq!(r, t);
        assert!(judge_dixon(&at).is_empty());
        let above = [1.0 + 0.7, 1.8, 1.9, 2.0, 0.0];
        assert!(dixon_r(&above).unwrap().0 > 0.823);
        assert_eq!(judge_dixon(&above), vec![4]);
        let below = [1.0, 1.8, 1.9, 2.0, 0.0];
        assert!(dixon_r(&below).unwrap().0 < 0.823);
        assert!(judge_dixon(&below).is_empty());
        // The n ranges of the ratio: 8..=10 uses x[n-2], 11..=13 x[2], 14.. x[n-3].
        assert_eq!(DIXON_TABLE_995[7 - 3], 0.680);
        assert_eq!(DIXON_TABLE_995[100 - 3], 0.341);
    }

    #[test]
    fn three_sigma_vectors() {
        assert!(judge_norm(&[10.0; 120]).is_empty());
        let mut v = vec![10.0; 120];
        v.push(0.0);
        assert_eq!(judge_norm(&v), vec![120]);
        // n > 100 goes to 3σ in judge_slow_rank
        let (slow, ev) = judge_slow_rank(&v);
        assert_eq!(slow, vec![120]);
        assert_eq!(ev.unwrap().test, "3sigma");
    }

    #[test]
    fn slow_rank_votes_for_the_shortest_time_and_drops_uneven_groups() {
        let row = |rank: i64, group: &str, op: &str, t: f64| OpTimeRow {
            rank,
            group: group.into(),
            op: op.into(),
            start_us: rank as f64,
            time_us: t,
        };
        let mut rows: Vec<OpTimeRow> = (0..7)
            .map(|r| row(r, "g", "hcom_allReduce__1_1_1", 100.0 + r as f64))
            .collect();
        rows[3].time_us = 0.0;
        rows.push(row(0, "g", "hcom_send__1_2_1", 1.0));
        let (out, tested) = slow_ranks(&rows);
        assert_eq!(tested, 1);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].rank, 3);
        assert_eq!(out[0].evidence.test, "dixon");
        // An op appearing a different number of times drops the whole group.
        rows.push(row(0, "g", "hcom_allGather__1_3_1", 5.0));
        assert_eq!(slow_ranks(&rows).1, 0);
    }

    #[test]
    fn slow_link_synthetic_vector() {
        // Rank by rank, each in op order (msprof-analyze's row order: one rank's table after
        // the other).
        let mut rows = Vec::new();
        for rank in 0..2 {
            for op in 0..12 {
                rows.push(LinkOpRow {
                    rank,
                    group: "g".into(),
                    op: format!("hcom_allReduce__1_{op}_1"),
                    op_type: "hcom_allReduce_".into(),
                    data_size: Some(1024),
                    time_ns: if op == 5 { 5000 } else { 1000 },
                });
            }
        }
        let out = slow_links(&rows, TOP_NUM);
        assert_eq!(out.len(), 1);
        let s = &out[0];
        assert_eq!(s.name, "hcom_allReduce_2_1024");
        assert_eq!(s.count, 24);
        // Exact: numpy's pairwise sums in msprof-analyze's row order (ranks, then ops).
        assert_eq!(s.mean_ns, 1333.3333333333333);
        assert_eq!(s.std_ns, 1129.3194051465598);
        assert_eq!(s.offset_ratio, 3.2467932897963596);
        assert_eq!(s.ops, ["hcom_allReduce__1_5_1"]);
        // 10 ops (20 rows): |z| ≤ (n−1)/√n < 3 with one outlier op of 2 rows → not flagged.
        let few: Vec<LinkOpRow> = rows
            .iter()
            .filter(|r| !r.op.ends_with("_10_1") && !r.op.ends_with("_11_1"))
            .cloned()
            .collect();
        assert!(slow_links(&few, TOP_NUM).is_empty());
        // Without a data size nothing is grouped.
        let none: Vec<LinkOpRow> = rows
            .iter()
            .cloned()
            .map(|mut r| {
                r.data_size = None;
                r
            })
            .collect();
        assert!(slow_links(&none, TOP_NUM).is_empty());
    }

    #[test]
    fn pairwise_sum_adds_in_numpys_order() {
        // Values whose sum depends on the order of additions; the expected sums are
        // numpy 2.4's `np.sum` of the same arrays.
        let v: Vec<f64> = (0..300)
            .map(|i| 0.1 * i as f64 + 1e-3 / (i + 1) as f64)
            .collect();
        assert_eq!(pairwise_sum(&v[..5]), 1.0022833333333332);
        assert_eq!(pairwise_sum(&v[..20]), 19.003597739657145);
        assert_eq!(pairwise_sum(&v), 4485.0062826638805); // in order: …663879
        assert_eq!(pairwise_sum(&[]), 0.0);
    }

    #[test]
    fn quantiles_and_stats_of_the_spec_vector() {
        let x = [1.5, 2.5, 3.5, 4.5];
        assert_eq!(quantile(&x, 0.25), 2.25);
        assert_eq!(quantile(&x, 0.5), 3.0);
        assert_eq!(quantile(&x, 0.75), 3.75);
    }
}
