//! Device-side step windows when the device lags the host (anomaly.md §3.2, "Device lag"
//! Decision).
//!
//! Kernels run asynchronously: when the device falls behind, host-marker windows hand step
//! *i*'s kernels to step *i + 1*. Each kernel's **launch step** is the host marker window its
//! launching host op lies in — from the kernel's launch time (GPU: the `cuda_runtime` /
//! `hip_runtime` launch joined by `correlation`; Ascend: a launch flow) or, without one, from
//! its `Step Id` (Ascend, `Step Id` N ↔ marker `…#N`). When, in some marker window, more than
//! `AnomalyConfig::device_lag_share` (5 %) of the kernel time was launched in an earlier step,
//! the rank switches to device-side windows: step *i* = the kernels launched inside host window
//! *i*, `S_i` = the host window start or, if later, the previous device-side step's last kernel
//! end, `E_i` = the end of its last kernel.
//!
//! A window's kernel time is that of the kernels that start in it plus the **overrun tails**
//! of earlier steps' kernels: the part of a kernel launched in step *j < i* that runs inside host
//! window *i* (anomaly.md §3.2.1). So a rank whose kernels start inside their own host window
//! but run past its end (an eager torch_npu rank: each step's last kernel ends in the next
//! step's window) lags too, and the next step's device-side prelaunch is its first kernel start
//! minus the previous step's last kernel end, not 0.
//!
//! Kernel ranges stay index ranges of the start-sorted table: step *i* holds the kernels that
//! start in `[S_i, S_{i+1})` (the last step: `[S_last, ∞)`). A kernel launched in step *i* that
//! starts before `S_i` (it overlaps the previous step's tail on another stream) therefore stays
//! in the earlier range; [`DeviceLag::moved_kernels`] counts them and the note says so.

use rustc_hash::FxHashSet as HashSet;

use super::anomaly_config::AnomalyConfig;
use super::intervals::{percentile, Interval};
use super::steps::Step;
use crate::base::units::ns_to_ms;
use crate::model::kernels::KernelTable;
use crate::model::side_tables::StepTraceRow;

/// Where the launch steps came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchSource {
    /// The kernels' launch times (`correlation` / flows).
    LaunchTime,
    /// The kernels' `Step Id` column.
    StepId,
}

impl LaunchSource {
    /// Words for the note (`launch correlation`, `Step Id`).
    pub fn as_str(self) -> &'static str {
        match self {
            LaunchSource::LaunchTime => "launch correlation",
            LaunchSource::StepId => "Step Id",
        }
    }
}

/// Per-step facts of the device-lag check, aligned with the steps.
#[derive(Clone, Debug, PartialEq)]
pub struct StepLag {
    /// Host marker start `H_i`, ns.
    pub host_start_ns: i64,
    /// Share (0–1) of the marker window's kernel time (the kernels that start in it and the
    /// overrun tails of earlier steps' kernels, §3.2.1) that was launched in an earlier step.
    pub lagged_share: f64,
    /// Of that kernel time, the overrun tails: the time earlier steps' kernels that started
    /// before this marker ran inside its window (clipped to the window), ns.
    pub tail_ns: i64,
    /// First start − `H_i` of the kernels launched in host window *i*, ns (`None`: none).
    pub lag_ns: Option<i64>,
    /// `S_i − H_i`: how far the previous device-side step ran past this host marker, ns (≥ 0).
    pub overrun_ns: i64,
}

/// The device-lag check of one rank (§3.2).
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceLag {
    /// How the launch steps were known.
    pub source: LaunchSource,
    /// The threshold used (`AnomalyConfig::device_lag_share`).
    pub threshold: f64,
    /// True when device-side windows replaced the marker windows.
    pub applied: bool,
    /// Largest [`StepLag::lagged_share`] and the index of its step.
    pub max_share: (f64, usize),
    /// Per step, in step order.
    pub steps: Vec<StepLag>,
    /// Median of [`StepLag::lag_ns`] over steps with kernels, ms.
    pub median_lag_ms: f64,
    /// Kernels that start inside another device-side window than their launch step's.
    pub moved_kernels: usize,
    /// `step_trace_time.csv` cross-check: (steps checked, steps where `Preparing` equals the
    /// device-side prelaunch plus the overrun within [`CROSS_CHECK_TOL_NS`]).
    pub step_trace_check: Option<(usize, usize)>,
}

/// Tolerance of the `step_trace_time.csv` cross-check: msprof rounds to 0.25 µs, so 1 µs.
pub const CROSS_CHECK_TOL_NS: i64 = 1_000;

