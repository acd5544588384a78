//! Byte ranges of one `trace_view.json` read into their own [`HostOpsReader`]s (each with its
//! own string and stack pools) and merged in range order into exactly what one reader gives
//! (formats.md §8.2): the rows, the flows, the rank's pools, the counters, the findings with
//! their byte offsets, and the parity mode's stop at the first kept event without a numeric
//! `ts`.

use std::ops::ControlFlow;

use super::{HostOpsReader, Slot, TraceMode};
use crate::base::arith::Tally;
use crate::base::Problems;
use crate::model::stacks::{StackId, StackPool};
use crate::model::strings::{StrId, StringPool};
use crate::parse::trace_json::object::Event;
use crate::parse::trace_json::ranges::RangeSink;

impl HostOpsReader<'static> {
    /// The reader of one byte range of `file` (any range, the first included), with pools and
    /// a problem list of its own, to be [`absorb`](HostOpsReader::absorb)ed in range order
    /// into the reader of the rank's pools.
    pub fn range(file: &str, mode: TraceMode) -> Self {
        let (strings, stacks) = (Slot::Own(StringPool::new()), Slot::Own(StackPool::new()));
        HostOpsReader::with_slots(file, mode, strings, stacks, Slot::Own(Problems::new()))
    }
}

impl HostOpsReader<'_> {
    /// Appends `next`, the reader of the byte range that follows the ones read into `self`
    /// (which starts at the file's start), as if one reader had read both.
    ///
    /// Its strings and stacks are re-interned into this reader's pools in the order they first
    /// appear in it (so, with the ranges before, in the order one reader meets them), its rows
    /// and flows appended with their thread keys re-interned the same way, its counters
    /// summed, the first byte offsets of each finding kept in file order. The one state that
    /// crosses ranges is the parity stop: once a range before has stopped (a kept event
    /// without a numeric `ts`), one reader would have read no further, so `next` is dropped;
    /// when `next` stopped (it read nothing after its stop), what it read and its stop (and
    /// its `MEM-TV-003`) become this reader's.
    pub fn absorb(&mut self, next: HostOpsReader<'_>) {
        if self.fatal.is_some() {
            return;
        }
        let HostOpsReader {
            strings,
            stacks,
            problems,
            host,
            stats,
            fatal,
            diag,
            out_of_range,
            ..
        } = next;
        if let Slot::Own(p) = problems {
            // Only the parity stop's `MEM-TV-003` is pushed during the pass.
            self.problems.extend(p);
        }
        let names: Vec<StrId> = (0..strings.len() as u32)
            .map(|i| self.strings.intern(strings.get(StrId::from_index(i))))
            .collect();
        let stack_ids: Vec<StackId> = (0..stacks.len() as u32)
            .map(|i| self.stacks.intern(stacks.text(StackId::from_index(i))))
            .collect();
        self.host.append(&host, &names, &stack_ids);
        let s = &mut self.stats;
        s.cpu_ops += stats.cpu_ops;
        s.with_stack += stats.with_stack;
        s.flows += stats.flows;
        s.bad_ts += stats.bad_ts;
        self.diag.merge(&diag);
        let o = &mut self.out_of_range;
        o.count += out_of_range.count;
        let room = Tally::KEEP.saturating_sub(o.first_at.len());
        o.first_at.extend(out_of_range.first_at.iter().take(room));
        // What `next` read before its stop is in (its strings and stacks were interned by one
        // reader too); nothing after it is.
        self.fatal = fatal;
        // The caches speak of `self`'s pools and table: still right, nothing to drop.
    }

    /// True once the parity mode has stopped (a kept event without a numeric `ts`): one
    /// reader would hand it no more events.
    pub fn stopped(&self) -> bool {
        self.fatal.is_some()
    }
}

/// A range's reader: every event of the range until its parity stop (after which one reader
/// would read no more), and never a `Break` (the range reads on; [`HostOpsReader::absorb`]
/// drops what follows a stop).
impl RangeSink for HostOpsReader<'static> {
    fn member(&mut self, _: &[u8], _: &[u8], _: u64) {}
    fn indexed_event(&mut self, ev: Event<'_>, at: u64) -> ControlFlow<()> {
        if !self.stopped() {
            let _ = HostOpsReader::indexed_event(self, ev, at);
        }
        ControlFlow::Continue(())
    }
}
