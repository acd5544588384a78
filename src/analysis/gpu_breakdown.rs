//! HTA-compatible GPU breakdowns of one rank (gpu-traces.md §1–§3; HTA 0.5.0
//! `hta/analyzers/breakdown_analysis.py`, `hta/common/trace.py`, `hta/common/trace_parser.py`):
//! the parity window, `gpu_time_breakdown` (HTA's temporal breakdown) and `idle_by_stream`
//! (HTA's idle-time breakdown).
//!
//! Input is one [`HtaEvent`] per `X` event of the trace that HTA keeps (it has a `dur` and a
//! `cat`, and the `cat` is not `Trace`). HTA's own arithmetic is followed step by step, so the
//! numbers are HTA's to the µs:
//! * **Times** ([`HtaEvent::us`]): the file's float µs, `ts` rounded **up** and `ts + dur`
//!   rounded **down** (`round_down_time_stamps`), both computed in `f64` from the exact
//!   decimal value as Python does; integral µs are unchanged. Results are integral µs.
//! * **GPU events** are those with a `stream` ≥ 0 and a `correlation` ≥ 0, plus `Event Sync` /
//!   `Context Sync` (`_filter_gpu_kernels_with_cuda_sync`); every other event is a CPU event.
//! * **Parity window** (`_filter_irrelevant_gpu_kernels`): with two or more distinct event
//!   names containing `ProfilerStep`, only CPU events starting before the start of the last
//!   `ProfilerStep` (the latest start of a CPU event so named) are kept, and only GPU events
//!   whose `correlation` one of the kept CPU events carries; with fewer, nothing is dropped.
//! * **Temporal breakdown** over kept events with a stream ≠ −1 (kernels, memcpy, memset and
//!   `cuda_sync` events on a stream): `span_us` = last merged end − first merged start,
//!   `idle_us` = `span_us` − merged length, `compute_us` = merged length of the computation
//!   kernels ([`KernelClass`]), `non_compute_us` = the rest. Intervals touching end to start
//!   merge (`merge_kernel_intervals`: a new group starts only when `ts` > the running end).
//! * **Idle by stream** over kept device ops (`cat` kernel / memcpy / memset): per stream, in
//!   start order, each gap `ts − previous end` is `host_wait` when the op's launching runtime
//!   call (same `correlation`, among kept CPU events) started after the previous op ended,
//!   else `kernel_wait` when the gap is < 30 µs (`consecutive_kernel_delay`), else `other`.
//!   The first op of a stream is always `other` with no gap, so `other_us` is always present.

use rustc_hash::FxHashSet as HashSet;
use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::gpu_kernel_class::KernelClass;
use crate::base::sort::sort_by_i64_pair;
use crate::model::gpu::GpuTrace;

/// HTA's `consecutive_kernel_delay` default, µs (its docstring says ns; its frames hold µs).
pub const CONSECUTIVE_KERNEL_DELAY_US: i64 = 30;

/// What an event is for HTA's two breakdowns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HtaEventKind {
    /// `kernel`, `gpu_memcpy`, `gpu_memset` (2021: `Kernel`, `Memcpy`, `Memset`).
    DeviceOp,
    /// Any other event (`cpu_op`, `cuda_runtime`, `cuda_sync`, annotations…).
    Other,
}

/// One `X` event as HTA's breakdowns see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HtaEvent<'a> {
    /// Event name.
    pub name: &'a str,
    /// Device op or not.
    pub kind: HtaEventKind,
    /// `args.stream` as HTA reads it (`int(value)`, else −1).
    pub stream: i64,
    /// `args.correlation`, −1 when absent.
    pub correlation: i64,
    /// `ts`, ns (exact from the µs text).
    pub ts_ns: i64,
    /// `dur`, ns.
    pub dur_ns: i64,
}

/// The nearest `f64` to `ns / 1000` (the float Python reads from the µs text).
fn float_us(ns: i64) -> f64 {
    if ns % 1000 == 0 {
        return (ns / 1000) as f64;
    }
    // Below 2^53 both operands are exact f64s and IEEE division rounds correctly: the same
    // nearest f64 as parsing the decimal text.
    if ns.unsigned_abs() <= 1 << 53 {
        return ns as f64 / 1000.0;
    }
    if let Some(v) = nearest_thousandth(ns.unsigned_abs()) {
        return if ns < 0 { -v } else { v };
    }
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
        .parse()
        .unwrap_or((ns as f64) / 1000.0)
}

