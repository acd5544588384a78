//! The engine as the tests call it: [`proflens::engine::run`] over an inventory with one
//! analysis planned, returning the shapes the tests assert on. The CLI and the fuzz targets
//! call the same `run`.
#![allow(dead_code)]

use proflens::analysis::anomaly::cross_rank::RankRow;
use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::analysis::memory_result::MemoryRun;
use proflens::base::Problems;
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::contract::{Cancelled, OnProgress, Target};
use proflens::engine::read::{MemoryOptions, RankAnalysis};
use proflens::engine::{run, Plan, Store};
use proflens::ingest::inventory::Inventory;
use proflens::ingest::Opener;
use proflens::parse::metadata::read_side_files;

/// The memory analysis of every selected rank folder of `inv`, merged (§9.0 order), and the
/// drop-level problems.
pub fn memory_run(
    inv: &Inventory,
    opener: &dyn Opener,
    opts: &MemoryOptions,
    on_progress: &mut OnProgress<'_>,
) -> (MemoryRun, Problems) {
    let plan = Plan {
        memory: Some(opts.clone()),
        ..Plan::none()
    };
    run(inv, opener, plan, on_progress)
        .memory_run(inv)
        .unwrap_or_else(|| (MemoryRun::merge(Vec::new()), Problems::new()))
}

/// The anomaly analysis of every usable rank folder of `inv`, in inventory order, and the
/// cross-rank table; `Err` when a rank was cancelled.
pub fn anomaly_run(
    inv: &Inventory,
    opener: &dyn Opener,
    cfg: &AnomalyConfig,
    on_progress: &mut OnProgress<'_>,
) -> Result<(Vec<RankAnalysis>, Vec<RankRow>), Cancelled> {
    let plan = Plan {
        anomaly: Some(cfg.clone()),
        ..Plan::none()
    };
    let mut store = run(inv, opener, plan, on_progress);
    let cross = store.anomaly_cross()?;
    Ok((store.take_anomaly()?, cross))
}

/// The anomaly analysis of rank folder `i` of `inv` alone.
pub fn anomaly_rank(
    inv: &Inventory,
    i: u32,
    opener: &dyn Opener,
    cfg: &AnomalyConfig,
    on_progress: &mut OnProgress<'_>,
) -> Result<RankAnalysis, Cancelled> {
    let mut store = Store::new(Plan {
        anomaly: Some(cfg.clone()),
        ..Plan::none()
    });
    store.run_target(inv, Target::Rank(i), opener, on_progress);
    store.take_anomaly()?.pop().ok_or(Cancelled)
}

/// The anomaly analysis (spec defaults) of every rank of the folder `dir` as the CLI reads it:
/// the walk, the side files, then [`anomaly_run`]. Panics when `dir` cannot be walked.
pub fn anomaly_of_folder(dir: &str) -> Vec<RankAnalysis> {
    let (opener, files) = FsOpener::walk(std::path::Path::new(dir)).unwrap();
    let mut inv = Inventory::from_paths(&files);
    read_side_files(&mut inv, &opener);
    anomaly_run(&inv, &opener, &AnomalyConfig::spec_defaults(), &mut |_| {
        std::ops::ControlFlow::Continue(())
    })
    .unwrap()
    .0
}
