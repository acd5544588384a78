//! The communication phase of a rank read (docs/rules/communication.md §1): `communication.json`
//! and `communication_matrix.json` of one Ascend rank folder, each read once and streamed into
//! the rank's [`RankComm`] tables; the anomaly analysis of the same read gets its comm ops from
//! this read ([`crate::parse::communication::ops_of`]) instead of opening the file again.
//! The cross-rank rules run on the stored tables (`engine::export::comm`).

use std::io::Read;
use std::ops::ControlFlow;

use crate::base::{Problem, Problems, Severity};
use crate::engine::contract::Cancelled;
use crate::ingest::inventory::{FileKind, RankFolder};
use crate::ingest::rank::CaptureKind;
use crate::ingest::{Opener, Progress};
use crate::model::comm::{ParallelGroup, RankComm};
use crate::model::side_tables::CommOp;
use crate::parse::{comm_matrix, comm_time, communication, ParseError};

/// Problem code: a communication file could not be read; the rest of the ranks are used.
pub const COMM_FILE: &str = "COMM-FILE-001";

/// True when `folder` holds a communication file the analysis reads (Ascend folders: the
/// text files or `analysis.db`).
pub fn usable(folder: &RankFolder) -> bool {
    folder.kind != CaptureKind::Kineto
        && (folder.file(FileKind::Communication).is_some()
            || folder.file(FileKind::CommunicationMatrix).is_some()
            || db_source(folder).is_some())
}

/// The `analysis.db` the communication tables are read from, when they are (communication.md
/// §1.5, docs/rules/communication.md "The DB export"): a rank with its DB export reads them
/// from its `analysis.db` (as every other analysis of it reads the DB), and so does a rank
/// whose only communication data is `analysis.db`; a text rank with the JSON files reads the
/// JSON. Builds without SQLite (the wasm worker without feature `db`) read the JSON only.
pub fn db_source(folder: &RankFolder) -> Option<&crate::ingest::inventory::RankFile> {
    if !cfg!(any(not(target_arch = "wasm32"), feature = "db")) {
        return None;
    }
    let adb = folder.file(FileKind::AnalysisDb)?;
    let text = folder.file(FileKind::Communication).is_some()
        || folder.file(FileKind::CommunicationMatrix).is_some();
    (folder.ascend_db().is_some() || !text).then_some(adb)
}

/// One rank's communication read: its tables, its problems, and the anomaly's view of
/// `communication.json` (when that file was read) or of `analysis.db`'s communication tables.
#[derive(Debug, Default)]
pub struct RankCommRead {
    /// The tables.
    pub tables: RankComm,
    /// Located problems (a cut file, an unknown era, …).
    pub problems: Problems,
    /// `communication.json` as the anomaly analysis reads it (`None`: no such file or not
    /// opened).
    pub comm_ops: Option<Result<Vec<CommOp>, ParseError>>,
}

struct Counted<'a, R> {
    inner: R,
    done: u64,
    total: u64,
    file: &'a str,
    prog: &'a mut dyn FnMut(&str, Progress) -> ControlFlow<()>,
    cancelled: bool,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.cancelled {
            return Err(std::io::Error::other("cancelled"));
        }
        let n = self.inner.read(buf)?;
        self.done += n as u64;
        let p = Progress {
            bytes_done: self.done,
            bytes_total: Some(self.total),
        };
        if (self.prog)(self.file, p).is_break() {
            self.cancelled = true;
        }
        Ok(n)
    }
}

/// [`read`] as a planned part of a rank's read: `None` when the plan does not run the
/// communication analysis (`run`), `Err(Cancelled)` when the rank was cancelled before
/// (`cancelled`) or during the read. The one place the text and DB rank reads call.
pub fn planned(
    run: bool,
    cancelled: bool,
    folder: &RankFolder,
    opener: &dyn Opener,
    open_db: Option<&OpenDb<'_>>,
    prog: &mut dyn FnMut(&str, Progress) -> ControlFlow<()>,
) -> Option<Result<RankCommRead, Cancelled>> {
    if !run {
        return None;
    }
    if cancelled {
        return Some(Err(Cancelled));
    }
    Some(match read_with(folder, opener, open_db, prog) {
        ControlFlow::Break(()) => Err(Cancelled),
        ControlFlow::Continue(c) => Ok(c),
    })
}

/// An `analysis.db` the rank read has already opened (the DB rank read opens it once for every
/// analysis); builds without SQLite have none.
#[cfg(any(not(target_arch = "wasm32"), feature = "db"))]
pub type OpenDb<'a> = crate::parse::ascend_db::DbFile<'a>;
/// An `analysis.db` the rank read has already opened; builds without SQLite have none.
#[cfg(not(any(not(target_arch = "wasm32"), feature = "db")))]
pub type OpenDb<'a> = std::marker::PhantomData<&'a ()>;

