//! The cluster summary format, v1 (normative copy: `docs/cluster-summary.md`).
//!
//! ```text
//! proflens summarize PATH...  ─▶ one RankSummary per target, one JSON line each (≤ 64 KiB)
//! proflens reduce PARTS...    ─▶ one ClusterSummary file (JSON, optionally gzip)
//! the page                    ─▶ ClusterSummary::from_slice (refuses other formats, newer majors)
//! ```
//!
//! Plain serde data, no rule: the per-rank numbers are copied from the anomaly JSON's values
//! (`engine::export::cluster::summary`), every cross-rank result is computed by `engine::export::cluster::reduce`.
//! Units are in the field names: `_ms` milliseconds, `_us` microseconds, `_s` seconds,
//! `bytes` bytes; ratios are fractions in [0, 1].

use serde::{Deserialize, Deserializer, Serialize};

pub use super::cluster_comm::{CommOpTime, CommSlowLink, CommSlowRank, CommSummary, MAX_COMM_OPS};

/// The `format` string of a [`ClusterSummary`] (how the page's inventory recognises the file).
pub const FORMAT: &str = "proflens-cluster-summary";
/// The major version this build writes and reads. A change old readers cannot ignore bumps it;
/// new fields old readers may ignore do not (unknown fields are ignored when reading).
pub const VERSION: u32 = 1;

/// At most this many steps per rank summary (the rest counted in `steps_dropped`).
pub const MAX_STEPS: usize = 100;
/// At most this many top bubbles per rank summary.
pub const MAX_BUBBLES: usize = 10;
/// At most this many live-at-peak sites.
pub const MAX_SITES: usize = 10;
/// At most this many snapshot entries per rank summary, and this many peaks per entry.
pub const MAX_SNAPSHOTS: usize = 10;
/// At most this many peaks per snapshot entry.
pub const MAX_PEAKS: usize = 10;
/// At most this many problems per rank summary.
pub const MAX_PROBLEMS: usize = 50;
/// At most this many characters of one problem message.
pub const MAX_MESSAGE_CHARS: usize = 300;
/// The bound of one serialised [`RankSummary`] line, bytes (without the newline).
pub const MAX_RANK_SUMMARY_BYTES: usize = 64 * 1024;
/// At most this many outliers in a [`ClusterSummary`] (the largest robust z first).
pub const MAX_OUTLIERS: usize = 1000;

/// `null` in a float field reads as NaN (serde_json writes a NaN or infinity as `null`).
fn f64_or_nan<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    // The page's message codec (not human-readable) carries the `f64` itself, NaN included.
    if !d.is_human_readable() {
        return f64::deserialize(d);
    }
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// What a target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// An Ascend rank folder (`*_ascend_pt`).
    Ascend,
    /// A PyTorch profiler (Kineto) GPU trace, or the traces of one rank.
    Kineto,
    /// A PyTorch allocator snapshot pickle.
    Snapshot,
}

/// How a target's analysis ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankStatus {
    /// Analysed, no error.
    Ok,
    /// Analysed, with at least one error problem (a file or part of one not used).
    Partial,
    /// Nothing analysed; `problems` says why.
    Failed,
}

/// One analysis target as `proflens targets --json` lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetEntry {
    /// Stable id: the canonical path of the rank folder, trace or pickle (for loose traces of
    /// one rank: the folder, `#rank<N>`).
    pub target: String,
    /// What it is.
    pub kind: TargetKind,
    /// Rank id (inventory rules, ascend-memory.md §3.1), when known.
    pub rank_id: Option<i64>,
    /// Role (§3.3), when known.
    pub role: Option<String>,
    /// What `proflens summarize` is given for this target: the rank folder, or the files.
    pub paths: Vec<String>,
    /// Bytes of the target's known input files.
    pub bytes: u64,
    /// The canonical root the target was found under (give it to `summarize --root`).
    pub root: String,
}

