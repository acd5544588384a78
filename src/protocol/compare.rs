//! The Compare tab's vocabulary: side B's files sent to the worker that
//! holds side A, the comparison it computes from both stores, and its exports.
//!
//! The tables carry the diff document's own values (the JSON `proflens diff A B --json`
//! writes), one [`CellDto`] per field, so the page shows exactly what the export holds; units
//! are in [`ColumnDto::unit`] and formatted by the UI through `views::format`.

use serde::{Deserialize, Serialize};

use super::{FileMeta, ProblemsDto};

/// "Compare with…": side B's files (their `File` objects travel beside, in the same order,
/// as with [`super::Request::Open`]) and which input of side A to compare.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareRequest {
    /// Side B's files (paths relative to B's dropped root).
    pub files: Vec<FileMeta>,
    /// Side A's name in the documents (the dropped folder's or file's name).
    pub a_name: String,
    /// Side B's name.
    pub b_name: String,
    /// Snapshots: side A's snapshot file (index in A's inventory; the one the snapshot tab
    /// shows). Ignored for traces, rank folders and runs.
    pub a_snapshot: u32,
    /// The overlay's columns (snapshots; 1..=8192).
    pub overlay_columns: u32,
    /// Side A's rank folders analysed by other pool workers: their rank-table figures, from
    /// the summaries those workers sent (`views::cross_rank::compare_rank`). The compared
    /// rank (the first by rank id) must be held by the worker receiving the request.
    #[serde(default)]
    pub a_elsewhere: Vec<RankElsewhereDto>,
    /// Side B is side A's snapshot file itself (`files` empty): "compare devices of this
    /// file", `proflens diff F F --a-device X --b-device Y`. Nothing is read.
    #[serde(default)]
    pub b_is_a: bool,
    /// The options of `proflens diff` the comparison is computed with.
    #[serde(default)]
    pub options: CompareOptions,
}

/// The options of `proflens diff` the Compare tab offers (each control re-queries the worker
/// with [`super::Request::CompareAgain`], which recomputes from both stores).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompareOptions {
    /// Snapshots: compare only this device of side A (`--a-device`).
    pub a_device: Option<u32>,
    /// Snapshots: compare only this device of side B (`--b-device`).
    pub b_device: Option<u32>,
    /// Snapshots: the overlay's axis is time (`--overlay-axis time`), else the entry index.
    pub time_axis: bool,
    /// Snapshots: align the overlaid curves at the first start of this annotation
    /// (`--align`), else at their first entries.
    pub align: Option<String>,
    /// Traces, rank folders, runs: the step whose ops are compared (`--step` / `--all-steps`).
    pub step: CompareStep,
    /// Runs: the compared rank of each side (`--rank`), else the first by rank id.
    pub rank: Option<i64>,
}

/// The step whose ops are compared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CompareStep {
    /// The first step (the CLI's default, as HTA's TraceDiff).
    #[default]
    First,
    /// The n-th step, counted from 1 (`--step N`).
    Nth(u32),
    /// The whole captures (`--all-steps`).
    All,
}

/// What the controls may choose from, as the comparison's inputs offer it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompareChoicesDto {
    /// Snapshots: side A's analysed devices.
    pub a_devices: Vec<u32>,
    /// Snapshots: side B's analysed devices.
    pub b_devices: Vec<u32>,
    /// Snapshots: the annotations with a start on both sides (in A's order of first start).
    pub annotations: Vec<String>,
    /// Snapshots: side B is side A's file (two devices of one file).
    pub b_is_a: bool,
    /// Runs: the rank ids both sides analysed (`--rank` choices).
    pub ranks: Vec<i64>,
    /// Traces: the steps of the compared ranks (the larger side's count; `--step` choices).
    pub steps: u32,
}

/// A rank of side A held by another worker, as the rank table reads it (anomaly.md §13.4
/// figures and the main pool's peak, copied from its summaries).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankElsewhereDto {
    /// Rank folder index in A's inventory.
    pub target: u32,
    /// Rank id, when known.
    pub rank_id: Option<i64>,
    /// Number of steps.
    pub steps: u32,
    /// Mean step service, ms.
    pub service_ms_avg: f64,
    /// Mean device busy union, ms.
    pub busy_union_ms_avg: f64,
    /// Mean underfeed ratio.
    pub underfeed_ratio_avg: f64,
    /// Communication total, ms.
    pub comm_total_ms: f64,
    /// Elapse-weighted comm wait ratio.
    pub comm_wait_ratio_weighted: Option<f64>,
    /// Bubbles per step.
    pub bubble_count_avg: f64,
    /// Peak allocated of the main allocator pool, MiB (memory events analysed).
    pub peak_allocated_mb: Option<f64>,
}

