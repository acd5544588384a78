//! An opener that counts every open and every byte read, per path (tests: each
//! input byte read once per drop, exports reading nothing).

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::sync::{Arc, Mutex};

use proflens::cli::fs_opener::FsOpener;
use proflens::ingest::Opener;

/// Per path: times opened and bytes handed out.
pub type Counts = Arc<Mutex<BTreeMap<String, (u32, u64)>>>;

/// An opener that counts every open and every byte read, per path, over a real opener `O`
/// (the fixtures' file system by default, or any `&dyn Opener`).
pub struct Counting<O = FsOpener> {
    /// The real opener.
    pub inner: O,
    /// The counts, shared.
    pub counts: Counts,
}

/// The real opener inside a [`Counting`].
pub trait Inner {
    /// The opener itself.
    fn opener(&self) -> &dyn Opener;
}

impl Inner for FsOpener {
    fn opener(&self) -> &dyn Opener {
        self
    }
}

impl Inner for &dyn Opener {
    fn opener(&self) -> &dyn Opener {
        *self
    }
}

struct CountingReader<'a> {
    inner: Box<dyn Read + 'a>,
    path: String,
    counts: Counts,
}

impl Read for CountingReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counts.lock().unwrap().get_mut(&self.path).unwrap().1 += n as u64;
        Ok(n)
    }
}

impl<O: Inner> Opener for Counting<O> {
    fn open(&self, path: &str) -> io::Result<Box<dyn Read + '_>> {
        self.open_from(path, 0)
    }

    /// Counted as an open; only the bytes from `offset` on are read (and counted).
    fn open_from(&self, path: &str, offset: u64) -> io::Result<Box<dyn Read + '_>> {
        let inner = self.inner.opener().open_from(path, offset)?;
        self.counts
            .lock()
            .unwrap()
            .entry(path.to_string())
            .or_default()
            .0 += 1;
        Ok(Box::new(CountingReader {
            inner,
            path: path.to_string(),
            counts: self.counts.clone(),
        }))
    }
}

impl Counting {
    /// A counting opener over `inner` and the counts it fills.
    pub fn new(inner: FsOpener) -> (Counting, Counts) {
        let counts: Counts = Default::default();
        (
            Counting {
                inner,
                counts: counts.clone(),
            },
            counts,
        )
    }

    /// A copy of the counts so far.
    pub fn snapshot(&self) -> BTreeMap<String, (u32, u64)> {
        self.counts.lock().unwrap().clone()
    }
}
