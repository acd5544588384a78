//! Allocation lifetimes of one device (torch-snapshot.md §7.2), built in one forward pass.
//!
//! One record per block lifetime: `alloc` opens it (keyed by address, a new
//! *version* of that address), `free_requested` marks it, `free_completed`
//! closes it. Frees without a live record and `active_allocated` end blocks
//! that no in-trace allocation explains become **PRE** records: alive since
//! before the recording window (§4 item 4). Every curve, live set, leak list
//! and tooltip is derived from this table.
//!
//! Indices are entry indices of the device trace; a record is live *after*
//! event `i` iff `start ≤ i < end` (see [`Lifetimes::start`], [`Lifetimes::end`]).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::model::snapshot::{Action, BlockState, DeviceTrace, Snapshot, StackId, NO_STACK};

/// A fast hasher for block addresses (multiply-shift; addresses are not attacker-chosen keys
/// worth SipHash, and a hash map keyed by address is the hot path of every replay).
#[derive(Default, Clone, Copy)]
pub struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        // The product's high bits depend on all input bits; fold them down, since block
        // addresses are multiples of 512 and the table indexes by the low bits.
        self.0 ^ (self.0 >> 29) ^ (self.0 >> 47)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// A map keyed by address.
pub type AddrMap<V> = HashMap<u64, V, BuildHasherDefault<AddrHasher>>;

/// `alloc_idx` of a record alive before the window.
pub const PRE: u32 = u32::MAX;
/// Free index of a record never freed in the window.
pub const NEVER: u32 = u32::MAX;
/// `req_free_idx` of a PRE record whose `free_requested` came before the window: an
/// `active_pending_free` end block (torch-snapshot.md §3.3) no in-trace record explains. It is
/// active (counted until its `free_completed`) but not allocated anywhere in the window.
pub const BEFORE: u32 = u32::MAX - 1;

/// Where a record's stack comes from (§7.2 `stack_kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StackKind {
    /// The alloc event's stack.
    Alloc,
    /// The free event's stack (alloc not recorded).
    FreeSite,
    /// The end-state block's stack.
    Block,
    /// No stack.
    None,
}

/// Which free ends a record's life: `free_requested` (allocated) or `free_completed` (active).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Semantics {
    /// `memory_allocated()` semantics: the first of free_requested / free_completed.
    Allocated,
    /// MemoryViz / active semantics: free_completed only.
    Active,
}

/// Record flag: closed because its address was allocated again (a lost free).
pub const FLAG_LOST_FREE: u8 = 1;
/// Record flag: torch_npu `workspace_snapshot` workspace.
pub const FLAG_NPU_WORKSPACE: u8 = 2;

/// The lifetime table of one device (columns, one row per record).
#[derive(Clone, Debug, Default)]
pub struct Lifetimes {
    /// Entries in the device trace.
    pub n_entries: u32,
    /// Alloc index, or [`PRE`].
    pub alloc_idx: Vec<u32>,
    /// `free_requested` index, or [`NEVER`].
    pub req_free_idx: Vec<u32>,
    /// `free_completed` index, or [`NEVER`].
    pub done_free_idx: Vec<u32>,
    /// Requested bytes.
    pub size: Vec<u64>,
    /// Stack (interned), or [`NO_STACK`].
    pub stack: Vec<StackId>,
    /// Source of the stack.
    pub stack_kind: Vec<StackKind>,
    /// Block address.
    pub addr: Vec<u64>,
    /// Address version (bumped at each free_completed of that address).
    pub version: Vec<u32>,
    /// Interned stream index (of the device's entry table; end blocks map their segment's stream).
    pub stream: Vec<u32>,
    /// [`FLAG_LOST_FREE`], [`FLAG_NPU_WORKSPACE`].
    pub flags: Vec<u8>,
    /// `(record, rounded block size)` of the PRE records made from end blocks (sparse).
    pub block_size: Vec<(u32, u64)>,
    /// `free_completed` entries without a live record (ring-buffer truncation signal, §4 item 5).
    pub unmatched_free_completed: u64,
    /// `free_requested` entries without a live record.
    pub unmatched_free_requested: u64,
    /// Allocations of an address that was still live (the old record was closed as lost).
    pub lost_frees: u64,
}

impl Lifetimes {
    /// Number of records.
    pub fn len(&self) -> usize {
        self.size.len()
    }
    /// True when there is no record.
    pub fn is_empty(&self) -> bool {
        self.size.is_empty()
    }
    /// First index the record is live at (−1 for PRE).
    pub fn start(&self, r: usize) -> i64 {
        match self.alloc_idx[r] {
            PRE => -1,
            i => i as i64,
        }
    }
    /// First index the record is no longer live at, under `sem` (`n_entries` if never freed;
    /// −1 under [`Semantics::Allocated`] when the free was requested before the window, see
    /// [`BEFORE`]: such a record is never allocated inside it).
    pub fn end(&self, r: usize, sem: Semantics) -> i64 {
        let done = self.done_free_idx[r];
        let e = match sem {
            Semantics::Active => done,
            Semantics::Allocated if self.req_free_idx[r] == BEFORE => return -1,
            Semantics::Allocated => self.req_free_idx[r].min(done),
        };
        if e == NEVER {
            self.n_entries as i64
        } else {
            e as i64
        }
    }
    /// True for PRE records.
    pub fn is_pre(&self, r: usize) -> bool {
        self.alloc_idx[r] == PRE
    }
    /// How many records are PRE records (§7.2: allocated before recording).
    pub fn pre_count(&self) -> usize {
        self.alloc_idx.iter().filter(|&&a| a == PRE).count()
    }
    fn reserve(&mut self, n: usize) {
        self.alloc_idx.reserve_exact(n);
        self.req_free_idx.reserve_exact(n);
        self.done_free_idx.reserve_exact(n);
        self.size.reserve_exact(n);
        self.stack.reserve_exact(n);
        self.stack_kind.reserve_exact(n);
        self.addr.reserve_exact(n);
        self.version.reserve_exact(n);
        self.stream.reserve_exact(n);
        self.flags.reserve_exact(n);
    }
    fn push(
        &mut self,
        alloc: u32,
        size: u64,
        stack: StackId,
        kind: StackKind,
        addr: u64,
        version: u32,
        stream: u32,
    ) -> usize {
        self.alloc_idx.push(alloc);
        self.req_free_idx.push(NEVER);
        self.done_free_idx.push(NEVER);
        self.size.push(size);
        self.stack.push(stack);
        self.stack_kind.push(kind);
        self.addr.push(addr);
        self.version.push(version);
        self.stream.push(stream);
        self.flags.push(0);
        self.size.len() - 1
    }
}

