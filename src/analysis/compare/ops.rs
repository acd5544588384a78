//! Ops per name on each side of a trace comparison (traces; gpu-traces.md §5).
//!
//! * **GPU traces** ([`hta_ops`]): HTA 0.5.0 `TraceDiff.compare_traces` with its defaults
//!   (`hta/trace_diff.py` `extract_ops`, `get_ops_summary`; iterations by
//!   `hta/common/trace.py` `add_iteration`), over the events HTA keeps
//!   ([`crate::analysis::gpu_breakdown::hta_events`], HTA's µs rounding [`HtaEvent::us`]):
//!   - the iterations are the numbers `N` of the distinct event names starting `ProfilerStep`
//!     (`ProfilerStep\s*#\s*N`);
//!   - an event without a stream (`stream < 0`) belongs to the last `ProfilerStep` event `s`
//!     (in event order) with `s.ts ≤ e.ts < s.ts + s.dur`, in HTA-rounded µs;
//!   - an event on a stream (`stream > 0`) that HTA counts as a GPU event (stream ≥ 0 and
//!     correlation ≥ 0, or `Event Sync` / `Context Sync`) belongs to the iteration of the CPU
//!     event with the same `correlation` (the last one in event order); every other event with
//!     a stream, and events on stream 0, belong to none;
//!   - the ops of the chosen iterations are counted and their HTA durations (`end − ts`, µs,
//!     which can be −1 for sub-µs events) summed per full name, CPU operators and GPU kernels
//!     alike (`DeviceType.ALL`).
//! * **Ascend ranks** ([`kernel_ops`]): device kernels (`kernel_details.csv` / `op_summary`)
//!   counted and their durations (exact ns) summed per kernel name, over the kernels assigned
//!   to the chosen steps (anomaly.md §3.3).
//!
//! Decision (gpu-traces.md §5): the default is the **first step of each side**, as HTA's;
//! [`StepChoice::Nth`] picks the k-th step of each side and [`StepChoice::All`] the whole capture
//! (every event or kernel, in a step or not).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::keyed::Quantity;
use crate::analysis::gpu_breakdown::HtaEvent;
use crate::model::kernels::KernelTable;

/// Which steps of each side the ops table covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepChoice {
    /// The k-th step of each side (0 = the first: HTA's default).
    Nth(usize),
    /// The whole capture.
    All,
}

/// Count and summed duration of one name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpTotal {
    /// Occurrences.
    pub count: u64,
    /// Σ duration, ns (HTA traces: integral µs × 1000).
    pub time_ns: i64,
}

impl Quantity for OpTotal {
    fn plus(self, o: Self) -> Self {
        OpTotal {
            count: self.count.saturating_add(o.count),
            time_ns: self.time_ns.saturating_add(o.time_ns),
        }
    }
    fn change_size(a: Self, b: Self) -> Self {
        OpTotal {
            count: a.count.abs_diff(b.count),
            time_ns: i64::try_from(i128::from(b.time_ns).abs_diff(i128::from(a.time_ns)))
                .unwrap_or(i64::MAX),
        }
    }
    /// Time first, then count.
    fn size_cmp(&self, o: &Self) -> Ordering {
        self.time_ns.cmp(&o.time_ns).then(self.count.cmp(&o.count))
    }
}

/// One side's ops table and the steps it covers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SideOps {
    /// `(name, total)` per distinct name, sorted by name.
    pub ops: Vec<(String, OpTotal)>,
    /// Names of the steps covered (`ProfilerStep#1009`, a step id), empty for the whole capture.
    pub steps: Vec<String>,
    /// Steps the side has (HTA iterations on GPU traces, detected steps on Ascend).
    pub step_count: usize,
    /// The requested step does not exist on this side (the table is then empty).
    pub missing_step: bool,
}

