//! Leaks, delayed frees and data-quality checks of one device (torch-snapshot.md §4, §7.3, §7.9).

use crate::model::snapshot::{BlockState, DeviceTrace, Snapshot, NO_STACK};

use super::attribution::{contributors, Attributor, Contributor};
use super::curves::Curves;
use super::lifetimes::{Lifetimes, NEVER};

/// A data-quality finding (the engine turns it into a `Problem` with the file position).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// Stable code, e.g. `SNAP-TRUNCATED`.
    pub code: &'static str,
    /// Human message.
    pub message: String,
}

/// Records allocated in the window and never freed, grouped by site, excluding
/// allocations in the last 1% of the window (§7.9 item 4).
pub fn leaks(lt: &Lifetimes, attr: &mut Attributor<'_>) -> Vec<Contributor> {
    let n = lt.n_entries as usize;
    let cutoff = n - n / 100;
    let recs: Vec<u32> = (0..lt.len())
        .filter(|&r| !lt.is_pre(r) && lt.done_free_idx[r] == NEVER && lt.req_free_idx[r] == NEVER)
        .filter(|&r| (lt.alloc_idx[r] as usize) < cutoff)
        .map(|r| r as u32)
        .collect();
    contributors(lt, &recs, attr, 0)
}

/// `free_requested → free_completed` gaps longer than one entry (cross-stream / `record_stream`).
#[derive(Clone, Debug, PartialEq)]
pub struct DelayedFrees {
    /// Groups by site, with the largest gap of each.
    pub by_site: Vec<(Contributor, u32, Option<i64>)>,
    /// Records with a delayed free.
    pub records: u64,
}

/// Finds delayed frees: records whose `free_completed` comes more than `min_gap_entries` after
/// their `free_requested`. Gaps are reported in entries and, with `time_us`, in µs.
pub fn delayed_frees(
    dev: &DeviceTrace,
    lt: &Lifetimes,
    attr: &mut Attributor<'_>,
    min_gap_entries: u32,
) -> DelayedFrees {
    let t = &dev.entries;
    let mut recs = Vec::new();
    for r in 0..lt.len() {
        let (q, d) = (lt.req_free_idx[r], lt.done_free_idx[r]);
        if q != NEVER && d != NEVER && d > q && d - q > min_gap_entries {
            recs.push(r as u32);
        }
    }
    let groups = contributors(lt, &recs, attr, 0);
    let by_site = groups
        .into_iter()
        .map(|g| {
            let mut gap = 0u32;
            let mut gap_us: Option<i64> = None;
            for &r in &recs {
                let r = r as usize;
                if attr.site(lt.stack[r]).site != g.site {
                    continue;
                }
                let (q, d) = (lt.req_free_idx[r], lt.done_free_idx[r]);
                gap = gap.max(d - q);
                if let (Some(a), Some(b)) = (t.time_us(q as usize), t.time_us(d as usize)) {
                    gap_us = Some(gap_us.unwrap_or(0).max(b - a));
                }
            }
            (g, gap, gap_us)
        })
        .collect();
    DelayedFrees {
        by_site,
        records: recs.len() as u64,
    }
}

