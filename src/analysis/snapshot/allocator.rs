//! The allocator state after any entry (torch-snapshot.md §6.1 "Allocator State History",
//! §7.10): the segments of one device and their blocks (allocated / active-pending-free /
//! inactive), replayed **backwards** from the end state.
//!
//! One backward walk over the trace undoes each entry (the MemoryViz undo rules of §6.1) and
//! keeps a **checkpoint** of the state every `K` entries (default 10,000, §7.10). The state
//! after entry `i` is then the nearest checkpoint at or after `i`, with fewer than `K` entries
//! undone: a query costs O(K log b + segments + blocks), never a replay from zero. Checkpoints
//! are bounded: when their rows exceed [`row_budget`] of the trace, `K` doubles and every other
//! checkpoint is dropped, so memory grows with what is kept (≈ 48 bytes per row), not with
//! the trace length times the live set.
//!
//! Undo rules (state after entry `i` → state before it):
//! * `alloc` → the block is dropped (its bytes become free space of the segment);
//! * `free_completed` → the block is re-created as `active_pending_free`, sized as the request
//!   rounded up to 512 bytes (the allocator's minimum rounding; the true block may be larger
//!   when it was not split: [`LiveBlock::exact`] is false);
//! * `free_requested` → a pending block becomes allocated again;
//! * `segment_alloc` / `segment_map` → the range `[addr, addr + size)` is removed from the
//!   segment holding it (removing, shrinking or splitting it);
//! * `segment_free` → the segment is re-inserted; `segment_unmap` → the range is re-inserted
//!   and merged with adjacent expandable ranges of the same stream.
//!
//! An entry that contradicts the state (a block or segment that is not there) is counted in
//! [`AllocatorHistory::mismatches`] and skipped; the replay goes on.

use std::collections::BTreeMap;

use crate::model::snapshot::{Action, BlockState, DeviceTrace, Snapshot};

use super::lifetimes::{AddrMap, Lifetimes, Semantics, NEVER};

pub mod fragmentation;
pub mod oom;

/// The default checkpoint interval, entries (§7.10).
pub const DEFAULT_K: usize = 10_000;
/// `record` of a block no lifetime record explains.
pub const NO_RECORD: u32 = u32::MAX;

/// Rows of checkpoints allowed for a trace of `n` entries: half a row per entry, at least 2^16.
pub fn row_budget(n: usize) -> usize {
    (n / 2).max(1 << 16)
}

/// State of a block the allocator has handed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Held {
    /// `active_allocated`: owned by a tensor.
    Allocated,
    /// `active_pending_free`: freed, waiting on other streams' events.
    PendingFree,
}

/// One handed-out block (inactive space is what lies between them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveBlock {
    /// Block size, bytes (rounded; see `exact`).
    pub size: u64,
    /// Requested bytes.
    pub requested: u64,
    /// Allocated or pending free.
    pub held: Held,
    /// Lifetime record of the allocation ([`NO_RECORD`] when none explains it).
    pub record: u32,
    /// Raw stream handle.
    pub stream: i64,
    /// True when `size` is the allocator's own (an end-state block); false when it is the
    /// request rounded up to 512 bytes (a block re-created by undoing a free).
    pub exact: bool,
}

/// One segment (a driver allocation or a mapped expandable range).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegRange {
    /// Bytes.
    pub size: u64,
    /// Raw stream handle.
    pub stream: i64,
    /// `segment_pool_id`; None when the segment is not in the end state (re-created from a
    /// `segment_free`/`segment_unmap`, whose entry does not say).
    pub pool: Option<(i64, i64)>,
    /// Expandable segment.
    pub expandable: bool,
}

/// The state at one moment: segments and handed-out blocks, each keyed by address.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct State {
    /// Segments by base address.
    pub segments: BTreeMap<u64, SegRange>,
    /// Allocated and pending-free blocks by address.
    pub blocks: BTreeMap<u64, LiveBlock>,
}

/// A block of the segment map at one moment, inactive space included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockAt {
    /// Address.
    pub address: u64,
    /// Bytes.
    pub size: u64,
    /// Requested bytes (0 for inactive space).
    pub requested: u64,
    /// `active_allocated`, `active_pending_free` or `inactive`.
    pub state: BlockState,
    /// Lifetime record ([`NO_RECORD`] for inactive space or an unexplained block).
    pub record: u32,
    /// Raw stream handle (the segment's for inactive space).
    pub stream: i64,
    /// See [`LiveBlock::exact`] (true for inactive space).
    pub exact: bool,
}

