//! The reduce on hand-built rank summaries with known answers.

use super::*;
use crate::protocol::cluster::{AnomalySummary, TargetKind};

fn step(id: &str, service: f64) -> StepSummary {
    StepSummary {
        step_id: id.to_string(),
        service_ms: service,
        device_busy_union_ms: service - 10.0,
        underfeed_ms: service * 0.5,
        underfeed_ratio: 0.5,
        prelaunch_gap_ms: 1.0,
        tail_gap_ms: 0.0,
        internal_bubble_total_ms: 2.0,
        largest_internal_bubble_ms: 0.5,
        bubble_count: 4,
        total_kernel_count: 10,
        kernel_duration_sum_ms: service * 0.5,
        tags: vec![],
        labels: vec![],
    }
}

fn rank(id: Option<i64>, role: Option<&str>, steps: &[(&str, f64)]) -> RankSummary {
    let steps: Vec<StepSummary> = steps.iter().map(|&(s, v)| step(s, v)).collect();
    let n = steps.len() as f64;
    let dir = format!("/run/{}/rank{}", role.unwrap_or("-"), id.unwrap_or(-1));
    let mut r = RankSummary::new(dir.clone(), TargetKind::Ascend, dir);
    r.rank_id = id;
    r.role = role.map(String::from);
    r.status = RankStatus::Ok;
    r.anomaly = Some(AnomalySummary {
        step_count: steps.len() as u64,
        service_ms_avg: steps.iter().map(|s| s.service_ms).sum::<f64>() / n,
        busy_union_ms_avg: 1.0,
        underfeed_ratio_avg: 0.5,
        comm_total_ms: 3.0,
        comm_wait_ratio_weighted: None,
        bubble_count_avg: 4.0,
        dominant_idle_pattern: "none".into(),
        dominant_anomaly_tags: vec![],
    });
    r.steps = steps;
    r.problem_counts = ProblemCounts {
        errors: 1,
        warnings: 2,
    };
    r
}

fn run() -> RunInfo {
    RunInfo {
        mode: "cli".into(),
        tasks: 1,
        wall_s: Some(2.5),
    }
}

#[test]
fn slow_rank_robust_z_and_order_are_the_section_13_4_rule() {
    let mut red = Reducer::new();
    // Pushed out of order: the summary orders by (role, rank id).
    for (id, s) in [(4, 150.0), (0, 100.0), (2, 102.0), (1, 101.0), (3, 103.0)] {
        red.push(rank(Some(id), None, &[("ProfilerStep#1", s)]), "p", "");
    }
    let s = red.finish(vec!["/run".into()], run());
    let ids: Vec<i64> = s.ranks.iter().map(|r| r.rank_id.unwrap()).collect();
    assert_eq!(ids, vec![0, 1, 2, 3, 4]);
    assert_eq!(s.rank_count, 5);
    // median 102, MAD median(|x − 102|) = median(2, 1, 0, 1, 48) = 1.
    let z: Vec<Option<f64>> = s.cross_rank.iter().map(|r| r.robust_z).collect();
    assert_eq!(
        z,
        vec![
            Some(-2.0 / 1.4826),
            Some(-1.0 / 1.4826),
            Some(0.0),
            Some(1.0 / 1.4826),
            Some(48.0 / 1.4826)
        ]
    );
    assert_eq!(s.slow_ranks, vec![4]);
    assert_eq!(
        s.cross_rank.iter().map(|r| r.slow).collect::<Vec<_>>(),
        vec![false, false, false, false, true]
    );
    // The same rank is the one service outlier of the step (z > 3); the other metrics are equal.
    assert_eq!(s.outliers.len(), 2, "{:?}", s.outliers);
    let o = &s.outliers[0];
    assert_eq!(
        (o.metric.as_str(), o.rank_id, o.step_id.as_str()),
        ("service_ms", Some(4), "ProfilerStep#1")
    );
    assert_eq!(
        (o.value, o.median, o.robust_z),
        (150.0, 102.0, Some(48.0 / 1.4826))
    );
    // Busy union (service − 10) has the same z: the tie goes to the metric order.
    assert_eq!(s.outliers[1].metric, "device_busy_union_ms");
    assert_eq!(s.outliers[1].robust_z, Some(48.0 / 1.4826));
    assert_eq!(
        s.problems_total,
        ProblemCounts {
            errors: 5,
            warnings: 10
        }
    );
}

