//! The Ascend DB export (`ascend_pytorch_profiler_{rank}.db`, `analysis.db`) → the same model
//! tables the text readers fill (ascend-db.md): operator memory rows ([`memory`]), host ops
//! with call stacks and the timeline's host events ([`host`]), device kernels ([`kernels`]),
//! step-trace and communication rows ([`analysis_db`]). SQLite is reached through
//! [`crate::ingest::sqlite`] (read-only, streamed); every table and column is looked up by name
//! ([`schema`]); a missing one is "no data" with a problem naming it (`ASC-DB-002`), a read
//! failure a located problem (`ASC-DB-003`). Nothing here panics on input.

pub mod analysis_db;
pub mod comm;
pub mod host;
pub mod kernels;
pub mod memory;
pub mod schema;

use crate::base::{Position, Problem, Severity};
use crate::ingest::sqlite::{Db, OpenError, OpenerSource};
use crate::ingest::Opener;

pub use schema::Schema;

/// Problem codes (ascend-db.md §8).
pub mod codes {
    /// Both exports in one folder: which one was read.
    pub const BOTH: &str = "ASC-DB-001";
    /// A table or required column is missing.
    pub const MISSING: &str = "ASC-DB-002";
    /// The file cannot be read as SQLite.
    pub const UNREADABLE: &str = "ASC-DB-003";
    /// A row with a value out of range, left out.
    pub const BAD_ROW: &str = "ASC-DB-004";
    /// Step trace times from `analysis.db`: the more precise export (information).
    pub const PRECISE: &str = "ASC-DB-005";
}

/// One open DB file of a rank: the connection, its path (for problems) and its schema.
pub struct DbFile<'a> {
    /// The read-only connection.
    pub db: Db<'a>,
    /// Path relative to the dropped root.
    pub path: String,
    /// Tables and columns, by name.
    pub schema: Schema,
    read: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<'a> DbFile<'a> {
    /// Opens `path` (`size` bytes) of `opener` read-only. `Err` is the `ASC-DB-003` problem.
    pub fn open(opener: &'a dyn Opener, path: &str, size: u64) -> Result<DbFile<'a>, Problem> {
        let fail = |why: String| {
            Problem::new(
                Severity::Error,
                codes::UNREADABLE,
                Position::file(path),
                format!("{path}: {why}; its data is not used"),
            )
        };
        let src = OpenerSource::new(opener, path, size);
        let read = src.counter();
        let db = Db::open(Box::new(src)).map_err(|e: OpenError| fail(e.to_string()))?;
        let schema = Schema::read(&db).map_err(|e| {
            fail(format!(
                "SQLite cannot read its table list (sqlite_master): {e}"
            ))
        })?;
        Ok(DbFile {
            db,
            path: path.to_string(),
            schema,
            read,
        })
    }

    /// Bytes of the file read so far (pages fetched into the window cache).
    pub fn bytes_read(&self) -> u64 {
        self.read.get()
    }

    /// The `ASC-DB-002` problem: `what` (a table, or `TABLE.column`) is missing, so `feeds`
    /// has no data.
    pub fn missing(&self, what: &str, feeds: &str) -> Problem {
        Problem::new(
            Severity::Warning,
            codes::MISSING,
            Position::file(self.path.as_str()),
            format!(
                "{}: no {what} in the database, so {feeds} has no data",
                self.path
            ),
        )
    }

    /// The `ASC-DB-003` problem of a failure while reading `table` (after row id `rowid` when
    /// known).
    pub fn read_failure(&self, table: &str, rowid: Option<i64>, e: &rusqlite::Error) -> Problem {
        let at = match rowid {
            Some(r) => format!(" after row id {r}"),
            None => String::new(),
        };
        Problem::new(
            Severity::Error,
            codes::UNREADABLE,
            Position::file(self.path.as_str()).in_column(table.to_string()),
            format!(
                "{}: reading table {table}{at} failed ({e}); the rows read before are kept",
                self.path
            ),
        )
    }

    /// The `ASC-DB-004` problem of row `rowid` of `table`: `why`, the row is left out.
    pub fn bad_row(&self, table: &str, rowid: i64, why: &str) -> Problem {
        Problem::new(
            Severity::Warning,
            codes::BAD_ROW,
            Position::file(self.path.as_str()).in_column(table.to_string()),
            format!("{}: {table} row id {rowid}: {why}; row left out", self.path),
        )
    }
}

/// `ns` as the double Python's `float()` gives for the text export's µs string of it (the ns
/// with a decimal point before the last three digits, ascend-db.md §2): the correctly rounded
/// value of `ns / 1000`.
pub fn us_f64(ns: i64) -> f64 {
    let neg = ns < 0;
    let a = ns.unsigned_abs();
    let v: f64 = format!("{}.{:03}", a / 1000, a % 1000)
        .parse()
        .unwrap_or(f64::NAN);
    if neg {
        -v
    } else {
        v
    }
}

/// Python's `round(x, n)` (correctly rounded on the exact binary value).
pub fn round_to(x: f64, n: usize) -> f64 {
    format!("{x:.n$}").parse().unwrap_or(x)
}

/// Python's `round(x, 3)` for the values msprof writes (correctly rounded, ties to even on
/// the exact binary value).
pub fn round3(x: f64) -> f64 {
    round_to(x, 3)
}

/// Runs `sql` (its first column is the table's `rowid`) and hands every row to `each`.
/// A read failure becomes an `ASC-DB-003` problem naming `table` and the last row id read;
/// the rows before it are kept. `tick` is called every [`TICK_ROWS`] rows; `Break` stops
/// the scan (returns `Break`).
pub fn scan(
    f: &DbFile<'_>,
    table: &str,
    sql: &str,
    problems: &mut crate::base::Problems,
    tick: &mut dyn FnMut() -> std::ops::ControlFlow<()>,
    each: &mut dyn FnMut(i64, &rusqlite::Row<'_>),
) -> std::ops::ControlFlow<()> {
    let mut last = None;
    let res = (|| -> Result<std::ops::ControlFlow<()>, rusqlite::Error> {
        let mut st = f.db.conn().prepare(sql)?;
        let mut rows = st.query([])?;
        let mut n = 0u64;
        while let Some(r) = rows.next()? {
            let id = schema::int(r, 0).unwrap_or(0);
            last = Some(id);
            each(id, r);
            n += 1;
            if n % TICK_ROWS == 0 && tick().is_break() {
                return Ok(std::ops::ControlFlow::Break(()));
            }
        }
        Ok(std::ops::ControlFlow::Continue(()))
    })();
    match res {
        Ok(c) => c,
        Err(e) => {
            problems.push(f.read_failure(table, last, &e));
            std::ops::ControlFlow::Continue(())
        }
    }
}

/// Rows between two calls of a scan's `tick` (progress and cancellation).
pub const TICK_ROWS: u64 = 8192;