/// Data-quality checks of §4 and §7.3 (never errors).
pub fn checks(snap: &Snapshot, dev: &DeviceTrace, lt: &Lifetimes, curves: &Curves) -> Vec<Note> {
    let mut notes = Vec::new();
    let d = dev.device;
    let segs: Vec<_> = snap
        .segments
        .iter()
        .filter(|s| s.device == d as i64)
        .collect();
    let pending: Vec<u64> = segs
        .iter()
        .flat_map(|s| snap.blocks_of(s))
        .filter(|b| b.state == BlockState::ActivePendingFree)
        .map(|b| b.requested_size)
        .collect();
    if !pending.is_empty() {
        notes.push(Note {
            code: "SNAP-PENDING-FREE",
            message: format!(
                "device {d}: {} block(s) holding {} requested are active_pending_free at the end: freed by \
                 their tensors but waiting on other streams' events (record_stream); they count as active, not as \
                 allocated.",
                pending.len(),
                crate::base::format::bytes_exact(pending.iter().sum::<u64>().min(i64::MAX as u64) as i64)
            ),
        });
    }
    if dev.entries.is_empty() {
        if !segs.is_empty() {
            notes.push(Note {
                code: "SNAP-NO-HISTORY",
                message: format!(
                    "device {d}: The snapshot contains allocator state but no history. Record with \
                     torch.cuda.memory._record_memory_history() before dumping to get a timeline."
                ),
            });
        }
        return notes;
    }
    if lt.unmatched_free_completed > 0 {
        notes.push(Note {
            code: "SNAP-TRUNCATED",
            message: format!(
                "device {d}: {} free_completed entries free addresses never allocated in the trace: the start \
                 of the recording is missing (ring buffer `max_entries`, or recording started late). Memory alive \
                 before the window is reconstructed from those frees and from the end state.",
                lt.unmatched_free_completed
            ),
        });
    }
    if lt.lost_frees > 0 {
        notes.push(Note {
            code: "SNAP-LOST-FREE",
            message: format!(
                "device {d}: {} allocations reuse an address that was still live; the older allocation is closed there.",
                lt.lost_frees
            ),
        });
    }
    let no_frames = dev
        .entries
        .stack()
        .iter()
        .filter(|s| **s == NO_STACK)
        .count();
    if no_frames > 0 {
        notes.push(Note {
            code: "SNAP-NO-FRAMES",
            message: format!(
                "device {d}: {no_frames} of {} trace entries have no `frames` key; their memory is attributed to <no stack>.",
                dev.entries.len()
            ),
        });
    }
    let end_active = curves
        .active
        .last()
        .copied()
        .unwrap_or(curves.baseline_active);
    let blocks_active: u64 = segs
        .iter()
        .flat_map(|s| snap.blocks_of(s))
        .filter(|b| {
            matches!(
                b.state,
                BlockState::ActiveAllocated | BlockState::ActivePendingFree
            )
        })
        .map(|b| b.requested_size)
        .sum();
    if end_active != blocks_active as i64 && !segs.is_empty() {
        notes.push(Note {
            code: "SNAP-CHECK-ACTIVE",
            message: format!(
                "device {d}: the replayed active memory at the end ({end_active} bytes) differs from the end state's \
                 active blocks ({blocks_active} bytes requested) by {} bytes.",
                end_active - blocks_active as i64
            ),
        });
    }
    if curves.baseline_reserved < 0 || curves.reserved.iter().any(|&v| v < 0) {
        notes.push(Note {
            code: "SNAP-CHECK-RESERVED",
            message: format!(
                "device {d}: segment events do not add up with the end-state segments (reserved memory would be negative)."
            ),
        });
    }
    if curves
        .allocated
        .iter()
        .chain(&curves.active)
        .any(|&v| v < 0)
    {
        notes.push(Note {
            code: "SNAP-CHECK-NEGATIVE",
            message: format!("device {d}: the replayed memory becomes negative: sizes of allocs and frees do not add up."),
        });
    }
    for (i, s) in segs.iter().enumerate() {
        let blocks = snap.blocks_of(s);
        let alloc: u64 = blocks
            .iter()
            .filter(|b| b.state == BlockState::ActiveAllocated)
            .map(|b| b.size)
            .sum();
        let total: u64 = blocks.iter().map(|b| b.size).sum();
        if alloc != s.allocated_size || (!blocks.is_empty() && total != s.total_size) {
            notes.push(Note {
                code: "SNAP-CHECK-SEGMENT",
                message: format!(
                    "device {d}: segment {i} at 0x{:x}: allocated_size {} vs Σ active_allocated blocks {alloc}; \
                     total_size {} vs Σ blocks {total}: sizes do not add up.",
                    s.address, s.allocated_size, s.total_size
                ),
            });
        }
    }
    notes
}
