//! Times at the `i64` limits ("Arithmetic on input values"): kernel rows and trace
//! events whose start or end leaves the model's time range are dropped with a located
//! problem; everything else is analysed exactly. On the old code these inputs panicked in
//! the test profile (overflow in `start + dur`, gaps, marker ends).

mod engine_support;

mod anomaly_support;

use anomaly_support::*;
use proflens::analysis::anomaly_config::AnomalyConfig;

fn cfg() -> AnomalyConfig {
    AnomalyConfig::spec_defaults()
}

fn problems(
    r: &proflens::engine::read::RankAnalysis,
    code: &str,
) -> Vec<(Option<u64>, Option<u64>, String)> {
    with_code(&r.problems, code)
}

/// `(line, byte, message)` of the problems with `code`.
fn with_code(
    problems: &proflens::base::Problems,
    code: &str,
) -> Vec<(Option<u64>, Option<u64>, String)> {
    problems
        .kept()
        .iter()
        .filter(|p| p.code == code)
        .map(|p| (p.at.line, p.at.byte, p.message.clone()))
        .collect()
}

#[test]
fn kernel_rows_at_the_i64_limits_are_dropped_with_their_lines() {
    let k = kernel_csv(&[
        K("ok_a", "AI_CORE", "100", "10", "0", "2"), // line 2
        K("late", "AI_CORE", "9223372036854775.000", "10", "0", "2"), // line 3: end > i64::MAX
        K("max", "AI_CORE", "9223372036854775.807", "0.001", "0", "2"), // line 4: start = i64::MAX ns
        K("early", "AI_CORE", "-9223372036854775.808", "5", "0", "2"), // line 5: start = i64::MIN ns
        K("long", "AI_CORE", "1000", "9223372036854775", "0", "2"),    // line 6: end > i64::MAX
        K("ok_b", "AI_CORE", "200", "10", "0", "2"),                   // line 7
    ]);
    let r = run_rank(k, None, &cfg());
    let p = problems(&r, "ANOM-KD-009");
    assert_eq!(
        p.iter().map(|x| x.0).collect::<Vec<_>>(),
        [Some(3), Some(4), Some(5), Some(6)]
    );
    assert_eq!(
        p[0].2,
        "row dropped: start 9223372036854775.000 µs with duration 10 µs lies outside the representable time range (±4611686018427387.903 µs), or the table's durations add up past it"
    );
    assert_eq!(r.kernels.len(), 2);
    assert_eq!(r.result.steps.len(), 1);
    assert_eq!(r.result.steps[0].metrics.busy_ns, 20_000);
    assert_eq!(r.result.steps[0].metrics.service_ns, 110_000);
}

#[test]
fn kernels_far_apart_inside_the_range_are_analysed_without_overflow() {
    // −4.6e18 and +4.6e18 ns: both in range, their distance (9.2e18) still fits in i64.
    let k = kernel_csv(&[
        K("first", "AI_CORE", "-4611686018427387.000", "1", "0", "2"),
        K("last", "AI_CORE", "4611686018427386.000", "1", "0", "2"),
    ]);
    let r = run_rank(k, None, &cfg());
    assert!(problems(&r, "ANOM-KD-009").is_empty());
    let m = &r.result.steps[0].metrics;
    assert_eq!(m.service_ns, 9_223_372_036_854_774_000);
    assert_eq!(m.busy_ns, 2_000);
    assert_eq!(m.underfeed_ns, 9_223_372_036_854_772_000);
}

#[test]
fn durations_that_add_up_past_i64_are_dropped_once_the_total_would_overflow() {
    // Three overlapping kernels of 4e18 ns: the third would make Σ dur > i64::MAX.
    let k = kernel_csv(&[
        K("a", "AI_CORE", "0", "4000000000000000", "0", "2"),
        K("b", "AI_CORE", "1", "4000000000000000", "0", "3"),
        K("c", "AI_CORE", "2", "4000000000000000", "0", "4"),
    ]);
    let r = run_rank(k, None, &cfg());
    assert_eq!(
        problems(&r, "ANOM-KD-009")
            .iter()
            .map(|x| x.0)
            .collect::<Vec<_>>(),
        [Some(4)]
    );
    assert_eq!(r.kernels.len(), 2);
    assert_eq!(
        r.result.steps[0].inventory.kernel_duration_sum_ns,
        8_000_000_000_000_000_000
    );
}

