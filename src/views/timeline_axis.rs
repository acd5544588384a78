//! Pure geometry of the timeline chart: the time ruler's nice ticks in ms / µs,
//! zoom and pan of the visible window (clamped to the data), the lane layout, and
//! hit-testing of boxes and bubble marks of a [`crate::protocol::TimelineDto`]. The canvas
//! component (`ui::anomaly_view::timeline`) only calls these; natively tested.
//!
//! All times are ms relative to the rank's origin ([`crate::protocol::TimelineDto::origin_ms`]).

use crate::base::format::{nice_step, StepRound};
use crate::protocol::{BubbleMarkDto, LaneBoxesDto};

/// One tick of the time ruler.
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    /// Position, relative ms.
    pub t_ms: f64,
    /// Text, e.g. `12.5 ms`, `250 µs`.
    pub label: String,
}

fn decimals_for(step: f64) -> usize {
    if step >= 1.0 - 1e-9 {
        0
    } else {
        ((-step.log10()) - 1e-9).ceil().clamp(0.0, 9.0) as usize
    }
}

/// The text of a tick at `t_ms` on a ruler with step `step_ms`: milliseconds when the step
/// is at least 1 µs and the window reaches beyond 1 ms (`max_abs_ms ≥ 1`), else
/// microseconds; as many decimals as the step needs (`0.5 ms` → 1, `20 µs` → 0).
pub fn tick_label(t_ms: f64, step_ms: f64, max_abs_ms: f64) -> String {
    let (v, step, unit) = if step_ms >= 1e-3 * (1.0 - 1e-9) && max_abs_ms >= 1.0 {
        (t_ms, step_ms, "ms")
    } else {
        (t_ms * 1e3, step_ms * 1e3, "µs")
    };
    let d = decimals_for(step);
    let s = format!("{v:.d$}");
    // No "-0" / "-0.0".
    let s = if s
        .trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        s.trim_start_matches('-').to_string()
    } else {
        s
    };
    format!("{s} {unit}")
}

/// Ticks for the window `[x0, x1]` on a ruler `width_px` wide with at least `min_px` between
/// ticks: multiples of a [`nice_step`] (rounded up) inside the window, labelled by [`tick_label`].
pub fn ticks(x0: f64, x1: f64, width_px: f64, min_px: f64) -> Vec<Tick> {
    if !(x1 > x0) || !(width_px > 0.0) || !x0.is_finite() || !x1.is_finite() {
        return Vec::new();
    }
    let step = nice_step((x1 - x0) * min_px.max(1.0) / width_px, StepRound::Up);
    let max_abs = x0.abs().max(x1.abs());
    let first = (x0 / step).ceil() as i64;
    let last = (x1 / step).floor() as i64;
    (first..=last)
        .take(1000)
        .map(|k| {
            let t = k as f64 * step;
            Tick {
                t_ms: t,
                label: tick_label(t, step, max_abs),
            }
        })
        .collect()
}

/// Smallest visible span, ms (1 ns): zooming further in stops here.
pub const MIN_SPAN_MS: f64 = 1e-6;

/// `view` moved and shrunk into `full` ([`super::zoom::clamp`] with a 1 ns minimum): a span
/// ≥ the full span gives `full`; a span below [`MIN_SPAN_MS`] grows to it around its centre.
pub fn clamp_view(view: (f64, f64), full: (f64, f64)) -> (f64, f64) {
    super::zoom::clamp(view, full, MIN_SPAN_MS).unwrap_or(full)
}

/// Zooms `view` by `factor` (< 1 zooms in) keeping the time `at_ms` under the same pixel
/// ([`super::zoom::zoom_around`]), then [`clamp_view`].
pub fn zoom(view: (f64, f64), full: (f64, f64), at_ms: f64, factor: f64) -> (f64, f64) {
    super::zoom::zoom_around(view, full, at_ms, factor, MIN_SPAN_MS).unwrap_or(full)
}

