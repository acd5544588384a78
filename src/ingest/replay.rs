//! Reading the side files once per drop (issue 9, "Side files per worker"): the first pool
//! worker reads `profiler_info_*.json`, `profiler_metadata.json` and the Kineto heads through
//! a [`Recording`] opener, which keeps every byte it hands out; the bytes travel to the other
//! workers as one [`SideBundle`] buffer (beside `Open`), and their inventory step 2 reads them
//! through a [`Replay`] opener instead of the files. The inventory code is the same on every
//! worker, so the same bytes give the same inventory.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{self, Read};
use std::rc::Rc;

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

impl Opener for Recording<'_> {
    fn open(&self, path: &str) -> io::Result<Box<dyn Read + '_>> {
        let inner = self.inner.open(path)?;
        if !self.order.borrow().iter().any(|p| p == path) {
            self.order.borrow_mut().push(path.to_string());
            self.log.borrow_mut().insert(path.to_string(), Vec::new());
        }
        Ok(Box::new(RecordingReader {
            inner,
            log: self.log.clone(),
            path: path.to_string(),
            at: 0,
        }))
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

impl Opener for Replay<'_> {
    fn open(&self, path: &str) -> io::Result<Box<dyn Read + '_>> {
        match self.bundle.files.iter().find(|(p, _)| p == path) {
            Some((_, b)) => Ok(Box::new(&b[..])),
            None => self.inner.open(path),
        }
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
}
