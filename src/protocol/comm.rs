//! The Communication tab's vocabulary (docs/rules/communication.md): the per-rank summary of
//! a rank's communication read, the join of every worker's per-rank tables into one report
//! (held by the worker that joined), the overview payload, the matrix heatmap's level-of-detail
//! query, and the exports (the CLI's `comm.json` and CSV tables).
//!
//! Units are in the field names: `_ms` ms, `_us` µs, `_mb` decimal MB, `_gbps` GB/s (MB/ms);
//! GPU collectives: MiB, µs, GiB/s (communication.md §4).

use serde::{Deserialize, Serialize};

/// What one rank folder's communication read found (the payload of `Summary::Comm`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CommRankDto {
    /// The rank id used across ranks.
    pub rank: i64,
    /// Op rows of `communication.json`.
    pub ops: u64,
    /// Link rows of `communication_matrix.json`.
    pub links: u64,
    /// `communication.json` was read.
    pub has_time: bool,
    /// `communication_matrix.json` was read.
    pub has_matrix: bool,
}

/// A query of the Communication tab.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum CommQuery {
    /// Join every worker's per-rank tables (round 0 parts of `ExportRequest::Comm`, beside the
    /// request) into the cross-rank report, keep it here, and reply its overview.
    Join {
        /// msprof-analyze's matrix (drop links whose end has no self link).
        parity: bool,
    },
    /// A window of the matrix heatmap of the joined report.
    Matrix(CommMatrixQuery),
}

/// Which value the heatmap shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CommMetric {
    /// `bandwidth_gbps`.
    Bandwidth,
    /// `size_mb`.
    Size,
    /// `time_ms`.
    Time,
}

/// One window of one matrix: `(step, group, kind)`, the ranks of the group's axis from
/// `x0` / `y0`, `span` of them on each side, cut into at most `max_blocks` blocks a side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommMatrixQuery {
    /// Step key.
    pub step: String,
    /// Group hash.
    pub group: String,
    /// `Total Op Info` or an op kind (`allreduce-total`, …).
    pub kind: String,
    /// The value shown.
    pub metric: CommMetric,
    /// First source position on the axis (column).
    pub x0: u32,
    /// First destination position on the axis (row).
    pub y0: u32,
    /// Axis positions visible on each side (clamped to the axis).
    pub span: u32,
    /// Most blocks a side (≥ 1).
    pub max_blocks: u32,
}

/// A reply of the Communication tab.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum CommReply {
    /// The joined report's tables for the page.
    Overview(Box<CommOverviewDto>),
    /// One heatmap window.
    Matrix(CommMatrixDto),
}

/// A group as the ranks and the metadata know it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommGroupDto {
    /// Group hash.
    pub group: String,
    /// `p2p` or `collective`.
    pub section: String,
    /// `dp`, `tp`, … (empty without metadata).
    pub name: String,
    /// Global ranks from the metadata (sorted; empty without).
    pub global_ranks: Vec<i64>,
    /// Ranks whose files name the group.
    pub present: Vec<i64>,
    /// Global ranks not in the input.
    pub missing: Vec<i64>,
}

/// msprof-analyze's `Total Op Info@group` of one rank (communication.md §2.1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommTimeDto {
    /// Step key.
    pub step: String,
    /// Group hash.
    pub group: String,
    /// Rank.
    pub rank: i64,
    /// Ops summed.
    pub n_ops: u64,
    /// Σ elapse (ms).
    pub elapse_ms: f64,
    /// Σ transit (ms).
    pub transit_ms: f64,
    /// Σ wait (ms).
    pub wait_ms: f64,
    /// Σ synchronization (ms).
    pub sync_ms: f64,
    /// Σ idle (ms).
    pub idle_ms: f64,
    /// `round(wait / (wait + transit), 4)`.
    pub wait_ratio: f64,
    /// `round(sync / (sync + transit), 4)`.
    pub sync_ratio: f64,
}

/// The bandwidth of one transport of one rank (communication.md §2.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommBandDto {
    /// Step key.
    pub step: String,
    /// Group hash.
    pub group: String,
    /// Rank.
    pub rank: i64,
    /// `HCCS`, `PCIE`, `RDMA`, `SDMA`, `SIO`.
    pub transport: String,
    /// Σ size (MB).
    pub size_mb: f64,
    /// Σ time (ms).
    pub time_ms: f64,
    /// GB/s.
    pub bandwidth_gbps: f64,
    /// Large-packet ratio computed by proflens (none for SDMA).
    pub large_packet_ratio: Option<f64>,
}