/// One step (anomaly.md §6.3 ext `steps[]`): the values of `proflens anomaly`'s JSON, same names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[allow(missing_docs)] // field names, units and rules are those of anomaly.md §6.3 `steps[]`
pub struct StepSummary {
    pub step_id: String,
    #[serde(deserialize_with = "f64_or_nan")]
    pub service_ms: f64,
    #[serde(deserialize_with = "f64_or_nan")]
    pub device_busy_union_ms: f64,
    #[serde(deserialize_with = "f64_or_nan")]
    pub underfeed_ms: f64,
    #[serde(deserialize_with = "f64_or_nan")]
    pub underfeed_ratio: f64,
    #[serde(deserialize_with = "f64_or_nan")]
    pub prelaunch_gap_ms: f64,
    #[serde(deserialize_with = "f64_or_nan")]
    pub tail_gap_ms: f64,
    #[serde(deserialize_with = "f64_or_nan")]
    pub internal_bubble_total_ms: f64,
    #[serde(deserialize_with = "f64_or_nan")]
    pub largest_internal_bubble_ms: f64,
    pub bubble_count: u64,
    pub total_kernel_count: u64,
    #[serde(deserialize_with = "f64_or_nan")]
    pub kernel_duration_sum_ms: f64,
    pub tags: Vec<String>,
    pub labels: Vec<String>,
}

/// The rank's row inputs of the cross-rank table (anomaly.md §13.4, `cross_rank::row_of`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnomalySummary {
    /// Steps of the rank (all of them, also those past [`MAX_STEPS`]).
    pub step_count: u64,
    /// Mean step service, ms.
    #[serde(deserialize_with = "f64_or_nan")]
    pub service_ms_avg: f64,
    /// Mean device busy union, ms.
    #[serde(deserialize_with = "f64_or_nan")]
    pub busy_union_ms_avg: f64,
    /// Mean underfeed ratio.
    #[serde(deserialize_with = "f64_or_nan")]
    pub underfeed_ratio_avg: f64,
    /// Communication total, ms (communication.json when present, else kernels; §5.2).
    #[serde(deserialize_with = "f64_or_nan")]
    pub comm_total_ms: f64,
    /// Elapse-weighted comm wait ratio (§5.13), when communication was seen.
    pub comm_wait_ratio_weighted: Option<f64>,
    /// Mean bubbles per step.
    #[serde(deserialize_with = "f64_or_nan")]
    pub bubble_count_avg: f64,
    /// Dominant idle pattern of group `g0` (§6.3), `none` without steps.
    pub dominant_idle_pattern: String,
    /// Dominant anomaly tags of group `g0` (§6.3).
    pub dominant_anomaly_tags: Vec<String>,
}

/// One bubble window (anomaly.md §6.4 `bubble_windows[]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BubbleSummary {
    /// Step id, or `global`.
    pub step_id: String,
    /// `prelaunch`, `internal`, `tail` or `global` (§6.4 `scope`).
    pub scope: String,
    /// Start, µs on the rank's clock (the nearest f64 of the anomaly JSON's exact value).
    pub start_us: f64,
    /// End, µs.
    pub end_us: f64,
    /// Length, ms.
    pub duration_ms: f64,
    /// Candidate labels (§6.4 `candidate_labels`).
    pub labels: Vec<String>,
}

/// One group of rows live at the memory peak (ascend-memory.md §9.6 `live_by_user_frame`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SiteKb {
    /// The innermost user frame of the rows (`""`: no user frame).
    pub site: String,
    /// Σ `size_kb` of the live rows of this site, KiB.
    pub kb: f64,
    /// Live rows of this site.
    pub count: u64,
}

/// The rank's allocator peak (ascend-memory.md §9.6, main pool: PTA when it has rows).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemorySummary {
    /// Pool the peak is of (`PTA`, `GE`, …; §8.2 `component`).
    pub component: String,
    /// Maximum allocated total, MiB (`peak_allocated_mb`).
    pub peak_allocated_mb: f64,
    /// Time of the peak sample, ns on the rank's clock.
    pub peak_time_ns: i64,
    /// Reserved total holding at the peak, MiB.
    pub reserved_at_peak_mb: Option<f64>,
    /// Maximum reserved total, MiB.
    pub max_reserved_mb: Option<f64>,
    /// Σ `size_kb` of the rows live at the peak, KiB.
    pub live_kb: f64,
    /// Largest live sites at the peak, KiB descending (≤ [`MAX_SITES`]).
    pub live_at_peak_top_sites: Vec<SiteKb>,
    /// Sites left out (of the report's top 15).
    pub sites_dropped: u64,
}

/// One reported point of a snapshot device (torch-snapshot.md §7.4: global peak, other peaks,
/// OOM, end state).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeakSummary {
    /// Why it is reported (`global_peak`, `peak`, `oom`, `end_state`), as the snapshot JSON.
    pub kind: String,
    /// Entry index in the device's trace.
    pub index: u64,
    /// Height on the peak curve, bytes (the snapshot JSON's `height_bytes`).
    pub height_bytes: i64,
}

