//! Streams the events of a `trace_view.json` (formats.md §5.1; ascend-memory.md §5.2):
//! a bare top-level array, or an object whose `traceEvents` member is that array.
//! Each event object is handed to the caller as raw bytes plus its absolute byte offset;
//! nothing else of the file is kept. A file that ends inside the array (an interrupted
//! export) is not an error: the events read so far were delivered, and
//! [`TraceScan::truncated_at`] says where it stopped.

use std::io::Read;
use std::ops::ControlFlow;
use std::sync::Arc;

use super::scan::{skip_ws, string_end, value_end, End};
use crate::base::Position;
use crate::ingest::{ChunkReader, Progress};
use crate::parse::{ParseError, ParseErrorKind};

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
    /// Byte offset where the file ended inside the event array, if it did (MEM-TV-002).
    pub truncated_at: Option<u64>,
    /// True when a callback asked to stop (Cancel); the scan is then incomplete.
    pub stopped: bool,
    /// Bytes read.
    pub bytes: u64,
}

enum State {
    Root,
    /// Inside the wrapper object, before `traceEvents`.
    Object,
    /// Inside the event array; `first` until the first element.
    Array,
    Done,
}

/// Streams `reader`, calling `on_event(raw_event_bytes, absolute_offset)` for each element of
/// the event array that is a JSON object (other elements are skipped), and `on_progress`
/// after each chunk read. Either callback returning `Break` stops the scan (`stopped`).
///
/// `file` names the file in errors. Errors: [`ParseErrorKind::Empty`] (no bytes or only
/// whitespace), [`ParseErrorKind::Syntax`] with the byte offset when the bytes are not a
/// trace (events delivered before the error stay delivered), [`ParseErrorKind::Read`] /
/// [`ParseErrorKind::TooLarge`] from the reader.
pub fn for_each_event<R: Read>(
    reader: &mut ChunkReader<R>,
    file: &Arc<str>,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
    on_event: &mut dyn FnMut(&[u8], u64) -> ControlFlow<()>,
) -> Result<TraceScan, ParseError> {
    let mut scan = TraceScan::default();
    let mut state = State::Root;
    let syntax = |at: u64, expected: &'static str| {
        ParseError::new(
            Position::file(file.clone()).at_byte(at),
            ParseErrorKind::Syntax { expected },
        )
    };
    loop {
        // Work through what is buffered; `i` = bytes of the buffer fully handled.
        let eof = reader.at_eof();
        let buf = reader.buffer();
        let base = reader.offset();
        let mut i = 0;
        loop {
            i = skip_ws(buf, i);
            if i >= buf.len() {
                break;
            }
            match state {
                State::Root => match buf[i] {
                    b'[' => {
                        state = State::Array;
                        i += 1;
                    }
                    b'{' => {
                        scan.wrapped = true;
                        state = State::Object;
                        i += 1;
                    }
                    _ => {
                        return Err(syntax(
                            base + i as u64,
                            "`[` or `{` at the start of a trace",
                        ))
                    }
                },
                State::Object => {
                    match buf[i] {
                        b',' => {
                            i += 1;
                            continue;
                        }
                        b'}' => {
                            scan.no_trace_events = true;
                            state = State::Done;
                            continue;
                        }
                        b'"' => {}
                        _ => return Err(syntax(base + i as u64, "a key in the trace object")),
                    }
                    let kend = match string_end(buf, i) {
                        End::At(e) => e,
                        _ => {
                            break;
                        }
                    };
                    let is_events = &buf[i + 1..kend - 1] == b"traceEvents";
                    let v = skip_ws(buf, kend);
                    if v >= buf.len() {
                        break;
                    }
                    if buf[v] != b':' {
                        return Err(syntax(base + v as u64, "`:` after a key"));
                    }
                    let v = skip_ws(buf, v + 1);
                    if v >= buf.len() {
                        break;
                    }
                    if is_events && buf[v] == b'[' {
                        state = State::Array;
                        i = v + 1;
                        continue;
                    }
                    match value_end(buf, v, eof) {
                        End::At(e) => i = e,
                        End::Incomplete => {
                            break;
                        }
                        End::Invalid => return Err(syntax(base + v as u64, "a JSON value")),
                    }
                }
                State::Array => match buf[i] {
                    b',' => i += 1,
                    b']' => {
                        state = State::Done;
                        i += 1;
                    }
                    _ => match value_end(buf, i, eof) {
                        End::At(e) => {
                            if buf[i] == b'{' {
                                scan.events += 1;
                                if on_event(&buf[i..e], base + i as u64).is_break() {
                                    scan.stopped = true;
                                    scan.bytes = reader.progress().bytes_done;
                                    return Ok(scan);
                                }
                            }
                            i = e;
                        }
                        End::Incomplete => {
                            break;
                        }
                        End::Invalid => {
                            return Err(syntax(base + i as u64, "an event, `,` or `]`"))
                        }
                    },
                },
                State::Done => {
                    scan.bytes = reader.progress().bytes_done;
                    return Ok(scan);
                }
            }
        }
        if let State::Done = state {
            scan.bytes = reader.progress().bytes_done;
            return Ok(scan);
        }
        // Need more bytes: keep the unhandled tail (an incomplete value or key).
        reader.consume(i);
        if eof {
            let at = reader.offset();
            scan.bytes = reader.progress().bytes_done;
            return match state {
                State::Root => Err(ParseError::new(
                    Position::file(file.clone()).at_byte(0),
                    ParseErrorKind::Empty,
                )),
                _ => {
                    scan.truncated_at = Some(at);
                    Ok(scan)
                }
            };
        }
        let more = reader.fill().map_err(|e| ParseError::from_fill(file, e))?;
        if on_progress(reader.progress()).is_break() {
            scan.stopped = true;
            scan.bytes = reader.progress().bytes_done;
            return Ok(scan);
        }
        let _ = more;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &[u8], chunk: usize) -> Result<(Vec<(String, u64)>, TraceScan), ParseError> {
        let mut rdr = ChunkReader::with_sizes(text, Some(text.len() as u64), chunk, 1 << 20);
        let mut events = Vec::new();
        let file: Arc<str> = "t.json".into();
        let scan = for_each_event(
            &mut rdr,
            &file,
            &mut |_| ControlFlow::Continue(()),
            &mut |ev, at| {
                events.push((String::from_utf8(ev.to_vec()).unwrap(), at));
                ControlFlow::Continue(())
            },
        )?;
        Ok((events, scan))
    }

    #[test]
    fn bare_array_at_every_chunk_size() {
        let text = br#" [{"a":1}, {"b":"x]}"} ,{"c":[{"d":2}]} ]"#;
        for chunk in 1..text.len() + 2 {
            let (ev, scan) = run(text, chunk).unwrap();
            assert_eq!(ev.len(), 3, "chunk {chunk}");
            assert_eq!(ev[1], (r#"{"b":"x]}"}"#.to_string(), 11));
            assert_eq!(ev[2].0, r#"{"c":[{"d":2}]}"#);
            assert!(!scan.wrapped);
            assert_eq!(scan.truncated_at, None);
        }
    }

    #[test]
    fn wrapper_object_skips_other_members() {
        let text = br#"{"otherData":{"x":[1,2,{"y":"]"}]},"displayTimeUnit":"ns","traceEvents":[{"a":1},{"b":2}],"z":1}"#;
        for chunk in [1, 3, 7, 64] {
            let (ev, scan) = run(text, chunk).unwrap();
            assert_eq!(ev.len(), 2);
            assert!(scan.wrapped);
        }
        let (ev, scan) = run(br#"{"a":1}"#, 2).unwrap();
        assert!(ev.is_empty() && scan.no_trace_events);
    }

    #[test]
    fn truncation_keeps_events_and_reports_offset() {
        let text = br#"[{"a":1},{"b":2},{"c":"#;
        let (ev, scan) = run(text, 4).unwrap();
        assert_eq!(ev.len(), 2);
        assert_eq!(scan.truncated_at, Some(17));
        let (ev, scan) = run(br#"[{"a":1},"#, 3).unwrap();
        assert_eq!((ev.len(), scan.truncated_at), (1, Some(9)));
    }

    #[test]
    fn errors_have_offsets() {
        let e = run(b"  \n ", 2).err().unwrap();
        assert_eq!(e.kind(), &ParseErrorKind::Empty);
        let e = run(b"PK\x03\x04", 2).err().unwrap();
        assert_eq!(
            e.to_string(),
            "t.json (byte 0): expected `[` or `{` at the start of a trace"
        );
        let e = run(br#"[{"a":1} x]"#, 64).err().unwrap();
        assert_eq!(e.position().byte, Some(9));
    }

    #[test]
    fn cancel_stops_at_once() {
        let text = br#"[{"a":1},{"b":2}]"#;
        let mut rdr = ChunkReader::with_sizes(&text[..], None, 64, 1 << 20);
        let file: Arc<str> = "t".into();
        let mut n = 0;
        let scan = for_each_event(
            &mut rdr,
            &file,
            &mut |_| ControlFlow::Continue(()),
            &mut |_, _| {
                n += 1;
                ControlFlow::Break(())
            },
        )
        .unwrap();
        assert!(scan.stopped);
        assert_eq!(n, 1);
    }
}
