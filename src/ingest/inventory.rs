//! What was dropped: rank folders, snapshot pickles and ignored files, from the
//! relative paths alone (ascend-memory.md §2.2, §3; formats.md §11; anomaly.md §1.1, §1.6).
//!
//! Step 1, [`Inventory::from_paths`], is instant: it never opens a file. Step 2,
//! `parse::metadata::read_side_files`, reads the small `profiler_info*.json` and
//! `profiler_metadata.json` files through an `Opener`, records their facts with
//! [`Inventory::set_side_info`] and re-runs [`Inventory::finalize`] (the rank id
//! cross-check, metadata roles, capabilities). All types serialize for the UI.

use std::collections::BTreeMap;

use serde::Serialize;

use super::kineto::{self, KinetoHead};
use super::rank::{
    capture_kind, resolve_rank, resolve_role, timestamp_key, CaptureKind, RankFacts, RankSource,
    RoleSource,
};
use super::summary_file::SummaryFile;
use super::InputFile;
use crate::base::{Position, Problem, Problems, Severity};

/// The output folder torch_npu writes analysed text files to.
pub const OUTPUT_DIR: &str = "ASCEND_PROFILER_OUTPUT";

/// Known file kinds inside a rank folder (formats.md §11, anomaly.md §1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// `profiler_info*.json` at the folder root.
    ProfilerInfo,
    /// `profiler_metadata.json` at the folder root.
    ProfilerMetadata,
    /// `operator_memory.csv`.
    OperatorMemory,
    /// `trace_view.json`.
    TraceView,
    /// `kernel_details.csv`.
    KernelDetails,
    /// `op_summary*.csv` (loose or under `PROF_*/mindstudio_profiler_output/`).
    OpSummary,
    /// `step_trace_time.csv`.
    StepTraceTime,
    /// `communication.json`.
    Communication,
    /// `communication_matrix.json`.
    CommunicationMatrix,
    /// `memory_record.csv`.
    MemoryRecord,
    /// `npu_module_mem.csv`.
    NpuModuleMem,
    /// `operator_details.csv`.
    OperatorDetails,
    /// `*.db` (DB export; detected, not parsed).
    Database,
    /// A PyTorch profiler (Kineto) trace, `.json` or `.json.gz` (formats.md §8).
    KinetoTrace,
}

/// Classifies one file by its path relative to the rank folder; `None` = not a known kind.
pub fn classify(rel: &str) -> Option<FileKind> {
    let segs: Vec<&str> = rel.split('/').filter(|s| !s.is_empty()).collect();
    let name = *segs.last()?;
    let depth = segs.len();
    let in_output = depth >= 2 && segs[depth - 2] == OUTPUT_DIR;
    let at_root = depth == 1;
    if (at_root || in_output) && name.starts_with("profiler_info") && name.ends_with(".json") {
        return Some(FileKind::ProfilerInfo);
    }
    if (at_root || in_output) && name == "profiler_metadata.json" {
        return Some(FileKind::ProfilerMetadata);
    }
    let in_msprof_out = depth >= 3
        && segs[depth - 2] == "mindstudio_profiler_output"
        && segs[depth - 3].starts_with("PROF_");
    if name.starts_with("op_summary")
        && name.ends_with(".csv")
        && (in_output || at_root || in_msprof_out)
    {
        return Some(FileKind::OpSummary);
    }
    if !(in_output || at_root) {
        return None;
    }
    Some(match name {
        "operator_memory.csv" => FileKind::OperatorMemory,
        "trace_view.json" => FileKind::TraceView,
        "kernel_details.csv" => FileKind::KernelDetails,
        "step_trace_time.csv" => FileKind::StepTraceTime,
        "communication.json" => FileKind::Communication,
        "communication_matrix.json" => FileKind::CommunicationMatrix,
        "memory_record.csv" => FileKind::MemoryRecord,
        "npu_module_mem.csv" => FileKind::NpuModuleMem,
        "operator_details.csv" => FileKind::OperatorDetails,
        n if n.ends_with(".db") => FileKind::Database,
        _ => return None,
    })
}

