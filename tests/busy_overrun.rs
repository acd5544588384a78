//! Decision: a kernel whose duration runs far past later kernels of its stream (a
//! stall artefact) is clipped at the next kernel's start on that stream in the busy union
//! and the structure walls; the raw figure and the overrun are reported beside it (JSON,
//! Markdown, problem). Streams that are unknown are never clipped.

mod anomaly_support;

use anomaly_support::*;
use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::engine::export::anomaly::write_json;

/// Step 1 = [100, 1100) µs by markers; `stall` (1600 ms) starts it on stream 2.
fn stall_rank(stream: &str) -> proflens::engine::read::RankAnalysis {
    let k = kernel_csv(&[
        K("stall", "AI_CORE", "100", "1600000", "0", stream), // line 2
        K("k2", "AI_CORE", "300", "100", "0", stream),        // line 3
        K("k3", "AI_CORE", "600", "100", "0", stream),        // line 4
        K("k4", "AI_CORE", "1200", "50", "0", stream),        // line 5
    ]);
    let tv = trace(&[(1, 100.0, 1000.0), (2, 1100.0, 1000.0)], &[]);
    run_rank(k, Some(tv), &AnomalyConfig::spec_defaults())
}

#[test]
fn an_overrunning_kernel_is_clipped_and_reported_and_shares_stay_at_most_100_percent() {
    let r = stall_rank("2");
    let s = &r.result.steps[0];
    assert_eq!((s.window.start_ns, s.window.end_ns), (100_000, 1_100_000));
    // [100,300) + [300,400) + [600,700): the stall counts up to k2's start.
    assert_eq!(s.metrics.busy_ns, 400_000);
    assert!(s.metrics.busy_ns <= s.metrics.service_ns);
    for st in &s.segmentation.structures {
        let share = st.perspectives.wall_ns as f64 / s.metrics.service_ns as f64;
        assert!(share <= 1.0, "structure share {share}");
        assert!(st.perspectives.busy_ns <= s.metrics.service_ns);
    }
    assert_eq!(s.perspectives.wall_ns, 600_000);
    let p: Vec<_> = r
        .problems
        .kept()
        .iter()
        .filter(|p| p.code == "ANOM-KD-012")
        .collect();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].at.line, Some(2));
    assert_eq!(
        p[0].message,
        "kernel `stall` (AI_CORE, stream 2) runs 1599800.000 µs past the start of the next kernel on its stream (`k2`, line 3): kernels of one stream run one after another, so the busy union counts it only up to that start (raw end 1600100.000 µs)"
    );
    let cfg = AnomalyConfig::spec_defaults();
    let mut json = Vec::new();
    write_json(&mut json, std::slice::from_ref(&r), &cfg).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let step = &v[0]["steps"][0];
    assert_eq!(step["device_busy_union_ms"], 0.4);
    assert_eq!(step["device_busy_union_raw_ms"], 1.0);
    let o = &v[0]["proflens"]["kernel_overruns"][0];
    assert_eq!(o["row"], 2);
    assert_eq!(o["name"], "stall");
    assert_eq!(o["task_type"], "AI_CORE");
    assert_eq!(o["stream"], "2");
    assert_eq!(o["clipped_at_us"], 300.0);
    assert_eq!(o["overrun_us"], 1_599_800.0);
    assert_eq!(o["next_row"], 3);
    let md =
        proflens::report::anomaly_md::render(&r.kernels, &r.result, &r.meta, &[], &[], None, &cfg);
    assert!(md.contains("| 2 | `stall` | AI_CORE | 2 | 100.000 | 1600100.000 | 300.000 | 1599800.000 | `k2` (3) |"), "{md}");
    assert!(
        md.contains("| `ProfilerStep#1` | 0.400 | 1.000 | 1.000 |"),
        "{md}"
    );
}

#[test]
fn without_a_known_stream_nothing_is_clipped() {
    // Level0-like: no stream id and no trace device lane to join → `unknown`, kept as is.
    let r = stall_rank("");
    let s = &r.result.steps[0];
    assert_eq!(r.kernels.stream_of(0), "unknown");
    assert_eq!(s.metrics.busy_ns, 1_000_000);
    assert!(r.kernels.overruns().is_empty());
    assert!(r.problems.kept().iter().all(|p| p.code != "ANOM-KD-012"));
    let cfg = AnomalyConfig::spec_defaults();
    let mut json = Vec::new();
    write_json(&mut json, std::slice::from_ref(&r), &cfg).unwrap();
    let text = String::from_utf8(json).unwrap();
    assert!(!text.contains("kernel_overruns") && !text.contains("device_busy_union_raw_ms"));
}
