//! The communication parts of the cluster summary (docs/cluster-summary.md): a rank's
//! communication totals and ops ([`CommSummary`]), and the reduce's slow ranks
//! ([`CommSlowRank`]) and slow links ([`CommSlowLink`]).

use serde::{Deserialize, Serialize};

/// One rank's communication totals over all its steps, groups and types.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommSummary {
    /// Ops summed.
    pub n_ops: u64,
    /// Σ elapse, transit, wait, synchronization, idle (ms).
    pub elapse_ms: f64,
    /// Σ transit (ms).
    pub transit_ms: f64,
    /// Σ wait (ms).
    pub wait_ms: f64,
    /// Σ synchronization (ms).
    pub sync_ms: f64,
    /// Σ idle (ms).
    pub idle_ms: f64,
    /// `compute_ratio(wait, wait + transit)`.
    pub wait_ratio: f64,
    /// `compute_ratio(sync, sync + transit)`.
    pub sync_ratio: f64,
    /// The rank's ops in file order (≤ [`MAX_COMM_OPS`]), for the reduce's slow-rank test.
    #[serde(default)]
    pub ops: Vec<CommOpTime>,
    /// Ops left out.
    #[serde(default)]
    pub ops_dropped: u64,
}

/// Most ops kept per rank summary.
pub const MAX_COMM_OPS: usize = 256;

/// One op of a rank: group hash, op name, start (µs) and elapse (ms).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommOpTime {
    /// Group hash.
    pub group: String,
    /// Op name.
    pub op: String,
    /// `Start Timestamp(us)`.
    pub start_us: f64,
    /// `Elapse Time(ms)`.
    pub elapse_ms: f64,
    /// Bytes the op moved (count × element size), the slow-link rule's data size; absent when
    /// unknown (`communication.json` does not carry it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_size: Option<u64>,
}

/// A slow rank of one op across the summarised ranks (communication.md §2.5): the rank with the
/// shortest time, flagged by Dixon's test (≤ 100 ranks) or 3σ.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommSlowRank {
    /// The slow rank.
    pub rank_id: i64,
    /// Group hash.
    pub group: String,
    /// Op name.
    pub op: String,
    /// Ranks tested.
    pub n: u64,
    /// `dixon` or `3sigma`.
    pub test: String,
    /// Dixon's r, or the mean − 3σ bound (µs).
    pub statistic: f64,
    /// The table value, or the mean (µs).
    pub threshold: f64,
    /// The slow rank's time (µs).
    pub time_us: f64,
}

/// A slow-link group across the summarised ranks (communication.md §2.4): the per-op minimum
/// times of the ops of one (op type, data size, rank count), flagged when one lies beyond
/// mean ± 3σ.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommSlowLink {
    /// `"<opType><ranks>_<dataSize>"`.
    pub name: String,
    /// Rows (op × rank).
    pub count: u64,
    /// Mean of the per-op minimum times (ns).
    pub mean_ns: f64,
    /// Sample standard deviation (ns).
    pub std_ns: f64,
    /// Min (ns).
    pub min_ns: f64,
    /// Median (ns).
    pub median_ns: f64,
    /// Max (ns).
    pub max_ns: f64,
    /// max(|max − mean|, |min − mean|) / std.
    pub offset_ratio: f64,
    /// Ops holding the extreme value (on all their ranks).
    pub ops: Vec<String>,
}