/// One device of one snapshot pickle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapshotSummary {
    /// The pickle, as given.
    pub file: String,
    /// Device ordinal.
    pub device: u32,
    /// Maximum allocated bytes of the device.
    pub peak_bytes: i64,
    /// Reported points in the snapshot JSON's order (≤ [`MAX_PEAKS`]).
    pub peaks: Vec<PeakSummary>,
    /// Points left out.
    pub peaks_dropped: u64,
}

/// Severity of a summarised problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemSeverity {
    /// A file or part of it not used.
    Error,
    /// Used, with a caveat.
    Warning,
}

/// One problem (warnings and errors only), located.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProblemSummary {
    /// How bad.
    pub severity: ProblemSeverity,
    /// Stable code (`ANOM-*`, `MEM-*`, `SNAP-*`, `CLUSTER-*`).
    pub code: String,
    /// File it is about, as given.
    pub file: String,
    /// Where in the file (`line 12`, `byte 4096`), empty when the whole file.
    pub location: String,
    /// What was expected, in words (≤ [`MAX_MESSAGE_CHARS`] characters).
    pub message: String,
}

/// Counts of problems, all of them (also those past [`MAX_PROBLEMS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProblemCounts {
    /// Errors.
    pub errors: u64,
    /// Warnings.
    pub warnings: u64,
}

/// The compact summary of one target (one JSON line of `proflens summarize`; ≤
/// [`MAX_RANK_SUMMARY_BYTES`] bytes serialised).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankSummary {
    /// Id of the target (as `proflens targets` lists it).
    pub target: String,
    /// What it is.
    pub kind: TargetKind,
    /// Rank id, when known.
    pub rank_id: Option<i64>,
    /// Role, when known.
    pub role: Option<String>,
    /// Rank folder (or file) on disk, as given to `summarize` (what "open this rank" asks for).
    pub rank_dir: String,
    /// How the analysis ended.
    pub status: RankStatus,
    /// Bytes of the target's input files read.
    pub bytes_read: u64,
    /// Wall time of the target's analysis, s.
    pub analysis_s: f64,
    /// Steps, in step order (≤ [`MAX_STEPS`]).
    pub steps: Vec<StepSummary>,
    /// Steps left out.
    pub steps_dropped: u64,
    /// The cross-rank row inputs; `null` when no anomaly analysis ran.
    pub anomaly: Option<AnomalySummary>,
    /// Longest bubble windows first (≤ [`MAX_BUBBLES`]).
    pub top_bubbles: Vec<BubbleSummary>,
    /// Bubble windows left out.
    pub top_bubbles_dropped: u64,
    /// Memory peak; `null` when no memory analysis ran.
    pub memory: Option<MemorySummary>,
    /// Snapshot peaks, per file and device (≤ [`MAX_SNAPSHOTS`]).
    pub snapshots: Vec<SnapshotSummary>,
    /// Snapshot entries left out.
    pub snapshots_dropped: u64,
    /// Warnings and errors (≤ [`MAX_PROBLEMS`]).
    pub problems: Vec<ProblemSummary>,
    /// Problems left out.
    pub problems_dropped: u64,
    /// Counts of every warning and error.
    pub problem_counts: ProblemCounts,
    /// The rank's communication totals (`docs/rules/communication.md` §2.1 formulas over every
    /// op of the rank); absent when the rank has no `communication.json` read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comm: Option<CommSummary>,
}

impl RankSummary {
    /// A summary of `target` with nothing in it yet: no rank id or role, `failed`, every list
    /// empty, every count 0 (the builders fill what the analyses produced).
    pub fn new(target: String, kind: TargetKind, rank_dir: String) -> RankSummary {
        RankSummary {
            target,
            kind,
            rank_id: None,
            role: None,
            rank_dir,
            status: RankStatus::Failed,
            bytes_read: 0,
            analysis_s: 0.0,
            steps: vec![],
            steps_dropped: 0,
            anomaly: None,
            top_bubbles: vec![],
            top_bubbles_dropped: 0,
            memory: None,
            snapshots: vec![],
            snapshots_dropped: 0,
            problems: vec![],
            problems_dropped: 0,
            problem_counts: ProblemCounts::default(),
            comm: None,
        }
    }
}

/// How the summary was produced (filled by the caller of `reduce`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// `ray`, `local` or `cli`.
    pub mode: String,
    /// Tasks the map ran.
    pub tasks: u64,
    /// Wall time of the whole run, s, when known.
    pub wall_s: Option<f64>,
}

