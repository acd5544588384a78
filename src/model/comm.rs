//! One rank's communication data as flat tables (communication.md §1.2, §1.4, §1.5): the per-op
//! times of `communication.json`, its per-op per-transport bandwidth with the packet-size
//! histogram, and the links of `communication_matrix.json`.
//!
//! The tables are the shape of `analysis.db`'s `CommAnalyzerTime`, `CommAnalyzerBandwidth`
//! and `CommAnalyzerMatrix` (one row per op, per (op, transport), per (kind, link)), so a
//! database reader fills the same [`RankComm`] as the JSON readers; the cross-rank analysis
//! (`analysis::comm`) reads only these tables.

/// The two type sections of a step (`"p2p"`, `"collective"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Section {
    /// `"p2p"`.
    P2p,
    /// `"collective"`.
    Collective,
}

impl Section {
    /// The JSON key.
    pub fn key(self) -> &'static str {
        match self {
            Section::P2p => "p2p",
            Section::Collective => "collective",
        }
    }
    /// The section of a JSON key, `None` for any other key.
    pub fn of_key(k: &str) -> Option<Section> {
        match k {
            "p2p" => Some(Section::P2p),
            "collective" => Some(Section::Collective),
            _ => None,
        }
    }
}

/// One HCCL op of one step (`"<op>@<group>"` of `communication.json`; a `CommAnalyzerTime` row).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CommTimeRow {
    /// Step key as written (`step13`, `step`).
    pub step: String,
    /// `p2p` or `collective`.
    pub section: Option<Section>,
    /// Op name: the key before the last `@`.
    pub op: String,
    /// Group hash: the key after the last `@` (empty when the key has none: 2023 files).
    pub group: String,
    /// `Start Timestamp(us)` (`None`: the op has no time block or no start).
    pub start_us: Option<f64>,
    /// Elapse, transit, wait, synchronization and idle time (ms), as written.
    pub elapse_ms: f64,
    /// `Transit Time(ms)`.
    pub transit_ms: f64,
    /// `Wait Time(ms)`.
    pub wait_ms: f64,
    /// `Synchronization Time(ms)`.
    pub sync_ms: f64,
    /// `Idle Time(ms)`.
    pub idle_ms: f64,
    /// `Wait Time Ratio` (0 when absent: the DB has no ratio column).
    pub wait_ratio: f64,
    /// `Synchronization Time Ratio`.
    pub sync_ratio: f64,
}

/// One packet size of a transport's histogram: the size key as written, count, time (ms).
#[derive(Clone, Debug, PartialEq)]
pub struct PacketBin {
    /// The size in MB as the file writes the key (`"9.6e-05"`): merged on the text.
    pub size_key: String,
    /// Packets of that size.
    pub count: f64,
    /// Their total time (ms).
    pub time_ms: f64,
}

/// One transport of one op (`Communication Bandwidth Info`; the `CommAnalyzerBandwidth` rows of
/// one (op, transport)).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CommBandRow {
    /// Index of the op in [`RankComm::ops`].
    pub op: u32,
    /// `RDMA`, `HCCS`, `PCIE`, `SDMA`, `SIO`, … as written.
    pub transport: String,
    /// `Transit Size(MB)` (decimal MB).
    pub size_mb: f64,
    /// `Transit Time(ms)`.
    pub time_ms: f64,
    /// `Bandwidth(GB/s)`.
    pub bandwidth_gbps: f64,
    /// `Large Packet Ratio`.
    pub large_packet_ratio: f64,
    /// `Size Distribution`, in file order.
    pub bins: Vec<PacketBin>,
}

/// One link of one op kind of one step (`communication_matrix.json`; a `CommAnalyzerMatrix` row).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CommLinkRow {
    /// Step key as written.
    pub step: String,
    /// `p2p` or `collective`.
    pub section: Option<Section>,
    /// Kind key before the last `@` (`allreduce-total`, or a real op name in 2023 files).
    pub kind: String,
    /// Group hash after the last `@`.
    pub group: String,
    /// Source local rank, as written.
    pub src: String,
    /// Destination local rank, as written.
    pub dst: String,
    /// `Transport Type`.
    pub transport: String,
    /// `Transit Size(MB)`.
    pub size_mb: f64,
    /// `Transit Time(ms)`.
    pub time_ms: f64,
    /// `Bandwidth(GB/s)`.
    pub bandwidth_gbps: f64,
    /// `Op Name` (empty when absent).
    pub op_name: String,
}

/// A communication group of `profiler_metadata.json` `parallel_group_info`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ParallelGroup {
    /// The group id (`group_name_19`); its `double_hash` is the hash after `@`.
    pub id: String,
    /// `group_name` (`dp`, `tp`, `pp`, …).
    pub name: String,
    /// `global_ranks`, as written.
    pub global_ranks: Vec<i64>,
}