/// Moves `view` by `delta_ms` (positive = later), then [`clamp_view`].
pub fn pan(view: (f64, f64), full: (f64, f64), delta_ms: f64) -> (f64, f64) {
    super::zoom::pan(view, full, delta_ms, MIN_SPAN_MS).unwrap_or(full)
}

/// Vertical layout of the lanes, CSS px: the ruler on top, then one row per lane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaneLayout {
    /// Top of the first lane (below the ruler).
    pub top: f64,
    /// Height of one lane row.
    pub lane_h: f64,
    /// Number of lanes.
    pub lanes: usize,
}

impl LaneLayout {
    /// The lane at height `y`, if any.
    pub fn lane_at(&self, y: f64) -> Option<usize> {
        if y < self.top || self.lane_h <= 0.0 {
            return None;
        }
        let i = ((y - self.top) / self.lane_h) as usize;
        (i < self.lanes).then_some(i)
    }
    /// Top of lane `i`.
    pub fn lane_top(&self, i: usize) -> f64 {
        self.top + i as f64 * self.lane_h
    }
    /// Bottom of the last lane.
    pub fn bottom(&self) -> f64 {
        self.lane_top(self.lanes)
    }
}

fn nearest(
    n: usize,
    start: impl Fn(usize) -> f64,
    end: impl Fn(usize) -> f64,
    t: f64,
    slop: f64,
) -> Option<usize> {
    let mut best: Option<(f64, usize)> = None;
    for i in 0..n {
        let (s, e) = (start(i), end(i));
        let d = if t < s {
            s - t
        } else if t > e {
            t - e
        } else {
            0.0
        };
        if d <= slop && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, i));
        }
    }
    best.map(|(_, i)| i)
}

/// The box of `boxes` at `t_ms`: one containing it, else the nearest within `slop_ms`
/// (ties: the earlier box). Boxes are in start order; O(log n) to narrow, then a scan of the
/// few boxes within the slop.
pub fn box_at(boxes: &LaneBoxesDto, t_ms: f64, slop_ms: f64) -> Option<usize> {
    let n = boxes.start_ms.len().min(boxes.end_ms.len());
    let hi = boxes.start_ms[..n].partition_point(|&s| s <= t_ms + slop_ms);
    let lo = boxes.end_ms[..hi].partition_point(|&e| e < t_ms - slop_ms);
    nearest(
        hi.saturating_sub(lo),
        |i| boxes.start_ms[lo + i],
        |i| boxes.end_ms[lo + i],
        t_ms,
        slop_ms,
    )
    .map(|i| lo + i)
}

/// The bubble mark at `t_ms`: one containing it, else the nearest within `slop_ms`.
pub fn bubble_at(bubbles: &[BubbleMarkDto], t_ms: f64, slop_ms: f64) -> Option<usize> {
    nearest(
        bubbles.len(),
        |i| bubbles[i].start_ms,
        |i| bubbles[i].end_ms,
        t_ms,
        slop_ms,
    )
}

/// Colour of a bubble mark by its first soft label (anomaly.md §5.8), and the legend order.
pub const LABEL_COLORS: &[(&str, &str)] = &[
    ("possible_sync_or_h2d", "#d6336c"),
    ("possible_comm_wait", "#9b4dca"),
    ("possible_untraced_host_blocking", "#e08a1e"),
    ("possible_host_launch_lag", "#2f9e9e"),
    ("possible_python_serialization_or_lock", "#c9a400"),
    ("insufficient_evidence", "#8a8a8a"),
];

/// The colour of the first label (grey without labels or for an unknown label).
pub fn label_color(labels: &[String]) -> &'static str {
    labels
        .first()
        .and_then(|l| LABEL_COLORS.iter().find(|(n, _)| n == l))
        .map(|(_, c)| *c)
        .unwrap_or("#8a8a8a")
}

#[cfg(test)]
#[path = "timeline_axis_tests.rs"]
mod tests;