/// One row of the cross-rank table (anomaly.md §13.4), in `ranks` order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[allow(missing_docs)] // the names and units of `AnomalySummary` and anomaly.md §13.4
pub struct CrossRankRow {
    /// Index into [`ClusterSummary::ranks`].
    pub rank_index: u64,
    /// Rank id (the rank's position in `ranks` when unknown).
    pub rank_id: i64,
    pub role: Option<String>,
    pub steps: u64,
    pub service_ms_avg: f64,
    pub busy_union_ms_avg: f64,
    pub underfeed_ratio_avg: f64,
    pub comm_total_ms: f64,
    pub comm_wait_ratio_weighted: Option<f64>,
    pub bubble_count_avg: f64,
    /// `(x − median) / (1.4826 · MAD)` of `service_ms_avg`; `null` when infinite (MAD 0).
    pub robust_z: Option<f64>,
    /// > 5 % above the median and robust z > 3 (§13.4).
    pub slow: bool,
}

/// Rank × step matrices for the heatmap: row `i` is `ranks[i]`, column `j` is `step_ids[j]`;
/// `null` where the rank has no such step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[allow(missing_docs)] // the step fields of the same names
pub struct Matrices {
    /// Union of the ranks' step ids, in step order (trailing number, then text).
    pub step_ids: Vec<String>,
    pub service_ms: Vec<Vec<Option<f64>>>,
    pub underfeed_ratio: Vec<Vec<Option<f64>>>,
    pub device_busy_union_ms: Vec<Vec<Option<f64>>>,
    pub internal_bubble_total_ms: Vec<Vec<Option<f64>>>,
    pub bubble_count: Vec<Vec<Option<f64>>>,
}

/// One rank's value of one metric at one step, far above the other ranks (robust z > 3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outlier {
    /// Matrix name (`service_ms`, `underfeed_ratio`, …).
    pub metric: String,
    /// Index into [`ClusterSummary::ranks`].
    pub rank_index: u64,
    /// Rank id, when known.
    pub rank_id: Option<i64>,
    /// Role, when known.
    pub role: Option<String>,
    /// Step id.
    pub step_id: String,
    /// The rank's value.
    pub value: f64,
    /// Median over the ranks with this step.
    pub median: f64,
    /// Robust z; `null` when infinite (MAD 0, value above the median).
    pub robust_z: Option<f64>,
}

/// The cluster summary file (`proflens reduce`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusterSummary {
    /// Always [`FORMAT`].
    pub format: String,
    /// Major version, [`VERSION`].
    pub version: u32,
    /// `proflens <crate version>`.
    pub generator: String,
    /// The roots the run was given.
    pub roots: Vec<String>,
    /// How it was produced.
    pub run: RunInfo,
    /// `ranks.len()`.
    pub rank_count: u64,
    /// Every target's summary, ordered by (role, rank_id, rank_dir); unknown ids last.
    pub ranks: Vec<RankSummary>,
    /// The cross-rank table over the ranks with an anomaly analysis.
    pub cross_rank: Vec<CrossRankRow>,
    /// Rank ids of the slow rows of `cross_rank`.
    pub slow_ranks: Vec<i64>,
    /// Rank × step matrices.
    pub matrices: Matrices,
    /// Outliers per metric and step, largest robust z first (≤ [`MAX_OUTLIERS`]).
    pub outliers: Vec<Outlier>,
    /// Outliers left out.
    pub outliers_dropped: u64,
    /// Problem counts over every rank and the part files.
    pub problems_total: ProblemCounts,
    /// Problems of the reduce itself (bad part lines, duplicate targets), located (≤ [`MAX_PROBLEMS`]).
    pub problems: Vec<ProblemSummary>,
    /// Reduce problems left out.
    pub problems_dropped: u64,
    /// Slow ranks of the communication ops the rank summaries carry, by start time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comm_slow_ranks: Vec<CommSlowRank>,
    /// Slow-link groups of the communication ops the rank summaries carry (those with a data
    /// size), by offset ratio descending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comm_slow_links: Vec<CommSlowLink>,
}

/// Why a file is not a summary this build can read.
#[derive(Clone, Debug, PartialEq)]
pub enum SummaryError {
    /// Not JSON, or not an object with a `format` string.
    NotASummary(String),
    /// Another `format`.
    UnknownFormat(String),
    /// A newer major version than [`VERSION`].
    NewerVersion(u64),
    /// The right format and version, but a field is missing or has the wrong type.
    Invalid(String),
}

