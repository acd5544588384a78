//! The cross-rank table's rows (anomaly.md §13.4), built by `views::cross_rank` from the
//! ranks' anomaly summaries.

use serde::{Deserialize, Serialize};

/// One row of the cross-rank table (anomaly.md §13.4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CrossRankRowDto {
    /// Rank folder index.
    pub rank: u32,
    /// Rank id.
    pub rank_id: Option<i64>,
    /// Steps.
    pub steps: u32,
    /// Mean step service, ms.
    pub service_ms_avg: f64,
    /// Mean busy union, ms.
    pub busy_union_ms_avg: f64,
    /// Mean underfeed ratio.
    pub underfeed_ratio_avg: f64,
    /// Communication total, ms.
    pub comm_total_ms: f64,
    /// Elapse-weighted comm wait ratio.
    pub comm_wait_ratio_weighted: Option<f64>,
    /// Mean internal bubbles per step.
    pub bubble_count_avg: f64,
    /// Dominant idle pattern.
    pub dominant_idle_pattern: String,
    /// Robust z-score of `service_ms_avg`; `None` when MAD is 0 and the value is above the
    /// median, or when the rank was not compared (`compared`).
    pub robust_z: Option<f64>,
    /// The rank had peers to be compared with: `false` for the only rank of its role, or of
    /// the run (anomaly.md §13.4), whose robust z reads "—".
    pub compared: bool,
    /// Slow rank: > 5 % above the median and robust z > 3.
    pub slow: bool,
    /// The role whose ranks the median and robust z were computed among, when the ranks hold
    /// several roles (anomaly.md §13.4 grouped by role, Decision); `None` with one role.
    pub group: Option<String>,
}
