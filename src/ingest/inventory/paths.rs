//! Step 1 of the inventory (ascend-memory.md §2.2), [`Inventory::from_paths`]: the dropped
//! paths sorted into rank folders (slots), Kineto traces, snapshot pickles and ignored files, by
//! their names alone.

use std::collections::BTreeMap;

use super::{
    classify, FileKind, IgnoredFile, Inventory, RankFile, RankFolder, SideInfo, OTHER_NAMES,
    OUTPUT_DIR,
};
use crate::ingest::kineto;
use crate::ingest::rank::{capture_kind, CaptureKind, RankFacts, RankSource, RoleSource};
use crate::ingest::InputFile;

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

/// Why a file outside every rank folder is not used (formats.md §11.1), from its path.
fn ignore_reason(segs: &[&str]) -> String {
    let name = segs.last().copied().unwrap_or("");
    let lower = name.to_ascii_lowercase();
    let plain = lower.strip_suffix(".gz").unwrap_or(&lower);
    if segs.iter().any(|s| s.starts_with("PROF_")) {
        "inside an msprof PROF_* folder without a torch_npu capture folder: not supported yet"
            .into()
    } else if lower.ends_with(".db") {
        "database export outside a capture folder: not parsed".into()
    } else if plain.ends_with("_et.json") {
        "Chakra execution trace (`_et.json`): not a PyTorch profiler trace".into()
    } else if classify(name).is_some() {
        format!("a torch_npu file ({name}) without its capture folder (a folder ending in \"ascend_pt\") or the data files beside it: not used alone")
    } else if [
        ".tar.gz", ".tgz", ".tar", ".zip", ".7z", ".tar.bz2", ".tar.xz",
    ]
    .iter()
    .any(|e| lower.ends_with(e))
    {
        "an archive: extract it and drop the extracted folder".into()
    } else {
        "not a profiler output proflens reads (a PyTorch profiler trace or memory snapshot, or a file of a folder ending in \"ascend_pt\")".into()
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
    other_names: Vec<String>,
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
                other_names: s.other_names,
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
            other_names: Vec::new(),
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
        other_names: Vec::new(),
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
            if slot.other_names.len() < OTHER_NAMES {
                slot.other_names.push(rel);
            }
        }
    }
}
