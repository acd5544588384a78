//! The built-in "Load sample" (fixtures/sample/sample_run, written by make_sample.py)
//! demonstrates every analysis: memory events of two allocator pools, steps with
//! kernels and bubbles, and a memory snapshot. Expected values follow from the generator's
//! constants (see each comment), checked independently of the Rust code.

use proflens::analysis::memory_pool::Component;
use proflens::analysis::memory_summary::summarize;
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::contract::no_progress;
use proflens::engine::{Plan, Store};
use proflens::ingest::inventory::Inventory;
use proflens::parse::metadata::read_side_files;

#[test]
fn the_sample_has_pools_steps_bubbles_and_a_snapshot() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sample/sample_run");
    let (fs, files) = FsOpener::walk(&root).unwrap();
    let mut inv = Inventory::from_paths(&files);
    read_side_files(&mut inv, &fs);
    assert_eq!((inv.ranks.len(), inv.snapshots.len()), (2, 1));
    let mut store = Store::new(Plan::defaults());
    store.run_inventory(&inv, &fs, &mut no_progress);
    // Memory: 8 aten ops × 3 steps + one cann:: workspace row per step, in two pools. PTA
    // peaks at 512 + 64·rank MiB base plus the blocks still live (37,890 KiB + 8 KiB step
    // drift: 549.0019… / 613.0019… MiB); GE at 32 + 8 MiB.
    for (rank, pta_peak) in [(0u32, 549.001953125), (1, 613.001953125)] {
        let m = store.memory(rank).unwrap();
        assert_eq!(m.len(), 27);
        let s = summarize(m);
        let pools: Vec<(Component, u64, f64)> = s
            .pools
            .iter()
            .map(|p| {
                (
                    p.component,
                    p.rows,
                    p.peak.as_ref().unwrap().peak.peak_allocated_mb,
                )
            })
            .collect();
        assert_eq!(
            pools,
            [(Component::Pta, 24, pta_peak), (Component::Ge, 3, 40.0)]
        );
    }
    // Steps: 3 ProfilerStep markers per rank; per step the kernels cover 1,610 µs (rank 1:
    // ×1.1), the first starts 150 µs into the step (prelaunch bubble), 1000 → 1400 µs is an
    // internal bubble.
    let cross = store.anomaly_cross().unwrap();
    let got: Vec<(i64, usize, f64)> = cross
        .iter()
        .map(|r| {
            (
                r.rank_id,
                r.steps,
                (r.busy_union_ms_avg * 1e6).round() / 1e6,
            )
        })
        .collect();
    assert_eq!(got, [(0, 3, 1.61), (1, 3, 1.771)]);
    for rank in [0, 1] {
        let a = store.anomaly(rank).unwrap();
        assert_eq!(a.kernels.len(), 21);
        assert!(a.result.enabled);
        assert!(!a.result.bubbles.is_empty());
        assert_eq!(a.problems.count("ANOM-FILE-002"), 0);
    }
    // Snapshot: weight 64 MiB + activation (96 + 16·2) MiB + gradient 64 MiB = 256 MiB active
    // at entry 15 (2 setup entries, 6 per step, step 2's second alloc).
    let snap = store.snapshot(0).unwrap().as_ref().unwrap();
    assert_eq!(snap.devices.len(), 1);
    assert_eq!(snap.devices[0].n_entries, 20);
    assert!(snap.devices[0]
        .max
        .iter()
        .any(|&(b, e)| b == 256 << 20 && e == Some(15)));
}
