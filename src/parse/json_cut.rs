//! A JSON reader that cuts the structure itself: it walks the objects and arrays a caller
//! asks for over bytes read in chunks, and hands every other value out as its own bytes
//! (a [`Piece`]), which the caller parses with `serde_json::from_slice` ([`Piece::parse`]).
//!
//! So a large document (a cluster summary, a communication file) is read without holding
//! its text and without serde_json's streaming reader: memory is one read chunk plus the
//! largest value handed out, and that is capped (`cap`: past it, [`CutKind::TooLarge`] with
//! the value's first byte). A value's end is found by the trace scanner
//! ([`ValueScan`], resumable: each byte scanned once however the reads cut the value);
//! the bytes between values (`{`, keys, `:`, `,`, `}`) are checked here, the values
//! themselves by serde_json. Every error carries the byte, line and column it is at, in the
//! whole file (a piece's own positions are moved to the file's).

use std::fmt;
use std::io::Read;

use serde::de::DeserializeOwned;

use super::trace_json::scan::{End, ValueScan};

/// Bytes asked of the source per read.
const READ_CHUNK: usize = 1 << 20;

/// The largest value handed out whole by default (bytes): one entry of a communication
/// file, one rank of a cluster summary, one member of its top level.
pub const MAX_PIECE: usize = 256 << 20;

/// A place in the document: byte offset from 0, line from 1, column = bytes since the line's
/// start (serde_json's counting).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct At {
    /// Byte offset from the start of the file.
    pub byte: u64,
    /// Line, from 1.
    pub line: u64,
    /// Bytes between the line's start and `byte`.
    pub column: u64,
}

/// What went wrong in a cut read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CutKind {
    /// Reading the source failed (the I/O error's words).
    Io(String),
    /// The text ends inside the document.
    Eof,
    /// One value is larger than the cap (bytes).
    TooLarge {
        /// The cap.
        limit: usize,
    },
    /// Bytes that are not what was expected here (serde_json's words for a value, ours for
    /// the structure; no position in them).
    Syntax(String),
}

/// An error of a cut read, located in the whole file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CutError {
    /// What went wrong.
    pub kind: CutKind,
    /// Where.
    pub at: At,
}

impl fmt::Display for CutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            CutKind::Io(e) => write!(f, "{e}"),
            CutKind::Eof => f.write_str("EOF while parsing"),
            CutKind::TooLarge { limit } => write!(
                f,
                "a value longer than {limit} bytes starts at byte {}",
                self.at.byte
            ),
            CutKind::Syntax(e) => f.write_str(e),
        }?;
        write!(f, " at line {} column {}", self.at.line, self.at.column)
    }
}

impl std::error::Error for CutError {}

/// One value's bytes and where they start in the file.
#[derive(Clone, Copy, Debug)]
pub struct Piece<'a> {
    /// The value's text.
    pub bytes: &'a [u8],
    /// Its first byte's place.
    pub at: At,
}

impl Piece<'_> {
    /// The value parsed as `T` by `serde_json::from_slice`; an error is located in the file.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, CutError> {
        serde_json::from_slice(self.bytes).map_err(|e| self.locate(&e))
    }

    /// A serde_json error of this piece, moved to the file's byte, line and column.
    pub fn locate(&self, e: &serde_json::Error) -> CutError {
        use serde_json::error::Category;
        let kind = match e.classify() {
            Category::Eof => CutKind::Eof,
            Category::Io => CutKind::Io(e.to_string()),
            _ => {
                let text = e.to_string();
                let suffix = format!(" at line {} column {}", e.line(), e.column());
                CutKind::Syntax(text.strip_suffix(&suffix).unwrap_or(&text).to_string())
            }
        };
        let (line, column) = (e.line() as u64, e.column() as u64);
        if line == 0 {
            return CutError { kind, at: self.at };
        }
        // The start of the error's line inside the piece.
        let start = if line == 1 {
            0
        } else {
            self.bytes
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .nth(line as usize - 2)
                .map_or(self.bytes.len(), |(i, _)| i + 1)
        };
        let at = At {
            byte: self.at.byte + (start as u64 + column).min(self.bytes.len() as u64),
            line: self.at.line + line - 1,
            column: if line == 1 {
                self.at.column + column
            } else {
                column
            },
        };
        CutError { kind, at }
    }
}