/// One known file of a rank folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RankFile {
    /// Path relative to the dropped root (what the `Opener` takes).
    pub path: String,
    /// Path relative to the rank folder.
    pub rel: String,
    /// What it is.
    pub kind: FileKind,
    /// Size in bytes.
    pub size: u64,
}

/// Which analysis a readiness line is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Analysis {
    /// Ascend memory events (ascend-memory.md).
    Memory,
    /// Steps, bubbles, anomalies (anomaly.md).
    Anomaly,
}

/// Whether one analysis can run on a rank, and exactly what is missing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Readiness {
    /// The analysis.
    pub analysis: Analysis,
    /// True when the required inputs are present.
    pub can_run: bool,
    /// Required inputs that are absent (each names the file and how to get it).
    pub missing: Vec<String>,
    /// Optional inputs that are absent, and what the result lacks because of it.
    pub degraded: Vec<String>,
}

/// Facts read from `profiler_info*.json` / `profiler_metadata.json` (formats.md §7.1–7.2).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SideInfo {
    /// True once step 2 read the side files.
    pub read: bool,
    /// `config.experimental_config._profiler_level` (`Level0`/`Level1`/`Level2`).
    pub profiler_level: Option<String>,
    /// `_export_type` as a list (`text`, `db`), string or list in the file.
    pub export_type: Vec<String>,
    /// `config.common_config.with_stack`.
    pub with_stack: Option<bool>,
    /// `config.common_config.profile_memory`.
    pub profile_memory: Option<bool>,
    /// `config.common_config.record_shapes`.
    pub record_shapes: Option<bool>,
    /// `torch_npu_version` (newer files only).
    pub torch_npu_version: Option<String>,
    /// `cann_version` (newer files only).
    pub cann_version: Option<String>,
    /// `rank_id` field of `profiler_info` (int or digit string).
    pub info_rank_field: Option<i64>,
    /// Truthy top-level `role` of `profiler_metadata.json`.
    pub metadata_role: Option<String>,
    /// A Kineto trace's head (GPU ranks only), once step 2 read it.
    pub kineto: Option<KinetoHead>,
}

/// A finding of the inventory, serializable for the UI (convertible to [`Problem`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Note {
    /// How bad.
    pub severity: Severity,
    /// Stable code (ascend-memory.md §10.3 `MEM-DISC-*`, `MEM-FILE-*`).
    pub code: &'static str,
    /// File or folder it is about (relative to the dropped root).
    pub file: String,
    /// Human message.
    pub message: String,
}

impl Note {
    fn new(severity: Severity, code: &'static str, file: &str, message: String) -> Note {
        Note {
            severity,
            code,
            file: file.to_string(),
            message,
        }
    }
    /// The same finding as a [`Problem`].
    pub fn to_problem(&self) -> Problem {
        Problem::new(
            self.severity,
            self.code,
            Position::file(self.file.as_str()),
            self.message.clone(),
        )
    }
}

/// One capture of one rank (a `*ascend_pt` folder, or loose files standing in for one).
#[derive(Clone, Debug, Serialize)]
pub struct RankFolder {
    /// Path of the folder relative to the dropped root (`""` when the root itself, or loose files at the root).
    pub dir: String,
    /// Kind of capture folder.
    pub kind: CaptureKind,
    /// Role (§3.3).
    pub role: String,
    /// Where the role came from.
    pub role_source: RoleSource,
    /// Rank id (§3.1); `None` when undeterminable (the folder is skipped).
    pub rank_id: Option<i64>,
    /// Where the rank id came from.
    pub rank_source: RankSource,
    /// Parity ordering key of the folder name (§3.2).
    pub sort_key: String,
    /// 0-based position among the folders of the same `(role, rank)` (§3.2).
    pub source_index: u32,
    /// The known files, sorted by path.
    pub files: Vec<RankFile>,
    /// Count and bytes of the other files inside the folder (raw data, `FRAMEWORK/`, …).
    pub other_files: u64,
    /// Total bytes of the other files.
    pub other_bytes: u64,
    /// Facts from the side files (after step 2).
    pub side: SideInfo,
    /// Per analysis: can it run, what is missing.
    pub analyses: Vec<Readiness>,
    /// Findings about this folder.
    pub notes: Vec<Note>,
    #[serde(skip)]
    facts: RankFacts,
}

