//! The two reference quantities of `fixtures/torch_snapshots/SOURCES.md` /
//! torch-snapshot.md §8: `in_window_replay` and `memoryviz_like`, per device.
//!
//! These follow the golden-value definitions *exactly* (they are regression
//! anchors, not the §7.3 curves): `in_window_replay` subtracts only at
//! `free_completed` of an address allocated inside the trace; `memoryviz_like`
//! reproduces MemoryViz's Active Memory Timeline element stacking without
//! summarisation.

use crate::model::snapshot::{Action, BlockState, DeviceTrace, Snapshot};

use super::lifetimes::AddrMap;

/// In-window replay (torch-snapshot.md §8): bytes of in-trace allocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InWindowReplay {
    /// Maximum running total in bytes (0 if never positive).
    pub peak_bytes: u64,
    /// 0-based index of the first entry reaching the peak, −1 if none.
    pub peak_event_index: i64,
    /// Running total after the last entry, bytes.
    pub end_bytes: u64,
    /// In-trace allocations still live at the end.
    pub live_at_end: u64,
    /// `free_completed` entries whose address had no live in-trace allocation.
    pub unmatched_free_completed: u64,
}

/// MemoryViz-like totals (torch-snapshot.md §8, §6.1 `process_alloc_data`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryVizLike {
    /// Total of the initially allocated elements, bytes.
    pub baseline_bytes: u64,
    /// Maximum total (including the baseline), bytes.
    pub max_bytes: u64,
    /// Total after the last action, bytes.
    pub end_bytes: u64,
    /// Number of timeline elements.
    pub elements: u64,
    /// Elements alive before the trace (unmatched frees + end blocks not live in-trace).
    pub initially_allocated: u64,
}

/// Computes [`InWindowReplay`] for one device trace. O(n) time, O(live) memory.
pub fn in_window_replay(dev: &DeviceTrace) -> InWindowReplay {
    let t = &dev.entries;
    let mut live: AddrMap<u64> = AddrMap::default();
    let (mut total, mut peak, mut peak_idx, mut unmatched) = (0i128, 0i128, -1i64, 0u64);
    for (i, ((&a, &addr), &size)) in t.action().iter().zip(t.addr()).zip(t.size()).enumerate() {
        match a {
            Action::Alloc => {
                live.insert(addr, size);
                total += size as i128;
            }
            Action::FreeCompleted => match live.remove(&addr) {
                Some(s) => total -= s as i128,
                None => unmatched += 1,
            },
            _ => {}
        }
        if total > peak {
            peak = total;
            peak_idx = i as i64;
        }
    }
    InWindowReplay {
        peak_bytes: peak.max(0) as u64,
        peak_event_index: peak_idx,
        end_bytes: total.max(0) as u64,
        live_at_end: live.len() as u64,
        unmatched_free_completed: unmatched,
    }
}

/// Computes [`MemoryVizLike`] for device slot `dev` of `snap`. O(n + blocks).
pub fn memoryviz_like(snap: &Snapshot, dev: &DeviceTrace) -> MemoryVizLike {
    let t = &dev.entries;
    let n = t.len();
    // Element sizes; `actions` lists element indices in order.
    let mut sizes: Vec<u64> = Vec::new();
    let mut initially: Vec<usize> = Vec::new();
    let mut actions: Vec<usize> = Vec::new();
    let mut addr_to_alloc: AddrMap<usize> = AddrMap::default();
    let mut i = 0;
    while i < n {
        let (a, addr, size) = (t.action()[i], t.addr()[i], t.size()[i]);
        // Merge free_requested + immediately following free_completed of the same address.
        let is_free = match a {
            Action::FreeRequested
                if i + 1 < n
                    && t.action()[i + 1] == Action::FreeCompleted
                    && t.addr()[i + 1] == addr =>
            {
                i += 1;
                true
            }
            Action::FreeCompleted => true,
            _ => false,
        };
        if a == Action::Alloc {
            sizes.push(size);
            addr_to_alloc.insert(addr, sizes.len() - 1);
            actions.push(sizes.len() - 1);
        } else if is_free {
            match addr_to_alloc.remove(&addr) {
                Some(e) => actions.push(e),
                None => {
                    sizes.push(size);
                    initially.push(sizes.len() - 1);
                    actions.push(sizes.len() - 1);
                }
            }
        }
        i += 1;
    }
    for seg in snap
        .segments
        .iter()
        .filter(|s| s.device == dev.device as i64)
    {
        for b in snap.blocks_of(seg) {
            if b.state == BlockState::ActiveAllocated && !addr_to_alloc.contains_key(&b.address) {
                sizes.push(b.requested_size);
                initially.push(sizes.len() - 1);
            }
        }
    }
    initially.reverse();
    let n_initial = initially.len() as u64;
    if actions.is_empty() {
        if let Some(e) = initially.pop() {
            actions.push(e);
        }
    }
    let mut alive = vec![false; sizes.len()];
    let mut total: i128 = 0;
    for &e in &initially {
        alive[e] = true;
        total += sizes[e] as i128;
    }
    let baseline = total;
    let mut max = total;
    for &e in &actions {
        if alive[e] {
            alive[e] = false;
            total -= sizes[e] as i128;
        } else {
            alive[e] = true;
            total += sizes[e] as i128;
        }
        max = max.max(total);
    }
    MemoryVizLike {
        baseline_bytes: baseline.max(0) as u64,
        max_bytes: max.max(0) as u64,
        end_bytes: total.max(0) as u64,
        elements: sizes.len() as u64,
        initially_allocated: n_initial,
    }
}

/// The end-state summary of `segments` (torch-snapshot.md §8, EXPECTED.json `segments`),
/// over every device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SegmentsSummary {
    /// Segments.
    pub count: usize,
    /// Devices owning a segment, ascending.
    pub devices: Vec<i64>,
    /// Σ `total_size`, bytes.
    pub total_size_sum: u64,
    /// Σ `allocated_size`, bytes.
    pub allocated_size_sum: u64,
    /// Blocks per state name, by name.
    pub block_states: std::collections::BTreeMap<String, u64>,
    /// Blocks carrying a legacy `history`.
    pub legacy_history_blocks: u64,
    /// Expandable segments.
    pub expandable: usize,
    /// Segments in a private pool (`segment_pool_id` ≠ (0, 0)).
    pub private_pools: usize,
}

/// The end-state summary of `snap` (§8).
pub fn segments_summary(snap: &Snapshot) -> SegmentsSummary {
    let mut block_states = std::collections::BTreeMap::new();
    for b in &snap.blocks {
        *block_states
            .entry(b.state.name(&snap.pools.strings))
            .or_default() += 1;
    }
    let mut devices: Vec<i64> = snap.segments.iter().map(|s| s.device).collect();
    devices.sort_unstable();
    devices.dedup();
    SegmentsSummary {
        count: snap.segments.len(),
        devices,
        total_size_sum: snap.segments.iter().map(|s| s.total_size).sum(),
        allocated_size_sum: snap.segments.iter().map(|s| s.allocated_size).sum(),
        block_states,
        legacy_history_blocks: snap.blocks.iter().filter(|b| b.has_history).count() as u64,
        expandable: snap.segments.iter().filter(|s| s.is_expandable).count(),
        private_pools: snap.segments.iter().filter(|s| s.pool_id != (0, 0)).count(),
    }
}
