//! What is live at one point of a snapshot (tensors, the icicle by call stack, one stack)
//! and the segments of a device at its end.

use serde::{Deserialize, Serialize};

use super::{SnapAxis, SnapContributorDto, SnapFrameDto};

/// Where the user clicked: an x position on an axis (Index: entry index).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapLiveQuery {
    /// Target.
    pub target: u32,
    /// Device slot.
    pub slot: u32,
    /// Axis of `x`.
    pub axis: SnapAxis,
    /// Position: entry index (Index) or ms since the first `time_us` (Time: the last entry at
    /// or before it).
    pub x: f64,
    /// At most this many tensors in the list.
    pub limit: u32,
}

/// One live tensor (lifetime record) at the selected point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapTensorDto {
    /// Record id (for [`SnapStackDto`] queries).
    pub record: u32,
    /// Requested bytes.
    pub bytes: u64,
    /// Block address, `0x<hex>`.
    pub addr: String,
    /// MemoryViz's versioned name `b'<hex>_<version>'` (to cross-reference).
    pub memoryviz_name: String,
    /// Alloc entry index (None: allocated before the window).
    pub alloc_index: Option<u32>,
    /// Alloc time, ms since the first `time_us`.
    pub alloc_time_ms: Option<f64>,
    /// Site label.
    pub site: String,
    /// Site link.
    pub link: Option<String>,
    /// `alloc`, `free_site`, `block` or `none`: where its stack comes from.
    pub stack_kind: String,
}

/// One node of the icicle (prefix tree of live bytes by stack, §7.7), laid out: node 0 is the
/// root; `offset` is the byte position of its left edge inside the root's width.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapTreeNodeDto {
    /// Parent node (root: 0).
    pub parent: u32,
    /// Depth (root 0).
    pub depth: u32,
    /// Frame label, `<root>` or `<non-python>`.
    pub label: String,
    /// Link of the frame.
    pub link: Option<String>,
    /// Left edge, bytes from the root's left edge.
    pub offset: u64,
    /// Bytes below this node.
    pub bytes: u64,
    /// Tensors below this node.
    pub tensors: u64,
}

/// What is live after one entry (reply to [`SnapLiveQuery`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapLiveDto {
    /// Target.
    pub target: u32,
    /// Device slot.
    pub slot: u32,
    /// Entry index the live set is taken after.
    pub index: u32,
    /// Time of that entry, ms since the first `time_us`.
    pub time_ms: Option<f64>,
    /// The entry itself, e.g. `alloc 1.5 MiB b'7f00_0' (stream 0)`.
    pub entry: String,
    /// Allocated bytes after the entry.
    pub allocated_bytes: i64,
    /// Active bytes after the entry.
    pub active_bytes: i64,
    /// Reserved bytes after the entry.
    pub reserved_bytes: i64,
    /// Annotations open at that time.
    pub annotations: Vec<String>,
    /// Σ requested bytes of the live tensors (active semantics).
    pub live_bytes: u64,
    /// Number of live tensors.
    pub live_tensors: u64,
    /// The largest live tensors (sorted by bytes, then record).
    pub tensors: Vec<SnapTensorDto>,
    /// Contributors by site, largest first (top N of the settings).
    pub contributors: Vec<SnapContributorDto>,
    /// Sites not listed, and their bytes.
    pub more_sites: (u64, u64),
    /// The icicle of live bytes (nodes below 0.1 % of the root are folded into their parent).
    pub tree: Vec<SnapTreeNodeDto>,
}

/// The full stack of one record (reply to a stack query).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapStackDto {
    /// Record id.
    pub record: u32,
    /// Requested bytes of the record.
    pub bytes: u64,
    /// Block address, `0x<hex>`.
    pub addr: String,
    /// MemoryViz's versioned name `b'<hex>_<version>'`.
    pub memoryviz_name: String,
    /// Where the stack comes from (`alloc`, `free_site`, `block`, `none`).
    pub stack_kind: String,
    /// Frames, innermost first.
    pub frames: Vec<SnapFrameDto>,
}

/// One end-state segment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapSegmentDto {
    /// Address, hex.
    pub address: String,
    /// `total_size`, bytes.
    pub total_bytes: u64,
    /// `allocated_size`, bytes.
    pub allocated_bytes: u64,
    /// `active_size`, bytes.
    pub active_bytes: u64,
    /// Σ inactive blocks, bytes.
    pub inactive_bytes: u64,
    /// Largest inactive block, bytes.
    pub largest_inactive_bytes: u64,
    /// Blocks.
    pub blocks: u64,
    /// Stream handle.
    pub stream: i64,
    /// `segment_type` (`large`/`small`) or empty.
    pub segment_type: String,
    /// Private pool id, `(0, 0)` = default pool.
    pub pool: (i64, i64),
    /// Expandable segment.
    pub expandable: bool,
}

/// End-state segments and fragmentation of one device (§7.10 metrics at the end state).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapSegmentsDto {
    /// Target.
    pub target: u32,
    /// Device slot.
    pub slot: u32,
    /// Segments, largest first (at most the limit).
    pub segments: Vec<SnapSegmentDto>,
    /// Segments of the device.
    pub total_segments: u64,
    /// Σ total_size.
    pub reserved_bytes: u64,
    /// Σ allocated_size.
    pub allocated_bytes: u64,
    /// Σ inactive blocks.
    pub inactive_bytes: u64,
    /// Largest inactive block.
    pub largest_inactive_bytes: u64,
    /// `1 − largest_free / total_free` (0 when nothing is free).
    pub external_fragmentation: f64,
    /// Σ (block size − requested size) of active blocks: rounding waste.
    pub internal_waste_bytes: u64,
}