impl RankFolder {
    /// The first file of `kind` (lexicographic path order), if present.
    pub fn file(&self, kind: FileKind) -> Option<&RankFile> {
        self.files.iter().find(|f| f.kind == kind)
    }
    /// All files of `kind`, in path order.
    pub fn files_of(&self, kind: FileKind) -> impl Iterator<Item = &RankFile> {
        self.files.iter().filter(move |f| f.kind == kind)
    }
    /// Readiness of `analysis`.
    pub fn readiness(&self, analysis: Analysis) -> Option<&Readiness> {
        self.analyses.iter().find(|r| r.analysis == analysis)
    }
    /// A short label for messages: the folder path, or `(dropped files)`.
    pub fn label(&self) -> &str {
        if self.dir.is_empty() {
            "(dropped files)"
        } else {
            &self.dir
        }
    }
}

/// A file outside every rank folder, with why it is not used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IgnoredFile {
    /// Path relative to the dropped root.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Why it is ignored.
    pub reason: String,
}

/// Everything found in one drop.
#[derive(Clone, Debug, Serialize, Default)]
pub struct Inventory {
    /// Rank folders sorted by `(role, rank_id, source_index)`; undeterminable ranks last.
    pub ranks: Vec<RankFolder>,
    /// Snapshot pickle candidates (`*.pickle`, `*.pkl`, optionally `.gz`), separate inputs (torch-snapshot.md).
    pub snapshots: Vec<InputFile>,
    /// Files outside any rank folder, with the reason.
    pub ignored: Vec<IgnoredFile>,
    /// Cluster summary files (`ingest::summary_file`), found in step 2.
    pub summaries: Vec<SummaryFile>,
    /// Drop-level findings (e.g. `MEM-DISC-001`).
    pub notes: Vec<Note>,
}

fn is_snapshot_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let n = n.strip_suffix(".gz").unwrap_or(&n);
    n.ends_with(".pickle") || n.ends_with(".pkl")
}

/// Names that make a folder without capture folder stand in for one rank (§2.2 loose files).
fn is_loose_data_name(name: &str) -> bool {
    matches!(
        classify(name),
        Some(
            FileKind::OperatorMemory
                | FileKind::TraceView
                | FileKind::KernelDetails
                | FileKind::OpSummary
                | FileKind::StepTraceTime
        )
    )
}

fn ignore_reason(segs: &[&str]) -> String {
    let name = segs.last().copied().unwrap_or("");
    if segs.iter().any(|s| s.starts_with("PROF_")) {
        "inside an msprof PROF_* folder without a torch_npu capture folder: not supported yet"
            .into()
    } else if name.ends_with(".db") {
        "database export outside a capture folder: not parsed".into()
    } else if kineto::is_candidate_name(name) || name.to_ascii_lowercase().contains("_et.json") {
        "Chakra execution trace (`_et.json`): not a PyTorch profiler trace".into()
    } else {
        "not inside a folder ending in \"ascend_pt\" (or \"ascend_ms\")".into()
    }
}

/// A slot's key: a rank folder's directory with `false`, a Kineto trace's own file path with
/// `true`. The flag keeps the two apart when a list names one path both as a file and as a
/// folder (`a.json` and `a.json/ASCEND_PROFILER_OUTPUT/x`): no file system holds both, but a
/// hand-made list can, and a folder's files must not land in (and vanish with) the trace's slot.
type SlotKey = (String, bool);

struct Slot {
    dir: String,
    kind: CaptureKind,
    parent: Option<String>,
    files: Vec<RankFile>,
    other_files: u64,
    other_bytes: u64,
}