impl std::fmt::Display for SummaryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SummaryError::NotASummary(e) => {
                write!(f, "not a proflens cluster summary (expected a JSON object with \"format\": \"{FORMAT}\"): {e}")
            }
            SummaryError::UnknownFormat(s) => write!(
                f,
                "unknown summary format \"{s}\": this build reads \"{FORMAT}\" only"
            ),
            SummaryError::NewerVersion(v) => write!(
                f,
                "cluster summary version {v} is newer than this build reads (version {VERSION}): open it with a newer proflens"
            ),
            SummaryError::Invalid(e) => write!(f, "damaged cluster summary: {e}"),
        }
    }
}

#[derive(Deserialize)]
struct Head {
    format: Option<serde_json::Value>,
    version: Option<serde_json::Value>,
}

impl ClusterSummary {
    /// Reads a summary from its JSON bytes: refuses another `format` or a newer major version
    /// before reading the rest (so the message says so, not "missing field").
    ///
    /// Errors: [`SummaryError`], whose `Display` is the message for the person.
    pub fn from_slice(bytes: &[u8]) -> Result<ClusterSummary, SummaryError> {
        let head: Head =
            serde_json::from_slice(bytes).map_err(|e| SummaryError::NotASummary(e.to_string()))?;
        match head.format {
            Some(serde_json::Value::String(s)) if s == FORMAT => {}
            Some(serde_json::Value::String(s)) => return Err(SummaryError::UnknownFormat(s)),
            _ => {
                return Err(SummaryError::NotASummary(
                    "no \"format\" string".to_string(),
                ))
            }
        }
        match head.version.as_ref().and_then(|v| v.as_u64()) {
            Some(v) if v > VERSION as u64 => return Err(SummaryError::NewerVersion(v)),
            Some(_) => {}
            None => {
                return Err(SummaryError::Invalid(
                    "\"version\" is not a whole number".to_string(),
                ))
            }
        }
        serde_json::from_slice(bytes).map_err(|e| SummaryError::Invalid(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minimal() -> ClusterSummary {
        ClusterSummary {
            format: FORMAT.into(),
            version: VERSION,
            generator: "proflens test".into(),
            roots: vec!["/r".into()],
            run: RunInfo {
                mode: "cli".into(),
                tasks: 1,
                wall_s: None,
            },
            rank_count: 0,
            ranks: vec![],
            cross_rank: vec![],
            slow_ranks: vec![],
            matrices: Matrices::default(),
            outliers: vec![],
            outliers_dropped: 0,
            problems_total: ProblemCounts::default(),
            problems: vec![],
            problems_dropped: 0,
            comm_slow_ranks: vec![],
            comm_slow_links: vec![],
        }
    }

    #[test]
    fn round_trips_and_refuses_other_formats_and_newer_majors() {
        let s = minimal();
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(ClusterSummary::from_slice(text.as_bytes()).unwrap(), s);
        let other = text.replace(FORMAT, "something-else");
        let e = ClusterSummary::from_slice(other.as_bytes()).unwrap_err();
        assert_eq!(e, SummaryError::UnknownFormat("something-else".into()));
        assert!(e
            .to_string()
            .contains("unknown summary format \"something-else\""));
        let newer = text.replace("\"version\":1", "\"version\":2");
        let e = ClusterSummary::from_slice(newer.as_bytes()).unwrap_err();
        assert_eq!(e, SummaryError::NewerVersion(2));
        assert!(e.to_string().contains("version 2 is newer"));
        // A newer minor (an added field) still reads.
        let added = text.replacen('{', "{\"new_field\":[1,2],", 1);
        assert_eq!(ClusterSummary::from_slice(added.as_bytes()).unwrap(), s);
        let e = ClusterSummary::from_slice(b"[1,2]").unwrap_err();
        assert!(matches!(e, SummaryError::NotASummary(_)), "{e}");
        let e =
            ClusterSummary::from_slice(text.replace("\"ranks\":[],", "").as_bytes()).unwrap_err();
        assert!(e.to_string().contains("missing field `ranks`"), "{e}");
    }

    #[test]
    fn a_null_float_reads_as_nan() {
        let j = r#"{"step_count":1,"service_ms_avg":null,"busy_union_ms_avg":1.5,
            "underfeed_ratio_avg":0.0,"comm_total_ms":0.0,"comm_wait_ratio_weighted":null,
            "bubble_count_avg":2.0,"dominant_idle_pattern":"none","dominant_anomaly_tags":[]}"#;
        let a: AnomalySummary = serde_json::from_str(j).unwrap();
        assert!(a.service_ms_avg.is_nan());
        assert_eq!(a.busy_union_ms_avg, 1.5);
    }
}
