//! Tests of the host evidence (anomaly.md §5.7–5.8).

use super::*;

/// The class scan (one running max per block of events) and the density count (the
/// general class plus the other kept events) give what a scan of every event gives.
#[test]
fn class_scan_and_density_match_every_event() {
    let mut t = HostEventTable::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m) as i64
    };
    for _ in 0..700 {
        let long = next(10) == 0;
        let start = next(100_000);
        let dur = 1 + next(if long { 20_000 } else { 500 });
        let cat = ["cpu_op", "python_function", "cuda_runtime", "Trace"][next(4) as usize];
        let name = [
            "aten::mm",
            "aten::copy_",
            "cudaLaunchKernel",
            "c10d::allreduce",
        ][next(4) as usize];
        let lane = [Lane::Python, Lane::Cann, Lane::OtherHost][next(3) as usize];
        t.push(name, cat, next(3) as u32, lane, start, dur);
    }
    t.finish();
    for compat in [Compat::Rulebook, Compat::Script] {
        let cfg = AnomalyConfig {
            compat,
            ..Default::default()
        };
        let ix = build_index(&t, &cfg, None);
        let events = t.events();
        let mut kept = 0;
        for _ in 0..300 {
            let from = next(110_000) - 5_000;
            let w = Interval::new(from, from + 1 + next(3_000));
            for (class, leaf_only) in [(&ix.general, true), (&ix.sync, false), (&ix.comm, false)] {
                let long = Some(1_000);
                let mut got = class.clipped((events, ix.leaf.as_slice()), w, long, leaf_only);
                let mut want: Vec<Interval> = class
                    .ev
                    .iter()
                    .map(|&i| i as usize)
                    .filter(|&i| events[i].dur_ns <= 1_000 && (!leaf_only || ix.leaf[i]))
                    .filter_map(|i| Interval::new(events[i].start_ns, events[i].end_ns()).clip(w))
                    .collect();
                got.sort_unstable();
                want.sort_unstable();
                assert_eq!(got, want);
            }
            let want = events
                .iter()
                .filter(|e| {
                    e.start_ns >= w.start_ns && e.start_ns < w.end_ns && kept_in_any(&ix, events, e)
                })
                .count();
            assert_eq!(ix.events_starting_in(w), want);
            kept += want;
        }
        assert!(kept > 0);
        assert_eq!(
            ix.kept_events,
            events
                .iter()
                .filter(|e| kept_in_any(&ix, events, e))
                .count()
        );
    }
}

fn kept_in_any(ix: &HostIndex<'_>, events: &[HostEvent], e: &HostEvent) -> bool {
    let i = events.iter().position(|x| std::ptr::eq(x, e)).unwrap() as u32;
    [&ix.general, &ix.sync, &ix.comm]
        .iter()
        .any(|c| c.ev.contains(&i))
}

fn ev(host: Option<f64>, sync: f64, comm: f64, hint: Option<f64>) -> Evidence {
    Evidence {
        host,
        sync: Some(sync),
        comm: Some(comm),
        hint,
        input: None,
        h2d_flow_count: 0,
    }
}

#[test]
fn spec_13_5_label_cases() {
    let c = AnomalyConfig::spec_defaults();
    assert_eq!(
        labels(&ev(Some(0.01), 0.25, 0.3, None), false, &c),
        [
            Label::SyncOrH2d,
            Label::CommWait,
            Label::UntracedHostBlocking
        ]
    );
    assert_eq!(
        labels(&ev(Some(0.07), 0.0, 0.0, None), false, &c),
        [Label::InsufficientEvidence]
    );
    assert_eq!(
        labels(&ev(Some(0.07), 0.0, 0.0, Some(1.1)), false, &c),
        [Label::PythonSerializationOrLock]
    );
    // Zero-length window: ratios null → counts as 0 → untraced.
    let z = Evidence::default();
    assert_eq!(labels(&z, false, &c), [Label::UntracedHostBlocking]);
    assert_eq!(labels(&z, true, &c), [Label::InsufficientEvidence]);
}

#[test]
fn the_input_class_adds_no_label() {
    // §5.8's labels whatever the DataLoader's overlap: the input class is a finding beside
    // them (the bubble detail, the summary's evidence), never a label.
    let c = AnomalyConfig::spec_defaults();
    for (host, sync, hint) in [(0.09, 0.15, Some(1.0)), (0.5, 0.3, None), (0.01, 0.0, None)] {
        for boundary in [false, true] {
            let plain = ev(Some(host), sync, 0.0, hint);
            let under = Evidence {
                input: Some(0.99),
                ..plain.clone()
            };
            assert_eq!(labels(&under, boundary, &c), labels(&plain, boundary, &c));
        }
    }
    assert_eq!(
        labels(
            &Evidence {
                input: Some(0.99),
                ..ev(Some(0.09), 0.15, 0.0, Some(1.0))
            },
            false,
            &c
        ),
        [Label::PythonSerializationOrLock]
    );
}

#[test]
fn label_thresholds_below_at_above() {
    let c = AnomalyConfig::spec_defaults();
    // sync 0.19 / 0.20 / 0.21 with host 0.5
    assert!(!labels(&ev(Some(0.5), 0.19, 0.0, None), false, &c).contains(&Label::SyncOrH2d));
    assert!(labels(&ev(Some(0.5), 0.20, 0.0, None), false, &c).contains(&Label::SyncOrH2d));
    assert!(labels(&ev(Some(0.5), 0.21, 0.0, None), false, &c).contains(&Label::SyncOrH2d));
    // host 0.0499 / 0.05: untraced below only; 0.0999 / 0.10 launch lag at and above.
    assert_eq!(
        labels(&ev(Some(0.0499), 0.0, 0.0, None), false, &c),
        [Label::UntracedHostBlocking]
    );
    assert_eq!(
        labels(&ev(Some(0.05), 0.0, 0.0, None), false, &c),
        [Label::InsufficientEvidence]
    );
    assert_eq!(
        labels(&ev(Some(0.0999), 0.0, 0.0, None), false, &c),
        [Label::InsufficientEvidence]
    );
    assert_eq!(
        labels(&ev(Some(0.10), 0.0, 0.0, None), false, &c),
        [Label::HostLaunchLag]
    );
    // hint 1.2 is not < 1.2
    assert_eq!(
        labels(&ev(Some(0.07), 0.0, 0.0, Some(1.2)), false, &c),
        [Label::InsufficientEvidence]
    );
}
