//! Payloads of the GPU panel of the steps / bubbles tab (gpu-traces.md §1–§4): for
//! one GPU rank the HTA temporal and idle-time breakdowns, the kernel categories (whole
//! capture and per step, with communication/computation overlap), the kernel table, the
//! `[memory]` counter curves; across GPU ranks the straggler view. Built by `views::gpu` from
//! the analysis types; every number equals the `gpu` block of `proflens anomaly`'s JSON (same
//! source, same unit conversion).
//!
//! Units are in the field names: `_us` integral µs (HTA's), `_ms` milliseconds, `_ns`
//! nanoseconds, `_bytes` bytes, `_ratio` fractions in [0, 1].

use serde::{Deserialize, Serialize};

use super::CurveDto;

/// HTA's temporal breakdown (`gpu_time_breakdown`; `span_us` is HTA's `kernel_time`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuTimeDto {
    /// Last merged end − first merged start, µs.
    pub span_us: i64,
    /// Span − union of all GPU intervals, µs.
    pub idle_us: i64,
    /// Union of the computation kernels, µs.
    pub compute_us: i64,
    /// Span − compute − idle, µs.
    pub non_compute_us: i64,
}

/// One stream of HTA's idle-time breakdown (`idle_by_stream`), µs; a category HTA reports no
/// row for is `None`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StreamIdleDto {
    /// `args.stream`.
    pub stream: i64,
    /// Host wait: the next op was launched after the previous op ended.
    pub host_wait_us: Option<i64>,
    /// Kernel wait: other gaps shorter than HTA's consecutive-kernel delay.
    pub kernel_wait_us: Option<i64>,
    /// Other idle time.
    pub other_us: i64,
    /// Σ of the three, µs (the bar's length).
    pub idle_us: i64,
}

/// Σ duration and busy union of one kernel category.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelCategoryDto {
    /// `compute`, `communication`, `memory`.
    pub category: String,
    /// Device ops.
    pub count: u64,
    /// Σ duration, ms.
    pub sum_ms: f64,
    /// Busy union, ms.
    pub busy_ms: f64,
}

/// One step's kernel categories and overlap (the anomaly steps' windows).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuStepDto {
    /// `ProfilerStep#N`.
    pub step_id: String,
    /// Busy union per category, ms: compute, communication, memory.
    pub busy_ms: [f64; 3],
    /// Communication union ∩ compute union, ms.
    pub comm_compute_overlap_ms: f64,
    /// Communication not hidden under compute, ms.
    pub exposed_comm_ms: f64,
}

/// One kernel name of the kernel table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelNameDto {
    /// The device op's name.
    pub name: String,
    /// Its category.
    pub category: String,
    /// Occurrences.
    pub count: u64,
    /// Σ duration, ms.
    pub total_ms: f64,
    /// Mean duration, µs.
    pub mean_us: f64,
    /// Share of the Σ duration of every device op.
    pub share_ratio: f64,
}

/// The `[memory]` counters of one device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuMemoryDto {
    /// `GPU 0`, `CPU`, …
    pub device: String,
    /// `total_allocated`, or `bytes_since_capture_start` (old traces: Σ `Bytes` since the
    /// capture started, not counting what was live before).
    pub allocated_source: String,
    /// Samples (one per allocation or free).
    pub samples: u64,
    /// Peak allocated, bytes.
    pub peak_allocated_bytes: i64,
    /// Its time, ms from the first memory sample.
    pub peak_allocated_at_ms: f64,
    /// Peak reserved, bytes, when the trace says reserved.
    pub peak_reserved_bytes: Option<i64>,
    /// The curves (allocated, reserved), MiB, ms from the first memory sample.
    pub curve: CurveDto,
}

/// The GPU panel of one GPU rank (reply to `AnomalyQuery::Gpu`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuPanelDto {
    /// Rank folder index.
    pub rank: u32,
    /// Which events HTA's breakdowns used, in words (the parity window, gpu-traces.md §1).
    pub window_note: String,
    /// What the categories and kernel tables cover (the whole capture), in words.
    pub categories_note: String,
    /// HTA temporal breakdown; `None` on a host-only trace.
    pub time: Option<GpuTimeDto>,
    /// HTA idle-time breakdown, streams ascending.
    pub idle_by_stream: Vec<StreamIdleDto>,
    /// Whole capture per category.
    pub categories: Vec<KernelCategoryDto>,
    /// Per step.
    pub steps: Vec<GpuStepDto>,
    /// Kernel names by Σ duration, at most [`GpuPanelDto::KERNELS`].
    pub kernels: Vec<KernelNameDto>,
    /// Distinct kernel names in the rank.
    pub kernel_names: u64,
    /// Per device, sorted by (device type, id).
    pub memory: Vec<GpuMemoryDto>,
}

impl GpuPanelDto {
    /// Rows of the kernel table sent to the page.
    pub const KERNELS: usize = 500;
}

/// The collectives of one GPU rank, for the straggler view across ranks (reply to
/// `AnomalyQuery::Collectives`): each communication kernel's start and name, in start order;
/// names interned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CollectivesDto {
    /// Rank folder index.
    pub rank: u32,
    /// Rank id (`distributedInfo.rank`, else the file name, else the order).
    pub rank_id: i64,
    /// Role (the parent folder; empty when unknown): the straggler view groups by it.
    pub role: String,
    /// Whole seconds of the epoch the starts are counted from (the first collective's): an
    /// epoch in ns needs 61 bits and a JavaScript number holds 53, so the wire carries
    /// `base_s` + offsets.
    pub base_s: i64,
    /// Start of each collective, ns after `base_s` (epoch ns = `base_s` · 10⁹ + this).
    pub starts_ns: Vec<i64>,
    /// Index into `names` of each collective.
    pub name_ix: Vec<u32>,
    /// Distinct names.
    pub names: Vec<String>,
}

/// One rank of the straggler view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StragglerRowDto {
    /// Rank folder index.
    pub rank: u32,
    /// Rank id.
    pub rank_id: i64,
    /// Collectives of this rank.
    pub collectives: u64,
    /// Matched collectives this rank started last.
    pub started_last: u64,
    /// Mean start delay behind the earliest rank, ms.
    pub mean_start_delay_ms: f64,
    /// Largest start delay, ms.
    pub max_start_delay_ms: f64,
    /// The rank that started last most often (in its view).
    pub is_straggler: bool,
    /// The role whose ranks this row was compared with (one view per role when the ranks hold
    /// several); `None` with one role.
    pub group: Option<String>,
    /// Collectives matched on every rank of this row's view.
    pub matched: u64,
}

/// The straggler view over the GPU ranks given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StragglerViewDto {
    /// Collectives matched on every rank (by order and name) of the first view (the only one
    /// with one role; each row says its own view's count).
    pub matched: u64,
    /// True when the ranks hold several roles and each role is its own view.
    pub grouped: bool,
    /// One row per rank that is in a view, in the order given (a rank alone in its role has none).
    pub rows: Vec<StragglerRowDto>,
}
