use super::*;
use crate::base::arith::OutOfRange;

fn row(name: &str, core: &str, start: i64, stream: &str, line: u64) -> KernelRow {
    KernelRow {
        name: name.into(),
        core_raw: core.into(),
        start_ns: start,
        dur_ns: 10,
        stream: stream.into(),
        row: line,
        ..Default::default()
    }
}

#[test]
fn any_name_tests_kernel_names_only_each_once() {
    let mut b = KernelTableBuilder::with_capacity(3);
    // The stream and core texts are in the pool too, but they are not names.
    b.push(&row(
        "MatMul",
        "AI_CORE",
        0,
        "FusedInferAttentionScore_stream",
        1,
    ));
    b.push(&row("Add", "AI_CORE", 10, "7", 2));
    b.push(&row("MatMul", "AI_CORE", 20, "7", 3));
    let t = b.finish();
    let calls = std::cell::Cell::new(0);
    let count = |n: &str, want: &str| {
        calls.set(calls.get() + 1);
        n == want
    };
    assert!(!t.any_name(|n| count(n, "FusedInferAttentionScore_stream")));
    assert_eq!(calls.get(), 2, "two distinct names, each tested once");
    assert!(t.any_name(|n| n == "Add"));
    assert!(!t.any_name(|n| n == "AI_CORE"));
    assert!(!KernelTableBuilder::new().finish().any_name(|_| true));
}

#[test]
fn classifies_cores_and_level0_names() {
    assert_eq!(
        TaskClass::classify("AI_VECTOR_CORE", "x"),
        (TaskClass::AiCore, false)
    );
    assert_eq!(
        TaskClass::classify(" mix_aiv ", "x"),
        (TaskClass::AiCore, false)
    );
    assert_eq!(
        TaskClass::classify("COMMUNICATION", "x"),
        (TaskClass::Hccl, false)
    );
    assert_eq!(
        TaskClass::classify("DSA_SQE", "x"),
        (TaskClass::Other, false)
    );
    assert_eq!(
        TaskClass::classify("N/A", "hcom_allReduce__586_0_1"),
        (TaskClass::Hccl, true)
    );
    assert_eq!(
        TaskClass::classify("", "some_aicpu_op"),
        (TaskClass::AiCpu, true)
    );
    assert_eq!(
        TaskClass::classify("N/A", "trans_TransData_0"),
        (TaskClass::AiCore, true)
    );
    assert_eq!(
        TaskClass::classify("N/A", "aclnnEqTensor_BroadcastToAiCore_BroadcastTo"),
        (TaskClass::AiCore, true)
    );
    assert_eq!(
        TaskClass::classify("N/A", "HcomBroadcast_1"),
        (TaskClass::Hccl, true)
    );
    assert!(is_comm_kernel(TaskClass::Other, "HcomSend"));
    assert!(!is_comm_kernel(TaskClass::AiCore, "MatMul"));
}

#[test]
fn kernels_outside_the_time_range_are_refused_and_counted() {
    let mut b = KernelTableBuilder::new();
    b.push(&row("ok", "AI_CORE", 1_700_000_000_000_000_000, "2", 2));
    let mut big = row("late", "AI_CORE", i64::MAX - 5, "2", 3);
    b.push(&big);
    big.start_ns = i64::MIN;
    big.row = 4;
    b.push(&big);
    assert_eq!(
        b.try_push(&row("x", "AI_CORE", i64::MAX, "2", 5)),
        Err(OutOfRange)
    );
    let mut long = row("long", "AI_CORE", 0, "2", 6);
    long.dur_ns = 4_000_000_000_000_000_000;
    b.push(&long);
    long.row = 7;
    b.push(&long);
    long.row = 8;
    b.push(&long);
    assert_eq!(
        b.rejected().count,
        3,
        "the third long one overflows the total"
    );
    assert_eq!(b.rejected().first_at, vec![3, 4, 8]);
    let t = b.finish();
    assert_eq!(t.len(), 3);
    assert_eq!(t.end_ns(2), 1_700_000_000_000_000_010);
}

