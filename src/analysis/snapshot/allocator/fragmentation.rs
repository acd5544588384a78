//! Fragmentation at one moment, in classes (torch-snapshot.md §7.3, §7.10).
//!
//! Over the segment map after entry `i` ([`super::SegmentMap`]):
//! * **hard**: inactive space in blocks smaller than the largest recent request — free bytes
//!   that cannot serve it;
//! * **soft**: inactive space in blocks at least that large — cached and reusable;
//! * **stream**: `active_pending_free` blocks — freed, but waiting on other streams' events
//!   (`record_stream`) before they return to the cache.
//!
//! Decision: the *largest recent request* is the largest `alloc` of the last
//! [`RECENT_ENTRIES`] entries up to and including `i`, rounded up to 512 bytes
//! ([`super::round_block`]); with no alloc there, every inactive byte is soft.
//! `reserved − active` over time is the curves' [`crate::analysis::snapshot::curves::Curves::fragmentation`].

use crate::model::snapshot::{Action, Block, BlockState, DeviceTrace, Segment};

use super::{round_block, SegmentMap};

/// How many entries back "recent" reaches.
pub const RECENT_ENTRIES: usize = 1_000;

/// The fragmentation classes and metrics of one segment map (bytes unless named otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fragmentation {
    /// Σ segment sizes.
    pub reserved: u64,
    /// Σ `active_allocated` block sizes.
    pub allocated: u64,
    /// Σ `active_allocated` + `active_pending_free` block sizes.
    pub active: u64,
    /// Σ inactive space.
    pub inactive: u64,
    /// Largest inactive block.
    pub largest_inactive: u64,
    /// The largest recent request, rounded (0: none).
    pub largest_recent_request: u64,
    /// Inactive space in blocks smaller than `largest_recent_request`.
    pub hard: u64,
    /// Inactive space in blocks of at least `largest_recent_request`.
    pub soft: u64,
    /// Σ `active_pending_free` block sizes.
    pub stream: u64,
    /// Σ (size − requested) of allocated blocks whose size is exact: rounding waste.
    pub internal_waste: u64,
    /// `1 − largest_inactive / inactive` (0 when nothing is inactive).
    pub external_ratio: f64,
}

/// The largest `alloc` size among the [`RECENT_ENTRIES`] entries ending at `index`, rounded.
pub fn largest_recent_request(dev: &DeviceTrace, index: Option<usize>) -> u64 {
    let Some(i) = index else { return 0 };
    let t = &dev.entries;
    if t.is_empty() {
        return 0;
    }
    let i = i.min(t.len() - 1);
    let lo = (i + 1).saturating_sub(RECENT_ENTRIES);
    (lo..=i)
        .filter(|&j| t.action()[j] == Action::Alloc)
        .map(|j| round_block(t.size()[j]))
        .max()
        .unwrap_or(0)
}

/// Classifies the space of `map` against a largest recent request of `largest_request` bytes.
pub fn classify(map: &SegmentMap, largest_request: u64) -> Fragmentation {
    let mut f = Fragmentation {
        largest_recent_request: largest_request,
        ..Default::default()
    };
    for s in &map.segments {
        f.reserved += s.seg.size;
        for b in &s.blocks {
            f.add_block(b.state, b.size, b.requested, b.exact);
        }
    }
    f.finish()
}

/// The classes of one end-state segment as the snapshot records its blocks (§7.10 at the end
/// state: exact sizes, no recent request, so every inactive byte is soft). Blocks of another
/// state string count in no class.
pub fn of_end_segment(seg: &Segment, blocks: &[Block]) -> Fragmentation {
    let mut f = Fragmentation {
        reserved: seg.total_size,
        ..Default::default()
    };
    for b in blocks {
        f.add_block(b.state, b.size, b.requested_size, true);
    }
    f.finish()
}

impl Fragmentation {
    /// Adds the bytes of `other` (another segment of the same moment): sums, the larger
    /// largest block, the ratio recomputed.
    pub fn merge(&mut self, other: &Fragmentation) {
        self.reserved += other.reserved;
        self.allocated += other.allocated;
        self.active += other.active;
        self.inactive += other.inactive;
        self.largest_inactive = self.largest_inactive.max(other.largest_inactive);
        self.largest_recent_request = self
            .largest_recent_request
            .max(other.largest_recent_request);
        self.hard += other.hard;
        self.soft += other.soft;
        self.stream += other.stream;
        self.internal_waste += other.internal_waste;
        *self = self.finish();
    }

    fn add_block(&mut self, state: BlockState, size: u64, requested: u64, exact: bool) {
        match state {
            BlockState::Inactive => {
                self.inactive += size;
                self.largest_inactive = self.largest_inactive.max(size);
                if size < self.largest_recent_request {
                    self.hard += size;
                } else {
                    self.soft += size;
                }
            }
            BlockState::ActivePendingFree => {
                self.active += size;
                self.stream += size;
            }
            BlockState::ActiveAllocated => {
                self.allocated += size;
                self.active += size;
                if exact {
                    self.internal_waste += size.saturating_sub(requested);
                }
            }
            BlockState::Other(_) => {}
        }
    }

    fn finish(mut self) -> Self {
        self.external_ratio = if self.inactive > 0 {
            1.0 - self.largest_inactive as f64 / self.inactive as f64
        } else {
            0.0
        };
        self
    }
}

#[cfg(test)]
mod tests;
