//! Streams the events of a `trace_view.json` (formats.md §5.1; ascend-memory.md §5.2):
//! a bare top-level array, or an object whose `traceEvents` member is that array.
//! Each event object is handed to the caller as raw bytes plus its absolute byte offset;
//! nothing else of the file is kept.
//!
//! Linear time: the value being read is scanned with a resumable [`ValueScan`], so an event
//! that arrives over many reads (or never closes) is scanned once, not once per read.
//!
//! Tolerance: a file that ends inside the array (an interrupted export) is not an
//! error: the events read so far were delivered, and [`TraceScan::truncated_at`] says where
//! the file ended. An error after the start of the array (garbage, a record over the size cap,
//! a read failure) stops the read but is not returned as `Err`: the events before it were
//! delivered and [`TraceScan::error`] says where and what. An element over [`MAX_EVENT_BYTES`]
//! (formats.md §1.1) is skipped without being kept and noted. Structural findings (`,]`, doubled
//! or missing commas, non-object elements, bytes after the end, a UTF-8 BOM) go to
//! [`TraceScan::diag`].

use std::io::Read;
use std::ops::ControlFlow;
use std::sync::Arc;

use super::diag::{Issue, TraceDiagnostics};
use super::object::{scan_object, Event, ObjectIndex};
use super::scan::{skip_ws, End, ValueScan};
use crate::base::Position;
use crate::ingest::{ChunkReader, Progress};
use crate::parse::{ParseError, ParseErrorKind};

/// The most bytes one element of the event array may hold in memory (formats.md §1.1): an
/// event (or other bracketed element) that grows past it is skipped without being kept, its
/// end found by the same linear scan, and noted ([`Issue::Oversized`], at the byte where it
/// starts); when it never closes, the file ends inside it ([`TraceScan::cut_event_at`]).
pub const MAX_EVENT_BYTES: usize = 16 << 20;

/// What a scan of one trace file found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceScan {
    /// Event objects delivered to the callback.
    pub events: u64,
    /// True for the `{"traceEvents": […]}` form (RL-Insight parity finds nothing there:
    /// ascend-memory.md §5.1, MEM-TV-001).
    pub wrapped: bool,
    /// True when a wrapper object had no `traceEvents` array.
    pub no_trace_events: bool,
    /// Byte offset where the file ended inside the event array (= the file size), if it did
    /// (MEM-TV-002, ANOM-TV-001).
    pub truncated_at: Option<u64>,
    /// When the file ended inside an event: the byte offset where that event starts.
    pub cut_event_at: Option<u64>,
    /// When the source, not the text, ended early (a `.gz` whose compressed stream is cut
    /// short): what it said, with its compressed byte counts; [`Self::truncated_at`] is then
    /// the offset in the inflated text.
    pub cut_source: Option<String>,
    /// Byte offset just past the last event delivered.
    pub last_event_end: Option<u64>,
    /// The error that stopped the read after its start (events before it were delivered).
    pub error: Option<ParseError>,
    /// Structural findings; readers add the findings in the values they decode.
    pub diag: TraceDiagnostics,
    /// True when a callback asked to stop (Cancel); the scan is then incomplete.
    pub stopped: bool,
    /// Bytes read.
    pub bytes: u64,
}

/// The callback of a top-level member of the wrapper object: `(key, raw_value, offset)`.
pub type OnMember<'a> = dyn FnMut(&[u8], &[u8], u64) + 'a;

/// What came last inside the event array (the state a range reader starts in: [`RangeStart`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// The opening `[`.
    Open,
    /// A `,` at this offset.
    Comma(u64),
    /// An element.
    Value,
}

enum State {
    Root,
    /// Inside the wrapper object, before a key, `,` or `}`.
    Object,
    /// Inside a key of the wrapper object.
    Key,
    /// After a key, before its `:`; `events` = the key is `traceEvents`.
    Colon {
        events: bool,
    },
    /// Before or inside a member value of the wrapper object.
    Member {
        events: bool,
    },
    /// Inside the event array.
    Array(After),
    /// After the end of the trace: only whitespace may follow.
    Done,
}