#[test]
fn trace_events_at_the_i64_limits_are_dropped_with_their_byte_offsets() {
    let k = kernel_csv(&[
        K("ok_a", "AI_CORE", "100", "10", "0", "2"),
        K("ok_b", "AI_CORE", "200", "10", "0", "2"),
    ]);
    let events = vec![
        host("fine", "cpu_op", 100.0, 50.0, 1),
        // ts + dur > i64::MAX.
        r#"{"ph":"X","name":"late","cat":"cpu_op","pid":1,"tid":1,"ts":"9223372036854775.000","dur":10}"#.into(),
        // A marker whose negative dur takes its end below i64::MIN.
        r#"{"ph":"X","name":"ProfilerStep#9","cat":"cpu_op","pid":1,"tid":1,"ts":"-9223372036854775.000","dur":-9223372036854775}"#.into(),
        // B/E pair from i64::MIN to i64::MAX ns (old code: `ts - b` overflowed).
        r#"{"ph":"B","name":"wide","pid":1,"tid":2,"ts":"-9223372036854775.808"}"#.into(),
        r#"{"ph":"E","name":"wide","pid":1,"tid":2,"ts":"9223372036854775.807"}"#.into(),
        // A flow end at i64::MAX ns.
        r#"{"ph":"f","name":"torch_to_npu","cat":"async_npu","pid":1,"tid":1,"ts":"9223372036854775.807","id":1}"#.into(),
    ];
    let tv = trace(&[(1, 90.0, 200.0)], &events);
    let r = run_rank(k, Some(tv.clone()), &cfg());
    let p = problems(&r, "ANOM-TV-010");
    assert_eq!(p.len(), 1, "{:?}", r.problems.kept());
    let first = tv.find(r#"{"ph":"X","name":"late""#).unwrap() as u64;
    assert_eq!(p[0].1, Some(first));
    assert!(
        p[0].2.starts_with("events dropped: ts or ts + dur outside the representable time range (±4611686018427387.903 µs); count and byte offsets: 5 (first at "),
        "{}",
        p[0].2
    );
    let t = r.trace.as_ref().unwrap();
    assert_eq!(t.markers.len(), 1, "the step marker in range is kept");
    assert!(t.h2d_flow_ends_ns.is_empty());
    assert_eq!(r.result.steps.len(), 1);
    assert_eq!(r.result.steps[0].metrics.busy_ns, 20_000);
}

mod memory {
    use std::ops::ControlFlow;

    use proflens::engine::read::memory::MemoryOptions;
    use proflens::ingest::inventory::Inventory;
    use proflens::ingest::MemOpener;

    const H15: &str = "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),Release Total Active(MB),Stream Ptr,Device Type";
    const DIR: &str = "run/rank0_ascend_pt";

    fn op(name: &str, ts: &str) -> String {
        format!(
            r#"{{"ph":"X","name":"{name}","pid":1,"tid":1,"ts":"{ts}","dur":10,"cat":"cpu_op","args":{{"Call stack":"/w/train.py(3): main"}}}}"#
        )
    }

    #[test]
    fn memory_rows_and_cpu_ops_at_the_i64_limits_are_dropped_with_lines_and_offsets() {
        let csv = format!(
            "{H15}\n\
             aten::add,512,1000,2000,2000,1000,1000,1,2,1,1,2,1,0xabc,NPU:0\n\
             aten::huge,512,9223372036854775.807,,,,,1,2,1,1,2,1,0xabc,NPU:0\n\
             aten::add,512,1500,-9223372036854775.808,,,,1,2,1,1,2,1,0xabc,NPU:0\n"
        );
        let ops = [
            op("aten::add", "900"),
            op("aten::huge", "-9223372036854775.808"),
            op("aten::add", "9223372036854775.800"),
        ];
        let trace = format!("[{}]", ops.join(",\n"));
        let mut o = MemOpener::new();
        o.add(
            format!("{DIR}/ASCEND_PROFILER_OUTPUT/operator_memory.csv"),
            csv.into_bytes(),
        );
        o.add(
            format!("{DIR}/ASCEND_PROFILER_OUTPUT/trace_view.json"),
            trace.clone().into_bytes(),
        );
        let inv = Inventory::from_paths(&o.list());
        let (run, _) =
            crate::engine_support::memory_run(&inv, &o, &MemoryOptions::default(), &mut |_| {
                ControlFlow::Continue(())
            });
        let r = &run.ranks[0];
        let found = |code: &str| super::with_code(&r.problems, code);
        let csv_p = found("MEM-CSV-010");
        assert_eq!(
            csv_p.iter().map(|p| p.0).collect::<Vec<_>>(),
            [Some(3), Some(4)]
        );
        assert_eq!(
            csv_p[0].2,
            "operator_memory.csv:3: a time lies outside the representable range (±4611686018427387.903 µs): row dropped"
        );
        let tv = found("MEM-TV-010");
        assert_eq!(tv.len(), 1, "{:?}", r.problems.kept());
        assert_eq!(tv[0].1, Some(trace.find(&ops[1]).unwrap() as u64));
        let (a, b) = (trace.find(&ops[1]).unwrap(), trace.find(&ops[2]).unwrap());
        assert_eq!(
            tv[0].2,
            format!("trace_view.json: cpu_op events dropped, ts or ts + dur outside the representable time range (±4611686018427387.903 µs); count and byte offsets: 2 (first at {a}, {b})")
        );
        assert_eq!(r.len(), 1);
        assert_eq!(r.row(0).start_time_ns(), 1_000_000);
        assert_eq!(r.row(0).matched_op_ts_ns(), Some(900_000));
    }
}

#[test]
fn step_trace_windows_outside_the_time_range_fall_back_to_the_kernels_extent() {
    let k = kernel_csv(&[
        K("a", "AI_CORE", "100", "10", "0", "2"),
        K("b", "AI_CORE", "200", "10", "0", "2"),
    ]);
    let st = "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n\
              1,20,0,0,0,0,9223372036854775,0,0,9223372036854775\n";
    let r = run_files(
        &[
            (
                "cap/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
                k,
            ),
            (
                "cap/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
                st.into(),
            ),
        ],
        &cfg(),
    )
    .remove(0);
    assert_eq!(r.result.steps.len(), 1);
    assert_eq!(r.result.steps[0].window.start_ns, 100_000);
    assert_eq!(r.result.steps[0].window.end_ns, 210_000);
    assert!(
        r.result.step_notes.iter().any(|n| n == "step_trace_time.csv: step 1: Preparing/Stage put the window outside the representable time range (±4611686018427387.903 µs); the kernels' extent is used"),
        "{:?}",
        r.result.step_notes
    );
}
