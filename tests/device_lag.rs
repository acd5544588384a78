//! Device-side step windows when the device lags the host (anomaly.md §3.2 Decision), through
//! the whole Ascend pipeline: kernels carry their launch step in `Step Id`; the rank switches
//! to device-side windows only when more than 5 % of the kernel time in a marker window was
//! launched in an earlier step (below / at / above the threshold).

mod anomaly_support;

use anomaly_support::*;
use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::analysis::intervals::Interval;
use proflens::engine::read::RankAnalysis;

/// A kernel_details.csv whose rows are `(Step Id, name, start µs, dur µs)` on stream 2.
fn kernels(rows: &[(u32, &str, f64, f64)]) -> String {
    let mut s = String::from(HEADER);
    s.push('\n');
    for (i, (step, name, start, dur)) in rows.iter().enumerate() {
        s.push_str(&format!(
            "{step},4294967295,{i},2,{name},{name},AI_CORE,{start:.3}\t,{dur:.3},0,8,\"\"\n"
        ));
    }
    s
}

const STEP_TRACE_HEADER: &str = "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing";

/// Three steps (markers at 0, 100, 210 µs). Step 1 launches `a` (10–90) and `late`
/// (101 µs, `late_us` long), which starts in step 2's marker window; step 2 launches `b`
/// (110–205, ending before marker 3: no overrun tail), step 3 launches `c` (220–270). Step 2's
/// marker window holds `late_us / (late_us + 95)` of its kernel time from step 1: 5 % exactly
/// at `late_us` = 5.
fn lagging_rank(late_us: f64, step_trace: Option<&str>) -> RankAnalysis {
    let k = kernels(&[
        (1, "a", 10.0, 80.0),
        (1, "late", 101.0, late_us),
        (2, "b", 110.0, 95.0),
        (3, "c", 220.0, 50.0),
    ]);
    let t = trace(&[(1, 0.0, 90.0), (2, 100.0, 90.0), (3, 210.0, 90.0)], &[]);
    let dir = "cap/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT";
    let mut files = vec![
        (format!("{dir}/kernel_details.csv"), k),
        (format!("{dir}/trace_view.json"), t),
    ];
    if let Some(st) = step_trace {
        files.push((format!("{dir}/step_trace_time.csv"), st.to_string()));
    }
    let files: Vec<(&str, String)> = files.iter().map(|(p, b)| (p.as_str(), b.clone())).collect();
    let mut v = run_files(&files, &AnomalyConfig::spec_defaults());
    assert_eq!(v.len(), 1);
    v.remove(0)
}

fn windows(r: &RankAnalysis) -> Vec<Interval> {
    r.result.steps.iter().map(|s| s.window).collect()
}

fn counts(r: &RankAnalysis) -> Vec<usize> {
    r.result
        .steps
        .iter()
        .map(|s| s.inventory.total_kernel_count)
        .collect()
}

fn marker_windows() -> Vec<Interval> {
    vec![
        Interval::new(0, 100_000),
        Interval::new(100_000, 210_000),
        Interval::new(210_000, 270_000),
    ]
}

#[test]
fn below_five_percent_keeps_marker_windows_and_says_so() {
    let r = lagging_rank(4.0, None); // 4 / 99 = 4.04 %
    assert_eq!(r.result.step_detection_method(), "marker");
    assert_eq!(windows(&r), marker_windows());
    assert_eq!(counts(&r), [1, 2, 1]);
    let d = r.result.device_lag.as_ref().unwrap();
    assert!(!d.applied);
    assert_eq!(d.max_share.1, 1);
    assert!((d.max_share.0 - 4.0 / 99.0).abs() < 1e-12);
    let note = r
        .result
        .limitations
        .iter()
        .find(|l| l.starts_with("device keeps up"))
        .unwrap();
    assert_eq!(
        note,
        "device keeps up: at most 4.0 % of a window's kernel time (ProfilerStep#2) was launched in an earlier step (by Step Id), not above 5 %: marker windows kept"
    );
}

