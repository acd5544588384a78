//! Rules of anomaly.md checked just below, at and just above their thresholds through the
//! whole pipeline, on synthetic rank folders built to have known answers ("rules
//! that depart from anomaly.md"): §5.7.1 case-insensitive exact host-op names, §5.6 the
//! dominant group's top 5 with stable tie-breaks, §5.11.1 the "local large bubble" row,
//! §5.10.5 the order of `dominant_anomaly_tags`, §9 host events per 100 kernels counted in
//! the dominant group's windows.

mod engine_support;

mod anomaly_support;

use anomaly_support::*;
use proflens::analysis::anomaly::tags::Tag;
use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::analysis::host_evidence::Label;
use proflens::engine::read::RankAnalysis;

fn rb() -> AnomalyConfig {
    AnomalyConfig::spec_defaults()
}

type Row = (String, String, String, String, String, String);

// ---------------------------------------------------------------- §5.7.1

/// One 10 ms marker step with a 2 ms bubble [4, 6) ms and one host event `name` (cpu_op)
/// starting at the bubble start and covering `cover_us` of it. Returns the bubble's labels.
fn host_op_labels(name: &str, cover_us: f64, cfg: &AnomalyConfig) -> Vec<Label> {
    let k = csv_owned(&[ai("a", 0.0, 4000.0), ai("b", 6000.0, 4000.0)]);
    let ev = [host(name, "cpu_op", 4000.0, cover_us, 1)];
    let r = run_rank(k, Some(trace(&[(1, 0.0, 10_000.0)], &ev)), cfg);
    let b: Vec<_> = r
        .result
        .bubbles
        .iter()
        .filter(|b| b.window.scope.as_str() == "step_internal")
        .collect();
    assert_eq!(b.len(), 1);
    b[0].labels.clone()
}

#[test]
fn exact_host_op_names_match_case_insensitively() {
    let c = rb();
    for name in [
        "aten::to",
        "ATEN::TO",
        "Aten::To",
        "ATEN::_TO_COPY",
        "aten::COPY_",
    ] {
        assert_eq!(
            host_op_labels(name, 2000.0, &c),
            [Label::SyncOrH2d],
            "{name}"
        );
    }
    for name in ["ATEN::ITEM", "Aten::_Local_Scalar_Dense"] {
        assert_eq!(
            host_op_labels(name, 2000.0, &c),
            [Label::SyncOrH2d],
            "{name}"
        );
    }
    // Exact means exact: a longer or shorter name is a general host op only.
    for name in ["aten::top", "ATEN::T", "aten::to_"] {
        assert_eq!(
            host_op_labels(name, 2000.0, &c),
            [Label::HostLaunchLag],
            "{name}"
        );
    }
    // Script mode: the skill's shorter list, still case-insensitive.
    let sc = AnomalyConfig::script_compatible();
    assert_eq!(
        host_op_labels("ATEN::COPY_", 2000.0, &sc),
        [Label::SyncOrH2d]
    );
    assert_eq!(
        host_op_labels("ATEN::ITEM", 2000.0, &sc),
        [Label::HostLaunchLag]
    );
}

#[test]
fn upper_case_sync_op_at_the_overlap_threshold() {
    // sync_marker_overlap_ratio 0.19 / 0.20 / 0.21 of the 2 ms bubble (rule 1: ≥ 0.20).
    let c = rb();
    assert_eq!(
        host_op_labels("ATEN::TO", 380.0, &c),
        [Label::HostLaunchLag]
    );
    assert_eq!(host_op_labels("ATEN::TO", 400.0, &c), [Label::SyncOrH2d]);
    assert_eq!(host_op_labels("ATEN::TO", 420.0, &c), [Label::SyncOrH2d]);
}

// ---------------------------------------------------------------- §5.6

/// Marker steps of 10 ms (same kernel names when the bubble counts agree, so one group), each
/// made of kernels of `kernel_us` separated by the given internal bubbles (µs), the last
/// kernel filling the step.
fn steps_with_bubbles(kernel_us: f64, bubbles_us: &[&[f64]]) -> Vec<Row> {
    let mut rows = Vec::new();
    for (si, bs) in bubbles_us.iter().enumerate() {
        let s0 = si as f64 * 10_000.0;
        let mut t = s0;
        for (j, b) in bs.iter().enumerate() {
            rows.push(ai(&format!("k{j}"), t, kernel_us));
            t += kernel_us + b;
        }
        rows.push(ai("last", t, s0 + 10_000.0 - t));
    }
    rows
}