/// One segment of the segment map, its blocks in address order covering it exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct SegmentAt {
    /// Base address.
    pub address: u64,
    /// Attributes.
    pub seg: SegRange,
    /// Blocks, address order, contiguous from `address` to `address + seg.size`.
    pub blocks: Vec<BlockAt>,
}

/// The segment map of one device after one entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SegmentMap {
    /// Segments in address order.
    pub segments: Vec<SegmentAt>,
    /// Handed-out blocks that lie in no segment (an inconsistent trace), address order.
    pub orphans: Vec<BlockAt>,
}

impl SegmentMap {
    /// Σ segment sizes (reserved), bytes.
    pub fn reserved(&self) -> u64 {
        self.segments.iter().map(|s| s.seg.size).sum()
    }
    /// Σ sizes of blocks in `state`, bytes.
    pub fn bytes_in(&self, state: BlockState) -> u64 {
        self.segments
            .iter()
            .flat_map(|s| &s.blocks)
            .filter(|b| b.state == state)
            .map(|b| b.size)
            .sum()
    }
}

impl State {
    /// The end state of device `device` of `snap`, with blocks linked to the records of `lt`
    /// that are live at the end.
    pub fn at_end(snap: &Snapshot, device: u32, lt: &Lifetimes) -> State {
        let mut live_rec: AddrMap<u32> = AddrMap::default();
        for r in 0..lt.len() {
            if lt.end(r, Semantics::Active) >= lt.n_entries as i64 {
                live_rec.insert(lt.addr[r], r as u32);
            }
        }
        let mut st = State::default();
        for s in snap.segments.iter().filter(|s| s.device == device as i64) {
            st.segments.insert(
                s.address,
                SegRange {
                    size: s.total_size,
                    stream: s.stream,
                    pool: Some(s.pool_id),
                    expandable: s.is_expandable,
                },
            );
            for b in snap.blocks_of(s) {
                let held = match b.state {
                    BlockState::ActiveAllocated => Held::Allocated,
                    BlockState::ActivePendingFree => Held::PendingFree,
                    _ => continue,
                };
                st.blocks.insert(
                    b.address,
                    LiveBlock {
                        size: b.size,
                        requested: b.requested_size,
                        held,
                        record: live_rec.get(&b.address).copied().unwrap_or(NO_RECORD),
                        stream: s.stream,
                        exact: true,
                    },
                );
            }
        }
        st
    }

    /// Undoes entry `i` of `dev` (state after `i` → state before `i`); `rec_of_done` maps a
    /// `free_completed` entry index to its record. Returns false when the entry contradicts
    /// the state (it is then skipped).
    pub fn undo(&mut self, dev: &DeviceTrace, i: usize, rec_of_done: &[(u32, u32)]) -> bool {
        let t = &dev.entries;
        let (addr, size) = (t.addr()[i], t.size()[i]);
        let stream = || {
            t.stream_values()
                .get(t.stream()[i] as usize)
                .copied()
                .unwrap_or(0)
        };
        match t.action()[i] {
            Action::Alloc => self.blocks.remove(&addr).is_some(),
            Action::FreeRequested => match self.blocks.get_mut(&addr) {
                Some(b) if b.held == Held::PendingFree => {
                    b.held = Held::Allocated;
                    true
                }
                _ => false,
            },
            Action::FreeCompleted => {
                let record = rec_of_done
                    .binary_search_by_key(&(i as u32), |p| p.0)
                    .map_or(NO_RECORD, |k| rec_of_done[k].1);
                let fresh = LiveBlock {
                    size: round_block(size),
                    requested: size,
                    held: Held::PendingFree,
                    record,
                    stream: stream(),
                    exact: false,
                };
                self.blocks.insert(addr, fresh).is_none()
            }
            Action::SegmentAlloc | Action::SegmentMap => self.remove_range(addr, size),
            Action::SegmentFree => {
                let seg = SegRange {
                    size,
                    stream: stream(),
                    pool: None,
                    expandable: false,
                };
                self.segments.insert(addr, seg).is_none()
            }
            Action::SegmentUnmap => self.add_range(addr, size, stream()),
            _ => true,
        }
    }

