//! The per-target result store (issue 9): every analysis of a drop runs through it, reads
//! each input file once ([`super::rank_pass`]) and keeps its results here; summaries,
//! queries and exports read the store, never the files again.
//!
//! ```text
//! Plan { memory, anomaly, snapshot }        which analyses, with their settings
//!   Store::run_target(inv, Rank(i), ..)      rank folder i: one read per file → RankEntry
//!   Store::run_target(inv, Snapshot(i), ..)  snapshot file i: one read → SnapshotEntry
//!   Store::run_target_only(inv, t, kinds, ..) the same, some of the plan's analyses
//!   Store::run_inventory(inv, opener, cb)    every target, in inventory order
//!   engine::parallel::run_inventory          the same on every core (native only)
//! queries   Store::memory(i) / anomaly(i) / snapshot(i) → analysis types (views read these)
//! exports   Store::write(inv, Export, w)     memory CSV/JSON/MD, anomaly JSON, snapshot JSON/MD
//!           Store::anomaly_reports(inv)      the `--report-dir` Markdown files
//! ```
//!
//! The CLI's `memory`, `anomaly`, `snapshot` and `analyze` commands, the worker's session
//! and the tests all go through this store, so their bytes are the same.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::Arc;

use super::anomaly::{self, Cancelled, RankAnalysis};
use super::contract::{Analysis, AnalysisKind, OnProgress, Progress, Status, Target};
use super::memory::{self, MemoryOptions};
use super::rank_pass::{self, RankEntry, RankPlan};
use super::snapshot::{SnapshotOptions, SnapshotRun};
use crate::analysis::anomaly::cross_rank::RankRow;
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::analysis::memory_result::{MemoryRun, RankMemory, RankStatus};
use crate::base::Problems;
use crate::ingest::inventory::{Inventory, RankFolder};
use crate::ingest::rank::CaptureKind;
use crate::ingest::Opener;
use crate::parse::pickle::{PickleError, PickleErrorKind};
use crate::report::memory_rows::{self, Columns};

/// Which analyses a store runs, with their settings (`None`: not run).
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Memory events of every rank folder the selection takes.
    pub memory: Option<MemoryOptions>,
    /// Steps and bubbles of every rank folder with a kernel source or a trace.
    pub anomaly: Option<AnomalyConfig>,
    /// Peaks of every snapshot pickle.
    pub snapshot: Option<SnapshotOptions>,
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
        }
    }

    /// The analyses that run on rank folder `folder`: memory when planned and selected
    /// ([`MemoryOptions::selects`]), anomaly when planned and [`anomaly::usable`].
    pub fn for_rank(&self, folder: &RankFolder) -> RankPlan<'_> {
        RankPlan {
            memory: self
                .memory
                .as_ref()
                .filter(|o| o.selects(folder) && folder.kind != CaptureKind::Kineto),
            anomaly: self.anomaly.as_ref().filter(|_| anomaly::usable(folder)),
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
        }
    }

    /// The targets of `inv` with at least one planned analysis, in inventory order (rank
    /// folders, then snapshot files).
    pub fn targets(&self, inv: &Inventory) -> Vec<Target> {
        let mut out: Vec<Target> = (0..inv.ranks.len())
            .filter(|&i| {
                let p = self.for_rank(&inv.ranks[i]);
                p.memory.is_some() || p.anomaly.is_some()
            })
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

/// A single-stream export from the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Export {
    /// Memory rows of every analysed rank (§9.0 order) as CSV (`proflens memory --format csv`).
    MemoryCsv(Columns),
    /// The same rows as a JSON array (`--format json`).
    MemoryJson(Columns),
    /// The per-rank memory summary as Markdown (`--format md`).
    MemoryMd,
    /// The anomaly JSON array over ranks (`proflens anomaly --out`).
    AnomalyJson,
    /// Snapshot file `i`'s JSON document (`proflens snapshot --json`, no final newline).
    SnapshotJson(u32),
    /// Snapshot file `i`'s Markdown report (`proflens snapshot --report`).
    SnapshotMd(u32),
}

