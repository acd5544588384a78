//! The `gpu` block of a GPU rank in `proflens anomaly --out` (gpu-traces.md §1–§3):
//! HTA's two breakdowns under HTA's field names (integral µs, with the window they used),
//! kernel categories with per-step overlap (ms), the top kernel names, `[memory]` peaks per
//! device, and the rank's row of the cross-rank straggler view. Formats
//! [`GpuSummary`] / [`RankDelay`]; never recomputes.

// Field names carry their unit (`_us` integral µs as HTA, `_ms`, `_bytes`) and each struct
// doc lists its shape; the HTA-named ones are defined in gpu-traces.md §2–§3.
#![allow(missing_docs)]

use serde::Serialize;

use crate::analysis::gpu_kernels::{Category, CategoryTimes};
use crate::analysis::gpu_rank::GpuSummary;
use crate::analysis::gpu_straggler::RankDelay;
use crate::base::units::ns_to_ms;

/// How many kernel names the JSON lists (by Σ duration).
pub const TOP_KERNELS: usize = 20;

/// The `gpu` block.
#[derive(Clone, Debug, Serialize)]
pub struct GpuJson {
    /// Which events the HTA-named fields used.
    pub hta_window: HtaWindowJson,
    /// HTA temporal breakdown (µs); null when no kept event has a stream (host-only trace).
    pub gpu_time_breakdown: Option<TimeJson>,
    /// HTA idle-time breakdown per stream (µs).
    pub idle_by_stream: Vec<StreamIdleJson>,
    /// Whole capture per category.
    pub kernel_categories: Vec<CategoryJson>,
    /// Per step (the anomaly steps' windows): categories and overlap.
    pub steps: Vec<StepKernelsJson>,
    /// Top kernel names by Σ duration.
    pub top_kernels: Vec<KernelNameJson>,
    /// `[memory]` counters per device.
    pub memory: Vec<MemoryJson>,
    /// This rank's row of the straggler view (null with one GPU rank).
    pub straggler: Option<StragglerJson>,
}

/// `hta_window`.
#[derive(Clone, Debug, Serialize)]
pub struct HtaWindowJson {
    /// `hta_parity` when ≥ 2 ProfilerSteps (GPU events launched at/after the last step's start
    /// dropped), `full_capture` otherwise.
    pub window: &'static str,
    pub profiler_steps: usize,
    pub last_step_start_us: Option<i64>,
    pub gpu_events_kept: usize,
    pub gpu_events_dropped: usize,
}

/// `gpu_time_breakdown` (`span_us` is HTA's `kernel_time`).
#[derive(Clone, Debug, Serialize)]
pub struct TimeJson {
    pub span_us: i64,
    pub idle_us: i64,
    pub compute_us: i64,
    pub non_compute_us: i64,
}

/// One stream of `idle_by_stream`; absent categories are null.
#[derive(Clone, Debug, Serialize)]
pub struct StreamIdleJson {
    pub stream: i64,
    pub host_wait_us: Option<i64>,
    pub kernel_wait_us: Option<i64>,
    pub other_us: i64,
}

/// One category: `{category, count, sum_ms, busy_ms}`.
#[derive(Clone, Debug, Serialize)]
pub struct CategoryJson {
    pub category: &'static str,
    pub count: u64,
    pub sum_ms: f64,
    pub busy_ms: f64,
}

/// One step: categories, `comm_compute_overlap_ms`, `exposed_comm_ms`.
#[derive(Clone, Debug, Serialize)]
pub struct StepKernelsJson {
    pub step_id: String,
    pub categories: Vec<CategoryJson>,
    pub comm_compute_overlap_ms: f64,
    pub exposed_comm_ms: f64,
}

/// One kernel name.
#[derive(Clone, Debug, Serialize)]
pub struct KernelNameJson {
    pub name: String,
    pub category: &'static str,
    pub count: u64,
    pub total_ms: f64,
}

/// One device's memory peaks (bytes; times in ms from the trace's first memory sample);
/// `allocated_source` is `total_allocated` or `bytes_since_capture_start` (old traces without
/// totals); reserved is null when the trace does not say it.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryJson {
    pub device_type: i64,
    pub device_id: i64,
    pub samples: usize,
    pub allocated_source: &'static str,
    pub peak_allocated_bytes: i64,
    pub peak_allocated_at_ms: f64,
    pub peak_reserved_bytes: Option<i64>,
    pub peak_reserved_at_ms: Option<f64>,
}

