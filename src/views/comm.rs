//! The Communication tab's payloads from a [`CommReport`] (docs/rules/communication.md §8):
//! the overview (every table but the matrix, with the same numbers as `comm.json`), and one
//! window of a matrix heatmap with its level of detail.
//!
//! Heatmap rules:
//! * **Axis.** A group's axis is its global ranks from the metadata together with every rank
//!   its links name (in any kind or step), ascending; the same axis for every kind and step
//!   of the group. A rank of the axis that the input does not hold is **missing**.
//! * **Level of detail.** A window of `span` axis positions a side is cut into blocks of
//!   `block = ⌈span / max_blocks⌉` positions a side; a block carries the **mean** of the links
//!   it holds with their min and max (the page colours it by the worst) and count, so 1024 × 1024 ranks are at most
//!   `max_blocks²` cells on the wire and on the canvas. With `block == 1` a cell is one link,
//!   with its size, time, bandwidth and transport.
//! * **Scale.** The smallest and largest value of the whole matrix (not of the window), so the
//!   colours do not change while zooming; self links (`src == dst`, `LOCAL` copies at memory
//!   bandwidth) are left out of it when other links exist, so a rank's 90 GB/s copy to itself
//!   does not darken every link between ranks (self cells take the scale's end colour).
//! * **Recovered links** (an end mapped from `parallel_group_info`, §2.3.2) are counted per
//!   block, so the page can mark them.

use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeSet;

use crate::analysis::comm::{CommReport, MatrixRow};
use crate::protocol::comm::{
    CommArrivalDto, CommBandDto, CommCollectiveDto, CommGroupDto, CommKindsDto, CommMatrixDto,
    CommMatrixQuery, CommMetric, CommMsiSlowRankDto, CommOverviewDto, CommSlowLinkDto,
    CommSlowRankDto, CommTimeDto,
};

/// The matrix rows of every `(step, group, kind)`: indices into `matrix` (`Total Op Info`)
/// then `matrix_by_kind` (`false` / `true`), in report order.
#[derive(Debug, Default)]
pub struct MatrixIndex {
    by_key: HashMap<(String, String, String), Vec<(bool, u32)>>,
    /// `(step, group)` → the kinds in first appearance order (`Total Op Info` first).
    kinds: Vec<((String, String), Vec<String>)>,
    /// Group → its axis (global ranks of its metadata and of its links), ascending.
    axes: HashMap<String, Vec<i64>>,
}

impl MatrixIndex {
    /// The index of `rep`'s matrices.
    pub fn of(rep: &CommReport) -> MatrixIndex {
        let mut ix = MatrixIndex::default();
        let mut kinds_at: HashMap<(String, String), usize> = HashMap::default();
        let mut axes: HashMap<&str, BTreeSet<i64>> = HashMap::default();
        for g in &rep.groups {
            axes.entry(&g.group)
                .or_default()
                .extend(g.global_ranks.iter().copied());
        }
        let rows = rep
            .matrix
            .iter()
            .enumerate()
            .map(|(i, r)| (false, i, r))
            .chain(
                rep.matrix_by_kind
                    .iter()
                    .enumerate()
                    .map(|(i, r)| (true, i, r)),
            );
        for (by_kind, i, r) in rows {
            let key = (r.step.clone(), r.group.clone(), r.kind.clone());
            let v = ix.by_key.entry(key).or_default();
            if v.is_empty() {
                let sg = (r.step.clone(), r.group.clone());
                let at = *kinds_at.entry(sg.clone()).or_insert_with(|| {
                    ix.kinds.push((sg, Vec::new()));
                    ix.kinds.len() - 1
                });
                ix.kinds[at].1.push(r.kind.clone());
            }
            v.push((by_kind, i as u32));
            let a = axes.entry(&r.group).or_default();
            a.insert(r.src);
            a.insert(r.dst);
        }
        ix.axes = axes
            .into_iter()
            .map(|(g, s)| (g.to_string(), s.into_iter().collect()))
            .collect();
        ix
    }

