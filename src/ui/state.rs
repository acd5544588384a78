//! Signals of the page: what was loaded, how far the analysis is, what the user selected.
//! The [`super::client`] writes the analysis signals from worker messages; components read
//! them. Every value is plain protocol data (`Send + Sync`), so ordinary `RwSignal`s work.

use std::collections::BTreeMap;

use leptos::prelude::*;

use std::sync::Arc;

use crate::protocol::anomaly::AnomalySummaryDto;
use crate::protocol::cluster_view::ClusterViewDto;
use crate::protocol::compare::CompareViewDto;
use crate::protocol::{AnalysisKind, InventoryDto, MemorySummaryDto, ProblemDto, ProgressDto};

/// Where the page is in its life cycle.
#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    /// Nothing loaded: the landing page.
    Empty,
    /// Files handed to the worker; waiting for the inventory.
    Inventory,
    /// Ranks are being analysed.
    Running,
    /// Every rank finished (done or failed).
    Done {
        /// Wall time from the drop to the last rank, ms.
        elapsed_ms: f64,
    },
    /// The user cancelled; workers were terminated.
    Cancelled,
    /// Loading failed before any analysis (message shown).
    Failed(String),
}

/// Progress of one file, with the time of the last update.
#[derive(Clone, Debug, PartialEq)]
pub struct FileProgress {
    /// The last report.
    pub last: ProgressDto,
}

/// "Compare with…": where side B and the comparison are.
#[derive(Clone, Debug, PartialEq)]
pub enum CompareStatus {
    /// Nothing asked yet.
    None,
    /// Side B is being read and compared.
    Loading {
        /// B's name.
        b_name: String,
        /// B's total bytes.
        bytes: u64,
    },
    /// The comparison, as the worker laid it out.
    Ready(Arc<CompareViewDto>),
    /// Why it could not be compared.
    Failed(String),
}

/// Tabs of the result area: one per analysis plus the inventory and the problems.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tab {
    /// Files found, ranks, readiness, per-file progress.
    Inventory,
    /// Memory events.
    Memory,
    /// Steps, bubbles and anomalies.
    Anomaly,
    /// Warnings and errors.
    Problems,
    /// Memory snapshots.
    Snapshot,
    /// A cluster summary's ranks.
    Cluster,
    /// Two runs compared.
    Compare,
    /// Communication across ranks.
    Comm,
}

/// Change notices by key (a rank folder's index, a file's index). A component that shows one
/// key's entry of a shared map tracks that key ([`Ticks::track`]) and reads the map untracked;
/// whoever writes the map notifies the key ([`Ticks::notify`]). A shared signal read by N
/// memos makes each change re-run all N, and each re-run re-subscribes in the signal's ordered
/// subscriber set (a shift on removal, O(N)): O(N²) per change, O(N³) over a drop of N ranks
/// (a 1,024-rank drop spent minutes of the main thread there). A trigger per key costs O(1).
#[derive(Clone, Copy)]
pub struct Ticks(StoredValue<BTreeMap<u32, ArcTrigger>>);

impl Ticks {
    fn new() -> Self {
        Ticks(StoredValue::new(BTreeMap::new()))
    }

    /// Tracks key `k` in the running memo or effect.
    pub fn track(&self, k: u32) {
        if let Some(t) = self
            .0
            .try_update_value(|m| m.entry(k).or_insert_with(ArcTrigger::new).clone())
        {
            t.track();
        }
    }

    /// Re-runs whatever tracks key `k`.
    pub fn notify(&self, k: u32) {
        if let Some(t) = self.0.try_with_value(|m| m.get(&k).cloned()).flatten() {
            t.notify();
        }
    }
}