    /// Removes `[addr, addr + size)` from the segment holding `addr`.
    fn remove_range(&mut self, addr: u64, size: u64) -> bool {
        let Some((&start, &seg)) = self.segments.range(..=addr).next_back() else {
            return false;
        };
        let end = start.saturating_add(seg.size);
        if addr >= end {
            return false;
        }
        let cut_end = addr.saturating_add(size).min(end);
        self.segments.remove(&start);
        if addr > start {
            self.segments.insert(
                start,
                SegRange {
                    size: addr - start,
                    ..seg
                },
            );
        }
        if cut_end < end {
            self.segments.insert(
                cut_end,
                SegRange {
                    size: end - cut_end,
                    ..seg
                },
            );
        }
        addr.saturating_add(size) <= end
    }

    /// Re-inserts an unmapped expandable range, merged with adjacent expandable ranges of the
    /// same stream.
    fn add_range(&mut self, addr: u64, size: u64, stream: i64) -> bool {
        let mut start = addr;
        let mut end = addr.saturating_add(size);
        let mut pool = None;
        if let Some((&s, &seg)) = self.segments.range(..addr).next_back() {
            let e = s.saturating_add(seg.size);
            if e > addr {
                return false;
            }
            if e == addr && seg.expandable && seg.stream == stream {
                self.segments.remove(&s);
                start = s;
                pool = seg.pool;
            }
        }
        if let Some((&s, &seg)) = self.segments.range(addr..).next() {
            if s < end {
                return false;
            }
            if s == end && seg.expandable && seg.stream == stream {
                self.segments.remove(&s);
                end = s.saturating_add(seg.size);
                pool = pool.or(seg.pool);
            }
        }
        self.segments.insert(
            start,
            SegRange {
                size: end - start,
                stream,
                pool,
                expandable: true,
            },
        );
        true
    }

    /// The segment map: segments in address order with their blocks and the inactive space
    /// between them.
    pub fn segment_map(&self) -> SegmentMap {
        let mut map = SegmentMap::default();
        let mut blocks = self.blocks.iter().peekable();
        for (&start, &seg) in &self.segments {
            let end = start.saturating_add(seg.size);
            while let Some((&a, &b)) = blocks.peek() {
                if a >= start {
                    break;
                }
                map.orphans.push(held_at(a, &b));
                blocks.next();
            }
            let mut out = Vec::new();
            let mut cursor = start;
            while let Some((&a, &b)) = blocks.peek() {
                if a >= end {
                    break;
                }
                blocks.next();
                let b = &b;
                if a < cursor {
                    map.orphans.push(held_at(a, b));
                    continue;
                }
                if a > cursor {
                    out.push(free_at(cursor, a - cursor, seg.stream));
                }
                let size = b.size.min(end - a);
                out.push(BlockAt {
                    size,
                    ..held_at(a, b)
                });
                cursor = a + size;
            }
            if cursor < end {
                out.push(free_at(cursor, end - cursor, seg.stream));
            }
            map.segments.push(SegmentAt {
                address: start,
                seg,
                blocks: out,
            });
        }
        map.orphans.extend(blocks.map(|(&a, b)| held_at(a, b)));
        map
    }
}

fn held_at(address: u64, b: &LiveBlock) -> BlockAt {
    BlockAt {
        address,
        size: b.size,
        requested: b.requested,
        state: match b.held {
            Held::Allocated => BlockState::ActiveAllocated,
            Held::PendingFree => BlockState::ActivePendingFree,
        },
        record: b.record,
        stream: b.stream,
        exact: b.exact,
    }
}

fn free_at(address: u64, size: u64, stream: i64) -> BlockAt {
    BlockAt {
        address,
        size,
        requested: 0,
        state: BlockState::Inactive,
        record: NO_RECORD,
        stream,
        exact: true,
    }
}

/// A requested size rounded up to the allocator's 512-byte minimum block granularity.
pub fn round_block(size: u64) -> u64 {
    size.max(1).checked_next_multiple_of(512).unwrap_or(size)
}

/// A checkpoint: the state after entry `index`, stored as sorted rows.
#[derive(Clone, Debug)]
struct Checkpoint {
    index: usize,
    segments: Vec<(u64, SegRange)>,
    blocks: Vec<(u64, LiveBlock)>,
}