/// Results by target, for one [`Plan`].
#[derive(Default)]
pub struct Store {
    plan: Plan,
    ranks: BTreeMap<u32, RankEntry>,
    snapshots: BTreeMap<u32, SnapshotEntry>,
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
            Some(TargetEntry::Rank(rank_pass::analyse_rank(
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
            Some(TargetEntry::Snapshot(super::snapshot::run(
                opener, file, opts, &mut prog,
            )))
        }
        // A cluster summary is read by the session's cluster view, not stored here.
        Target::Summary(_) => None,
    }
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

    /// Rank folder `i`'s anomaly result, if run and not cancelled.
    pub fn anomaly(&self, i: u32) -> Option<&RankAnalysis> {
        self.ranks.get(&i)?.anomaly.as_ref()?.as_ref().ok()
    }

    /// Snapshot file `i`'s result, if run.
    pub fn snapshot(&self, i: u32) -> Option<&SnapshotEntry> {
        self.snapshots.get(&i)
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

    /// The memory run over the stored ranks (§9.0 merge; rows shared, not copied) and its
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

    /// The anomaly results in inventory order; `Err` when a rank was cancelled.
    pub fn anomaly_ranks(&self) -> Result<Vec<&RankAnalysis>, Cancelled> {
        self.ranks
            .values()
            .filter_map(|e| e.anomaly.as_ref())
            .map(|r| r.as_ref().map_err(|c| *c))
            .collect()
    }

    /// The stored memory results with their rank folder index, in inventory order.
    pub fn memory_indexed(&self) -> Vec<(u32, &Arc<RankMemory>)> {
        self.ranks
            .iter()
            .filter_map(|(&i, e)| Some((i, e.memory.as_ref()?)))
            .collect()
    }

    /// The stored anomaly results with their rank folder index, in inventory order; `Err`
    /// for a cancelled rank.
    pub fn anomaly_indexed(&self) -> Vec<(u32, Result<&RankAnalysis, Cancelled>)> {
        self.ranks
            .iter()
            .filter_map(|(&i, e)| Some((i, e.anomaly.as_ref()?.as_ref().map_err(|c| *c))))
            .collect()
    }

    /// Moves the anomaly results out (inventory order); `Err` when a rank was cancelled.
    pub fn take_anomaly(&mut self) -> Result<Vec<RankAnalysis>, Cancelled> {
        self.ranks
            .values_mut()
            .filter_map(|e| e.anomaly.take())
            .collect()
    }

    /// The cross-rank table (§13.4) over the stored anomaly results.
    pub fn anomaly_cross(&self) -> Result<Vec<RankRow>, Cancelled> {
        let cfg = self
            .plan
            .anomaly
            .clone()
            .unwrap_or_else(AnomalyConfig::spec_defaults);
        Ok(anomaly::cross_rows(&self.anomaly_ranks()?, &cfg))
    }

    /// The `--report-dir` files of the anomaly analysis: per stored rank `(anomaly report
    /// name, text, architecture report name, text)`, as [`anomaly::rank_reports`].
    pub fn anomaly_reports(
        &self,
        inv: &Inventory,
    ) -> Result<Vec<(String, String, String, String)>, Cancelled> {
        let cfg = self
            .plan
            .anomaly
            .clone()
            .unwrap_or_else(AnomalyConfig::spec_defaults);
        let ranks = self.anomaly_ranks()?;
        let cross = anomaly::cross_rows(&ranks, &cfg);
        let views = super::gpu_report::straggler_views(&ranks);
        Ok((0..ranks.len())
            .filter_map(|i| anomaly::rank_reports(inv, &ranks, &cross, &views, &cfg, i))
            .collect())
    }

    /// The kernel tables of the stored GPU ranks (`kernels_<base>[_rank<N>].csv`, written
    /// next to the reports): `(file name, CSV bytes)` per GPU rank, as
    /// [`anomaly::kernel_csv_of`]; none for Ascend ranks.
    pub fn gpu_kernel_tables(&self, inv: &Inventory) -> Result<Vec<(String, Vec<u8>)>, Cancelled> {
        let ranks = self.anomaly_ranks()?;
        let several_roles =
            crate::analysis::anomaly::cross_rank::role_groups(&anomaly::roles(&ranks)).is_some();
        Ok(ranks
            .iter()
            .enumerate()
            .filter_map(|(i, r)| anomaly::kernel_csv_of(inv, r, i, ranks.len(), several_roles))
            .collect())
    }

    /// Writes export `what` from the stored results to `w` (the single commands' bytes).
    ///
    /// # Errors
    ///
    /// Those of `w`; `InvalidInput` when the analysis was not planned, a rank was
    /// cancelled or the snapshot file has no result (message in words).
    pub fn write(&self, inv: &Inventory, what: Export, w: &mut dyn Write) -> io::Result<()> {
        let missing = |why: &str| io::Error::new(io::ErrorKind::InvalidInput, why.to_string());
        match what {
            Export::MemoryCsv(_) | Export::MemoryJson(_) | Export::MemoryMd => {
                let (run, _) = self
                    .memory_run(inv)
                    .ok_or_else(|| missing("the memory analysis was not run"))?;
                match what {
                    Export::MemoryCsv(cols) => memory_rows::write_csv(&run, cols, w),
                    Export::MemoryJson(cols) => memory_rows::write_json(&run, cols, w),
                    _ => crate::report::memory_md::write_summary(&run, w),
                }
            }
            Export::AnomalyJson => {
                let cfg = self
                    .plan
                    .anomaly
                    .as_ref()
                    .ok_or_else(|| missing("the anomaly analysis was not run"))?;
                let ranks = self
                    .anomaly_ranks()
                    .map_err(|_| missing("the anomaly analysis was cancelled"))?;
                anomaly::write_json(w, &ranks, cfg)
            }
            Export::SnapshotJson(i) | Export::SnapshotMd(i) => {
                let opts = self
                    .plan
                    .snapshot
                    .as_ref()
                    .ok_or_else(|| missing("the snapshot analysis was not run"))?;
                let run = match self.snapshots.get(&i) {
                    Some(Ok(r)) => r,
                    Some(Err(e)) => return Err(missing(&e.to_string())),
                    None => return Err(missing("this snapshot file was not analysed")),
                };
                let text = if matches!(what, Export::SnapshotJson(_)) {
                    run.json_text(&opts.report).map_err(io::Error::other)?
                } else {
                    run.markdown(&opts.report)
                };
                w.write_all(text.as_bytes())?;
                w.flush()
            }
        }
    }
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
