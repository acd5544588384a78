//! Steps (anomaly.md §3): detection by priority (markers, `Step Id`, step annotations
//! without `ProfilerStep#`: §3.1.1, macro-steps as the last resort), service windows, kernel
//! assignment, per-step inventory, and grouping into step groups.

use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::ops::Range;

use super::anomaly_config::{AnomalyConfig, LastStepEnd};
use super::device_lag::DeviceLag;
use super::intervals::Interval;
use crate::base::arith;
use crate::model::kernels::KernelTable;
use crate::model::side_tables::StepTraceRow;
use crate::model::trace_events::MarkerEvent;

mod groups;

use groups::group_steps;
pub use groups::{inventory, template_hash, template_hashes};

use super::step_annotations::annotation_markers;
pub use super::step_annotations::Annotation;

/// How the steps were found (§3.1 `step_detection_method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepMethod {
    /// `ProfilerStep#N` markers.
    Marker,
    /// `Iteration#N` / `Step#N` / `Iteration N` markers.
    IterationMarker,
    /// User markers (custom prefix).
    CustomMarker,
    /// A repeating top-level user annotation (§3.1.1).
    Annotation,
    /// Kernel `Step Id` values.
    StepId,
    /// `Step Id` values with `step_trace_time.csv` windows.
    StepIdStepTrace,
    /// One pseudo-step over the whole capture.
    Pseudo,
    /// Macro-steps derived from structure when markers are missing (§3.6).
    Macro,
    /// No kernels and no markers: nothing to analyse.
    None,
}

impl StepMethod {
    /// The spec spelling (`marker`, `iteration_marker`, …, `pseudo`).
    pub fn as_str(self) -> &'static str {
        match self {
            StepMethod::Marker => "marker",
            StepMethod::IterationMarker => "iteration_marker",
            StepMethod::CustomMarker => "custom_marker",
            StepMethod::Annotation => "annotation",
            StepMethod::StepId => "step_id",
            StepMethod::StepIdStepTrace => "step_id+step_trace",
            StepMethod::Pseudo => "pseudo",
            StepMethod::Macro => "macro",
            StepMethod::None => "none",
        }
    }

    /// `step_detection_method` as written: [`as_str`](Self::as_str), with the suffix
    /// `+device_lag` when device-side windows replaced marker windows (§3.2).
    pub fn label(self, device_lag: bool) -> &'static str {
        match (self, device_lag) {
            (StepMethod::Marker, true) => "marker+device_lag",
            (StepMethod::IterationMarker, true) => "iteration_marker+device_lag",
            (StepMethod::CustomMarker, true) => "custom_marker+device_lag",
            (StepMethod::Annotation, true) => "annotation+device_lag",
            (m, _) => m.as_str(),
        }
    }
}

/// One step: its id, service window and the kernels that start in it (§3.2–3.3).
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// `ProfilerStep#50`, `step_<StepId>`, `pseudo_step_0`.
    pub step_id: String,
    /// Service window `[S, E)`.
    pub window: Interval,
    /// Kernels with `S_i ≤ start < S_{i+1}` (last step: `S_last ≤ start`), as an index range.
    pub kernels: Range<usize>,
    /// Marker duration, when the step came from a marker.
    pub marker_dur_ns: Option<i64>,
    /// Index of its group in [`StepSet::groups`].
    pub group: usize,
}

/// Per-step kernel inventory (§3.4).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Inventory {
    /// Kernels assigned to the step.
    pub total_kernel_count: usize,
    /// Count of AI_CORE-family kernels.
    pub ai_core_count: usize,
    /// Count of AI_CPU kernels.
    pub ai_cpu_count: usize,
    /// Count of HCCL kernels.
    pub hccl_count: usize,
    /// Count of OTHER kernels.
    pub other_count: usize,
    /// Σ dur, ns.
    pub kernel_duration_sum_ns: i64,
    /// Σ wait, ns.
    pub kernel_wait_sum_ns: i64,
    /// Sorted distinct stream keys.
    pub distinct_streams: Vec<String>,
}

/// A step group (§3.5).
#[derive(Clone, Debug, PartialEq)]
pub struct StepGroup {
    /// `g0`, `g1`, … by Σ service descending.
    pub group_id: String,
    /// Indices into [`StepSet::steps`], in time order.
    pub steps: Vec<usize>,
    /// FNV-1a template hash of its first step.
    pub template_hash: u64,
}

