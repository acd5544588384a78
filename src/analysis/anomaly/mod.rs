//! Anomaly discovery for one rank (anomaly.md §5): the pipeline from steps to
//! tags, decision tables, wait anchors, AICPU classes, soft root-cause
//! summary, recommendations and confidence. [`analyse`] is the entry point;
//! its [`AnomalyResult`] is plain data (ns and f64) that `report` and `views`
//! format without recomputing.

pub mod cross_rank;
pub mod groups;
pub mod joins;
pub mod ops;
pub mod result;
pub mod summary;
pub mod tags;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use self::groups::{GroupCtx, GroupResult};
pub use self::result::*;
use self::tags::Tag;
use super::anomaly_config::AnomalyConfig;
use super::bubbles::{self, Neighbours, Scope, StepWindows};
use super::host_evidence;
use super::intervals::{kernel_union, window_metrics, Interval};
use super::steps::{self, StepMethod, StepSet};
use super::structure::{self, Segmentation};
use crate::base::units::ns_to_ms;
use crate::model::kernels::{KernelTable, TaskClass};

/// Runs §3–§5 (and the §4 breakdown) on one rank.
pub fn analyse(input: &RankInput<'_>, cfg: &AnomalyConfig) -> AnomalyResult {
    analyse_on(input, cfg, 1)
}

