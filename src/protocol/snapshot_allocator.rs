//! Payloads of the allocator state view of a snapshot (torch-snapshot.md §6.1
//! "Allocator State History", §7.10): the segment map after one entry, its fragmentation
//! classes, the OOM explanation at an `oom` entry and the entries around it. Re-exported from
//! [`crate::protocol`]. Units are in the field names; addresses are `0x<hex>` strings (never
//! JavaScript numbers, §2.4).

use serde::{Deserialize, Serialize};

/// A request for the allocator state after one entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapAllocatorQuery {
    /// Target.
    pub target: u32,
    /// Device slot.
    pub slot: u32,
    /// Entry index the state is taken after (None: before the first entry). Ignored for a
    /// device without trace (its end state is shown).
    pub index: Option<u32>,
    /// Entries listed before and after `index` in [`SnapAllocatorDto::entries`].
    pub context: u32,
}

/// One block of the segment map (inactive space included).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapBlockDto {
    /// Address, `0x<hex>`.
    pub address: String,
    /// Offset from the segment base, bytes.
    pub offset: u64,
    /// Bytes (rounded block size; see `exact`).
    pub bytes: u64,
    /// Requested bytes (0 for inactive space).
    pub requested_bytes: u64,
    /// `allocated`, `pending_free` or `inactive`.
    pub state: String,
    /// Raw stream handle.
    pub stream: i64,
    /// Lifetime record (for [`crate::protocol::SnapQuery::Stack`]), when one explains it.
    pub record: Option<u32>,
    /// MemoryViz's versioned name `b'<hex>_<version>'`, when the record is known.
    pub memoryviz_name: Option<String>,
    /// Site of the allocation (§7.5), when the record is known.
    pub site: Option<String>,
    /// False when the size is the request rounded to 512 bytes (a block re-created by undoing
    /// its free; the true block may be larger).
    pub exact: bool,
}

/// One segment of the map, its blocks in address order covering it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapSegmentMapDto {
    /// Base address, `0x<hex>`.
    pub address: String,
    /// Bytes.
    pub total_bytes: u64,
    /// Raw stream handle.
    pub stream: i64,
    /// `segment_pool_id`; None when not known (a segment not in the end state).
    pub pool: Option<(i64, i64)>,
    /// Expandable segment.
    pub expandable: bool,
    /// Σ allocated, Σ pending free, Σ inactive, bytes.
    pub allocated_bytes: u64,
    /// Σ pending-free blocks, bytes.
    pub pending_bytes: u64,
    /// Σ inactive space, bytes.
    pub inactive_bytes: u64,
    /// Largest contiguous inactive block, bytes.
    pub largest_free_bytes: u64,
    /// Blocks (address order).
    pub blocks: Vec<SnapBlockDto>,
}

/// The fragmentation classes at the moment (`analysis::snapshot::allocator::fragmentation`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapFragmentationDto {
    /// Σ segments.
    pub reserved_bytes: u64,
    /// Σ allocated blocks.
    pub allocated_bytes: u64,
    /// Σ allocated + pending-free blocks.
    pub active_bytes: u64,
    /// Σ inactive space.
    pub inactive_bytes: u64,
    /// Largest inactive block.
    pub largest_inactive_bytes: u64,
    /// The largest request of the last 1,000 entries, rounded to 512 bytes.
    pub largest_recent_request_bytes: u64,
    /// Inactive space in blocks smaller than that request.
    pub hard_bytes: u64,
    /// Inactive space in blocks at least that large (cached, reusable).
    pub soft_bytes: u64,
    /// Pending frees waiting on other streams.
    pub stream_bytes: u64,
    /// Σ (size − requested) of allocated blocks of known size.
    pub internal_waste_bytes: u64,
    /// `1 − largest_inactive / inactive`.
    pub external_ratio: f64,
}

/// The explanation of an `oom` entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapOomDto {
    /// `fragmentation`, `memory_full` or `other_process`.
    pub cause: String,
    /// The one-sentence verdict.
    pub sentence: String,
    /// Requested bytes.
    pub requested_bytes: u64,
    /// `device_free` of the entry.
    pub device_free_bytes: Option<u64>,
    /// Inactive bytes in segments of the request's stream.
    pub cached_free_bytes: u64,
    /// Largest of those inactive blocks.
    pub largest_free_bytes: u64,
    /// Highest reserved level up to the OOM.
    pub peak_reserved_bytes: u64,
}

/// One line of the entry list, MemoryViz style (`alloc b'7f00_0' 1.5 MiB (stream 0)`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapEntryRowDto {
    /// Entry index.
    pub index: u32,
    /// The line.
    pub text: String,
}

/// The allocator state after one entry (reply to [`SnapAllocatorQuery`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapAllocatorDto {
    /// Target.
    pub target: u32,
    /// Device slot.
    pub slot: u32,
    /// Entry index the state is after (None: before the first entry, or the end state of a
    /// device without trace).
    pub index: Option<u32>,
    /// Entries of the device trace.
    pub entries_total: u64,
    /// Segments in address order.
    pub segments: Vec<SnapSegmentMapDto>,
    /// Handed-out blocks in no segment (an inconsistent trace).
    pub orphan_blocks: u64,
    /// Fragmentation classes.
    pub fragmentation: SnapFragmentationDto,
    /// The OOM explanation when the entry is an `oom`.
    pub oom: Option<SnapOomDto>,
    /// Entries around `index` (the entry list).
    pub entries: Vec<SnapEntryRowDto>,
    /// Entries of the trace that contradicted the replayed state (skipped).
    pub replay_mismatches: u64,
}