/// The result of §3: steps, groups, method, and notes on odd input.
#[derive(Clone, Debug, PartialEq)]
pub struct StepSet {
    /// How the steps were found.
    pub method: StepMethod,
    /// Steps in time order.
    pub steps: Vec<Step>,
    /// Groups, `g0` first (the dominant group).
    pub groups: Vec<StepGroup>,
    /// Human notes (duplicate markers, out-of-order markers, step-trace fallbacks…).
    pub notes: Vec<String>,
    /// The device-lag check of marker steps (§3.2), when launch steps were known.
    pub device_lag: Option<DeviceLag>,
    /// [`template_hash`] of each step, in the order of [`steps`](Self::steps).
    pub template_hashes: Vec<u64>,
    /// The family key of the user annotations that are the step markers (§3.1.1), when they
    /// are.
    pub annotation: Option<String>,
}

impl StepSet {
    /// Index of the dominant group (`g0`), if any.
    pub fn dominant_group(&self) -> Option<usize> {
        (!self.groups.is_empty()).then_some(0)
    }
}

/// Step number of a `ProfilerStep#N` name (§3.1 item 1).
fn profiler_step_number(name: &str) -> Option<u64> {
    name.strip_prefix("ProfilerStep#")?.parse().ok()
}

/// Step number of an `Iteration#N` / `Step#N` / `Iteration N` name (§3.1 item 2).
fn iteration_number(name: &str) -> Option<u64> {
    name.strip_prefix("Iteration#")
        .or_else(|| name.strip_prefix("Step#"))
        .or_else(|| name.strip_prefix("Iteration "))
        .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))?
        .parse()
        .ok()
}

/// True when `name` is a step marker of §3.1 items 1–3 (used by host-event hygiene, §5.7.3).
pub fn is_step_marker_name(name: &str, cfg: &AnomalyConfig) -> bool {
    profiler_step_number(name).is_some()
        || iteration_number(name).is_some()
        || (!cfg.custom_step_prefix.is_empty() && name.starts_with(&cfg.custom_step_prefix))
}

/// Detects steps and windows (§3.1–3.3) and groups them (§3.5).
///
/// `markers` are the trace's marker candidates in any order; `annotations` its top-level user
/// annotations ([`super::step_annotations::top_level_annotations`]); `step_trace` the rows of
/// `step_trace_time.csv` (may be empty).
pub fn detect(
    kernels: &KernelTable,
    markers: &[MarkerEvent],
    annotations: &[Annotation],
    step_trace: &[StepTraceRow],
    cfg: &AnomalyConfig,
) -> StepSet {
    let mut notes = Vec::new();
    let mut chosen: Option<(StepMethod, Vec<(u64, &MarkerEvent)>)> = None;
    let finders: [(StepMethod, &dyn Fn(&str) -> Option<u64>); 3] = [
        (StepMethod::Marker, &profiler_step_number),
        (StepMethod::IterationMarker, &iteration_number),
        (StepMethod::CustomMarker, &|n: &str| {
            (!cfg.custom_step_prefix.is_empty() && n.starts_with(&cfg.custom_step_prefix))
                .then_some(0)
        }),
    ];
    for (method, find) in finders {
        let found: Vec<(u64, &MarkerEvent)> = markers
            .iter()
            .filter_map(|m| find(&m.name).map(|n| (n, m)))
            .collect();
        if !found.is_empty() {
            chosen = Some((method, found));
            break;
        }
    }
    let has_step_ids = kernels.step_tag().iter().any(Option::is_some);
    let mut annotation = None;
    let (mut steps, marker_method) = match chosen {
        Some((method, found)) => (
            marker_steps(kernels, method, found, cfg, &mut notes),
            Some(method),
        ),
        // §3.1 item 5, §3.1.1: no marker and no Step Id: a repeating top-level annotation.
        None if !has_step_ids && !kernels.is_empty() => {
            let (found, note) = annotation_markers(kernels, annotations, cfg);
            notes.extend(note);
            match found {
                Some((key, ms)) => {
                    annotation = Some(key);
                    let found = ms.iter().enumerate().map(|(k, m)| (k as u64, m)).collect();
                    (
                        marker_steps(kernels, StepMethod::Annotation, found, cfg, &mut notes),
                        Some(StepMethod::Annotation),
                    )
                }
                None => (Vec::new(), None),
            }
        }
        None => (Vec::new(), None),
    };
    let device_lag = super::device_lag::apply(kernels, &mut steps, step_trace, cfg);
    if let Some(note) = device_lag.as_ref().and_then(|d| d.note(&steps)) {
        notes.push(note);
    }
    let method = if let (false, Some(m)) = (steps.is_empty(), marker_method) {
        m
    } else if has_step_ids {
        let (m, s) = step_id_steps(kernels, step_trace, &mut notes);
        steps = s;
        m
    } else if !kernels.is_empty() {
        let s = kernels.start_ns().first().copied().unwrap_or(0);
        let e = (0..kernels.len())
            .map(|i| kernels.end_ns(i))
            .max()
            .unwrap_or(s);
        steps = vec![Step {
            step_id: "pseudo_step_0".into(),
            window: Interval::new(s, e),
            kernels: 0..kernels.len(),
            marker_dur_ns: None,
            group: 0,
        }];
        match macro_steps(kernels, cfg) {
            Some((origin, ms)) => {
                notes.push(format!(
                    "no step markers, no Step Id column and no step annotation: {} macro-steps from {}, the last resort (§3.6): a repeated unit may be a layer or a pass rather than an iteration",
                    ms.len(),
                    if origin == "repetition" { "kernel repetition" } else { "forward passes" }
                ));
                steps = ms;
                StepMethod::Macro
            }
            None => {
                notes.push(
                    "no step markers and no Step Id column: one pseudo-step over the whole capture"
                        .into(),
                );
                StepMethod::Pseudo
            }
        }
    } else {
        StepMethod::None
    };
    let template_hashes = template_hashes(kernels, steps.iter().map(|s| s.kernels.clone()));
    let groups = group_steps(kernels, &mut steps, &template_hashes, cfg);
    StepSet {
        method,
        steps,
        groups,
        notes,
        device_lag,
        template_hashes,
        annotation,
    }
}