/// [`analyse`] with the per-step metrics and structure of the steps computed on up to
/// `threads` threads natively (`base::par`): the same result.
pub fn analyse_on(input: &RankInput<'_>, cfg: &AnomalyConfig, threads: usize) -> AnomalyResult {
    let k = input.kernels;
    let markers = input.trace.map(|t| t.markers.as_slice()).unwrap_or(&[]);
    let annotations = input
        .trace
        .map(super::step_annotations::top_level_annotations)
        .unwrap_or_default();
    // The busy union, the capture's gaps and the kernels' neighbours need only the kernels:
    // beside the step detection when a thread is spare.
    let kernel_facts = || {
        let segs = kernel_union(k, |_| true);
        let global = bubbles::global_gaps(&segs, cfg.top_n_windows);
        (segs, global, Neighbours::new(k))
    };
    let (facts, step_set) = crate::base::par::beside(threads, kernel_facts, || {
        steps::detect(k, markers, &annotations, input.step_trace, cfg)
    });
    let StepSet {
        method,
        steps: raw_steps,
        groups: raw_groups,
        notes,
        device_lag,
        template_hashes,
        annotation,
    } = step_set;
    drop(annotations);
    let (segs, global, nb) = facts.unwrap_or_else(kernel_facts);
    let capture_ns = global.capture.len_ns();

    // Per-step metrics and structure.
    let mut results: Vec<StepResult> = crate::base::par::map(threads, &raw_steps, |s| {
        let m = window_metrics(&segs, s.window);
        let main = structure::main_stream(k, s.kernels.clone());
        let seg = structure::segment_step(k, s.kernels.clone(), &segs, m.service_ns, cfg);
        let small = ops::small_ops(k, s.kernels.clone(), main, m.busy_ns, &m.bubbles, cfg);
        StepResult {
            step_id: s.step_id.clone(),
            group_id: raw_groups
                .get(s.group)
                .map(|g| g.group_id.clone())
                .unwrap_or_default(),
            window: s.window,
            kernels: s.kernels.clone(),
            inventory: steps::inventory(k, s),
            perspectives: structure::perspectives(k, s.kernels.clone()),
            tags: tags::severity_tags(&m, cfg),
            labels: Vec::new(),
            small_ops: small,
            truncated: false,
            polluted_wait_share: 0.0,
            segmentation: seg,
            main_stream: main.map(|m| k.text(m).to_string()),
            top_internal: Vec::new(),
            comm_ops: Vec::new(),
            metrics: m,
        }
    });

    // Truncated first/last steps (§5.10.3).
    for g in &raw_groups {
        let mut counts: Vec<f64> = g
            .steps
            .iter()
            .map(|&i| results[i].inventory.total_kernel_count as f64)
            .collect();
        crate::base::sort::sort_by(&mut counts, f64::total_cmp);
        let median = super::intervals::percentile(&counts, 0.5);
        for &i in &g.steps {
            if (i == 0 || i + 1 == results.len())
                && (results[i].inventory.total_kernel_count as f64)
                    < cfg.truncated_step_frac * median
            {
                results[i].truncated = true;
                results[i].tags.push(Tag::PartialCaptureBoundary);
            }
        }
    }

    // Windows, host evidence, labels.
    let main_ids: Vec<Option<u32>> = results
        .iter()
        .map(|s| structure::main_stream(k, s.kernels.clone()))
        .collect();
    let sw: Vec<StepWindows<'_>> = results
        .iter()
        .enumerate()
        .map(|(i, s)| StepWindows {
            step_id: &s.step_id,
            metrics: &s.metrics,
            main_stream: main_ids[i],
            dominant: raw_steps[i].group == 0,
        })
        .collect();
    let windows = bubbles::emit_windows(&sw, &global, &nb, cfg);
    drop(sw);
    for s in &mut results {
        // Top-5 internal bubbles for stable positions.
        let top = super::intervals::longest(&s.metrics.bubbles, cfg.top_n_windows);
        let service = s.metrics.service_ns.max(1) as f64;
        s.top_internal = top
            .iter()
            .map(|b| {
                let name =
                    |i: Option<usize>| i.map(|i| k.name_of(i).to_string()).unwrap_or_default();
                TopBubble {
                    signature: (
                        name(nb.before(b.start_ns, None)),
                        name(nb.after(b.end_ns, None)),
                    ),
                    bin: (((b.start_ns - s.window.start_ns) as f64 / service)
                        / cfg.stable_position_bin)
                        .floor() as i64,
                }
            })
            .collect();
    }
    // Read by the windows and their signatures only: not alive beside the host index.
    drop(nb);
    let host_ix = input
        .trace
        .map(|t| host_evidence::build_index(t, cfg, annotation.as_deref()));
    let mut bubble_results: Vec<BubbleResult> = windows
        .into_iter()
        .map(|w| {
            let service = w
                .step
                .map(|s| results[s].metrics.service_ns)
                .unwrap_or(capture_ns);
            let ev = host_ix
                .as_ref()
                .map(|ix| host_evidence::evidence(ix, w.interval, service, cfg))
                .unwrap_or_default();
            let labels = host_evidence::labels(&ev, w.capture_boundary, cfg);
            let (structure_id, between) = w
                .step
                .map(|s| locate(&results[s].segmentation, w.interval))
                .unwrap_or((None, false));
            BubbleResult {
                next_launch: super::launch_timing::next_launch(k, w.interval, w.after),
                tags: if w.capture_boundary {
                    vec![Tag::PartialCaptureBoundary]
                } else {
                    vec![]
                },
                window: w,
                evidence: ev,
                labels,
                structure_id,
                between_structures: between,
            }
        })
        .collect();
    for b in &bubble_results {
        if let Some(s) = b.window.step {
            for &l in &b.labels {
                if !results[s].labels.contains(&l) {
                    results[s].labels.push(l);
                }
            }
        }
    }
    // The host index's last use (§9 density, the policy counts): dropped before the later
    // stages allocate.
    let sparse_host = sparse_host(
        &bubble_results,
        &results,
        &raw_groups,
        host_ix.as_ref(),
        input,
        cfg,
    );
    let host_policy = host_ix
        .as_ref()
        .map(|h| (h.kept_events, h.excluded_markers))
        .unwrap_or((0, 0));
    drop(host_ix);
    for s in &mut results {
        crate::base::sort::sort(&mut s.labels);
    }

    // Communication: totals, per-step ops, wait pollution.
    let json_ivs: Vec<Interval> = input
        .comm_ops
        .iter()
        .map(|o| Interval::new(o.start_ns, o.start_ns + (o.elapse_ms * 1e6).round() as i64))
        .collect();
    let comm_win = ops::comm_windows(k, &json_ivs);
    let mut comm_per_step = vec![(0.0, 0.0); results.len()];
    let mut ops_by_start: Vec<usize> = (0..input.comm_ops.len()).collect();
    crate::base::sort::sort_by_key(&mut ops_by_start, |&i| input.comm_ops[i].start_ns);
    let mut comm_kernel_wait = vec![(0i64, 0i64); results.len()];
    for (si, s) in results.iter_mut().enumerate() {
        let lo =
            ops_by_start.partition_point(|&oi| input.comm_ops[oi].start_ns < s.window.start_ns);
        for &oi in &ops_by_start[lo..] {
            let o = &input.comm_ops[oi];
            let in_win = o.start_ns < s.window.end_ns
                || (si + 1 == raw_steps.len() && o.start_ns <= s.window.end_ns);
            if !in_win {
                break;
            }
            {
                s.comm_ops.push(oi);
                comm_per_step[si].0 += o.elapse_ms;
                comm_per_step[si].1 += o.elapse_ms * o.wait_ratio;
            }
        }
        let (mut tw, mut pw) = (0i64, 0i64);
        for i in s.kernels.clone() {
            tw += k.wait_ns()[i];
            pw += ops::polluted_wait_ns(k, i, &comm_win, cfg);
            if k.comm()[i] {
                comm_kernel_wait[si].0 += k.wait_ns()[i];
                comm_kernel_wait[si].1 += k.wait_ns()[i] + k.dur_ns()[i];
            }
        }
        s.polluted_wait_share = if tw > 0 { pw as f64 / tw as f64 } else { 0.0 };
        if tw > 0 && s.polluted_wait_share >= cfg.wait_pollution_step_frac {
            s.tags.push(Tag::WaitPollutionRisk);
        }
    }

    // AICPU (§5.14) and its step escalation.
    // Only AICPU kernels read the AI Core union (none on a GPU trace: not built there).
    let has_aicpu = k.class().iter().any(|&c| c == TaskClass::AiCpu);
    let ai_core = if has_aicpu {
        kernel_union(k, |i| k.class()[i] == TaskClass::AiCore)
    } else {
        Vec::new()
    };
    let aicpu_ops = ops::aicpu_ops(k, 0..k.len(), &ai_core, cfg);
    let adj = (cfg.aicpu_adjacent_us * 1000.0) as i64;
    for s in &mut results {
        let risky_op = aicpu_ops
            .iter()
            .any(|o| ops::aicpu_risky(o) && o.kernels.iter().any(|i| s.kernels.contains(i)));
        let near = s.kernels.clone().any(|i| {
            k.class()[i] == TaskClass::AiCpu
                && s.metrics.bubbles.iter().any(|b| {
                    (k.end_ns(i) - b.start_ns).abs() <= adj
                        || (k.start_ns()[i] - b.end_ns).abs() <= adj
                })
        });
        if risky_op || near {
            s.tags.push(Tag::AicpuExposedRisk);
        }
    }

    // Wait anchors over the dominant group (pseudo-step: whole capture): its steps' kernel
    // ranges, not a list of their kernels.
    let scope: Vec<std::ops::Range<usize>> = match raw_groups.first() {
        Some(g) if !matches!(method, StepMethod::Pseudo | StepMethod::Macro) => g
            .steps
            .iter()
            .map(|&i| results[i].kernels.clone())
            .collect(),
        _ => std::iter::once(0..k.len()).collect(),
    };
    let wait_anchor_ops = ops::wait_anchors(k, &scope, &comm_win, cfg);
    let pmu = ops::pmu_verdicts(k, &wait_anchor_ops, cfg);

    // Capabilities and host density.
    let caps = capabilities(input, k, host_policy.0);

    // Groups.
    let all_windows: Vec<Interval> = results.iter().map(|s| s.window).collect();
    let shape_hashes: Vec<(u64, u64)> = raw_steps
        .iter()
        .zip(&template_hashes)
        .map(|(s, &h)| (h, shapes_hash(k, s.kernels.clone())))
        .collect();
    let multi_shape = |members: &[usize]| -> bool {
        let mut m: HashMap<u32, HashSet<u32>> = HashMap::default();
        for &si in members {
            for i in results[si].kernels.clone() {
                m.entry(k.name()[i]).or_default().insert(k.shapes()[i]);
            }
        }
        m.values().any(|v| v.len() > 1)
    };
    let ctx = GroupCtx {
        bubbles: &bubble_results,
        global: &global,
        segs: &segs,
        all_windows: &all_windows,
        comm_per_step: &comm_per_step,
        comm_kernel_wait: &comm_kernel_wait,
        record_shapes: caps.record_shapes,
        sparse_host,
        shape_hashes: &shape_hashes,
        multi_shape_ops: &multi_shape,
        cfg,
    };
    let mut group_results: Vec<GroupResult> = raw_groups
        .iter()
        .map(|g| {
            groups::aggregate(
                g.group_id.clone(),
                g.steps.clone(),
                g.template_hash,
                &results,
                &ctx,
            )
        })
        .collect();
    // Group tags also mark their windows' steps for COMM_SYNC_RISK etc. only at group scope.
    let mut top_tags = Vec::new();
    if bubble_results.iter().any(|b| b.window.capture_boundary)
        || results.iter().any(|s| s.truncated)
    {
        top_tags.push(Tag::PartialCaptureBoundary);
    }
    if sparse_host
        || group_results
            .iter()
            .any(|g| g.group_tags.contains(&Tag::UntracedHostBlockingRisk))
    {
        top_tags.push(Tag::UntracedHostBlockingRisk);
    }
    if wait_anchor_ops.iter().any(|o| o.is_false_hotspot_risk) {
        top_tags.push(Tag::WaitAnchorFalseHotspot);
    }
    let requires_host_followup = top_tags.contains(&Tag::UntracedHostBlockingRisk);

    let summary = summary::soft_root_cause_summary(&bubble_results, &results, &group_results, cfg);
    summary::set_followups(&mut group_results, &results, &summary, &caps);
    let mut limitations = limitations(input, &caps, method, sparse_host);
    limitations.extend(notes.iter().cloned());
    if input.info.gpu_trace {
        limitations.push(GPU_TRACE_NOTE.into());
    }
    let confidence = summary::confidence(method, &caps, input.info.op_summary_only);
    let comm = CommTotals {
        kernel_details_ms: ns_to_ms(
            (0..k.len())
                .filter(|&i| k.comm()[i])
                .map(|i| k.dur_ns()[i])
                .sum::<i64>(),
        ),
        communication_json_ms: input
            .info
            .comm_file
            .then(|| input.comm_ops.iter().map(|o| o.elapse_ms).sum()),
        wait_ratio_weighted: {
            let e: f64 = input.comm_ops.iter().map(|o| o.elapse_ms).sum();
            (e > 0.0).then(|| {
                input
                    .comm_ops
                    .iter()
                    .map(|o| o.elapse_ms * o.wait_ratio)
                    .sum::<f64>()
                    / e
            })
        },
    };
    let mut result = AnomalyResult {
        enabled: !k.is_empty(),
        compat: cfg.compat,
        step_method: method,
        step_notes: notes,
        device_lag,
        steps: results,
        groups: group_results,
        global,
        bubbles: Vec::new(),
        wait_anchor_ops,
        aicpu_ops,
        pmu,
        soft_root_cause_summary: summary,
        requires_host_followup,
        confidence,
        recommendations: Vec::new(),
        comm,
        capabilities: caps,
        top_tags,
        limitations,
        host_policy,
        busy_segments: segs,
    };
    bubble_results.shrink_to_fit();
    result.bubbles = bubble_results;
    result.recommendations = summary::recommendations(&result);
    result
}

