//! The cluster view's payloads (the summary format is `docs/cluster-summary.md`):
//! what the worker sends once a cluster summary file is parsed ([`ClusterViewDto`], inside
//! `Summary::Cluster`), and the sort / filter vocabulary of the rank table
//! ([`ClusterColumn`], [`ClusterSort`], [`ClusterFilter`]) that `views::cluster_table` orders
//! rows with.
//!
//! The whole view travels once (10,000 ranks × ~20 numbers plus two rank × step matrices is a
//! few MB): sorting, filtering, windowing and the heatmap raster are pure functions of it in
//! `views`, so scrolling never waits on the worker. Units are in the names (`_ms`
//! milliseconds, `_ratio` a fraction 0–1, `_bytes` bytes).

use serde::{Deserialize, Serialize};

/// `FileDto::kind` of a cluster summary in `InventoryDto::summaries` that this build reads
/// (the page runs only those; an unreadable one says why in its kind and in the problems).
pub const SUMMARY_KIND: &str = "proflens cluster summary";

/// One rank of the summary, as the rank table shows it (`ranks[i]` and `cross_rank[i]` of the
/// summary joined by rank).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterRankRow {
    /// Position in the summary's `ranks` (= the heatmap row).
    pub index: u32,
    /// Rank id, when the target has one.
    pub rank_id: Option<i64>,
    /// Role (`""` when the summary has none).
    pub role: String,
    /// The rank's folder (or trace file) as the summary names it: what "open this rank" asks for.
    pub rank_dir: String,
    /// Input kind: `ascend`, `kineto` or `snapshot`.
    pub kind: String,
    /// `ok`, `partial` or `failed`.
    pub status: String,
    /// Steps analysed.
    pub steps: u32,
    /// Mean step service time, ms (anomaly.md §6.3 `service_ms`).
    pub service_ms_avg: Option<f64>,
    /// Mean device busy union per step, ms.
    pub busy_union_ms_avg: Option<f64>,
    /// Mean underfeed ratio per step, 0–1.
    pub underfeed_ratio_avg: Option<f64>,
    /// Communication wait ratio, weighted by communication time, 0–1.
    pub comm_wait_ratio: Option<f64>,
    /// Mean internal bubbles per step.
    pub bubble_count_avg: Option<f64>,
    /// Robust z of the rank's mean service time across ranks (anomaly.md §13.4).
    pub robust_z: Option<f64>,
    /// Flagged slow by the cross-rank rule (§13.4).
    pub slow: bool,
    /// The rank's dominant idle pattern (anomaly JSON `dominant_idle_pattern`).
    pub idle_pattern: Option<String>,
    /// The rank's dominant anomaly tags, joined with `, `.
    pub tags: String,
    /// Peak allocated memory, bytes (Ascend memory or snapshot peak), when known.
    pub peak_bytes: Option<u64>,
    /// Problems of the rank that are errors (the summary's kept ones plus the dropped count
    /// when severities are unknown are not guessed: kept ones only).
    pub errors: u32,
    /// Problems of the rank that are warnings (kept ones).
    pub warnings: u32,
    /// Problems dropped from the rank's list by the summary's cap.
    pub problems_dropped: u32,
    /// The rank's first problem, `CODE: message`, for the table's tooltip.
    pub first_problem: Option<String>,
}

/// A rank × step matrix of one metric, row-major (`values[row * cols + col]`, row = rank
/// index in [`ClusterViewDto::ranks`], col = step in [`ClusterViewDto::step_ids`]); `None`
/// where the rank has no such step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HeatmapDto {
    /// The metric's field name in the summary (`service_ms`, `underfeed_ratio`).
    pub metric: String,
    /// Rows (ranks).
    pub rows: u32,
    /// Columns (steps).
    pub cols: u32,
    /// The cells.
    pub values: Vec<Option<f64>>,
}

impl HeatmapDto {
    /// The cell of `row`, `col` (`None` outside or where the rank has no such step).
    pub fn get(&self, row: u32, col: u32) -> Option<f64> {
        if row >= self.rows || col >= self.cols {
            return None;
        }
        self.values
            .get(row as usize * self.cols as usize + col as usize)
            .copied()
            .flatten()
    }
}

/// One cross-rank outlier of the summary (a metric of one step on one rank, robust z > 3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutlierDto {
    /// Metric field name.
    pub metric: String,
    /// Rank id.
    pub rank_id: Option<i64>,
    /// Role.
    pub role: String,
    /// Step id.
    pub step_id: String,
    /// The rank's value.
    pub value: f64,
    /// The median over ranks of that step.
    pub median: f64,
    /// Robust z; `None` when infinite (MAD 0, value above the median).
    pub robust_z: Option<f64>,
}

/// How many ranks have one dominant idle pattern (the bubble pattern across ranks).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PatternCount {
    /// The pattern (`none` when the rank has no anomaly result).
    pub pattern: String,
    /// Ranks with it.
    pub ranks: u32,
}

/// Everything the cluster view shows, sent once per summary file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterViewDto {
    /// The summary file (path relative to the drop).
    pub file: String,
    /// `version` of the file.
    pub version: u32,
    /// `generator` (`proflens 0.1.0`).
    pub generator: String,
    /// The roots the summary was made from.
    pub roots: Vec<String>,
    /// How it was made: `ray`, `local` or `cli`, the task count and the wall time, s.
    pub run: String,
    /// Ranks, in the summary's order (role, rank id, rank dir).
    pub ranks: Vec<ClusterRankRow>,
    /// Step ids of the matrices' columns, in step order.
    pub step_ids: Vec<String>,
    /// Service time per rank and step, ms.
    pub service_ms: HeatmapDto,
    /// Underfeed ratio per rank and step, 0–1.
    pub underfeed_ratio: HeatmapDto,
    /// Rank ids flagged slow.
    pub slow_ranks: Vec<i64>,
    /// Dominant idle patterns, most ranks first.
    pub patterns: Vec<PatternCount>,
    /// Outliers, largest robust z first (at most 200 kept).
    pub outliers: Vec<OutlierDto>,
    /// Outliers in the file (kept or not).
    pub outliers_total: u64,
    /// Problems of every rank: errors.
    pub problems_errors: u64,
    /// Problems of every rank: warnings.
    pub problems_warnings: u64,
}

/// A column of the rank table (every column sorts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ClusterColumn {
    /// Rank id (then role).
    Rank,
    /// Role.
    Role,
    /// Status.
    Status,
    /// Steps.
    Steps,
    /// Mean service time.
    ServiceMs,
    /// Mean busy union.
    BusyUnionMs,
    /// Mean underfeed ratio.
    UnderfeedRatio,
    /// Communication wait ratio.
    CommWait,
    /// Mean bubbles per step.
    Bubbles,
    /// Robust z.
    RobustZ,
    /// Slow flag.
    Slow,
    /// Dominant idle pattern.
    Pattern,
    /// Peak memory.
    Peak,
    /// Problems (errors, then warnings).
    Problems,
    /// Rank folder.
    RankDir,
}

/// A sort of the rank table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterSort {
    /// Column.
    pub column: ClusterColumn,
    /// Largest first.
    pub descending: bool,
}

/// A filter of the rank table (all set parts must hold).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterFilter {
    /// Only this role.
    pub role: Option<String>,
    /// Only slow ranks.
    pub slow_only: bool,
    /// Only this status (`ok`, `partial`, `failed`).
    pub status: Option<String>,
}
