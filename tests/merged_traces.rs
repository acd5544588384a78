//! A merged multi-rank trace is split into its ranks in its one read (gpu-traces.md §6), and
//! each rank's steps and bubbles equal those of that rank's own trace: the 8 real DLRM traces
//! of `real_world/` fused the way TraceLens' TraceFuse fuses them (every event gets
//! `args.rank`; `pid`, `correlation` and `ac2g` ids are offset per rank by powers of ten from
//! the file's own maxima; no top-level member but `traceEvents`).
mod engine_support;
mod real_world_common;

use std::ops::ControlFlow;

use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::engine::read::RankAnalysis;
use proflens::ingest::inventory::Inventory;
use proflens::ingest::MemOpener;
use proflens::parse::metadata::read_side_files;
use real_world_common::fused_dlrm;

fn analyse(files: &[(String, Vec<u8>)]) -> Vec<RankAnalysis> {
    let mut m = MemOpener::new();
    for (p, b) in files {
        m.add(p.clone(), b.clone());
    }
    let mut inv = Inventory::from_paths(&m.list());
    read_side_files(&mut inv, &m);
    let cfg = AnomalyConfig::spec_defaults();
    engine_support::anomaly_run(&inv, &m, &cfg, &mut |_| ControlFlow::Continue(()))
        .unwrap()
        .0
}

/// What must agree between a rank of the merged trace and its own trace: per step its id,
/// window, service, busy union, underfeed, prelaunch, tail, internal bubbles and kernel count;
/// the bubble windows.
fn shape(r: &RankAnalysis) -> (Vec<String>, Vec<(i64, i64, String)>) {
    let steps = r
        .result
        .steps
        .iter()
        .map(|s| {
            let m = &s.metrics;
            format!(
                "{} [{}, {}) service {} busy {} underfeed {} prelaunch {} tail {} internal {} kernels {}",
                s.step_id,
                s.window.start_ns,
                s.window.end_ns,
                m.service_ns,
                m.busy_ns,
                m.underfeed_ns,
                m.prelaunch_ns,
                m.tail_ns,
                m.internal_total_ns(),
                s.inventory.total_kernel_count
            )
        })
        .collect();
    let bubbles = r
        .result
        .bubbles
        .iter()
        .map(|b| {
            let w = &b.window;
            (w.interval.start_ns, w.interval.end_ns, w.bubble_id.clone())
        })
        .collect();
    (steps, bubbles)
}

#[test]
fn a_fused_dlrm_run_splits_into_its_eight_ranks_with_their_own_numbers() {
    let (alone, merged) = fused_dlrm("merged");
    let alone: Vec<(String, Vec<u8>)> = alone
        .into_iter()
        .map(|(name, bytes)| (format!("drop/{name}"), bytes))
        .collect();
    let mut own = analyse(&alone);
    own.sort_by_key(|r| r.meta.rank_id);
    let split = analyse(&[("drop/merged_trace.json".to_string(), merged)]);
    assert_eq!(split.len(), 8, "one analysis per rank");
    let ids: Vec<Option<i64>> = split.iter().map(|r| r.meta.rank_id).collect();
    assert_eq!(ids, (0..8).map(Some).collect::<Vec<_>>());
    for (a, b) in split.iter().zip(&own) {
        assert_eq!(b.meta.rank_id, a.meta.rank_id);
        let (sa, ba) = shape(a);
        let (sb, bb) = shape(b);
        assert_eq!(
            sa.len(),
            1,
            "rank {:?}: ProfilerStep#10 only",
            a.meta.rank_id
        );
        assert_eq!(sa, sb, "rank {:?}", a.meta.rank_id);
        assert_eq!(ba, bb, "rank {:?}", a.meta.rank_id);
        assert_eq!(a.kernels.len(), b.kernels.len());
    }
    // The file's problems go with its first rank: the split is said once.
    let said: Vec<&str> = split[0]
        .problems
        .kept()
        .iter()
        .filter(|p| p.code == "GPU-TV-020")
        .map(|p| p.message.as_str())
        .collect();
    assert_eq!(said.len(), 1);
    assert!(
        said[0].contains("merged trace of 8 ranks (0, 1, 2, 3, 4, 5, 6, 7)"),
        "{}",
        said[0]
    );
    assert!(said[0].contains("split into its 8 ranks"), "{}", said[0]);
    assert!(!said[0].contains("carry no rank key"), "{}", said[0]);
    assert!(split[1..]
        .iter()
        .all(|r| r.problems.count("GPU-TV-020") == 0));
    // Rank ids come from the split, not from the order of the dropped files.
    assert!(split.iter().all(|r| r.problems.count("GPU-DISC-001") == 0));
}
