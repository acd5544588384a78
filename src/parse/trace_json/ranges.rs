//! One large plain trace read on several cores (formats.md §8.2): the file is cut into byte
//! ranges of about equal size, each read by its own reader on its own thread into its own
//! builder ([`RangeSink`]); the caller merges the builders in range order into exactly what
//! one reader gives (Kineto: `parse::kineto::merge`; `trace_view.json`:
//! [`super::timeline::TimelineBuilder::absorb`]).
//!
//! A range after the first starts **speculatively** at the first event start it can see
//! ([`find_start`]); the reader of the range before it reads on to the first event that
//! starts at or after the range's first byte and says where that is and in which state
//! ([`RangeStart`]). At the stitch the two must be equal; when they are not, the range is read
//! again from the true start, on the calling thread (always correct, fast in the common case).
//! A range reader whose bytes hold an error, and a gzip file, are read by one reader as before.
//!
//! Native only (the page reads each file with one reader): the threads are
//! `std::thread::scope` threads.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use super::object::Event;
use super::splitter::{scan_range, After, Range, RangeStart, TraceScan};
use crate::ingest::{ChunkReader, Opener, Progress};

/// What one range's reader feeds: the members of the wrapper object and the events, in file
/// order, as [`super::splitter::for_each_member_and_indexed_event`] hands them out.
pub trait RangeSink: Send {
    /// A top-level member other than the event array.
    fn member(&mut self, key: &[u8], value: &[u8], at: u64);
    /// One event at absolute byte offset `at`.
    fn indexed_event(&mut self, ev: Event<'_>, at: u64) -> ControlFlow<()>;
}

#[cfg(test)]
thread_local! {
    /// Ranges read again from their true start (tests: the common case needs none).
    pub static REREADS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The smallest byte range given its own reader by default: a file is cut into at most
/// `size / MIN_RANGE_BYTES` ranges (below twice this, one reader).
pub const MIN_RANGE_BYTES: u64 = 32 << 20;

/// How many readers one file may get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ranges {
    /// Threads for this file (1: one reader, as before).
    pub threads: usize,
    /// The smallest range (tests set it low to cut small files).
    pub min_range_bytes: u64,
}

impl Ranges {
    /// One reader.
    pub const ONE: Ranges = Ranges {
        threads: 1,
        min_range_bytes: MIN_RANGE_BYTES,
    };

    /// `threads` readers at most, ranges of at least [`MIN_RANGE_BYTES`].
    pub fn threads(threads: usize) -> Ranges {
        Ranges {
            threads,
            min_range_bytes: MIN_RANGE_BYTES,
        }
    }

