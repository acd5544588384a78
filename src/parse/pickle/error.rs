//! Errors of the pickle decoder, with the user-facing messages of torch-snapshot.md §5.4.

use std::fmt;

use crate::base::Position;

/// Why a snapshot file could not be used at all (torch-snapshot.md §5.4).
#[derive(Debug, Clone, PartialEq)]
pub enum PickleErrorKind {
    /// An opcode that constructs Python objects or runs code (`GLOBAL`, `REDUCE`, …).
    Refused {
        /// Opcode name, e.g. `GLOBAL`.
        opcode: &'static str,
    },
    /// A text-mode or unassigned opcode.
    Unsupported {
        /// The opcode byte.
        byte: u8,
    },
    /// `PROTO n` with n > 5.
    Protocol {
        /// The protocol number.
        version: u8,
    },
    /// The bytes end before `STOP`.
    Truncated {
        /// File size in bytes (bytes available).
        total: u64,
    },
    /// The pickle decodes but is not a snapshot.
    NotSnapshot {
        /// Python type name of the top-level value (JSON's `object` / `array` for JSON).
        top_type: String,
        /// The file is JSON (torch-snapshot.md §2.6), not a pickle.
        json: bool,
        /// Its top level has a `traceEvents` key: a Chrome trace (a PyTorch profiler trace is
        /// read by `proflens anomaly` and `proflens analyze`).
        chrome_trace: bool,
    },
    /// Not a pickle at all (or a wrapper we do not open).
    WrongFileType {
        /// What the first bytes look like.
        detected: String,
    },
    /// A structurally invalid pickle (stack underflow, undefined memo index, …).
    Malformed {
        /// What was wrong.
        what: String,
    },
    /// One instruction needs more bytes than the reader's cap.
    TooLarge {
        /// The cap in bytes.
        limit: usize,
    },
    /// The pickle goes beyond one of the decoder's bounds (stack depth, open `MARK`s, containers
    /// under construction): real snapshots stay far below them (bounded memory).
    Limit {
        /// What grew too large, e.g. `"values on the pickle stack"`.
        what: &'static str,
        /// The bound.
        limit: usize,
    },
    /// A JSON snapshot (torch-snapshot.md §2.6) that is not valid JSON at this byte.
    JsonInvalid {
        /// What was expected or wrong.
        what: String,
    },
    /// A JSON snapshot that ends before its top-level value is complete.
    JsonTruncated {
        /// File size in bytes (bytes available).
        total: u64,
    },
    /// Reading failed.
    Io {
        /// The reader's message.
        message: String,
    },
    /// The progress callback asked to stop.
    Cancelled,
}

/// A decoder error with its position (file and byte offset of the instruction).
#[derive(Debug, Clone, PartialEq)]
pub struct PickleError {
    /// File and byte offset.
    pub at: Position,
    /// What went wrong.
    pub kind: PickleErrorKind,
}

impl PickleError {
    /// Builds an error at byte `offset` of `file`.
    pub fn new(file: &str, offset: u64, kind: PickleErrorKind) -> Self {
        PickleError {
            at: Position::file(file).at_byte(offset),
            kind,
        }
    }
    /// Byte offset of the error.
    pub fn offset(&self) -> u64 {
        self.at.byte.unwrap_or(0)
    }
}

impl fmt::Display for PickleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let off = self.offset();
        write!(f, "{}: ", self.at.file)?;
        match &self.kind {
            PickleErrorKind::Refused { opcode } => write!(
                f,
                "This file contains pickle instructions that construct Python objects ({opcode} at byte {off}). \
                 proflens never executes code from a file, so it cannot open it. Memory snapshots never contain \
                 such instructions: is this a model checkpoint or another kind of pickle?"
            ),
            PickleErrorKind::Unsupported { byte } => {
                write!(f, "Unsupported pickle instruction 0x{byte:02x} at byte {off}.")
            }
            PickleErrorKind::Protocol { version } => write!(
                f,
                "Pickle protocol {version} is newer than this version of proflens supports (2–5)."
            ),
            PickleErrorKind::Truncated { total } => write!(
                f,
                "The file ends before the pickle is complete (byte {off} of {total}). \
                 It may have been cut off while being copied or written."
            ),
            PickleErrorKind::NotSnapshot {
                top_type,
                json,
                chrome_trace,
            } => {
                write!(
                    f,
                    "This {} does not look like a PyTorch memory snapshot (no \"segments\" or \"device_traces\"). \
                     Top-level type: {top_type}.",
                    if *json { "JSON file" } else { "pickle" }
                )?;
                if *chrome_trace {
                    write!(
                        f,
                        " It is a Chrome trace (it has \"traceEvents\"): a PyTorch profiler trace is read by \
                         `proflens anomaly` or `proflens analyze`."
                    )?;
                }
                Ok(())
            }
            PickleErrorKind::WrongFileType { detected } => write!(
                f,
                "This is not a memory-snapshot pickle: {detected}. Expected a file written by \
                 torch.cuda.memory._dump_snapshot() (it starts with byte 0x80)."
            ),
            PickleErrorKind::Malformed { what } => {
                write!(f, "Invalid pickle at byte {off}: {what}.")
            }
            PickleErrorKind::TooLarge { limit } => write!(
                f,
                "One pickle instruction at byte {off} is larger than {limit} bytes; refusing to buffer it."
            ),
            PickleErrorKind::Limit { what, limit } => write!(
                f,
                "The pickle at byte {off} holds more than {limit} {what}; proflens stops there to keep \
                 memory bounded. Real memory snapshots stay far below this: the file is corrupt or was \
                 crafted to exhaust memory."
            ),
            PickleErrorKind::JsonInvalid { what } => write!(
                f,
                "Invalid JSON at byte {off} of this JSON memory snapshot: {what}."
            ),
            PickleErrorKind::JsonTruncated { total } => write!(
                f,
                "The file ends before the JSON is complete (byte {off} of {total}). \
                 It may have been cut off while being copied or written."
            ),
            PickleErrorKind::Io { message } => write!(f, "Read failed at byte {off}: {message}."),
            PickleErrorKind::Cancelled => write!(f, "Cancelled at byte {off}."),
        }
    }
}

impl std::error::Error for PickleError {}

/// Names what the first bytes of a non-pickle file look like (for [`PickleErrorKind::WrongFileType`]).
pub fn sniff(head: &[u8]) -> String {
    let first = head.iter().copied().find(|b| !b.is_ascii_whitespace());
    if head.starts_with(&[0x1f, 0x8b]) {
        "it is gzip-compressed (decompress it first, e.g. `gunzip`)".into()
    } else if head.starts_with(b"PK\x03\x04") {
        "it is a zip archive (a torch.save checkpoint?)".into()
    } else if first == Some(b'{') || first == Some(b'[') {
        "it looks like JSON".into()
    } else if first == Some(b'<') {
        "it looks like HTML or XML".into()
    } else if head.is_empty() {
        "the file is empty".into()
    } else {
        format!("it starts with byte 0x{:02x}", head[0])
    }
}