/// The nearest `f64` to `a / 1000` (ties to even) for `2^53 < a` with `a / 1000 < 2^53`, by
/// integer arithmetic: the 53-bit quotient of `a · 2^s / 1000` and its remainder decide the
/// rounding, the scaling by `2^-s` is exact. `None` outside that range.
fn nearest_thousandth(a: u64) -> Option<f64> {
    const ONE: u128 = 1 << 52;
    let mut s = 0u32;
    let q0 = a as u128 / 1000;
    if q0 >= 2 * ONE || a <= 1 << 53 {
        return None;
    }
    while ((a as u128) << s) / 1000 < ONE {
        s += 1;
    }
    let num = (a as u128) << s;
    let (mut q, r) = (num / 1000, num % 1000);
    if 2 * r > 1000 || (2 * r == 1000 && q & 1 == 1) {
        q += 1;
    }
    Some(q as f64 / (1u64 << s) as f64)
}

impl HtaEvent<'_> {
    /// `(ts, end)` in integral µs after HTA's rounding (`ceil(ts)`, `floor(ts + dur)`).
    pub fn us(&self) -> (i64, i64) {
        let ts = float_us(self.ts_ns);
        let end = ts + float_us(self.dur_ns);
        (ts.ceil() as i64, end.floor() as i64)
    }

    fn is_gpu(&self) -> bool {
        (self.stream >= 0 && self.correlation >= 0)
            || self.name == "Event Sync"
            || self.name == "Context Sync"
    }
}

/// Which events the HTA-named fields used (gpu-traces.md §1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HtaWindow {
    /// Distinct event names containing `ProfilerStep`.
    pub profiler_steps: usize,
    /// Start (µs, HTA-rounded) of the last `ProfilerStep` when the window applies (≥ 2 steps).
    pub last_step_start_us: Option<i64>,
    /// GPU events kept / dropped by the window.
    pub gpu_kept: usize,
    /// GPU events dropped (launched at or after the last step's start, or never launched by a
    /// kept CPU event).
    pub gpu_dropped: usize,
}

/// `gpu_time_breakdown` (HTA temporal breakdown), integral µs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct GpuTimeBreakdown {
    /// HTA `kernel_time`: last merged end − first merged start.
    pub span_us: i64,
    /// `span_us` − union of all GPU intervals.
    pub idle_us: i64,
    /// Union of the computation kernels.
    pub compute_us: i64,
    /// `span_us − compute_us − idle_us`.
    pub non_compute_us: i64,
}

/// One stream of `idle_by_stream` (HTA idle-time breakdown), integral µs; a category is
/// `None` when no gap of that stream fell into it (HTA reports no row for it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamIdle {
    /// `args.stream`.
    pub stream: i64,
    /// Gaps where the next op was launched after the previous op ended.
    pub host_wait_us: Option<i64>,
    /// Other gaps shorter than [`CONSECUTIVE_KERNEL_DELAY_US`].
    pub kernel_wait_us: Option<i64>,
    /// The rest (always present: the first op of a stream counts here with no gap).
    pub other_us: i64,
}

/// Both HTA breakdowns of one rank, with the window they used.
#[derive(Clone, Debug, PartialEq)]
pub struct HtaBreakdowns {
    /// The parity window.
    pub window: HtaWindow,
    /// `None` when no kept event has a stream (a host-only trace).
    pub time: Option<GpuTimeBreakdown>,
    /// Streams in ascending order; empty when no device op is kept.
    pub idle_by_stream: Vec<StreamIdle>,
}

/// Merged length and extent of `(start, end)` intervals, HTA's `merge_kernel_intervals`:
/// sorted by start, a new group begins only when `start` > the running maximum end; the
/// result is Σ (group end − group start) and (first start, last group end).
fn merged(mut iv: Vec<(i64, i64)>) -> Option<(i64, i64, i64)> {
    iv.sort_unstable();
    let mut groups: Vec<(i64, i64)> = Vec::new();
    let mut running = i64::MIN;
    for (s, e) in iv {
        match groups.last_mut() {
            Some(g) if s <= running => g.1 = g.1.max(e),
            _ => groups.push((s, e)),
        }
        running = running.max(e);
    }
    let first = groups.first()?.0;
    let last = groups.last()?.1;
    let len = groups.iter().map(|g| g.1 - g.0).sum();
    Some((len, first, last))
}

