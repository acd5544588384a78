//! Steps without `ProfilerStep#` (anomaly.md §3.1.1): a top-level user annotation family that
//! repeats (≥ 2), does not overlap itself and holds ≥ 50 % of the device busy time is the step
//! marker — a vLLM worker's `execute_context_*` annotations, one per engine step. Tests below,
//! at and above each threshold, on small Kineto traces (and one trace_view.json).

mod anomaly_support;

use anomaly_support::*;
use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::analysis::intervals::Interval;
use proflens::engine::read::RankAnalysis;

/// A `user_annotation` on pid 1 / tid `tid` from `ts` µs lasting `dur` µs.
fn ann(name: &str, ts: f64, dur: f64, tid: u32) -> String {
    format!(
        r#"{{"ph":"X","cat":"user_annotation","name":"{name}","pid":1,"tid":{tid},"ts":{ts},"dur":{dur}}}"#
    )
}

/// A kernel on stream 7 from `ts` µs lasting `dur` µs.
fn kern(name: &str, ts: f64, dur: f64) -> String {
    format!(
        r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7}}}}"#
    )
}

fn gpu(events: &[String]) -> RankAnalysis {
    let trace = format!(
        r#"{{"schemaVersion":1,"deviceProperties":[{{"id":0,"name":"NVIDIA H100"}}],"traceEvents":[
{}
]}}"#,
        events.join(",\n")
    );
    let mut v = run_files(
        &[("run/worker0.pt.trace.json", trace)],
        &AnomalyConfig::spec_defaults(),
    );
    assert_eq!(v.len(), 1);
    v.remove(0)
}

fn ids(r: &RankAnalysis) -> Vec<String> {
    r.result.steps.iter().map(|s| s.step_id.clone()).collect()
}

fn note<'a>(r: &'a RankAnalysis, prefix: &str) -> Option<&'a str> {
    r.result
        .limitations
        .iter()
        .find(|l| l.starts_with(prefix))
        .map(String::as_str)
}

/// `n` engine steps every 100 µs: an `execute_context_<k>(<tokens>)_generation_0(0)`
/// annotation of 80 µs, with a nested `## Call CompiledFxGraph` annotation, holding the
/// same three kernels.
fn engine_steps(n: usize) -> Vec<String> {
    let mut ev = Vec::new();
    for i in 0..n {
        let t = i as f64 * 100.0;
        ev.push(ann(
            &format!("execute_context_{}({})_generation_0(0)", i % 3 + 1, 100 + i),
            t,
            80.0,
            1,
        ));
        ev.push(ann("## Call CompiledFxGraph fx3a9 ##", t + 5.0, 60.0, 1));
        for (k, name) in ["qkv", "attn", "mlp"].iter().enumerate() {
            ev.push(kern(name, t + 10.0 + 20.0 * k as f64, 10.0));
        }
    }
    ev
}

#[test]
fn ten_execute_context_annotations_are_ten_named_steps() {
    // Before §3.1.1 this trace gave 9 macro-steps from kernel repetition (one short).
    let r = gpu(&engine_steps(10));
    assert_eq!(r.result.step_detection_method(), "annotation");
    assert_eq!(
        ids(&r),
        (0..10)
            .map(|i| format!("execute_context_{}({})_generation_0(0)", i % 3 + 1, 100 + i))
            .collect::<Vec<_>>()
    );
    // Windows from one annotation's start to the next; the last ends with its last kernel.
    let w: Vec<Interval> = r.result.steps.iter().map(|s| s.window).collect();
    assert_eq!(w[0], Interval::new(0, 100_000));
    assert_eq!(w[9], Interval::new(900_000, 960_000));
    assert!(r
        .result
        .steps
        .iter()
        .all(|s| s.inventory.total_kernel_count == 3));
    assert_eq!(
        note(&r, "no ProfilerStep#N").unwrap(),
        "no ProfilerStep#N: the 10 top-level user annotations `execute_context_…` are the step markers (§3.1.1: they repeat, do not overlap and hold 100.0 % of the device busy time)"
    );
    // The enclosing step annotations are markers for host-evidence hygiene too (§5.7.3).
    assert_eq!(r.result.host_policy.1, 10);
}

#[test]
fn one_occurrence_is_not_a_step_marker_two_are() {
    // Below the count threshold: one annotation, however much it holds.
    let r = gpu(&engine_steps(1));
    assert_eq!(r.result.step_detection_method(), "pseudo");
    assert_eq!(
        note(&r, "no top-level user annotation").unwrap(),
        "no top-level user annotation is a step marker (§3.1.1): `execute_context_…` occurs once (≥ 2 needed), holds 100.0 % of the device busy time"
    );
    // At it: two.
    let r = gpu(&engine_steps(2));
    assert_eq!(r.result.step_detection_method(), "annotation");
    assert_eq!(r.result.steps.len(), 2);
}

/// Two `step` annotations ([0, 100) and [200, 300) µs) holding 10 µs of kernel each, and a
/// kernel of `outside` µs after them: they hold 20 / (20 + outside) of the busy time.
fn cover_case(outside: f64) -> RankAnalysis {
    gpu(&[
        ann("step", 0.0, 100.0, 1),
        ann("step", 200.0, 100.0, 1),
        kern("a", 10.0, 10.0),
        kern("a", 210.0, 10.0),
        kern("tail", 400.0, outside),
    ])
}

