//! Global device-gap analysis and bubble windows (anomaly.md §5.5–5.6):
//! the four scopes, emission caps, significance, and the raw kernel context
//! (the kernels just before and after each gap).

use super::anomaly_config::AnomalyConfig;
use super::intervals::{total_len, Interval, WindowMetrics};
use crate::base::units::ns_to_ms;
use crate::model::kernels::{KernelTable, NameId};

/// Scope of a bubble window (§5.6; schema enum of §6.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// One of the top global gaps.
    Global,
    /// `[S, M[0].start]`.
    Prelaunch,
    /// An internal bubble between merged segments.
    StepInternal,
    /// `[M[last].end, E]`.
    Tail,
}

impl Scope {
    /// The spec spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::Prelaunch => "prelaunch",
            Scope::StepInternal => "step_internal",
            Scope::Tail => "tail",
        }
    }
}

/// §5.5 over all kernels of the rank.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct GlobalGaps {
    /// `[min start, max end)` of all kernels.
    pub capture: Interval,
    /// Union of all kernels, ns.
    pub busy_ns: i64,
    /// Number of gaps between consecutive merged global segments (the gaps themselves are
    /// [`gaps`] of the busy segments, kept once as `AnomalyResult::busy_segments`).
    pub gap_count: usize,
    /// Largest global gap, ns.
    largest_ns: i64,
    /// The top-N gaps by duration (ties: earlier first).
    pub top: Vec<Interval>,
}

/// Every gap between consecutive segments of sorted disjoint `segs` (a merged union: touching
/// segments are merged, so every gap has a length), in time order.
pub fn gaps(segs: &[Interval]) -> impl Iterator<Item = Interval> + '_ {
    segs.windows(2)
        .map(|p| Interval::new(p[0].end_ns, p[1].start_ns))
        .filter(|g| g.len_ns() > 0)
}

impl GlobalGaps {
    /// `capture_span − busy_union`, ns.
    pub fn gap_ns(&self) -> i64 {
        (self.capture.len_ns() - self.busy_ns).max(0)
    }
    /// Largest global gap, ns.
    pub fn largest_ns(&self) -> i64 {
        self.largest_ns
    }
}

/// §5.5 from the globally merged busy segments.
pub fn global_gaps(segs: &[Interval], top_n: usize) -> GlobalGaps {
    let (Some(first), Some(last)) = (segs.first(), segs.last()) else {
        return GlobalGaps::default();
    };
    let all: Vec<Interval> = gaps(segs).collect();
    let top = super::intervals::longest(&all, top_n);
    GlobalGaps {
        capture: Interval::new(first.start_ns, last.end_ns),
        busy_ns: total_len(segs),
        gap_count: all.len(),
        largest_ns: all.iter().map(Interval::len_ns).max().unwrap_or(0),
        top,
    }
}

/// Finds the kernels around a gap (§5.6 raw kernel context).
pub struct Neighbours<'a> {
    kernels: &'a KernelTable,
    by_end: Vec<u32>,
}

/// How far a main-stream search walks before giving up (bounds the cost per window).
const MAIN_STREAM_SCAN: usize = 100_000;

impl<'a> Neighbours<'a> {
    /// Indexes `kernels` by end time.
    pub fn new(kernels: &'a KernelTable) -> Self {
        // Sorted with the keys in place (the index last: ties keep index order, as a stable
        // sort by `(end, start)` would), not looked up through the table per comparison.
        let mut keyed: Vec<(i64, i64, u32)> = (0..kernels.len())
            .map(|i| (kernels.end_ns(i), kernels.start_ns()[i], i as u32))
            .collect();
        keyed.sort_unstable();
        let by_end = keyed.into_iter().map(|(_, _, i)| i).collect();
        Neighbours { kernels, by_end }
    }

    /// The kernel with the greatest end ≤ `t` (ties: greater start), optionally on `stream` only.
    pub fn before(&self, t: i64, stream: Option<NameId>) -> Option<usize> {
        let k = self.kernels;
        let pos = self.by_end.partition_point(|&i| k.end_ns(i as usize) <= t);
        self.by_end[..pos]
            .iter()
            .rev()
            .take(if stream.is_some() {
                MAIN_STREAM_SCAN
            } else {
                1
            })
            .map(|&i| i as usize)
            .find(|&i| stream.is_none_or(|s| k.stream()[i] == s))
    }

    /// The kernel with the smallest start ≥ `t` (ties: smaller end), optionally on `stream` only.
    pub fn after(&self, t: i64, stream: Option<NameId>) -> Option<usize> {
        let k = self.kernels;
        let pos = k.start_ns().partition_point(|&s| s < t);
        let mut best: Option<usize> = None;
        for i in (pos..k.len()).take(MAIN_STREAM_SCAN) {
            if let Some(b) = best {
                if k.start_ns()[i] > k.start_ns()[b] {
                    break;
                }
            }
            if stream.is_some_and(|s| k.stream()[i] != s) {
                continue;
            }
            if best.is_none_or(|b| k.end_ns(i) < k.end_ns(b)) {
                best = Some(i);
            }
        }
        best
    }
}

