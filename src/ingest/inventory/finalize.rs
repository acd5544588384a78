//! Step 2 of the inventory (ascend-memory.md §3): the side-file facts of each rank
//! ([`Inventory::set_side_info`], [`Inventory::add_rank_note`]), then [`Inventory::finalize`]: rank ids and roles, order,
//! the derived notes and what each analysis needs (readiness); Kineto heads that are not
//! traces leave the ranks ([`Inventory::drop_non_traces`]).

use std::collections::BTreeMap;

use super::{
    Analysis, FileKind, IgnoredFile, Inventory, Note, RankFolder, Readiness, SideInfo, OUTPUT_DIR,
};
use crate::base::Severity;
use crate::ingest::kineto;
use crate::ingest::rank::{
    resolve_rank, resolve_role, timestamp_key, CaptureKind, RankSource, RoleSource,
};
use crate::ingest::summary_file::SummaryFile;

impl Inventory {
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
                // What an unknown rank id costs depends on what the folder holds: only the
                // memory events need one (ascend-memory.md §3.1); the other analyses number
                // the capture by its position.
                (None, _) if r.file(FileKind::OperatorMemory).is_some() => r.notes.push(Note::new(
                    Severity::Error,
                    "MEM-DISC-003",
                    &label,
                    format!("Cannot determine rank id for {label} (no profiler_info_<N>.json, no rank_id in it, no rank<N> in the folder name, and the drop holds several captures): its memory events are skipped (ascend-memory.md §3.1); the other analyses number it by its position"),
                )),
                (None, _) => r.notes.push(Note::new(
                    Severity::Info,
                    "MEM-DISC-003",
                    &label,
                    format!("Rank id of {label} unknown (no profiler_info_<N>.json, no rank_id in it, no rank<N> in the folder name, and the drop holds several captures): numbered by its position among the drop's captures"),
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
            if let Some(db) = r.ascend_db() {
                let text: Vec<&str> = r
                    .files
                    .iter()
                    .filter(|f| super::unused::text_export_kind(f.kind))
                    .map(|f| f.rel.as_str())
                    .collect();
                if !text.is_empty() {
                    let msg = format!(
                        "{label} holds both exports of the run: {} is read (smaller, exact to the ns); the text files ({}) are skipped, and read only if the database cannot be opened",
                        db.rel,
                        text.join(", ")
                    );
                    r.notes
                        .push(Note::new(Severity::Info, "ASC-DB-001", &label, msg));
                }
            }
            r.analyses = vec![memory_readiness(r), anomaly_readiness(r), comm_readiness(r)];
        }
        separate_platforms(&mut self.ranks);
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
    /// (`ingest::summary_file`; a version this build cannot read is a `CLU-001` error), those
    /// whose head is a JSON memory snapshot's to the snapshots (torch-snapshot.md §2.6); the
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
            if r.side.kineto.as_ref().is_some_and(|h| h.snapshot) {
                // A memory snapshot written as JSON (torch-snapshot.md §2.6).
                for f in r.files {
                    self.snapshots.push(crate::ingest::InputFile {
                        path: f.path,
                        size: f.size,
                    });
                }
                continue;
            }
            let reason = r
                .side
                .kineto
                .and_then(|h| h.not_trace_reason)
                .unwrap_or_else(|| "not a PyTorch profiler trace".into());
            for f in r.files {
                // A file the user named as a trace is said to be unusable, not only listed.
                if kineto::is_trace_name(&f.path) {
                    self.notes.push(Note::new(
                        Severity::Error,
                        kineto::NOT_A_TRACE,
                        &f.path,
                        format!(
                            "named like a PyTorch profiler trace (*.pt.trace.json), but {reason}; not used"
                        ),
                    ));
                }
                self.ignored.push(IgnoredFile {
                    path: f.path,
                    size: f.size,
                    reason: reason.clone(),
                });
            }
        }
        crate::base::sort::sort_by(&mut self.ignored, |a, b| a.path.cmp(&b.path));
        crate::base::sort::sort_by(&mut self.snapshots, |a, b| a.path.cmp(&b.path));
        self.finalize();
    }
}

