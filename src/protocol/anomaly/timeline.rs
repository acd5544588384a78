//! Payloads of the steps/bubbles timeline (`views::timeline`): the lanes, boxes, step bands
//! and bubble marks of a window, one item, search matches and launch links.

use serde::{Deserialize, Serialize};

/// The launch → device links of one timeline item (reply to [`AnomalyQuery::Flows`](super::AnomalyQuery::Flows)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelineFlowsDto {
    /// Rank folder index.
    pub rank: u32,
    /// Lane id of the item asked about.
    pub lane: u32,
    /// Item index asked about.
    pub index: u32,
    /// Links found (all of them counted, even past the limit).
    pub total: u64,
    /// The first links in the host side's time order, at most the limit asked.
    pub flows: Vec<FlowDto>,
}

/// One launch → device link: an arrow from a host lane to a device lane.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowDto {
    /// How the link is known: `ac2g` (a Kineto flow with the launch's correlation id),
    /// `correlation` (runtime call and kernel share `args.correlation`, no flow event),
    /// `async_npu` (torch_npu `torch_to_npu` flow), `HostToDevice` (CANN launch flow).
    pub kind: String,
    /// The flow id or correlation id as text.
    pub id: String,
    /// Arrow tail: the flow's start (the launch), relative ms.
    pub from_ms: f64,
    /// Arrow head: the flow's end (the device op's start), relative ms.
    pub to_ms: f64,
    /// The host end: the runtime call (GPU) or the innermost host op holding the flow start.
    pub host: TimelineItemDto,
    /// The device end: the kernel.
    pub device: TimelineItemDto,
}

/// The items whose name contains a text (reply to [`AnomalyQuery::Search`](super::AnomalyQuery::Search)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelineSearchDto {
    /// Rank folder index.
    pub rank: u32,
    /// The text searched.
    pub text: String,
    /// Matches in the whole rank (all lanes).
    pub total: u64,
    /// The first matches by start time (then lane, then item), at most the limit asked.
    pub matches: Vec<TimelineItemDto>,
}

// ---- Timeline payloads (the timeline view, `views::timeline`). ----

/// The timeline of one rank for one visible window, level-of-detail merged in the worker
/// (reply to [`AnomalyQuery::Timeline`](super::AnomalyQuery::Timeline)). Times are **ms relative to [`TimelineDto::origin_ms`]**
/// (relative values keep sub-ns precision in an f64; absolute epoch ms would not).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelineDto {
    /// Rank folder index.
    pub rank: u32,
    /// Absolute time (epoch ms) of relative time 0: the first step start, else the first kernel.
    pub origin_ms: f64,
    /// Everything there is (kernels, steps), relative ms: what "reset zoom" shows.
    pub full_range_ms: (f64, f64),
    /// The window these boxes were built for, relative ms.
    pub x_range_ms: (f64, f64),
    /// Width in pixels the boxes were merged for (one pixel = `(x1 − x0) / width_px` ms).
    pub width_px: u32,
    /// Device streams first (stream id order, then `hccl`, `unknown`), then host threads.
    pub lanes: Vec<LaneDto>,
    /// Steps overlapping the window, in time order.
    pub steps: Vec<StepBandDto>,
    /// Emitted bubble windows (anomaly.md §5.6) overlapping the window, merged below a pixel.
    pub bubbles: Vec<BubbleMarkDto>,
    /// Names referenced by [`LaneBoxesDto::name`].
    pub names: Vec<String>,
}

/// What a lane shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LaneKind {
    /// One device stream (kernels of `kernel_details.csv`, anomaly.md §1.2.4 stream key).
    Device,
    /// One host thread of the trace (`Python` / `CANN` processes; step markers left out).
    Host,
}