/// A bubble window before attribution (§5.6).
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    /// `<step_id>:<scope>:<ordinal>` or `global:global:<k>`.
    pub bubble_id: String,
    /// Scope.
    pub scope: Scope,
    /// Index of its step, `None` for global windows.
    pub step: Option<usize>,
    /// The gap.
    pub interval: Interval,
    /// Kernel just before (greatest end ≤ start).
    pub before: Option<usize>,
    /// Kernel just after (smallest start ≥ end).
    pub after: Option<usize>,
    /// Last main-stream kernel before.
    pub before_main: Option<usize>,
    /// First main-stream kernel after.
    pub after_main: Option<usize>,
    /// Report emphasis and always attributed (§5.6).
    pub significant: bool,
    /// Touches a capture boundary (§5.10.3 PARTIAL_CAPTURE_BOUNDARY).
    pub capture_boundary: bool,
}

/// Inputs per step for [`emit_windows`].
pub struct StepWindows<'s> {
    /// The step id.
    pub step_id: &'s str,
    /// Its metrics (§5.4).
    pub metrics: &'s WindowMetrics,
    /// Its main compute stream (§4.1), if any.
    pub main_stream: Option<NameId>,
    /// True when the step belongs to the dominant group.
    pub dominant: bool,
}

/// Emits the windows of §5.6 in output order: global first, then by step time,
/// scope (prelaunch, step_internal, tail) and start. Marks significance and the
/// capture-boundary condition.
pub fn emit_windows(
    steps: &[StepWindows<'_>],
    global: &GlobalGaps,
    nb: &Neighbours<'_>,
    cfg: &AnomalyConfig,
) -> Vec<Window> {
    let mut out = Vec::new();
    let mk = |id: String, scope, step, iv: Interval, main: Option<NameId>| Window {
        bubble_id: id,
        scope,
        step,
        interval: iv,
        before: nb.before(iv.start_ns, None),
        after: nb.after(iv.end_ns, None),
        before_main: main.and_then(|m| nb.before(iv.start_ns, Some(m))),
        after_main: main.and_then(|m| nb.after(iv.end_ns, Some(m))),
        significant: false,
        capture_boundary: false,
    };
    for (k, g) in global.top.iter().enumerate() {
        let mut w = mk(format!("global:global:{k}"), Scope::Global, None, *g, None);
        w.significant = true;
        out.push(w);
    }
    // (length, output index) of every step window of the dominant group.
    let mut dominant_lens: Vec<(i64, usize)> = Vec::new();
    for (si, s) in steps.iter().enumerate() {
        let m = s.metrics;
        let step_first = out.len();
        if m.prelaunch_ns > 0 {
            let iv = Interval::new(m.window.start_ns, m.window.start_ns + m.prelaunch_ns);
            out.push(mk(
                format!("{}:prelaunch:0", s.step_id),
                Scope::Prelaunch,
                Some(si),
                iv,
                s.main_stream,
            ));
        }
        let floor_ns = (cfg.bubble_emit_floor_us * 1000.0).round() as i64;
        let mut internal: Vec<Interval> = m
            .bubbles
            .iter()
            .copied()
            .filter(|b| b.len_ns() >= floor_ns)
            .collect();
        if internal.len() > cfg.bubble_emit_max_per_step {
            crate::base::sort::sort_by(&mut internal, |a, b| {
                b.len_ns()
                    .cmp(&a.len_ns())
                    .then(a.start_ns.cmp(&b.start_ns))
            });
            internal.truncate(cfg.bubble_emit_max_per_step);
            crate::base::sort::sort(&mut internal);
        }
        for (o, iv) in internal.into_iter().enumerate() {
            out.push(mk(
                format!("{}:step_internal:{o}", s.step_id),
                Scope::StepInternal,
                Some(si),
                iv,
                s.main_stream,
            ));
        }
        if m.tail_ns > 0 {
            let iv = Interval::new(m.window.end_ns - m.tail_ns, m.window.end_ns);
            out.push(mk(
                format!("{}:tail:0", s.step_id),
                Scope::Tail,
                Some(si),
                iv,
                s.main_stream,
            ));
        }
        // Significant: ≥ max(floor, frac × service) or top-N of its step.
        let service_ms = ns_to_ms(m.service_ns);
        let thr_ns = (cfg
            .significant_floor_ms
            .max(cfg.significant_service_frac * service_ms)
            * 1e6) as i64;
        let mut lens: Vec<(i64, usize)> = (step_first..out.len())
            .map(|i| (out[i].interval.len_ns(), i))
            .collect();
        crate::base::sort::sort_by(&mut lens, |a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (rank, &(len, i)) in lens.iter().enumerate() {
            if len >= thr_ns || rank < cfg.top_n_windows {
                out[i].significant = true;
            }
        }
        if s.dominant {
            dominant_lens.extend_from_slice(&lens);
        }
    }
    // Top-N of the dominant group: exactly N windows, longest first, ties in output order
    // (§0.4 stable sorts; the same tie-break as the per-step top N above).
    crate::base::sort::sort_by(&mut dominant_lens, |a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in dominant_lens.iter().take(cfg.top_n_windows) {
        out[i].significant = true;
    }
    // Capture boundary (§5.10.3).
    let band = (global.capture.len_ns() as f64 * cfg.boundary_frac) as i64;
    let first_start = steps.first().map(|s| s.metrics.window.start_ns);
    let last_end = steps.last().map(|s| s.metrics.window.end_ns);
    for w in &mut out {
        let iv = w.interval;
        w.capture_boundary = Some(iv.start_ns) == first_start
            || Some(iv.end_ns) == last_end
            || (global.capture.len_ns() > 0
                && (iv.end_ns <= global.capture.start_ns + band
                    || iv.start_ns >= global.capture.end_ns - band));
    }
    out
}