fn significant_ids(r: &RankAnalysis) -> Vec<String> {
    r.result
        .bubbles
        .iter()
        .filter(|b| b.window.scope.as_str() != "global" && b.window.significant)
        .map(|b| b.window.bubble_id.clone())
        .collect()
}

fn markers(n: u32) -> Vec<(u32, f64, f64)> {
    (0..n)
        .map(|i| (i + 1, i as f64 * 10_000.0, 10_000.0))
        .collect()
}

#[test]
fn dominant_group_top_five_is_five_windows_even_with_ties() {
    // Two steps of six 100 µs bubbles each (below 1 ms, so only the top-5 rules apply).
    // Dominant group's top 5 = the first five in output order; each step's top 5 = its first
    // five. The sixth of each step is significant under no rule.
    let b = [100.0; 6];
    let r = run_rank(
        csv_owned(&steps_with_bubbles(1000.0, &[&b, &b])),
        Some(trace(&markers(2), &[])),
        &rb(),
    );
    assert_eq!(r.result.groups.len(), 1);
    let ids = significant_ids(&r);
    let want: Vec<String> = (1..=2)
        .flat_map(|s| (0..5).map(move |o| format!("ProfilerStep#{s}:step_internal:{o}")))
        .collect();
    assert_eq!(ids, want);
}

#[test]
fn dominant_group_top_five_below_at_and_above_the_fifth_length() {
    // Step 1: 101, 100, 100, 100, 100, 99 µs; step 2: 100 ×6. Group order by length, ties
    // in output order: 101 (s1:0), 100 (s1:1..4) → top 5 = all of step 1 but its 99 µs one.
    // Per step: step 1's top 5 are the same; step 2's first five. The 99 µs window (below the
    // fifth length) and step 2's sixth 100 µs window (at the fifth length, but behind five
    // in order) are not significant; the 101 µs one (above) is.
    let r = run_rank(
        csv_owned(&steps_with_bubbles(
            1000.0,
            &[&[101.0, 100.0, 100.0, 100.0, 100.0, 99.0], &[100.0; 6]],
        )),
        Some(trace(&markers(2), &[])),
        &rb(),
    );
    assert_eq!(r.result.groups.len(), 1);
    let ids = significant_ids(&r);
    let mut want: Vec<String> = (0..5)
        .map(|o| format!("ProfilerStep#1:step_internal:{o}"))
        .collect();
    want.extend((0..5).map(|o| format!("ProfilerStep#2:step_internal:{o}")));
    assert_eq!(ids, want);
    // The duration floor is a separate rule: step 2's sixth bubble (sixth in its step and
    // behind step 1's five longer ones in the group) is significant only at or above
    // max(1 ms, 0.01 × 10 ms).
    for (last, sig) in [(999.0, false), (1000.0, true), (1001.0, true)] {
        let r = run_rank(
            csv_owned(&steps_with_bubbles(
                300.0,
                &[
                    &[1500.0, 1500.0, 1500.0, 1200.0, 1200.0, 1100.0],
                    &[1000.0, 1000.0, 1000.0, 1000.0, 1000.0, last],
                ],
            )),
            Some(trace(&markers(2), &[])),
            &rb(),
        );
        assert_eq!(r.result.groups.len(), 1);
        let sixth = "ProfilerStep#2:step_internal:5".to_string();
        assert_eq!(significant_ids(&r).contains(&sixth), sig, "{last}");
    }
}

// ---------------------------------------------------------------- §5.11.1

/// Five 10 ms steps (one group); the steps listed in `heavy` have an internal bubble of
/// `big_us`, the others one of 500 µs, each after kernel "x" at 3 ms (G = 1 ms).
fn local_bubbles(heavy: &[usize], big_us: f64) -> RankAnalysis {
    let mut rows = Vec::new();
    for i in 0..5 {
        let s = i as f64 * 10_000.0;
        let g = if heavy.contains(&i) { big_us } else { 500.0 };
        rows.push(ai("x", s, 3000.0));
        rows.push(ai("y", s + 3000.0 + g, 7000.0 - g));
    }
    run_rank(csv_owned(&rows), Some(trace(&markers(5), &[])), &rb())
}