#[test]
fn mad_zero_gives_infinite_z_written_as_null_and_a_flag() {
    let mut red = Reducer::new();
    for (id, s) in [(0, 100.0), (1, 100.0), (2, 100.0), (3, 106.0)] {
        red.push(rank(Some(id), None, &[("ProfilerStep#1", s)]), "p", "");
    }
    let s = red.finish(vec![], run());
    assert_eq!(s.cross_rank[3].robust_z, None);
    assert!(s.cross_rank[3].slow);
    assert_eq!(s.cross_rank[0].robust_z, Some(0.0));
    assert_eq!(s.slow_ranks, vec![3]);
    // 5 % above the median is needed too: 105 is not slow (not strictly above 105).
    let mut red = Reducer::new();
    for (id, v) in [(0, 100.0), (1, 100.0), (2, 105.0)] {
        red.push(rank(Some(id), None, &[("ProfilerStep#1", v)]), "p", "");
    }
    assert!(red.finish(vec![], run()).slow_ranks.is_empty());
}

#[test]
fn matrices_are_the_union_of_steps_in_step_order_with_nulls() {
    let mut red = Reducer::new();
    red.push(
        rank(
            Some(0),
            None,
            &[("ProfilerStep#9", 10.0), ("ProfilerStep#10", 11.0)],
        ),
        "p",
        "",
    );
    red.push(
        rank(
            Some(1),
            None,
            &[("ProfilerStep#10", 12.0), ("ProfilerStep#11", 13.0)],
        ),
        "p",
        "",
    );
    let s = red.finish(vec![], run());
    let m = &s.matrices;
    assert_eq!(
        m.step_ids,
        vec!["ProfilerStep#9", "ProfilerStep#10", "ProfilerStep#11"]
    );
    assert_eq!(
        m.service_ms,
        vec![
            vec![Some(10.0), Some(11.0), None],
            vec![None, Some(12.0), Some(13.0)]
        ]
    );
    assert_eq!(m.bubble_count[1], vec![None, Some(4.0), Some(4.0)]);
    assert_eq!(m.underfeed_ratio[0], vec![Some(0.5), Some(0.5), None]);
    assert_eq!(m.device_busy_union_ms[0], vec![Some(0.0), Some(1.0), None]);
    assert_eq!(
        m.internal_bubble_total_ms[0],
        vec![Some(2.0), Some(2.0), None]
    );
    assert_eq!(step_key("global"), (u64::MAX, "global"));
}

#[test]
fn roles_are_compared_within_themselves_and_failed_ranks_are_kept_but_not_compared() {
    let mut red = Reducer::new();
    for (id, v) in [(0, 100.0), (1, 101.0), (2, 102.0)] {
        red.push(rank(Some(id), Some("rollout"), &[("s1", v)]), "p", "");
    }
    // The actor role is 10× slower: no rank of it is slow against the rollout ranks.
    for (id, v) in [(0, 1000.0), (1, 1001.0), (2, 1002.0)] {
        red.push(rank(Some(id), Some("actor"), &[("s1", v)]), "p", "");
    }
    let mut failed = rank(Some(3), Some("actor"), &[]);
    failed.status = RankStatus::Failed;
    failed.anomaly = None;
    red.push(failed, "p", "");
    let s = red.finish(vec![], run());
    let roles: Vec<(Option<&str>, Option<i64>)> = s
        .ranks
        .iter()
        .map(|r| (r.role.as_deref(), r.rank_id))
        .collect();
    assert_eq!(
        roles,
        vec![
            (Some("actor"), Some(0)),
            (Some("actor"), Some(1)),
            (Some("actor"), Some(2)),
            (Some("actor"), Some(3)),
            (Some("rollout"), Some(0)),
            (Some("rollout"), Some(1)),
            (Some("rollout"), Some(2)),
        ]
    );
    assert!(s.slow_ranks.is_empty());
    assert_eq!(
        s.cross_rank
            .iter()
            .map(|r| r.rank_index)
            .collect::<Vec<_>>(),
        vec![0, 1, 2, 4, 5, 6]
    );
    assert!(s.outliers.is_empty());
    assert_eq!(s.matrices.service_ms[3], vec![None]);
}

#[test]
fn duplicate_targets_and_part_problems_are_located_and_counted() {
    let mut red = Reducer::new();
    red.push(rank(Some(0), None, &[("s", 1.0)]), "a.jsonl", "line 1");
    red.push(rank(Some(0), None, &[("s", 2.0)]), "b.jsonl", "line 3");
    red.problem(
        ProblemSeverity::Error,
        codes::BAD_LINE,
        "b.jsonl",
        "line 4",
        "not a rank summary".into(),
    );
    let s = red.finish(vec![], run());
    assert_eq!(s.rank_count, 1);
    assert_eq!(s.ranks[0].steps[0].service_ms, 1.0);
    assert_eq!(s.problems.len(), 2);
    assert_eq!(
        (
            s.problems[0].code.as_str(),
            s.problems[0].file.as_str(),
            s.problems[0].location.as_str()
        ),
        (codes::DUPLICATE, "b.jsonl", "line 3")
    );
    assert_eq!(s.problems[1].code, codes::BAD_LINE);
    // One rank (1 error, 2 warnings) + the reduce's own (1 error, 1 warning).
    assert_eq!(
        s.problems_total,
        ProblemCounts {
            errors: 2,
            warnings: 3
        }
    );
}