#[test]
fn the_annotations_must_hold_at_least_half_of_the_busy_time() {
    // Above: 20 / 39 = 51.3 %; at: 20 / 40 = 50 % exactly.
    for outside in [19.0, 20.0] {
        let r = cover_case(outside);
        assert_eq!(r.result.step_detection_method(), "annotation", "{outside}");
        // Equal names: numbered in time order.
        assert_eq!(ids(&r), ["step (1)", "step (2)"]);
        // The last step runs to the end of its last kernel (the one outside the annotations).
        assert_eq!(
            r.result.steps[1].window,
            Interval::new(200_000, 400_000 + (outside * 1000.0) as i64)
        );
    }
    // Below: 20 / 41 = 48.8 %.
    let r = cover_case(21.0);
    assert_ne!(r.result.step_detection_method(), "annotation");
    assert_eq!(
        note(&r, "no top-level user annotation").unwrap(),
        "no top-level user annotation is a step marker (§3.1.1): `step…` occurs 2 times, holds 48.8 % of the device busy time (≥ 50 % needed)"
    );
}

#[test]
fn annotations_that_overlap_themselves_are_not_step_markers() {
    let case = |first_dur: f64| {
        gpu(&[
            ann("iter", 0.0, first_dur, 1),
            ann("iter", 100.0, 100.0, 2),
            kern("a", 10.0, 50.0),
            kern("a", 110.0, 50.0),
        ])
    };
    // Touching (ends where the next starts): fine.
    assert_eq!(case(100.0).result.step_detection_method(), "annotation");
    // 1 ns past the next start: overlapping.
    let r = case(100.001);
    assert_ne!(r.result.step_detection_method(), "annotation");
    assert!(note(&r, "no top-level user annotation")
        .unwrap()
        .contains("`iter…` occurs 2 times, overlaps itself, holds 100.0 %"));
}

#[test]
fn only_top_level_annotations_count() {
    // A vLLM graph capture: one `capture_32_FULL` holding 24 `## Call CompiledFxGraph`
    // annotations. The nested ones repeat but are not top-level; the top-level one occurs once.
    let mut ev = vec![ann("capture_32_FULL", 0.0, 2500.0, 1)];
    for i in 0..24 {
        let t = 10.0 + i as f64 * 100.0;
        ev.push(ann("## Call CompiledFxGraph f4ii ##", t, 90.0, 1));
        ev.push(kern("graph_kernel", t + 5.0, 50.0));
    }
    let r = gpu(&ev);
    assert_ne!(r.result.step_detection_method(), "annotation");
    assert_eq!(
        note(&r, "no top-level user annotation").unwrap(),
        "no top-level user annotation is a step marker (§3.1.1): `capture_…` occurs once (≥ 2 needed), holds 100.0 % of the device busy time"
    );
    // The same annotations on another thread than the enclosing one are top-level there.
    let ev: Vec<String> = ev
        .iter()
        .map(|e| e.replacen(r#""tid":1"#, r#""tid":2"#, 1))
        .collect();
    let mut ev = ev;
    ev[0] = ann("capture_32_FULL", 0.0, 2500.0, 1);
    let r = gpu(&ev);
    assert_eq!(r.result.step_detection_method(), "annotation");
    assert_eq!(r.result.steps.len(), 24);
}

#[test]
fn profiler_steps_win_over_annotations() {
    let mut ev = engine_steps(4);
    ev.push(ann("ProfilerStep#7", 0.0, 390.0, 1));
    let r = gpu(&ev);
    assert_eq!(r.result.step_detection_method(), "marker");
    assert_eq!(ids(&r), ["ProfilerStep#7"]);
}

#[test]
fn annotation_steps_switch_to_device_side_windows_when_the_device_lags() {
    // Step 1 launches `a` (at 5 µs), which runs 10–130, 30 µs past step 2's annotation at
    // 100: the overrun tail is 30 / (30 + 20) of step 2's kernel time (§3.2.1), above 5 %.
    let launch = |corr: u32, ts: f64| {
        format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{ts},"dur":1,"args":{{"correlation":{corr}}}}}"#
        )
    };
    let k = |name: &str, corr: u32, ts: f64, dur: f64| {
        kern(name, ts, dur).replace(
            r#""stream":7}"#,
            &format!(r#""stream":7,"correlation":{corr}}}"#),
        )
    };
    let r = gpu(&[
        ann("decode_1", 0.0, 90.0, 1),
        ann("decode_2", 100.0, 90.0, 1),
        launch(1, 5.0),
        k("a", 1, 10.0, 120.0),
        launch(2, 105.0),
        k("b", 2, 150.0, 20.0),
    ]);
    assert_eq!(r.result.step_detection_method(), "annotation+device_lag");
    assert_eq!(r.result.steps[1].window, Interval::new(130_000, 170_000));
    assert_eq!(r.result.steps[1].metrics.prelaunch_ns, 20_000);
}

#[test]
fn trace_view_user_annotations_are_step_markers_too() {
    // The rule reads `user_annotation` events whatever the format (Ascend trace_view.json).
    let ev: Vec<String> = (0..3)
        .map(|i| {
            host(
                &format!("rollout_{i}"),
                "user_annotation",
                i as f64 * 100.0,
                90.0,
                1,
            )
        })
        .collect();
    // A kernel_details.csv without `Step Id` (a `Step Id` column would come first, §3.1 item 4).
    let mut k = String::from("Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,Input Shapes\n");
    for (i, ts) in [10.0, 110.0, 210.0].iter().enumerate() {
        k.push_str(&format!(
            "4294967295,{i},2,a,a,AI_CORE,{ts:.3}\t,50.000,0,8,\"\"\n"
        ));
    }
    let r = run_rank(k, Some(trace(&[], &ev)), &AnomalyConfig::spec_defaults());
    assert_eq!(r.result.step_detection_method(), "annotation");
    assert_eq!(ids(&r), ["rollout_0", "rollout_1", "rollout_2"]);
}