/// One lane and its merged boxes in the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaneDto {
    /// Stable lane id for this rank (index into the rank's lane list; used by `KernelAt`).
    pub id: u32,
    /// `stream 2`, `stream hccl`, `Python 3096504/3096504`, …
    pub label: String,
    /// Device or host.
    pub kind: LaneKind,
    /// Items (kernels or host events) in the whole lane.
    pub total: u64,
    /// Items overlapping the window (before merging).
    pub in_window: u64,
    /// Merged boxes, columnar, in time order.
    pub boxes: LaneBoxesDto,
}

/// Boxes of one lane as columns (all the same length). Adjacent items closer than one pixel
/// are merged into one box: `[first start, max end)`, `count` items, `busy` = union of the
/// items / box length (1.0 for a single item).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LaneBoxesDto {
    /// Box start, relative ms (may lie before the window: not clipped).
    pub start_ms: Vec<f64>,
    /// Box end, relative ms.
    pub end_ms: Vec<f64>,
    /// Items merged into the box.
    pub count: Vec<u32>,
    /// Busy fraction in `[0, 1]`.
    pub busy: Vec<f32>,
    /// Class of the box's longest item: 0 AI_CORE, 1 AI_CPU, 2 HCCL, 3 OTHER, 4 host event.
    pub class: Vec<u8>,
    /// Name of the box's longest item (index into [`TimelineDto::names`]).
    pub name: Vec<u32>,
}

/// One step's service window for shading.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepBandDto {
    /// Step index in the rank's step list.
    pub index: u32,
    /// `ProfilerStep#50`, …
    pub step_id: String,
    /// Window start / end, relative ms.
    pub start_ms: f64,
    /// Window end, relative ms.
    pub end_ms: f64,
    /// Device busy union in the window, ms (§5.4).
    pub busy_union_ms: f64,
    /// Underfeed ratio (§5.4).
    pub underfeed_ratio: f64,
}

/// One emitted bubble window (or the longest of several closer than a pixel).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BubbleMarkDto {
    /// Index into the rank's emitted windows (`bubble_windows` output order).
    pub index: u32,
    /// `<step_id>:<scope>:<ordinal>` (§5.6) — the key of the shared bubble selection.
    pub bubble_id: String,
    /// `global`, `prelaunch`, `step_internal`, `tail`.
    pub scope: String,
    /// Gap start, relative ms.
    pub start_ms: f64,
    /// Gap end, relative ms.
    pub end_ms: f64,
    /// Soft labels in rule order (§5.8); the first one colours the mark.
    pub labels: Vec<String>,
    /// §5.6 significance.
    pub significant: bool,
    /// Emitted windows merged into this mark (1 = just this one).
    pub merged: u32,
}

/// One kernel or host event under the pointer (reply to [`AnomalyQuery::KernelAt`](super::AnomalyQuery::KernelAt)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelineItemDto {
    /// Lane id.
    pub lane: u32,
    /// Kernel index in the rank's sorted kernel table, or host event index.
    pub index: u32,
    /// `kernel` or `host`.
    pub kind: LaneKind,
    /// Name.
    pub name: String,
    /// Start, relative ms.
    pub start_ms: f64,
    /// Absolute start in µs, exact decimal text (`1736408883704643.212`).
    pub start_us: String,
    /// Duration, µs.
    pub dur_us: f64,
    /// Device: stream key; host: `pid/tid`.
    pub stream: String,
    /// Device: `Type` (op type); host: category.
    pub op_type: String,
    /// Device: `Accelerator Core` as written; host: process kind.
    pub core: String,
    /// Device: `AI_CORE` / `AI_CPU` / `HCCL` / `OTHER`; host: `host`.
    pub class: String,
    /// Wait time, µs (device only, else 0).
    pub wait_us: f64,
    /// `Input Shapes` (empty when absent).
    pub shapes: String,
    /// Source line in `kernel_details.csv` (0 for trace-derived kernels and host events).
    pub source_row: u64,
    /// Step whose window holds the start, if any.
    pub step_id: Option<String>,
}
