//! Payloads of the memory-snapshot view (torch-snapshot.md §6.3, §7).
//! Re-exported from [`crate::protocol`].
//!
//! A dropped snapshot pickle is a **target**: its index in `InventoryDto::snapshots`. One
//! target may hold several devices (device slots with a trace, then devices with end-state
//! segments only), addressed by their position in [`SnapshotSummaryDto::devices`].
//!
//! Units are in the field names: `bytes` bytes, `_ms` milliseconds **relative to the device's
//! first `time_us`**, `index` 0-based entry index of the device trace. A curve value at entry
//! `i` is the level *after* entry `i` (§7.3).

use serde::{Deserialize, Serialize};

mod chart;
mod live;

pub use chart::*;
pub use live::*;

/// The options of `proflens snapshot` that the settings panel edits (same names and defaults
/// as the CLI flags; `engine::read::snapshot::options_from` turns them into engine options for both).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapshotSettingsDto {
    /// `--top-n`: peaks reported besides the global maximum, OOMs and the end state.
    pub top_n: u32,
    /// `--top-contributors`: contributor rows per point.
    pub top_contributors: u32,
    /// `--dedup-pct`: height tolerance (percent) of the composition-aware dedup.
    pub dedup_pct: f64,
    /// `--min-sep-ms`: minimum separation of two peaks, ms.
    pub min_sep_ms: f64,
    /// `--min-prominence-pct`: minimum prominence, percent of the global maximum.
    pub min_prominence_pct: f64,
    /// `--curve`: `allocated`, `active` or `reserved`.
    pub curve: String,
    /// `--frame-depth`: group contributors by the first k project frames (0 = by site).
    pub frame_depth: u32,
    /// `--project-root`.
    pub project_root: Option<String>,
    /// `--include-prefix` (repeatable).
    pub include_prefix: Vec<String>,
    /// `--exclude-prefix` (repeatable).
    pub exclude_prefix: Vec<String>,
    /// `--link-style`: `vscode`, `cursor`, `github`, `file` or `none`.
    pub link_style: String,
    /// `--repo-url`.
    pub repo_url: Option<String>,
    /// `--commit`.
    pub commit: Option<String>,
    /// `--map RECORDED=LOCAL` (repeatable), as pairs.
    pub path_map: Vec<(String, String)>,
}

impl Default for SnapshotSettingsDto {
    /// The CLI defaults.
    fn default() -> Self {
        SnapshotSettingsDto {
            top_n: 6,
            top_contributors: 15,
            dedup_pct: 3.0,
            min_sep_ms: 0.0,
            min_prominence_pct: 1.0,
            curve: "active".into(),
            frame_depth: 0,
            project_root: None,
            include_prefix: Vec::new(),
            exclude_prefix: Vec::new(),
            link_style: "vscode".into(),
            repo_url: None,
            commit: None,
            path_map: Vec::new(),
        }
    }
}

/// The x axis of a snapshot curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SnapAxis {
    /// Entry index (always available).
    Index,
    /// Time in ms since the device's first `time_us` (only when the trace has `time_us`).
    Time,
}

/// A level with the first entry reaching it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapLevelDto {
    /// Bytes.
    pub bytes: i64,
    /// Entry index (None: no trace).
    pub index: Option<u32>,
    /// Time of that entry, ms since the first `time_us`.
    pub time_ms: Option<f64>,
}

/// A reported point of the peak report (§7.4): global peak, peak, OOM or end state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapPointDto {
    /// `global_peak`, `peak`, `oom` or `end`.
    pub kind: String,
    /// Entry index.
    pub index: u32,
    /// Time, ms since the first `time_us`.
    pub time_ms: Option<f64>,
    /// Height on the peak curve, bytes.
    pub height_bytes: i64,
    /// Allocated bytes at the point.
    pub allocated_bytes: i64,
    /// Active bytes at the point.
    pub active_bytes: i64,
    /// Reserved bytes at the point.
    pub reserved_bytes: i64,
    /// Topographic prominence, bytes (peaks only).
    pub prominence_bytes: Option<i64>,
    /// Recurring-peak cluster size (`×k`), when > 1.
    pub recurring: Option<u32>,
    /// Annotations open at the point, outermost first.
    pub annotations: Vec<String>,
    /// Live bytes (active semantics).
    pub live_bytes: u64,
    /// Live tensors.
    pub live_tensors: u64,
    /// Largest contributor label (site), if any.
    pub top_site: Option<String>,
    /// OOM: bytes requested.
    pub oom_requested_bytes: Option<u64>,
}

