//! Floor 2 of the engine, **store**: one [`Store`] for every analysis of a drop. It runs the
//! targets of a [`Plan`] through `read` (each input file read once) and keeps their results;
//! queries and outcomes read the store, never the files again. It writes nothing: the writers
//! are `export`'s.
//!
//! ```text
//! run(inv, opener, plan, cb) -> Store        every planned target, in inventory order
//!   Store::run_target(inv, Rank(i), ..)      rank folder i: one read per file → RankEntry
//!   Store::run_target(inv, Snapshot(i), ..)  snapshot file i: one read → SnapshotEntry
//!   Store::run_target_only(inv, t, kinds, ..) the same, some of the plan's analyses
//!   Store::insert(t, entry)                  a target read elsewhere (another thread)
//!   engine::parallel::run_inventory          the same on every core (native only)
//! queries   Store::memory(i) / anomaly(i) / snapshot(i) → analysis types (views read these)
//!           Store::memory_run / anomaly_ranks / anomaly_cross / outcomes
//! ```
//!
//! May import: `engine::contract`, `engine::read` and the core layers. Never `export` or
//! `session`.

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::sync::Arc;

pub use crate::protocol::view_index::{part_index, split_index, view_order, MAX_PARTS, PART_BASE};

use crate::analysis::anomaly::cross_rank::{self, RankRow};
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::analysis::memory_result::{MemoryRun, RankMemory, RankStatus};
use crate::base::Problems;
use crate::engine::contract::{Analysis, AnalysisKind, Cancelled, OnProgress, Status, Target};
use crate::engine::read::memory;
use crate::engine::read::{
    run_target, Plan, RankAnalysis, RankEntry, SnapshotEntry, SnapshotRun, TargetEntry,
};
use crate::ingest::inventory::Inventory;
use crate::ingest::Opener;
use crate::parse::pickle::PickleErrorKind;

/// Runs every target of `inv` that `plan` has an analysis for ([`Plan::targets`]), in
/// inventory order, stopping after a cancelled one, and returns the store of their results:
/// the one entry point of the CLI commands, the fuzz targets and the tests
/// ([`crate::engine::parallel::run_inventory`] is the same on every core).
pub fn run(
    inv: &Inventory,
    opener: &dyn Opener,
    plan: Plan,
    on_progress: &mut OnProgress<'_>,
) -> Store {
    let mut store = Store::new(plan);
    store.run_inventory(inv, opener, on_progress);
    store
}

/// Results by target, for one [`Plan`].
#[derive(Default)]
pub struct Store {
    plan: Plan,
    ranks: BTreeMap<u32, RankEntry>,
    snapshots: BTreeMap<u32, SnapshotEntry>,
}

