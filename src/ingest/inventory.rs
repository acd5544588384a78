//! What was dropped: rank folders, snapshot pickles and ignored files, from the
//! relative paths alone (ascend-memory.md §2.2, §3; formats.md §11; anomaly.md §1.1, §1.6).
//!
//! Step 1, [`Inventory::from_paths`], is instant: it never opens a file. Step 2,
//! `parse::metadata::read_side_files`, reads the small `profiler_info*.json` and
//! `profiler_metadata.json` files through an `Opener`, records their facts with
//! [`Inventory::set_side_info`] and re-runs [`Inventory::finalize`] (the rank id
//! cross-check, metadata roles, capabilities). All types serialize for the UI.

use serde::Serialize;

use super::kineto::KinetoHead;
use super::rank::{CaptureKind, RankFacts, RankSource, RoleSource};
use super::summary_file::SummaryFile;
use super::InputFile;
use crate::base::{Position, Problem, Problems, Severity};

mod finalize;
mod paths;
mod unused;

pub use unused::codes as unused_codes;

/// Files inside a rank folder that no analysis reads, named per folder (the rest counted).
pub const OTHER_NAMES: usize = 5;

/// The output folder torch_npu writes analysed text files to.
pub const OUTPUT_DIR: &str = "ASCEND_PROFILER_OUTPUT";

/// Note code: a GPU trace's rank id taken from the order of the traces (no `distributedInfo`).
pub const RANK_FROM_ORDER: &str = "GPU-DISC-001";

/// Note code: a GPU trace set apart from the other traces of its folder, as a role of its own,
/// because its head states another device or world size (another run, not a peer).
pub const SEPARATE_RUN: &str = "GPU-DISC-006";

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
    /// `ascend_pytorch_profiler[_N].db` in `ASCEND_PROFILER_OUTPUT/`: the rank's DB export
    /// (ascend-db.md §1.1).
    AscendDb,
    /// `analysis.db` in `ASCEND_PROFILER_OUTPUT/` (step trace time, communication).
    AnalysisDb,
    /// Any other `*.db` (detected, not parsed).
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
        n if in_output && is_ascend_db_name(n) => FileKind::AscendDb,
        "analysis.db" if in_output => FileKind::AnalysisDb,
        n if n.ends_with(".db") => FileKind::Database,
        _ => return None,
    })
}

/// `ascend_pytorch_profiler.db` or `ascend_pytorch_profiler_<digits>.db` (ascend-db.md §1.1).
pub fn is_ascend_db_name(name: &str) -> bool {
    match name
        .strip_prefix("ascend_pytorch_profiler")
        .and_then(|r| r.strip_suffix(".db"))
    {
        Some("") => true,
        Some(r) => r
            .strip_prefix('_')
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())),
        None => false,
    }
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
    /// Communication across ranks (communication.md): `proflens comm`, `comm.json`.
    Communication,
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

/// One group of `profiler_metadata.json` `parallel_group_info`: id, `group_name`,
/// `global_ranks` as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupInfo {
    /// The group id (`group_name_19`).
    pub id: String,
    /// `group_name` (`dp`, `tp`, `pp`, …).
    pub name: String,
    /// `global_ranks`.
    pub global_ranks: Vec<i64>,
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
    /// `config.common_config.with_flops`.
    pub with_flops: Option<bool>,
    /// `config.common_config.with_modules`.
    pub with_modules: Option<bool>,
    /// `torch_npu_version` (newer files only).
    pub torch_npu_version: Option<String>,
    /// `cann_version` (newer files only).
    pub cann_version: Option<String>,
    /// `rank_id` field of `profiler_info` (int or digit string).
    pub info_rank_field: Option<i64>,
    /// Truthy top-level `role` of `profiler_metadata.json`.
    pub metadata_role: Option<String>,
    /// `parallel_group_info` of `profiler_metadata.json` (communication.md §1.6), in file order.
    #[serde(skip)]
    pub parallel_groups: Vec<GroupInfo>,
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
    /// The first [`OTHER_NAMES`] of the other files (relative to the folder), in path
    /// order.
    pub other_names: Vec<String>,
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
    /// The rank's DB export (`ascend_pytorch_profiler[_N].db`), when it has one: then the
    /// DB is what the analyses read and the text files are skipped (ascend-db.md §7).
    pub fn ascend_db(&self) -> Option<&RankFile> {
        self.file(FileKind::AscendDb)
    }
    /// True when the rank holds memory events: `operator_memory.csv` or its DB export.
    pub fn has_memory_events(&self) -> bool {
        self.file(FileKind::OperatorMemory).is_some() || self.ascend_db().is_some()
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

impl Inventory {
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

#[cfg(test)]
mod tests;