impl Checkpoint {
    fn of(index: usize, st: &State) -> Self {
        Checkpoint {
            index,
            segments: st.segments.iter().map(|(&a, &s)| (a, s)).collect(),
            blocks: st.blocks.iter().map(|(&a, &b)| (a, b)).collect(),
        }
    }
    fn rows(&self) -> usize {
        self.segments.len() + self.blocks.len()
    }
    fn state(&self) -> State {
        State {
            segments: self.segments.iter().copied().collect(),
            blocks: self.blocks.iter().copied().collect(),
        }
    }
}

/// The allocator history of one device: checkpoints of the backward walk (see the module doc).
#[derive(Clone, Debug)]
pub struct AllocatorHistory {
    n: usize,
    k: usize,
    /// Checkpoints in descending entry index; checkpoint `j` holds the state after entry
    /// `n − 1 − j·k`.
    checkpoints: Vec<Checkpoint>,
    /// The state before the first entry.
    before: Checkpoint,
    rec_of_done: Vec<(u32, u32)>,
    /// Entries that contradicted the replayed state and were skipped.
    pub mismatches: u64,
}

/// `(free_completed entry index, record)` sorted by index.
fn done_index(lt: &Lifetimes) -> Vec<(u32, u32)> {
    let mut v: Vec<(u32, u32)> = (0..lt.len())
        .filter(|&r| lt.done_free_idx[r] != NEVER)
        .map(|r| (lt.done_free_idx[r], r as u32))
        .collect();
    v.sort_unstable();
    v
}

impl AllocatorHistory {
    /// Builds the history of device `dev` with checkpoints every `k` entries (`k` ≥ 1; it
    /// doubles while the checkpoints exceed [`row_budget`]).
    ///
    /// Cost: one backward walk, O(n log b) time for n entries and b live blocks.
    pub fn build(snap: &Snapshot, dev: &DeviceTrace, lt: &Lifetimes, k: usize) -> Self {
        let n = dev.entries.len();
        let rec_of_done = done_index(lt);
        let mut st = State::at_end(snap, dev.device, lt);
        let mut k = k.max(1);
        let budget = row_budget(n);
        let mut checkpoints: Vec<Checkpoint> = Vec::new();
        let mut rows = 0usize;
        let mut mismatches = 0u64;
        for i in (0..n).rev() {
            if (n - 1 - i) % k == 0 {
                let c = Checkpoint::of(i, &st);
                rows += c.rows();
                checkpoints.push(c);
                while rows > budget && checkpoints.len() > 1 {
                    k *= 2;
                    checkpoints = checkpoints.into_iter().step_by(2).collect();
                    rows = checkpoints.iter().map(Checkpoint::rows).sum();
                }
            }
            if !st.undo(dev, i, &rec_of_done) {
                mismatches += 1;
            }
        }
        // Invariant: `checkpoints[j].index == n − 1 − j·k` (a doubling keeps the even
        // positions, i.e. the multiples of the new k).
        AllocatorHistory {
            n,
            k,
            before: Checkpoint::of(usize::MAX, &st),
            checkpoints,
            rec_of_done,
            mismatches,
        }
    }

    /// Entries of the trace.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True for a trace without entries (the state is the end state).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The checkpoint interval in use, entries.
    pub fn interval(&self) -> usize {
        self.k
    }

    /// Rows held by the checkpoints (segments + blocks).
    pub fn rows(&self) -> usize {
        self.checkpoints.iter().map(Checkpoint::rows).sum::<usize>() + self.before.rows()
    }

    /// The state after entry `index` (`None`: before the first entry); an index past the end
    /// gives the end state. Undoes fewer than [`AllocatorHistory::interval`] entries.
    pub fn state_after(&self, dev: &DeviceTrace, index: Option<usize>) -> State {
        let Some(i) = index else {
            return self.before.state();
        };
        if self.n == 0 {
            return self.before.state();
        }
        let i = i.min(self.n - 1);
        let j = (self.n - 1 - i) / self.k;
        let c = &self.checkpoints[j.min(self.checkpoints.len() - 1)];
        let mut st = c.state();
        for e in (i + 1..=c.index).rev() {
            st.undo(dev, e, &self.rec_of_done);
        }
        st
    }
}
