//! The snapshot view's canvases: the curves of one device (allocated / active / reserved,
//! min/max per column, the reported points) and the Active Memory Timeline's bands.

use serde::{Deserialize, Serialize};

use super::SnapAxis;

/// A request for the curves of one device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapCurveQuery {
    /// Target.
    pub target: u32,
    /// Device slot.
    pub slot: u32,
    /// Axis.
    pub axis: SnapAxis,
    /// Visible window in axis units; None = everything.
    pub range: Option<(f64, f64)>,
    /// Pixel columns.
    pub width_px: u32,
}

/// One downsampled curve: per pixel column the minimum and maximum, bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapSeriesDto {
    /// `allocated`, `active`, `reserved` or `reserved_minus_active` (fragmentation, §7.3).
    pub name: String,
    /// Per-column minimum, bytes.
    pub min: Vec<f64>,
    /// Per-column maximum, bytes.
    pub max: Vec<f64>,
}

/// A mark on the chart (reported point).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapMarkDto {
    /// `global_peak`, `peak`, `oom` or `end`.
    pub kind: String,
    /// Position in axis units.
    pub x: f64,
    /// Height, bytes.
    pub bytes: i64,
    /// Entry index.
    pub index: u32,
}

/// Curves of one device over one window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapCurveDto {
    /// Target.
    pub target: u32,
    /// Device slot.
    pub slot: u32,
    /// Axis used (Index when Time was asked of a trace without `time_us`).
    pub axis: SnapAxis,
    /// Window start, axis units.
    pub x0: f64,
    /// Window end, axis units.
    pub x1: f64,
    /// Whole range, axis units (for reset / pan limits).
    pub full: (f64, f64),
    /// allocated, active, reserved, reserved_minus_active.
    pub series: Vec<SnapSeriesDto>,
    /// Largest value in the window, bytes.
    pub y_max: f64,
    /// Reported points (all; the chart draws those inside the window).
    pub marks: Vec<SnapMarkDto>,
    /// Entries inside the window.
    pub entries_in_window: u64,
}

/// A request for the Active Memory Timeline of one device (torch-snapshot.md §6.1, MemoryViz's
/// stacked per-allocation chart) over one window, laid out for `width_px` columns and a plot
/// `height_px` tall (bands under one pixel go to the summarised band).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapBandsQuery {
    /// Target.
    pub target: u32,
    /// Device slot.
    pub slot: u32,
    /// Axis.
    pub axis: SnapAxis,
    /// Visible window in axis units; None = everything.
    pub range: Option<(f64, f64)>,
    /// Pixel columns.
    pub width_px: u32,
    /// Plot height, pixels.
    pub height_px: u32,
}

/// One allocation drawn as its own band of the stacked chart: a lifetime record, live over the
/// columns `first_col ..` (contiguous), its bottom edge given as runs of equal offsets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapBandDto {
    /// Record id (for [`SnapQuery::Stack`](super::SnapQuery::Stack)).
    pub record: u32,
    /// Requested bytes (the band's height).
    pub bytes: u64,
    /// Block address, `0x<hex>`.
    pub addr: String,
    /// MemoryViz's versioned name `b'<hex>_<version>'` (to cross-reference).
    pub memoryviz_name: String,
    /// Alloc entry index (None: allocated before the window).
    pub alloc_index: Option<u32>,
    /// Site label of the allocation (§7.5).
    pub site: String,
    /// First column the band is drawn in.
    pub first_col: u32,
    /// `(columns, offset bytes)`: the band's bottom edge, `columns` consecutive columns at a
    /// time; the runs cover the band's columns exactly.
    pub runs: Vec<(u32, u64)>,
}

/// The stacked per-allocation chart of one window (reply to [`SnapBandsQuery`]).
///
/// Column `c` shows the live set (active semantics) after entry `reps[c]` (−1: before the
/// first entry), the entry where the active curve is highest inside the column — so the top of
/// the stack is the curve's column maximum and no peak is lost. Bands are stacked in allocation
/// order (records alive before the window first); the summarised band sits on top of them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapBandsDto {
    /// Target.
    pub target: u32,
    /// Device slot.
    pub slot: u32,
    /// Axis used.
    pub axis: SnapAxis,
    /// Window start, axis units.
    pub x0: f64,
    /// Window end, axis units.
    pub x1: f64,
    /// Whole range, axis units.
    pub full: (f64, f64),
    /// Per column, the entry whose live set it shows (−1: before the first entry).
    pub reps: Vec<i64>,
    /// Largest column total, bytes.
    pub y_max: f64,
    /// Bands drawn one by one, in stacking order (bottom first).
    pub bands: Vec<SnapBandDto>,
    /// Per column, bytes of the summarised band (allocations too small to draw one by one).
    pub summarised: Vec<u64>,
    /// Records live in at least one column.
    pub records_in_view: u64,
    /// Of those, records in the summarised band.
    pub summarised_records: u64,
    /// Smallest allocation drawn on its own, bytes (smaller ones are summarised).
    pub min_band_bytes: u64,
    /// Entries inside the window.
    pub entries_in_window: u64,
}