impl Inventory {
    /// Step 1: classify the dropped files by their relative `/`-separated paths only.
    ///
    /// Rank folders are the innermost path segments ending in `ascend_pt` (or `ascend_ms`);
    /// else the folder holding an `ASCEND_PROFILER_OUTPUT/` folder; else a folder that directly
    /// holds data files (`operator_memory.csv`, `trace_view.json`, …: loose files, one rank).
    /// Rank id and role use the names only (`profiler_info_<N>.json`, folder tokens, parent
    /// folder); [`Inventory::set_side_info`] + [`Inventory::finalize`] refine them.
    pub fn from_paths(files: &[InputFile]) -> Inventory {
        let mut slots: BTreeMap<SlotKey, Slot> = BTreeMap::new();
        let mut inv = Inventory::default();
        let mut pending: Vec<(&InputFile, Vec<&str>)> = Vec::new();
        let mut sorted: Vec<&InputFile> = files.iter().collect();
        crate::base::sort::sort_by(&mut sorted, |a, b| a.path.cmp(&b.path));
        let mut previous: Option<&str> = None;
        for f in sorted {
            // The same path given twice (a hand-made list, never a browser drop or a folder walk)
            // is one file: the repeat is ignored, said so, and never overwrites the first.
            if previous == Some(f.path.as_str()) {
                inv.ignored.push(IgnoredFile {
                    path: f.path.clone(),
                    size: f.size,
                    reason: "the same path was given twice; read once".into(),
                });
                continue;
            }
            previous = Some(f.path.as_str());
            let segs: Vec<&str> = f
                .path
                .split('/')
                .filter(|s| !s.is_empty() && *s != ".")
                .collect();
            let Some(name) = segs.last().copied() else {
                continue;
            };
            if is_snapshot_name(name) {
                inv.snapshots.push(f.clone());
                continue;
            }
            let dirs = &segs[..segs.len() - 1];
            let cap = dirs.iter().rposition(|d| capture_kind(d).is_some());
            let out = dirs.iter().rposition(|d| *d == OUTPUT_DIR);
            let (cut, kind) = match (cap, out) {
                (Some(i), _) => (
                    i + 1,
                    capture_kind(dirs[i]).unwrap_or(CaptureKind::AscendPt),
                ),
                (None, Some(j)) => (j, CaptureKind::LooseOutput),
                (None, None) => {
                    if kineto::is_trace_name(name)
                        || (kineto::is_candidate_name(name) && classify(name).is_none())
                    {
                        add_kineto(&mut slots, f, &segs);
                    } else {
                        pending.push((f, segs.clone()));
                    }
                    continue;
                }
            };
            add_to_slot(&mut slots, f, &segs, cut, kind);
        }
        // Loose files: a folder directly holding data files becomes one rank (§2.2).
        let mut loose_dirs: Vec<String> = pending
            .iter()
            .filter(|(_, segs)| segs.last().is_some_and(|n| is_loose_data_name(n)))
            .map(|(_, segs)| segs[..segs.len() - 1].join("/"))
            .collect();
        crate::base::sort::sort(&mut loose_dirs);
        loose_dirs.dedup();
        for (f, segs) in pending {
            let dir = segs[..segs.len() - 1].join("/");
            if let Some(slot) = slots
                .get(&(dir.clone(), false))
                .filter(|s| s.kind == CaptureKind::LooseOutput)
            {
                let kind = slot.kind;
                add_to_slot(&mut slots, f, &segs, segs.len() - 1, kind);
            } else if loose_dirs.binary_search(&dir).is_ok() {
                add_to_slot(
                    &mut slots,
                    f,
                    &segs,
                    segs.len() - 1,
                    CaptureKind::LooseFiles,
                );
            } else {
                inv.ignored.push(IgnoredFile {
                    path: f.path.clone(),
                    size: f.size,
                    reason: ignore_reason(&segs),
                });
            }
        }
        for (_, s) in slots {
            let folder_name = s.dir.rsplit('/').next().unwrap_or("").to_string();
            let info_files = s
                .files
                .iter()
                .filter(|f| f.kind == FileKind::ProfilerInfo && !f.rel.contains('/'))
                .map(|f| f.rel.clone())
                .collect();
            inv.ranks.push(RankFolder {
                dir: s.dir,
                kind: s.kind,
                role: String::new(),
                role_source: RoleSource::Unknown,
                rank_id: None,
                rank_source: RankSource::Unknown,
                sort_key: String::new(),
                source_index: 0,
                files: s.files,
                other_files: s.other_files,
                other_bytes: s.other_bytes,
                side: SideInfo::default(),
                analyses: Vec::new(),
                notes: Vec::new(),
                facts: RankFacts {
                    folder_name,
                    info_files,
                    info_rank_field: None,
                    metadata_role: None,
                    parent_name: s.parent,
                },
            });
        }
        inv.finalize();
        inv
    }