#[test]
fn communication_slow_rank_across_the_summaries_is_the_dixon_vote() {
    use crate::protocol::cluster::{CommOpTime, CommSummary};
    let mut red = Reducer::new();
    for id in 0..7i64 {
        let mut r = rank(Some(id), None, &[("1", 100.0)]);
        let t = if id == 3 {
            0.0
        } else {
            0.1 + id as f64 * 0.001
        };
        r.comm = Some(CommSummary {
            n_ops: 1,
            elapse_ms: t,
            transit_ms: 0.0,
            wait_ms: 0.0,
            sync_ms: 0.0,
            idle_ms: t,
            wait_ratio: 0.0,
            sync_ratio: 0.0,
            ops: vec![CommOpTime {
                group: "42".into(),
                op: "hcom_allReduce__042_1_1".into(),
                start_us: id as f64,
                elapse_ms: t,
                data_size: None,
            }],
            ops_dropped: 0,
        });
        red.push(r, "parts.jsonl", "");
    }
    let s = red.finish(vec![], run());
    assert_eq!(s.comm_slow_ranks.len(), 1);
    let c = &s.comm_slow_ranks[0];
    assert_eq!((c.rank_id, c.n, c.test.as_str()), (3, 7, "dixon"));
    assert!(c.statistic > c.threshold);
    // Without the outlier: no vote, and the field is left out of the file.
    let mut red = Reducer::new();
    red.push(rank(Some(0), None, &[("1", 100.0)]), "parts.jsonl", "");
    let s = red.finish(vec![], run());
    assert!(s.comm_slow_ranks.is_empty());
    assert!(!serde_json::to_string(&s)
        .unwrap()
        .contains("comm_slow_ranks"));
}

#[test]
fn communication_slow_links_across_the_summaries_are_the_3_sigma_groups() {
    // The slow-link vector of msprof-analyze's unit tests (docs/rules/communication.md §5):
    // 12 ops × 2 ranks, hcom_allReduce_, 1024 B, 1000 ns each but one op of 5000 ns (on both
    // ranks).
    use crate::protocol::cluster::{CommOpTime, CommSummary};
    let mut red = Reducer::new();
    for id in 0..2i64 {
        let mut r = rank(Some(id), None, &[("1", 100.0)]);
        let ops: Vec<CommOpTime> = (0..12)
            .map(|k| CommOpTime {
                group: "42".into(),
                op: format!("hcom_allReduce__042_{k}_1"),
                start_us: k as f64,
                elapse_ms: if k == 7 { 0.005 } else { 0.001 },
                data_size: Some(1024),
            })
            .collect();
        r.comm = Some(CommSummary {
            n_ops: 12,
            elapse_ms: 0.016,
            transit_ms: 0.0,
            wait_ms: 0.0,
            sync_ms: 0.0,
            idle_ms: 0.016,
            wait_ratio: 0.0,
            sync_ratio: 0.0,
            ops,
            ops_dropped: 0,
        });
        red.push(r, "parts.jsonl", "");
    }
    let s = red.finish(vec![], run());
    assert_eq!(s.comm_slow_links.len(), 1, "{:?}", s.comm_slow_links);
    let l = &s.comm_slow_links[0];
    assert_eq!((l.name.as_str(), l.count), ("hcom_allReduce_2_1024", 24));
    assert!((l.mean_ns - 4000.0 / 3.0).abs() < 1e-9, "{}", l.mean_ns);
    // The reference values are pandas' (Welford std): equal within 1e-12 relative.
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs();
    assert!(close(l.std_ns, 1129.3194051465598), "{}", l.std_ns);
    assert!(
        close(l.offset_ratio, 3.2467932897963596),
        "{}",
        l.offset_ratio
    );
    assert_eq!((l.min_ns, l.median_ns, l.max_ns), (1000.0, 1000.0, 5000.0));
    assert_eq!(l.ops, vec!["hcom_allReduce__042_7_1".to_string()]);
    let json = serde_json::to_string(&s).unwrap();
    assert!(json.contains("\"comm_slow_links\""));
    assert!(json.contains("\"data_size\":1024"));
    // Without data sizes (communication.json carries none): no group, nothing written.
    let mut red = Reducer::new();
    red.push(rank(Some(0), None, &[("1", 100.0)]), "parts.jsonl", "");
    let s = red.finish(vec![], run());
    assert!(s.comm_slow_links.is_empty());
    assert!(!serde_json::to_string(&s)
        .unwrap()
        .contains("comm_slow_links"));
}
