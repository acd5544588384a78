//! The timeline of the steps/bubbles view: one lane per device stream, one per
//! host thread, step shading and emitted bubble windows, level-of-detail merged for a chart
//! `width_px` pixels wide so a million kernels draw as a few thousand boxes.
//!
//! * [`TimelineIndex::new`] (once per rank, O(n log n)): lanes and, per lane, its item
//!   indices in start order with a running maximum of ends, so the first item that can reach
//!   into a window is found by binary search even when long items exist.
//! * [`TimelineIndex::build`] (per request, O(log n + items in the window)): per lane, items
//!   closer than one pixel (gap `< (x1 − x0) / width_px`) merge into one box carrying the
//!   item count and the busy fraction (union of the items / box length); bubbles closer than
//!   a pixel merge into their longest one.
//! * [`TimelineIndex::item_at`]: the kernel or host event under the pointer.
//!
//! Times inside are `i64` ns; payload times are ms relative to the rank's origin (the first
//! step start, else the first kernel start), which keeps sub-ns precision in an `f64`.
//! Spec: anomaly.md §1.2.4 (stream keys), §3.2 (service windows), §5.6 (bubble windows), §5.8
//! (labels). Axis ticks and view-window maths are in [`super::timeline_axis`].

use rustc_hash::FxHashMap as HashMap;

mod items;

pub use super::timeline_lod::{merge_spans, LaneSpans, MergedBox, MAX_BOX_PX};
use crate::analysis::anomaly::AnomalyResult;
use crate::analysis::bubbles::Scope;
use crate::base::units::ns_to_ms;
use crate::model::kernels::{KernelTable, TaskClass};
use crate::model::trace_events::{HostEventTable, Lane as HostLane};
use crate::protocol::{BubbleMarkDto, LaneBoxesDto, LaneDto, LaneKind, StepBandDto, TimelineDto};

/// What the timeline is drawn from: one analysed rank.
#[derive(Clone, Copy)]
pub struct TimelineSource<'a> {
    /// The rank's sorted kernels (device lanes).
    pub kernels: &'a KernelTable,
    /// Its trace tables, when read (host lanes).
    pub trace: Option<&'a HostEventTable>,
    /// Its anomaly result (steps, emitted bubble windows).
    pub result: &'a AnomalyResult,
    /// The name of the runtime host lanes: `"CANN"` on Ascend ranks, `"runtime"` on GPU
    /// (Kineto) ranks, whose runtime lane holds the cuda_runtime / hip_runtime calls.
    pub runtime: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Items {
    Kernels,
    Host,
}

/// One lane: its items (indices into the kernel table or the host event list) in start
/// order and their spans.
#[derive(Clone, Debug)]
struct LaneIndex {
    label: String,
    items_of: Items,
    /// The stream name id (device lanes) or thread id (host lanes) the lane shows.
    key: u32,
    items: Vec<u32>,
    spans: LaneSpans,
}

/// Per-rank timeline index (see the module doc). Holds no borrow: pass the same
/// [`TimelineSource`] to every call.
#[derive(Clone, Debug)]
pub struct TimelineIndex {
    origin_ns: i64,
    full_ns: (i64, i64),
    lanes: Vec<LaneIndex>,
    /// Emitted bubble windows to draw, by start (global windows that repeat a step-scoped
    /// window's interval left out), and their running max end.
    bubbles: Vec<u32>,
    bubble_reach: Vec<i64>,
}

/// The visible window and the chart width of one `AnomalyQuery::Timeline`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelineQuery {
    /// Visible window, ms relative to the origin; `None` (or an empty/invalid range) = all.
    pub x_range_ms: Option<(f64, f64)>,
    /// Chart width in pixels (≥ 1; 0 is taken as 1).
    pub width_px: u32,
}

fn class_code(c: TaskClass) -> u8 {
    match c {
        TaskClass::AiCore => 0,
        TaskClass::AiCpu => 1,
        TaskClass::Hccl => 2,
        TaskClass::Other => 3,
    }
}

/// Class code of host events in [`LaneBoxesDto::class`].
pub const HOST_CLASS: u8 = 4;

/// Absolute ns as the exact decimal µs text (`1736408883704643212` → `1736408883704643.212`).
pub fn us_text(ns: i64) -> String {
    let a = ns.unsigned_abs();
    let sign = if ns < 0 { "-" } else { "" };
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

fn stream_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<i64>(), b.parse::<i64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        _ => a.cmp(b),
    }
}