/// This rank's straggler row.
#[derive(Clone, Debug, Serialize)]
pub struct StragglerJson {
    /// The role whose GPU ranks the view compared (one view per role when the run holds
    /// several roles; null when it holds one).
    pub group: Option<String>,
    /// Collectives matched on every GPU rank.
    pub collectives_matched: usize,
    /// Matched collectives this rank started last.
    pub started_last: u64,
    pub mean_start_delay_ms: f64,
    pub max_start_delay_ms: f64,
    /// True when this rank started last most often.
    pub is_straggler: bool,
}

/// A rank's row of its straggler view, as the `gpu` block and the report take it.
#[derive(Clone, Copy, Debug)]
pub struct StragglerRow<'a> {
    /// The view's role (`None`: one view over every GPU rank).
    pub role: Option<&'a str>,
    /// Collectives matched on every rank of the view.
    pub matched: usize,
    /// The rank's row.
    pub row: &'a RankDelay,
    /// True when the rank is the view's straggler.
    pub is_straggler: bool,
}

fn categories(c: &CategoryTimes) -> Vec<CategoryJson> {
    [Category::Compute, Category::Communication, Category::Memory]
        .iter()
        .map(|&k| CategoryJson {
            category: k.as_str(),
            count: c.count[k as usize],
            sum_ms: ns_to_ms(c.sum_ns[k as usize]),
            busy_ms: ns_to_ms(c.busy_ns[k as usize]),
        })
        .collect()
}

/// The `gpu` block of one rank. `memory_origin_ns`: the time memory peaks are measured from
/// (the first memory sample); `straggler`: the rank's row when it is in a straggler view.
pub fn build(
    s: &GpuSummary,
    memory_origin_ns: i64,
    straggler: Option<StragglerRow<'_>>,
) -> GpuJson {
    let w = &s.hta.window;
    GpuJson {
        hta_window: HtaWindowJson {
            window: if w.last_step_start_us.is_some() {
                "hta_parity"
            } else {
                "full_capture"
            },
            profiler_steps: w.profiler_steps,
            last_step_start_us: w.last_step_start_us,
            gpu_events_kept: w.gpu_kept,
            gpu_events_dropped: w.gpu_dropped,
        },
        gpu_time_breakdown: s.hta.time.map(|t| TimeJson {
            span_us: t.span_us,
            idle_us: t.idle_us,
            compute_us: t.compute_us,
            non_compute_us: t.non_compute_us,
        }),
        idle_by_stream: s
            .hta
            .idle_by_stream
            .iter()
            .map(|i| StreamIdleJson {
                stream: i.stream,
                host_wait_us: i.host_wait_us,
                kernel_wait_us: i.kernel_wait_us,
                other_us: i.other_us,
            })
            .collect(),
        kernel_categories: categories(&s.kernels.times),
        steps: s
            .kernels
            .steps
            .iter()
            .map(|k| StepKernelsJson {
                step_id: k.step_id.clone(),
                categories: categories(&k.times),
                comm_compute_overlap_ms: ns_to_ms(k.overlap_ns),
                exposed_comm_ms: ns_to_ms(k.exposed_comm_ns),
            })
            .collect(),
        top_kernels: s
            .kernels
            .by_name
            .iter()
            .take(TOP_KERNELS)
            .map(|n| KernelNameJson {
                name: n.name.clone(),
                category: n.category.as_str(),
                count: n.count,
                total_ms: ns_to_ms(n.total_ns),
            })
            .collect(),
        memory: s
            .memory
            .iter()
            .map(|m| MemoryJson {
                device_type: m.device_type,
                device_id: m.device_id,
                samples: m.curve.len(),
                allocated_source: m.allocated_source.as_str(),
                peak_allocated_bytes: m.peak_allocated.0,
                peak_allocated_at_ms: ns_to_ms(m.peak_allocated.1 - memory_origin_ns),
                peak_reserved_bytes: m.peak_reserved.map(|p| p.0),
                peak_reserved_at_ms: m.peak_reserved.map(|p| ns_to_ms(p.1 - memory_origin_ns)),
            })
            .collect(),
        straggler: straggler.map(|s| StragglerJson {
            group: s.role.map(str::to_string),
            collectives_matched: s.matched,
            started_last: s.row.last_count,
            mean_start_delay_ms: ns_to_ms(s.row.mean_delay_ns),
            max_start_delay_ms: ns_to_ms(s.row.max_delay_ns),
            is_straggler: s.is_straggler,
        }),
    }
}
