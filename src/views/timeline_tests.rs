//! Hand-built ranks whose merged boxes, bubble marks and hits are known by construction.

use super::*;
use crate::analysis::anomaly::{analyse, CaptureInfo, RankInput};
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::model::kernels::{KernelRow, KernelTableBuilder};
use crate::model::trace_events::{Lane, MarkerEvent};
use crate::protocol::TimelineSearchDto;

const S: i64 = 1_000_000_000_000; // step start, ns (absolute)
const US: i64 = 1_000;

fn kernel(
    name: &str,
    core: &str,
    stream: &str,
    start_us10: i64,
    end_us10: i64,
    row: u64,
) -> KernelRow {
    // Times in tenths of µs relative to S.
    KernelRow {
        name: name.into(),
        op_type: "T".into(),
        core_raw: core.into(),
        start_ns: S + start_us10 * US / 10,
        dur_ns: (end_us10 - start_us10) * US / 10,
        stream: stream.into(),
        row,
        input_shapes: if row == 4 {
            "\"8,16\"".into()
        } else {
            String::new()
        },
        ..Default::default()
    }
}

/// Stream 2: [10,20) [20,30) [30.5,40) [60,70) [200,300) µs; stream 3: [15,25);
/// comm (stream key `hccl`): [100,150). One marker step [0, 300) µs. Host thread 100/101
/// (Python): the step marker (left out), aten::mm [5,12), aten::add [12,14).
fn rank() -> (KernelTable, HostEventTable, AnomalyResult) {
    let mut b = KernelTableBuilder::new();
    b.push(&kernel("k1", "AI_CORE", "2", 100, 200, 2));
    b.push(&kernel("k2", "AI_CORE", "2", 200, 300, 3));
    b.push(&kernel("k3", "AI_VECTOR_CORE", "2", 305, 400, 4));
    b.push(&kernel("k4", "AI_CORE", "2", 600, 700, 5));
    b.push(&kernel("k5", "AI_CPU", "2", 2000, 3000, 6));
    b.push(&kernel("s3", "AI_CORE", "3", 150, 250, 7));
    b.push(&kernel("hcom_allReduce_0", "HCCL", "", 1000, 1500, 8));
    let k = b.finish();
    let mut t = HostEventTable::new();
    let th = t.thread_key("100/101");
    t.push("ProfilerStep#1", "", th, Lane::Python, S, 300 * US);
    t.push("aten::mm", "cpu_op", th, Lane::Python, S + 5 * US, 7 * US);
    t.push("aten::add", "cpu_op", th, Lane::Python, S + 12 * US, 2 * US);
    t.markers.push(MarkerEvent {
        name: "ProfilerStep#1".into(),
        ts_ns: S,
        dur_ns: 300 * US,
    });
    t.finish();
    let cfg = AnomalyConfig::spec_defaults();
    let r = analyse(
        &RankInput {
            kernels: &k,
            trace: Some(&t),
            comm_ops: &[],
            step_trace: &[],
            info: CaptureInfo::default(),
        },
        &cfg,
    );
    (k, t, r)
}

fn index<'a>(
    k: &'a KernelTable,
    t: &'a HostEventTable,
    r: &'a AnomalyResult,
) -> (TimelineSource<'a>, TimelineIndex) {
    let src = TimelineSource {
        kernels: k,
        trace: Some(t),
        result: r,
        runtime: "CANN",
    };
    (src, TimelineIndex::new(src))
}

fn build(
    ix: &TimelineIndex,
    src: TimelineSource<'_>,
    rank: u32,
    x_range_ms: Option<(f64, f64)>,
    width_px: u32,
) -> TimelineDto {
    ix.build(
        src,
        rank,
        &TimelineQuery {
            x_range_ms,
            width_px,
        },
    )
}

fn boxes_us(d: &TimelineDto, lane: usize) -> Vec<(f64, f64, u32)> {
    let b = &d.lanes[lane].boxes;
    (0..b.start_ms.len())
        .map(|i| {
            (
                (b.start_ms[i] * 1e4).round() / 10.0,
                (b.end_ms[i] * 1e4).round() / 10.0,
                b.count[i],
            )
        })
        .collect()
}