/// §3.6 items 2–3: forward passes (FIA present) or a repetition unit covering ≥ 50 % of
/// the kernels (anchors occurring 2–64 times) become macro-steps `macro_<k>`.
/// Returns the origin (`fia_pass` / `repetition`) and the steps; `None` when neither applies.
fn macro_steps(kernels: &KernelTable, cfg: &AnomalyConfig) -> Option<(&'static str, Vec<Step>)> {
    let n = kernels.len();
    let starts: Vec<usize>;
    let origin;
    let arch_passes = if kernels.any_name(super::structure::is_fia) {
        super::architecture::analyse(kernels, cfg).passes
    } else {
        Vec::new()
    };
    if arch_passes.len() >= 2 {
        origin = "fia_pass";
        starts = arch_passes.iter().map(|p| p.kernels.start).collect();
    } else {
        let main = super::structure::main_stream(kernels, 0..n);
        let rep = super::structure::repetition_limited(kernels, 0..n, main, 64)?;
        let first = *rep.unit_starts.first()?;
        if rep.unit_starts.len() < 2 || ((rep.last_end - first) as f64) < 0.5 * n as f64 {
            return None;
        }
        origin = "repetition";
        starts = rep.unit_starts;
    }
    let mut steps = Vec::with_capacity(starts.len());
    for (j, &s) in starts.iter().enumerate() {
        let s_ns = kernels.start_ns()[s];
        let next = starts.get(j + 1).map(|&x| kernels.start_ns()[x]);
        let range = kernels.starting_in(s_ns, next.unwrap_or(i64::MAX));
        let end = match next {
            Some(e) => e,
            None => range
                .clone()
                .map(|i| kernels.end_ns(i))
                .max()
                .unwrap_or(s_ns),
        };
        steps.push(Step {
            step_id: format!("macro_{j}"),
            window: Interval::new(s_ns, end),
            kernels: range,
            marker_dur_ns: None,
            group: 0,
        });
    }
    Some((origin, steps))
}