fn running_max(ends: impl Iterator<Item = i64>) -> Vec<i64> {
    let mut m = i64::MIN;
    ends.map(|e| {
        m = m.max(e);
        m
    })
    .collect()
}

fn is_step_marker(name: &str, step_ids: &[&str]) -> bool {
    name.starts_with("ProfilerStep#") || step_ids.contains(&name)
}

impl TimelineIndex {
    /// Builds the lanes of one rank: device lanes per stream key (numeric ids ascending,
    /// then `hccl`, `unknown`), then host lanes per thread of the `Python` and `CANN`
    /// processes, without step markers (they are drawn as step shading).
    pub fn new(src: TimelineSource<'_>) -> Self {
        let k = src.kernels;
        // Device lanes.
        let mut by_stream: HashMap<u32, Vec<u32>> = HashMap::default();
        for (i, &s) in k.stream().iter().enumerate() {
            by_stream.entry(s).or_default().push(i as u32);
        }
        let mut streams: Vec<(u32, Vec<u32>)> = by_stream.into_iter().collect();
        crate::base::sort::sort_by(&mut streams, |a, b| stream_order(k.text(a.0), k.text(b.0)));
        let mut lanes: Vec<LaneIndex> = streams
            .into_iter()
            .map(|(s, items)| LaneIndex {
                label: format!("stream {}", k.text(s)),
                items_of: Items::Kernels,
                key: s,
                spans: LaneSpans::new(
                    items
                        .iter()
                        .map(|&i| (k.start_ns()[i as usize], k.end_ns(i as usize))),
                ),
                items,
            })
            .collect();
        // Host lanes.
        if let Some(t) = src.trace {
            let step_ids: Vec<&str> = src
                .result
                .steps
                .iter()
                .map(|s| s.step_id.as_str())
                .collect();
            let mut by_thread: HashMap<u32, (HostLane, Vec<u32>)> = HashMap::default();
            for (i, e) in t.events().iter().enumerate() {
                let lane = t.lane_of(e);
                if !matches!(lane, HostLane::Python | HostLane::Cann)
                    || is_step_marker(t.text(e.name), &step_ids)
                {
                    continue;
                }
                by_thread
                    .entry(t.thread_of(e))
                    .or_insert((lane, Vec::new()))
                    .1
                    .push(i as u32);
            }
            let mut threads: Vec<(u32, (HostLane, Vec<u32>))> = by_thread.into_iter().collect();
            let rank = |l: HostLane| if l == HostLane::Python { 0 } else { 1 };
            crate::base::sort::sort_by(&mut threads, |a, b| {
                rank(a.1 .0)
                    .cmp(&rank(b.1 .0))
                    .then_with(|| t.thread_text(a.0).cmp(t.thread_text(b.0)))
            });
            let ev = t.events();
            for (th, (lane, items)) in threads {
                let kind = if lane == HostLane::Python {
                    "Python"
                } else {
                    src.runtime
                };
                lanes.push(LaneIndex {
                    label: format!("{kind} {}", t.thread_text(th)),
                    items_of: Items::Host,
                    key: th,
                    spans: LaneSpans::new(
                        items
                            .iter()
                            .map(|&i| (ev[i as usize].start_ns, ev[i as usize].end_ns())),
                    ),
                    items,
                });
            }
        }
        // Origin and full range: kernels and step windows.
        let steps = &src.result.steps;
        let first = k.start_ns().first().copied();
        let origin_ns = super::anomaly::time_origin_ns(&src.result, k).unwrap_or(0);
        let lo = steps.iter().map(|s| s.window.start_ns).chain(first).min();
        let hi = steps
            .iter()
            .map(|s| s.window.end_ns)
            .chain(
                lanes
                    .iter()
                    .filter(|l| l.items_of == Items::Kernels)
                    .filter_map(|l| l.spans.max_end()),
            )
            .max();
        let full_ns = match (lo, hi) {
            (Some(a), Some(b)) if b > a => (a, b),
            (Some(a), _) => (a, a + 1_000_000),
            _ => (origin_ns, origin_ns + 1_000_000),
        };
        // Bubbles: step-scoped first on equal intervals; a global window repeating one is dropped.
        let bw = &src.result.bubbles;
        let mut order: Vec<u32> = (0..bw.len() as u32).collect();
        let key = |i: &u32| {
            let w = &bw[*i as usize].window;
            (
                w.interval.start_ns,
                w.interval.end_ns,
                w.scope == Scope::Global,
            )
        };
        crate::base::sort::sort_by_key(&mut order, key);
        let mut bubbles: Vec<u32> = Vec::with_capacity(order.len());
        for i in order {
            let w = &bw[i as usize].window;
            let dup = bubbles.last().is_some_and(|&p| {
                let pw = &bw[p as usize].window;
                w.scope == Scope::Global && pw.interval == w.interval
            });
            if !dup {
                bubbles.push(i);
            }
        }
        let bubble_reach = running_max(
            bubbles
                .iter()
                .map(|&i| bw[i as usize].window.interval.end_ns),
        );
        TimelineIndex {
            origin_ns,
            full_ns,
            lanes,
            bubbles,
            bubble_reach,
        }
    }

