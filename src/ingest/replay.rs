//! Reading the side files once per drop ("Side files per worker"): the first pool
//! worker reads `profiler_info_*.json`, `profiler_metadata.json` and the Kineto heads through
//! a [`Recording`] opener, which keeps every byte it hands out; the bytes travel to the other
//! workers as one [`SideBundle`] buffer (beside `Open`), and their inventory step 2 reads them
//! through a [`Replay`] opener instead of the files. The inventory code is the same on every
//! worker, so the same bytes give the same inventory.
//!
//! The heads of the Kineto traces are kept after the inventory ([`Heads`]): the run of a trace
//! reads them from memory and only the rest of the file from the opener ([`Resume`],
//! [`Opener::open_from`]), so each byte of a trace is read once per drop.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{self, Read};
use std::rc::Rc;
use std::sync::Mutex;

use super::opener::Opener;
use crate::base::wire::{Dec, DecResult, Enc};

const MAGIC: &[u8] = b"PLSIDE1\n";

/// The bytes read from each path, in the order of first reading.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SideBundle {
    /// `(path, bytes read from its start)`.
    pub files: Vec<(String, Vec<u8>)>,
}

impl SideBundle {
    /// The bundle as one buffer.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::new(MAGIC);
        e.u64(self.files.len() as u64);
        for (p, b) in &self.files {
            e.str(p);
            e.bytes(b);
        }
        e.buf
    }

    /// A buffer made by [`SideBundle::encode`].
    ///
    /// # Errors
    ///
    /// Not a bundle, or cut short.
    pub fn decode(buf: &[u8]) -> DecResult<SideBundle> {
        let mut d = Dec::new(buf, MAGIC)?;
        let n = d.count(16)?;
        let mut files = Vec::with_capacity(n);
        for _ in 0..n {
            let path = d.str()?.to_string();
            files.push((path, d.bytes()?.to_vec()));
        }
        Ok(SideBundle { files })
    }
}

type Log = Rc<RefCell<BTreeMap<String, Vec<u8>>>>;

/// An opener that keeps every byte read through it, per path ([`Recording::bundle`]).
pub struct Recording<'a> {
    inner: &'a dyn Opener,
    log: Log,
    order: RefCell<Vec<String>>,
}

struct RecordingReader<'b> {
    inner: Box<dyn Read + 'b>,
    log: Log,
    path: String,
    at: usize,
}

impl Read for RecordingReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let mut log = self.log.borrow_mut();
        let kept = log.entry(self.path.clone()).or_default();
        // A path opened again re-reads its start: keep only bytes past what is kept.
        let end = self.at + n;
        if end > kept.len() {
            let from = kept.len().max(self.at);
            kept.extend_from_slice(&buf[from - self.at..n]);
        }
        self.at = end;
        Ok(n)
    }
}

impl<'a> Recording<'a> {
    /// Records what is read through `inner`.
    pub fn new(inner: &'a dyn Opener) -> Self {
        Recording {
            inner,
            log: Rc::default(),
            order: RefCell::default(),
        }
    }

    /// The bytes read so far, per path in the order of first opening.
    pub fn bundle(&self) -> SideBundle {
        let log = self.log.borrow();
        SideBundle {
            files: self
                .order
                .borrow()
                .iter()
                .filter_map(|p| log.get(p).map(|b| (p.clone(), b.clone())))
                .collect(),
        }
    }
}

impl Recording<'_> {
    fn record<'b>(&'b self, path: &str, inner: Box<dyn Read + 'b>) -> Box<dyn Read + 'b> {
        if !self.order.borrow().iter().any(|p| p == path) {
            self.order.borrow_mut().push(path.to_string());
            self.log.borrow_mut().insert(path.to_string(), Vec::new());
        }
        Box::new(RecordingReader {
            inner,
            log: self.log.clone(),
            path: path.to_string(),
            at: 0,
        })
    }
}

impl Opener for Recording<'_> {
    fn open(&self, path: &str) -> io::Result<Box<dyn Read + '_>> {
        Ok(self.record(path, self.inner.open(path)?))
    }

    fn open_head(&self, path: &str) -> io::Result<Box<dyn Read + '_>> {
        Ok(self.record(path, self.inner.open_head(path)?))
    }
}

/// An opener that serves the paths of a [`SideBundle`] from memory and every other path
/// from `inner`.
pub struct Replay<'a> {
    bundle: &'a SideBundle,
    inner: &'a dyn Opener,
}

impl<'a> Replay<'a> {
    /// Serves `bundle` first, `inner` for the rest.
    pub fn new(bundle: &'a SideBundle, inner: &'a dyn Opener) -> Self {
        Replay { bundle, inner }
    }
}

impl Replay<'_> {
    /// The bytes the bundle holds for `path`.
    fn held(&self, path: &str) -> Option<Box<dyn Read + '_>> {
        let (_, b) = self.bundle.files.iter().find(|(p, _)| p == path)?;
        Some(Box::new(&b[..]))
    }
}

impl Opener for Replay<'_> {
    fn open(&self, path: &str) -> io::Result<Box<dyn Read + '_>> {
        self.held(path).map_or_else(|| self.inner.open(path), Ok)
    }

    fn open_head(&self, path: &str) -> io::Result<Box<dyn Read + '_>> {
        self.held(path)
            .map_or_else(|| self.inner.open_head(path), Ok)
    }
}

/// Largest head kept per file (bytes): larger heads are dropped and the run reads that file
/// again from its start. The inventory's trace sniff stops after 2,000 events or 16 MiB of
/// inflated bytes, and a real head is 64 KiB–2 MiB.
pub const MAX_HEAD_BYTES: usize = 16 << 20;

