//! What a read runs and what it hands back: the [`Plan`] of analyses (with their settings), its
//! per-rank part [`RankPlan`], and the results of one target ([`RankEntry`], [`SnapshotEntry`],
//! [`TargetEntry`]) that the store keeps.

use std::sync::Arc;

use super::anomaly::{self, RankAnalysis};
use super::comm::RankCommRead;
use super::memory::MemoryOptions;
use super::snapshot::{SnapshotOptions, SnapshotRun};
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::analysis::comm::CommOptions;
use crate::analysis::memory_result::{RankMemory, RankStatus};
use crate::base::{Position, Problem, Severity};
use crate::engine::contract::{AnalysisKind, Cancelled, Target};
use crate::ingest::inventory::unused_codes::RANK as DROP_RANK;
use crate::ingest::inventory::{Inventory, RankFolder};
use crate::ingest::rank::CaptureKind;
use crate::parse::pickle::PickleError;

/// Which analyses a store runs, with their settings (`None`: not run).
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Memory events of every rank folder the selection takes.
    pub memory: Option<MemoryOptions>,
    /// Steps and bubbles of every rank folder with a kernel source or a trace.
    pub anomaly: Option<AnomalyConfig>,
    /// Peaks of every snapshot pickle.
    pub snapshot: Option<SnapshotOptions>,
    /// Communication across ranks: the per-rank tables of every folder with communication
    /// files (`engine::read::comm`); the cross-rank rules run on the store.
    pub comm: Option<CommOptions>,
    /// Memory only on the rank folders that hold memory events (`operator_memory.csv` or the
    /// DB export, [`RankFolder::has_memory_events`]): what `proflens analyze` and `proflens
    /// summarize` run, where a rank folder without them is one the memory analysis does not
    /// apply to, not a failure (docs/rules/ascend-memory.md §7). `false` (`proflens memory`,
    /// the page): every selected rank folder, and a missing `operator_memory.csv` is
    /// `MEM-FILE-001`.
    pub memory_where_present: bool,
}

impl Plan {
    /// No analysis.
    pub fn none() -> Plan {
        Plan::default()
    }

    /// Every analysis with the defaults of the single CLI commands (`proflens memory`,
    /// `proflens anomaly`, `proflens snapshot` without options): what `proflens analyze` runs.
    pub fn defaults() -> Plan {
        Plan {
            memory: Some(MemoryOptions::default()),
            anomaly: Some(AnomalyConfig::spec_defaults()),
            snapshot: Some(SnapshotOptions::spec_defaults()),
            comm: None,
            memory_where_present: false,
        }
    }