    /// Number of lanes (device lanes first).
    pub fn lane_count(&self) -> usize {
        self.lanes.len()
    }

    /// Absolute ns of relative time 0.
    pub fn origin_ns(&self) -> i64 {
        self.origin_ns
    }

    /// The lane showing items of `of` with key `key` (stream name id or thread id).
    pub(super) fn lane_of(&self, of: Items, key: u32) -> Option<u32> {
        self.lanes
            .iter()
            .position(|l| l.items_of == of && l.key == key)
            .map(|p| p as u32)
    }

    /// What lane `lane` shows and its spans, and the item at each position.
    pub(super) fn lane(&self, lane: u32) -> Option<(Items, &LaneSpans, &[u32])> {
        self.lanes
            .get(lane as usize)
            .map(|l| (l.items_of, &l.spans, l.items.as_slice()))
    }

    pub(super) fn rel_ms(&self, ns: i64) -> f64 {
        ns_to_ms(ns - self.origin_ns)
    }

    fn abs_ns(&self, ms: f64) -> i64 {
        let v = (ms * 1e6).round();
        let v = if v.is_finite() {
            v.clamp(-9.0e18, 9.0e18)
        } else {
            0.0
        };
        self.origin_ns.saturating_add(v as i64)
    }

    /// The window in absolute ns a query asks for (the full range when absent or invalid).
    pub fn window_ns(&self, q: &TimelineQuery) -> (i64, i64) {
        match q.x_range_ms {
            Some((a, b)) if a.is_finite() && b.is_finite() && b > a => {
                let (x0, x1) = (self.abs_ns(a), self.abs_ns(b));
                if x1 > x0 {
                    (x0, x1)
                } else {
                    (x0, x0 + 1)
                }
            }
            _ => self.full_ns,
        }
    }

    fn span(src: TimelineSource<'_>, of: Items, i: u32) -> (i64, i64) {
        let i = i as usize;
        match of {
            Items::Kernels => (src.kernels.start_ns()[i], src.kernels.end_ns(i)),
            Items::Host => src
                .trace
                .and_then(|t| t.events().get(i))
                .map(|e| (e.start_ns, e.end_ns()))
                .unwrap_or((0, 0)),
        }
    }

    /// The merged boxes of lane `lane` for query `q`, in absolute ns (what
    /// [`build`](Self::build) turns into [`LaneBoxesDto`]); empty for an unknown lane.
    pub fn lane_boxes(&self, lane: usize, q: &TimelineQuery) -> Vec<MergedBox> {
        let Some(l) = self.lanes.get(lane) else {
            return Vec::new();
        };
        let (x0, x1) = self.window_ns(q);
        l.spans
            .merged(x0, x1, (x1 - x0) as f64 / q.width_px.max(1) as f64)
            .0
    }

