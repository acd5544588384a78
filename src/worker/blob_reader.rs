//! `std::io::Read` over a browser `Blob`: synchronous
//! `FileReaderSync.readAsArrayBuffer(blob.slice(a, b))` in slices of [`SLICE_BYTES`], so the
//! core's streaming parsers run unchanged in a worker. Never reads a whole file at once, so
//! files ≥ 2 GB work (`readAsArrayBuffer` fails on whole files ≥ 2 GB).
//!
//! Where JavaScript Promise Integration (JSPI) is available (Chromium ≥ 137), the worker's
//! loader (`web/worker_loader.js`) starts a second, tiny reader worker that reads the slices
//! with its own `FileReaderSync` ahead of the parser and transfers them here; the parser's
//! `read` then suspends the wasm stack on [`io_next`] until the next slice has arrived. Reading
//! (the browser serving blob bytes, ≈ 5 ms/MB of another thread's time) then overlaps with the
//! analysis instead of following it; without JSPI the reads stay synchronous on this thread.
//!
//! [`FileOpener`] implements the core's only I/O seam, [`Opener`], over the `File` objects
//! the UI posted, and reports progress per file through a callback.

use std::cell::Cell;
use std::io;
use std::rc::Rc;

use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Blob, File, FileReaderSync};

use crate::ingest::Opener;
use crate::protocol::{FileMeta, ProgressDto};

/// Bytes per `Blob.slice` read: 8 MiB (ARCHITECTURE.md: "Performance notes").
pub const SLICE_BYTES: u64 = 8 << 20;

/// A `read` asking at least this many bytes while nothing is buffered is served straight into
/// the caller's buffer (no intermediate copy): 1 MiB.
pub const DIRECT_MIN_BYTES: usize = 1 << 20;

/// Minimum time between two progress reports of one file, ms (progress at least every 250 ms).
pub const PROGRESS_EVERY_MS: f64 = 100.0;

/// Bytes of the first prefetched slice of a file: 1 MiB, so a file that is only sniffed
/// (inventory, format detection) costs little; the following slices are [`SLICE_BYTES`].
pub const FIRST_SLICE_BYTES: u64 = 1 << 20;

/// Slices the reader worker keeps in flight ahead of the parser, per open file (memory bound:
/// this many × [`SLICE_BYTES`] of JavaScript memory per file being read).
pub const SLICES_AHEAD: u32 = 2;

/// Receives progress reports.
pub type ProgressSink = Rc<dyn Fn(ProgressDto)>;

#[wasm_bindgen]
extern "C" {
    /// `web/worker_loader.js`: starts prefetching `blob` from byte `start` in the reader
    /// worker (slices of `first` bytes, then `slice` bytes, `ahead` in flight); returns the
    /// stream's id.
    #[wasm_bindgen(js_name = proflensIoOpen)]
    fn io_open(blob: &Blob, start: f64, first: f64, slice: f64, ahead: u32) -> u32;
    /// The next slice of stream `id`: a `Uint8Array` (empty at the end), or a string saying
    /// why the read failed. A **suspending** import (JSPI): the loader wraps it in
    /// `WebAssembly.Suspending`, so the wasm stack waits here while the event loop runs.
    #[wasm_bindgen(js_name = proflensIoNext)]
    fn io_next(id: u32) -> JsValue;
    /// Stops stream `id` and frees its prefetched slices.
    #[wasm_bindgen(js_name = proflensIoClose)]
    fn io_close(id: u32);
}

thread_local! {
    /// Set once by [`enable_prefetch`]: the loader found JSPI and started the reader worker.
    static PREFETCH: Cell<bool> = const { Cell::new(false) };
}

/// Switches every [`BlobReader`] created afterwards to slices prefetched by the reader worker.
/// Called by the worker's entry when the loader says JSPI is on (`self.proflensJspi`).
pub fn enable_prefetch() {
    PREFETCH.with(|p| p.set(true));
}

/// Where a [`BlobReader`]'s slices come from.
enum Source {
    /// `FileReaderSync` on this thread: reading and parsing alternate.
    Sync(FileReaderSync),
    /// Stream `id` of the reader worker, with the slice being served and the offset in it.
    Prefetched {
        id: u32,
        slice: Option<Uint8Array>,
        at: u32,
    },
}