    fn rows<'a>(
        &self,
        rep: &'a CommReport,
        step: &str,
        group: &str,
        kind: &str,
    ) -> Vec<&'a MatrixRow> {
        let key = (step.to_string(), group.to_string(), kind.to_string());
        self.by_key
            .get(&key)
            .map(|v| {
                v.iter()
                    .filter_map(|&(k, i)| match k {
                        false => rep.matrix.get(i as usize),
                        true => rep.matrix_by_kind.get(i as usize),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn value(r: &MatrixRow, m: CommMetric) -> f64 {
    match m {
        CommMetric::Bandwidth => r.bandwidth_gbps,
        CommMetric::Size => r.size_mb,
        CommMetric::Time => r.time_ms,
    }
}

/// One window of the heatmap of `(q.step, q.group, q.kind)` (module doc).
pub fn matrix(rep: &CommReport, ix: &MatrixIndex, q: &CommMatrixQuery) -> CommMatrixDto {
    let axis = ix.axes.get(&q.group).cloned().unwrap_or_default();
    let n = axis.len() as u32;
    let rows = ix.rows(rep, &q.step, &q.group, &q.kind);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let between = rows.iter().any(|r| r.src != r.dst);
    for r in rows.iter().filter(|r| !between || r.src != r.dst) {
        let v = value(r, q.metric);
        if v.is_finite() {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    if lo > hi {
        (lo, hi) = (0.0, 0.0);
    }
    let missing: Vec<u32> = axis
        .iter()
        .enumerate()
        .filter(|(_, r)| rep.ranks.binary_search(r).is_err())
        .map(|(i, _)| i as u32)
        .collect();
    let span = q.span.clamp(1, n.max(1));
    let x0 = q.x0.min(n.saturating_sub(span));
    let y0 = q.y0.min(n.saturating_sub(span));
    let block = span.div_ceil(q.max_blocks.max(1)).max(1);
    let cols = span.min(n.saturating_sub(x0)).div_ceil(block);
    let nrows = span.min(n.saturating_sub(y0)).div_ceil(block);
    let cells = (cols * nrows) as usize;
    let mut out = CommMatrixDto {
        missing,
        x0,
        y0,
        block,
        cols,
        rows: nrows,
        mean: vec![f64::NAN; cells],
        min: vec![f64::NAN; cells],
        max: vec![f64::NAN; cells],
        count: vec![0; cells],
        recovered: vec![0; cells],
        missing_cell: vec![false; cells],
        scale: (lo, hi),
        detail: Vec::new(),
        axis: Vec::new(),
    };
    if block == 1 {
        out.detail = vec![(f64::NAN, f64::NAN, f64::NAN, String::new()); cells];
    }
    let mut sum = vec![0.0f64; cells];
    let cell_of = |src: i64, dst: i64| -> Option<usize> {
        let px = axis.binary_search(&src).ok()? as u32;
        let py = axis.binary_search(&dst).ok()? as u32;
        if px < x0 || py < y0 {
            return None;
        }
        let (cx, cy) = ((px - x0) / block, (py - y0) / block);
        (cx < cols && cy < nrows).then_some((cy * cols + cx) as usize)
    };
    for r in &rows {
        let Some(c) = cell_of(r.src, r.dst) else {
            continue;
        };
        let v = value(r, q.metric);
        out.count[c] += 1;
        out.recovered[c] += r.mapped_from_metadata as u32;
        sum[c] += v;
        out.min[c] = if out.count[c] == 1 {
            v
        } else {
            out.min[c].min(v)
        };
        out.max[c] = if out.count[c] == 1 {
            v
        } else {
            out.max[c].max(v)
        };
        if block == 1 {
            out.detail[c] = (r.size_mb, r.time_ms, r.bandwidth_gbps, r.transport.clone());
        }
    }
    for c in 0..cells {
        if out.count[c] > 0 {
            out.mean[c] = sum[c] / out.count[c] as f64;
        }
    }
    for &m in &out.missing {
        if m >= x0 && (m - x0) / block < cols {
            let cx = (m - x0) / block;
            for cy in 0..nrows {
                out.missing_cell[(cy * cols + cx) as usize] = true;
            }
        }
        if m >= y0 && (m - y0) / block < nrows {
            let cy = (m - y0) / block;
            for cx in 0..cols {
                out.missing_cell[(cy * cols + cx) as usize] = true;
            }
        }
    }
    out.axis = axis;
    out
}

/// The overview of `rep` (every table but the matrix cells), numbers unchanged.
pub fn overview(rep: &CommReport, ix: &MatrixIndex, parity: bool) -> CommOverviewDto {
    let mut steps: Vec<String> = Vec::new();
    let mut add = |s: &str| {
        if !steps.iter().any(|x| x == s) {
            steps.push(s.to_string());
        }
    };
    rep.time_summary.iter().for_each(|t| add(&t.step));
    ix.kinds.iter().for_each(|((s, _), _)| add(s));
    CommOverviewDto {
        parity,
        ranks: rep.ranks.clone(),
        steps,
        groups: rep
            .groups
            .iter()
            .map(|g| CommGroupDto {
                group: g.group.clone(),
                section: g.section.to_string(),
                name: g.name.clone(),
                global_ranks: g.global_ranks.clone(),
                present: g.present.clone(),
                missing: g.missing.clone(),
            })
            .collect(),
        time: rep
            .time_summary
            .iter()
            .map(|t| CommTimeDto {
                step: t.step.clone(),
                group: t.group.clone(),
                rank: t.rank,
                n_ops: t.n_ops as u64,
                elapse_ms: t.elapse_ms,
                transit_ms: t.transit_ms,
                wait_ms: t.wait_ms,
                sync_ms: t.sync_ms,
                idle_ms: t.idle_ms,
                wait_ratio: t.wait_ratio,
                sync_ratio: t.sync_ratio,
            })
            .collect(),
        bandwidth: rep
            .bandwidth_summary
            .iter()
            .map(|b| CommBandDto {
                step: b.step.clone(),
                group: b.group.clone(),
                rank: b.rank,
                transport: b.transport.clone(),
                size_mb: b.size_mb,
                time_ms: b.time_ms,
                bandwidth_gbps: b.bandwidth_gbps,
                large_packet_ratio: b.large_packet_ratio,
            })
            .collect(),
        matrices: ix
            .kinds
            .iter()
            .map(|((step, group), kinds)| CommKindsDto {
                step: step.clone(),
                group: group.clone(),
                kinds: kinds.clone(),
                axis_len: ix.axes.get(group).map_or(0, |a| a.len() as u32),
            })
            .collect(),
        matrix_links: rep.matrix.len() as u64,
        recovered_links: rep.matrix.iter().filter(|m| m.mapped_from_metadata).count() as u64,
        dropped_links: rep.dropped_links.len() as u64,
        partial_ops: rep.partial_ops.len() as u64,
        arrivals: rep
            .op_arrivals
            .iter()
            .map(|a| CommArrivalDto {
                step: a.step.clone(),
                group: a.group.clone(),
                op: a.op.clone(),
                n_ranks: a.n_ranks as u64,
                last_rank: a.last_rank,
                last_elapse_ms: a.last_elapse_ms,
                first_rank: a.first_rank,
                max_elapse_ms: a.max_elapse_ms,
                mean_elapse_ms: a.mean_elapse_ms,
                spread_ms: a.spread_ms,
                start_spread_us: a.start_spread_us,
            })
            .collect(),
        slow_links: rep
            .slow_links
            .iter()
            .map(|s| CommSlowLinkDto {
                name: s.name.clone(),
                count: s.count as u64,
                mean_ns: s.mean_ns,
                std_ns: s.std_ns,
                min_ns: s.min_ns,
                median_ns: s.median_ns,
                max_ns: s.max_ns,
                offset_ratio: s.offset_ratio,
                ops: s.ops.clone(),
            })
            .collect(),
        slow_ranks: rep
            .slow_ranks
            .iter()
            .map(|s| CommSlowRankDto {
                rank: s.rank,
                group: s.group.clone(),
                op: s.op.clone(),
                n: s.n as u64,
                test: s.evidence.test.to_string(),
                statistic: s.evidence.statistic,
                threshold: s.evidence.threshold,
                time_us: s.time_us,
                mean_us: s.mean_us,
            })
            .collect(),
        slow_rank_ops_tested: rep.slow_rank_ops_tested as u64,
        msi_slow_ranks: rep
            .msi_slow_ranks
            .iter()
            .map(|m| CommMsiSlowRankDto {
                step: m.step.clone(),
                group: m.group.clone(),
                fast_rank: m.fast_rank,
                fast_us: m.fast_us,
                rank: m.rank,
                time_us: m.time_us,
                diff_us: m.diff_us,
                threshold_us: m.threshold_us,
                ops: m.ops.clone(),
            })
            .collect(),
        // The engine fills it (the report's table names are not a view's to know).
        csv_tables: Vec::new(),
        slow_link_rows: rep.slow_link_rows as u64,
        slow_link_rows_sized: rep.slow_link_rows_sized as u64,
        collectives: rep
            .collectives
            .iter()
            .map(|c| CommCollectiveDto {
                collective_id: c.collective_id.clone(),
                collective: c.collective.clone(),
                group_size: c.group_size,
                ranks: c.ranks.clone(),
                full_msg_mb: c.full_msg_mb,
                comm_latency_us: c.comm_latency_us,
                skew_start_us: c.skew_start_us,
                skew_end_us: c.skew_end_us,
                earliest_arrival_rank: c.earliest_arrival_rank,
                algo_bw_gbps: c.algo_bw_gbps,
                bus_bw_gbps: c.bus_bw_gbps,
            })
            .collect(),
        problems: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::comm::GroupRow;

    fn link(src: i64, dst: i64, bw: f64, rec: bool) -> MatrixRow {
        MatrixRow {
            step: "step1".into(),
            group: "g".into(),
            kind: "Total Op Info".into(),
            src,
            dst,
            transport: "HCCS".into(),
            size_mb: bw * 2.0,
            time_ms: 2.0,
            bandwidth_gbps: bw,
            mapped_from_metadata: rec,
            op_name: String::new(),
        }
    }

    fn report(n: i64) -> CommReport {
        let mut matrix = Vec::new();
        for s in 0..n {
            for d in 0..n {
                matrix.push(link(s, d, (s * n + d) as f64, s == 1 && d == 0));
            }
        }
        CommReport {
            ranks: (0..n).filter(|&r| r != 2).collect(),
            groups: vec![GroupRow {
                group: "g".into(),
                section: "collective",
                id: String::new(),
                name: "dp".into(),
                global_ranks: (0..n).collect(),
                present: vec![],
                missing: vec![2],
            }],
            matrix,
            ..Default::default()
        }
    }

    fn query(span: u32, max_blocks: u32) -> CommMatrixQuery {
        CommMatrixQuery {
            step: "step1".into(),
            group: "g".into(),
            kind: "Total Op Info".into(),
            metric: CommMetric::Bandwidth,
            x0: 0,
            y0: 0,
            span,
            max_blocks,
        }
    }

    #[test]
    fn one_link_a_cell_when_the_window_fits() {
        let rep = report(4);
        let ix = MatrixIndex::of(&rep);
        let m = matrix(&rep, &ix, &query(4, 64));
        assert_eq!((m.block, m.cols, m.rows), (1, 4, 4));
        assert_eq!(m.axis, vec![0, 1, 2, 3]);
        // Row = dst, column = src: cell (dst 0, src 1) holds link 1→0 = 4, recovered.
        assert_eq!(m.mean[1], 4.0);
        assert_eq!(m.recovered[1], 1);
        assert_eq!(m.detail[1], (8.0, 2.0, 4.0, "HCCS".into()));
        // The scale leaves out the self links (0, 5, 10, 15): 0→1 = 1 to 3→2 = 14.
        assert_eq!(m.scale, (1.0, 14.0));
        assert_eq!(m.missing, vec![2]);
        assert!(m.missing_cell[2] && m.missing_cell[2 * 4] && !m.missing_cell[0]);
    }

    #[test]
    fn a_group_of_self_links_only_is_scaled_by_them() {
        let mut rep = report(4);
        rep.matrix.retain(|r| r.src == r.dst);
        let ix = MatrixIndex::of(&rep);
        assert_eq!(matrix(&rep, &ix, &query(4, 64)).scale, (0.0, 15.0));
    }

    #[test]
    fn blocks_hold_mean_min_max_and_count() {
        let rep = report(4);
        let ix = MatrixIndex::of(&rep);
        let m = matrix(&rep, &ix, &query(4, 2));
        assert_eq!((m.block, m.cols, m.rows), (2, 2, 2));
        // Block (rows 0-1, cols 0-1): links 0→0 0, 1→0 4, 0→1 1, 1→1 5.
        assert_eq!(
            (m.mean[0], m.min[0], m.max[0], m.count[0]),
            (2.5, 0.0, 5.0, 4)
        );
        assert!(m.detail.is_empty());
        // A window clamped to the axis.
        let mut q = query(2, 8);
        q.x0 = 9;
        let w = matrix(&rep, &ix, &q);
        assert_eq!((w.x0, w.cols), (2, 2));
    }

    #[test]
    fn a_thousand_ranks_stay_within_the_block_budget() {
        let rep = report(1024);
        let ix = MatrixIndex::of(&rep);
        let m = matrix(&rep, &ix, &query(1024, 128));
        assert_eq!((m.block, m.cols, m.rows), (8, 128, 128));
        assert_eq!(
            m.count.iter().map(|&c| c as usize).sum::<usize>(),
            1024 * 1024
        );
        let o = overview(&rep, &ix, false);
        assert_eq!(o.matrices[0].axis_len, 1024);
        assert_eq!(o.recovered_links, 1);
    }
}