/// One contributor group (site or k-frame chain) at a point, with links (§7.5, §7.8).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapContributorDto {
    /// Site label `function @ path:line` (or a PRE bucket label).
    pub site: String,
    /// Link of the site frame in the chosen style (None: style `none` or no frame).
    pub link: Option<String>,
    /// `project`, `python`, `named` or `no_stack`.
    pub site_kind: String,
    /// `in_window`, `pre_known_stack` or `pre_no_stack`.
    pub origin: String,
    /// Requested bytes held.
    pub bytes: u64,
    /// Percent of the point's height.
    pub percent: f64,
    /// Live tensors.
    pub tensors: u64,
    /// Earliest alloc entry index among its in-window records.
    pub first_alloc_index: Option<u32>,
    /// Call chain (first 5 project frames, innermost first), each with its link.
    pub chain: Vec<SnapFrameDto>,
}

/// One frame for display.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapFrameDto {
    /// `function @ path:line` (path mapped / relative to the project root).
    pub label: String,
    /// Link in the chosen style.
    pub link: Option<String>,
    /// True for a project frame (§7.5 rule).
    pub project: bool,
    /// True when MemoryViz's filter hides it (C++/internal frames).
    pub hidden: bool,
    /// True for a native (C++) frame: not a Python source file (`.py`) nor a `<…>` pseudo-file
    /// such as `<frozen runpy>` (the page hides these by default).
    pub native: bool,
}

/// A warning or grouped finding (leaks, delayed frees) of one device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapNoteDto {
    /// Stable code or group label.
    pub code: String,
    /// Message.
    pub message: String,
}

/// One device of a snapshot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapDeviceDto {
    /// Position in [`SnapshotSummaryDto::devices`] (the address used by queries).
    pub slot: u32,
    /// Device ordinal.
    pub device: u32,
    /// Trace entries (0: end-state segments only).
    pub entries: u64,
    /// True when the trace has `time_us` (the time axis is offered).
    pub has_time: bool,
    /// Duration of the trace, ms (last − first `time_us`).
    pub duration_ms: Option<f64>,
    /// Entry counts by action.
    pub actions: Vec<(String, u64)>,
    /// Distinct streams.
    pub streams: u64,
    /// Allocated / active / reserved before the first entry (PRE records, §7.3).
    pub baseline_bytes: (i64, i64, i64),
    /// Maximum of the allocated curve.
    pub max_allocated: SnapLevelDto,
    /// Maximum of the active curve.
    pub max_active: SnapLevelDto,
    /// Maximum of the reserved curve.
    pub max_reserved: SnapLevelDto,
    /// Lifetime records.
    pub records: u64,
    /// Records alive before the window.
    pub pre_records: u64,
    /// `free_completed` without an alloc in the window (ring-buffer truncation signal).
    pub unmatched_free_completed: u64,
    /// Reported points (peak list).
    pub points: Vec<SnapPointDto>,
    /// Leaks grouped by site (allocated in the window, never freed).
    pub leaks: Vec<SnapContributorDto>,
    /// Delayed frees: site, bytes, tensors, max gap in entries.
    pub delayed_frees: Vec<SnapNoteDto>,
    /// Data-quality warnings.
    pub warnings: Vec<SnapNoteDto>,
    /// Golden quantities (§8): `in_window_replay` peak bytes and index, `memoryviz_like` max.
    pub reference: Vec<(String, String)>,
}

