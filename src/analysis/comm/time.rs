//! The time summary and the bandwidth summary (communication.md §2.1, §2.2).
//!
//! Per (step, group, rank): the plain sums of the five times over the rank's ops of that group
//! (msprof-analyze's `Total Op Info@group`), ratios by [`compute_ratio`]; per transport the sums
//! of size and time, the merged packet histogram (merged on the size text) and the bandwidth
//! `compute_ratio(size, time)`. Sums follow msprof-analyze's order: op keys in order of first
//! appearance (ranks ascending, then file order), each rank over its own ops in that order.

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use super::round::{compute_ratio, round4};
use super::CommOptions;
use crate::base::sort::sort_by_i64_key;
use crate::base::Problem;
use crate::model::comm::{PacketBin, RankComm, Section};

/// One `Total Op Info@group` of one rank.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeSummaryRow {
    /// Step key (`step13`).
    pub step: String,
    /// Group hash.
    pub group: String,
    /// Ranks having ops or links of the group in that section (ascending): msprof-analyze's
    /// rank-set key (shared by the group's rows: never copied per rank).
    pub rank_set: Arc<[i64]>,
    /// The rank.
    pub rank: i64,
    /// Ops summed.
    pub n_ops: usize,
    /// Σ Elapse (ms).
    pub elapse_ms: f64,
    /// Σ Transit (ms).
    pub transit_ms: f64,
    /// Σ Wait (ms).
    pub wait_ms: f64,
    /// Σ Synchronization (ms).
    pub sync_ms: f64,
    /// Σ Idle (ms).
    pub idle_ms: f64,
    /// `compute_ratio(wait, wait + transit)`.
    pub wait_ratio: f64,
    /// `compute_ratio(sync, sync + transit)`.
    pub sync_ratio: f64,
}

/// One transport of one `Total Op Info@group` of one rank.
#[derive(Clone, Debug, PartialEq)]
pub struct BandwidthRow {
    /// Step key.
    pub step: String,
    /// Group hash.
    pub group: String,
    /// The rank.
    pub rank: i64,
    /// `HCCS`, `RDMA`, … as written (`SDMA` is the on-chip aggregate of HCCS + PCIE + SIO).
    pub transport: String,
    /// Σ size (decimal MB).
    pub size_mb: f64,
    /// Σ time (ms).
    pub time_ms: f64,
    /// `compute_ratio(size, time)` (GB/s = MB/ms).
    pub bandwidth_gbps: f64,
    /// Computed by proflens from the merged histogram (communication.md §2.2): packets larger
    /// than the transport's threshold / all packets; `None` for `SDMA` and unknown transports.
    pub large_packet_ratio: Option<f64>,
    /// The merged histogram, in order of first appearance.
    pub bins: Vec<PacketBin>,
}

/// The large-packet threshold of a transport (MB): RDMA 0.5, HCCS/PCIE/SIO 32.
pub fn large_packet_threshold(transport: &str) -> Option<f64> {
    match transport {
        "RDMA" => Some(0.5),
        "HCCS" | "PCIE" | "SIO" => Some(32.0),
        _ => None,
    }
}

fn lpr(transport: &str, bins: &[PacketBin]) -> Option<f64> {
    let thr = large_packet_threshold(transport)?;
    // Sums from +0.0 as Python's do (Rust's float `sum` of nothing is −0.0).
    let all = bins.iter().fold(0.0, |a, b| a + b.count);
    let big = bins
        .iter()
        .filter(|b| b.size_key.parse::<f64>().is_ok_and(|s| s > thr))
        .fold(0.0, |a, b| a + b.count);
    Some(if all == 0.0 { 0.0 } else { round4(big / all) })
}

