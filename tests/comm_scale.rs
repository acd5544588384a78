//! Scale: generated communication tables of thousands of ranks (one 2048-rank collective group
//! with ring links, plus a 2-rank group per pair) go through every rule in time linear in the
//! input; the matrix has every link, mapped from the self links.

use proflens::analysis::comm::{analyze, CommOptions};
use proflens::model::comm::{
    CommBandRow, CommLinkRow, CommTimeRow, PacketBin, ParallelGroup, RankComm, Section,
};

fn rank(r: i64, n: i64, ops: usize) -> RankComm {
    let mut rc = RankComm {
        rank: r,
        label: format!("rank_{r}_ascend_pt"),
        has_time: true,
        has_matrix: true,
        groups: vec![ParallelGroup {
            id: "world".into(),
            name: "default_group".into(),
            global_ranks: (0..n).collect(),
        }],
        ..Default::default()
    };
    let pair = format!("{}", 1_000_000 + r / 2);
    for k in 0..ops {
        for group in ["42", pair.as_str()] {
            rc.ops.push(CommTimeRow {
                step: "step1".into(),
                section: Some(Section::Collective),
                op: format!("hcom_allReduce__042_{k}_1"),
                group: group.into(),
                start_us: Some(k as f64),
                elapse_ms: 1.0 + (r % 7) as f64 * 0.01,
                transit_ms: 0.5,
                wait_ms: 0.25,
                sync_ms: 0.125,
                idle_ms: 0.25,
                ..Default::default()
            });
            let op = rc.ops.len() as u32 - 1;
            for t in ["RDMA", "HCCS", "PCIE", "SDMA", "SIO"] {
                rc.bands.push(CommBandRow {
                    op,
                    transport: t.into(),
                    size_mb: 1.0,
                    time_ms: 0.5,
                    bins: vec![PacketBin {
                        size_key: "1.0".into(),
                        count: 1.0,
                        time_ms: 0.5,
                    }],
                    ..Default::default()
                });
            }
        }
    }
    for kind in ["allreduce-top1", "allreduce-total"] {
        let (me, next) = (r.to_string(), ((r + 1) % n).to_string());
        for (s, d, t) in [(&me, &me, "LOCAL"), (&me, &next, "HCCS")] {
            rc.links.push(CommLinkRow {
                step: "step1".into(),
                section: Some(Section::Collective),
                kind: kind.into(),
                group: "42".into(),
                src: s.clone(),
                dst: d.clone(),
                transport: t.into(),
                size_mb: 2.0,
                time_ms: 0.5,
                ..Default::default()
            });
        }
    }
    rc
}

#[test]
fn two_thousand_ranks_in_linear_time() {
    let n = 2048;
    let ranks: Vec<RankComm> = (0..n).map(|r| rank(r, n, 8)).collect();
    let refs: Vec<&RankComm> = ranks.iter().collect();
    let t = std::time::Instant::now();
    let rep = analyze(&refs, &[], &CommOptions::default());
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(rep.ranks.len(), n as usize);
    // one row per rank for the world group and for its pair group
    assert_eq!(rep.time_summary.len(), 2 * n as usize);
    assert_eq!(rep.bandwidth_summary.len(), 2 * 5 * n as usize);
    // self link + ring link per rank, every one mapped from a self link
    assert_eq!(rep.matrix.len(), 2 * n as usize);
    assert!(rep.dropped_links.is_empty());
    assert!(rep.matrix.iter().all(|m| !m.mapped_from_metadata));
    let t0 = &rep.time_summary[0];
    assert_eq!((t0.n_ops, t0.wait_ratio), (8, 0.3333));
    // 2048 rows per op: 3σ, and nobody below mean − 3σ (times spread evenly)
    assert_eq!(rep.slow_rank_ops_tested, 8 + 8 * (n as usize / 2));
    // Generous for an unoptimised build on a shared machine; quadratic would take minutes.
    assert!(secs < 20.0, "{secs} s");
}