impl Store {
    /// An empty store for `plan`.
    pub fn new(plan: Plan) -> Store {
        Store {
            plan,
            ..Default::default()
        }
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Runs target `t` (see [`run_target`]) and keeps its results (replacing earlier ones).
    /// Returns false when `t` is not in `inv` or its analysis is not planned.
    pub fn run_target(
        &mut self,
        inv: &Inventory,
        t: Target,
        opener: &dyn Opener,
        on_progress: &mut OnProgress<'_>,
    ) -> bool {
        match run_target(&self.plan, inv, t, opener, on_progress) {
            Some(e) => {
                self.insert(t, e);
                true
            }
            None => false,
        }
    }

    /// Runs only the analyses of `kinds` (of the plan) on target `t` and keeps their results
    /// beside the target's other results ([`Store::insert`]): a worker asked for some
    /// analyses of a target now and others later. Returns false as [`Store::run_target`].
    pub fn run_target_only(
        &mut self,
        inv: &Inventory,
        t: Target,
        kinds: &[AnalysisKind],
        opener: &dyn Opener,
        on_progress: &mut OnProgress<'_>,
    ) -> bool {
        match run_target(&self.plan.only(kinds), inv, t, opener, on_progress) {
            Some(e) => {
                self.insert(t, e);
                true
            }
            None => false,
        }
    }

    /// Keeps the results of target `t` (from [`run_target`], e.g. on another thread). A rank
    /// folder's analyses are kept one by one: an analysis `entry` holds replaces the stored
    /// one, an analysis it does not hold keeps the stored one.
    pub fn insert(&mut self, t: Target, entry: TargetEntry) {
        match (t, entry) {
            (Target::Rank(i), TargetEntry::Rank(e)) => {
                let kept = self.ranks.entry(i).or_default();
                if e.memory.is_some() {
                    kept.memory = e.memory;
                }
                if e.anomaly.is_some() {
                    kept.anomaly = e.anomaly;
                }
                if e.comm.is_some() {
                    kept.comm = e.comm;
                }
            }
            (Target::Snapshot(i), TargetEntry::Snapshot(e)) => {
                self.snapshots.insert(i, e);
            }
            _ => {}
        }
    }

    /// Runs every target of `inv` with a planned analysis ([`Plan::targets`]) in inventory
    /// order, stopping after a cancelled one.
    pub fn run_inventory(
        &mut self,
        inv: &Inventory,
        opener: &dyn Opener,
        on_progress: &mut OnProgress<'_>,
    ) {
        for t in self.plan.targets(inv) {
            self.run_target(inv, t, opener, on_progress);
            if self.cancelled(t) {
                break;
            }
        }
    }

    /// True when target `t` was run and cancelled.
    pub fn cancelled(&self, t: Target) -> bool {
        match t {
            Target::Rank(i) => self.ranks.get(&i).is_some_and(RankEntry::cancelled),
            Target::Snapshot(i) => self.snapshots.get(&i).is_some_and(
                |s| matches!(s, Err(e) if matches!(e.kind, PickleErrorKind::Cancelled)),
            ),
            Target::Summary(_) => false,
        }
    }

    /// Rank folder `i`'s results, if it was run.
    pub fn rank(&self, i: u32) -> Option<&RankEntry> {
        self.ranks.get(&i)
    }

    /// Rank folder `i`'s memory result, if run.
    pub fn memory(&self, i: u32) -> Option<&RankMemory> {
        self.ranks.get(&i)?.memory.as_deref()
    }

    /// Rank folder `i`'s memory result shared (the memory view keeps it beside its rows).
    pub fn memory_shared(&self, i: u32) -> Option<Arc<RankMemory>> {
        self.ranks.get(&i)?.memory.clone()
    }

    /// The anomaly result of view index `i` ([`part_index`]: rank folder `i`, or a rank of a
    /// split merged trace), if run and not cancelled.
    pub fn anomaly(&self, i: u32) -> Option<&RankAnalysis> {
        let (folder, part) = split_index(i);
        let r = self.ranks.get(&folder)?.anomaly.as_ref()?.as_ref().ok()?;
        match part {
            None => Some(r),
            Some(k) => r.parts.get(k - 1),
        }
    }

    /// Snapshot file `i`'s result, if run.
    pub fn snapshot(&self, i: u32) -> Option<&SnapshotEntry> {
        self.snapshots.get(&i)
    }

    /// Snapshot file `i`'s run, to re-analyse it with other settings (the page's settings
    /// panel); `None` when it was not run or failed.
    pub fn snapshot_mut(&mut self, i: u32) -> Option<&mut SnapshotRun> {
        self.snapshots.get_mut(&i)?.as_mut().ok()
    }

    /// The status and problems of every analysis of every target run, in target order.
    pub fn outcomes(&self) -> Vec<(Target, AnalysisKind, Status, &Problems)> {
        let mut out = Vec::new();
        for (&i, e) in &self.ranks {
            if let Some(m) = &e.memory {
                out.push((
                    Target::Rank(i),
                    AnalysisKind::Memory,
                    m.status(),
                    m.problems(),
                ));
            }
            match &e.anomaly {
                Some(Ok(a)) => out.push((
                    Target::Rank(i),
                    AnalysisKind::Anomaly,
                    a.status(),
                    a.problems(),
                )),
                Some(Err(Cancelled)) => out.push((
                    Target::Rank(i),
                    AnalysisKind::Anomaly,
                    Status::Cancelled,
                    empty_problems(),
                )),
                None => {}
            }
        }
        for (&i, s) in &self.snapshots {
            let t = Target::Snapshot(i);
            match s {
                Ok(r) => out.push((t, AnalysisKind::Snapshot, r.status(), r.problems())),
                Err(e) => {
                    let st = match e.kind {
                        PickleErrorKind::Cancelled => Status::Cancelled,
                        _ => Status::Failed(e.to_string()),
                    };
                    out.push((t, AnalysisKind::Snapshot, st, empty_problems()));
                }
            }
        }
        out
    }

    /// The memory run over the stored ranks (ascend-memory.md §9.0 merge; rows shared, not copied) and its
    /// drop-level problems ([`memory::run_problems`]). `None` when memory is not planned.
    pub fn memory_run(&self, inv: &Inventory) -> Option<(MemoryRun, Problems)> {
        let opts = self.plan.memory.as_ref()?;
        let ranks: Vec<Arc<RankMemory>> = self
            .ranks
            .values()
            .filter_map(|e| e.memory.clone())
            .collect();
        let refs: Vec<&RankMemory> = ranks.iter().map(|r| &**r).collect();
        let problems = memory::run_problems(inv, opts, &refs);
        Some((MemoryRun::merge_shared(ranks), problems))
    }

    /// The anomaly results of every rank in inventory order, the ranks of a split merged
    /// trace after its first (gpu-traces.md §6); `Err` when a rank was cancelled.
    pub fn anomaly_ranks(&self) -> Result<Vec<&RankAnalysis>, Cancelled> {
        let mut out = Vec::new();
        for r in self.anomaly_targets()? {
            out.push(r);
            out.extend(r.parts.iter());
        }
        Ok(out)
    }

    /// The anomaly result of each target in inventory order (a split merged trace: its first
    /// rank, the others in its `parts`); `Err` when a rank was cancelled.
    fn anomaly_targets(&self) -> Result<Vec<&RankAnalysis>, Cancelled> {
        self.ranks
            .values()
            .filter_map(|e| e.anomaly.as_ref())
            .map(|r| r.as_ref().map_err(|c| *c))
            .collect()
    }

    /// The stored communication read of rank folder `i` (`None`: not run here).
    pub fn comm_of(
        &self,
        i: u32,
    ) -> Option<Result<&crate::engine::read::comm::RankCommRead, Cancelled>> {
        self.ranks
            .get(&i)?
            .comm
            .as_ref()
            .map(|r| r.as_deref().map_err(|c| *c))
    }

    /// The stored communication reads of every rank in inventory order; `Err` when a rank
    /// was cancelled.
    pub fn comm_ranks(&self) -> Result<Vec<&crate::engine::read::comm::RankCommRead>, Cancelled> {
        self.ranks
            .values()
            .filter_map(|e| e.comm.as_ref())
            .map(|r| r.as_deref().map_err(|c| *c))
            .collect()
    }

    /// The stored memory results with their rank folder index, in inventory order.
    pub fn memory_indexed(&self) -> Vec<(u32, &Arc<RankMemory>)> {
        self.ranks
            .iter()
            .filter_map(|(&i, e)| Some((i, e.memory.as_ref()?)))
            .collect()
    }

    /// The stored anomaly results with their view index ([`part_index`]), in
    /// [`Store::anomaly_ranks`]' order; `Err` for a cancelled rank.
    pub fn anomaly_indexed(&self) -> Vec<(u32, Result<&RankAnalysis, Cancelled>)> {
        let mut out = Vec::new();
        for (&i, e) in &self.ranks {
            let Some(r) = e.anomaly.as_ref() else {
                continue;
            };
            let r = r.as_ref().map_err(|c| *c);
            out.push((i, r));
            if let Ok(r) = r {
                out.extend(
                    r.parts
                        .iter()
                        .enumerate()
                        .filter_map(|(k, p)| Some((part_index(i, k + 1)?, Ok(p)))),
                );
            }
        }
        out
    }

    /// Moves the anomaly results out, in [`Store::anomaly_ranks`]' order; `Err` when a rank
    /// was cancelled.
    pub fn take_anomaly(&mut self) -> Result<Vec<RankAnalysis>, Cancelled> {
        let mut out = Vec::new();
        for e in self.ranks.values_mut() {
            if let Some(r) = e.anomaly.take() {
                let mut r = r?;
                let parts = std::mem::take(&mut r.parts);
                out.push(r);
                out.extend(parts);
            }
        }
        Ok(out)
    }

    /// The cross-rank table (anomaly.md §13.4) over the stored anomaly results.
    pub fn anomaly_cross(&self) -> Result<Vec<RankRow>, Cancelled> {
        let cfg = self
            .plan
            .anomaly
            .clone()
            .unwrap_or_else(AnomalyConfig::spec_defaults);
        Ok(cross_rows(&self.anomaly_ranks()?, &cfg))
    }
}

/// The cross-rank table (anomaly.md §13.4) over `ranks` (in their order), the slow-rank flag within
/// each role when the ranks hold more than one ([`cross_rank::flag_slow_by_role`]).
pub fn cross_rows<R: Borrow<RankAnalysis>>(ranks: &[R], cfg: &AnomalyConfig) -> Vec<RankRow> {
    let mut rows: Vec<RankRow> = ranks
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let r = r.borrow();
            cross_rank::row_of(r.meta.rank_id.unwrap_or(i as i64), &r.result)
        })
        .collect();
    cross_rank::flag_slow_by_role(&mut rows, &roles(ranks), cfg);
    rows
}