/// Recognises the byte-order marks and the zero bytes of UTF-16 text at the file start.
fn utf16(head: &[u8]) -> Option<&'static str> {
    match head {
        [0xFF, 0xFE, ..] => Some("UTF-16 LE (byte-order mark FF FE)"),
        [0xFE, 0xFF, ..] => Some("UTF-16 BE (byte-order mark FE FF)"),
        [b'[' | b'{', 0, ..] => Some("UTF-16 LE (a zero byte after the first character)"),
        [0, b'[' | b'{', ..] => Some("UTF-16 BE (a zero byte before the first character)"),
        _ => None,
    }
}

/// Streams `reader`, calling `on_event(raw_event_bytes, absolute_offset)` for each element of
/// the event array that is a JSON object (other elements are skipped and counted), and
/// `on_progress` after each chunk read. Either callback returning `Break` stops the scan
/// (`stopped`).
///
/// `file` names the file in errors. Errors (nothing was delivered): [`ParseErrorKind::Empty`]
/// (no bytes or only whitespace), [`ParseErrorKind::Encoding`] (UTF-16),
/// [`ParseErrorKind::Syntax`] when the file does not start like a trace, and reader errors
/// before the first byte. Every later error is [`TraceScan::error`].
pub fn for_each_event<R: Read>(
    reader: &mut ChunkReader<R>,
    file: &Arc<str>,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
    on_event: &mut dyn FnMut(&[u8], u64) -> ControlFlow<()>,
) -> Result<TraceScan, ParseError> {
    for_each_member_and_event(reader, file, on_progress, &mut |_, _, _| {}, on_event)
}

