//! A streaming CSV table reader over the `csv` crate (formats.md §1–2).
//!
//! The header is read at open; columns are resolved **by name** after trimming
//! (formats.md: "resolve columns and keys by name, never by position"). Each data
//! record comes with the physical line of its first line (header = line 1) and its byte
//! offset. Cells are handed out trimmed of ASCII whitespace (the trailing TAB quirk,
//! formats.md §2.1). Records of the wrong width are reported, not dropped silently:
//! the caller decides (the specs make them row errors).
//!
//! One record is at most [`MAX_RECORD_BYTES`] (a 300 MB cell cost 821 MB of memory).
//! Past the cap the reader stops with [`RowRead::TooLong`]: the rows before it are kept, the
//! rest of the file is not read (inside an unclosed quote there is no safe place to resume),
//! and memory stays at about the cap plus the 1 MiB read buffer.

use std::io::{self, Read};
use std::sync::Arc;

use crate::base::Position;
use crate::ingest::Progress;
use crate::parse::number::trim_cell;
use crate::parse::{ParseError, ParseErrorKind};

/// Counts of line terminators seen so far (formats.md §1: both occur in one folder).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineEndings {
    /// `\r\n` terminators.
    pub crlf: u64,
    /// Bare `\n` terminators.
    pub lf: u64,
}

/// The largest CSV record (all its cells and separators, in bytes) a table reads: real rows are
/// bytes to a few hundred KiB (a deep `Call stack`, long `Input Shapes`); 16 MiB is far above
/// any of them and bounds the record buffer.
pub const MAX_RECORD_BYTES: u64 = 16 << 20;

/// The marker error [`Source`] returns when the record being read passes the cap.
#[derive(Debug)]
struct RecordTooLong;

impl std::fmt::Display for RecordTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "one CSV record is longer than {MAX_RECORD_BYTES} bytes")
    }
}

impl std::error::Error for RecordTooLong {}

/// True when `e` is the csv crate's wrapping of a [`RecordTooLong`] from the source.
fn is_too_long(e: &csv::Error) -> bool {
    matches!(e.kind(), csv::ErrorKind::Io(io) if io.get_ref().is_some_and(|i| i.is::<RecordTooLong>()))
}

/// Wraps the source: strips a leading UTF-8 BOM, counts bytes and line endings, and refuses
/// to hand out more than [`MAX_RECORD_BYTES`] past the start of the record being read.
struct Source<R> {
    inner: R,
    bytes: u64,
    bom: Option<bool>,
    prev_cr: bool,
    endings: LineEndings,
    /// Offsets (after the BOM, as the csv crate counts) of `\n` bytes read but not yet
    /// passed by a record: csv-core's own line counter is wrong after CRLF terminators.
    newlines: std::collections::VecDeque<u64>,
    /// Bytes handed to csv so far (after the BOM).
    handed: u64,
    /// `\n` bytes before the oldest offset in `newlines`.
    lines_before: u64,
    /// Offset (post-BOM) where the record being read starts: the end of the last one returned.
    record_start: u64,
    /// The record cap in bytes ([`MAX_RECORD_BYTES`]; smaller in tests).
    limit: u64,
}

impl<R: Read> Read for Source<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.handed.saturating_sub(self.record_start) > self.limit {
            return Err(io::Error::new(io::ErrorKind::InvalidData, RecordTooLong));
        }
        if self.bom.is_none() {
            // Sniff the first 3 bytes once.
            let mut head = [0u8; 3];
            let mut got = 0;
            while got < 3 {
                match self.inner.read(&mut head[got..]) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            }
            self.bytes += got as u64;
            let is_bom = got == 3 && head == [0xEF, 0xBB, 0xBF];
            self.bom = Some(is_bom);
            if !is_bom && got > 0 {
                let n = got.min(buf.len());
                buf[..n].copy_from_slice(&head[..n]);
                // `buf` from csv is never smaller than 3 bytes in practice; keep any rest.
                if n < got {
                    return Err(io::Error::other("read buffer smaller than 3 bytes"));
                }
                self.count_endings(&buf[..n]);
                return Ok(n);
            }
        }
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        self.count_endings(&buf[..n]);
        Ok(n)
    }
}