    /// Records the side-file facts of rank `index` (step 2); call [`Inventory::finalize`] after.
    pub fn set_side_info(&mut self, index: usize, side: SideInfo) {
        if let Some(r) = self.ranks.get_mut(index) {
            r.facts.info_rank_field = side.info_rank_field;
            r.facts.metadata_role = side.metadata_role.clone();
            r.side = side;
        }
    }

    /// Adds a finding to rank `index` (used by step 2 for unreadable side files).
    pub fn add_rank_note(
        &mut self,
        index: usize,
        severity: Severity,
        code: &'static str,
        file: &str,
        message: String,
    ) {
        if let Some(r) = self.ranks.get_mut(index) {
            r.notes.push(Note::new(severity, code, file, message));
        }
    }

    /// (Re)computes rank ids, roles, ordering, readiness and the derived notes from the facts.
    /// Notes added by [`Inventory::add_rank_note`] are kept.
    pub fn finalize(&mut self) {
        let single = self.ranks.len() == 1;
        self.notes.retain(|n| !n.code.starts_with("MEM-DISC"));
        let single = single && self.ranks.iter().all(|r| r.kind != CaptureKind::Kineto);
        kineto_finalize(&mut self.ranks);
        for r in self
            .ranks
            .iter_mut()
            .filter(|r| r.kind != CaptureKind::Kineto)
        {
            r.notes.retain(|n| !n.code.starts_with("MEM-DISC"));
            let d = resolve_rank(&r.facts, single);
            let (role, role_source) = resolve_role(&r.facts);
            r.rank_id = d.rank_id;
            r.rank_source = d.source;
            r.role = role;
            r.role_source = role_source;
            r.sort_key = timestamp_key(&r.facts.folder_name);
            let label = r.label().to_string();
            if let Some(first) = &d.several_info_files {
                r.notes.push(Note::new(
                    Severity::Warning,
                    "MEM-DISC-004",
                    &label,
                    format!("Several profiler_info files in {label}; using {first}"),
                ));
            }
            match (d.rank_id, d.source) {
                (None, _) => r.notes.push(Note::new(
                    Severity::Error,
                    "MEM-DISC-003",
                    &label,
                    format!("Cannot determine rank id for {label}; skipped"),
                )),
                (Some(id), s) if s != RankSource::InfoFileName => r.notes.push(Note::new(
                    Severity::Warning,
                    "MEM-DISC-002",
                    &label,
                    format!("Rank id {id} taken from {} for {label}", s.describe()),
                )),
                _ => {}
            }
            if let Some((a, b)) = d.mismatch {
                r.notes.push(Note::new(
                    Severity::Warning,
                    "MEM-DISC-005",
                    &label,
                    format!("rank id mismatch: file name says {a}, rank_id field says {b}"),
                ));
            }
            if r.role_source == RoleSource::Unknown && r.kind != CaptureKind::LooseFiles {
                r.notes.push(Note::new(
                    Severity::Info,
                    "MEM-DISC-006",
                    &label,
                    "Drop the parent folder to get role names.".into(),
                ));
            }
            match r.kind {
                CaptureKind::LooseFiles => r.notes.push(Note::new(Severity::Warning, "MEM-DISC-007", &label,
                    format!("Files dropped without their capture folder ({label}) are treated as one rank (role unknown)"))),
                CaptureKind::AscendMs => r.notes.push(Note::new(Severity::Info, "MEM-DISC-008", &label,
                    format!("{label} is a MindSpore capture (ascend_ms): read with the torch_npu rules, an extension"))),
                _ => {}
            }
            r.analyses = vec![memory_readiness(r), anomaly_readiness(r)];
        }
        // Ordering (§3.2): by (role, rank), then the timestamp key, then the relative path.
        crate::base::sort::sort_by(&mut self.ranks, |a, b| {
            (a.rank_id.is_none(), &a.role, a.rank_id, &a.sort_key, &a.dir).cmp(&(
                b.rank_id.is_none(),
                &b.role,
                b.rank_id,
                &b.sort_key,
                &b.dir,
            ))
        });
        let mut prev: Option<(String, Option<i64>)> = None;
        let mut idx = 0u32;
        for r in &mut self.ranks {
            let key = (r.role.clone(), r.rank_id);
            idx = if prev.as_ref() == Some(&key) {
                idx + 1
            } else {
                0
            };
            r.source_index = idx;
            prev = Some(key);
        }
        if self.ranks.is_empty() && self.snapshots.is_empty() && self.summaries.is_empty() {
            self.notes.push(Note::new(
                Severity::Error,
                "MEM-DISC-001",
                "",
                format!(
                    "No folder ending in \"ascend_pt\" and no PyTorch profiler trace found under {}",
                    self.root_label()
                ),
            ));
        }
    }

