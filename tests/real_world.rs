//! Exact values on the real profiler outputs of `../shared/fixtures/real_world/` (its
//! SOURCES.md says where each set comes from), for the rules that real files from other
//! projects' runs exercised: capabilities read from what the trace holds (anomaly.md §1.1.1),
//! step annotations without `ProfilerStep#` (§3.1.1) and overrun tails (§3.2.1).
//!
//! Every expected number was derived independently of proflens, by reading the JSON / CSV
//! with Python's `json`, `csv` and `decimal` (`tests/reference/real_world_check.py`, run once by
//! hand: `python3 tests/reference/real_world_check.py <check> <path>`), or by hand from the
//! rows quoted in the comments.

mod engine_support;

use std::ops::ControlFlow;
use std::path::Path;

use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::analysis::intervals::Interval;
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::read::RankAnalysis;
use proflens::ingest::inventory::Inventory;
use proflens::ingest::{InputFile, Opener};
use proflens::parse::metadata::read_side_files;

const RW: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/real_world/"
);

fn analyse_with(inv_files: Vec<InputFile>, opener: &dyn Opener) -> Vec<RankAnalysis> {
    let mut inv = Inventory::from_paths(&inv_files);
    read_side_files(&mut inv, opener);
    engine_support::anomaly_run(&inv, opener, &AnomalyConfig::spec_defaults(), &mut |_| {
        ControlFlow::Continue(())
    })
    .unwrap()
    .0
}

/// The anomaly analysis of every rank under `rel` (a folder of `real_world/`).
fn analyse(rel: &str) -> Vec<RankAnalysis> {
    let (opener, files) = FsOpener::walk(Path::new(&format!("{RW}{rel}"))).unwrap();
    analyse_with(files, &opener)
}

fn windows(r: &RankAnalysis) -> Vec<Interval> {
    r.result.steps.iter().map(|s| s.window).collect()
}

// ---------------------------------------------------------------------------------------
// §3.2.1 overrun tails: the torch_npu 2.10 eager rank (run148).
// ---------------------------------------------------------------------------------------

const RUN148: &str = "wio1997__Inference-Foundry/evidence/20260925_loop044_target/run148/profile";

/// run148: 4 steps of one `GroupedMatmulSwigluQuantV2` kernel each (`Step Id` 1–4); each
/// kernel starts inside its own `ProfilerStep#N` window and runs past the next marker.
///
/// From the files (`real_world_check.py run148`): markers at …3677.140, …4327.800, …4780.050,
/// …5244.390 µs; kernels (start + Duration of kernel_details.csv) …4221.578 + 118.762,
/// …4706.427 + 118.723, …5175.537 + 118.242, …5629.946 + 121.402 µs. Overrun tails into
/// windows 2–4: 4340.340 − 4327.800 = 12.540, 4825.150 − 4780.050 = 45.100,
/// 5293.779 − 5244.390 = 49.389 µs; lagged shares 12.540 / 131.263 = 9.55 %,
/// 45.100 / 163.342 = 27.6 %, 49.389 / 170.791 = 28.9 % (the largest, step 4): above 5 %, so
/// device-side windows. Device-side prelaunch of step i + 1 = its kernel start − step i's
/// kernel end: 4706.427 − 4340.340 = 366.087, 5175.537 − 4825.150 = 350.387,
/// 5629.946 − 5293.779 = 336.167 µs (step 1: 4221.578 − 3677.140 = 544.438). Before
/// §3.2.1 the marker windows were kept and steps 2–4 had a prelaunch of 0.
#[test]
fn run148_kernels_running_past_their_marker_give_device_side_windows() {
    let ranks = analyse(RUN148);
    assert_eq!(ranks.len(), 1);
    let r = &ranks[0].result;
    assert_eq!(r.step_detection_method(), "marker+device_lag");
    const T: i64 = 1_790_306_117_000_000_000;
    assert_eq!(
        windows(&ranks[0]),
        [
            Interval::new(T + 3_677_140, T + 4_340_340),
            Interval::new(T + 4_340_340, T + 4_825_150),
            Interval::new(T + 4_825_150, T + 5_293_779),
            Interval::new(T + 5_293_779, T + 5_751_348),
        ]
    );
    let prelaunch: Vec<i64> = r.steps.iter().map(|s| s.metrics.prelaunch_ns).collect();
    assert_eq!(prelaunch, [544_438, 366_087, 350_387, 336_167]);
    let d = r.device_lag.as_ref().unwrap();
    assert!(d.applied);
    assert_eq!(
        d.steps.iter().map(|s| s.tail_ns).collect::<Vec<_>>(),
        [0, 12_540, 45_100, 49_389]
    );
    assert_eq!(
        d.steps.iter().map(|s| s.overrun_ns).collect::<Vec<_>>(),
        [0, 12_540, 45_100, 49_389]
    );
    assert_eq!(d.max_share.1, 3);
    assert!((d.max_share.0 - 49.389 / 170.791).abs() < 1e-12);
    assert!((d.steps[1].lagged_share - 12.540 / 131.263).abs() < 1e-12);
    assert!((d.steps[2].lagged_share - 45.100 / 163.342).abs() < 1e-12);
    // Median of the first-kernel lags from the host markers 544.438, 378.627, 395.487,
    // 385.556 µs: (385.556 + 395.487) / 2.
    assert!((d.median_lag_ms - 0.3905215).abs() < 1e-12);
    // step_trace_time.csv Preparing 544.25 / 378.75 / 395.5 / 385.5 µs against device-side
    // prelaunch + overrun 544.438 / 378.627 / 395.487 / 385.556: all within 1 µs.
    assert_eq!(d.step_trace_check, Some((4, 4)));
}