impl<R> Source<R> {
    fn count_endings(&mut self, chunk: &[u8]) {
        for p in memchr::memchr_iter(b'\n', chunk) {
            self.newlines.push_back(self.handed + p as u64);
            let after_cr = match p.checked_sub(1) {
                Some(q) => chunk.get(q) == Some(&b'\r'),
                None => self.prev_cr,
            };
            if after_cr {
                self.endings.crlf += 1;
            } else {
                self.endings.lf += 1;
            }
        }
        if let Some(&last) = chunk.last() {
            self.prev_cr = last == b'\r';
        }
        self.handed += chunk.len() as u64;
    }

    /// 1-based physical line of the byte at `offset` (post-BOM); offsets must not decrease.
    fn line_of(&mut self, offset: u64) -> u64 {
        while self.newlines.front().is_some_and(|&nl| nl <= offset) {
            self.newlines.pop_front();
            self.lines_before += 1;
        }
        self.lines_before + 1
    }
}

/// The header row: trimmed names, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    names: Vec<String>,
}

impl Header {
    /// Index of the column named exactly `name` (after trimming), first occurrence.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }
    /// Index of the first of `names` present (for renamed columns, e.g. `Block Dim` / `Block Num`).
    pub fn index_any(&self, names: &[&str]) -> Option<usize> {
        names.iter().find_map(|n| self.index(n))
    }
    /// The trimmed names.
    pub fn names(&self) -> &[String] {
        &self.names
    }
    /// Number of columns.
    pub fn len(&self) -> usize {
        self.names.len()
    }
    /// True when the header has no column.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// What [`CsvTable::read_row`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum RowRead {
    /// A record is in the row buffer; its width may differ from the header's (check [`CsvTable::width`]).
    Row,
    /// A record that could not be decoded (invalid UTF-8); `line` is its first physical line.
    Invalid {
        /// 1-based physical line of the record.
        line: u64,
        /// What was wrong.
        message: String,
    },
    /// A record longer than the cap starts at `line`/`byte`: the rows before it were returned,
    /// the rest of the file is not read (every later call gives [`RowRead::End`]).
    TooLong {
        /// 1-based physical line where the record starts.
        line: u64,
        /// Byte offset where the record starts.
        byte: u64,
        /// The cap in bytes.
        limit: u64,
    },
    /// End of file.
    End,
}

impl RowRead {
    /// The sentence for a [`RowRead::TooLong`] (what happened, what was kept), else `None`.
    pub fn too_long_message(&self) -> Option<String> {
        match self {
            RowRead::TooLong { line, limit, .. } => Some(format!(
                "the record starting on line {line} is longer than {} MiB (an unclosed quote or a \
                 damaged file): the rows before it are kept, the rest of the file is not read",
                limit >> 20
            )),
            _ => None,
        }
    }
}

/// A streaming CSV table: header at open, then one record at a time.
pub struct CsvTable<R> {
    rdr: csv::Reader<Source<R>>,
    file: Arc<str>,
    total: Option<u64>,
    header: Header,
    row: csv::StringRecord,
    line: u64,
    byte: u64,
    /// Set after a [`RowRead::TooLong`]: nothing more is read.
    stopped: bool,
}

impl<R: Read> CsvTable<R> {
    /// Opens a table: strips a BOM, reads and trims the header.
    ///
    /// `file` is the path shown in messages; `total` the file size in bytes if known.
    /// Errors: [`ParseErrorKind::Empty`] for a zero-byte file or one without a header line,
    /// [`ParseErrorKind::Read`] on I/O failure, [`ParseErrorKind::Syntax`] on an undecodable header.
    pub fn open(src: R, file: impl Into<Arc<str>>, total: Option<u64>) -> Result<Self, ParseError> {
        Self::open_capped(src, file, total, MAX_RECORD_BYTES)
    }

