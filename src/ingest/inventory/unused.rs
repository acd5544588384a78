//! What a drop holds that no analysis reads, and why (formats.md §11.1): the files outside
//! every rank folder (`DROP-001`) and, per rank folder, the files inside it that no analysis
//! reads (`DROP-003`). `proflens analyze` prints them; the page lists the same files (the
//! ignored list, each rank card's "other files").

use super::{FileKind, Inventory, Note, RankFolder, OTHER_NAMES};
use crate::base::format::bytes;
use crate::base::Severity;

/// Codes of the findings about unused inputs (formats.md §11.1).
pub mod codes {
    /// A file outside every rank folder that no analysis uses (info), with the reason.
    pub const FILE: &str = "DROP-001";
    /// A rank folder no planned analysis can read (warning; `engine::read::plan`).
    pub const RANK: &str = "DROP-002";
    /// Files inside a rank folder that no analysis reads (info), counted and the first named.
    pub const INSIDE: &str = "DROP-003";
    /// A file the command does not read although the drop may hold it (info; e.g. a cluster
    /// summary given to `proflens analyze`).
    pub const COMMAND: &str = "DROP-004";
    /// Files under `proflens analyze`'s output folder, inside the input: an earlier run's
    /// outputs, not read (info; `cli::analyze::split_outputs`).
    pub const OUTPUT: &str = "DROP-005";
}

/// The text-export kinds a rank with a DB export does not read (ascend-db.md §7).
pub fn text_export_kind(kind: FileKind) -> bool {
    matches!(
        kind,
        FileKind::OperatorMemory
            | FileKind::TraceView
            | FileKind::KernelDetails
            | FileKind::OpSummary
            | FileKind::StepTraceTime
            | FileKind::Communication
    )
}

/// Known kinds inside a rank folder that proflens lists but no analysis reads (`has_db`: the
/// rank has its DB export, which is read instead of the text files).
/// `has_comm_text`: it holds `communication.json` or `communication_matrix.json`, read instead of
/// `analysis.db` on a text rank.
fn never_read(kind: FileKind, has_db: bool, has_comm_text: bool) -> Option<&'static str> {
    match kind {
        k if has_db && text_export_kind(k) => {
            Some("skipped: the database export of the same run is read")
        }
        FileKind::AnalysisDb if !has_db && has_comm_text => {
            Some("read only beside ascend_pytorch_profiler_<rank>.db or without communication.json")
        }
        FileKind::Database => Some("database export, not parsed"),
        FileKind::MemoryRecord => Some("listed, not analysed"),
        FileKind::NpuModuleMem => Some("listed, not analysed"),
        FileKind::OperatorDetails => Some("listed, not analysed"),
        _ => None,
    }
}

impl RankFolder {
    /// The files inside this folder that no analysis reads: `(count, bytes, names)`, the
    /// classified files no analysis reads (named with why) and the unclassified ones (the
    /// first [`OTHER_NAMES`] named). The one count of `DROP-003` and of the page's rank card.
    pub fn not_read(&self) -> (u64, u64, Vec<String>) {
        let has_db = self.ascend_db().is_some();
        let text = self.file(FileKind::Communication).is_some()
            || self.file(FileKind::CommunicationMatrix).is_some();
        let mut names: Vec<String> = self
            .files
            .iter()
            .filter_map(|f| {
                never_read(f.kind, has_db, text).map(|why| format!("{} ({why})", f.rel))
            })
            .collect();
        let n = names.len() as u64 + self.other_files;
        let size: u64 = self.other_bytes
            + self
                .files
                .iter()
                .filter(|f| never_read(f.kind, has_db, text).is_some())
                .map(|f| f.size)
                .sum::<u64>();
        names.extend(self.other_names.iter().cloned());
        (n, size, names)
    }
}

