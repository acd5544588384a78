//! `std::io::Read` over a browser `Blob` (house-style §8.1 step 1): synchronous
//! `FileReaderSync.readAsArrayBuffer(blob.slice(a, b))` in slices of [`SLICE_BYTES`], so the
//! core's streaming parsers run unchanged in a worker. Never reads a whole file at once, so
//! files ≥ 2 GB work (peers.md §5: `readAsArrayBuffer` fails on whole files ≥ 2 GB).
//!
//! [`FileOpener`] implements the core's only I/O seam, [`Opener`], over the `File` objects
//! the UI posted, and reports progress per file through a callback.

use std::cell::Cell;
use std::io;
use std::rc::Rc;

use js_sys::Uint8Array;
use web_sys::{Blob, File, FileReaderSync};

use crate::ingest::Opener;
use crate::protocol::{FileMeta, ProgressDto};

/// Bytes per `Blob.slice` read: 8 MiB (peers.md §5 asks for a few MiB to 32 MiB).
pub const SLICE_BYTES: u64 = 8 << 20;

/// A `read` asking at least this many bytes while nothing is buffered is served straight into
/// the caller's buffer (no intermediate copy): 1 MiB.
pub const DIRECT_MIN_BYTES: usize = 1 << 20;

/// Minimum time between two progress reports of one file, ms (peers.md §5: at least every 250 ms).
pub const PROGRESS_EVERY_MS: f64 = 100.0;

/// Receives progress reports.
pub type ProgressSink = Rc<dyn Fn(ProgressDto)>;

/// A sequential reader over one `Blob`.
pub struct BlobReader {
    blob: Blob,
    reader: FileReaderSync,
    size: u64,
    pos: u64,
    buf: Vec<u8>,
    buf_at: usize,
    file: u32,
    started_ms: f64,
    last_report_ms: Cell<f64>,
    progress: Option<ProgressSink>,
}

impl BlobReader {
    /// A reader over `blob`; `file` is the index reported in progress messages.
    ///
    /// Errors: `FileReaderSync` unavailable (not inside a worker).
    pub fn new(blob: Blob, file: u32, progress: Option<ProgressSink>) -> io::Result<Self> {
        let reader = FileReaderSync::new().map_err(|e| js_err("FileReaderSync", e))?;
        let size = blob.size() as u64;
        let now = js_sys::Date::now();
        Ok(BlobReader {
            blob,
            reader,
            size,
            pos: 0,
            buf: Vec::new(),
            buf_at: 0,
            file,
            started_ms: now,
            last_report_ms: Cell::new(f64::NEG_INFINITY),
            progress,
        })
    }

    /// The next slice of at most `want` bytes (never past the end): one `Blob.slice` +
    /// `readAsArrayBuffer`; the caller copies it once into wasm memory.
    fn next_slice(&mut self, want: u64) -> io::Result<Uint8Array> {
        let end = (self.pos + want).min(self.size);
        let slice = self
            .blob
            .slice_with_f64_and_f64(self.pos as f64, end as f64)
            .map_err(|e| js_err("Blob.slice", e))?;
        let array = self
            .reader
            .read_as_array_buffer(&slice)
            .map_err(|e| js_err("FileReaderSync.readAsArrayBuffer", e))?;
        let bytes = Uint8Array::new(&array);
        // A slice is never longer than asked; the min guards a misbehaving browser.
        let n = (bytes.length() as u64).min(end - self.pos);
        self.pos += n;
        if n == 0 && self.pos < self.size {
            // The file shrank or became unreadable while we read it.
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("file ended at byte {} of {}", self.pos, self.size),
            ));
        }
        self.report(false);
        Ok(bytes.subarray(0, n as u32))
    }

    fn refill(&mut self) -> io::Result<()> {
        let bytes = self.next_slice(SLICE_BYTES)?;
        let n = bytes.length() as usize;
        self.buf.resize(n, 0);
        bytes.copy_to(&mut self.buf[..n]);
        self.buf_at = 0;
        Ok(())
    }

    fn report(&self, force: bool) {
        let Some(sink) = &self.progress else { return };
        let now = js_sys::Date::now();
        let done = self.pos >= self.size;
        if !force && !done && now - self.last_report_ms.get() < PROGRESS_EVERY_MS {
            return;
        }
        self.last_report_ms.set(now);
        let secs = ((now - self.started_ms) / 1000.0).max(1e-3);
        sink(ProgressDto {
            file: self.file,
            bytes_done: self.pos,
            bytes_total: self.size,
            mb_per_s: self.pos as f64 / (1024.0 * 1024.0) / secs,
        });
    }
}

impl io::Read for BlobReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.buf_at >= self.buf.len() {
            if self.pos >= self.size {
                return Ok(0);
            }
            if out.len() >= DIRECT_MIN_BYTES {
                // The parser's own buffer is large (ChunkReader asks 4 MiB): the slice goes
                // straight into it, one copy instead of two.
                let bytes = self.next_slice((out.len() as u64).min(SLICE_BYTES))?;
                let n = bytes.length() as usize;
                bytes.copy_to(&mut out[..n]);
                return Ok(n);
            }
            self.refill()?;
        }
        let avail = &self.buf[self.buf_at..];
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.buf_at += n;
        Ok(n)
    }
}

fn js_err(what: &str, e: wasm_bindgen::JsValue) -> io::Error {
    io::Error::other(format!("{what} failed: {e:?}"))
}

/// The worker's [`Opener`]: the `File` objects posted by the UI, by relative path.
pub struct FileOpener {
    metas: Vec<FileMeta>,
    files: Vec<File>,
    progress: Option<ProgressSink>,
}

impl FileOpener {
    /// `metas[i]` describes `files[i]` (same order as the [`crate::protocol::Request::Open`] list).
    pub fn new(metas: Vec<FileMeta>, files: Vec<File>, progress: Option<ProgressSink>) -> Self {
        FileOpener {
            metas,
            files,
            progress,
        }
    }
    /// The file list, as the inventory sees it.
    pub fn metas(&self) -> &[FileMeta] {
        &self.metas
    }
}

impl Opener for FileOpener {
    fn open(&self, path: &str) -> io::Result<Box<dyn io::Read + '_>> {
        let idx = self
            .metas
            .iter()
            .position(|m| m.path == path)
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, format!("no input file {path}"))
            })?;
        let file = self.files.get(idx).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("no File object for {path}"),
            )
        })?;
        let blob: &Blob = file.as_ref();
        let reader = BlobReader::new(blob.clone(), idx as u32, self.progress.clone())?;
        Ok(Box::new(reader))
    }
}
