//! What the pool works on: each file's meta beside its handle, and one unit of work per
//! target (a rank folder with all its analyses, a snapshot, a cluster summary).

use web_sys::File;

use super::Work;
use crate::protocol::{AnalysisKind, FileMeta, InventoryDto, Target};

/// Each file's [`FileMeta`] (path and size) beside its handle, sorted by path (the order every
/// worker's inventory is built from).
pub(super) fn with_meta(files: Vec<(String, File)>) -> Vec<(FileMeta, File)> {
    let mut files: Vec<(FileMeta, File)> = files
        .into_iter()
        .map(|(path, f)| {
            (
                FileMeta {
                    path,
                    size: f.size() as u64,
                },
                f,
            )
        })
        .collect();
    crate::base::sort::sort_by(&mut files, |a, b| a.0.path.cmp(&b.0.path));
    files
}

/// Whether the drop holds an Ascend DB export (`ascend_pytorch_profiler[_<rank>].db` or
/// `analysis.db`, ascend-db.md §1.1): then its workers are DB workers (src/bin/worker_db.rs).
/// By name only, before any worker has read the drop, so no other drop fetches the DB
/// worker's wasm.
pub(super) fn holds_db(files: &[(FileMeta, File)]) -> bool {
    files.iter().any(|(m, _)| {
        let name = m.path.rsplit(['/', '\\']).next().unwrap_or(&m.path);
        name == "analysis.db"
            || name
                .strip_prefix("ascend_pytorch_profiler")
                .and_then(|r| r.strip_suffix(".db"))
                .is_some_and(|r| {
                    r.is_empty()
                        || r.strip_prefix('_')
                            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
                })
    })
}

/// The pool's work for `inv`: every rank folder with the analyses its capabilities say
/// `can_run` (memory, anomaly; all in one unit, so one worker reads the folder once), and
/// every snapshot and every readable cluster summary, each with the bytes of its input (for
/// balancing).
pub(super) fn work(inv: &InventoryDto) -> Vec<Work> {
    let mut out = Vec::new();
    for r in &inv.ranks {
        let target = Target::Rank(r.index);
        let analyses: Vec<AnalysisKind> = r
            .analyses
            .iter()
            .filter(|a| a.can_run && a.analysis.applies_to(target))
            .map(|a| a.analysis)
            .collect();
        if !analyses.is_empty() {
            out.push(Work {
                target,
                analyses,
                bytes: r.files.iter().map(|f| f.size).sum(),
            });
        }
    }
    for (i, f) in inv.snapshots.iter().enumerate() {
        out.push(Work {
            target: Target::Snapshot(i as u32),
            analyses: vec![AnalysisKind::Snapshot],
            bytes: f.size,
        });
    }
    // cluster summaries this build reads (an unreadable one is a problem of the inventory)
    for (i, f) in inv.summaries.iter().enumerate() {
        if f.kind == crate::protocol::cluster_view::SUMMARY_KIND {
            out.push(Work {
                target: Target::Summary(i as u32),
                analyses: vec![AnalysisKind::Cluster],
                bytes: f.size,
            });
        }
    }
    out
}