#[test]
fn lanes_boxes_steps_and_bubbles_of_a_hand_built_rank() {
    let (k, t, r) = rank();
    let (src, ix) = index(&k, &t, &r);
    let d = build(&ix, src, 7, None, 300);
    assert_eq!(d.rank, 7);
    assert_eq!(d.origin_ms, S as f64 / 1e6);
    assert_eq!(d.full_range_ms, (0.0, 0.3));
    let labels: Vec<_> = d
        .lanes
        .iter()
        .map(|l| (l.label.as_str(), l.kind, l.total))
        .collect();
    assert_eq!(
        labels,
        [
            ("stream 2", LaneKind::Device, 5),
            ("stream 3", LaneKind::Device, 1),
            ("stream hccl", LaneKind::Device, 1),
            ("Python 100/101", LaneKind::Host, 2),
        ]
    );
    // One pixel = 1 µs: every kernel is ≥ 9.5 px wide, so each box is full (≥ 4 px) before
    // the next kernel arrives: touching [10,20)+[20,30) and the 0.5 µs gap stay apart.
    assert_eq!(
        boxes_us(&d, 0),
        [
            (10.0, 20.0, 1),
            (20.0, 30.0, 1),
            (30.5, 40.0, 1),
            (60.0, 70.0, 1),
            (200.0, 300.0, 1)
        ]
    );
    let b0 = &d.lanes[0].boxes;
    assert!(b0.busy.iter().all(|&b| b == 1.0));
    assert_eq!(d.names[b0.name[2] as usize], "k3");
    assert_eq!(b0.class, [0, 0, 0, 0, 1]);
    assert_eq!(d.lanes[2].boxes.class, [2]);
    assert_eq!(boxes_us(&d, 3), [(5.0, 12.0, 1), (12.0, 14.0, 1)]);
    assert_eq!(d.lanes[3].boxes.class, [HOST_CLASS, HOST_CLASS]);
    // One step band over [0, 300) µs.
    assert_eq!(d.steps.len(), 1);
    assert_eq!(
        (
            d.steps[0].step_id.as_str(),
            d.steps[0].start_ms,
            d.steps[0].end_ms
        ),
        ("ProfilerStep#1", 0.0, 0.3)
    );
    // Busy union: [10,30) [30.5,40) [60,70) [100,150) [200,300) = 189.5 µs.
    assert_eq!(d.steps[0].busy_union_ms, 0.1895);
    // Emitted windows: prelaunch [0,10); internal ≥ 50 µs: [150,200); globals [30,30.5),
    // [40,60), [70,100) (the global [150,200) repeats the internal one and is left out).
    let marks: Vec<_> = d
        .bubbles
        .iter()
        .map(|b| {
            (
                (b.start_ms * 1e4).round() / 10.0,
                (b.end_ms * 1e4).round() / 10.0,
                b.scope.as_str(),
                b.merged,
            )
        })
        .collect();
    assert_eq!(
        marks,
        [
            (0.0, 10.0, "prelaunch", 1),
            (30.0, 30.5, "global", 1),
            (40.0, 60.0, "global", 1),
            (70.0, 100.0, "global", 1),
            (150.0, 200.0, "step_internal", 1),
        ]
    );
    assert_eq!(d.bubbles[4].bubble_id, "ProfilerStep#1:step_internal:0");
    assert!(d.bubbles.iter().all(|b| !b.labels.is_empty()));
}

#[test]
fn coarser_pixels_merge_more_and_bubbles_keep_their_longest() {
    let (k, t, r) = rank();
    let (src, ix) = index(&k, &t, &r);
    // One pixel = 30 µs (boxes close at 120 µs).
    let d = build(&ix, src, 0, None, 10);
    assert_eq!(boxes_us(&d, 0), [(10.0, 70.0, 4), (200.0, 300.0, 1)]);
    assert_eq!(d.lanes[0].boxes.busy[0], (39.5f64 / 60.0) as f32);
    // Longest of the first box: k1, k2, k4 are 10 µs, k3 9.5 µs → k1 (the first).
    assert_eq!(d.names[d.lanes[0].boxes.name[0] as usize], "k1");
    // Host: [5,12) and [12,14) join (7 µs < 120 µs).
    assert_eq!(boxes_us(&d, 3), [(5.0, 14.0, 2)]);
    assert_eq!(d.lanes[3].boxes.busy[0], 1.0);
    let marks: Vec<_> = d
        .bubbles
        .iter()
        .map(|b| {
            (
                (b.start_ms * 1e4).round() / 10.0,
                (b.end_ms * 1e4).round() / 10.0,
                b.merged,
            )
        })
        .collect();
    // [0,10) [30,30.5) [40,60) [70,100) are each < 30 µs apart: one mark, the 30 µs one.
    assert_eq!(marks, [(70.0, 100.0, 4), (150.0, 200.0, 1)]);
}

#[test]
fn a_zoomed_window_keeps_items_reaching_into_it_and_nothing_ending_at_its_start() {
    let (k, t, r) = rank();
    let (src, ix) = index(&k, &t, &r);
    let d = build(&ix, src, 0, Some((0.025, 0.065)), 40);
    assert_eq!(d.x_range_ms, (0.025, 0.065));
    // [20,30) reaches in (unclipped), [30.5,40) and [60,70) start inside; all ≥ 4 px.
    assert_eq!(
        boxes_us(&d, 0),
        [(20.0, 30.0, 1), (30.5, 40.0, 1), (60.0, 70.0, 1)]
    );
    assert_eq!(d.lanes[0].in_window, 3);
    // Stream 3's [15,25) ends exactly at the window start: not drawn.
    assert!(d.lanes[1].boxes.start_ms.is_empty());
    assert!(d.lanes[2].boxes.start_ms.is_empty());
    let marks: Vec<_> = d.bubbles.iter().map(|b| b.scope.as_str()).collect();
    assert_eq!(marks, ["global", "global"]);
    // An invalid window falls back to everything (one pixel = 300 µs: one box).
    let all = build(&ix, src, 0, Some((1.0, f64::NAN)), 0);
    assert_eq!((all.x_range_ms, all.width_px), ((0.0, 0.3), 1));
    assert_eq!(boxes_us(&all, 0), [(10.0, 300.0, 5)]);
}

