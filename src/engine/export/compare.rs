//! Comparing two stored runs: the one assembly of the diff documents from
//! results already held in [`Store`]s and [`SnapshotRun`]s, used by `proflens diff` (CLI) and
//! by the worker session's Compare tab ([`crate::engine::session::compare`]). Nothing here reads a
//! file: each side was read once by whoever filled its store.
//!
//! * Snapshots: [`snapshot_diff`] = [`crate::report::snapshot_diff::build`] on both runs.
//! * Traces, rank folders, runs: [`trace_diff`] picks the compared rank of each side (`rank`,
//!   else the first by rank id: HTA's default; it must be held in the side's store), compares it
//!   ([`crate::analysis::compare::compare_ranks`]), builds the rank table of every analysed
//!   rank, held or [`ElsewhereRank`] ([`crate::analysis::compare::ranks::rank_table_cells`])
//!   and writes
//!   [`crate::report::trace_diff::build`].

use crate::analysis::compare::ops::StepChoice;
use crate::analysis::compare::ranks::{
    cell, main_pool_peak_mb, rank_table_cells, RankCell, RankFigures,
};
use crate::analysis::compare::{compare_ranks, RankSide};
use crate::analysis::memory_result::RankMemory;
use crate::analysis::snapshot::links::LinkOptions;
use crate::base::side_labels::side_labels;
use crate::engine::read::snapshot::SnapshotRun;
use crate::engine::read::Plan;
use crate::engine::read::RankAnalysis;
use crate::engine::store::Store;
use crate::ingest::inventory::Inventory;
use crate::report::snapshot_diff::{build as build_snapshot, DiffJson, DiffSide};
use crate::report::snapshot_json::ReportOptions;
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
    /// Ranks of this side analysed elsewhere (another pool worker of the page), known by
    /// their rank-table cells only; a rank held in `store` ignores its entry here.
    pub elsewhere: &'a [ElsewhereRank],
}

/// A rank of a side whose results live in another worker: what the rank table reads of it.
#[derive(Clone, Debug, PartialEq)]
pub struct ElsewhereRank {
    /// Its rank folder index in the side's inventory.
    pub target: u32,
    /// Its rank id, when known.
    pub rank_id: Option<i64>,
    /// Its §13.4 row and main pool peak.
    pub cell: RankCell,
}

/// What `proflens diff` (and the Compare tab) runs on a side of traces, rank folders or runs:
/// the default steps-and-bubbles and memory analyses, memory only when some rank folder has
/// `operator_memory.csv`, never the snapshot analysis.
pub fn diff_plan(inv: &Inventory) -> Plan {
    let mut plan = Plan::defaults();
    plan.snapshot = None;
    if !inv.ranks.iter().any(|r| r.has_memory_events()) {
        plan.memory = None;
    }
    plan
}

/// One analysed rank of a side: held here, or known by its cell.
#[derive(Clone, Copy)]
enum Rank<'a> {
    Held {
        anomaly: &'a RankAnalysis,
        memory: Option<&'a RankMemory>,
    },
    Elsewhere(&'a ElsewhereRank),
}

impl<'a> Rank<'a> {
    fn id(&self) -> Option<i64> {
        match self {
            Rank::Held { anomaly, .. } => anomaly.meta.rank_id,
            Rank::Elsewhere(e) => e.rank_id,
        }
    }
    fn cell(&self) -> RankCell {
        match self {
            Rank::Held { anomaly, memory } => cell(&RankFigures {
                rank_id: self.id(),
                result: &anomaly.result,
                peak_allocated_mb: memory.and_then(main_pool_peak_mb),
            }),
            Rank::Elsewhere(e) => e.cell.clone(),
        }
    }
}

/// The side's analysed ranks, by rank id (unknown ids last), then in inventory order.
fn ranks<'a>(s: &StoredSide<'a>) -> Result<Vec<Rank<'a>>, String> {
    let mut v: Vec<(u32, Rank<'a>)> = (0..s.inv.ranks.len() as u32)
        .filter_map(|i| {
            let held = s.store.anomaly(i).map(|anomaly| Rank::Held {
                anomaly,
                memory: s.store.memory(i),
            });
            let elsewhere = || {
                s.elsewhere
                    .iter()
                    .find(|e| e.target == i)
                    .map(Rank::Elsewhere)
            };
            Some((i, held.or_else(elsewhere)?))
        })
        .collect();
    crate::base::sort::sort_by_key(&mut v, |(i, r)| (r.id().is_none(), r.id(), *i));
    if v.is_empty() {
        return Err(format!("{}: no rank could be analysed", s.path));
    }
    Ok(v.into_iter().map(|(_, r)| r).collect())
}

/// The compared rank's results; `Err` when they are held by another worker.
fn rank_side<'a>(name: &str, s: &StoredSide<'_>, r: &Rank<'a>) -> Result<RankSide<'a>, String> {
    match *r {
        Rank::Held { anomaly, memory } => Ok(RankSide {
            rank_id: r.id(),
            result: &anomaly.result,
            kernels: &anomaly.kernels,
            gpu: anomaly.gpu.as_deref(),
            memory,
        }),
        Rank::Elsewhere(e) => Err(format!(
            "side {name} ({}): rank folder {} (the compared rank) is held by another worker",
            s.path, e.target
        )),
    }
}

fn cells(rs: &[Rank<'_>]) -> Vec<(Option<i64>, RankCell)> {
    rs.iter().map(|r| (r.id(), r.cell())).collect()
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

fn side_json(s: &StoredSide<'_>, rs: &[Rank<'_>], r: &RankSide<'_>) -> TraceSideJson {
    TraceSideJson {
        path: s.path.to_string(),
        capture: if r.gpu.is_some() { "kineto" } else { "ascend" },
        ranks: rs.iter().map(Rank::id).collect(),
        rank: r.rank_id,
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
    let pa = rank_side("A", a, &pick("A", a, &ra, rank)?)?;
    let pb = rank_side("B", b, &pick("B", b, &rb, rank)?)?;
    let c = compare_ranks(&pa, &pb, choice);
    let table = rank_table_cells(&cells(&ra), &cells(&rb));
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
/// on peak curve `curve`, without the overlay. `paths`: where each side's file lies (the CLI:
/// its full path; the page: the dropped name); when both files have the same name, each side
/// is named by the shortest trailing part of its path that differs
/// ([`crate::base::side_labels::side_labels`]).
pub fn snapshot_diff(
    a: &SnapshotRun,
    b: &SnapshotRun,
    paths: (&str, &str),
    devices: (Option<u32>, Option<u32>),
    curve: &'static str,
    opts: &ReportOptions,
) -> DiffJson {
    let (na, nb) = side_labels(&a.file.path, paths.0, &b.file.path, paths.1);
    build_snapshot(
        &DiffSide {
            file: &na,
            ..snapshot_side(a, devices.0)
        },
        &DiffSide {
            file: &nb,
            ..snapshot_side(b, devices.1)
        },
        curve,
        opts,
    )
}