/// The cutting reader over one source (see the module's words).
pub struct Cutter<'r> {
    src: &'r mut dyn Read,
    buf: Vec<u8>,
    /// Next byte to look at, in `buf`.
    pos: usize,
    /// File offset of `buf[0]`.
    base: u64,
    eof: bool,
    cap: usize,
    /// Line of `buf[pos]` and the file offset its line starts at.
    line: u64,
    line_start: u64,
    /// Per open object or array: no member or element read yet.
    first: Vec<bool>,
    /// Bytes asked of the source per fill.
    chunk: usize,
}

impl<'r> Cutter<'r> {
    /// A cutter over `src` handing out values of at most `cap` bytes.
    pub fn new(src: &'r mut dyn Read, cap: usize) -> Cutter<'r> {
        Cutter::with_chunk(src, cap, READ_CHUNK)
    }

    /// [`Cutter::new`] reading `chunk` bytes at a time (tests cut the text into small reads).
    pub fn with_chunk(src: &'r mut dyn Read, cap: usize, chunk: usize) -> Cutter<'r> {
        Cutter {
            chunk: chunk.max(1),
            src,
            buf: Vec::new(),
            pos: 0,
            base: 0,
            eof: false,
            cap,
            line: 1,
            line_start: 0,
            first: Vec::new(),
        }
    }

    /// The place of the next byte.
    pub fn at(&self) -> At {
        let byte = self.base + self.pos as u64;
        At {
            byte,
            line: self.line,
            column: byte - self.line_start,
        }
    }

    /// Bytes read from the source so far.
    pub fn read_bytes(&self) -> u64 {
        self.base + self.buf.len() as u64
    }

    fn error(&self, kind: CutKind) -> CutError {
        CutError {
            kind,
            at: self.at(),
        }
    }

    fn syntax(&self, expected: &str) -> CutError {
        self.error(CutKind::Syntax(format!("expected {expected}")))
    }

    /// The place just past the last byte read (where a cut file ends).
    fn at_end(&self) -> At {
        let rest = &self.buf[self.pos..];
        let nl = rest.iter().filter(|&&b| b == b'\n').count() as u64;
        let byte = self.read_bytes();
        let line_start = match rest.iter().rposition(|&b| b == b'\n') {
            Some(i) => self.base + (self.pos + i + 1) as u64,
            None => self.line_start,
        };
        At {
            byte,
            line: self.line + nl,
            column: byte - line_start,
        }
    }

    /// Reads more bytes (dropping those before `pos`); `false` at the end of the source.
    fn fill(&mut self) -> Result<bool, CutError> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.base += self.pos as u64;
            self.pos = 0;
        }
        // `read_to_end` fills the spare capacity without zeroing it first.
        match Read::take(&mut *self.src, self.chunk as u64).read_to_end(&mut self.buf) {
            Ok(n) => {
                self.eof = n == 0;
                Ok(n > 0)
            }
            Err(e) => Err(self.error(CutKind::Io(e.to_string()))),
        }
    }

    /// Moves past `n` bytes, counting their lines.
    fn advance(&mut self, n: usize) {
        let seen = &self.buf[self.pos..self.pos + n];
        if let Some(last) = seen.iter().rposition(|&b| b == b'\n') {
            self.line += seen.iter().filter(|&&b| b == b'\n').count() as u64;
            self.line_start = self.base + (self.pos + last + 1) as u64;
        }
        self.pos += n;
    }