/// A sequential reader over one `Blob`.
pub struct BlobReader {
    blob: Blob,
    source: Source,
    size: u64,
    /// The byte the reader started at ([`BlobReader::new_at`]).
    start: u64,
    /// Every read slices exactly what it asks for, nothing ahead ([`BlobReader::exact`]).
    exact: bool,
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
        Self::new_at(blob, 0, file, progress)
    }

    /// A reader over `blob` that reads no byte ahead of what is asked: each `read` is one
    /// synchronous `Blob.slice` of at most its buffer's size (and [`SLICE_BYTES`]), so the
    /// bytes handed out are all the bytes read. For a look at a file's head
    /// ([`Opener::open_head`]: the inventory's trace sniff, whose bytes the run does not read
    /// again), where the reader worker's read-ahead (a 1 MiB slice, then 8 MiB ones) would
    /// slice megabytes that nobody uses.
    ///
    /// Errors: `FileReaderSync` unavailable (not inside a worker).
    pub fn exact(blob: Blob, file: u32, progress: Option<ProgressSink>) -> io::Result<Self> {
        let source = Source::Sync(FileReaderSync::new().map_err(|e| js_err("FileReaderSync", e))?);
        let mut r = Self::with_source(blob, 0, source, file, progress);
        r.exact = true;
        Ok(r)
    }

    /// A reader over `blob` from byte `start` on (the bytes before it are not read; progress
    /// counts from the file's start).
    ///
    /// Errors: `FileReaderSync` unavailable (not inside a worker).
    pub fn new_at(
        blob: Blob,
        start: u64,
        file: u32,
        progress: Option<ProgressSink>,
    ) -> io::Result<Self> {
        let source = if PREFETCH.with(Cell::get) {
            let id = io_open(
                &blob,
                start.min(blob.size() as u64) as f64,
                FIRST_SLICE_BYTES as f64,
                SLICE_BYTES as f64,
                SLICES_AHEAD,
            );
            Source::Prefetched {
                id,
                slice: None,
                at: 0,
            }
        } else {
            Source::Sync(FileReaderSync::new().map_err(|e| js_err("FileReaderSync", e))?)
        };
        Ok(Self::with_source(blob, start, source, file, progress))
    }

    fn with_source(
        blob: Blob,
        start: u64,
        source: Source,
        file: u32,
        progress: Option<ProgressSink>,
    ) -> Self {
        let size = blob.size() as u64;
        BlobReader {
            blob,
            source,
            size,
            start: start.min(size),
            exact: false,
            pos: start.min(size),
            buf: Vec::new(),
            buf_at: 0,
            file,
            started_ms: js_sys::Date::now(),
            last_report_ms: Cell::new(f64::NEG_INFINITY),
            progress,
        }
    }

    /// The next slice of at most `want` bytes (never past the end): one `Blob.slice` +
    /// `readAsArrayBuffer` (synchronous source), or the next slice the reader worker sent
    /// (prefetched source, whatever its size); the caller copies it once into wasm memory.
    fn next_slice(&mut self, want: u64) -> io::Result<Uint8Array> {
        let end = (self.pos + want).min(self.size);
        let bytes = match &self.source {
            Source::Sync(reader) => {
                let slice = self
                    .blob
                    .slice_with_f64_and_f64(self.pos as f64, end as f64)
                    .map_err(|e| js_err("Blob.slice", e))?;
                let array = reader
                    .read_as_array_buffer(&slice)
                    .map_err(|e| js_err("FileReaderSync.readAsArrayBuffer", e))?;
                Uint8Array::new(&array)
            }
            Source::Prefetched { id, .. } => {
                let got = io_next(*id);
                match got.dyn_into::<Uint8Array>() {
                    Ok(bytes) => bytes,
                    Err(why) => {
                        return Err(io::Error::other(format!(
                            "reading the file failed at byte {}: {}",
                            self.pos,
                            why.as_string().unwrap_or_else(|| format!("{why:?}"))
                        )))
                    }
                }
            }
        };
        // A slice never reaches past the file's size; the min guards a misbehaving browser.
        let cap = match self.source {
            Source::Sync(_) => end - self.pos,
            Source::Prefetched { .. } => self.size - self.pos,
        };
        let n = (bytes.length() as u64).min(cap);
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
        // What a large read left of a prefetched slice comes first.
        let rest = match &mut self.source {
            Source::Prefetched { slice, at, .. } => slice
                .take()
                .filter(|s| *at < s.length())
                .map(|s| s.subarray(*at, s.length())),
            Source::Sync(_) => None,
        };
        let bytes = match rest {
            Some(rest) => rest,
            None => self.next_slice(SLICE_BYTES)?,
        };
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
            mb_per_s: (self.pos - self.start) as f64 / (1024.0 * 1024.0) / secs,
        });
    }
}