/// The first bytes of some files, read once by the inventory, to be handed to the run
/// ([`Resume`]); each head is given out once and then released. Shared by the run's threads.
#[derive(Debug, Default)]
pub struct Heads {
    kept: Mutex<BTreeMap<String, Vec<u8>>>,
}

impl Heads {
    /// No heads.
    pub fn new() -> Self {
        Self::default()
    }

    /// The files of `bundle` for which `keep(path)` holds, up to [`MAX_HEAD_BYTES`] each.
    pub fn of(bundle: SideBundle, keep: impl Fn(&str) -> bool) -> Self {
        let kept = bundle
            .files
            .into_iter()
            .filter(|(p, b)| keep(p) && !b.is_empty() && b.len() <= MAX_HEAD_BYTES)
            .collect();
        Heads {
            kept: Mutex::new(kept),
        }
    }

    /// Removes and returns the head of `path`.
    fn take(&self, path: &str) -> Option<Vec<u8>> {
        match self.kept.lock() {
            Ok(mut m) => m.remove(path),
            Err(_) => None,
        }
    }

    /// Bytes held (every head not yet given out).
    pub fn bytes(&self) -> usize {
        self.kept
            .lock()
            .map(|m| m.values().map(Vec::len).sum())
            .unwrap_or(0)
    }
}

/// An opener that gives a file with a kept head as that head (from memory) followed by the
/// rest of the file (`inner.open_from(path, head length)`), and every other file (or the same
/// file opened again) from `inner`.
pub struct Resume<'a, O: ?Sized> {
    heads: &'a Heads,
    inner: &'a O,
}

impl<'a, O: Opener + ?Sized> Resume<'a, O> {
    /// `heads` first, then `inner`.
    pub fn new(heads: &'a Heads, inner: &'a O) -> Self {
        Resume { heads, inner }
    }
}

impl<O: Opener + ?Sized> Opener for Resume<'_, O> {
    fn open(&self, path: &str) -> io::Result<Box<dyn Read + '_>> {
        match self.heads.take(path) {
            Some(head) => {
                let rest = self.inner.open_from(path, head.len() as u64)?;
                Ok(Box::new(io::Cursor::new(head).chain(rest)))
            }
            None => self.inner.open(path),
        }
    }

    fn open_from(&self, path: &str, offset: u64) -> io::Result<Box<dyn Read + '_>> {
        self.inner.open_from(path, offset)
    }

    fn open_head(&self, path: &str) -> io::Result<Box<dyn Read + '_>> {
        self.inner.open_head(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::MemOpener;

    #[test]
    fn recording_keeps_the_bytes_read_and_replay_serves_them() {
        let mut m = MemOpener::new();
        m.add("a/info.json", b"{\"x\": 1}".to_vec());
        m.add("a/trace.json", vec![b'y'; 100]);
        let rec = Recording::new(&m);
        let mut s = String::new();
        rec.open("a/info.json")
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        let mut head = [0u8; 10];
        rec.open("a/trace.json")
            .unwrap()
            .read_exact(&mut head)
            .unwrap();
        // Opened again: the start is not kept twice.
        let mut more = [0u8; 12];
        rec.open("a/trace.json")
            .unwrap()
            .read_exact(&mut more)
            .unwrap();
        let b = rec.bundle();
        assert_eq!(
            b.files,
            vec![
                ("a/info.json".to_string(), b"{\"x\": 1}".to_vec()),
                ("a/trace.json".to_string(), vec![b'y'; 12]),
            ]
        );
        let back = SideBundle::decode(&b.encode()).unwrap();
        assert_eq!(back, b);
        let empty = MemOpener::new();
        let r = Replay::new(&back, &empty);
        let mut s2 = String::new();
        r.open("a/info.json")
            .unwrap()
            .read_to_string(&mut s2)
            .unwrap();
        assert_eq!(s2, "{\"x\": 1}");
        assert!(r.open("a/other.json").is_err());
        assert!(SideBundle::decode(b"PLSIDE1\n\xff").is_err());
    }

    #[test]
    fn resume_serves_a_kept_head_once_then_the_rest_of_the_file() {
        let mut m = MemOpener::new();
        let trace: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        m.add("r/t.json", trace.clone());
        m.add("r/info.json", b"{}".to_vec());
        let rec = Recording::new(&m);
        let mut head = [0u8; 300];
        rec.open("r/t.json").unwrap().read_exact(&mut head).unwrap();
        rec.open("r/info.json")
            .unwrap()
            .read_to_end(&mut Vec::new())
            .unwrap();
        let heads = Heads::of(rec.bundle(), |p| p.ends_with("t.json"));
        assert_eq!(heads.bytes(), 300);
        let r = Resume::new(&heads, &m);
        let mut all = Vec::new();
        r.open("r/t.json").unwrap().read_to_end(&mut all).unwrap();
        assert_eq!(all, trace);
        assert_eq!(heads.bytes(), 0, "a head is given out once");
        // Opened again: the whole file from the opener.
        let mut again = Vec::new();
        r.open("r/t.json").unwrap().read_to_end(&mut again).unwrap();
        assert_eq!(again, trace);
        let mut rest = Vec::new();
        m.open_from("r/t.json", 990)
            .unwrap()
            .read_to_end(&mut rest)
            .unwrap();
        assert_eq!(rest, trace[990..]);
        assert!(
            m.open_from("r/t.json", 5000)
                .unwrap()
                .read(&mut [0; 4])
                .unwrap()
                == 0
        );
        assert!(r.open("r/none.json").is_err());
    }
}