/// Summary of one analysed snapshot (reply to a `Run` of the snapshot analysis and to a change
/// of settings).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapshotSummaryDto {
    /// Target index (into `InventoryDto::snapshots`).
    pub target: u32,
    /// File path as dropped.
    pub file: String,
    /// File size, bytes.
    pub bytes: u64,
    /// Pickle protocol (0 for JSON).
    pub protocol: u8,
    /// How the file was written: `pickle protocol N` or `JSON` (torch-snapshot.md §2.6).
    pub encoding: String,
    /// `dict` or `list (segments only)`.
    pub top_level: String,
    /// Detected format features (§3.10), e.g. `time_us`, `history`, `annotations`.
    pub features: Vec<String>,
    /// `allocator_settings` as (key, value), in file order; None when absent.
    pub allocator_settings: Option<Vec<(String, String)>>,
    /// End-state segments: count, Σ total_size, Σ allocated_size, expandable, private pools.
    pub segments: (u64, u64, u64, u64, u64),
    /// End-state block counts by state.
    pub block_states: Vec<(String, u64)>,
    /// Devices.
    pub devices: Vec<SnapDeviceDto>,
    /// The settings this analysis used.
    pub settings: SnapshotSettingsDto,
    /// The invisible-memory note (§4 item 9).
    pub note: String,
}

/// Export formats of the snapshot view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SnapExportKind {
    /// The Markdown peak report, byte-identical to `proflens snapshot --report`.
    ReportMd,
    /// The JSON, byte-identical to `proflens snapshot --json`.
    Json,
}

/// The snapshot view's queries ([`crate::protocol::Query::Snapshot`]), each answered by the
/// worker that analysed `target`. Exports are [`crate::protocol::ExportRequest::Snapshot`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SnapQuery {
    /// Curves of one device. Replies [`SnapReply::Curve`].
    Curve(SnapCurveQuery),
    /// Live set after one entry. Replies [`SnapReply::Live`].
    Live(SnapLiveQuery),
    /// The Active Memory Timeline (stacked bands). Replies [`SnapReply::Bands`].
    Bands(SnapBandsQuery),
    /// Stack of one record. Replies [`SnapReply::Stack`].
    Stack {
        /// Target.
        target: u32,
        /// Device slot.
        slot: u32,
        /// Record id ([`SnapTensorDto::record`]).
        record: u32,
    },
    /// End-state segments of one device. Replies [`SnapReply::Segments`].
    Segments {
        /// Target.
        target: u32,
        /// Device slot.
        slot: u32,
        /// At most this many segment rows.
        limit: u32,
    },
    /// The allocator state after one entry (segment map, fragmentation, OOM). Replies
    /// [`SnapReply::Allocator`].
    Allocator(super::snapshot_allocator::SnapAllocatorQuery),
    /// New settings: re-analyses the decoded snapshot. Replies [`SnapReply::Summary`].
    Settings {
        /// Target.
        target: u32,
        /// The settings.
        settings: SnapshotSettingsDto,
    },
}

impl SnapQuery {
    /// The target the request is about.
    pub fn target(&self) -> u32 {
        match self {
            SnapQuery::Curve(q) => q.target,
            SnapQuery::Live(q) => q.target,
            SnapQuery::Bands(q) => q.target,
            SnapQuery::Allocator(q) => q.target,
            SnapQuery::Stack { target, .. }
            | SnapQuery::Segments { target, .. }
            | SnapQuery::Settings { target, .. } => *target,
        }
    }
}

/// Replies to [`SnapQuery`] ([`crate::protocol::Reply::Snapshot`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SnapReply {
    /// The snapshot re-analysed with new settings (reply to [`SnapQuery::Settings`]; the
    /// first summary arrives in [`crate::protocol::Response::Done`]).
    Summary(SnapshotSummaryDto),
    /// Reply to [`SnapQuery::Curve`].
    Curve(SnapCurveDto),
    /// Reply to [`SnapQuery::Live`].
    Live(SnapLiveDto),
    /// Reply to [`SnapQuery::Bands`].
    Bands(SnapBandsDto),
    /// Reply to [`SnapQuery::Stack`].
    Stack(SnapStackDto),
    /// Reply to [`SnapQuery::Segments`].
    Segments(SnapSegmentsDto),
    /// Reply to [`SnapQuery::Allocator`].
    Allocator(super::snapshot_allocator::SnapAllocatorDto),
}
