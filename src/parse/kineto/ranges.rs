//! One large plain Kineto trace read on several cores (formats.md §8.2): the byte ranges of
//! [`crate::parse::trace_json::ranges`], each read into its own [`KinetoBuilder`], merged in
//! range order into exactly what one reader gives ([`super::merge`]).
//!
//! Native only: the threads are `std::thread::scope` threads.

use std::ops::ControlFlow;

use super::{KinetoBuilder, KinetoInfo, Traces};
use crate::ingest::{Opener, Progress};
use crate::parse::trace_json::ranges::{self as cut, RangeSink};
use crate::parse::trace_json::Event;
use crate::parse::ParseError;

#[cfg(test)]
pub(super) use crate::parse::trace_json::ranges::{find_start, REREADS};
pub use crate::parse::trace_json::ranges::{Ranges, MIN_RANGE_BYTES};

impl RangeSink for KinetoBuilder {
    fn member(&mut self, key: &[u8], value: &[u8], at: u64) {
        KinetoBuilder::member(self, key, value, at)
    }
    fn indexed_event(&mut self, ev: Event<'_>, at: u64) -> ControlFlow<()> {
        KinetoBuilder::indexed_event(self, ev, at)
    }
}

/// Reads the plain trace `path` (`size` bytes) through `opener` on `ranges.threads` threads
/// and splits a merged trace like [`super::read_traces`]: the same traces and report.
/// `None` when the file is not cut (too small, gzip, one thread) or a range holds an error:
/// then read it with one reader. `on_progress` is called on this thread with the bytes of
/// every range summed; `Break` stops every range.
pub fn read_traces_ranges(
    opener: &(dyn Opener + Sync),
    path: &str,
    size: u64,
    ranges: Ranges,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Option<Result<(Traces, KinetoInfo), ParseError>> {
    let n = ranges.count(size);
    if n < 2 {
        return None;
    }
    read_cut(opener, path, size, &cut::even_starts(size, n), on_progress)
}

/// [`read_traces_ranges`] with the ranges starting at `starts` (ascending, the first 0).
pub(super) fn read_cut(
    opener: &(dyn Opener + Sync),
    path: &str,
    size: u64,
    starts: &[u64],
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Option<Result<(Traces, KinetoInfo), ParseError>> {
    let make = |start: Option<u64>, len: u64| match start {
        None => KinetoBuilder::sized_for(len).splitting(),
        Some(at) => KinetoBuilder::new().splitting().deferring(at, len),
    };
    let (builders, scan) = cut::read_cut(opener, path, size, starts, &make, on_progress)?;
    let mut parts = builders.into_iter();
    let mut merged = parts.next()?;
    for b in parts {
        merged.absorb(b);
    }
    let (t, info) = merged.finish_traces(scan);
    Some(super::read::done(info, None).map(|info| (t, info)))
}
