//! [`ParseError`]: a file that could not be used (from some point on). Row-level
//! trouble is a [`crate::base::Problem`] instead, and the rest of the file is used.

use std::fmt;

use crate::base::Position;

/// Why a file (or the rest of it) could not be read. Boxed to keep `Result` small.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError(Box<Inner>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct Inner {
    at: Position,
    kind: ParseErrorKind,
}

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The file has no bytes at all.
    Empty,
    /// Reading the bytes failed (message of the I/O error).
    Read(String),
    /// One record (JSON event, CSV row, pickle frame) is larger than the reader's cap (bytes).
    TooLarge {
        /// The cap in bytes.
        limit: usize,
    },
    /// Required columns absent from the header (line 1).
    Header {
        /// Names of the missing columns, in the spec's order.
        missing: Vec<String>,
        /// The (trimmed) column names the header has, in file order.
        found: Vec<String>,
    },
    /// Bytes that are not what the format allows here.
    Syntax {
        /// What was expected at this position.
        expected: &'static str,
    },
    /// The text is not UTF-8 (e.g. UTF-16): only UTF-8 is read.
    Encoding {
        /// What was found, e.g. `UTF-16 LE (byte-order mark FF FE)`.
        found: &'static str,
    },
    /// Well-formed but outside what we accept (e.g. a pickle opcode that would run code).
    Unsupported {
        /// What was found.
        what: String,
    },
}

impl ParseError {
    /// An error of `kind` at `at`.
    pub fn new(at: Position, kind: ParseErrorKind) -> Self {
        ParseError(Box::new(Inner { at, kind }))
    }
    /// Where it happened.
    pub fn position(&self) -> &Position {
        &self.0.at
    }
    /// What happened. Its `Display` says it in words without the position: the message of a
    /// problem placed at [`Self::position`], whose own text names where (said once, not twice).
    pub fn kind(&self) -> &ParseErrorKind {
        &self.0.kind
    }
}

impl fmt::Display for ParseError {
    /// `where: what`, e.g. `trace.json (byte 12): expected `,` or `]``.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.at, self.0.kind)
    }
}

impl fmt::Display for ParseErrorKind {
    /// What went wrong, without where (see [`ParseError::kind`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::Empty => f.write_str("file is empty"),
            ParseErrorKind::Read(e) => write!(f, "read failed: {e}"),
            ParseErrorKind::TooLarge { limit } => {
                write!(f, "one record is larger than {limit} bytes")
            }
            ParseErrorKind::Header { missing, found } => {
                write!(f, "missing column(s): {}; ", missing.join(", "))?;
                if found.is_empty() {
                    return f.write_str("the header has no column");
                }
                f.write_str("the header has: ")?;
                const SHOWN: usize = 20;
                for (k, name) in found.iter().take(SHOWN).enumerate() {
                    if k > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{name:?}")?;
                }
                if found.len() > SHOWN {
                    write!(f, " … ({} columns)", found.len())?;
                }
                Ok(())
            }
            ParseErrorKind::Syntax { expected } => write!(f, "expected {expected}"),
            ParseErrorKind::Encoding { found } => {
                write!(
                    f,
                    "the text is {found}, not supported: re-save the file as UTF-8"
                )
            }
            ParseErrorKind::Unsupported { what } => write!(f, "unsupported: {what}"),
        }
    }
}

impl std::error::Error for ParseError {}

impl ParseError {
    /// Lifts a [`crate::ingest::chunk_reader::FillError`] of file `file`.
    pub fn from_fill(
        file: &std::sync::Arc<str>,
        e: crate::ingest::chunk_reader::FillError,
    ) -> Self {
        use crate::ingest::chunk_reader::FillError;
        match e {
            FillError::Io { at, source } => ParseError::new(
                Position::file(file.clone()).at_byte(at),
                ParseErrorKind::Read(source.to_string()),
            ),
            FillError::TooLarge { at, limit } => ParseError::new(
                Position::file(file.clone()).at_byte(at),
                ParseErrorKind::TooLarge { limit },
            ),
        }
    }
}