#[test]
fn a_local_large_bubble_makes_a_medium_hidden_issue() {
    // 2 of 5 steps with a bubble exactly at G: INTERNAL_BUBBLE_HEAVY is on those steps but
    // not dominant (2·2 < 5), underfeed avg 0.07 < 0.30 → row 2: true, medium.
    let r = local_bubbles(&[1, 3], 1000.0);
    let g = &r.result.groups[0];
    assert_eq!(r.result.groups.len(), 1);
    assert_eq!(g.steps.len(), 5);
    assert!(!g.dominant_anomaly_tags.iter().any(|t| t.is_heavy()));
    assert!(g.hidden_issue_present);
    assert_eq!(g.severity.severity_str(), "medium");
    assert_eq!(g.host_risk_level.risk_str(), "low");
    // Just below G (999 µs): no step is heavy → row 1: false, none.
    let r = local_bubbles(&[1, 3], 999.0);
    let g = &r.result.groups[0];
    assert!(!g.hidden_issue_present);
    assert_eq!(g.severity.severity_str(), "none");
    // Above: 3 of 5 heavy → dominant → underfeed high; every step has its bubble after "x"
    // (same signature) → strong periodicity → high.
    let r = local_bubbles(&[1, 2, 3], 1000.0);
    let g = &r.result.groups[0];
    assert!(g.dominant_anomaly_tags.contains(&Tag::InternalBubbleHeavy));
    assert!(g.recurring_bubble_pattern);
    assert!(g.hidden_issue_present);
    assert_eq!(g.severity.severity_str(), "high");
}

// ---------------------------------------------------------------- §5.10.5

/// Group g0: two 20 ms steps of kernels "a","b" whose first kernel starts 3 ms after the
/// marker (PRELAUNCH_GAP_HEAVY, G = 2 ms; underfeed 0.15), the second also with a 2 ms tail
/// (TAIL_GAP_HEAVY on one step of two: dominant). Host events (tid 1) cover `cover_us` of
/// each prelaunch window; the group's significant windows are the two 3 ms prelaunch windows
/// and the 2 ms tail, so `wmean_host = 2 × cover_us / 8000`. Group g1: one 10 ms step of kernels "c","d" with a 5 ms bubble
/// covered by a host op, so the rank-wide host coverage is not sparse.
fn dominant_tag_order(cover_us: f64) -> RankAnalysis {
    let rows = vec![
        ai("a", 3000.0, 8000.0),
        ai("b", 11_000.0, 9000.0),
        ai("a", 23_000.0, 8000.0),
        ai("b", 31_000.0, 7000.0),
        ai("c", 40_000.0, 2500.0),
        ai("d", 47_500.0, 2500.0),
    ];
    let mut ev = vec![host("aten::mm", "cpu_op", 42_500.0, 5000.0, 2)];
    for s in [0.0, 20_000.0] {
        ev.push(host("aten::add", "cpu_op", s, cover_us, 1));
    }
    let m = [
        (1, 0.0, 20_000.0),
        (2, 20_000.0, 20_000.0),
        (3, 40_000.0, 10_000.0),
    ];
    run_rank(csv_owned(&rows), Some(trace(&m, &ev)), &rb())
}

#[test]
fn untraced_host_risk_takes_its_place_in_the_dominant_tag_order() {
    // wmean_host 0.04975 < 0.05 (199 µs): §5.11.3 row 3 adds UNTRACED_HOST_BLOCKING_RISK
    // (a group tag, frequency = group size 2). Order: frequency, emission order, name:
    // DEVICE_IDLE (2), PRELAUNCH (2), UNTRACED (2), TAIL (1); PARTIAL_CAPTURE_BOUNDARY is
    // appended by §5.11.1 only when the largest global gap is at the boundary (it is not).
    let r = dominant_tag_order(199.0);
    assert_eq!(r.result.groups.len(), 2);
    let g = &r.result.groups[0];
    assert_eq!(g.steps, [0, 1]);
    assert_eq!(
        g.dominant_anomaly_tags,
        [
            Tag::DeviceIdleGapHeavy,
            Tag::PrelaunchGapHeavy,
            Tag::UntracedHostBlockingRisk,
            Tag::TailGapHeavy,
        ]
    );
    assert_eq!(g.host_risk_level.risk_str(), "medium");
    assert!(r.result.requires_host_followup);
    // At 0.05 (200 µs) and above (201 µs): the row does not fire, no UNTRACED anywhere.
    for cover in [200.0, 201.0] {
        let r = dominant_tag_order(cover);
        let g = &r.result.groups[0];
        assert_eq!(
            g.dominant_anomaly_tags,
            [
                Tag::DeviceIdleGapHeavy,
                Tag::PrelaunchGapHeavy,
                Tag::TailGapHeavy,
            ],
            "{cover}"
        );
        assert!(!r.result.requires_host_followup, "{cover}");
    }
}