#[test]
fn item_at_finds_the_kernel_or_host_event_under_the_pointer() {
    let (k, t, r) = rank();
    let (src, ix) = index(&k, &t, &r);
    let hit = ix.item_at(src, 0, 0.035, 0.0).expect("k3");
    assert_eq!(
        (hit.name.as_str(), hit.stream.as_str(), hit.core.as_str()),
        ("k3", "2", "AI_VECTOR_CORE")
    );
    assert_eq!(
        (hit.kind, hit.class.as_str(), hit.source_row),
        (LaneKind::Device, "AI_CORE", 4)
    );
    assert_eq!(hit.start_us, "1000000030.500");
    assert_eq!((hit.start_ms, hit.dur_us), (0.0305, 9.5));
    assert_eq!(hit.shapes, "\"8,16\"");
    assert_eq!(hit.step_id.as_deref(), Some("ProfilerStep#1"));
    // 5 µs after k3's end: nothing within 1 µs; within 10 µs the nearer k3 (k4 is 15 µs away).
    assert!(ix.item_at(src, 0, 0.045, 0.001).is_none());
    assert_eq!(
        ix.item_at(src, 0, 0.045, 0.01).map(|h| h.name),
        Some("k3".to_string())
    );
    // At a shared boundary the kernel starting there wins (half-open).
    assert_eq!(
        ix.item_at(src, 0, 0.020, 0.0).map(|h| h.name),
        Some("k2".to_string())
    );
    let h = ix.item_at(src, 3, 0.006, 0.0).expect("host");
    assert_eq!(
        (
            h.name.as_str(),
            h.kind,
            h.op_type.as_str(),
            h.stream.as_str()
        ),
        ("aten::mm", LaneKind::Host, "cpu_op", "100/101")
    );
    assert_eq!(h.dur_us, 7.0);
    // The step marker is not an item of the host lane.
    assert!(ix.item_at(src, 3, 0.1, 0.0).is_none());
    assert!(ix.item_at(src, 9, 0.1, 1.0).is_none());
}

#[test]
fn a_rank_without_trace_or_kernels_still_builds() {
    let k = KernelTableBuilder::new().finish();
    let r = analyse(
        &RankInput {
            kernels: &k,
            trace: None,
            comm_ops: &[],
            step_trace: &[],
            info: CaptureInfo::default(),
        },
        &AnomalyConfig::spec_defaults(),
    );
    let src = TimelineSource {
        kernels: &k,
        trace: None,
        result: &r,
        runtime: "CANN",
    };
    let ix = TimelineIndex::new(src);
    let d = build(&ix, src, 0, None, 100);
    assert!(d.lanes.is_empty() && d.bubbles.is_empty());
    assert_eq!(d.full_range_ms, (0.0, 1.0));
    assert_eq!(us_text(-1), "-0.001");
    assert_eq!(us_text(1_736_408_883_686_740_710), "1736408883686740.710");
}

#[test]
fn search_finds_names_in_every_lane_in_time_order() {
    let (k, t, r) = rank();
    let (src, ix) = index(&k, &t, &r);
    let names =
        |d: &TimelineSearchDto| d.matches.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
    let d = ix.search(src, 7, "K", 100);
    assert_eq!((d.rank, d.total), (7, 5));
    assert_eq!(names(&d), vec!["k1", "k2", "k3", "k4", "k5"]);
    assert_eq!(d.matches[2].start_ms, 0.0305);
    // Host lane (3) and the comm lane (2), earliest first; the step marker is not an item.
    let d = ix.search(src, 0, "A", 100);
    assert_eq!(names(&d), vec!["aten::mm", "aten::add", "hcom_allReduce_0"]);
    assert_eq!(
        d.matches.iter().map(|m| m.lane).collect::<Vec<_>>(),
        vec![3, 3, 2]
    );
    // The limit keeps the earliest, the total counts all.
    let d = ix.search(src, 0, "a", 2);
    assert_eq!(
        (d.total, names(&d)),
        (3, vec!["aten::mm".to_string(), "aten::add".to_string()])
    );
    assert_eq!(ix.search(src, 0, "", 100).total, 0);
    assert_eq!(ix.search(src, 0, "ProfilerStep", 100).total, 0);
    assert_eq!(ix.search(src, 0, "allreduce_0x", 100).total, 0);
}