    /// The next byte after whitespace, not consumed; `None` at the end of the text.
    fn next_byte(&mut self) -> Result<Option<u8>, CutError> {
        loop {
            while let Some(&b) = self.buf.get(self.pos) {
                if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                    self.advance(1);
                } else {
                    return Ok(Some(b));
                }
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// The first byte of the next value (after whitespace), not consumed; a cut text is
    /// [`CutKind::Eof`].
    pub fn peek(&mut self) -> Result<u8, CutError> {
        match self.next_byte()? {
            Some(b) => Ok(b),
            None => Err(CutError {
                kind: CutKind::Eof,
                at: self.at_end(),
            }),
        }
    }

    /// Enters the object that is the next value (`expected` names it in the error).
    pub fn begin_object(&mut self, expected: &str) -> Result<(), CutError> {
        self.begin(b'{', expected)
    }

    /// Enters the array that is the next value.
    pub fn begin_array(&mut self, expected: &str) -> Result<(), CutError> {
        self.begin(b'[', expected)
    }

    /// Enters the container that the next value opens with `open`.
    fn begin(&mut self, open: u8, expected: &str) -> Result<(), CutError> {
        if self.peek()? != open {
            return Err(self.syntax(expected));
        }
        self.advance(1);
        self.first.push(true);
        Ok(())
    }

    /// Before the next member or element of the open container: `true` when one follows
    /// (its `,` consumed), `false` at the closing `close` (consumed; the container is left).
    fn more(&mut self, close: u8) -> Result<bool, CutError> {
        let mut b = self.peek()?;
        let first = self.first.last().copied().unwrap_or(true);
        if b == close {
            self.advance(1);
            self.first.pop();
            return Ok(false);
        }
        if !first {
            if b != b',' {
                return Err(self.syntax(if close == b'}' {
                    "`,` or `}`"
                } else {
                    "`,` or `]`"
                }));
            }
            self.advance(1);
            b = self.peek()?;
        }
        if let Some(f) = self.first.last_mut() {
            *f = false;
        }
        if close == b'}' && b != b'"' {
            return Err(self.syntax("a string key"));
        }
        Ok(true)
    }

    /// The next member's key of the open object (its `:` consumed), or `None` at its end.
    pub fn next_key(&mut self) -> Result<Option<String>, CutError> {
        if !self.more(b'}')? {
            return Ok(None);
        }
        let key: String = self.value()?.parse()?;
        if self.peek()? != b':' {
            return Err(self.syntax("`:`"));
        }
        self.advance(1);
        Ok(Some(key))
    }

    /// `true` when another element of the open array follows; `false` at its end.
    pub fn next_element(&mut self) -> Result<bool, CutError> {
        self.more(b']')
    }

    /// The next value's bytes (at most the cap), consumed.
    pub fn value(&mut self) -> Result<Piece<'_>, CutError> {
        self.peek()?;
        let mut scan = ValueScan::default();
        let n = loop {
            match scan.resume(&self.buf[self.pos..], self.eof) {
                End::At(n) => break n,
                End::Invalid => return Err(self.syntax("a value")),
                End::Incomplete => {
                    if self.buf.len() - self.pos > self.cap {
                        return Err(self.error(CutKind::TooLarge { limit: self.cap }));
                    }
                    // At the end of the source a scalar ends there (the next `resume` is
                    // told so); a string or bracketed value is cut.
                    if !self.fill()? && matches!(self.buf[self.pos], b'{' | b'[' | b'"') {
                        return Err(CutError {
                            kind: CutKind::Eof,
                            at: self.at_end(),
                        });
                    }
                }
            }
        };
        if n > self.cap {
            return Err(self.error(CutKind::TooLarge { limit: self.cap }));
        }
        let (start, at) = (self.pos, self.at());
        self.advance(n);
        Ok(Piece {
            bytes: &self.buf[start..start + n],
            at,
        })
    }

    /// Skips the next value, checking it is well-formed JSON.
    pub fn skip(&mut self) -> Result<(), CutError> {
        self.value()?.parse::<serde::de::IgnoredAny>().map(|_| ())
    }

    /// Reads the array that is the next value, each element parsed as `E`.
    pub fn list<E: DeserializeOwned>(&mut self, expected: &str) -> Result<Vec<E>, CutError> {
        self.begin_array(expected)?;
        let mut out = Vec::new();
        while self.next_element()? {
            out.push(self.value()?.parse()?);
        }
        Ok(out)
    }

    /// Checks that only whitespace follows the document.
    pub fn end(&mut self) -> Result<(), CutError> {
        match self.next_byte()? {
            None => Ok(()),
            Some(_) => Err(self.error(CutKind::Syntax("trailing characters".into()))),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
