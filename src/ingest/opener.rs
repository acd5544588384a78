//! The I/O seam: the core never opens files itself, it asks an [`Opener`].

use std::io::{self, Read};

/// One input file as the user gave it: a path relative to the dropped root and its size.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InputFile {
    /// Path relative to the dropped root, `/`-separated (browser `webkitRelativePath`).
    pub path: String,
    /// Size in bytes.
    pub size: u64,
}

/// Gives the core the bytes of one input file, by its relative path.
///
/// Implemented by the edges: `cli` over `std::fs`, `worker` over
/// `FileReaderSync` + `Blob.slice`, tests by [`MemOpener`].
///
/// Errors: `io::ErrorKind::NotFound` when `path` is not one of the inputs.
pub trait Opener {
    /// Opens `path` (relative, `/`-separated) for sequential reading.
    fn open(&self, path: &str) -> io::Result<Box<dyn io::Read + '_>>;

    /// Opens `path` for sequential reading from byte `offset` on (the rest of a file whose
    /// first `offset` bytes were read before: [`crate::ingest::replay::Resume`]). An offset
    /// past the end gives an empty reader.
    ///
    /// The default opens the file and reads its first `offset` bytes into nothing; every
    /// opener of the product (files on disk, `Blob`s, memory) overrides it with a seek, so no
    /// byte is read twice.
    fn open_from(&self, path: &str, offset: u64) -> io::Result<Box<dyn io::Read + '_>> {
        let mut r = self.open(path)?;
        io::copy(&mut (&mut r).take(offset), &mut io::sink())?;
        Ok(r)
    }

    /// Opens `path` to read its first bytes only (the inventory's look at a trace's head): the
    /// reader fetches no more than each `read` asks, so the bytes handed out are all the bytes
    /// read ([`crate::ingest::replay::Recording`] keeps them, and the run reads only the rest).
    /// The default is [`Opener::open`], for openers that read no further than asked anyway;
    /// the browser's, which slices ahead of the parser, overrides it.
    fn open_head(&self, path: &str) -> io::Result<Box<dyn io::Read + '_>> {
        self.open(path)
    }

    /// Reads bytes `offset .. offset + buf.len()` of `path` into `buf` and returns how many
    /// were read (fewer only at the end of the file): random access, for the DB reader's
    /// page windows (`ingest::sqlite`). The default opens the file at `offset`
    /// ([`Opener::open_from`]: a seek on disk); the browser's reads exactly that `Blob` slice.
    fn read_at(&self, path: &str, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut r = self.open_from(path, offset)?;
        let mut n = 0;
        while n < buf.len() {
            match r.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }
}

/// An [`Opener`] over in-memory files (tests, the built-in sample).
#[derive(Clone, Debug, Default)]
pub struct MemOpener {
    files: Vec<(String, Vec<u8>)>,
}

impl MemOpener {
    /// An opener with no files.
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds (or replaces) a file.
    pub fn add(&mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> &mut Self {
        let path = path.into();
        self.files.retain(|(p, _)| *p != path);
        self.files.push((path, bytes.into()));
        self
    }
    /// The files held, as the inventory sees them.
    pub fn list(&self) -> Vec<InputFile> {
        self.files
            .iter()
            .map(|(p, b)| InputFile {
                path: p.clone(),
                size: b.len() as u64,
            })
            .collect()
    }
}

impl MemOpener {
    fn bytes(&self, path: &str) -> io::Result<&[u8]> {
        match self.files.iter().find(|(p, _)| p == path) {
            Some((_, bytes)) => Ok(bytes),
            None => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no input file {path}"),
            )),
        }
    }
}

impl Opener for MemOpener {
    fn open(&self, path: &str) -> io::Result<Box<dyn io::Read + '_>> {
        Ok(Box::new(self.bytes(path)?))
    }

    fn open_from(&self, path: &str, offset: u64) -> io::Result<Box<dyn io::Read + '_>> {
        let b = self.bytes(path)?;
        let at = usize::try_from(offset).unwrap_or(usize::MAX).min(b.len());
        Ok(Box::new(&b[at..]))
    }
}