/// Structure containing the window start, and whether the window lies between two structures.
fn locate(seg: &Segmentation, w: Interval) -> (Option<String>, bool) {
    let st = &seg.structures;
    for (j, s) in st.iter().enumerate() {
        if let Some(next) = st.get(j + 1) {
            if w.start_ns >= s.span.end_ns
                && w.end_ns <= next.span.start_ns
                && w.start_ns < next.span.start_ns
            {
                return (None, true);
            }
        }
        if w.start_ns >= s.span.start_ns && w.start_ns < s.span.end_ns {
            return (Some(s.structure_id.clone()), false);
        }
    }
    (None, false)
}

fn shapes_hash(k: &KernelTable, r: std::ops::Range<usize>) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for i in r {
        for &b in k.text(k.shapes()[i]).as_bytes().iter().chain(b"\n") {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    h
}

/// §1.1.1: one capability from what the data holds (`held`: the source that holds it, if
/// any), else from what the capture states (`stated`, said by `statement`), else off.
fn capability(
    held: Option<CapabilitySource>,
    stated: Option<bool>,
    statement: CapabilitySource,
) -> (bool, &'static str) {
    match (held, stated) {
        (Some(src), _) => (true, src.as_str()),
        (None, Some(v)) => (v, statement.as_str()),
        (None, None) => (false, CapabilitySource::Absent.as_str()),
    }
}

fn capabilities(input: &RankInput<'_>, k: &KernelTable, kept_host: usize) -> Capabilities {
    use CapabilitySource::{Kernels, MemoryFiles, ProfilerInfo, Trace, TraceMetadata};
    let trace = input.trace;
    let info = &input.info;
    let ev = trace.map(|t| t.evidence).unwrap_or_default();
    let statement = if info.gpu_trace {
        TraceMetadata
    } else {
        ProfilerInfo
    };
    let held = |in_trace: bool, other: Option<CapabilitySource>| {
        if in_trace {
            Some(Trace)
        } else {
            other
        }
    };
    let (record_shapes, rs_src) = capability(
        held(ev.shapes, k.has_shapes().then_some(Kernels)),
        info.record_shapes,
        statement,
    );
    let (with_stack, ws_src) = capability(held(ev.stack, None), info.with_stack, statement);
    let (profile_memory, pm_src) = capability(
        held(ev.memory, info.memory_files.then_some(MemoryFiles)),
        info.profile_memory,
        statement,
    );
    let (with_flops, wf_src) = capability(held(ev.flops, None), info.with_flops, statement);
    let (with_modules, wm_src) = capability(held(ev.modules, None), info.with_modules, statement);
    Capabilities {
        record_shapes,
        record_shapes_source: rs_src,
        with_stack,
        with_stack_source: ws_src,
        profile_memory,
        profile_memory_source: pm_src,
        with_flops,
        with_flops_source: wf_src,
        with_modules,
        with_modules_source: wm_src,
        profiler_level: input.info.profiler_level.clone(),
        pmu: !k.pmu().is_empty(),
        comm_file: input.info.comm_file,
        fia: k.any_name(super::structure::is_fia),
        trace: trace.is_some(),
        host_event_density: if k.is_empty() {
            0.0
        } else {
            kept_host as f64 * 100.0 / k.len() as f64
        },
    }
}

/// §9 sparse host evidence: weighted host coverage over the significant step windows < 0.05,
/// or < 1 kept host event per 100 kernels in the dominant group's step windows (no trace
/// counts as sparse). Both counts are taken over the dominant group's windows: kernels
/// assigned to its steps (§3.3), host events whose start lies in one of its step windows
/// (`S ≤ ts < E`). Without steps, the whole capture (all kernels, all kept host events).
fn sparse_host(
    bubbles: &[BubbleResult],
    steps: &[StepResult],
    groups: &[steps::StepGroup],
    host: Option<&host_evidence::HostIndex<'_>>,
    input: &RankInput<'_>,
    cfg: &AnomalyConfig,
) -> bool {
    let Some(host) = host else { return true };
    let (mut d, mut h) = (0.0, 0.0);
    for b in bubbles
        .iter()
        .filter(|b| b.window.significant && b.window.scope != Scope::Global)
    {
        let len = b.window.interval.len_ns() as f64;
        d += len;
        h += len * b.evidence.host.unwrap_or(0.0);
    }
    let (dom_kernels, dom_events) = match groups.first() {
        Some(g) => g.steps.iter().fold((0usize, 0usize), |(k, e), &i| {
            (
                k + steps[i].kernels.len(),
                e + host.events_starting_in(steps[i].window),
            )
        }),
        None => (input.kernels.len(), host.kept_events),
    };
    (d > 0.0 && h / d < cfg.host_untraced_max) || (dom_events as f64) < dom_kernels as f64 / 100.0
}

fn limitations(
    input: &RankInput<'_>,
    caps: &Capabilities,
    method: StepMethod,
    sparse: bool,
) -> Vec<String> {
    let mut v = Vec::new();
    if input.kernels.is_empty() {
        v.push("no kernel intervals: bubble analysis unavailable".into());
    }
    if !caps.trace {
        v.push(
            "no trace_view.json: no step markers, no host evidence, no Level0 stream join".into(),
        );
    }
    if !caps.record_shapes {
        v.push("record_shapes off: VARIABLE_SHAPE_SAME_TEMPLATE skipped".into());
    }
    if !caps.with_stack {
        v.push("with_stack off: attribution less specific".into());
    }
    // A GPU trace never has the Ascend side files: their absence is no limitation there.
    let ascend = !input.info.gpu_trace;
    if ascend && !caps.comm_file {
        v.push("no communication.json: communication wait cannot be assessed from comm ops (evidence gap)".into());
    }
    if sparse {
        v.push("sparse host evidence: root-cause family cannot be narrowed".into());
    }
    if input.info.op_summary_only {
        v.push("op_summary-only input: coarser kernel data".into());
    }
    if ascend && input.info.kernels_from_trace {
        v.push("kernel_details.csv absent: kernels taken from trace_view.json device lanes".into());
    }
    if matches!(method, StepMethod::Macro) {
        v.push("no step markers: macro-steps derived from structure, the last resort (lower confidence)".into());
    }
    if matches!(method, StepMethod::Pseudo) {
        v.push("no step markers: one pseudo-step over the whole capture".into());
    }
    if ascend && !caps.pmu {
        v.push("PMU judgement unavailable".into());
    }
    v
}