/// The time and bandwidth summaries of `ranks` (sorted ascending), with data checks.
pub fn summarize(
    ranks: &[&RankComm],
    opts: &CommOptions,
) -> (Vec<TimeSummaryRow>, Vec<BandwidthRow>, Vec<Problem>) {
    // Rank sets per (section, group), over both files and every step, shared by the rows.
    let mut seen: HashMap<(Option<Section>, &str), Vec<i64>> = HashMap::default();
    for r in ranks {
        let ops = r.ops.iter().map(|o| (o.section, o.group.as_str()));
        let links = r.links.iter().map(|l| (l.section, l.group.as_str()));
        for k in ops.chain(links) {
            let v = seen.entry(k).or_default();
            if v.last() != Some(&r.rank) {
                v.push(r.rank);
            }
        }
    }
    let sets: HashMap<(Option<Section>, &str), Arc<[i64]>> = seen
        .into_iter()
        .map(|(k, mut v)| {
            v.sort_unstable();
            v.dedup();
            (k, v.into())
        })
        .collect();
    // Op key order per step: first appearance over ranks ascending, then file order.
    let mut key_order: HashMap<(&str, Option<Section>, &str, &str), usize> = HashMap::default();
    for r in ranks {
        for o in &r.ops {
            let n = key_order.len();
            key_order
                .entry((o.step.as_str(), o.section, o.op.as_str(), o.group.as_str()))
                .or_insert(n);
        }
    }
    let mut times = Vec::new();
    let mut bands = Vec::new();
    for r in ranks {
        let mut idx: Vec<usize> = (0..r.ops.len())
            .filter(|&i| opts.selects(&r.ops[i].step))
            .collect();
        let ord = |i: &usize| {
            let o = &r.ops[*i];
            key_order[&(o.step.as_str(), o.section, o.op.as_str(), o.group.as_str())]
        };
        sort_by_i64_key(&mut idx, |i| ord(&i) as i64);
        let mut by_op: Vec<Vec<usize>> = vec![Vec::new(); r.ops.len()];
        for (bi, b) in r.bands.iter().enumerate() {
            if let Some(v) = by_op.get_mut(b.op as usize) {
                v.push(bi);
            }
        }
        // (step, group) in order of first op; rows sorted at the end.
        let mut acc: Vec<((&str, &str), TimeSummaryRow, Vec<BandwidthRow>)> = Vec::new();
        for i in idx {
            let o = &r.ops[i];
            let k = (o.step.as_str(), o.group.as_str());
            let at = match acc.iter().position(|a| a.0 == k) {
                Some(p) => p,
                None => {
                    let set = sets
                        .get(&(o.section, o.group.as_str()))
                        .cloned()
                        .unwrap_or_else(|| Arc::from(Vec::new()));
                    acc.push((
                        k,
                        TimeSummaryRow {
                            step: o.step.clone(),
                            group: o.group.clone(),
                            rank_set: set,
                            rank: r.rank,
                            n_ops: 0,
                            elapse_ms: 0.0,
                            transit_ms: 0.0,
                            wait_ms: 0.0,
                            sync_ms: 0.0,
                            idle_ms: 0.0,
                            wait_ratio: 0.0,
                            sync_ratio: 0.0,
                        },
                        Vec::new(),
                    ));
                    acc.len() - 1
                }
            };
            let (_, t, bw) = &mut acc[at];
            t.n_ops += 1;
            t.elapse_ms += o.elapse_ms;
            t.transit_ms += o.transit_ms;
            t.wait_ms += o.wait_ms;
            t.sync_ms += o.sync_ms;
            t.idle_ms += o.idle_ms;
            for &bi in &by_op[i] {
                let b = &r.bands[bi];
                let row = match bw.iter().position(|x| x.transport == b.transport) {
                    Some(p) => &mut bw[p],
                    None => {
                        bw.push(BandwidthRow {
                            step: o.step.clone(),
                            group: o.group.clone(),
                            rank: r.rank,
                            transport: b.transport.clone(),
                            size_mb: 0.0,
                            time_ms: 0.0,
                            bandwidth_gbps: 0.0,
                            large_packet_ratio: None,
                            bins: Vec::new(),
                        });
                        bw.last_mut().expect("pushed")
                    }
                };
                row.size_mb += b.size_mb;
                row.time_ms += b.time_ms;
                for bin in &b.bins {
                    match row.bins.iter_mut().find(|x| x.size_key == bin.size_key) {
                        Some(x) => {
                            x.count += bin.count;
                            x.time_ms += bin.time_ms;
                        }
                        None => row.bins.push(bin.clone()),
                    }
                }
            }
        }
        for (_, mut t, bw) in acc {
            t.wait_ratio = compute_ratio(t.wait_ms, t.wait_ms + t.transit_ms);
            t.sync_ratio = compute_ratio(t.sync_ms, t.sync_ms + t.transit_ms);
            times.push(t);
            for mut b in bw {
                b.bandwidth_gbps = compute_ratio(b.size_mb, b.time_ms);
                b.large_packet_ratio = lpr(&b.transport, &b.bins);
                bands.push(b);
            }
        }
    }
    let step_ord = |s: &str| step_order(s);
    crate::base::sort::sort_by(&mut times, |a, b| {
        (step_ord(&a.step), a.rank, &a.group).cmp(&(step_ord(&b.step), b.rank, &b.group))
    });
    crate::base::sort::sort_by(&mut bands, |a, b| {
        (step_ord(&a.step), a.rank, &a.group).cmp(&(step_ord(&b.step), b.rank, &b.group))
    });
    (times, bands, Vec::new())
}

/// Step keys in numeric order (`step2` < `step13`), `step` first.
pub fn step_order(key: &str) -> (u64, String) {
    let n = key
        .strip_prefix("step")
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    (n, key.to_string())
}

/// One rank's totals over every op of `rc` (all steps, groups and types; the per-rank level of
/// docs/rules/communication.md §2.1): `(n_ops, elapse, transit, wait, sync, idle, wait ratio,
/// sync ratio)`, times in ms.
pub fn rank_totals(rc: &RankComm) -> (u64, [f64; 5], f64, f64) {
    let mut t = [0.0f64; 5];
    for o in &rc.ops {
        t[0] += o.elapse_ms;
        t[1] += o.transit_ms;
        t[2] += o.wait_ms;
        t[3] += o.sync_ms;
        t[4] += o.idle_ms;
    }
    let wait_ratio = compute_ratio(t[2], t[2] + t[1]);
    let sync_ratio = compute_ratio(t[3], t[3] + t[1]);
    (rc.ops.len() as u64, t, wait_ratio, sync_ratio)
}