    /// Builds the payload of one `AnomalyQuery::Timeline` (see the module doc for the merging rule).
    pub fn build(&self, src: TimelineSource<'_>, rank: u32, q: &TimelineQuery) -> TimelineDto {
        let (x0, x1) = self.window_ns(q);
        let width = q.width_px.max(1);
        let px_ns = (x1 - x0) as f64 / width as f64;
        let mut names: Vec<String> = Vec::new();
        let mut name_ix: HashMap<(bool, u32), u32> = HashMap::default();
        let mut lanes = Vec::with_capacity(self.lanes.len());
        for (lane_id, lane) in self.lanes.iter().enumerate() {
            let (merged, in_window) = lane.spans.merged(x0, x1, px_ns);
            let mut boxes = LaneBoxesDto::default();
            for m in &merged {
                let item = lane.items[m.longest];
                let (class, name_key, text) = match lane.items_of {
                    Items::Kernels => {
                        let k = src.kernels;
                        let n = k.name()[item as usize];
                        (class_code(k.class()[item as usize]), (false, n), k.text(n))
                    }
                    Items::Host => {
                        let (n, t) = match src
                            .trace
                            .and_then(|t| t.events().get(item as usize).map(|e| (e.name, t)))
                        {
                            Some((n, t)) => (n, t.text(n)),
                            None => (0, ""),
                        };
                        (HOST_CLASS, (true, n), t)
                    }
                };
                let name = *name_ix.entry(name_key).or_insert_with(|| {
                    names.push(text.to_string());
                    (names.len() - 1) as u32
                });
                let len = m.end_ns - m.start_ns;
                boxes.start_ms.push(self.rel_ms(m.start_ns));
                boxes.end_ms.push(self.rel_ms(m.end_ns));
                boxes.count.push(m.count);
                boxes.busy.push(if len > 0 {
                    (m.busy_ns as f64 / len as f64) as f32
                } else {
                    1.0
                });
                boxes.class.push(class);
                boxes.name.push(name);
            }
            lanes.push(LaneDto {
                id: lane_id as u32,
                label: lane.label.clone(),
                kind: match lane.items_of {
                    Items::Kernels => LaneKind::Device,
                    Items::Host => LaneKind::Host,
                },
                total: lane.items.len() as u64,
                in_window,
                boxes,
            });
        }
        TimelineDto {
            rank,
            origin_ms: ns_to_ms(self.origin_ns),
            full_range_ms: (self.rel_ms(self.full_ns.0), self.rel_ms(self.full_ns.1)),
            x_range_ms: (self.rel_ms(x0), self.rel_ms(x1)),
            width_px: width,
            lanes,
            steps: self.steps_in(src, x0, x1),
            bubbles: self.bubbles_in(src, x0, x1, px_ns),
            names,
        }
    }

    fn steps_in(&self, src: TimelineSource<'_>, x0: i64, x1: i64) -> Vec<StepBandDto> {
        src.result
            .steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.window.end_ns > x0 && s.window.start_ns < x1)
            .map(|(i, s)| StepBandDto {
                index: i as u32,
                step_id: s.step_id.clone(),
                start_ms: self.rel_ms(s.window.start_ns),
                end_ms: self.rel_ms(s.window.end_ns),
                busy_union_ms: ns_to_ms(s.metrics.busy_ns),
                underfeed_ratio: s.metrics.underfeed_ratio,
            })
            .collect()
    }

    fn bubbles_in(
        &self,
        src: TimelineSource<'_>,
        x0: i64,
        x1: i64,
        px_ns: f64,
    ) -> Vec<BubbleMarkDto> {
        let bw = &src.result.bubbles;
        let a = self.bubble_reach.partition_point(|&r| r <= x0);
        let iv = |i: u32| bw[i as usize].window.interval;
        let visible = self.bubbles[a..]
            .iter()
            .copied()
            .take_while(|&i| iv(i).start_ns < x1)
            .filter(|&i| iv(i).end_ns > x0);
        let mut out: Vec<BubbleMarkDto> = Vec::new();
        let mut cluster_end = i64::MIN;
        let mut best_len = 0i64;
        for i in visible {
            let w = iv(i);
            match out.last_mut() {
                Some(last) if ((w.start_ns - cluster_end) as f64) < px_ns => {
                    let merged = last.merged + 1;
                    cluster_end = cluster_end.max(w.end_ns);
                    if w.len_ns() > best_len {
                        best_len = w.len_ns();
                        *last = self.bubble_mark(src, i);
                    }
                    last.merged = merged;
                }
                _ => {
                    cluster_end = w.end_ns;
                    best_len = w.len_ns();
                    out.push(self.bubble_mark(src, i));
                }
            }
        }
        out
    }

    fn bubble_mark(&self, src: TimelineSource<'_>, i: u32) -> BubbleMarkDto {
        let b = &src.result.bubbles[i as usize];
        BubbleMarkDto {
            index: i,
            bubble_id: b.window.bubble_id.clone(),
            scope: b.window.scope.as_str().to_string(),
            start_ms: self.rel_ms(b.window.interval.start_ns),
            end_ms: self.rel_ms(b.window.interval.end_ns),
            labels: b.labels.iter().map(|l| l.as_str().to_string()).collect(),
            significant: b.window.significant,
            merged: 1,
        }
    }
}

#[cfg(test)]
#[path = "timeline_tests.rs"]
mod tests;
