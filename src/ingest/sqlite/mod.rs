//! Read-only SQLite over a random-access byte source (ascend-db.md §1): the Ascend DB export
//! is opened by SQLite itself through a VFS of our own ([`vfs`]) whose reads are served from a
//! [`ByteSource`] — natively a file through the [`Opener`], in the worker a `Blob` — with a
//! small page-window cache ([`window`]). Nothing is ever written: writes are refused, the DB is
//! opened `immutable=1` (no lock, no journal, no `-wal`/`-shm` lookup), and a WAL-flagged
//! header is served as a rollback-journal one (ascend-db.md §1.2). Memory stays bounded by the
//! window cache and SQLite's page cache, whatever the file size.

mod vfs;
mod window;

use std::io;
use std::marker::PhantomData;

use crate::ingest::Opener;

pub use rusqlite;

/// Random-access bytes of one file: what the VFS reads pages from.
pub trait ByteSource {
    /// Total size in bytes.
    fn len(&self) -> u64;
    /// True when the source holds no byte.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Fills `buf` from byte `offset` on; returns how many bytes were read (fewer than
    /// `buf.len()` only at the end of the file).
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;
}

/// A [`ByteSource`] over one file of an [`Opener`]: each read is one [`Opener::read_at`] (a
/// seek on disk, exactly one `Blob.slice` in the browser). The window cache in front of it
/// keeps the number of reads small.
pub struct OpenerSource<'a> {
    opener: &'a dyn Opener,
    path: String,
    size: u64,
    read: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<'a> OpenerSource<'a> {
    /// The file `path` of `opener`, `size` bytes long (the inventory's size).
    pub fn new(opener: &'a dyn Opener, path: &str, size: u64) -> Self {
        OpenerSource {
            opener,
            path: path.to_string(),
            size,
            read: Default::default(),
        }
    }

    /// A counter of the bytes read so far (for progress), shared with the source.
    pub fn counter(&self) -> std::rc::Rc<std::cell::Cell<u64>> {
        self.read.clone()
    }
}

impl ByteSource for OpenerSource<'_> {
    fn len(&self) -> u64 {
        self.size
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.opener.read_at(&self.path, offset, buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// A [`ByteSource`] over bytes in memory (tests, generated DBs).
pub struct MemSource(pub Vec<u8>);

impl ByteSource for MemSource {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.0.len());
        let n = buf.len().min(self.0.len() - start);
        buf[..n].copy_from_slice(&self.0[start..start + n]);
        Ok(n)
    }
}

/// Why a DB could not be opened, in words.
#[derive(Debug)]
pub enum OpenError {
    /// The file does not start with the SQLite header (`SQLite format 3\0`).
    NotSqlite,
    /// The source could not be read.
    Io(io::Error),
    /// SQLite refused it (corrupt, truncated, unsupported).
    Sqlite(rusqlite::Error),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::NotSqlite => write!(
                f,
                "not an SQLite database (expected the header `SQLite format 3` in its first 16 bytes)"
            ),
            OpenError::Io(e) => write!(f, "cannot read: {e}"),
            OpenError::Sqlite(e) => write!(f, "SQLite cannot read it: {e}"),
        }
    }
}

/// An open read-only database. The source it reads is borrowed for `'a` and released when
/// the `Db` is dropped.
pub struct Db<'a> {
    conn: rusqlite::Connection,
    _source: PhantomData<&'a mut ()>,
}

impl<'a> Db<'a> {
    /// Opens the database held by `source` read-only (`immutable=1`, through the read-only
    /// VFS). Checks the header first, so a file that is not SQLite is said so in words.
    pub fn open(mut source: Box<dyn ByteSource + 'a>) -> Result<Db<'a>, OpenError> {
        let mut head = [0u8; 16];
        let n = source.read_at(0, &mut head).map_err(OpenError::Io)?;
        if n < 16 || &head != b"SQLite format 3\0" {
            return Err(OpenError::NotSqlite);
        }
        let conn = vfs::open(source).map_err(OpenError::Sqlite)?;
        // Sorts and temporary b-trees stay in memory: the VFS opens no other file.
        conn.pragma_update(None, "temp_store", "MEMORY")
            .map_err(OpenError::Sqlite)?;
        Ok(Db {
            conn,
            _source: PhantomData,
        })
    }

    /// The connection (read-only).
    pub fn conn(&self) -> &rusqlite::Connection {
        &self.conn
    }

    /// The column names of `table` in declaration order; empty when the table does not exist.
    pub fn columns(&self, table: &str) -> Result<Vec<String>, rusqlite::Error> {
        let mut st = self
            .conn
            .prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")?;
        let rows = st.query_map([table], |r| r.get::<_, String>(0))?;
        rows.collect()
    }
}

#[cfg(test)]
mod tests;