    /// The analyses that run on rank folder `folder`: memory when planned and selected
    /// ([`MemoryOptions::selects`]; with [`Plan::memory_where_present`], only when the folder
    /// holds memory events), anomaly when planned and [`anomaly::usable`].
    pub fn for_rank(&self, folder: &RankFolder) -> RankPlan<'_> {
        RankPlan {
            memory: self
                .memory
                .as_ref()
                .filter(|o| o.selects(folder) && folder.kind != CaptureKind::Kineto)
                .filter(|_| !self.memory_where_present || folder.has_memory_events()),
            anomaly: self.anomaly.as_ref().filter(|_| anomaly::usable(folder)),
            comm: self.comm.is_some() && super::comm::usable(folder),
        }
    }

    /// The same plan with only the analyses of `kinds` (the others `None`).
    pub fn only(&self, kinds: &[AnalysisKind]) -> Plan {
        let has = |k| kinds.contains(&k);
        Plan {
            memory: self.memory.clone().filter(|_| has(AnalysisKind::Memory)),
            anomaly: self.anomaly.clone().filter(|_| has(AnalysisKind::Anomaly)),
            snapshot: self
                .snapshot
                .clone()
                .filter(|_| has(AnalysisKind::Snapshot)),
            comm: self.comm.clone().filter(|_| has(AnalysisKind::Comm)),
            memory_where_present: self.memory_where_present,
        }
    }

    /// One warning (`DROP-002`, formats.md §11.1) per rank folder of `inv` that no analysis of
    /// this plan reads, with what it lacks (the inventory's readiness): such a folder is
    /// skipped by [`Plan::targets`], and says so instead of vanishing.
    pub fn ranks_not_run(&self, inv: &Inventory) -> Vec<Problem> {
        inv.ranks
            .iter()
            .filter(|r| !self.for_rank(r).any())
            .map(|r| {
                let mut missing: Vec<&str> = Vec::new();
                let planned = |a: &&crate::ingest::inventory::Readiness| {
                    a.analysis != crate::ingest::inventory::Analysis::Communication
                        || self.comm.is_some()
                };
                for m in r
                    .analyses
                    .iter()
                    .filter(planned)
                    .flat_map(|a| a.missing.iter())
                {
                    if !missing.contains(&m.as_str()) {
                        missing.push(m);
                    }
                }
                let why = match missing.is_empty() {
                    true => "no analysis reads what it holds".to_string(),
                    false => format!("missing {}", missing.join("; ")),
                };
                Problem::new(
                    Severity::Warning,
                    DROP_RANK,
                    Position::file(r.label()),
                    format!("rank folder not analysed: {why}"),
                )
            })
            .collect()
    }

    /// The targets of `inv` with at least one planned analysis, in inventory order (rank
    /// folders, then snapshot files).
    pub fn targets(&self, inv: &Inventory) -> Vec<Target> {
        let mut out: Vec<Target> = (0..inv.ranks.len())
            .filter(|&i| self.for_rank(&inv.ranks[i]).any())
            .map(|i| Target::Rank(i as u32))
            .collect();
        if self.snapshot.is_some() {
            out.extend((0..inv.snapshots.len()).map(|i| Target::Snapshot(i as u32)));
        }
        out
    }
}

/// The result of one snapshot file: the run, or the decoder's error (§5.4 message).
pub type SnapshotEntry = Result<SnapshotRun, PickleError>;

/// What one target produced (what a parallel driver hands back to [`Store::insert`]).
pub enum TargetEntry {
    /// A rank folder's results.
    Rank(RankEntry),
    /// A snapshot file's result.
    Snapshot(SnapshotEntry),
}

/// Which analyses run on one rank folder, with their settings (`None`: not run).
#[derive(Clone, Copy, Debug, Default)]
pub struct RankPlan<'a> {
    /// The memory analysis (ascend-memory.md).
    pub memory: Option<&'a MemoryOptions>,
    /// The anomaly analysis (anomaly.md).
    pub anomaly: Option<&'a AnomalyConfig>,
    /// The communication tables (communication.md §1).
    pub comm: bool,
}

impl RankPlan<'_> {
    /// True when some analysis runs on the rank.
    pub fn any(&self) -> bool {
        self.memory.is_some() || self.anomaly.is_some() || self.comm
    }
}

/// The results of one rank folder, one per planned analysis (`None`: not planned).
#[derive(Default)]
pub struct RankEntry {
    /// Memory rows (status, problems inside; shared with merged runs and exports).
    pub memory: Option<Arc<RankMemory>>,
    /// Anomaly result, or cancelled.
    pub anomaly: Option<Result<RankAnalysis, Cancelled>>,
    /// Communication tables, or cancelled.
    pub comm: Option<Result<Arc<RankCommRead>, Cancelled>>,
}

impl RankEntry {
    /// True when the rank was cancelled (no analysis of it completed).
    pub fn cancelled(&self) -> bool {
        self.memory
            .as_ref()
            .is_some_and(|m| m.status == RankStatus::Cancelled)
            || matches!(self.anomaly, Some(Err(Cancelled)))
            || matches!(self.comm, Some(Err(Cancelled)))
    }
}