#[test]
fn exactly_five_percent_keeps_marker_windows() {
    let r = lagging_rank(5.0, None); // 5 / 100 = 5 % is not more than 5 %
    assert_eq!(r.result.step_detection_method(), "marker");
    assert_eq!(windows(&r), marker_windows());
    let d = r.result.device_lag.as_ref().unwrap();
    assert!(!d.applied);
    assert_eq!(d.max_share.0, 0.05);
}

#[test]
fn above_five_percent_switches_to_device_side_windows() {
    // 6 / 101 = 5.94 %. Device side: step 1 = {a, late} ends at 107; step 2 starts at
    // max(100, 107) = 107 and ends with b at 205; step 3 starts at its marker, max(210, 205).
    let st = format!(
        "{STEP_TRACE_HEADER}\n1,0,0,0,0,0,0,0,0,10\n2,0,0,0,0,0,0,0,0,10\n3,0,0,0,0,0,0,0,0,12\n"
    );
    let r = lagging_rank(6.0, Some(&st));
    assert_eq!(r.result.step_detection_method(), "marker+device_lag");
    assert_eq!(
        windows(&r),
        [
            Interval::new(0, 107_000),
            Interval::new(107_000, 205_000),
            Interval::new(210_000, 270_000)
        ]
    );
    assert_eq!(counts(&r), [2, 1, 1]);
    let d = r.result.device_lag.as_ref().unwrap();
    assert!(d.applied);
    assert_eq!(
        d.steps
            .iter()
            .map(|s| (s.host_start_ns, s.lag_ns, s.overrun_ns))
            .collect::<Vec<_>>(),
        [
            (0, Some(10_000), 0),
            (100_000, Some(10_000), 7_000),
            (210_000, Some(10_000), 0)
        ]
    );
    assert_eq!(d.median_lag_ms, 0.01);
    assert_eq!(d.moved_kernels, 0);
    // Preparing counts from the host marker: 10 µs = 3 µs device prelaunch + 7 µs overrun
    // (step 2), 10 µs = 10 + 0 (step 3, the CSV says 12: off by 2 µs > 1 µs).
    assert_eq!(d.step_trace_check, Some((3, 2)));
    let s2 = &r.result.steps[1];
    assert_eq!(s2.metrics.prelaunch_ns, 3_000);
    assert_eq!(s2.metrics.service_ns, 98_000);
    let note = r
        .result
        .limitations
        .iter()
        .find(|l| l.starts_with("device lags"))
        .unwrap();
    assert_eq!(
        note,
        "device lags the host: 5.9 % of the kernel time in ProfilerStep#2's marker window was launched in an earlier step (by Step Id); device-side windows: median lag 0.010 ms (first kernel start − host marker start); step_trace_time.csv: Preparing = device-side prelaunch + the previous step's overrun on 2 of 3 step(s) (msprof counts from the host marker and rounds to 0.25 µs; tolerance 1 µs)"
    );
    // The engine's own §13.1 cross-check reads Preparing against the host marker too.
    assert!(r
        .cross_check
        .iter()
        .any(|l| l == "ProfilerStep#2: Preparing 10 µs vs prelaunch to first kernel 10 µs"));
}

#[test]
fn step_ids_naming_fewer_than_two_markers_leave_marker_windows_unchecked() {
    // Step Ids that name no marker, or one Step Id for every kernel of several windows: the
    // launch step is unknown, no check, no note.
    let t = trace(&[(1, 0.0, 90.0), (2, 100.0, 90.0)], &[]);
    for step in [7, 1] {
        let k = kernels(&[(step, "a", 10.0, 80.0), (step, "b", 101.0, 50.0)]);
        let r = run_rank(k, Some(t.clone()), &AnomalyConfig::spec_defaults());
        assert_eq!(r.result.step_detection_method(), "marker");
        assert!(r.result.device_lag.is_none());
        assert_eq!(windows(&r)[1], Interval::new(100_000, 151_000));
    }
}