/// Ranks of two platforms are not peers (formats.md §8.1): a GPU trace whose role is also an
/// Ascend rank's gets the role `<role> (GPU)`, so that every cross-rank rule, which compares
/// the ranks of one role, compares it only with GPU ranks; an info note (`GPU-DISC-004`) says so.
fn separate_platforms(ranks: &mut [RankFolder]) {
    let ascend: std::collections::BTreeSet<String> = ranks
        .iter()
        .filter(|r| r.kind != CaptureKind::Kineto)
        .map(|r| r.role.clone())
        .collect();
    for r in ranks.iter_mut().filter(|r| r.kind == CaptureKind::Kineto) {
        // (`kineto_finalize` clears the GPU-DISC notes and sets the role from the folder first.)
        if ascend.contains(&r.role) {
            let label = r.label().to_string();
            let msg = format!(
                "{label} (a GPU trace) shares the role {:?} with Ascend ranks: it is compared only with GPU ranks, as role {:?}",
                r.role,
                format!("{} (GPU)", r.role)
            );
            r.role = format!("{} (GPU)", r.role);
            r.notes
                .push(Note::new(Severity::Info, "GPU-DISC-004", &label, msg));
        }
    }
}

/// What a trace's head states of the run it belongs to (formats.md §8): its first named device
/// and its world size, as a role suffix (`"NVIDIA H100 80GB HBM3, world 8"`); `None` when the head
/// states neither.
fn run_of(r: &RankFolder) -> Option<String> {
    let head = r.side.kineto.as_ref()?;
    let parts: Vec<String> = head
        .devices
        .iter()
        .find(|d| !d.trim().is_empty())
        .cloned()
        .into_iter()
        .chain(head.world_size.map(|w| format!("world {w}")))
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The role of a Kineto trace: its parent folder's name.
fn folder_role(r: &RankFolder) -> (String, RoleSource) {
    match r.facts.parent_name.as_ref().filter(|p| !p.is_empty()) {
        Some(p) => (p.clone(), RoleSource::ParentFolder),
        None => ("unknown".to_string(), RoleSource::Unknown),
    }
}

/// Rank, role, notes and readiness of the Kineto ranks (`ingest::kineto` rules).
fn kineto_finalize(ranks: &mut [RankFolder]) {
    // Traces of one folder whose heads state different devices or world sizes are of different
    // runs, not peers (formats.md §8): each run gets its own role.
    let mut runs: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    for r in ranks.iter().filter(|r| r.kind == CaptureKind::Kineto) {
        if let Some(run) = run_of(r) {
            runs.entry(folder_role(r).0).or_default().insert(run);
        }
    }
    let mut used: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut pending: Vec<usize> = Vec::new();
    for (i, r) in ranks.iter_mut().enumerate() {
        if r.kind != CaptureKind::Kineto {
            continue;
        }
        r.notes.retain(|n| !n.code.starts_with("GPU-DISC"));
        (r.role, r.role_source) = folder_role(r);
        let runs_of_role = runs.get(&r.role).map_or(0, |s| s.len());
        if let Some(run) = run_of(r).filter(|_| runs_of_role > 1) {
            let label = r.label().to_string();
            let role = format!("{} ({run})", r.role);
            let msg = format!(
                "{label} states {run}, unlike other traces of the folder {:?} ({runs_of_role} runs): it is compared only with the traces of its own run, as role {role:?}",
                r.role
            );
            r.role = role;
            r.notes
                .push(Note::new(Severity::Info, super::SEPARATE_RUN, &label, msg));
        }
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
        if head.is_some_and(|h| h.undecided) {
            let label = r.label().to_string();
            r.notes.push(Note::new(
                Severity::Info,
                "GPU-DISC-003",
                &label,
                format!("the head of {label} that the inventory reads does not say whether it is a PyTorch profiler trace (formats.md §8.1): it is read as one and judged by its whole content"),
            ));
        }
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
    // Traces per role: the only trace of its role (a single-GPU run) is rank 0 with nothing
    // guessed, an info note; among several, the order may not be the ranks' (formats.md §8).
    let mut per_role: BTreeMap<&str, usize> = BTreeMap::new();
    for r in ranks.iter().filter(|r| r.kind == CaptureKind::Kineto) {
        *per_role.entry(r.role.as_str()).or_default() += 1;
    }
    let alone: Vec<bool> = pending
        .iter()
        .map(|&i| per_role.get(ranks[i].role.as_str()) == Some(&1))
        .collect();
    for (i, alone) in pending.into_iter().zip(alone) {
        let r = &mut ranks[i];
        let taken = used.entry(r.role.clone()).or_default();
        let k = (0..).find(|k| !taken.contains(k)).unwrap_or(0);
        taken.push(k);
        r.rank_id = Some(k);
        let label = r.label().to_string();
        let (severity, msg) = if alone {
            (
                Severity::Info,
                format!(
                    "Rank {k} of {label}: the only trace of its role {:?}, with no distributedInfo in the head and no rank in the name",
                    r.role
                ),
            )
        } else {
            (
                Severity::Warning,
                format!(
                    "Rank {k} of {label} taken from {}",
                    RankSource::Order.describe()
                ),
            )
        };
        r.notes
            .push(Note::new(severity, super::RANK_FROM_ORDER, &label, msg));
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
                    "rank {} of role {} has {n} traces; each is analysed on its own: its own reports and its own collectives (communication.md §4.1)",
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
    if r.ascend_db().is_some() {
        // The DB holds the memory events and the call stacks (ascend-db.md §3, §4).
    } else if r.file(FileKind::OperatorMemory).is_none() {
        let mut m = format!("{OUTPUT_DIR}/operator_memory.csv or {OUTPUT_DIR}/ascend_pytorch_profiler_<rank>.db (profile with profile_memory=True)");
        if r.side.export_type.iter().any(|t| t == "db")
            && !r.side.export_type.iter().any(|t| t == "text")
        {
            m.push_str("; this capture was exported as a database (export_type=db): drop the folder with its ascend_pytorch_profiler_<rank>.db");
        }
        missing.push(m);
    }
    if r.ascend_db().is_some() {
    } else if r.file(FileKind::TraceView).is_none() {
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
    let db = r.ascend_db().is_some();
    let kd = db || r.file(FileKind::KernelDetails).is_some();
    let os = r.file(FileKind::OpSummary).is_some();
    let tv = db || r.file(FileKind::TraceView).is_some();
    // No rank id needed: a capture without one is numbered by its position (MEM-DISC-003).
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
    if db {
        if r.file(FileKind::AnalysisDb).is_none() {
            degraded.push(format!(
                "{OUTPUT_DIR}/analysis.db missing: communication totals from kernels only"
            ));
        }
    } else if r.file(FileKind::Communication).is_none() {
        degraded.push("communication.json missing: communication totals from kernels only".into());
    }
    Readiness {
        analysis: Analysis::Anomaly,
        can_run: missing.is_empty(),
        missing,
        degraded,
    }
}

/// A rank folder with `communication.json` or `communication_matrix.json` (alone is enough)
/// can join the communication analysis (communication.md §1).
fn comm_readiness(r: &RankFolder) -> Readiness {
    let mut missing = Vec::new();
    let mut degraded = Vec::new();
    let time = r.file(FileKind::Communication).is_some();
    let matrix = r.file(FileKind::CommunicationMatrix).is_some();
    if r.rank_id.is_none() {
        missing.push(
            "a rank id (profiler_info_<N>.json, a rank_id field, or a rank<N> folder name)".into(),
        );
    }
    let sqlite = cfg!(any(not(target_arch = "wasm32"), feature = "db"));
    let adb = sqlite && r.file(FileKind::AnalysisDb).is_some();
    if adb && (r.ascend_db().is_some() || (!time && !matrix)) {
        // Read from analysis.db's communication tables (communication.md §1.5).
    } else if !time && !matrix && r.ascend_db().is_some() {
        missing.push(format!(
            "{OUTPUT_DIR}/analysis.db (the DB export's communication tables) or communication.json / communication_matrix.json"
        ));
    } else if !time && !matrix {
        missing.push(format!(
            "{OUTPUT_DIR}/communication.json or communication_matrix.json (a multi-rank capture with export_type text)"
        ));
    } else if !time {
        degraded
            .push("communication.json missing: no time or bandwidth summary for this rank".into());
    } else if !matrix {
        degraded.push(
            "communication_matrix.json missing: this rank's links are not in the matrix".into(),
        );
    }
    if r.side.parallel_groups.is_empty() {
        degraded.push("profiler_metadata.json has no parallel_group_info: group names unknown, links to absent ranks cannot be recovered".into());
    }
    Readiness {
        analysis: Analysis::Communication,
        can_run: missing.is_empty(),
        missing,
        degraded,
    }
}