/// [`for_each_event`] handing out [`Event`]s (see [`for_each_member_and_indexed_event`]).
pub fn for_each_indexed_event<R: Read>(
    reader: &mut ChunkReader<R>,
    file: &Arc<str>,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
    on_event: &mut dyn FnMut(Event<'_>, u64) -> ControlFlow<()>,
) -> Result<TraceScan, ParseError> {
    for_each_member_and_indexed_event(reader, file, on_progress, &mut |_, _, _| {}, on_event)
}

/// [`for_each_event`], and `on_member(key, raw_value, absolute_offset)` for every member of
/// the wrapper object other than the `traceEvents` array (Kineto's `deviceProperties`,
/// `distributedInfo`, `baseTimeNanoseconds`…, formats.md §8), in file order, before or after
/// the events. `key` is the raw key text without its quotes; `raw_value` the value's JSON
/// text. A bare-array trace has no members.
pub fn for_each_member_and_event<R: Read>(
    reader: &mut ChunkReader<R>,
    file: &Arc<str>,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
    on_member: &mut OnMember<'_>,
    on_event: &mut dyn FnMut(&[u8], u64) -> ControlFlow<()>,
) -> Result<TraceScan, ParseError> {
    for_each_member_and_indexed_event(reader, file, on_progress, on_member, &mut |ev, at| {
        on_event(ev.bytes(), at)
    })
}

/// [`for_each_member_and_event`] handing out each event as an [`Event`]: its bytes and,
/// when the one pass that found its end could also index its top-level members (a
/// well-formed object inside one read, [`scan_object`]), that index, so that
/// [`Event::fields_dup`] does not scan the object again. The events, offsets and findings
/// are the same as [`for_each_member_and_event`]'s.
pub fn for_each_member_and_indexed_event<R: Read>(
    reader: &mut ChunkReader<R>,
    file: &Arc<str>,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
    on_member: &mut OnMember<'_>,
    on_event: &mut dyn FnMut(Event<'_>, u64) -> ControlFlow<()>,
) -> Result<TraceScan, ParseError> {
    for_each_key_member_and_indexed_event(
        reader,
        file,
        on_progress,
        &mut |_, _| ControlFlow::Continue(()),
        on_member,
        on_event,
    )
}

/// [`for_each_member_and_indexed_event`], and `on_key(key, absolute_offset)` for every key of
/// the wrapper object (`traceEvents` included) as soon as the key is read, before its value:
/// what a reader that decides by the top-level keys (the inventory's head sniff,
/// `parse::kineto::sniff`) needs when a value is too large to wait for. `Break` stops the
/// scan (`stopped`) before the value is read.
pub fn for_each_key_member_and_indexed_event<R: Read>(
    reader: &mut ChunkReader<R>,
    file: &Arc<str>,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
    on_key: &mut dyn FnMut(&[u8], u64) -> ControlFlow<()>,
    on_member: &mut OnMember<'_>,
    on_event: &mut dyn FnMut(Event<'_>, u64) -> ControlFlow<()>,
) -> Result<TraceScan, ParseError> {
    let range = Range::default();
    scan_range(
        reader,
        file,
        range,
        on_progress,
        on_key,
        on_member,
        on_event,
    )
    .map(|(s, _)| s)
}

/// Where a range reader of one byte range of a trace starts: at the `{` of an event at byte
/// `at` inside the event array, after `after`, in a file whose trace is wrapped (`{…}`) or
/// not. One whole-file pass at that point is in exactly this state (formats.md §8.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeStart {
    /// Byte offset of the event's `{`.
    pub at: u64,
    /// What came before it in the array.
    pub after: After,
    /// The `{"traceEvents": …}` form.
    pub wrapped: bool,
}

/// One byte range of a trace read by its own reader ([`scan_range`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Range {
    /// Where it starts: `None` = the file start (the head, then the array).
    pub start: Option<RangeStart>,
    /// Stop at the first event that starts at or after this byte (inside the array).
    pub stop: Option<u64>,
}

/// [`for_each_key_member_and_indexed_event`] over one byte range: started at `range.start`
/// (the reader's [`ChunkReader::offset`] must be that byte), it delivers what a whole-file
/// pass delivers from there, and stops before the first event that starts at or after
/// `range.stop`, returning where (the true start of the next range). Without a stop, or once
/// the array has ended, it reads to the end like a whole-file pass.
pub fn scan_range<R: Read>(
    reader: &mut ChunkReader<R>,
    file: &Arc<str>,
    range: Range,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
    on_key: &mut dyn FnMut(&[u8], u64) -> ControlFlow<()>,
    on_member: &mut OnMember<'_>,
    on_event: &mut dyn FnMut(Event<'_>, u64) -> ControlFlow<()>,
) -> Result<(TraceScan, Option<RangeStart>), ParseError> {
    let mut index = ObjectIndex::default();
    let mut key: Vec<u8> = Vec::new();
    let mut scan = TraceScan::default();
    let mut state = State::Root;
    let mut saw_events = false;
    if let Some(s) = range.start {
        state = State::Array(s.after);
        scan.wrapped = s.wrapped;
        saw_events = true;
    }
    // The scan of the value (or key) starting at the first unconsumed byte, kept across reads.
    let mut pending = ValueScan::default();
    // An element (or a member of the wrapper object) past [`MAX_EVENT_BYTES`] being skipped:
    // its start, its first byte, and whether it is a member.
    let mut skipping: Option<(u64, u8, bool)> = None;
    let syntax = |at: u64, expected: &'static str| {
        ParseError::new(
            Position::file(file.clone()).at_byte(at),
            ParseErrorKind::Syntax { expected },
        )
    };
    let stop = |mut scan: TraceScan, e: ParseError, reader: &ChunkReader<R>| {
        scan.error = Some(e);
        scan.bytes = reader.progress().bytes_done;
        Ok((scan, None))
    };
    loop {
        // Work through what is buffered; `i` = bytes of the buffer fully handled.
        let eof = reader.at_eof();
        let buf = reader.buffer();
        let base = reader.offset();
        let mut i = 0;
        loop {
            if let State::Root = state {
                if base == 0 && i == 0 && buf.len() < 3 && !eof {
                    break; // need the first bytes to sniff the encoding
                }
                if base == 0 && i == 0 && buf.starts_with(b"\xEF\xBB\xBF") {
                    scan.diag.bom = true;
                    i = 3;
                }
            }
            if pending.scanned() == 0 {
                i = skip_ws(buf, i);
            }
            if i >= buf.len() {
                break;
            }
            if let Some((start, first, member)) = skipping {
                // Scan on without keeping a byte: memory stays flat however long it runs.
                match pending.resume_dropped(first, &buf[i..]) {
                    End::At(e) => {
                        pending = ValueScan::default();
                        skipping = None;
                        scan.diag.note(Issue::Oversized, start, None);
                        state = match member {
                            true => State::Object,
                            false => State::Array(After::Value),
                        };
                        i += e;
                        continue;
                    }
                    End::Incomplete | End::Invalid => {
                        i = buf.len();
                        break;
                    }
                }
            }
            let at = base + i as u64;
            match state {
                State::Root => {
                    // The encoding test looks at two bytes: wait for the second one, so that
                    // where a read happens to end never changes the verdict.
                    if buf.len() - i < 2 && !eof {
                        break;
                    }
                    if let Some(found) = utf16(&buf[i..]) {
                        return Err(ParseError::new(
                            Position::file(file.clone()).at_byte(at),
                            ParseErrorKind::Encoding { found },
                        ));
                    }
                    match buf[i] {
                        b'[' => state = State::Array(After::Open),
                        b'{' => {
                            scan.wrapped = true;
                            state = State::Object;
                        }
                        _ => return Err(syntax(at, "`[` or `{` at the start of a trace")),
                    }
                    i += 1;
                }
                State::Object => match buf[i] {
                    b',' => i += 1,
                    b'}' => {
                        scan.no_trace_events = !saw_events;
                        state = State::Done;
                        i += 1;
                    }
                    b'"' => state = State::Key,
                    _ => return stop(scan, syntax(at, "a key in the trace object"), reader),
                },
                State::Key => match pending.resume(&buf[i..], eof) {
                    End::At(e) => {
                        pending = ValueScan::default();
                        let events = &buf[i..i + e] == b"\"traceEvents\"";
                        key.clear();
                        key.extend_from_slice(&buf[i + 1..i + e - 1]);
                        state = State::Colon { events };
                        i += e;
                        if on_key(&key, at).is_break() {
                            scan.stopped = true;
                            scan.bytes = reader.progress().bytes_done;
                            return Ok((scan, None));
                        }
                    }
                    End::Incomplete => break,
                    End::Invalid => {
                        return stop(scan, syntax(at, "a key in the trace object"), reader)
                    }
                },
                State::Colon { events } => {
                    if buf[i] != b':' {
                        return stop(scan, syntax(at, "`:` after a key"), reader);
                    }
                    state = State::Member { events };
                    i += 1;
                }
                State::Member { events } => {
                    if events && buf[i] == b'[' && pending.scanned() == 0 {
                        saw_events = true;
                        state = State::Array(After::Open);
                        i += 1;
                        continue;
                    }
                    match pending.resume(&buf[i..], eof) {
                        // A member over the cap is skipped like an event (formats.md §1.1),
                        // whether it arrived whole or not.
                        End::At(e) if e > MAX_EVENT_BYTES => {
                            pending = ValueScan::default();
                            state = State::Object;
                            scan.diag.note(Issue::Oversized, at, None);
                            i += e;
                        }
                        End::At(e) => {
                            pending = ValueScan::default();
                            state = State::Object;
                            on_member(&key, &buf[i..i + e], at);
                            i += e;
                        }
                        End::Incomplete => {
                            if pending.scanned() >= MAX_EVENT_BYTES
                                && matches!(buf[i], b'{' | b'[' | b'"')
                            {
                                skipping = Some((at, buf[i], true));
                                i = buf.len();
                            }
                            break;
                        }
                        End::Invalid => return stop(scan, syntax(at, "a JSON value"), reader),
                    }
                }
                State::Array(after) => match buf[i] {
                    b',' if pending.scanned() == 0 => {
                        match after {
                            After::Value => {}
                            After::Open | After::Comma(_) => {
                                scan.diag.note(Issue::Punctuation, at, None)
                            }
                        }
                        state = State::Array(After::Comma(at));
                        i += 1;
                    }
                    b']' if pending.scanned() == 0 => {
                        if let After::Comma(c) = after {
                            scan.diag.note(Issue::TrailingComma, c, None);
                        }
                        state = if scan.wrapped {
                            State::Object
                        } else {
                            State::Done
                        };
                        i += 1;
                    }
                    b'{' if pending.scanned() == 0 && range.stop.is_some_and(|s| at >= s) => {
                        // The first event of the next range: stop before it.
                        reader.consume(i);
                        scan.bytes = reader.progress().bytes_done;
                        let wrapped = scan.wrapped;
                        return Ok((scan, Some(RangeStart { at, after, wrapped })));
                    }
                    first => {
                        let no_comma = pending.scanned() == 0 && matches!(after, After::Value);
                        // The one-pass strict scan when the whole object is buffered, else
                        // (and on anything unusual) the resumable lenient one.
                        let fast = match pending.scanned() == 0 && first == b'{' {
                            true => scan_object(&buf[i..], &mut index),
                            false => None,
                        };
                        let end = match fast {
                            Some(e) => End::At(e),
                            None => pending.resume(&buf[i..], eof),
                        };
                        if no_comma && end != End::Invalid {
                            scan.diag.note(Issue::Punctuation, at, None);
                        }
                        match end {
                            End::At(e) if e > MAX_EVENT_BYTES => {
                                // Over the cap but it arrived whole: skipped all the same, so
                                // that what is kept never depends on where the reads end.
                                pending = ValueScan::default();
                                state = State::Array(After::Value);
                                scan.diag.note(Issue::Oversized, at, None);
                                i += e;
                            }
                            End::At(e) => {
                                pending = ValueScan::default();
                                state = State::Array(After::Value);
                                if first == b'{' {
                                    scan.events += 1;
                                    scan.last_event_end = Some(at + e as u64);
                                    let bytes = &buf[i..i + e];
                                    let ev = match fast {
                                        Some(_) => Event::indexed(bytes, &index),
                                        None => Event::plain(bytes),
                                    };
                                    if on_event(ev, at).is_break() {
                                        scan.stopped = true;
                                        scan.bytes = reader.progress().bytes_done;
                                        return Ok((scan, None));
                                    }
                                } else {
                                    scan.diag.note(Issue::NonObject, at, None);
                                }
                                i += e;
                            }
                            End::Incomplete => {
                                if pending.scanned() >= MAX_EVENT_BYTES
                                    && matches!(first, b'{' | b'[' | b'"')
                                {
                                    // Too large to keep: drop what is buffered, skip the rest.
                                    skipping = Some((at, first, false));
                                    i = buf.len();
                                }
                                break;
                            }
                            End::Invalid => {
                                return stop(scan, syntax(at, "an event, `,` or `]`"), reader)
                            }
                        }
                    }
                },
                State::Done => {
                    scan.diag.trailing_at = Some(at);
                    scan.bytes = reader.progress().bytes_done;
                    return Ok((scan, None));
                }
            }
        }
        // Need more bytes: keep the unhandled tail (the value or key being scanned).
        reader.consume(i);
        if eof {
            let end = reader.offset() + reader.buffer().len() as u64;
            scan.bytes = reader.progress().bytes_done;
            match state {
                State::Root => {
                    return Err(ParseError::new(
                        Position::file(file.clone()).at_byte(0),
                        ParseErrorKind::Empty,
                    ))
                }
                State::Done => {}
                _ => {
                    scan.truncated_at = Some(end);
                    if let Some((start, _, _)) = skipping {
                        scan.cut_event_at = Some(start);
                        scan.diag.note(Issue::Oversized, start, None);
                    } else if matches!(state, State::Array(_)) && pending.scanned() > 0 {
                        scan.cut_event_at = Some(reader.offset());
                    }
                }
            }
            return Ok((scan, None));
        }
        if let Err(e) = reader.fill() {
            // A source that ends before its data does (a `.gz` whose compressed stream is cut
            // short) is a cut file, as a plain file ending inside the array: formats.md §8.
            if let (crate::ingest::chunk_reader::FillError::Io { source, .. }, false) =
                (&e, matches!(state, State::Root | State::Done))
            {
                if source.kind() == std::io::ErrorKind::UnexpectedEof {
                    scan.truncated_at = Some(reader.offset() + reader.buffer().len() as u64);
                    scan.cut_source = Some(source.to_string());
                    if let Some((start, _, _)) = skipping {
                        scan.cut_event_at = Some(start);
                        scan.diag.note(Issue::Oversized, start, None);
                    } else if matches!(state, State::Array(_)) && pending.scanned() > 0 {
                        scan.cut_event_at = Some(reader.offset());
                    }
                    scan.bytes = reader.progress().bytes_done;
                    return Ok((scan, None));
                }
            }
            let e = ParseError::from_fill(file, e);
            if let State::Root = state {
                return Err(e);
            }
            return stop(scan, e, reader);
        }
        if on_progress(reader.progress()).is_break() {
            scan.stopped = true;
            scan.bytes = reader.progress().bytes_done;
            return Ok((scan, None));
        }
    }
}

#[cfg(test)]
mod tests;