/// Reads the communication files of `folder`. Returns `Break` when the progress callback
/// cancelled.
pub fn read(
    folder: &RankFolder,
    opener: &dyn Opener,
    prog: &mut dyn FnMut(&str, Progress) -> ControlFlow<()>,
) -> ControlFlow<(), RankCommRead> {
    read_with(folder, opener, None, prog)
}

/// [`read`], taking `analysis.db`'s tables from `open_db` when the rank reads them from there
/// and it is given (no second open of the file).
fn read_with(
    folder: &RankFolder,
    opener: &dyn Opener,
    open_db: Option<&OpenDb<'_>>,
    prog: &mut dyn FnMut(&str, Progress) -> ControlFlow<()>,
) -> ControlFlow<(), RankCommRead> {
    let mut out = RankCommRead {
        tables: RankComm {
            rank: folder.rank_id.unwrap_or(-1),
            label: folder.label().to_string(),
            groups: folder
                .side
                .parallel_groups
                .iter()
                .map(|g| ParallelGroup {
                    id: g.id.clone(),
                    name: g.name.clone(),
                    global_ranks: g.global_ranks.clone(),
                })
                .collect(),
            ..Default::default()
        },
        ..Default::default()
    };
    if let Some(adb) = db_source(folder) {
        #[cfg(any(not(target_arch = "wasm32"), feature = "db"))]
        return match open_db {
            Some(f) => fill_db(adb, f, prog, out),
            None => read_db(adb, opener, prog, out),
        };
        #[cfg(not(any(not(target_arch = "wasm32"), feature = "db")))]
        let _ = (adb, open_db);
    }
    for kind in [FileKind::Communication, FileKind::CommunicationMatrix] {
        let Some(f) = folder.file(kind) else { continue };
        let src = match opener.open(&f.path) {
            Ok(s) => s,
            Err(e) => {
                out.problems.push(Problem::new(
                    Severity::Error,
                    COMM_FILE,
                    crate::base::Position::file(f.path.clone()),
                    format!("cannot open: {e}; this rank's communication file is not used"),
                ));
                continue;
            }
        };
        let mut rdr = Counted {
            inner: src,
            done: 0,
            total: f.size,
            file: &f.path,
            prog: &mut *prog,
            cancelled: false,
        };
        let res = match kind {
            FileKind::Communication => comm_time::read(&mut rdr, &f.path, &mut out.tables),
            _ => comm_matrix::read(&mut rdr, &f.path, &mut out.tables),
        };
        if rdr.cancelled {
            return ControlFlow::Break(());
        }
        if let Err(e) = &res {
            // The position is the problem's own: the message is what was found and expected.
            out.problems.push(Problem::new(
                Severity::Error,
                COMM_FILE,
                e.position().clone(),
                format!(
                    "{}; this rank's communication file is not used, the other ranks are",
                    e.kind()
                ),
            ));
        }
        if kind == FileKind::Communication {
            out.comm_ops = Some(res.map(|_| communication::ops_of(&out.tables)));
        }
    }
    ControlFlow::Continue(out)
}

/// The communication tables of `adb` (`analysis.db`) into `out`.
#[cfg(any(not(target_arch = "wasm32"), feature = "db"))]
fn read_db(
    adb: &crate::ingest::inventory::RankFile,
    opener: &dyn Opener,
    prog: &mut dyn FnMut(&str, Progress) -> ControlFlow<()>,
    mut out: RankCommRead,
) -> ControlFlow<(), RankCommRead> {
    let f = match crate::parse::ascend_db::DbFile::open(opener, &adb.path, adb.size) {
        Ok(f) => f,
        Err(p) => {
            out.problems.push(p);
            return ControlFlow::Continue(out);
        }
    };
    fill_db(adb, &f, prog, out)
}

/// The communication tables of the open `analysis.db` `f` (file `adb`) into `out`, and the
/// anomaly's ops from the same tables.
#[cfg(any(not(target_arch = "wasm32"), feature = "db"))]
fn fill_db(
    adb: &crate::ingest::inventory::RankFile,
    f: &OpenDb<'_>,
    prog: &mut dyn FnMut(&str, Progress) -> ControlFlow<()>,
    mut out: RankCommRead,
) -> ControlFlow<(), RankCommRead> {
    use crate::parse::ascend_db::comm as db_comm;
    let mut tick = || {
        prog(
            &adb.path,
            Progress {
                bytes_done: f.bytes_read().min(adb.size),
                bytes_total: Some(adb.size),
            },
        )
    };
    let mut problems = Problems::new();
    db_comm::read(f, &mut out.tables, &mut problems, &mut tick)?;
    tick()?;
    out.problems.extend(problems);
    if out.tables.has_time {
        out.comm_ops = Some(Ok(communication::ops_of(&out.tables)));
    }
    ControlFlow::Continue(out)
}