/// The role of each rank (`""` when unknown), the key the cross-rank rules group by.
pub fn roles<R: Borrow<RankAnalysis>>(ranks: &[R]) -> Vec<String> {
    ranks
        .iter()
        .map(|r| r.borrow().meta.role.clone().unwrap_or_default())
        .collect()
}

fn empty_problems() -> &'static Problems {
    static EMPTY: std::sync::OnceLock<Problems> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Problems::new)
}

impl Analysis for RankMemory {
    const KIND: AnalysisKind = AnalysisKind::Memory;
    fn status(&self) -> Status {
        match &self.status {
            RankStatus::Analysed => Status::Done,
            RankStatus::Failed(why) => Status::Failed(why.clone()),
            RankStatus::Cancelled => Status::Cancelled,
        }
    }
    fn problems(&self) -> &Problems {
        &self.problems
    }
    fn summary_line(&self) -> String {
        format!(
            "{}: {} memory rows, {} cpu_op events read",
            self.info.source_dir,
            self.len(),
            self.trace.cpu_ops
        )
    }
}

impl Analysis for RankAnalysis {
    const KIND: AnalysisKind = AnalysisKind::Anomaly;
    fn status(&self) -> Status {
        Status::Done
    }
    fn problems(&self) -> &Problems {
        &self.problems
    }
    fn summary_line(&self) -> String {
        format!(
            "{}: {} kernels, {} steps, {} bubbles",
            self.meta.rank_dir,
            self.kernels.len(),
            self.result.steps.len(),
            self.result.bubbles.len()
        )
    }
}

impl Analysis for SnapshotRun {
    const KIND: AnalysisKind = AnalysisKind::Snapshot;
    fn status(&self) -> Status {
        Status::Done
    }
    fn problems(&self) -> &Problems {
        &self.problems
    }
    fn summary_line(&self) -> String {
        format!(
            "{}: {} device(s) analysed",
            self.file.path,
            self.devices.len()
        )
    }
}
