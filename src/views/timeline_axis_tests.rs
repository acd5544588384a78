//! Exact ticks, view clamping and hit-testing.

use super::*;

fn labels(v: &[Tick]) -> Vec<&str> {
    v.iter().map(|t| t.label.as_str()).collect()
}

#[test]
fn ticks_in_ms_and_us_with_the_decimals_the_step_needs() {
    // 150 ms over 1500 px, ≥ 100 px apart: raw step 10 ms.
    let t = ticks(0.0, 150.0, 1500.0, 100.0);
    assert_eq!(
        labels(&t),
        [
            "0 ms", "10 ms", "20 ms", "30 ms", "40 ms", "50 ms", "60 ms", "70 ms", "80 ms",
            "90 ms", "100 ms", "110 ms", "120 ms", "130 ms", "140 ms", "150 ms"
        ]
    );
    // 2.6 ms over 800 px, ≥ 100 px: raw 0.325 → 0.5 ms steps, one decimal.
    let t = ticks(10.2, 12.8, 800.0, 100.0);
    assert_eq!(
        labels(&t),
        ["10.5 ms", "11.0 ms", "11.5 ms", "12.0 ms", "12.5 ms"]
    );
    assert_eq!(t[0].t_ms, 10.5);
    // Near the origin and below 1 ms: microseconds.
    let t = ticks(0.0, 0.4, 400.0, 100.0);
    assert_eq!(labels(&t), ["0 µs", "100 µs", "200 µs", "300 µs", "400 µs"]);
    // Deep zoom far from the origin: 2 µs steps in ms with 3 decimals.
    let t = ticks(100.0005, 100.0085, 400.0, 100.0);
    assert_eq!(
        labels(&t),
        ["100.002 ms", "100.004 ms", "100.006 ms", "100.008 ms"]
    );
    // Sub-µs steps switch to µs with decimals; no "-0".
    let t = ticks(-0.0002, 0.0002, 400.0, 100.0);
    assert_eq!(
        labels(&t),
        ["-0.2 µs", "-0.1 µs", "0.0 µs", "0.1 µs", "0.2 µs"]
    );
    assert!(ticks(1.0, 1.0, 100.0, 10.0).is_empty());
    assert!(ticks(0.0, f64::INFINITY, 100.0, 10.0).is_empty());
}

#[test]
fn zoom_keeps_the_pointer_time_and_views_stay_inside_the_data() {
    let full = (0.0, 100.0);
    assert_eq!(zoom((0.0, 100.0), full, 50.0, 0.5), (25.0, 75.0));
    assert_eq!(zoom((0.0, 100.0), full, 0.0, 0.5), (0.0, 50.0));
    // Zooming out past everything gives the full range.
    assert_eq!(zoom((25.0, 75.0), full, 50.0, 4.0), full);
    // Zoom out near an edge shifts back inside.
    assert_eq!(zoom((0.0, 20.0), full, 5.0, 2.0), (0.0, 40.0));
    assert_eq!(pan((10.0, 20.0), full, 5.0), (15.0, 25.0));
    assert_eq!(pan((10.0, 20.0), full, -50.0), (0.0, 10.0));
    assert_eq!(pan((80.0, 90.0), full, 50.0), (90.0, 100.0));
    // Never narrower than 1 ns.
    let v = zoom((50.0, 50.000001), full, 50.0, 0.001);
    assert!(((v.1 - v.0) - MIN_SPAN_MS).abs() < 1e-12, "{v:?}");
    assert_eq!(clamp_view((f64::NAN, 1.0), full), full);
}

#[test]
fn lane_layout_and_hit_tests() {
    let l = LaneLayout {
        top: 30.0,
        lane_h: 20.0,
        lanes: 3,
    };
    assert_eq!(l.lane_at(29.9), None);
    assert_eq!(l.lane_at(30.0), Some(0));
    assert_eq!(l.lane_at(69.9), Some(1));
    assert_eq!(l.lane_at(90.0), None);
    assert_eq!(l.bottom(), 90.0);
    let b = LaneBoxesDto {
        start_ms: vec![1.0, 5.0, 9.0],
        end_ms: vec![2.0, 6.0, 9.5],
        count: vec![1, 3, 1],
        busy: vec![1.0, 0.5, 1.0],
        class: vec![0, 0, 2],
        name: vec![0, 1, 2],
    };
    assert_eq!(box_at(&b, 5.5, 0.0), Some(1));
    assert_eq!(box_at(&b, 3.0, 0.5), None);
    assert_eq!(box_at(&b, 3.0, 1.0), Some(0));
    // 1.6 ms after box 1, 1.4 ms before box 2: the nearer one.
    assert_eq!(box_at(&b, 7.6, 2.0), Some(2));
    assert_eq!(box_at(&b, 100.0, 1.0), None);
    let mark = |s: f64, e: f64| BubbleMarkDto {
        index: 0,
        bubble_id: String::new(),
        scope: "step_internal".into(),
        start_ms: s,
        end_ms: e,
        labels: vec!["possible_comm_wait".into()],
        significant: true,
        merged: 1,
    };
    let m = [mark(1.0, 2.0), mark(3.0, 4.0)];
    assert_eq!(bubble_at(&m, 3.5, 0.0), Some(1));
    assert_eq!(bubble_at(&m, 2.4, 0.5), Some(0));
    assert_eq!(bubble_at(&m, 2.6, 0.5), Some(1));
    assert_eq!(bubble_at(&m, 2.5, 0.1), None);
    assert_eq!(label_color(&m[0].labels), "#9b4dca");
    assert_eq!(label_color(&[]), "#8a8a8a");
}