impl io::Read for BlobReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.exact {
            if self.pos >= self.size || out.is_empty() {
                return Ok(0);
            }
            let bytes = self.next_slice((out.len() as u64).min(SLICE_BYTES))?;
            let n = bytes.length() as usize;
            bytes.copy_to(&mut out[..n]);
            return Ok(n);
        }
        if matches!(self.source, Source::Prefetched { .. }) && out.len() >= DIRECT_MIN_BYTES {
            return self.read_prefetched_direct(out);
        }
        if self.buf_at >= self.buf.len() {
            let pending = matches!(&self.source,
                Source::Prefetched { slice: Some(s), at, .. } if *at < s.length());
            if !pending && self.pos >= self.size {
                return Ok(0);
            }
            if out.len() >= DIRECT_MIN_BYTES && matches!(self.source, Source::Sync(_)) {
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

impl BlobReader {
    /// A large `read` over a prefetched source: copies straight from the slice the reader
    /// worker sent into the caller's buffer (one copy), across as many reads as it lasts.
    fn read_prefetched_direct(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.buf_at < self.buf.len() {
            // Left over from smaller reads: serve it first.
            let avail = &self.buf[self.buf_at..];
            let n = avail.len().min(out.len());
            out[..n].copy_from_slice(&avail[..n]);
            self.buf_at += n;
            return Ok(n);
        }
        let need_slice = match &self.source {
            Source::Prefetched { slice, at, .. } => {
                slice.as_ref().is_none_or(|s| *at >= s.length())
            }
            Source::Sync(_) => false,
        };
        if need_slice {
            if self.pos >= self.size {
                return Ok(0);
            }
            let bytes = self.next_slice(SLICE_BYTES)?;
            if let Source::Prefetched { slice, at, .. } = &mut self.source {
                *slice = Some(bytes);
                *at = 0;
            }
        }
        let Source::Prefetched {
            slice: Some(bytes),
            at,
            ..
        } = &mut self.source
        else {
            return Ok(0);
        };
        let n = ((bytes.length() - *at) as usize).min(out.len());
        bytes.subarray(*at, *at + n as u32).copy_to(&mut out[..n]);
        *at += n as u32;
        Ok(n)
    }
}

impl Drop for BlobReader {
    fn drop(&mut self) {
        if let Source::Prefetched { id, .. } = self.source {
            io_close(id);
        }
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
        self.open_from(path, 0)
    }

    fn open_head(&self, path: &str) -> io::Result<Box<dyn io::Read + '_>> {
        let (idx, blob) = self.blob(path)?;
        Ok(Box::new(BlobReader::exact(
            blob,
            idx,
            self.progress.clone(),
        )?))
    }

    fn open_from(&self, path: &str, offset: u64) -> io::Result<Box<dyn io::Read + '_>> {
        let (idx, blob) = self.blob(path)?;
        let reader = BlobReader::new_at(blob, offset, idx, self.progress.clone())?;
        Ok(Box::new(reader))
    }

    /// One `Blob.slice(offset, offset + buf.len())` read synchronously (the DB reader's page
    /// windows: random access, no read-ahead).
    fn read_at(&self, path: &str, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let (_, blob) = self.blob(path)?;
        let size = blob.size() as u64;
        let end = offset.saturating_add(buf.len() as u64).min(size);
        if offset >= end {
            return Ok(0);
        }
        let reader = FileReaderSync::new().map_err(|e| js_err("FileReaderSync", e))?;
        let slice = blob
            .slice_with_f64_and_f64(offset as f64, end as f64)
            .map_err(|e| js_err("Blob.slice", e))?;
        let array = reader
            .read_as_array_buffer(&slice)
            .map_err(|e| js_err("FileReaderSync.readAsArrayBuffer", e))?;
        let bytes = Uint8Array::new(&array);
        let n = (bytes.length() as usize).min(buf.len());
        bytes.subarray(0, n as u32).copy_to(&mut buf[..n]);
        Ok(n)
    }
}

impl FileOpener {
    /// The index and `Blob` of input `path`.
    fn blob(&self, path: &str) -> io::Result<(u32, Blob)> {
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
        Ok((idx as u32, blob.clone()))
    }
}
