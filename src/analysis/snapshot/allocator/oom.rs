//! Why an `oom` entry happened (torch-snapshot.md §4 item 8): what was asked, what
//! the driver had free (`device_free`), what the allocator held, the largest contiguous free
//! block per segment, and one verdict.
//!
//! Decision (the spec lists the inputs, not a rule): with `R` the request rounded up to 512
//! bytes, `F` the driver's free bytes, `C` the inactive bytes of the segments on the request's
//! stream, `L` the largest of those inactive blocks, `P` the highest reserved level of this
//! allocator up to the OOM and `H` the reserved level at it:
//! 1. **fragmentation** when `L < R ≤ C + F`: the bytes existed, but not in one piece;
//! 2. **another process** when `R > C + F` and `P − H − F ≥ R − C − F`: this allocator once
//!    held `P` on the device; what it has released since (`P − H`) is no longer free, so
//!    something outside it (another process, NCCL/HCCL buffers, the context) took at least
//!    the missing bytes;
//! 3. **memory truly full** otherwise: live tensors fill what the allocator reserved and the
//!    driver has less than the request.
//!
//! A free block large enough (`L ≥ R`) cannot be told apart by the snapshot (another pool,
//! `max_split_size`): it is reported as case 2 or 3 by the same bytes test.

use crate::model::snapshot::{BlockState, DeviceTrace};

use super::{round_block, SegmentMap};

/// The three verdicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OomCause {
    /// Enough free bytes in total, no contiguous block large enough.
    Fragmentation,
    /// Live tensors fill the reserved memory and the driver has too little.
    TrulyFull,
    /// Memory this allocator released is now held outside it.
    OtherProcess,
}

impl OomCause {
    /// Stable name (`fragmentation`, `memory_full`, `other_process`).
    pub fn name(self) -> &'static str {
        match self {
            OomCause::Fragmentation => "fragmentation",
            OomCause::TrulyFull => "memory_full",
            OomCause::OtherProcess => "other_process",
        }
    }
}

/// Largest contiguous inactive block of one segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentFree {
    /// Segment base address.
    pub address: u64,
    /// Segment size, bytes.
    pub size: u64,
    /// Raw stream handle.
    pub stream: i64,
    /// Largest inactive block, bytes.
    pub largest_free: u64,
    /// Σ inactive, bytes.
    pub free: u64,
}

/// The explanation of one `oom` entry (bytes unless named otherwise).
#[derive(Clone, Debug, PartialEq)]
pub struct OomExplanation {
    /// Entry index.
    pub index: usize,
    /// Requested bytes (the entry's `size`).
    pub requested: u64,
    /// `device_free` of the entry, when recorded.
    pub device_free: Option<u64>,
    /// Raw stream handle of the request.
    pub stream: i64,
    /// Reserved by the allocator at the OOM.
    pub reserved: u64,
    /// Σ `active_allocated` block sizes.
    pub allocated: u64,
    /// Σ active block sizes (allocated + pending free).
    pub active: u64,
    /// Inactive bytes in segments of the request's stream (`C`).
    pub cached_free: u64,
    /// Largest of those inactive blocks (`L`).
    pub largest_free: u64,
    /// Highest reserved level up to the OOM (`P`).
    pub peak_reserved: u64,
    /// Per segment, the largest contiguous free block (all streams), address order.
    pub segments: Vec<SegmentFree>,
    /// The verdict.
    pub cause: OomCause,
    /// One sentence ending the explanation.
    pub sentence: String,
}

/// Explains the `oom` entry `index` of `dev` from the segment map at it and the highest
/// reserved level up to it (`peak_reserved`, from the reserved curve).
pub fn explain(
    dev: &DeviceTrace,
    index: usize,
    map: &SegmentMap,
    peak_reserved: u64,
) -> OomExplanation {
    let t = &dev.entries;
    let requested = t.size().get(index).copied().unwrap_or(0);
    let device_free = t
        .device_free()
        .iter()
        .find(|(j, _)| *j as usize == index)
        .map(|(_, f)| *f);
    let stream = t
        .stream()
        .get(index)
        .and_then(|&s| t.stream_values().get(s as usize))
        .copied()
        .unwrap_or(0);
    let mut segments = Vec::new();
    let (mut cached_free, mut largest_free) = (0u64, 0u64);
    for s in &map.segments {
        let free: Vec<u64> = s
            .blocks
            .iter()
            .filter(|b| b.state == BlockState::Inactive)
            .map(|b| b.size)
            .collect();
        let seg_largest = free.iter().copied().max().unwrap_or(0);
        let seg_free: u64 = free.iter().sum();
        if s.seg.stream == stream {
            cached_free += seg_free;
            largest_free = largest_free.max(seg_largest);
        }
        segments.push(SegmentFree {
            address: s.address,
            size: s.seg.size,
            stream: s.seg.stream,
            largest_free: seg_largest,
            free: seg_free,
        });
    }
    let reserved = map.reserved();
    let allocated = map.bytes_in(BlockState::ActiveAllocated);
    let active = allocated + map.bytes_in(BlockState::ActivePendingFree);
    let r = round_block(requested);
    let f = device_free.unwrap_or(0);
    let peak_reserved = peak_reserved.max(reserved);
    let have = cached_free.saturating_add(f);
    let released_gone = (peak_reserved - reserved).saturating_sub(f);
    let cause = if largest_free < r && r <= have {
        OomCause::Fragmentation
    } else if r > have && released_gone >= r - have {
        OomCause::OtherProcess
    } else {
        OomCause::TrulyFull
    };
    let b = |x: u64| crate::base::format::bytes_i(x.min(i64::MAX as u64) as i64);
    let free_s = device_free.map_or("an unknown amount".to_string(), b);
    let sentence = match cause {
        OomCause::Fragmentation => format!(
            "Fragmentation: the allocator's segments on this stream had {} free and the driver {}, \
             enough for the {} request together, but the largest contiguous free block was {}.",
            b(cached_free),
            free_s,
            b(requested),
            b(largest_free)
        ),
        OomCause::OtherProcess => format!(
            "Another process (or memory outside this allocator) took the memory: this allocator \
             once reserved {} and now holds {}, yet the driver had only {} free for the {} request.",
            b(peak_reserved),
            b(reserved),
            free_s,
            b(requested)
        ),
        OomCause::TrulyFull => format!(
            "Memory truly full: live tensors held {} of the {} reserved, only {} was free in its \
             segments and {} in the driver, less than the {} request.",
            b(active),
            b(reserved),
            b(cached_free),
            free_s,
            b(requested)
        ),
    };
    OomExplanation {
        index,
        requested,
        device_free,
        stream,
        reserved,
        allocated,
        active,
        cached_free,
        largest_free,
        peak_reserved,
        segments,
        cause,
        sentence,
    }
}

#[cfg(test)]
mod tests;