/// One op across ranks: who arrived last (`analysis::comm::ops`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommArrivalDto {
    /// Step key.
    pub step: String,
    /// Group hash.
    pub group: String,
    /// Op name.
    pub op: String,
    /// Ranks having the op.
    pub n_ranks: u64,
    /// Arrived last (shortest elapse).
    pub last_rank: i64,
    /// Its elapse (ms).
    pub last_elapse_ms: f64,
    /// Waited most (longest elapse).
    pub first_rank: i64,
    /// Its elapse (ms).
    pub max_elapse_ms: f64,
    /// Mean elapse (ms).
    pub mean_elapse_ms: f64,
    /// Max − min elapse (ms).
    pub spread_ms: f64,
    /// Latest − earliest start (µs), when every rank has one.
    pub start_spread_us: Option<f64>,
}

/// One flagged slow-link group (communication.md §2.4) with its statistics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommSlowLinkDto {
    /// `"<opType><ranks>_<dataSize>"`.
    pub name: String,
    /// Rows.
    pub count: u64,
    /// Mean, std, min, median, max of the per-op minimum times (ns).
    pub mean_ns: f64,
    /// Sample standard deviation (ns).
    pub std_ns: f64,
    /// Minimum (ns).
    pub min_ns: f64,
    /// Median (ns).
    pub median_ns: f64,
    /// Maximum (ns).
    pub max_ns: f64,
    /// `(max − mean) / mean`: the evidence.
    pub offset_ratio: f64,
    /// The ops of the group.
    pub ops: Vec<String>,
}

/// One slow rank of one op (communication.md §2.5) with the test that flagged it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommSlowRankDto {
    /// The rank.
    pub rank: i64,
    /// Group hash.
    pub group: String,
    /// Op name.
    pub op: String,
    /// Ranks tested.
    pub n: u64,
    /// `dixon` or `3sigma`.
    pub test: String,
    /// Dixon's r, or mean − 3σ (µs).
    pub statistic: f64,
    /// The table's critical value, or the mean (µs).
    pub threshold: f64,
    /// The rank's op time (µs).
    pub time_us: f64,
    /// The op's mean time (µs).
    pub mean_us: f64,
}

/// One slow rank of MindStudio Insight's slow rank list (communication.md §3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommMsiSlowRankDto {
    /// Step key.
    pub step: String,
    /// Group hash.
    pub group: String,
    /// The rank that waited most, and its time (µs).
    pub fast_rank: i64,
    /// Its time (µs).
    pub fast_us: f64,
    /// The slow rank.
    pub rank: i64,
    /// Its time (µs).
    pub time_us: f64,
    /// `fast_us − time_us` (µs).
    pub diff_us: f64,
    /// 10 % of `fast_us` (µs).
    pub threshold_us: f64,
    /// Top ops by `fast − its` elapse (µs).
    pub ops: Vec<(String, f64)>,
}

/// One GPU collective across ranks (NCCL kernels, communication.md §4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommCollectiveDto {
    /// `(process group, order)` id.
    pub collective_id: String,
    /// `allreduce`, …
    pub collective: String,
    /// Group size.
    pub group_size: i64,
    /// Ranks seen.
    pub ranks: Vec<i64>,
    /// Message (MiB).
    pub full_msg_mb: f64,
    /// Min duration over ranks (µs).
    pub comm_latency_us: f64,
    /// Spread of the starts (µs); `None` with one rank present (unmeasurable).
    pub skew_start_us: Option<f64>,
    /// Spread of the ends (µs); `None` with one rank present.
    pub skew_end_us: Option<f64>,
    /// The rank that started first; `None` with one rank present.
    pub earliest_arrival_rank: Option<i64>,
    /// Algorithm bandwidth (GiB/s).
    pub algo_bw_gbps: Option<f64>,
    /// Bus bandwidth (GiB/s).
    pub bus_bw_gbps: Option<f64>,
}