/// Builds the lifetime table of device `dev` of `snap` (§7.2).
///
/// Cost: O(entries + blocks) time; memory O(records + live addresses).
pub fn build(snap: &Snapshot, dev: &DeviceTrace) -> Lifetimes {
    let t = &dev.entries;
    let n = t.len();
    let mut lt = Lifetimes {
        n_entries: n as u32,
        ..Default::default()
    };
    let mut live: AddrMap<usize> = AddrMap::default();
    let mut pending_req: AddrMap<u32> = AddrMap::default();
    let mut versions: AddrMap<u32> = AddrMap::default();
    let n_alloc = t.action().iter().filter(|a| **a == Action::Alloc).count();
    lt.reserve(n_alloc + lt_extra(snap, dev));
    let (actions, addrs, sizes, stacks, streams) =
        (t.action(), t.addr(), t.size(), t.stack(), t.stream());
    for i in 0..n {
        let (a, addr) = (actions[i], addrs[i]);
        match a {
            Action::Alloc => {
                if let Some(old) = live.remove(&addr) {
                    lt.lost_frees += 1;
                    lt.flags[old] |= FLAG_LOST_FREE;
                    lt.done_free_idx[old] = i as u32;
                    if lt.req_free_idx[old] == NEVER {
                        lt.req_free_idx[old] = i as u32;
                    }
                }
                let v = versions.get(&addr).copied().unwrap_or(0);
                let workspace = i >= 2 && actions[i - 2] == Action::WorkspaceSnapshot;
                let kind = if stacks[i] == NO_STACK {
                    StackKind::None
                } else {
                    StackKind::Alloc
                };
                let r = lt.push(
                    if workspace { PRE } else { i as u32 },
                    sizes[i],
                    stacks[i],
                    kind,
                    addr,
                    v,
                    streams[i],
                );
                if workspace {
                    lt.flags[r] |= FLAG_NPU_WORKSPACE;
                }
                live.insert(addr, r);
            }
            Action::FreeRequested => match live.get(&addr) {
                Some(&r) => {
                    if lt.req_free_idx[r] == NEVER {
                        lt.req_free_idx[r] = i as u32;
                    }
                }
                None => {
                    lt.unmatched_free_requested += 1;
                    pending_req.insert(addr, i as u32);
                }
            },
            Action::FreeCompleted => {
                let r = match live.remove(&addr) {
                    Some(r) => r,
                    None => {
                        lt.unmatched_free_completed += 1;
                        let v = versions.get(&addr).copied().unwrap_or(0);
                        let kind = if stacks[i] == NO_STACK {
                            StackKind::None
                        } else {
                            StackKind::FreeSite
                        };
                        let r = lt.push(PRE, sizes[i], stacks[i], kind, addr, v, streams[i]);
                        if let Some(q) = pending_req.remove(&addr) {
                            lt.req_free_idx[r] = q;
                        }
                        r
                    }
                };
                lt.done_free_idx[r] = i as u32;
                *versions.entry(addr).or_insert(0) += 1;
            }
            _ => {}
        }
    }
    // End blocks that no live in-trace record explains: PRE records over the whole window.
    // `active_pending_free` blocks are active too (§3.2 `active_size`, §7.3 consistency
    // check): their free was requested before the window ([`BEFORE`]), so they count as
    // active but never as allocated. This is the one place that rule lives.
    for seg in snap
        .segments
        .iter()
        .filter(|s| s.device == dev.device as i64)
    {
        let stream = t
            .stream_values()
            .iter()
            .position(|&v| v == seg.stream)
            .unwrap_or(0) as u32;
        for b in snap.blocks_of(seg) {
            let pending = b.state == BlockState::ActivePendingFree;
            if !(pending || b.state == BlockState::ActiveAllocated) || live.contains_key(&b.address)
            {
                continue;
            }
            let (stack, kind) = match b.stack {
                Some(s) => (s, StackKind::Block),
                None => (NO_STACK, StackKind::None),
            };
            let v = versions.get(&b.address).copied().unwrap_or(0);
            let r = lt.push(PRE, b.requested_size, stack, kind, b.address, v, stream);
            if pending {
                lt.req_free_idx[r] = BEFORE;
            }
            lt.block_size.push((r as u32, b.size));
        }
    }
    lt
}

/// Upper bound of PRE records: unmatched frees + end blocks of the device.
fn lt_extra(snap: &Snapshot, dev: &DeviceTrace) -> usize {
    let blocks: usize = snap
        .segments
        .iter()
        .filter(|s| s.device == dev.device as i64)
        .map(|s| snap.blocks_of(s).len())
        .sum();
    blocks + 16
}

#[cfg(test)]
mod tests;