/// A Kineto trace: ProfilerStep#1 at 0, #2 at 100 µs; step 1 launches `a` (runs 10–90) and
/// `late` (launched at 50, runs 101–101+`late_us`), step 2 launches `b` (launched at 105,
/// runs 110–205). The launch step comes from `correlation` (GPU route).
fn gpu_trace(late_us: f64) -> String {
    let k = |name: &str, corr: u32, ts: f64, dur: f64| {
        format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":1,"args":{{"correlation":{corr}}}}},
{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7,"correlation":{corr}}}}}"#,
            [0.0, 5.0, 50.0, 105.0][corr as usize]
        )
    };
    format!(
        r#"{{"schemaVersion":1,"deviceProperties":[{{"id":0,"name":"NVIDIA L20"}}],"traceEvents":[
{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":90}},
{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":100,"dur":90}},
{},
{},
{}
]}}"#,
        k("a", 1, 10.0, 80.0),
        k("late", 2, 101.0, late_us),
        k("b", 3, 110.0, 95.0)
    )
}

#[test]
fn gpu_ranks_switch_by_launch_correlation_above_five_percent() {
    for (late, method, second) in [
        (5.0, "marker", Interval::new(100_000, 205_000)),
        (6.0, "marker+device_lag", Interval::new(107_000, 205_000)),
    ] {
        let v = run_files(
            &[("run/rank0.pt.trace.json", gpu_trace(late))],
            &AnomalyConfig::spec_defaults(),
        );
        assert_eq!(v.len(), 1);
        let r = &v[0].result;
        assert_eq!(r.step_detection_method(), method, "late {late}");
        assert_eq!(r.steps[1].window, second, "late {late}");
        let d = r.device_lag.as_ref().unwrap();
        assert_eq!(d.source.as_str(), "launch correlation");
    }
}

/// §3.2.1 overrun tails. Two steps (markers at 0 and 100 µs). Step 1 launches `a`, which starts
/// inside its own host window (10 µs) and runs `over_us` past marker 2 (to 100 + `over_us`);
/// step 2 launches `b` (150–245). No kernel starts outside its own host window: only `a`'s
/// tail lags, `over / (over + 95)` of marker window 2's kernel time (5 % exactly at 5 µs).
fn overrunning_rank(over_us: f64, step_trace: Option<&str>) -> RankAnalysis {
    let k = kernels(&[(1, "a", 10.0, 90.0 + over_us), (2, "b", 150.0, 95.0)]);
    let t = trace(&[(1, 0.0, 90.0), (2, 100.0, 90.0)], &[]);
    let dir = "cap/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT";
    let mut files = vec![
        (format!("{dir}/kernel_details.csv"), k),
        (format!("{dir}/trace_view.json"), t),
    ];
    if let Some(st) = step_trace {
        files.push((format!("{dir}/step_trace_time.csv"), st.to_string()));
    }
    let files: Vec<(&str, String)> = files.iter().map(|(p, b)| (p.as_str(), b.clone())).collect();
    let mut v = run_files(&files, &AnomalyConfig::spec_defaults());
    assert_eq!(v.len(), 1);
    v.remove(0)
}

#[test]
fn an_overrun_tail_below_or_at_five_percent_keeps_marker_windows() {
    for (over, share) in [(4.0, 4.0 / 99.0), (5.0, 0.05)] {
        let r = overrunning_rank(over, None);
        assert_eq!(r.result.step_detection_method(), "marker", "over {over}");
        let end = 245_000;
        assert_eq!(
            windows(&r),
            [Interval::new(0, 100_000), Interval::new(100_000, end)]
        );
        let d = r.result.device_lag.as_ref().unwrap();
        assert!(!d.applied);
        assert_eq!(d.max_share, (share, 1), "over {over}");
        assert_eq!(d.steps[1].tail_ns, (over * 1000.0) as i64);
        // The marker window starts busy with a's tail: no prelaunch idle time.
        assert_eq!(r.result.steps[1].metrics.prelaunch_ns, 0);
    }
}