/// Values by correlation id: the ids in `0..dense.len()` in a vector (Kineto's ids count up
/// from small numbers), any other id in a hash map.
struct ByCorrelation<V> {
    dense: Vec<Option<V>>,
    sparse: FxHashMap<i64, V>,
}

impl<V: Copy> ByCorrelation<V> {
    /// Dense up to the largest id of `events` below `4 × len + 1024`.
    fn new(events: &[HtaEvent<'_>]) -> Self {
        let limit = 4 * events.len() as i64 + 1024;
        let max = events
            .iter()
            .map(|e| e.correlation)
            .filter(|c| (0..limit).contains(c))
            .max();
        ByCorrelation {
            dense: vec![None; max.map_or(0, |m| m as usize + 1)],
            sparse: FxHashMap::default(),
        }
    }

    fn insert(&mut self, id: i64, v: V) {
        match usize::try_from(id).ok().and_then(|i| self.dense.get_mut(i)) {
            Some(slot) => *slot = Some(v),
            None => {
                self.sparse.insert(id, v);
            }
        }
    }

    fn get(&self, id: i64) -> Option<V> {
        match usize::try_from(id).ok().and_then(|i| self.dense.get(i)) {
            Some(v) => *v,
            None => self.sparse.get(&id).copied(),
        }
    }
}

/// Runs the parity window and both breakdowns over one rank's events (any order).
pub fn analyse(events: &[HtaEvent<'_>]) -> HtaBreakdowns {
    let us: Vec<(i64, i64)> = events.iter().map(HtaEvent::us).collect();
    let gpu: Vec<bool> = events.iter().map(HtaEvent::is_gpu).collect();
    // What the rules below ask of a name (`ProfilerStep` inside, the HTA kernel class), once
    // per distinct name: the events of a trace borrow their names from its string pool, so
    // equal names mostly share one address, the memo's key.
    let mut memo: FxHashMap<(*const u8, usize), (bool, KernelClass)> = FxHashMap::default();
    let facts: Vec<(bool, KernelClass)> = events
        .iter()
        .map(|e| {
            *memo
                .entry((e.name.as_ptr(), e.name.len()))
                .or_insert_with(|| (e.name.contains("ProfilerStep"), KernelClass::of(e.name)))
        })
        .collect();
    let is_step = |i: usize| facts[i].0;
    let step_names: HashSet<&str> = events
        .iter()
        .enumerate()
        .filter(|&(i, _)| is_step(i))
        .map(|(_, e)| e.name)
        .collect();
    let last_step_start = (step_names.len() >= 2)
        .then(|| {
            (0..events.len())
                .filter(|&i| !gpu[i] && is_step(i))
                .map(|i| us[i].0)
                .max()
        })
        .flatten();
    // Kept CPU events, their correlations and launch starts (last one of an id wins, as
    // HTA's `.loc` assignment does).
    let cpu_kept = |i: usize| last_step_start.is_none_or(|l| us[i].0 < l);
    let mut launch: ByCorrelation<i64> = ByCorrelation::new(events);
    let mut kept_corr: ByCorrelation<()> = ByCorrelation::new(events);
    for (i, e) in events.iter().enumerate() {
        if !gpu[i] && cpu_kept(i) {
            kept_corr.insert(e.correlation, ());
            if e.correlation >= 0 {
                launch.insert(e.correlation, us[i].0);
            }
        }
    }
    let (mut gpu_total, mut gpu_kept) = (0, 0);
    let kept: Vec<bool> = events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            if gpu[i] {
                let k = last_step_start.is_none() || kept_corr.get(e.correlation).is_some();
                gpu_total += 1;
                gpu_kept += k as usize;
                k
            } else {
                cpu_kept(i)
            }
        })
        .collect();
    let window = HtaWindow {
        profiler_steps: step_names.len(),
        last_step_start_us: last_step_start,
        gpu_kept,
        gpu_dropped: gpu_total - gpu_kept,
    };