/// All page signals (cheap to copy: every field is an arena handle).
#[derive(Clone, Copy)]
pub struct AppState {
    /// Life cycle.
    pub phase: RwSignal<Phase>,
    /// The dropped files' metadata, in the order posted to the workers.
    pub files: RwSignal<Vec<crate::protocol::FileMeta>>,
    /// The inventory (after the drop, before parsing).
    pub inventory: RwSignal<Option<InventoryDto>>,
    /// Per file index: read progress.
    pub progress: RwSignal<BTreeMap<u32, FileProgress>>,
    /// Per file index: its [`AppState::progress`] entry changed.
    pub file_ticks: Ticks,
    /// Per rank folder index: its entries of `summaries`, `anomaly`, `failures` or `finished`
    /// changed (the inventory's rank cards track these, not the maps).
    pub rank_ticks: Ticks,
    /// Per rank folder index: summary once done.
    pub summaries: RwSignal<BTreeMap<u32, MemorySummaryDto>>,
    /// Per (analysis, target): failure message.
    pub failures: RwSignal<BTreeMap<(AnalysisKind, u32), String>>,
    /// Every (analysis, target) that finished, done or failed (progress counts, worker deaths).
    pub finished: RwSignal<std::collections::BTreeSet<(AnalysisKind, u32)>>,
    /// The analysis jobs the workers are running now (each live worker's current `Run`, less
    /// the jobs it already answered): the status bar's count while a run goes on.
    pub running: RwSignal<u32>,
    /// Problems of every worker, merged.
    pub problems: RwSignal<Vec<ProblemDto>>,
    /// Total problems counted (kept or not).
    pub problems_total: RwSignal<u64>,
    /// Selected tab.
    pub tab: RwSignal<Tab>,
    /// Selected rank folder in the memory view.
    pub selected_rank: RwSignal<Option<u32>>,
    /// A transient status line (exports, errors of queries).
    pub status: RwSignal<String>,
    /// Per worker slot: wasm memory size in bytes (peak so far).
    pub wasm_memory: RwSignal<BTreeMap<usize, u64>>,
    /// `performance.now()` at the drop, ms.
    pub started_ms: RwSignal<f64>,
    /// Per snapshot index: summary once analysed.
    pub snapshots: RwSignal<BTreeMap<u32, crate::protocol::SnapshotSummaryDto>>,
    /// Selected snapshot in the snapshot tab.
    pub selected_snapshot: RwSignal<Option<u32>>,
    /// Per rank folder index: anomaly summary once done.
    pub anomaly: RwSignal<BTreeMap<u32, AnomalySummaryDto>>,
    /// Selected rank folder in the steps / bubbles view (and its timeline).
    pub anomaly_rank: RwSignal<Option<u32>>,
    /// Selected step (index in the rank) of the steps view; shared with the timeline.
    pub anomaly_step: RwSignal<Option<u32>>,
    /// Selected bubble ([`crate::protocol::anomaly::BubbleRowDto::index`] in the selected
    /// rank); the bubble list, the detail panel and the timeline all follow it.
    pub anomaly_bubble: RwSignal<Option<u32>>,
    /// The open cluster summary's view . Kept across loads made by "open this
    /// rank", so the cluster tab stays while a rank's own analysis is shown.
    pub cluster: RwSignal<Option<Arc<ClusterViewDto>>>,
    /// The summary rank (its [`crate::protocol::cluster_view::ClusterRankRow::index`]) whose
    /// folder is loaded by "open this rank", if any.
    pub cluster_open_rank: RwSignal<Option<u32>>,
    /// "Compare with…": side B and the comparison.
    pub compare: RwSignal<CompareStatus>,
    /// Side B's read progress per file of B: (bytes read, size).
    pub compare_read: RwSignal<BTreeMap<u32, (u64, u64)>>,
    /// The Communication tab: the report joined across ranks, or why it is not.
    pub comm: RwSignal<CommStatus>,
}

/// The Communication tab's report.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum CommStatus {
    /// Nothing to join (no rank folder with communication files, no GPU rank), or not yet.
    #[default]
    None,
    /// The workers' tables are being joined.
    Joining,
    /// The joined report's overview.
    Ready(Arc<crate::protocol::comm::CommOverviewDto>),
    /// The join failed.
    Failed(String),
}