    /// After step 2: Kineto candidates whose head is a cluster summary's move to the summaries
    /// (`ingest::summary_file`; a version this build cannot read is a `CLU-001` error); the
    /// others whose head is not a PyTorch profiler trace move to the ignored files, with the
    /// reason (`ingest::kineto`).
    pub fn drop_non_traces(&mut self) {
        let (keep, gone): (Vec<RankFolder>, Vec<RankFolder>) =
            std::mem::take(&mut self.ranks).into_iter().partition(|r| {
                r.kind != CaptureKind::Kineto || r.side.kineto.as_ref().is_none_or(|h| h.is_trace)
            });
        self.ranks = keep;
        for r in gone {
            if let Some(head) = r.side.kineto.as_ref().and_then(|h| h.summary.clone()) {
                for f in r.files {
                    let file = SummaryFile {
                        path: f.path,
                        size: f.size,
                        head: head.clone(),
                    };
                    if let Some(why) = file.refusal() {
                        self.notes
                            .push(Note::new(Severity::Error, "CLU-001", &file.path, why));
                    }
                    self.summaries.push(file);
                }
                continue;
            }
            let reason = r
                .side
                .kineto
                .and_then(|h| h.not_trace_reason)
                .unwrap_or_else(|| "not a PyTorch profiler trace".into());
            for f in r.files {
                self.ignored.push(IgnoredFile {
                    path: f.path,
                    size: f.size,
                    reason: reason.clone(),
                });
            }
        }
        crate::base::sort::sort_by(&mut self.ignored, |a, b| a.path.cmp(&b.path));
        self.finalize();
    }

    /// The dropped root as shown in messages: the common first path segment, or `the dropped files`.
    pub fn root_label(&self) -> String {
        let mut firsts = self
            .ranks
            .iter()
            .map(|r| r.dir.as_str())
            .chain(self.ignored.iter().map(|f| f.path.as_str()))
            .map(|p| p.split('/').next().unwrap_or(""));
        match firsts.next() {
            Some(f) if !f.is_empty() && firsts.all(|g| g == f) => f.to_string(),
            _ => "the dropped files".to_string(),
        }
    }

