//! Everything proflens adds for one GPU rank beyond the anomaly pipeline: HTA's
//! breakdowns in HTA's parity window (`gpu_breakdown`), the kernel categories with per-step
//! overlap over the rank's own step windows (`gpu_kernels`), and the memory counters
//! (`gpu_memory`). One call, so the engine stores one value per rank and the report and views
//! format it without recomputing.

use super::gpu_breakdown::{self, HtaBreakdowns};
use super::gpu_kernels::{self, KernelSummary};
use super::gpu_memory::{self, DeviceMemory};
use super::intervals::Interval;
use crate::model::gpu::GpuTrace;

/// How the limitation of a GPU rank whose trace has no device events starts (formats.md §8.1):
/// a trace that has none at all.
pub const HOST_ONLY: &str = "host-only trace";
/// The same for a trace whose file is cut (or whose read stopped) before its first device
/// event: nothing is known of how it was captured.
pub const CUT_BEFORE_DEVICE: &str = "cut trace";
/// The same for a whole host-only trace whose runtime calls enqueued device work
/// ([`device_work_calls`]): the device activities were on, their records are missing
/// (formats.md §8.1). It starts with [`HOST_ONLY`], so it is a host-only trace too.
pub const DEVICE_RECORDS_LOST: &str = "host-only trace, device records lost";

/// The same for a whole trace with no event at all (no host op, no device op, no step): the
/// profiler recorded nothing in its window. It starts with [`HOST_ONLY`] too.
pub const NO_EVENT: &str = "host-only trace, no event recorded";

/// True when `limitation` (the text [`no_device_events`] returns) says the trace's device
/// records are missing although its host side launched device work: the capture advice
/// (turn the CUDA activities on) does not apply.
pub fn device_records_lost(limitation: &str) -> bool {
    limitation.starts_with(DEVICE_RECORDS_LOST)
}

/// The runtime and driver calls of `t` that enqueue device work, counted per name, most first
/// (ties by name): calls with a `correlation` whose name holds `Launch`, `Memcpy` or `Memset`
/// (`cudaLaunchKernel`, `cuLaunchKernel`, `hipLaunchKernel`, `cudaGraphLaunch`,
/// `cudaMemcpyAsync`, `hipMemsetAsync`…). The tracer writes these records itself, beside the
/// device records they correlate with.
pub fn device_work_calls(t: &GpuTrace) -> Vec<(&str, usize)> {
    let mut by_name: std::collections::BTreeMap<&str, usize> = Default::default();
    for h in &t.host_ops {
        if !h.kind.is_runtime() || h.correlation < 0 {
            continue;
        }
        let name = t.text(h.name);
        if ["Launch", "Memcpy", "Memset"]
            .iter()
            .any(|w| name.contains(w))
        {
            *by_name.entry(name).or_default() += 1;
        }
    }
    let mut v: Vec<(&str, usize)> = by_name.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v
}

/// `(cut, text)` of the first of `limitations` saying a GPU rank has no device events
/// ([`CUT_BEFORE_DEVICE`] or [`HOST_ONLY`]); `None` when none does. The terminal headline and
/// the page's cards read it from here.
pub fn no_device_events(limitations: &[String]) -> Option<(bool, &str)> {
    limitations.iter().find_map(|l| {
        if l.starts_with(CUT_BEFORE_DEVICE) {
            Some((true, l.as_str()))
        } else if l.starts_with(HOST_ONLY) {
            Some((false, l.as_str()))
        } else {
            None
        }
    })
}

/// The GPU analyses of one rank.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuSummary {
    /// `gpu_time_breakdown` / `idle_by_stream` with the window they used.
    pub hta: HtaBreakdowns,
    /// Categories, names, per-step overlap.
    pub kernels: KernelSummary,
    /// `[memory]` curves per device.
    pub memory: Vec<DeviceMemory>,
}

/// Runs the three analyses; `steps` are the rank's step windows (`analysis::steps`, device
/// side when the device lags), `(step id, window)` in time order.
pub fn summarise(t: &GpuTrace, steps: &[(String, Interval)]) -> GpuSummary {
    summarise_with(t, steps, hta(t))
}

/// HTA's breakdowns of `t`, the part of [`summarise`] that needs no step window: the largest,
/// so a caller with a spare thread runs it beside the anomaly analysis.
pub fn hta(t: &GpuTrace) -> HtaBreakdowns {
    gpu_breakdown::analyse(&gpu_breakdown::hta_events(t))
}

/// [`summarise`] with HTA's breakdowns `hta` already computed by [`hta`] on the same trace.
pub fn summarise_with(
    t: &GpuTrace,
    steps: &[(String, Interval)],
    hta: HtaBreakdowns,
) -> GpuSummary {
    GpuSummary {
        hta,
        kernels: gpu_kernels::summarise(t, steps),
        memory: gpu_memory::per_device(t),
    }
}

/// The step windows the GPU analyses of a rank use: its anomaly steps' windows (device side
/// when the device lags), `(step id, window)` in time order.
pub fn step_windows(
    steps: &[crate::analysis::anomaly::result::StepResult],
) -> Vec<(String, Interval)> {
    steps
        .iter()
        .map(|s| (s.step_id.clone(), s.window))
        .collect()
}