/// Step number of a marker step id (`ProfilerStep#7` → 7, `Iteration 3` → 3).
fn marker_number(step_id: &str) -> Option<i64> {
    let digits = step_id.rsplit(['#', ' ']).next()?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// Launch step (index into `steps`) per kernel, and the source used; `None` when no kernel
/// has a launch time and the `Step Id`s name fewer than two marker steps.
fn launch_steps(
    kernels: &KernelTable,
    steps: &[Step],
) -> Option<(LaunchSource, Vec<Option<usize>>)> {
    let starts: Vec<i64> = steps.iter().map(|s| s.window.start_ns).collect();
    if kernels.has_launch_times() {
        let v = (0..kernels.len())
            .map(|i| {
                let l = kernels.launch_ns(i)?;
                starts.partition_point(|&s| s <= l).checked_sub(1)
            })
            .collect();
        return Some((LaunchSource::LaunchTime, v));
    }
    let numbers: Vec<(i64, usize)> = steps
        .iter()
        .enumerate()
        .filter_map(|(j, s)| marker_number(&s.step_id).map(|n| (n, j)))
        .collect();
    let v: Vec<Option<usize>> = kernels
        .step_tag()
        .iter()
        .map(|t| {
            let t = (*t)?;
            numbers.iter().find(|(n, _)| *n == t).map(|&(_, j)| j)
        })
        .collect();
    // `Step Id` is a launch tag only when it names at least two marker steps: a column that
    // holds one value for every kernel (or for kernels of several windows) says nothing
    // about when each kernel was launched.
    let named: HashSet<usize> = v.iter().flatten().copied().collect();
    (named.len() >= 2).then_some((LaunchSource::StepId, v))
}

/// Checks marker `steps` (host windows, in time order) for device lag and, when more than
/// `cfg.device_lag_share` of some window's kernel time was launched in an earlier step,
/// replaces them by device-side windows in place. Returns `None` when the launch steps are
/// unknown (no launch times, `Step Id`s naming fewer than two markers), else the check.
pub fn apply(
    kernels: &KernelTable,
    steps: &mut [Step],
    step_trace: &[StepTraceRow],
    cfg: &AnomalyConfig,
) -> Option<DeviceLag> {
    if steps.len() < 2 {
        return None;
    }
    let (source, launch) = launch_steps(kernels, steps)?;
    let n = steps.len();
    // Per host window: (kernel time, of it launched in an earlier step, of it overrun tails).
    let mut time = vec![(0i128, 0i128, 0i64); n];
    for (j, s) in steps.iter().enumerate() {
        for i in s.kernels.clone() {
            let d = kernels.dur_ns()[i] as i128;
            time[j].0 += d;
            if launch[i].is_some_and(|l| l < j) {
                time[j].1 += d;
            }
        }
    }
    // §3.2.1 overrun tails: a kernel of step j's range launched in step l runs on past the
    // next host marker(s); its part inside host window w > j counts toward w's kernel time and,
    // as l < w, toward its lagged time. Host window w is [H_w, H_{w+1}) (the last: [H_w, ∞)).
    let host: Vec<i64> = steps.iter().map(|s| s.window.start_ns).collect();
    for (j, s) in steps.iter().enumerate() {
        for i in s.kernels.clone() {
            let Some(l) = launch[i] else { continue };
            let e = kernels.end_ns(i);
            let mut w = j + 1;
            while w < n && host[w] < e {
                let hi = host.get(w + 1).map_or(e, |&h| h.min(e));
                if l < w {
                    let d = hi - host[w];
                    time[w].0 += d as i128;
                    time[w].1 += d as i128;
                    time[w].2 += d;
                }
                w += 1;
            }
        }
    }
    let mut lags: Vec<StepLag> = steps
        .iter()
        .zip(&time)
        .map(|(s, &(total, lagged, tail_ns))| StepLag {
            host_start_ns: s.window.start_ns,
            lagged_share: if total > 0 {
                lagged as f64 / total as f64
            } else {
                0.0
            },
            tail_ns,
            lag_ns: None,
            overrun_ns: 0,
        })
        .collect();
    let max_share = lags.iter().enumerate().fold((0.0f64, 0usize), |m, (j, l)| {
        if l.lagged_share > m.0 {
            (l.lagged_share, j)
        } else {
            m
        }
    });
    // Extent (first start, last end) of the kernels launched in each host window.
    let mut extent: Vec<Option<(i64, i64)>> = vec![None; steps.len()];
    for (i, l) in launch.iter().enumerate() {
        if let Some(j) = *l {
            let (s, e) = (kernels.start_ns()[i], kernels.end_ns(i));
            let x = extent[j].get_or_insert((s, e));
            *x = (x.0.min(s), x.1.max(e));
        }
    }
    for (j, x) in extent.iter().enumerate() {
        lags[j].lag_ns = x.map(|(s, _)| s - lags[j].host_start_ns);
    }
    let lag_ms: Vec<f64> = lags.iter().filter_map(|l| l.lag_ns.map(ns_to_ms)).collect();
    let mut out = DeviceLag {
        source,
        threshold: cfg.device_lag_share,
        applied: max_share.0 > cfg.device_lag_share,
        max_share,
        steps: lags,
        median_lag_ms: percentile(&lag_ms, 0.5),
        moved_kernels: 0,
        step_trace_check: None,
    };
    if !out.applied {
        return Some(out);
    }
    // Device-side windows: S_i = max(H_i, E_{i-1}), E_i = end of its last kernel.
    let mut prev_end = i64::MIN;
    let mut bounds = Vec::with_capacity(steps.len());
    for (j, x) in extent.iter().enumerate() {
        let h = out.steps[j].host_start_ns;
        let s = h.max(prev_end);
        let e = x.map_or(s, |(_, e)| e.max(s));
        out.steps[j].overrun_ns = s - h;
        bounds.push(Interval::new(s, e));
        prev_end = e;
    }
    for j in 0..n {
        let next = bounds.get(j + 1).map_or(i64::MAX, |b| b.start_ns);
        steps[j].window = bounds[j];
        steps[j].kernels = kernels.starting_in(bounds[j].start_ns, next);
        out.moved_kernels += steps[j]
            .kernels
            .clone()
            .filter(|&i| launch[i].is_some_and(|l| l != j))
            .count();
    }
    out.step_trace_check = cross_check(kernels, steps, &out, step_trace);
    Some(out)
}

/// `step_trace_time.csv` counts `Preparing` from the host marker and ignores the previous
/// step's overrun: it should equal the device-side prelaunch (first kernel − `S_i`) plus the
/// overrun (`S_i − H_i`), i.e. first kernel − `H_i`, within [`CROSS_CHECK_TOL_NS`].
fn cross_check(
    kernels: &KernelTable,
    steps: &[Step],
    lag: &DeviceLag,
    rows: &[StepTraceRow],
) -> Option<(usize, usize)> {
    let (mut checked, mut equal) = (0usize, 0usize);
    for (s, l) in steps.iter().zip(&lag.steps) {
        let Some(num) = marker_number(&s.step_id) else {
            continue;
        };
        let Some(p) = rows
            .iter()
            .find(|r| r.step.trim() == num.to_string())
            .and_then(|r| r.preparing_ns)
        else {
            continue;
        };
        let Some(first) = s.kernels.clone().next().map(|i| kernels.start_ns()[i]) else {
            continue;
        };
        checked += 1;
        let ours = (first - s.window.start_ns) + l.overrun_ns;
        if (p - ours).abs() <= CROSS_CHECK_TOL_NS {
            equal += 1;
        }
    }
    (checked > 0).then_some((checked, equal))
}

impl DeviceLag {
    /// The note of §3.2: the decision, the largest share, the median lag in ms, moved kernels
    /// and the `step_trace_time.csv` cross-check. `None` when no kernel was launched in an
    /// earlier step (nothing to say).
    pub fn note(&self, steps: &[Step]) -> Option<String> {
        let (share, at) = self.max_share;
        if share <= 0.0 {
            return None;
        }
        let step = steps.get(at).map_or("?", |s| s.step_id.as_str());
        if !self.applied {
            return Some(format!(
                "device keeps up: at most {:.1} % of a window's kernel time ({step}) was launched in an earlier step (by {}), not above {} %: marker windows kept",
                share * 100.0,
                self.source.as_str(),
                self.threshold * 100.0
            ));
        }
        let tail = self.steps.get(at).map_or(0, |l| l.tail_ns);
        let tail = if tail > 0 {
            format!(
                ", {:.3} ms of it by earlier steps' kernels running on past the marker",
                ns_to_ms(tail)
            )
        } else {
            String::new()
        };
        let mut t = format!(
            "device lags the host: {:.1} % of the kernel time in {step}'s marker window was launched in an earlier step (by {}{tail}); device-side windows: median lag {:.3} ms (first kernel start − host marker start)",
            share * 100.0,
            self.source.as_str(),
            self.median_lag_ms
        );
        if self.moved_kernels > 0 {
            t.push_str(&format!(
                "; {} kernel(s) start inside another step's window than the one that launched them and stay in the window they start in",
                self.moved_kernels
            ));
        }
        if let Some((checked, equal)) = self.step_trace_check {
            t.push_str(&format!(
                "; step_trace_time.csv: Preparing = device-side prelaunch + the previous step's overrun on {equal} of {checked} step(s) (msprof counts from the host marker and rounds to 0.25 µs; tolerance 1 µs)"
            ));
        }
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::steps;
    use crate::model::kernels::{KernelRow, KernelTableBuilder};
    use crate::model::trace_events::MarkerEvent;

    fn kernel(name: &str, start_us: i64, dur_us: i64, launch_us: i64) -> KernelRow {
        KernelRow {
            name: name.into(),
            core_raw: "kernel".into(),
            start_ns: start_us * 1000,
            dur_ns: dur_us * 1000,
            stream: "7".into(),
            launch_ns: Some(launch_us * 1000),
            ..Default::default()
        }
    }

    fn marker(n: u32, ts_us: i64) -> MarkerEvent {
        MarkerEvent {
            name: format!("ProfilerStep#{n}"),
            ts_ns: ts_us * 1000,
            dur_ns: 90_000,
        }
    }

    /// GPU route: the launch step comes from the launch time (the `correlation` join), so a
    /// deep launch queue (every step launched early, run late) is found without `Step Id`.
    #[test]
    fn launch_times_find_the_lag_and_move_a_cross_stream_kernel() {
        let mut b = KernelTableBuilder::new();
        // Step 1 launches at 1 and 2 µs: `a` runs 50–120, `a2` 120–160 (past marker 2 at 100).
        b.push(&kernel("a", 50, 70, 1));
        b.push(&kernel("a2", 120, 40, 2));
        // Step 2 launches at 101 and 102 µs: `b` runs 160–250; `x`, on another stream, runs
        // 150–155, before step 1's device end (160), so it stays in step 1's range (moved).
        b.push(&kernel("b", 160, 90, 101));
        b.push(&KernelRow {
            stream: "20".into(),
            ..kernel("x", 150, 5, 102)
        });
        let k = b.finish();
        let set = steps::detect(
            &k,
            &[marker(1, 0), marker(2, 100)],
            &[],
            &[],
            &AnomalyConfig::spec_defaults(),
        );
        let d = set.device_lag.as_ref().unwrap();
        assert_eq!(d.source, LaunchSource::LaunchTime);
        assert!(d.applied);
        // Marker window 2 ([100, ∞)) holds a2 (40 µs, launched in step 1), x and b, and the
        // 20 µs of `a` (step 1) that run past marker 2 (§3.2.1): (40 + 20) / (135 + 20).
        assert_eq!(d.max_share, (60.0 / 155.0, 1));
        assert_eq!(d.steps[1].tail_ns, 20_000);
        assert_eq!(
            set.steps.iter().map(|s| s.window).collect::<Vec<_>>(),
            [Interval::new(0, 160_000), Interval::new(160_000, 250_000)]
        );
        assert_eq!(d.moved_kernels, 1);
        assert_eq!(
            d.steps.iter().map(|s| s.overrun_ns).collect::<Vec<_>>(),
            [0, 60_000]
        );
        assert_eq!(
            set.steps
                .iter()
                .map(|s| s.kernels.clone())
                .collect::<Vec<_>>(),
            [0..3, 3..4]
        );
        assert_eq!(d.median_lag_ms, 0.05);
        assert_eq!(
            d.note(&set.steps).unwrap(),
            "device lags the host: 38.7 % of the kernel time in ProfilerStep#2's marker window was launched in an earlier step (by launch correlation, 0.020 ms of it by earlier steps' kernels running on past the marker); device-side windows: median lag 0.050 ms (first kernel start − host marker start); 1 kernel(s) start inside another step's window than the one that launched them and stay in the window they start in"
        );
    }

    /// §3.2.1: a kernel that runs across several host windows counts, clipped, in each window
    /// after the one it starts in (here `a`, launched in step 1, covers all of window 2 and
    /// 50 µs of window 3).
    #[test]
    fn an_overrun_tail_is_clipped_to_each_window_it_crosses() {
        let mut b = KernelTableBuilder::new();
        b.push(&kernel("a", 10, 240, 1)); // 10–250
        b.push(&KernelRow {
            stream: "20".into(),
            ..kernel("b", 150, 10, 101)
        });
        b.push(&KernelRow {
            stream: "20".into(),
            ..kernel("c", 260, 50, 201)
        });
        let k = b.finish();
        let set = steps::detect(
            &k,
            &[marker(1, 0), marker(2, 100), marker(3, 200)],
            &[],
            &[],
            &AnomalyConfig::spec_defaults(),
        );
        let d = set.device_lag.as_ref().unwrap();
        assert_eq!(
            d.steps.iter().map(|s| s.tail_ns).collect::<Vec<_>>(),
            [0, 100_000, 50_000]
        );
        // Window 2: a's 100 µs of 110 µs; window 3: a's 50 of 100.
        assert_eq!(d.max_share, (100.0 / 110.0, 1));
        assert!((d.steps[2].lagged_share - 0.5).abs() < 1e-15);
        assert!(d.applied);
    }
}
