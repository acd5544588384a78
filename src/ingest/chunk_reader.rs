//! A capped read buffer over any `io::Read`, with absolute byte offsets and
//! progress reporting (ARCHITECTURE.md: "Data flow"). Parsers run sans-I/O tokenizers over
//! [`ChunkReader::buffer`] and never see the underlying reader.

use std::io::{self, Read};
use std::ops::ControlFlow;

/// Bytes read so far of one file, for progress bars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Bytes read from the file so far.
    pub bytes_done: u64,
    /// Total size of the file in bytes, when known.
    pub bytes_total: Option<u64>,
}

/// Default chunk size: 4 MiB per read (the browser adapter slices the `Blob` the same way).
pub const DEFAULT_CHUNK: usize = 4 << 20;
/// Default cap for one record (one JSON event, one CSV row, one pickle frame): 256 MiB.
pub const DEFAULT_MAX_RECORD: usize = 256 << 20;

/// A read buffer: `buffer()` always starts at the first unconsumed byte.
///
/// Invariant: `start <= end <= buf.len()`; `offset` is the absolute file offset of `buf[start]`.
pub struct ChunkReader<R> {
    src: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    offset: u64,
    read_total: u64,
    total: Option<u64>,
    chunk: usize,
    max_record: usize,
    eof: bool,
}

/// Error of [`ChunkReader::fill`].
#[derive(Debug)]
pub enum FillError {
    /// The underlying reader failed at absolute byte `at`.
    Io {
        /// Absolute offset reached.
        at: u64,
        /// The reader's error.
        source: io::Error,
    },
    /// One record needs more than `limit` bytes; it starts at absolute byte `at`.
    TooLarge {
        /// Absolute offset where the record starts.
        at: u64,
        /// The cap in bytes.
        limit: usize,
    },
}

impl std::fmt::Display for FillError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FillError::Io { at, source } => write!(f, "read failed at byte {at}: {source}"),
            FillError::TooLarge { at, limit } => {
                write!(
                    f,
                    "one record starting at byte {at} is larger than {limit} bytes"
                )
            }
        }
    }
}

impl std::error::Error for FillError {}

impl<R: Read> ChunkReader<R> {
    /// A reader with the default chunk size and record cap; `total` is the file size if known.
    pub fn new(src: R, total: Option<u64>) -> Self {
        Self::with_sizes(src, total, DEFAULT_CHUNK, DEFAULT_MAX_RECORD)
    }

    /// A reader with explicit sizes (tests use tiny chunks to exercise every boundary).
    pub fn with_sizes(src: R, total: Option<u64>, chunk: usize, max_record: usize) -> Self {
        let chunk = chunk.max(1);
        ChunkReader {
            src,
            buf: Vec::new(),
            start: 0,
            end: 0,
            offset: 0,
            read_total: 0,
            total,
            chunk,
            max_record: max_record.max(chunk),
            eof: false,
        }
    }

    /// The same reader over a source whose first byte is byte `offset` of the file (a byte
    /// range read from an offset): [`ChunkReader::offset`] counts from there; progress counts
    /// the bytes this reader read.
    pub fn starting_at(mut self, offset: u64) -> Self {
        self.offset = offset;
        self
    }

    /// The unconsumed bytes.
    pub fn buffer(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }
    /// Absolute file offset of `buffer()[0]`.
    pub fn offset(&self) -> u64 {
        self.offset
    }
    /// True once the underlying reader reported end of file.
    pub fn at_eof(&self) -> bool {
        self.eof
    }
    /// Progress so far.
    pub fn progress(&self) -> Progress {
        Progress {
            bytes_done: self.read_total,
            bytes_total: self.total,
        }
    }
    /// Marks `n` bytes of `buffer()` as handled.
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.end - self.start);
        self.start += n;
        self.offset += n as u64;
    }

    /// Moves the unconsumed tail to the front and reads one more chunk.
    ///
    /// Returns `Ok(false)` at end of file (nothing more will come). The buffer
    /// grows only while the unconsumed tail does not leave room for a chunk,
    /// up to the record cap; past it, [`FillError::TooLarge`].
    pub fn fill(&mut self) -> Result<bool, FillError> {
        if self.eof {
            return Ok(false);
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let pending = self.end;
        if pending >= self.max_record {
            return Err(FillError::TooLarge {
                at: self.offset,
                limit: self.max_record,
            });
        }
        let want = (pending + self.chunk).min(self.max_record + self.chunk);
        if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
        loop {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.end += n;
                    self.read_total += n as u64;
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(FillError::Io {
                        at: self.read_total,
                        source: e,
                    })
                }
            }
        }
    }

    /// Reports progress to `on_progress`; `Break` means the caller asked to stop (Cancel).
    pub fn report(
        &self,
        on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        on_progress(self.progress())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_everything_with_tiny_chunks_and_keeps_offsets() {
        let data: Vec<u8> = (0u8..=255).collect();
        let mut r = ChunkReader::with_sizes(&data[..], Some(256), 7, 64);
        let mut seen = Vec::new();
        while r.fill().unwrap() {
            assert_eq!(r.offset() as usize, seen.len());
            // leave up to 2 bytes unconsumed, as a tokenizer waiting for more would
            let n = r.buffer().len().saturating_sub(2);
            seen.extend_from_slice(&r.buffer()[..n]);
            r.consume(n);
        }
        seen.extend_from_slice(r.buffer());
        assert_eq!(seen, data);
        assert_eq!(r.progress().bytes_done, 256);
    }

    #[test]
    fn record_cap_is_an_error_with_its_offset() {
        let data = vec![b'x'; 100];
        let mut r = ChunkReader::with_sizes(&data[..], None, 8, 16);
        r.fill().unwrap();
        r.consume(3);
        let err = loop {
            match r.fill() {
                Ok(true) => continue,
                Ok(false) => panic!("should hit the cap"),
                Err(e) => break e,
            }
        };
        match err {
            FillError::TooLarge { at, limit } => {
                assert_eq!(at, 3);
                assert_eq!(limit, 16);
            }
            other => panic!("unexpected {other}"),
        }
    }
}