#[test]
fn an_overrun_tail_above_five_percent_switches_to_device_side_windows() {
    // a runs 10–106, 6 µs past marker 2: 6 / (6 + 95) = 5.94 % of window 2's kernel time.
    // Device side: step 1 ends with a at 106; step 2 starts at max(100, 106) = 106, its
    // prelaunch is b's start − a's end = 150 − 106 = 44 µs (0 with marker windows, above).
    let st = format!("{STEP_TRACE_HEADER}\n1,0,0,0,0,0,0,0,0,10\n2,0,0,0,0,0,0,0,0,50\n");
    let r = overrunning_rank(6.0, Some(&st));
    assert_eq!(r.result.step_detection_method(), "marker+device_lag");
    assert_eq!(
        windows(&r),
        [Interval::new(0, 106_000), Interval::new(106_000, 245_000)]
    );
    assert_eq!(counts(&r), [1, 1]);
    let s2 = &r.result.steps[1];
    assert_eq!(s2.metrics.prelaunch_ns, 44_000);
    assert_eq!(s2.metrics.service_ns, 139_000);
    let d = r.result.device_lag.as_ref().unwrap();
    assert!(d.applied);
    assert_eq!(d.max_share, (6.0 / 101.0, 1));
    assert_eq!(
        d.steps
            .iter()
            .map(|s| (s.host_start_ns, s.tail_ns, s.lag_ns, s.overrun_ns))
            .collect::<Vec<_>>(),
        [
            (0, 0, Some(10_000), 0),
            (100_000, 6_000, Some(50_000), 6_000)
        ]
    );
    // Preparing (from the host marker) = device-side prelaunch + overrun: 50 = 44 + 6.
    assert_eq!(d.step_trace_check, Some((2, 2)));
    let note = r
        .result
        .limitations
        .iter()
        .find(|l| l.starts_with("device lags"))
        .unwrap();
    assert_eq!(
        note,
        "device lags the host: 5.9 % of the kernel time in ProfilerStep#2's marker window was launched in an earlier step (by Step Id, 0.006 ms of it by earlier steps' kernels running on past the marker); device-side windows: median lag 0.030 ms (first kernel start − host marker start); step_trace_time.csv: Preparing = device-side prelaunch + the previous step's overrun on 2 of 2 step(s) (msprof counts from the host marker and rounds to 0.25 µs; tolerance 1 µs)"
    );
}

/// The same overrun on a GPU rank: `a` launched at 5 µs (step 1) runs 10–(100 + `over`), `b`
/// launched at 105 µs (step 2) runs 150–245; the launch step comes from `correlation`.
fn overrunning_gpu_trace(over_us: f64) -> String {
    let k = |name: &str, corr: u32, launch: f64, ts: f64, dur: f64| {
        format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{launch},"dur":1,"args":{{"correlation":{corr}}}}},
{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7,"correlation":{corr}}}}}"#
        )
    };
    format!(
        r#"{{"schemaVersion":1,"deviceProperties":[{{"id":0,"name":"NVIDIA L20"}}],"traceEvents":[
{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":90}},
{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":100,"dur":90}},
{},
{}
]}}"#,
        k("a", 1, 5.0, 10.0, 90.0 + over_us),
        k("b", 2, 105.0, 150.0, 95.0)
    )
}

#[test]
fn gpu_ranks_switch_on_an_overrun_tail_above_five_percent() {
    for (over, method, second, prelaunch) in [
        (5.0, "marker", Interval::new(100_000, 245_000), 0),
        (
            6.0,
            "marker+device_lag",
            Interval::new(106_000, 245_000),
            44_000,
        ),
    ] {
        let v = run_files(
            &[("run/rank0.pt.trace.json", overrunning_gpu_trace(over))],
            &AnomalyConfig::spec_defaults(),
        );
        let r = &v[0].result;
        assert_eq!(r.step_detection_method(), method, "over {over}");
        assert_eq!(r.steps[1].window, second, "over {over}");
        assert_eq!(r.steps[1].metrics.prelaunch_ns, prelaunch, "over {over}");
    }
}