    /// Every note of the drop and of its ranks, as [`Problems`].
    pub fn problems(&self) -> Problems {
        let mut p = Problems::new();
        for n in self
            .notes
            .iter()
            .chain(self.ranks.iter().flat_map(|r| r.notes.iter()))
        {
            p.push(n.to_problem());
        }
        p
    }
}

/// One Kineto trace = one slot, keyed by the file's own path (`ingest::kineto`).
fn add_kineto(slots: &mut BTreeMap<SlotKey, Slot>, f: &InputFile, segs: &[&str]) {
    let name = segs.last().copied().unwrap_or("").to_string();
    slots.insert(
        (f.path.clone(), true),
        Slot {
            dir: f.path.clone(),
            kind: CaptureKind::Kineto,
            parent: (segs.len() >= 2).then(|| segs[segs.len() - 2].to_string()),
            files: vec![RankFile {
                path: f.path.clone(),
                rel: name,
                kind: FileKind::KinetoTrace,
                size: f.size,
            }],
            other_files: 0,
            other_bytes: 0,
        },
    );
}

fn add_to_slot(
    slots: &mut BTreeMap<SlotKey, Slot>,
    f: &InputFile,
    segs: &[&str],
    cut: usize,
    kind: CaptureKind,
) {
    let dir = segs[..cut].join("/");
    let rel = segs[cut..].join("/");
    let slot = slots.entry((dir.clone(), false)).or_insert_with(|| Slot {
        parent: if cut >= 2 && kind != CaptureKind::LooseFiles {
            Some(segs[cut - 2].to_string())
        } else {
            None
        },
        dir,
        kind,
        files: Vec::new(),
        other_files: 0,
        other_bytes: 0,
    });
    match classify(&rel) {
        Some(k) => slot.files.push(RankFile {
            path: f.path.clone(),
            rel,
            kind: k,
            size: f.size,
        }),
        None => {
            slot.other_files += 1;
            slot.other_bytes += f.size;
        }
    }
}

/// Rank, role, notes and readiness of the Kineto ranks (`ingest::kineto` rules).
fn kineto_finalize(ranks: &mut [RankFolder]) {
    let mut used: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut pending: Vec<usize> = Vec::new();
    for (i, r) in ranks.iter_mut().enumerate() {
        if r.kind != CaptureKind::Kineto {
            continue;
        }
        r.notes.retain(|n| !n.code.starts_with("GPU-DISC"));
        (r.role, r.role_source) = match r.facts.parent_name.as_ref().filter(|p| !p.is_empty()) {
            Some(p) => (p.clone(), RoleSource::ParentFolder),
            None => ("unknown".to_string(), RoleSource::Unknown),
        };
        let head = r.side.kineto.as_ref();
        let name = r.files.first().map(|f| f.rel.as_str()).unwrap_or("");
        let (rank, source) = match (head.and_then(|h| h.rank), kineto::rank_from_file_name(name)) {
            (Some(k), _) => (Some(k), RankSource::DistributedInfo),
            (None, Some(k)) => (Some(k), RankSource::FileName),
            (None, None) => (None, RankSource::Order),
        };
        r.rank_id = rank;
        r.rank_source = source;
        r.sort_key = String::new();
        match rank {
            Some(k) => used.entry(r.role.clone()).or_default().push(k),
            None => pending.push(i),
        }
        r.analyses = vec![
            Readiness {
                analysis: Analysis::Memory,
                can_run: false,
                missing: vec!["Ascend operator_memory.csv: a PyTorch profiler trace has [memory] counters only (see the steps & bubbles view)".into()],
                degraded: Vec::new(),
            },
            Readiness {
                analysis: Analysis::Anomaly,
                can_run: true,
                missing: Vec::new(),
                degraded: Vec::new(),
            },
        ];
    }
    for i in pending {
        let r = &mut ranks[i];
        let taken = used.entry(r.role.clone()).or_default();
        let k = (0..).find(|k| !taken.contains(k)).unwrap_or(0);
        taken.push(k);
        r.rank_id = Some(k);
        let label = r.label().to_string();
        r.notes.push(Note::new(
            Severity::Warning,
            "GPU-DISC-001",
            &label,
            format!(
                "Rank {k} of {label} taken from {}",
                RankSource::Order.describe()
            ),
        ));
    }
    // Several traces of one rank (several files, steps or restarts): say so on each.
    let mut count: BTreeMap<(String, i64), usize> = BTreeMap::new();
    for r in ranks.iter().filter(|r| r.kind == CaptureKind::Kineto) {
        *count
            .entry((r.role.clone(), r.rank_id.unwrap_or(-1)))
            .or_default() += 1;
    }
    for r in ranks.iter_mut().filter(|r| r.kind == CaptureKind::Kineto) {
        let n = count[&(r.role.clone(), r.rank_id.unwrap_or(-1))];
        if n > 1 {
            let label = r.label().to_string();
            r.notes.push(Note::new(
                Severity::Info,
                "GPU-DISC-002",
                &label,
                format!(
                    "rank {} of role {} has {n} traces; each is analysed on its own",
                    r.rank_id.unwrap_or(-1),
                    r.role
                ),
            ));
        }
    }
}

