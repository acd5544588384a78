use super::*;
use crate::engine::export::cluster::reduce::Reducer;
use crate::engine::synth::XorShift;
use crate::parse::json_cut::tests::Chunks;
use crate::parse::json_cut::MAX_PIECE;
use crate::protocol::cluster::{
    AnomalySummary, CommOpTime, CommSummary, ProblemCounts, ProblemSeverity, ProblemSummary,
    RankStatus, RankSummary, RunInfo, StepSummary, TargetKind,
};

fn read(text: &[u8], sizes: Vec<usize>) -> Result<ClusterSummary, CutError> {
    let chunk = sizes[0];
    let mut src = Chunks { text, sizes, k: 0 };
    summary(&mut Cutter::with_chunk(&mut src, MAX_PIECE, chunk))
}

const TEXTS: [&str; 5] = [
    "plain",
    "a \"quoted\" \\ path",
    "é and 😀",
    "tab\tnew\nline",
    "",
];

fn rank(r: u64, rng: &mut XorShift) -> RankSummary {
    let text = |rng: &mut XorShift| TEXTS[(rng.next_u64() % 5) as usize].to_string();
    let mut s = RankSummary::new(
        format!("/run/{}/rank{r}_ascend_pt", text(rng)),
        TargetKind::Ascend,
        format!("/run/rank{r}_ascend_pt"),
    );
    s.rank_id = Some(r as i64);
    s.role = Some(text(rng));
    s.status = RankStatus::Ok;
    s.analysis_s = (rng.next_u64() % 1000) as f64 / 7.0;
    s.steps = (0..1 + rng.next_u64() % 4)
        .map(|k| StepSummary {
            step_id: format!("ProfilerStep#{k}"),
            service_ms: 100.0 + (rng.next_u64() % 10_000) as f64 / 3.0,
            device_busy_union_ms: 75.125,
            underfeed_ms: 1e-7,
            underfeed_ratio: 0.25,
            prelaunch_gap_ms: 2.0,
            tail_gap_ms: 0.5,
            internal_bubble_total_ms: 4.0,
            largest_internal_bubble_ms: 1.0,
            bubble_count: rng.next_u64() % 9,
            total_kernel_count: 100,
            kernel_duration_sum_ms: 12345.678,
            tags: vec![text(rng)],
            labels: vec![],
        })
        .collect();
    s.anomaly = Some(AnomalySummary {
        step_count: s.steps.len() as u64,
        service_ms_avg: s.steps[0].service_ms,
        busy_union_ms_avg: 75.125,
        underfeed_ratio_avg: 0.25,
        comm_total_ms: 3.0,
        comm_wait_ratio_weighted: (r % 2 == 0).then_some(0.125),
        bubble_count_avg: 2.5,
        dominant_idle_pattern: "internal_bubble".into(),
        dominant_anomaly_tags: vec![text(rng)],
    });
    s.problems = vec![ProblemSummary {
        severity: ProblemSeverity::Warning,
        code: "ANOM-TV-001".into(),
        file: text(rng),
        location: "byte 4096".into(),
        message: text(rng),
    }];
    s.problem_counts = ProblemCounts {
        errors: 0,
        warnings: 1,
    };
    s.comm = Some(CommSummary {
        n_ops: 2,
        elapse_ms: 1.5,
        transit_ms: 1.0,
        wait_ms: 0.25,
        sync_ms: 0.125,
        idle_ms: 0.0,
        wait_ratio: 0.2,
        sync_ratio: 0.1,
        ops: (0..2)
            .map(|k| CommOpTime {
                group: "g1".into(),
                op: format!("hcom_allReduce__{k}"),
                start_us: 1.0e6 + k as f64 * 10.0 + r as f64 * ((rng.next_u64() % 4) as f64),
                elapse_ms: 1.0 + (r % 3) as f64,
                data_size: Some(1 << 20),
            })
            .collect(),
        ops_dropped: 0,
    });
    s
}

fn cluster(n: u64, seed: u64) -> ClusterSummary {
    let mut rng = XorShift(seed);
    let mut red = Reducer::new();
    for r in 0..n {
        red.push(rank(r, &mut rng), "parts.jsonl", "");
    }
    red.finish(
        vec!["/run".into(), "/other \"root\"".into()],
        RunInfo {
            mode: "local".into(),
            tasks: 3,
            wall_s: Some(2.5),
        },
    )
}

#[test]
fn a_summary_read_in_any_reads_is_the_summary_from_slice_reads() {
    for (n, seed) in [(0, 1), (1, 2), (6, 3), (13, 4)] {
        let s = cluster(n, seed);
        for text in [
            serde_json::to_vec(&s).unwrap(),
            serde_json::to_vec_pretty(&s).unwrap(),
        ] {
            let whole: ClusterSummary = serde_json::from_slice(&text).unwrap();
            let want = serde_json::to_string(&whole).unwrap();
            for sizes in [vec![1], vec![3, 5, 2], vec![17], vec![4096], vec![1 << 20]] {
                let got = read(&text, sizes.clone())
                    .unwrap_or_else(|e| panic!("{n} ranks, reads {sizes:?}: {e}"));
                assert_eq!(
                    serde_json::to_string(&got).unwrap(),
                    want,
                    "reads {sizes:?}"
                );
                assert_eq!(got, whole);
            }
        }
    }
}

#[test]
fn members_in_any_order_unknown_ones_skipped_missing_and_twice_refused() {
    let s = cluster(3, 9);
    let v = serde_json::to_value(&s).unwrap();
    let obj = v.as_object().unwrap();
    // Reversed order, an unknown member first, the optional members left out.
    let mut members: Vec<String> = vec![r#""later": {"x": [1, "]"]}"#.to_string()];
    for (k, x) in obj.iter().rev() {
        if !k.starts_with("comm_slow") {
            members.push(format!("{}: {x}", serde_json::to_string(k).unwrap()));
        }
    }
    let text = format!("{{{}}}", members.join(",\n"));
    let got = read(text.as_bytes(), vec![5]).unwrap();
    let whole: ClusterSummary = serde_json::from_str(&text).unwrap();
    assert_eq!(got, whole);
    assert_eq!(got.ranks.len(), 3);
    let compact = serde_json::to_string(&s).unwrap();
    let e = read(
        compact.replace(r#""ranks":"#, r#""cranks":"#).as_bytes(),
        vec![64],
    )
    .unwrap_err();
    assert_eq!(e.kind, CutKind::Syntax("missing field `ranks`".into()));
    assert_eq!(e.at.byte, compact.len() as u64 + 1);
    let twice = compact.replacen(r#""generator":"#, r#""roots":[],"generator":"#, 1);
    let e = read(twice.as_bytes(), vec![64]).unwrap_err();
    assert_eq!(e.kind, CutKind::Syntax("duplicate field `roots`".into()));
    // A rank that is not one: serde's words, the place in the whole file.
    let at = compact.find(r#""ranks":["#).unwrap() + 9;
    let bad = format!("{}7,{}", &compact[..at], &compact[at..]);
    let e = read(bad.as_bytes(), vec![64]).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "invalid type: integer `7`, expected struct RankSummary at line 1 column {}",
            at + 1
        )
    );
    assert_eq!(e.at.byte, at as u64 + 1);
}