fn marker_steps(
    kernels: &KernelTable,
    method: StepMethod,
    found: Vec<(u64, &MarkerEvent)>,
    cfg: &AnomalyConfig,
    notes: &mut Vec<String>,
) -> Vec<Step> {
    // Dedup by N (custom markers: by name): earliest ts, ties longest dur (§3.1 hygiene).
    let mut best: BTreeMap<String, &MarkerEvent> = BTreeMap::new();
    let mut dups = 0usize;
    for (n, m) in found {
        let key = if method == StepMethod::CustomMarker {
            m.name.clone()
        } else {
            n.to_string()
        };
        match best.get(&key) {
            Some(old) => {
                dups += 1;
                if (m.ts_ns, -m.dur_ns) < (old.ts_ns, -old.dur_ns) {
                    best.insert(key, m);
                }
            }
            None => {
                best.insert(key, m);
            }
        }
    }
    if dups > 0 {
        notes.push(format!(
            "{dups} duplicate step marker(s) dropped (kept the earliest of each step number)"
        ));
    }
    let mut ms: Vec<&MarkerEvent> = best.into_values().collect();
    crate::base::sort::sort_by(&mut ms, |a, b| {
        a.ts_ns.cmp(&b.ts_ns).then(b.dur_ns.cmp(&a.dur_ns))
    });
    let overlapping = ms
        .windows(2)
        .filter(|p| p[0].ts_ns + p[0].dur_ns > p[1].ts_ns)
        .count();
    if overlapping > 0 {
        notes.push(format!(
            "{overlapping} step marker(s) overlap the next one; each window ends at the next marker's start"
        ));
    }
    let mut steps = Vec::with_capacity(ms.len());
    for (i, m) in ms.iter().enumerate() {
        let s = m.ts_ns;
        let (end, next_start) = match ms.get(i + 1) {
            Some(next) => (next.ts_ns, next.ts_ns),
            None => {
                let range = kernels.starting_in(s, i64::MAX);
                let e = match cfg.last_step_end {
                    LastStepEnd::MarkerEnd => s + m.dur_ns,
                    LastStepEnd::LastKernel => range
                        .clone()
                        .map(|k| kernels.end_ns(k))
                        .max()
                        .unwrap_or(s + m.dur_ns),
                };
                (e, i64::MAX)
            }
        };
        steps.push(Step {
            step_id: m.name.clone(),
            window: Interval::new(s, end.max(s)),
            kernels: kernels.starting_in(s, next_start),
            marker_dur_ns: Some(m.dur_ns),
            group: 0,
        });
    }
    steps
}

fn step_id_steps(
    kernels: &KernelTable,
    step_trace: &[StepTraceRow],
    notes: &mut Vec<String>,
) -> (StepMethod, Vec<Step>) {
    // Distinct Step Ids in order of first kernel.
    let mut order: Vec<i64> = Vec::new();
    let mut first: HashMap<i64, (i64, i64)> = HashMap::default(); // id -> (first start, max end)
    for i in 0..kernels.len() {
        if let Some(id) = kernels.step_tag()[i] {
            let e = kernels.end_ns(i);
            first
                .entry(id)
                .and_modify(|v| v.1 = v.1.max(e))
                .or_insert_with(|| {
                    order.push(id);
                    (kernels.start_ns()[i], e)
                });
        }
    }
    let mut used_trace = false;
    let mut wins: Vec<(i64, Interval)> = Vec::new();
    for id in order {
        let (fs, me) = first[&id];
        let row = step_trace.iter().find(|r| r.step.trim() == id.to_string());
        // Input values: the window's ends must stay model times (base::arith).
        let from_trace =
            row.and_then(|r| Some((r.preparing_ns?, r.stage_ns?)))
                .map(|(prep, stage)| {
                    let a = arith::sub(fs, prep).and_then(arith::time_ns);
                    let b = arith::add(fs, stage).and_then(arith::time_ns);
                    a.and_then(|a| b.map(|b| Interval::new(a, b)))
                });
        let w = match from_trace {
            Some(Ok(w)) => {
                used_trace = true;
                w
            }
            Some(Err(_)) => {
                notes.push(format!(
                    "step_trace_time.csv: step {id}: Preparing/Stage put the window outside the representable time range ({}); the kernels' extent is used",
                    arith::Tally::time_limit_text()
                ));
                Interval::new(fs, me)
            }
            None => Interval::new(fs, me),
        };
        wins.push((id, w));
    }
    crate::base::sort::sort_by_key(&mut wins, |(_, w)| w.start_ns);
    if wins.windows(2).any(|p| p[0].1.end_ns > p[1].1.start_ns) {
        notes.push(
            "Step Id windows overlap; kernels are assigned by start to the earliest window".into(),
        );
    }
    let steps = wins
        .iter()
        .enumerate()
        .map(|(i, (id, w))| {
            let next = wins.get(i + 1).map(|n| n.1.start_ns).unwrap_or(i64::MAX);
            Step {
                step_id: format!("step_{id}"),
                window: *w,
                kernels: kernels.starting_in(w.start_ns, next),
                marker_dur_ns: None,
                group: 0,
            }
        })
        .collect();
    let m = if used_trace {
        StepMethod::StepIdStepTrace
    } else {
        StepMethod::StepId
    };
    (m, steps)
}