    /// [`CsvTable::open`] with another record cap (tests use small ones).
    fn open_capped(
        src: R,
        file: impl Into<Arc<str>>,
        total: Option<u64>,
        limit: u64,
    ) -> Result<Self, ParseError> {
        let file = file.into();
        let source = Source {
            inner: src,
            bytes: 0,
            bom: None,
            prev_cr: false,
            endings: LineEndings::default(),
            newlines: Default::default(),
            handed: 0,
            lines_before: 0,
            record_start: 0,
            limit,
        };
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .buffer_capacity(1 << 20)
            .from_reader(source);
        let mut rec = csv::StringRecord::new();
        let at = Position::file(file.clone()).at_line(1);
        match rdr.read_record(&mut rec) {
            Ok(true) => {}
            Ok(false) => return Err(ParseError::new(at, ParseErrorKind::Empty)),
            Err(e) if is_too_long(&e) => {
                return Err(ParseError::new(
                    at.at_byte(0),
                    ParseErrorKind::TooLarge {
                        limit: usize::try_from(limit).unwrap_or(usize::MAX),
                    },
                ))
            }
            Err(e) => return Err(csv_error(&file, e)),
        }
        rdr.get_mut().record_start = rdr.position().byte();
        let names: Vec<String> = rec
            .iter()
            .map(|c| trim_cell(c).trim_start_matches('\u{feff}').to_string())
            .collect();
        if names.len() == 1 && names[0].is_empty() {
            return Err(ParseError::new(at, ParseErrorKind::Empty));
        }
        Ok(CsvTable {
            rdr,
            file,
            total,
            header: Header { names },
            row: csv::StringRecord::new(),
            line: 1,
            byte: 0,
            stopped: false,
        })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }
    /// The file path given at open.
    pub fn file(&self) -> &Arc<str> {
        &self.file
    }
    /// True when a UTF-8 BOM was stripped.
    pub fn had_bom(&self) -> bool {
        self.rdr.get_ref().bom == Some(true)
    }
    /// Line terminators seen so far.
    pub fn line_endings(&self) -> LineEndings {
        self.rdr.get_ref().endings
    }
    /// Bytes read so far and the total.
    pub fn progress(&self) -> Progress {
        Progress {
            bytes_done: self.rdr.get_ref().bytes,
            bytes_total: self.total,
        }
    }

    /// Reads the next record into the row buffer. Blank lines are skipped.
    ///
    /// Errors: [`ParseErrorKind::Read`] when the underlying reader fails (the rest of the file
    /// is unusable); a record with invalid UTF-8 is [`RowRead::Invalid`] and reading may go on.
    pub fn read_row(&mut self) -> Result<RowRead, ParseError> {
        if self.stopped {
            return Ok(RowRead::End);
        }
        loop {
            let start = self.rdr.get_ref().record_start;
            let result = self.rdr.read_record(&mut self.row);
            if !matches!(&result, Err(e) if is_too_long(e)) {
                let next = self.rdr.position().byte();
                self.rdr.get_mut().record_start = next;
            }
            match result {
                Ok(false) => return Ok(RowRead::End),
                Err(e) if is_too_long(&e) => {
                    self.stopped = true;
                    self.row.clear();
                    let src = self.rdr.get_mut();
                    let line = src.line_of(start);
                    let bom = if src.bom == Some(true) { 3 } else { 0 };
                    return Ok(RowRead::TooLong {
                        line,
                        byte: start + bom,
                        limit: src.limit,
                    });
                }
                Ok(true) => {
                    if let Some(byte) = self.row.position().map(|p| p.byte()) {
                        self.set_position(byte);
                    }
                    if self.row.len() == 1 && trim_cell(&self.row[0]).is_empty() {
                        continue; // blank line
                    }
                    return Ok(RowRead::Row);
                }
                Err(e) => match e.kind() {
                    csv::ErrorKind::Utf8 { pos, err } => {
                        if let Some(byte) = pos.as_ref().map(|p| p.byte()) {
                            self.set_position(byte);
                        }
                        let line = self.line;
                        return Ok(RowRead::Invalid {
                            line,
                            message: format!("invalid UTF-8 in field {}", err.field() + 1),
                        });
                    }
                    _ => return Err(csv_error(&self.file, e)),
                },
            }
        }
    }