    /// How many ranges a file of `size` bytes is cut into.
    pub fn count(&self, size: u64) -> usize {
        let by_size = size / self.min_range_bytes.max(1);
        (self.threads as u64).min(by_size).max(1) as usize
    }
}

/// One range read: where it started and stopped, its builder and report.
struct Part<B> {
    start: Option<RangeStart>,
    end: Option<RangeStart>,
    builder: B,
    scan: TraceScan,
    /// Where its reader's bytes start (its `scan.bytes` count from here).
    from: u64,
    /// An error outside the scan (open, read): the file goes to one reader.
    failed: bool,
}

/// The event start a range beginning at byte `from` assumes: the first `{` at or after
/// `from` whose previous non-blank byte is `,` (or the array's `[`) with a line break between
/// them — valid JSON has no raw line break inside a string, so in a file of one event per
/// line (or pretty-printed) this is an element start of some array; whether it is one of the
/// event array is checked at the stitch. In a file of one line (no line break in sight) the
/// same without the line break, and followed by `"` or `}`.
/// `bytes` are the file's bytes from `base` on (`base <= from`); `None` when none is seen.
pub fn find_start(bytes: &[u8], base: u64, from: u64, wrapped: bool) -> Option<RangeStart> {
    let skip = usize::try_from(from.saturating_sub(base)).ok()?;
    let lines = memchr::memchr(b'\n', bytes.get(skip..)?).is_some();
    let blank = |b: u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    let mut i = skip;
    while let Some(k) = memchr::memchr(b'{', bytes.get(i..)?) {
        let p = i + k;
        i = p + 1;
        let mut j = p;
        let mut broke = false;
        while j > 0 && blank(bytes[j - 1]) {
            broke |= bytes[j - 1] == b'\n';
            j -= 1;
        }
        if j == 0 || (lines && !broke) {
            continue;
        }
        let after = match bytes[j - 1] {
            b',' => After::Comma(base + (j - 1) as u64),
            b'[' => After::Open,
            _ => continue,
        };
        if !lines {
            let next = bytes[p + 1..].iter().find(|&&b| !blank(b));
            if !matches!(next, Some(b'"' | b'}')) {
                continue;
            }
        }
        return Some(RangeStart {
            at: base + p as u64,
            after,
            wrapped,
        });
    }
    None
}

/// The speculative start of the range `from..to` of `path` (bytes read at an offset, in a
/// growing window), or `None` when the range holds none.
fn speculate(
    opener: &dyn Opener,
    path: &str,
    from: u64,
    to: u64,
    wrapped: bool,
) -> Option<RangeStart> {
    const BACK: u64 = 4096;
    let base = from.saturating_sub(BACK);
    let mut window: u64 = 256 << 10;
    loop {
        let len = (from - base + window).min(to - base);
        let mut buf = vec![0u8; usize::try_from(len).ok()?];
        let n = opener.read_at(path, base, &mut buf).ok()?;
        if n < buf.len() {
            buf.truncate(n);
            return find_start(&buf, base, from, wrapped).filter(|s| s.at < to);
        }
        if let Some(s) = find_start(&buf, base, from, wrapped) {
            return (s.at < to).then_some(s);
        }
        if base + len >= to {
            return None;
        }
        window *= 4;
    }
}

/// Reads `range` of `path` into `builder`.
fn read_part<B: RangeSink>(
    opener: &dyn Opener,
    path: &str,
    file: &Arc<str>,
    range: Range,
    builder: B,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Part<B> {
    let from = range.start.map_or(0, |s| s.at);
    let src = match from {
        0 => opener.open(path),
        _ => opener.open_from(path, from),
    };
    let mut part = Part {
        start: range.start,
        end: None,
        builder,
        scan: TraceScan::default(),
        from,
        failed: false,
    };
    let Ok(src) = src else {
        part.failed = true;
        return part;
    };
    let mut reader = ChunkReader::new(src, None).starting_at(from);
    let b = std::cell::RefCell::new(part.builder);
    let res = scan_range(
        &mut reader,
        file,
        range,
        on_progress,
        &mut |_, _| ControlFlow::Continue(()),
        &mut |key, value, at| b.borrow_mut().member(key, value, at),
        &mut |ev, at| b.borrow_mut().indexed_event(ev, at),
    );
    part.builder = b.into_inner();
    match res {
        Ok((scan, end)) => {
            part.failed = scan.error.is_some();
            part.scan = scan;
            part.end = end;
        }
        Err(_) => part.failed = true,
    }
    part
}

/// The report of one pass over the parts' bytes (in file order, each starting where the one
/// before stopped).
fn merge_scans<B>(parts: &[Part<B>]) -> TraceScan {
    let mut s = TraceScan::default();
    for (k, p) in parts.iter().enumerate() {
        let q = &p.scan;
        if k == 0 {
            s.wrapped = q.wrapped;
        }
        s.events += q.events;
        s.no_trace_events = q.no_trace_events;
        s.truncated_at = q.truncated_at;
        s.cut_event_at = q.cut_event_at;
        s.cut_source = q.cut_source.clone();
        s.last_event_end = q.last_event_end.or(s.last_event_end);
        s.diag.merge(&q.diag);
        s.stopped |= q.stopped;
        s.bytes = p.from + q.bytes;
    }
    s
}

/// Reads the plain trace `path` (`size` bytes) through `opener` in the ranges starting at
/// `starts` (ascending, the first 0), range k into `make(start, len)` on its own thread
/// (`start`: `None` for the file's first range, else the byte its reader starts at; `len`:
/// the range's size), and returns the builders of the ranges used, in file order, with the
/// report of one pass over them. `None` when the file must be read by one reader instead
/// (gzip, a range holding an error that stopped its read, bytes after the end of the trace).
/// `on_progress` is called on this thread with the bytes of every range summed; `Break`
/// stops every range.
pub fn read_cut<B: RangeSink>(
    opener: &(dyn Opener + Sync),
    path: &str,
    size: u64,
    starts: &[u64],
    make: &(dyn Fn(Option<u64>, u64) -> B + Sync),
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Option<(Vec<B>, TraceScan)> {
    let n = starts.len();
    let mut head = [0u8; 64];
    let got = opener.read_at(path, 0, &mut head).ok()?;
    let head = &head[..got];
    if head.starts_with(&[0x1f, 0x8b]) {
        return None; // gzip: one reader (formats.md §8.2)
    }
    let first = head
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(head)
        .iter()
        .find(|b| !b.is_ascii_whitespace());
    let wrapped = first == Some(&b'{');
    // Range k is `bound(k)..end_of(k)`.
    let bound = |k: usize| starts[k];
    let end_of = |k: usize| starts.get(k + 1).copied().unwrap_or(size);
    let stop_of = |k: usize| starts.get(k + 1).copied();
    let file: Arc<str> = Arc::from(path);
    let stop = AtomicBool::new(false);
    let done: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let (tx, rx) = mpsc::channel::<()>();
    let parts: Vec<Option<Part<B>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|k| {
                let (tx, file, stop, done) = (tx.clone(), &file, &stop, &done);
                s.spawn(move || {
                    let len = end_of(k) - bound(k);
                    let (start, builder) = match k {
                        0 => (None, make(None, len)),
                        _ => {
                            let st = speculate(opener, path, bound(k), end_of(k), wrapped)?;
                            (Some(st), make(Some(st.at), len))
                        }
                    };
                    // The bytes before the guessed start count as read.
                    let skipped = start.map_or(0, |s| s.at - bound(k));
                    let mut prog = |p: Progress| {
                        let n = (skipped + p.bytes_done).min(len);
                        done[k].store(n, Ordering::Relaxed);
                        let _ = tx.send(());
                        match stop.load(Ordering::Relaxed) {
                            true => ControlFlow::Break(()),
                            false => ControlFlow::Continue(()),
                        }
                    };
                    let range = Range {
                        start,
                        stop: stop_of(k),
                    };
                    Some(read_part(opener, path, file, range, builder, &mut prog))
                })
            })
            .collect();
        drop(tx);
        for () in rx {
            let bytes_done = done.iter().map(|d| d.load(Ordering::Relaxed)).sum();
            let p = Progress {
                bytes_done,
                bytes_total: Some(size),
            };
            if on_progress(p).is_break() {
                stop.store(true, Ordering::Relaxed);
            }
        }
        handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect()
    });
    let mut parts = parts.into_iter();
    let mut acc: Vec<Part<B>> = vec![parts.next().flatten()?];
    let mut no_progress = |_: Progress| match stop.load(Ordering::Relaxed) {
        true => ControlFlow::Break(()),
        false => ControlFlow::Continue(()),
    };
    for (k, part) in (1..n).zip(parts) {
        let prev = acc.last()?;
        if prev.failed {
            return None;
        }
        let Some(end) = prev.end else { break };
        let part = match part {
            Some(p) if p.start == Some(end) => p,
            // A wrong guess (or none): read the range again from its true start.
            _ => {
                #[cfg(test)]
                REREADS.with(|r| r.set(r.get() + 1));
                let len = end_of(k) - bound(k);
                let b = make(Some(end.at), len);
                let range = Range {
                    start: Some(end),
                    stop: stop_of(k),
                };
                read_part(opener, path, &file, range, b, &mut no_progress)
            }
        };
        acc.push(part);
    }
    if acc.iter().any(|p| p.failed) {
        return None;
    }
    // Every byte is read (ranges read again, or without a guess, do not report).
    let all = Progress {
        bytes_done: size,
        bytes_total: Some(size),
    };
    if !stop.load(Ordering::Relaxed) && on_progress(all).is_break() {
        stop.store(true, Ordering::Relaxed);
    }
    let scan = merge_scans(&acc);
    if scan.diag.trailing_at.is_some() {
        // Bytes after the trace: `scan.bytes` is where that read stopped, which depends on
        // the reads' sizes; one reader says it as before.
        return None;
    }
    Some((acc.into_iter().map(|p| p.builder).collect(), scan))
}

/// The first bytes of `n` ranges of about equal size of a file of `size` bytes.
pub fn even_starts(size: u64, n: usize) -> Vec<u64> {
    (0..n as u64).map(|k| size / n as u64 * k).collect()
}
