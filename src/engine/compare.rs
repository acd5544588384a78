//! Comparing two stored runs (issue 13 "Compare"): the one assembly of the diff documents from
//! results already held in [`Store`]s and [`SnapshotRun`]s, used by `proflens diff` (CLI) and
//! by the worker session's Compare tab ([`super::session::compare`]). Nothing here reads a
//! file: each side was read once by whoever filled its store.
//!
//! * Snapshots: [`snapshot_diff`] = [`crate::report::snapshot_diff::build`] on both runs.
//! * Traces, rank folders, runs: [`trace_diff`] picks the compared rank of each side (`rank`,
//!   else the first by rank id: HTA's default), compares it
//!   ([`crate::analysis::compare::compare_ranks`]), builds the rank table of every analysed
//!   rank ([`crate::analysis::compare::ranks::rank_table`]) and writes
//!   [`crate::report::trace_diff::build`].

use crate::analysis::compare::ops::StepChoice;
use crate::analysis::compare::ranks::{main_pool_peak_mb, rank_table, RankFigures};
use crate::analysis::compare::{compare_ranks, RankSide};
use crate::analysis::memory_result::RankMemory;
use crate::engine::anomaly::RankAnalysis;
use crate::engine::snapshot::SnapshotRun;
use crate::engine::store::Store;
use crate::ingest::inventory::Inventory;
use crate::report::snapshot_diff::{build as build_snapshot, DiffJson, DiffSide};
use crate::report::snapshot_json::ReportOptions;
use crate::report::snapshot_links::LinkOptions;
use crate::report::trace_diff::{build as build_trace, TraceDiffJson, TraceSideJson};

/// One side of a trace / rank / run comparison: its inventory and the store its analyses
/// were kept in.
#[derive(Clone, Copy)]
pub struct StoredSide<'a> {
    /// The side's name in the documents (`a.path` / `b.path`): the path as given on the
    /// command line, or the dropped folder's (or file's) name in the page.
    pub path: &'a str,
    /// What was found under it.
    pub inv: &'a Inventory,
    /// The analyses' results.
    pub store: &'a Store,
}

/// One analysed rank of a side.
#[derive(Clone, Copy)]
struct Rank<'a> {
    anomaly: &'a RankAnalysis,
    memory: Option<&'a RankMemory>,
}

impl Rank<'_> {
    fn id(&self) -> Option<i64> {
        self.anomaly.meta.rank_id
    }
}

/// The side's analysed ranks, by rank id (unknown ids last), then in inventory order.
fn ranks<'a>(s: &StoredSide<'a>) -> Result<Vec<Rank<'a>>, String> {
    let mut v: Vec<Rank<'a>> = (0..s.inv.ranks.len() as u32)
        .filter_map(|i| {
            Some(Rank {
                anomaly: s.store.anomaly(i)?,
                memory: s.store.memory(i),
            })
        })
        .collect();
    v.sort_by_key(|r| (r.id().is_none(), r.id()));
    if v.is_empty() {
        return Err(format!("{}: no rank could be analysed", s.path));
    }
    Ok(v)
}

fn rank_side<'a>(r: &Rank<'a>) -> RankSide<'a> {
    RankSide {
        rank_id: r.id(),
        result: &r.anomaly.result,
        kernels: &r.anomaly.kernels,
        gpu: r.anomaly.gpu.as_deref(),
        memory: r.memory,
    }
}

fn figures<'a>(rs: &[Rank<'a>]) -> Vec<RankFigures<'a>> {
    rs.iter()
        .map(|r| RankFigures {
            rank_id: r.id(),
            result: &r.anomaly.result,
            peak_allocated_mb: r.memory.and_then(main_pool_peak_mb),
        })
        .collect()
}

/// The compared rank: `want`, else the first (HTA's default: the first rank).
fn pick<'a>(
    name: &str,
    s: &StoredSide<'_>,
    rs: &[Rank<'a>],
    want: Option<i64>,
) -> Result<Rank<'a>, String> {
    match want {
        None => Ok(rs[0]),
        Some(n) => rs
            .iter()
            .find(|r| r.id() == Some(n))
            .copied()
            .ok_or_else(|| {
                let have: Vec<String> = rs
                    .iter()
                    .map(|r| r.id().map_or("unknown".into(), |x| x.to_string()))
                    .collect();
                format!(
                    "side {name} ({}) has no rank {n} (ranks: {})",
                    s.path,
                    have.join(", ")
                )
            }),
    }
}

fn side_json(s: &StoredSide<'_>, rs: &[Rank<'_>], r: &Rank<'_>) -> TraceSideJson {
    TraceSideJson {
        path: s.path.to_string(),
        capture: if r.anomaly.gpu.is_some() {
            "kineto"
        } else {
            "ascend"
        },
        ranks: rs.iter().map(Rank::id).collect(),
        rank: r.id(),
    }
}

/// The trace / rank / run comparison document of two stored sides (`proflens diff A B` on
/// traces, rank folders or runs): ops of step `choice` and the steps of rank `rank` of each
/// side (default: the first rank by id), the rank table of every analysed rank.
///
/// # Errors
///
/// A side without an analysed rank, or without rank `rank` (the message names the side and
/// lists its ranks).
pub fn trace_diff(
    a: &StoredSide<'_>,
    b: &StoredSide<'_>,
    choice: StepChoice,
    rank: Option<i64>,
    links: &LinkOptions,
) -> Result<TraceDiffJson, String> {
    let (ra, rb) = (ranks(a)?, ranks(b)?);
    let pa = pick("A", a, &ra, rank)?;
    let pb = pick("B", b, &rb, rank)?;
    let c = compare_ranks(&rank_side(&pa), &rank_side(&pb), choice);
    let table = rank_table(&figures(&ra), &figures(&rb));
    Ok(build_trace(
        side_json(a, &ra, &pa),
        side_json(b, &rb, &pb),
        &c,
        &table,
        choice,
        links,
    ))
}

/// The view of one analysed snapshot run as a side of the snapshot diff (`device`: compare
/// only this device, `--a-device` / `--b-device`).
pub fn snapshot_side(r: &SnapshotRun, device: Option<u32>) -> DiffSide<'_> {
    DiffSide {
        file: &r.file.path,
        bytes: r.file.size,
        snapshot: &r.snapshot,
        devices: &r.devices,
        device,
    }
}

/// The snapshot comparison document of two analysed runs (`proflens diff A.pickle B.pickle`)
/// on peak curve `curve`, without the overlay.
pub fn snapshot_diff(
    a: &SnapshotRun,
    b: &SnapshotRun,
    devices: (Option<u32>, Option<u32>),
    curve: &'static str,
    opts: &ReportOptions,
) -> DiffJson {
    build_snapshot(
        &snapshot_side(a, devices.0),
        &snapshot_side(b, devices.1),
        curve,
        opts,
    )
}