    let (mut all, mut compute) = (Vec::new(), Vec::new());
    let mut by_stream: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        if kept[i] && e.stream != -1 {
            all.push(us[i]);
            if facts[i].1 == KernelClass::Computation {
                compute.push(us[i]);
            }
            if e.kind == HtaEventKind::DeviceOp {
                by_stream.entry(e.stream).or_default().push(i);
            }
        }
    }
    let time = merged(all).map(|(run, first, last)| {
        let span_us = last - first;
        let idle_us = span_us - run;
        let compute_us = merged(compute).map_or(0, |c| c.0);
        GpuTimeBreakdown {
            span_us,
            idle_us,
            compute_us,
            non_compute_us: span_us - compute_us - idle_us,
        }
    });

    let idle_by_stream = by_stream
        .into_iter()
        .map(|(stream, mut ix)| {
            // `ix` ascends, so a tie on (start, end) keeps `i` ascending.
            sort_by_i64_pair(&mut ix, |i| us[i]);
            let mut s = StreamIdle {
                stream,
                host_wait_us: None,
                kernel_wait_us: None,
                other_us: 0,
            };
            for w in ix.windows(2) {
                let (prev_end, (ts, _)) = (us[w[0]].1, us[w[1]]);
                let gap = ts - prev_end;
                let launched = launch.get(events[w[1]].correlation);
                if launched.is_some_and(|l| l > prev_end) {
                    *s.host_wait_us.get_or_insert(0) += gap;
                } else if gap < CONSECUTIVE_KERNEL_DELAY_US {
                    *s.kernel_wait_us.get_or_insert(0) += gap;
                } else {
                    s.other_us += gap;
                }
            }
            s
        })
        .collect();
    HtaBreakdowns {
        window,
        time,
        idle_by_stream,
    }
}