impl Inventory {
    /// One finding per file outside every rank folder (`DROP-001`, with the reason the
    /// inventory gave) and one per rank folder holding files no analysis reads (`DROP-003`:
    /// how many, their bytes, the first [`OTHER_NAMES`] named), in inventory order. A file
    /// that already has its error among the drop's notes (a `*.pt.trace.json` that is not a
    /// trace, `GPU-FILE-002`) is not said again.
    pub fn not_used(&self) -> Vec<Note> {
        let has_error = |path: &str| {
            self.notes
                .iter()
                .any(|n| n.severity == Severity::Error && n.file == path)
        };
        let mut out: Vec<Note> = self
            .ignored
            .iter()
            .filter(|f| !has_error(&f.path))
            .map(|f| {
                Note::new(
                    Severity::Info,
                    codes::FILE,
                    &f.path,
                    format!("not used ({}): {}", bytes(f.size as f64), f.reason),
                )
            })
            .collect();
        for r in &self.ranks {
            let (n, size, names) = r.not_read();
            if n == 0 {
                continue;
            }
            let shown = names.len().min(OTHER_NAMES);
            let more = n - shown as u64;
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            let label = r.label();
            out.push(Note::new(
                Severity::Info,
                codes::INSIDE,
                label,
                format!(
                    "{n} file(s) ({}) inside {label} are not read by any analysis (raw profiler data or outputs proflens does not analyse): {}{tail}",
                    bytes(size as f64),
                    names[..shown].join(", ")
                ),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::ingest::inventory::Inventory;
    use crate::ingest::InputFile;

    #[test]
    fn files_not_used_are_named_with_why() {
        let f = |p: &str, size: u64| InputFile {
            path: p.into(),
            size,
        };
        let inv = Inventory::from_paths(&[
            f("run/SOURCES.md", 100),
            f("run/dlrm.tar.gz", 2048),
            f("run/profiler_metadata.json", 10),
            f("run/x_et.json.gz", 10),
            f(
                "run/r0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
                10,
            ),
            f("run/r0_ascend_pt/ASCEND_PROFILER_OUTPUT/analysis.db", 4096),
            f(
                "run/r0_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json",
                10,
            ),
            f("run/r0_ascend_pt/PROF_1/device_0/data/a.data", 1),
            f("run/r0_ascend_pt/PROF_1/device_0/data/b.data", 1),
            f("run/r0_ascend_pt/profiler_info_0.json", 1),
        ]);
        let got: Vec<(String, String, String)> = inv
            .not_used()
            .into_iter()
            .map(|n| (n.code.to_string(), n.file, n.message))
            .collect();
        let tail = "not used (";
        assert_eq!(got.len(), 5, "{got:#?}");
        assert_eq!(got[0].1, "run/SOURCES.md");
        assert!(got[0].2.starts_with(tail) && got[0].2.ends_with("not a profiler output proflens reads (a PyTorch profiler trace or memory snapshot, or a file of a folder ending in \"ascend_pt\")"), "{}", got[0].2);
        assert!(
            got[1]
                .2
                .ends_with("an archive: extract it and drop the extracted folder"),
            "{}",
            got[1].2
        );
        assert!(got[2].2.ends_with("a torch_npu file (profiler_metadata.json) without its capture folder (a folder ending in \"ascend_pt\") or the data files beside it: not used alone"), "{}", got[2].2);
        assert!(got[3].2.contains("Chakra execution trace"), "{}", got[3].2);
        assert_eq!(
            (got[4].0.as_str(), got[4].1.as_str(), got[4].2.as_str()),
            ("DROP-003", "run/r0_ascend_pt", "3 file(s) (4.00 KiB) inside run/r0_ascend_pt are not read by any analysis (raw profiler data or outputs proflens does not analyse): ASCEND_PROFILER_OUTPUT/analysis.db (read only beside ascend_pytorch_profiler_<rank>.db or without communication.json), PROF_1/device_0/data/a.data, PROF_1/device_0/data/b.data")
        );
        // The page's rank card counts the same files (it counted the unclassified ones only:
        // 2 beside DROP-003's 3).
        let (n, bytes, _) = inv.ranks[0].not_read();
        assert_eq!((n, bytes), (3, 4098));
    }
}