/// `N` of `ProfilerStep\s*#\s*N…` (HTA's regex, `re.match`: a prefix match).
pub fn profiler_step_number(name: &str) -> Option<i64> {
    let rest = name.strip_prefix("ProfilerStep")?.trim_start();
    let rest = rest.strip_prefix('#')?.trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

fn is_hta_gpu(e: &HtaEvent<'_>) -> bool {
    (e.stream >= 0 && e.correlation >= 0) || e.name == "Event Sync" || e.name == "Context Sync"
}

/// HTA's iteration of every event (`None`: HTA's −1 or NaN), in `events` order.
fn hta_iterations(events: &[HtaEvent<'_>]) -> Vec<Option<i64>> {
    let us: Vec<(i64, i64)> = events.iter().map(HtaEvent::us).collect();
    // Step events in event order: (ts, end, N).
    let steps: Vec<(i64, i64, i64)> = events
        .iter()
        .zip(&us)
        .filter(|(e, _)| e.name.starts_with("ProfilerStep"))
        .filter_map(|(e, &(ts, end))| profiler_step_number(e.name).map(|n| (ts, end, n)))
        .collect();
    let cpu_iter = |ts: i64| {
        steps
            .iter()
            .rev()
            .find(|&&(s, e, _)| s <= ts && ts < e)
            .map(|s| s.2)
    };
    let mut iter: Vec<Option<i64>> = vec![None; events.len()];
    let mut by_corr: BTreeMap<i64, Option<i64>> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        if e.stream < 0 {
            iter[i] = cpu_iter(us[i].0);
        }
        if e.correlation != -1 && !is_hta_gpu(e) {
            // The CPU side of HTA's correlation join (last one wins).
            by_corr.insert(e.correlation, iter[i]);
        }
    }
    for (i, e) in events.iter().enumerate() {
        if e.stream > 0 && is_hta_gpu(e) && e.correlation != -1 {
            iter[i] = by_corr.get(&e.correlation).copied().flatten();
        }
    }
    iter
}

/// HTA's ops table of one GPU trace (module doc) for `choice`.
pub fn hta_ops(events: &[HtaEvent<'_>], choice: StepChoice) -> SideOps {
    let mut numbers: Vec<i64> = events
        .iter()
        .filter(|e| e.name.starts_with("ProfilerStep"))
        .filter_map(|e| profiler_step_number(e.name))
        .collect();
    numbers.sort_unstable();
    numbers.dedup();
    let wanted = match choice {
        StepChoice::All => None,
        StepChoice::Nth(k) => match numbers.get(k) {
            Some(&n) => Some(n),
            None => {
                return SideOps {
                    step_count: numbers.len(),
                    missing_step: true,
                    ..SideOps::default()
                }
            }
        },
    };
    let iter = hta_iterations(events);
    let mut m: BTreeMap<&str, OpTotal> = BTreeMap::new();
    for (e, it) in events.iter().zip(&iter) {
        if wanted.is_some_and(|w| *it != Some(w)) {
            continue;
        }
        let (ts, end) = e.us();
        let t = m.entry(e.name).or_default();
        t.count += 1;
        t.time_ns = t.time_ns.saturating_add((end - ts).saturating_mul(1000));
    }
    SideOps {
        ops: m.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        steps: wanted
            .map(|n| vec![format!("ProfilerStep#{n}")])
            .unwrap_or_default(),
        step_count: numbers.len(),
        missing_step: false,
    }
}

/// The kernels of an Ascend rank per name over `ranges` (the kernel index ranges of the chosen
/// steps; `None`: every kernel).
pub fn kernel_ops(
    k: &KernelTable,
    ranges: Option<&[std::ops::Range<usize>]>,
    steps: Vec<String>,
    step_count: usize,
) -> SideOps {
    let mut m: BTreeMap<&str, OpTotal> = BTreeMap::new();
    let mut add = |i: usize| {
        let t = m.entry(k.name_of(i)).or_default();
        t.count += 1;
        t.time_ns = t.time_ns.saturating_add(k.dur_ns()[i]);
    };
    match ranges {
        None => (0..k.len()).for_each(&mut add),
        Some(rs) => rs
            .iter()
            .flat_map(|r| r.clone())
            .filter(|&i| i < k.len())
            .for_each(&mut add),
    }
    SideOps {
        ops: m.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        steps,
        step_count,
        missing_step: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::gpu_breakdown::HtaEventKind;

    fn ev(name: &str, stream: i64, corr: i64, ts_us: i64, dur_us: i64) -> HtaEvent<'_> {
        HtaEvent {
            name,
            kind: if stream > 0 {
                HtaEventKind::DeviceOp
            } else {
                HtaEventKind::Other
            },
            stream,
            correlation: corr,
            ts_ns: ts_us * 1000,
            dur_ns: dur_us * 1000,
        }
    }

    #[test]
    fn step_numbers_follow_htas_regex() {
        assert_eq!(profiler_step_number("ProfilerStep#1009"), Some(1009));
        assert_eq!(profiler_step_number("ProfilerStep # 7x"), Some(7));
        assert_eq!(profiler_step_number("ProfilerStep#"), None);
        assert_eq!(profiler_step_number("ProfilerStepX#3"), None);
    }

    #[test]
    fn cpu_events_by_time_and_kernels_by_their_launch() {
        let evs = [
            ev("ProfilerStep#2", -1, -1, 100, 100),
            ev("ProfilerStep#1", -1, -1, 0, 100),
            ev("aten::mm", -1, -1, 10, 5),
            ev("cudaLaunchKernel", -1, 7, 12, 2),
            ev("gemm", 7, 7, 150, 30), // runs in step 2's time, launched in step 1
            ev("aten::mm", -1, -1, 110, 4),
            ev("cudaLaunchKernel", -1, 8, 111, 1),
            ev("gemm", 7, 8, 190, 20),
            ev("orphan", 7, 99, 20, 1),  // no launch: no iteration
            ev("stream0", 0, 8, 20, 1),  // stream 0: no iteration
            ev("after", -1, -1, 200, 1), // step 2 ends at 200 (exclusive)
        ];
        let first = hta_ops(&evs, StepChoice::Nth(0));
        assert_eq!(first.steps, ["ProfilerStep#1"]);
        assert_eq!(first.step_count, 2);
        let got: Vec<_> = first
            .ops
            .iter()
            .map(|(n, t)| (n.as_str(), t.count, t.time_ns / 1000))
            .collect();
        assert_eq!(
            got,
            [
                ("ProfilerStep#1", 1, 100),
                ("aten::mm", 1, 5),
                ("cudaLaunchKernel", 1, 2),
                ("gemm", 1, 30)
            ]
        );
        let second = hta_ops(&evs, StepChoice::Nth(1));
        let names: Vec<_> = second
            .ops
            .iter()
            .map(|(n, t)| (n.as_str(), t.count))
            .collect();
        assert_eq!(
            names,
            [
                ("ProfilerStep#2", 1),
                ("aten::mm", 1),
                ("cudaLaunchKernel", 1),
                ("gemm", 1)
            ]
        );
        assert!(hta_ops(&evs, StepChoice::Nth(2)).missing_step);
        let all = hta_ops(&evs, StepChoice::All);
        assert_eq!(
            all.ops.iter().map(|o| o.1.count).sum::<u64>(),
            evs.len() as u64
        );
    }

    #[test]
    fn op_totals_order_by_time_then_count() {
        let a = OpTotal {
            count: 1,
            time_ns: 5,
        };
        let b = OpTotal {
            count: 9,
            time_ns: 2,
        };
        let d = OpTotal::change_size(a, b);
        assert_eq!(
            d,
            OpTotal {
                count: 8,
                time_ns: 3
            }
        );
        assert_eq!(a.size_cmp(&b), Ordering::Greater);
    }
}