    fn set_position(&mut self, csv_byte: u64) {
        let src = self.rdr.get_mut();
        self.line = src.line_of(csv_byte);
        self.byte = csv_byte + if src.bom == Some(true) { 3 } else { 0 };
    }

    /// Physical line (1-based) of the first line of the current record.
    pub fn line(&self) -> u64 {
        self.line
    }
    /// Byte offset of the current record.
    pub fn byte(&self) -> u64 {
        self.byte
    }
    /// Number of cells in the current record.
    pub fn width(&self) -> usize {
        self.row.len()
    }
    /// Trimmed cell `i` of the current record; `None` when the record is shorter.
    pub fn cell(&self, i: usize) -> Option<&str> {
        self.row.get(i).map(trim_cell)
    }
    /// Trimmed cell of optional column `i` (`None` column or short row → `None`).
    pub fn cell_opt(&self, i: Option<usize>) -> Option<&str> {
        i.and_then(|i| self.cell(i))
    }
    /// Position of the current record, for problems.
    pub fn position(&self) -> Position {
        Position::file(self.file.clone())
            .at_line(self.line)
            .at_byte(self.byte)
    }
}

fn csv_error(file: &Arc<str>, e: csv::Error) -> ParseError {
    let mut at = Position::file(file.clone());
    if let Some(p) = e.position() {
        at = at.at_line(p.line()).at_byte(p.byte());
    }
    let kind = match e.into_kind() {
        csv::ErrorKind::Io(io) => ParseErrorKind::Read(io.to_string()),
        csv::ErrorKind::Utf8 { .. } => ParseErrorKind::Syntax {
            expected: "UTF-8 text",
        },
        _ => ParseErrorKind::Syntax { expected: "CSV" },
    };
    ParseError::new(at, kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &[u8]) -> (Header, Vec<(u64, Vec<String>)>, bool, LineEndings) {
        let mut t = CsvTable::open(text, "t.csv", None).unwrap();
        let mut out = Vec::new();
        while let RowRead::Row = t.read_row().unwrap() {
            out.push((
                t.line(),
                (0..t.width())
                    .map(|i| t.cell(i).unwrap().to_string())
                    .collect(),
            ));
        }
        (t.header().clone(), out, t.had_bom(), t.line_endings())
    }

    #[test]
    fn bom_tabs_quotes_crlf_and_multiline() {
        let text = b"\xEF\xBB\xBFName ,Time(us)\r\n\"a\",\"1779785515596661.420\t\"\r\nb,1736408883694624.810\t\r\n\"c\nd\",\"\"\"32,3\"\"\"\r\n";
        let (h, r, bom, le) = rows(text);
        assert!(bom);
        assert_eq!(h.index("Name"), Some(0));
        assert_eq!(h.index("Time(us)"), Some(1));
        assert_eq!(r[0], (2, vec!["a".into(), "1779785515596661.420".into()]));
        assert_eq!(r[1], (3, vec!["b".into(), "1736408883694624.810".into()]));
        assert_eq!(r[2], (4, vec!["c\nd".into(), "\"32,3\"".into()]));
        assert_eq!(le, LineEndings { crlf: 4, lf: 1 });
    }

    #[test]
    fn short_and_long_rows_are_visible_and_blank_lines_skipped() {
        let (_, r, bom, _) = rows(b"a,b,c\n1,2\n\n1,2,3,4\n");
        assert!(!bom);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].0, r[0].1.len()), (2, 2));
        assert_eq!((r[1].0, r[1].1.len()), (4, 4));
    }

    #[test]
    fn empty_file_is_an_error() {
        let e = CsvTable::open(&b""[..], "e.csv", Some(0)).err().unwrap();
        assert_eq!(e.kind(), &ParseErrorKind::Empty);
        assert_eq!(e.to_string(), "e.csv:1: file is empty");
    }

    #[test]
    fn invalid_utf8_row_is_reported_and_reading_goes_on() {
        let mut t = CsvTable::open(&b"a\nok\n\xff\xfe\nlast\n"[..], "u.csv", None).unwrap();
        assert_eq!(t.read_row().unwrap(), RowRead::Row);
        assert!(matches!(
            t.read_row().unwrap(),
            RowRead::Invalid { line: 3, .. }
        ));
        assert_eq!(t.read_row().unwrap(), RowRead::Row);
        assert_eq!(t.cell(0), Some("last"));
        assert_eq!(t.read_row().unwrap(), RowRead::End);
    }

    /// A reader that counts the bytes taken from it.
    struct Counting<'a> {
        data: &'a [u8],
        taken: u64,
    }

    impl Read for Counting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.data.read(buf)?;
            self.taken += n as u64;
            Ok(n)
        }
    }

    #[test]
    fn a_record_past_the_cap_stops_the_table_and_keeps_the_rows_before() {
        // Cap 2 MiB; an unclosed quote on line 3 runs for 8 MiB: the reader must stop near the
        // cap (the 1 MiB read buffer past it at most), never buffer the whole cell.
        let mut text = b"a,b\n1,2\n3,\"".to_vec();
        text.resize(text.len() + (8 << 20), b'x');
        let mut src = Counting {
            data: &text,
            taken: 0,
        };
        let mut t = CsvTable::open_capped(&mut src, "big.csv", None, 2 << 20).unwrap();
        assert_eq!(t.read_row().unwrap(), RowRead::Row);
        assert_eq!((t.line(), t.cell(1)), (2, Some("2")));
        let r = t.read_row().unwrap();
        assert_eq!(
            r,
            RowRead::TooLong {
                line: 3,
                byte: 8,
                limit: 2 << 20
            }
        );
        assert_eq!(
            r.too_long_message().unwrap(),
            "the record starting on line 3 is longer than 2 MiB (an unclosed quote or a damaged \
             file): the rows before it are kept, the rest of the file is not read"
        );
        assert_eq!(t.read_row().unwrap(), RowRead::End);
        drop(t);
        assert!(
            src.taken <= (2 << 20) + (2 << 20),
            "read {} bytes",
            src.taken
        );
    }

    #[test]
    fn a_header_past_the_cap_is_too_large() {
        let text = vec![b'h'; 3 << 20];
        let e = CsvTable::open_capped(&text[..], "h.csv", None, 1 << 20)
            .err()
            .unwrap();
        assert_eq!(e.kind(), &ParseErrorKind::TooLarge { limit: 1 << 20 });
        assert_eq!(
            e.to_string(),
            "h.csv:1 (byte 0): one record is larger than 1048576 bytes"
        );
    }

    #[test]
    fn records_below_the_cap_read_as_before() {
        // Each record is just below the cap: the cap is per record, not per file.
        let cell = "y".repeat((1 << 20) - 16);
        let text = format!("a\n{cell}\n{cell}\n{cell}\n");
        let mut t = CsvTable::open_capped(text.as_bytes(), "ok.csv", None, 1 << 20).unwrap();
        for _ in 0..3 {
            assert_eq!(t.read_row().unwrap(), RowRead::Row);
            assert_eq!(t.cell(0).map(str::len), Some(cell.len()));
        }
        assert_eq!(t.read_row().unwrap(), RowRead::End);
    }
}