#[test]
fn an_overrunning_kernel_is_clipped_at_the_next_start_on_its_stream_only() {
    let mut b = KernelTableBuilder::new();
    let mut stall = row("stall", "AI_CORE", 100, "2", 2);
    stall.dur_ns = 1_000_000; // runs over both later kernels of stream 2
    b.push(&stall);
    b.push(&row("same_start", "AI_CORE", 100, "2", 3)); // equal start: not the clip point
    b.push(&row("next", "AI_CORE", 150, "2", 4));
    b.push(&row("other", "AI_CORE", 120, "3", 5)); // another stream: not a clip point
    let mut l0 = row("level0", "AI_CORE", 100, "", 6); // unknown stream: never clipped
    l0.dur_ns = 1_000_000;
    b.push(&l0);
    b.push(&row("l0_next", "AI_CORE", 200, "", 7));
    let t = b.finish();
    let at = |n: &str| (0..t.len()).find(|&i| t.name_of(i) == n).unwrap();
    assert_eq!(t.busy_end_ns(at("stall")), 150);
    assert_eq!(t.end_ns(at("stall")), 1_000_100);
    assert_eq!(t.busy_end_ns(at("same_start")), 110);
    assert_eq!(t.busy_end_ns(at("level0")), 1_000_100);
    assert_eq!(
        t.overruns(),
        [Overrun {
            kernel: at("stall"),
            next: at("next"),
            overrun_ns: 999_950
        }]
    );
}

#[test]
fn finish_sorts_by_start_then_stream_then_row_and_fills_stream_keys() {
    let mut b = KernelTableBuilder::new();
    b.push(&row("b", "AI_CORE", 20, "2", 3));
    b.push(&row("a", "AI_CORE", 10, "3", 4));
    b.push(&row("c", "AI_CORE", 10, "2", 5));
    b.push(&row("hcom_x", "HCCL", 10, "", 2));
    b.push(&row("d", "AI_CORE", 5, "", 6));
    let t = b.finish();
    let names: Vec<_> = (0..t.len()).map(|i| t.name_of(i)).collect();
    assert_eq!(names, ["d", "c", "a", "hcom_x", "b"]);
    assert_eq!(t.stream_of(0), "unknown");
    assert_eq!(t.stream_of(3), "hccl");
    assert_eq!(t.starting_in(10, 20), 1..4);
}

#[test]
fn columns_kept_as_one_value_until_a_row_differs_come_out_in_the_sorted_order() {
    // Pushed out of order: the first rows are their index + 1 with one wait, op type, shapes
    // and step tag and no launch or PMU; later rows differ in each, so every column the builder
    // keeps as one value starts to hold rows part-way.
    let mut b = KernelTableBuilder::new();
    let mut rows = Vec::new();
    for i in 0..12u64 {
        let mut r = row(
            &format!("k{}", i % 5),
            "AI_CORE",
            1000 - 10 * (i as i64 % 7),
            "2",
            i + 1,
        );
        if i >= 4 {
            r.wait_ns = i as i64;
            r.op_type = format!("T{}", i % 3);
            r.input_shapes = format!("[{i}]");
            r.step_tag = Some(i as i64 / 4);
        }
        if i >= 6 {
            r.launch_ns = Some(500 + i as i64);
            r.pmu_mac_ratio = Some(i as f32);
        }
        if i == 9 {
            r.row = 40; // one source row that is not the index + 1
        }
        b.push(&r);
        rows.push(r);
    }
    let t = b.finish();
    let mut want = rows.clone();
    want.sort_by(|a, b| a.start_ns.cmp(&b.start_ns).then(a.row.cmp(&b.row)));
    assert_eq!(t.len(), want.len());
    for (i, r) in want.iter().enumerate() {
        assert_eq!(t.start_ns()[i], r.start_ns);
        assert_eq!(t.name_of(i), r.name);
        assert_eq!(t.wait_ns()[i], r.wait_ns);
        assert_eq!(t.text(t.op_type()[i]), r.op_type);
        assert_eq!(t.text(t.shapes()[i]), r.input_shapes);
        assert_eq!(t.step_tag()[i], r.step_tag);
        assert_eq!(t.launch_ns(i), r.launch_ns);
        assert_eq!(t.pmu()[i][0], r.pmu_mac_ratio);
        assert_eq!(t.row_of(i), r.row);
    }
    // Rows pushed in order, all one value: nothing stored per row for those columns.
    let mut b = KernelTableBuilder::with_capacity(3);
    for i in 0..3 {
        b.push(&row("k", "AI_CORE", i * 10, "2", i as u64 + 1));
    }
    let t = b.finish();
    assert!(!t.has_launch_times() && t.pmu().is_empty());
    assert_eq!(t.rows().collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(t.wait_ns().iter().copied().collect::<Vec<_>>(), [0, 0, 0]);
    // A CSV's rows: physical lines from 2, the first already not its index + 1.
    let mut b = KernelTableBuilder::new();
    for i in 0..3 {
        b.push(&row("k", "AI_CORE", i * 10, "2", i as u64 + 2));
    }
    assert_eq!(b.finish().rows().collect::<Vec<_>>(), [2, 3, 4]);
}