/// Everything one rank holds about its communication.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RankComm {
    /// The rank id (`profiler_info_N.json`, else the inventory's).
    pub rank: i64,
    /// Folder label, for messages.
    pub label: String,
    /// Ops in file order.
    pub ops: Vec<CommTimeRow>,
    /// Per (op, transport), in file order.
    pub bands: Vec<CommBandRow>,
    /// Matrix links in file order.
    pub links: Vec<CommLinkRow>,
    /// The rank's `parallel_group_info`.
    pub groups: Vec<ParallelGroup>,
    /// `Total Op Info` of each (step, section) of `communication.json`, as written (a check).
    pub file_totals: Vec<CommTimeRow>,
    /// True when `communication.json` was read.
    pub has_time: bool,
    /// True when `communication_matrix.json` was read.
    pub has_matrix: bool,
    /// Bytes each HCCL op moved (`count × element bytes`, [`element_bytes`]), by op name, from
    /// `trace_view.json`'s op events or the DB's `COMMUNICATION_OP` (communication.md §2.4.1,
    /// §2.4.2): the slow-link rule's data size. An op without a known size is absent.
    pub op_bytes: std::collections::BTreeMap<String, u64>,
    /// True when a data-size source was read (`trace_view.json` or `COMMUNICATION_OP`), so an
    /// op without a size has an unknown element type rather than no source.
    pub has_sizes: bool,
}

/// Bytes of one element of HCCL data type `dtype` (communication.md §2.4.1, msprof-analyze's
/// `slow_link_export.py`): INT8/UINT8 1, INT16/UINT16/FP16/BFP16 2, INT32/UINT32/FP32 4,
/// INT64/UINT64/FP64 8, INT128 16; any other type (`INVALID_TYPE`, `N/A`, …) `None`.
pub fn element_bytes(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "INT8" | "UINT8" => 1,
        "INT16" | "UINT16" | "FP16" | "BFP16" => 2,
        "INT32" | "UINT32" | "FP32" => 4,
        "INT64" | "UINT64" | "FP64" => 8,
        "INT128" => 16,
        _ => return None,
    })
}

/// The data size of an HCCL op: `count × element_bytes(dtype)`; `None` for an unknown type, a
/// negative count or a product beyond `u64`.
pub fn op_data_size(count: i64, dtype: &str) -> Option<u64> {
    u64::try_from(count)
        .ok()?
        .checked_mul(element_bytes(dtype)?)
}

/// One NCCL/RCCL collective kernel of a Kineto trace with its collective args
/// (communication.md §4.1, §4.2).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct NcclKernel {
    /// The rank (position of the trace in the input list, or the trace's own rank).
    pub rank: i64,
    /// `Process Group Name` (`None`: absent).
    pub pg_name: Option<String>,
    /// `Collective name` (`allreduce`, `_allgather_base`, …; `None`: absent).
    pub collective: Option<String>,
    /// `Group size`.
    pub group_size: Option<i64>,
    /// `dtype` (`Float`, `BFloat16`, …).
    pub dtype: Option<String>,
    /// `In msg nelems`.
    pub in_nelems: Option<i64>,
    /// `Out msg nelems`.
    pub out_nelems: Option<i64>,
    /// `stream` of the arg, else the event's tid.
    pub stream: i64,
    /// Start (µs, the trace's clock).
    pub ts_us: f64,
    /// Duration (µs).
    pub dur_us: f64,
    /// What tells the analysed rank holding this kernel apart from another of the same rank
    /// id (communication.md §4.2): its role when the GPU ranks hold several, and its trace's
    /// name when another trace of its role has the same rank id; empty otherwise. Collectives
    /// are matched across ranks of one scope only. One allocation per analysed rank, shared
    /// by its kernels (empty: no allocation).
    pub scope: std::sync::Arc<str>,
    /// The trace file it was read from (relative to the drop; empty when not known), where
    /// the rank's notes are located; shared as [`NcclKernel::scope`].
    pub trace: std::sync::Arc<str>,
}

/// `double_hash(s)` of msprof-analyze (communication.md §1.6): two 32-bit rolling hashes,
/// `h0·29 + c`, `h1·131 + c`, combined as `h0·2³² + h1`; the group hash after `@`.
pub fn double_hash(s: &str) -> u64 {
    let (mut h0, mut h1) = (0u32, 0u32);
    for c in s.chars() {
        h0 = h0.wrapping_mul(29).wrapping_add(c as u32);
        h1 = h1.wrapping_mul(131).wrapping_add(c as u32);
    }
    ((h0 as u64) << 32) | h1 as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn double_hash_matches_the_group_hashes_of_the_fixtures() {
        assert_eq!(double_hash("group_name_19"), 3985310405473756128);
        assert_eq!(
            double_hash("90.91.105.46%enp189s0f0_60000_0_1736410538306028"),
            17148521525495523210
        );
    }
}
