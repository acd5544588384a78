//! Floor 1 of the engine, **read**: one pass per target, nothing kept.
//!
//! A [`Plan`] says which analyses run; [`run_target`] reads one target of an inventory (a rank
//! folder through [`rank::read_rank`], a GPU trace through [`gpu::read_rank`], a snapshot
//! pickle through [`snapshot::run`]), each input file once, and hands back a [`TargetEntry`]
//! for the store. The per-analysis passes ([`memory::MemoryPass`], [`anomaly::AnomalyPass`])
//! are fed from that one read; the rules they apply live in `analysis`.
//!
//! May import: `engine::contract` and the core layers below the engine. Never `store`,
//! `export` or `session`.

pub mod anomaly;
pub mod comm;
#[cfg(any(not(target_arch = "wasm32"), feature = "db"))]
pub mod db;
pub mod gpu;
pub mod memory;
pub mod plan;
pub mod rank;
pub mod snapshot;

use crate::engine::contract::{OnProgress, Progress, Target};
use crate::ingest::inventory::Inventory;
use crate::ingest::Opener;

pub use anomaly::RankAnalysis;
pub use memory::MemoryOptions;
pub use plan::{Plan, RankEntry, RankPlan, SnapshotEntry, TargetEntry};
pub use snapshot::{SnapshotOptions, SnapshotRun};

/// [`run_target`] with `ranges.threads` threads for the target's one large trace: a GPU
/// rank's plain Kineto trace or an Ascend rank's `trace_view.json` is cut into byte ranges
/// read on that many threads (formats.md §8.2), with the same result; every other target is
/// [`run_target`]. Native only.
#[cfg(not(target_arch = "wasm32"))]
pub fn run_target_ranges(
    plan: &Plan,
    inv: &Inventory,
    t: Target,
    opener: &(dyn Opener + Sync),
    ranges: crate::parse::kineto::ranges::Ranges,
    on_progress: &mut OnProgress<'_>,
) -> Option<TargetEntry> {
    let kineto = |i: u32| {
        let f = inv.ranks.get(i as usize)?;
        (f.kind == crate::ingest::rank::CaptureKind::Kineto).then_some(f)
    };
    match t {
        Target::Rank(i) if ranges.threads > 1 && kineto(i).is_some() => {
            let folder = kineto(i)?;
            let p = plan.for_rank(folder);
            let label = folder.dir.as_str();
            let mut prog = |file: &str, bytes: crate::ingest::Progress| {
                on_progress(&Progress {
                    target: t,
                    label,
                    file,
                    bytes,
                })
            };
            Some(TargetEntry::Rank(RankEntry {
                memory: None,
                comm: None,
                anomaly: p
                    .anomaly
                    .map(|cfg| gpu::read_rank_ranges(folder, opener, ranges, cfg, &mut prog)),
            }))
        }
        Target::Rank(i) if ranges.threads > 1 => {
            let folder = inv.ranks.get(i as usize)?;
            let p = plan.for_rank(folder);
            let cut = Some((opener as &(dyn Opener + Sync), ranges));
            Some(TargetEntry::Rank(rank::read_rank_cut(
                t,
                folder,
                opener,
                cut,
                &p,
                on_progress,
            )))
        }
        _ => run_target(plan, inv, t, opener, on_progress),
    }
}

/// Runs target `t` of `inv` with `plan` (one read per file) without storing it: the unit of
/// work of [`Store::run_target`] and of parallel drivers. `None` for an index outside `inv`.
pub fn run_target(
    plan: &Plan,
    inv: &Inventory,
    t: Target,
    opener: &dyn Opener,
    on_progress: &mut OnProgress<'_>,
) -> Option<TargetEntry> {
    match t {
        Target::Rank(i) => {
            let folder = inv.ranks.get(i as usize)?;
            let p = plan.for_rank(folder);
            Some(TargetEntry::Rank(rank::read_rank(
                t,
                folder,
                opener,
                &p,
                on_progress,
            )))
        }
        Target::Snapshot(i) => {
            let file = inv.snapshots.get(i as usize)?;
            let opts = plan.snapshot.as_ref()?;
            let label = file.path.as_str();
            let mut prog = |bytes| {
                on_progress(&Progress {
                    target: t,
                    label,
                    file: label,
                    bytes,
                })
            };
            Some(TargetEntry::Snapshot(snapshot::run(
                opener, file, opts, &mut prog,
            )))
        }
        // A cluster summary is read by the session's cluster view, not stored here.
        Target::Summary(_) => None,
    }
}