/// The events of a Kineto trace as HTA's breakdowns see them: device ops, host events with a
/// `cat` other than `Trace` (HTA drops events without `cat` and the `Trace` span), and the
/// `gpu_user_annotation` spans, which HTA reads without a stream (they carry none in `args`).
pub fn hta_events(t: &GpuTrace) -> Vec<HtaEvent<'_>> {
    let mut v = Vec::with_capacity(t.device_ops.len() + t.host_ops.len() + t.gpu_annotations.len());
    v.extend(t.device_ops.iter().map(|d| HtaEvent {
        name: t.text(d.name),
        kind: HtaEventKind::DeviceOp,
        stream: d.stream,
        correlation: d.correlation,
        ts_ns: d.start_ns,
        dur_ns: d.dur_ns(),
    }));
    v.extend(
        t.host_ops
            .iter()
            .filter(|h| !matches!(t.text(h.cat), "" | "Trace"))
            .map(|h| HtaEvent {
                name: t.text(h.name),
                kind: HtaEventKind::Other,
                stream: h.stream,
                correlation: h.correlation,
                ts_ns: h.start_ns,
                dur_ns: h.dur_ns,
            }),
    );
    v.extend(t.gpu_annotations.iter().map(|&(_, s, e, name)| HtaEvent {
        name: t.text(name),
        kind: HtaEventKind::Other,
        stream: -1,
        correlation: -1,
        ts_ns: s,
        dur_ns: e - s,
    }));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(name: &str, stream: i64, corr: i64, ts_us: f64, dur_us: f64) -> HtaEvent<'_> {
        HtaEvent {
            name,
            kind: if stream >= 0 {
                HtaEventKind::DeviceOp
            } else {
                HtaEventKind::Other
            },
            stream,
            correlation: corr,
            ts_ns: (ts_us * 1000.0).round() as i64,
            dur_ns: (dur_us * 1000.0).round() as i64,
        }
    }

    #[test]
    fn rounding_is_ceil_of_start_and_floor_of_end() {
        assert_eq!(ev("k", 7, 1, 10.2, 0.5).us(), (11, 10)); // HTA's negative duration
        assert_eq!(ev("k", 7, 1, 10.0, 5.0).us(), (10, 15));
        let epoch = HtaEvent {
            ts_ns: 1_712_195_495_984_501_200,
            dur_ns: 2_500,
            ..ev("k", 7, 1, 0.0, 0.0)
        };
        assert_eq!(epoch.us(), (1_712_195_495_984_502, 1_712_195_495_984_503));
        assert_eq!(float_us(-1500), -1.5);
    }

    #[test]
    fn float_us_is_the_parsed_decimal() {
        let text = |ns: i64| -> f64 {
            let a = ns.unsigned_abs();
            let sign = if ns < 0 { "-" } else { "" };
            format!("{sign}{}.{:03}", a / 1000, a % 1000)
                .parse()
                .unwrap()
        };
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut cases: Vec<i64> = vec![
            (1 << 53) - 1,
            1 << 53,
            (1 << 53) + 1,
            1_712_195_495_984_501_200,
            1_736_408_883_707_769_235,
            (1 << 62) - 1,
            -(1 << 62) + 1,
            i64::MAX / 1000 * 1000 - 1,
        ];
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bits = 20 + (x % 43) as u32;
            let v = (x >> 1) as i64 & ((1i64 << bits) - 1);
            cases.push(if x & 1 == 0 { v } else { -v });
        }
        // Halfway between two f64s: `m + 0.5` µs in [2^52, 2^53), `m + 0.25 / 0.75` in [2^51, 2^52).
        for j in 0..64i64 {
            let (hi, lo) = ((1i64 << 52) + j * 977, (1i64 << 51) + j * 977);
            cases.extend([
                hi * 1000 + 500,
                lo * 1000 + 250,
                lo * 1000 + 750,
                -(hi * 1000 + 500),
            ]);
        }
        for ns in cases {
            assert_eq!(float_us(ns).to_bits(), text(ns).to_bits(), "{ns}");
        }
    }

    #[test]
    fn window_drops_gpu_events_launched_in_the_last_step() {
        let e = [
            ev("ProfilerStep#1", -1, -1, 0.0, 100.0),
            ev("ProfilerStep#2", -1, -1, 100.0, 100.0),
            ev("cudaLaunchKernel", -1, 1, 10.0, 2.0),
            ev("cudaLaunchKernel", -1, 2, 50.0, 2.0),
            ev("cudaLaunchKernel", -1, 3, 120.0, 2.0),
            ev("gemm", 7, 1, 20.0, 10.0),                 // 20–30
            ev("Memcpy DtoD", 7, 2, 60.0, 10.0),          // 60–70, host wait 30 (launch 50 > 30)
            ev("gemm", 7, 3, 130.0, 10.0),                // launched in the last step: dropped
            ev("ncclKernel_AllReduce", 9, 2, 65.0, 20.0), // 65–85, overlaps the memcpy
        ];
        let b = analyse(&e);
        assert_eq!(b.window.profiler_steps, 2);
        assert_eq!(b.window.last_step_start_us, Some(100));
        assert_eq!((b.window.gpu_kept, b.window.gpu_dropped), (3, 1));
        // Union 20–30, 60–85: span 65, busy 35, idle 30; compute = gemm 10.
        assert_eq!(
            b.time,
            Some(GpuTimeBreakdown {
                span_us: 65,
                idle_us: 30,
                compute_us: 10,
                non_compute_us: 25
            })
        );
        assert_eq!(
            b.idle_by_stream,
            [
                StreamIdle {
                    stream: 7,
                    host_wait_us: Some(30),
                    kernel_wait_us: None,
                    other_us: 0
                },
                StreamIdle {
                    stream: 9,
                    host_wait_us: None,
                    kernel_wait_us: None,
                    other_us: 0
                },
            ]
        );
    }

    #[test]
    fn one_step_keeps_everything_and_gaps_split_at_thirty_us() {
        let e = [
            ev("ProfilerStep#1", -1, -1, 0.0, 1000.0),
            ev("cudaLaunchKernel", -1, 1, 1.0, 1.0),
            ev("cudaLaunchKernel", -1, 2, 2.0, 1.0),
            ev("cudaLaunchKernel", -1, 3, 3.0, 1.0),
            ev("a", 7, 1, 10.0, 10.0), // 10–20
            ev("b", 7, 2, 49.0, 1.0),  // gap 29 < 30: kernel wait
            ev("c", 7, 3, 80.0, 1.0),  // gap 30: other
            ev("d", 7, 4, 90.0, 1.0),  // never launched by a CPU event: gap 9 → kernel wait
        ];
        let b = analyse(&e);
        assert_eq!(b.window.last_step_start_us, None);
        assert_eq!(
            b.idle_by_stream,
            [StreamIdle {
                stream: 7,
                host_wait_us: None,
                kernel_wait_us: Some(38),
                other_us: 30
            }]
        );
        assert_eq!(b.time.unwrap().idle_us, 68);
    }

    #[test]
    fn touching_intervals_merge_and_host_only_has_no_time_breakdown() {
        assert_eq!(merged(vec![(0, 10), (10, 20), (25, 30)]), Some((25, 0, 30)));
        let b = analyse(&[ev("aten::add", -1, -1, 0.0, 5.0)]);
        assert_eq!(b.time, None);
        assert!(b.idle_by_stream.is_empty());
    }
}