/// What kind of inputs were compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CompareKind {
    /// Two snapshot files (`kind: "snapshot"`).
    Snapshot,
    /// Two traces, rank folders or runs (`kind: "trace"`).
    Trace,
}

/// How a column's values read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnitDto {
    /// Text (names, sites, labels).
    Text,
    /// Bytes (integers).
    Bytes,
    /// Milliseconds.
    Ms,
    /// Microseconds.
    Us,
    /// MiB.
    Mib,
    /// KiB.
    Kib,
    /// A count.
    Count,
    /// A plain number (ratios, averages).
    Number,
    /// A snapshot site label: text, shown short (`views::format::site_label`), the full label
    /// in the cell's title.
    Site,
}

/// One column.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnDto {
    /// Header text.
    pub title: String,
    /// The document's field (`delta_bytes`, `a.service_ms_avg`).
    pub field: String,
    /// Unit.
    pub unit: UnitDto,
    /// A B − A column (signed, coloured).
    pub delta: bool,
}

/// One value of the document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum CellDto {
    /// `null` or absent.
    Null,
    /// A string.
    Text(String),
    /// An integer.
    Int(i64),
    /// A float.
    Num(f64),
}

/// One table of the comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareTableDto {
    /// Stable id (`dev0.sites_at_peak`, `ops`, `steps`, `ranks`, …), used in the URL.
    pub id: String,
    /// Title shown above the table.
    pub title: String,
    /// Columns.
    pub columns: Vec<ColumnDto>,
    /// Rows, in the document's order (largest change first where the document orders so).
    pub rows: Vec<Vec<CellDto>>,
}

/// One curve of one side, min/max per column (bytes; `None` outside the side's entries).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OverlaySeriesDto {
    /// `allocated` | `reserved`.
    pub curve: String,
    /// Per column minimum.
    pub min: Vec<Option<i64>>,
    /// Per column maximum.
    pub max: Vec<Option<i64>>,
}

/// Both sides' curves of one device on one axis (`proflens diff --overlay COLUMNS`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OverlayDto {
    /// Device ordinal (side A's).
    pub device: u32,
    /// `index` or `time_ms`.
    pub axis: String,
    /// The annotation both sides are aligned at (`None`: their first entries).
    #[serde(default)]
    pub align: Option<String>,
    /// Window start in aligned coordinates.
    pub x0: f64,
    /// Window end.
    pub x1: f64,
    /// Side A's curves.
    pub a: Vec<OverlaySeriesDto>,
    /// Side B's curves.
    pub b: Vec<OverlaySeriesDto>,
}

/// A headline figure: one quantity on both sides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FactDto {
    /// What it is (`device 0 global peak`, `step 1 service`).
    pub label: String,
    /// Unit of the three values.
    pub unit: UnitDto,
    /// Side A.
    pub a: CellDto,
    /// Side B.
    pub b: CellDto,
    /// B − A.
    pub delta: CellDto,
}

/// The comparison as the Compare tab shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareViewDto {
    /// Snapshots or traces.
    pub kind: CompareKind,
    /// Side A's name.
    pub a_name: String,
    /// Side B's name.
    pub b_name: String,
    /// One line per side describing what was compared (file and size; capture, ranks, rank).
    pub sides: Vec<String>,
    /// Headline figures.
    pub facts: Vec<FactDto>,
    /// The delta tables, in the document's order.
    pub tables: Vec<CompareTableDto>,
    /// Snapshots: one overlay per device.
    pub overlays: Vec<OverlayDto>,
    /// The document's notes (steps matched by order, a side without steps, …).
    pub notes: Vec<String>,
    /// Problems found while reading side B.
    pub b_problems: ProblemsDto,
    /// The options this comparison was computed with.
    #[serde(default)]
    pub options: CompareOptions,
    /// What the controls offer.
    #[serde(default)]
    pub choices: CompareChoicesDto,
}

/// The Compare tab's exports: `proflens diff A B --json` / `--md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CompareExportKind {
    /// The JSON document.
    Json,
    /// The Markdown report.
    Md,
}