// ---------------------------------------------------------------- §9

/// One marker step of `n` kernels of 100 µs with a 1 ms bubble after the first, covered by a
/// host op; `inside` host ops in total start inside the step window, `outside` before it.
fn density(n: usize, inside: usize, outside: usize) -> RankAnalysis {
    let mut rows = vec![ai("k", 1000.0, 100.0)];
    let mut t = 1000.0 + 100.0 + 1000.0;
    for _ in 1..n {
        rows.push(ai("k", t, 100.0));
        t += 100.0;
    }
    let mut ev = vec![host("aten::mm", "cpu_op", 1100.0, 1000.0, 1)];
    for j in 1..inside {
        ev.push(host(
            "aten::add",
            "cpu_op",
            2100.0 + j as f64 * 200.0,
            50.0,
            2,
        ));
    }
    for j in 0..outside {
        ev.push(host("aten::add", "cpu_op", j as f64 * 100.0, 50.0, 2));
    }
    run_rank(
        csv_owned(&rows),
        Some(trace(&[(1, 1000.0, t - 1000.0)], &ev)),
        &rb(),
    )
}

fn sparse(r: &RankAnalysis) -> bool {
    let lim = r
        .result
        .limitations
        .iter()
        .any(|l| l.starts_with("sparse host evidence"));
    let top = r.result.top_tags.contains(&Tag::UntracedHostBlockingRisk);
    assert_eq!(lim, top);
    assert_eq!(lim, r.result.requires_host_followup);
    assert_eq!(
        lim,
        r.result.groups[0]
            .group_tags
            .contains(&Tag::UntracedHostBlockingRisk)
    );
    lim
}

#[test]
fn host_density_counts_events_in_the_dominant_windows_only() {
    // The bubble is fully covered (coverage 1.0), so only the density rule can fire.
    let r = density(200, 2, 0);
    let significant_step_windows = r
        .result
        .bubbles
        .iter()
        .filter(|b| b.window.significant && b.window.scope.as_str() != "global")
        .count();
    assert_eq!(significant_step_windows, 1);
    // 2 events per 199 / 200 / 201 kernels: 2 < 2.01 only for 201.
    assert!(!sparse(&density(199, 2, 0)));
    assert!(!sparse(&density(200, 2, 0)));
    assert!(sparse(&density(201, 2, 0)));
    // Events before the first step do not count: 1 inside + 5 outside per 200 kernels.
    assert!(sparse(&density(200, 1, 5)));
    assert!(!sparse(&density(200, 2, 5)));
}

// ---------------------------------------------------------------- §11.7, §0.4

#[test]
fn stream_overlaps_are_listed_largest_first_every_run() {
    // The msprof-analyze compute_advice kernel table: stream 17 overlaps streams 16 (42 %)
    // and hccl (34 %). The list came from a HashMap walk, so its order changed between runs.
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/ascend/Ascend__msprof-analyze/test/ut/advisor/advisor_backend/compute_advice"
    );
    let (opener, files) =
        proflens::cli::fs_opener::FsOpener::walk(std::path::Path::new(dir)).expect("fixture");
    let inv = proflens::ingest::inventory::Inventory::from_paths(&files);
    let ranks = engine_support::anomaly_run(&inv, &opener, &rb(), &mut |_| {
        std::ops::ControlFlow::Continue(())
    })
    .unwrap()
    .0;
    for _ in 0..8 {
        let a = proflens::analysis::architecture::analyse(&ranks[0].kernels, &rb());
        let s17 = a
            .streams
            .iter()
            .find(|s| s.stream == "17")
            .expect("stream 17");
        let names: Vec<&str> = s17.overlaps_with.iter().map(|o| o.0.as_str()).collect();
        assert_eq!(names, ["16", "hccl"]);
        assert!(s17.overlaps_with[0].1 > s17.overlaps_with[1].1);
    }
}
