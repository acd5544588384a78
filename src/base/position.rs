//! Where in an input file something was found.

use std::fmt;
use std::sync::Arc;

/// A place in one input file, as precise as the format allows.
///
/// `file` is the path relative to the dropped folder, exactly as the user sees it.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Position {
    /// Path relative to the dropped folder (e.g. `rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json`).
    pub file: Arc<str>,
    /// Byte offset from the start of the file, from 0, when known.
    pub byte: Option<u64>,
    /// Physical line number from 1 (header = line 1 in CSVs), when the format has lines.
    pub line: Option<u64>,
    /// Column name (CSV) or key (JSON) the finding is about.
    pub column: Option<Arc<str>>,
}

impl Position {
    /// A position naming only the file.
    pub fn file(file: impl Into<Arc<str>>) -> Self {
        Position {
            file: file.into(),
            ..Default::default()
        }
    }
    /// Same file, at byte offset `byte`.
    pub fn at_byte(mut self, byte: u64) -> Self {
        self.byte = Some(byte);
        self
    }
    /// Same file, at physical line `line` (1-based).
    pub fn at_line(mut self, line: u64) -> Self {
        self.line = Some(line);
        self
    }
    /// Same place, about column `column`.
    pub fn in_column(mut self, column: impl Into<Arc<str>>) -> Self {
        self.column = Some(column.into());
        self
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(byte) = self.byte {
            write!(f, " (byte {byte})")?;
        }
        if let Some(col) = &self.column {
            write!(f, " column '{col}'")?;
        }
        Ok(())
    }
}