impl AppState {
    /// Fresh signals (call once, under the root owner).
    pub fn new() -> Self {
        AppState {
            phase: RwSignal::new(Phase::Empty),
            files: RwSignal::new(Vec::new()),
            inventory: RwSignal::new(None),
            progress: RwSignal::new(BTreeMap::new()),
            file_ticks: Ticks::new(),
            rank_ticks: Ticks::new(),
            summaries: RwSignal::new(BTreeMap::new()),
            failures: RwSignal::new(BTreeMap::new()),
            finished: RwSignal::new(Default::default()),
            running: RwSignal::new(0),
            problems: RwSignal::new(Vec::new()),
            problems_total: RwSignal::new(0),
            tab: RwSignal::new(Tab::Inventory),
            selected_rank: RwSignal::new(None),
            status: RwSignal::new(String::new()),
            wasm_memory: RwSignal::new(BTreeMap::new()),
            started_ms: RwSignal::new(0.0),
            snapshots: RwSignal::new(BTreeMap::new()),
            selected_snapshot: RwSignal::new(None),
            anomaly: RwSignal::new(BTreeMap::new()),
            anomaly_rank: RwSignal::new(None),
            anomaly_step: RwSignal::new(None),
            anomaly_bubble: RwSignal::new(None),
            cluster: RwSignal::new(None),
            cluster_open_rank: RwSignal::new(None),
            compare: RwSignal::new(CompareStatus::None),
            compare_read: RwSignal::new(BTreeMap::new()),
            comm: RwSignal::new(CommStatus::None),
        }
    }

    /// Clears every result before a new load (the cluster view is cleared by the load that
    /// replaces it, [`crate::ui::client::EngineClient::load`], not by "open this rank").
    pub fn reset(&self) {
        self.phase.set(Phase::Inventory);
        self.inventory.set(None);
        self.progress.set(BTreeMap::new());
        self.summaries.set(BTreeMap::new());
        self.failures.set(BTreeMap::new());
        self.finished.set(Default::default());
        self.running.set(0);
        self.problems.set(Vec::new());
        self.problems_total.set(0);
        self.tab.set(Tab::Inventory);
        self.selected_rank.set(None);
        self.status.set(String::new());
        self.wasm_memory.set(BTreeMap::new());
        self.snapshots.set(BTreeMap::new());
        self.selected_snapshot.set(None);
        self.anomaly.set(BTreeMap::new());
        self.anomaly_rank.set(None);
        self.anomaly_step.set(None);
        self.anomaly_bubble.set(None);
        self.compare.set(CompareStatus::None);
        self.compare_read.set(BTreeMap::new());
        self.comm.set(CommStatus::None);
    }
}

impl AppState {
    /// What a tab says for rank folder `rank` while analysis `kind` has no result for it, as
    /// `(is_error, text)`: its failure; that the folder cannot run `kind` (what it lacks, from
    /// the inventory), so another folder must be picked; that the run was cancelled or ended
    /// without it; or, only while the run goes on, that it is being analysed.
    pub fn no_result(&self, kind: AnalysisKind, rank: u32) -> (bool, String) {
        if let Some(m) = self.failures.with(|f| f.get(&(kind, rank)).cloned()) {
            return (true, format!("This rank folder failed: {m}"));
        }
        let lacks = self.inventory.with(|inv| {
            let r = inv.as_ref()?.ranks.iter().find(|r| r.index == rank)?;
            let cap = r.analyses.iter().find(|a| a.analysis == kind);
            match cap {
                Some(c) if c.can_run => None,
                Some(c) if !c.missing.is_empty() => {
                    Some(format!("{}: {}", r.dir, c.missing.join("; ")))
                }
                _ => Some(format!("{}: not this kind of capture", r.dir)),
            }
        });
        if let Some(why) = lacks {
            return (
                false,
                format!("This analysis does not run on the selected rank folder ({why}). Pick a rank folder in the list above."),
            );
        }
        let text = match self.phase.get() {
            Phase::Cancelled => {
                "Not analysed: the run was cancelled before this rank folder finished. Run again to analyse it."
            }
            Phase::Done { .. } | Phase::Failed(_) => "No result for this rank folder.",
            _ if self.finished.with(|f| f.contains(&(kind, rank))) => {
                "No result for this rank folder."
            }
            _ => "Analysing this rank folder…",
        };
        (false, text.to_string())
    }
}

impl Default for AppState {
    fn default() -> Self {
        Self::new()
    }
}