/// The matrix kinds of one (step, group).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommKindsDto {
    /// Step key.
    pub step: String,
    /// Group hash.
    pub group: String,
    /// `Total Op Info` first, then the op kinds in first appearance order.
    pub kinds: Vec<String>,
    /// The group's axis length (global ranks of its links and metadata).
    pub axis_len: u32,
}

/// The joined report, for the page.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CommOverviewDto {
    /// msprof-analyze's parity mode.
    pub parity: bool,
    /// Ranks read, ascending.
    pub ranks: Vec<i64>,
    /// Step keys, in first appearance order.
    pub steps: Vec<String>,
    /// Every group.
    pub groups: Vec<CommGroupDto>,
    /// Per (step, group, rank).
    pub time: Vec<CommTimeDto>,
    /// Per (step, group, rank, transport).
    pub bandwidth: Vec<CommBandDto>,
    /// Matrix kinds per (step, group).
    pub matrices: Vec<CommKindsDto>,
    /// Links in the `Total Op Info` matrix.
    pub matrix_links: u64,
    /// Links recovered from `parallel_group_info`.
    pub recovered_links: u64,
    /// Links dropped (no global rank for an end).
    pub dropped_links: u64,
    /// Ops present on some ranks of their group only.
    pub partial_ops: u64,
    /// Per op: who arrived last.
    pub arrivals: Vec<CommArrivalDto>,
    /// Flagged slow-link groups.
    pub slow_links: Vec<CommSlowLinkDto>,
    /// Slow ranks.
    pub slow_ranks: Vec<CommSlowRankDto>,
    /// Ops tested for a slow rank.
    pub slow_rank_ops_tested: u64,
    /// MindStudio Insight's slow rank list.
    #[serde(default)]
    pub msi_slow_ranks: Vec<CommMsiSlowRankDto>,
    /// The CSV tables the export offers (`proflens comm --csv-dir`'s file stems, those with
    /// something to hold: the Ascend tables with Ascend ranks, `collectives` with GPU ones).
    #[serde(default)]
    pub csv_tables: Vec<String>,
    /// Op rows the slow-link rule saw (one per op and rank).
    #[serde(default)]
    pub slow_link_rows: u64,
    /// Of those, the rows with a data size (the only ones tested).
    #[serde(default)]
    pub slow_link_rows_sized: u64,
    /// GPU collectives.
    pub collectives: Vec<CommCollectiveDto>,
    /// The cross-rank data checks (dropped links, partial ops, …), for the Problems tab.
    #[serde(default)]
    pub problems: Vec<super::ProblemDto>,
}

/// One heatmap window: `cols × rows` blocks of `block × block` axis positions, row-major
/// (row = destination), each the mean of the links it holds (`NaN`: none), with their min,
/// max and count, the links recovered from metadata, and whether a rank of the block is
/// missing from the input. With `block == 1` each cell is one link and carries its size, time,
/// bandwidth and transport.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CommMatrixDto {
    /// The group's axis: global ranks, ascending.
    pub axis: Vec<i64>,
    /// Axis positions of ranks missing from the input (metadata lists them, no file has them).
    pub missing: Vec<u32>,
    /// First column / row position shown.
    pub x0: u32,
    /// First row position.
    pub y0: u32,
    /// Axis positions a block covers on each side.
    pub block: u32,
    /// Blocks across.
    pub cols: u32,
    /// Blocks down.
    pub rows: u32,
    /// Mean per block (`NaN`: no link).
    pub mean: Vec<f64>,
    /// Min per block.
    pub min: Vec<f64>,
    /// Max per block.
    pub max: Vec<f64>,
    /// Links per block.
    pub count: Vec<u32>,
    /// Links recovered from metadata per block.
    pub recovered: Vec<u32>,
    /// A rank of the block is missing from the input.
    pub missing_cell: Vec<bool>,
    /// Smallest and largest value of the whole matrix (the colour scale).
    pub scale: (f64, f64),
    /// With `block == 1`: per cell (size MB, time ms, bandwidth GB/s, transport); else empty.
    pub detail: Vec<(f64, f64, f64, String)>,
}

/// A Communication export: the CLI's document or one of its CSV tables.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CommExportKind {
    /// `proflens comm --json` (the `comm.json` of `analyze --out-dir`).
    Json,
    /// One table of `proflens comm --csv-dir` (`time_summary`, `matrix`, …).
    Csv(String),
}