fn memory_readiness(r: &RankFolder) -> Readiness {
    let mut missing = Vec::new();
    let mut degraded = Vec::new();
    if r.rank_id.is_none() {
        missing.push(
            "a rank id (profiler_info_<N>.json, a rank_id field, or a rank<N> folder name)".into(),
        );
    }
    if r.file(FileKind::OperatorMemory).is_none() {
        let mut m = format!("{OUTPUT_DIR}/operator_memory.csv (profile with profile_memory=True, then analyse with export_type=text)");
        if r.side.export_type.iter().any(|t| t == "db")
            && !r.side.export_type.iter().any(|t| t == "text")
        {
            m.push_str("; this capture was exported as a database (export_type=db)");
        }
        missing.push(m);
    }
    if r.file(FileKind::TraceView).is_none() {
        degraded.push(format!(
            "{OUTPUT_DIR}/trace_view.json missing: rows get no call stacks (and the parity export, which needs them, leaves this rank out)"
        ));
    } else if r.side.with_stack == Some(false) {
        degraded.push("recorded with with_stack=False: trace_view.json has no call stacks".into());
    }
    if r.side.profile_memory == Some(false) {
        degraded.push("recorded with profile_memory=False".into());
    }
    Readiness {
        analysis: Analysis::Memory,
        can_run: missing.is_empty(),
        missing,
        degraded,
    }
}

fn anomaly_readiness(r: &RankFolder) -> Readiness {
    let mut missing = Vec::new();
    let mut degraded = Vec::new();
    let kd = r.file(FileKind::KernelDetails).is_some();
    let os = r.file(FileKind::OpSummary).is_some();
    let tv = r.file(FileKind::TraceView).is_some();
    if r.rank_id.is_none() {
        missing.push(
            "a rank id (profiler_info_<N>.json, a rank_id field, or a rank<N> folder name)".into(),
        );
    }
    if !kd && !os && !tv {
        missing.push(format!(
            "{OUTPUT_DIR}/kernel_details.csv (or an op_summary_*.csv, or trace_view.json with device events)"
        ));
    } else if !kd && os {
        degraded.push("no kernel_details.csv: kernels from op_summary".into());
    } else if !kd {
        degraded
            .push("no kernel_details.csv: kernels from the trace_view.json device lanes".into());
    }
    if !tv {
        degraded.push(format!(
            "{OUTPUT_DIR}/trace_view.json missing: no step markers and no host evidence"
        ));
    }
    if r.file(FileKind::Communication).is_none() {
        degraded.push("communication.json missing: communication totals from kernels only".into());
    }
    Readiness {
        analysis: Analysis::Anomaly,
        can_run: missing.is_empty(),
        missing,
        degraded,
    }
}

#[cfg(test)]
mod tests;
