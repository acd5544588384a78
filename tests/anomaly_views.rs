//! The steps / bubbles view's data (`views::anomaly*` through `engine::session::anomaly`) on
//! the real msinsight level1 ranks, checked against the spec's §13 goldens and the independent
//! Python reference of the formulas (tests/reference/anomaly_ref.py), not against our output.

use std::path::PathBuf;
use std::process::Command;

use proflens::cli::fs_opener::FsOpener;
use std::collections::BTreeMap;

use proflens::engine::contract::{no_progress, Target};
use proflens::engine::session::anomaly::{query, summary_of};
use proflens::engine::session::Session;
use proflens::engine::store::Store;
use proflens::ingest::inventory::Inventory;
use proflens::protocol::anomaly::{
    AnomalyQuery, AnomalyReply, BubbleColumn, BubbleQuery, StepRowDto, TreeNodeDto,
};
use proflens::views::cross_rank::cross_rank_table;
use serde_json::Value;

const LEVEL1: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1"
);

fn close(a: f64, b: f64, tol: f64, what: &str) {
    assert!((a - b).abs() <= tol, "{what}: got {a}, expected {b}");
}

fn reference(rank_dir: &str) -> Value {
    let out = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/reference/anomaly_ref.py"
        ))
        .arg(PathBuf::from(LEVEL1).join(rank_dir))
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The page's store of both ranks (anomaly only) and the summaries it sends.
struct AnomalyStore {
    store: Store,
    summaries: BTreeMap<u32, proflens::protocol::anomaly::AnomalySummaryDto>,
}

impl AnomalyStore {
    fn query(&self, q: &AnomalyQuery) -> Result<AnomalyReply, String> {
        query(&self.store, q)
    }
}

fn store() -> AnomalyStore {
    let (opener, files) = FsOpener::walk(&PathBuf::from(LEVEL1)).unwrap();
    let mut inv = Inventory::from_paths(&files);
    proflens::parse::metadata::read_side_files(&mut inv, &opener);
    let mut st = AnomalyStore {
        store: Store::new(Session::plan().only(&[proflens::protocol::AnalysisKind::Anomaly])),
        summaries: BTreeMap::new(),
    };
    for (i, folder) in inv.ranks.iter().enumerate() {
        let t = Target::Rank(i as u32);
        assert!(st.store.run_target(&inv, t, &opener, &mut no_progress));
        let a = st.store.anomaly(i as u32).unwrap();
        st.summaries
            .insert(i as u32, summary_of(i as u32, folder, a));
    }
    st
}

fn steps(st: &AnomalyStore, rank: u32) -> Vec<StepRowDto> {
    match st.query(&AnomalyQuery::Steps { rank }).unwrap() {
        AnomalyReply::Steps { steps, .. } => steps,
        other => panic!("{other:?}"),
    }
}

fn bubbles(st: &AnomalyStore, q: BubbleQuery) -> proflens::protocol::anomaly::BubblePage {
    match st.query(&AnomalyQuery::Bubbles(q)).unwrap() {
        AnomalyReply::Bubbles(p) => p,
        other => panic!("{other:?}"),
    }
}

fn q(rank: u32, sort: BubbleColumn, descending: bool, label: &str, scope: &str) -> BubbleQuery {
    BubbleQuery {
        rank,
        sort,
        descending,
        label: label.into(),
        scope: scope.into(),
        step: None,
        offset: 0,
        limit: 100,
    }
}

#[test]
fn summary_and_step_table_match_spec_13_1_and_13_2() {
    let st = store();
    // (service, busy, underfeed, prelaunch, internal total, largest) from §13.1.
    let golden = [
        (154.48350, 110.83675, 0.282533, 17.90250, 25.74425, 1.31875),
        (152.34575, 105.23650, 0.309226, 20.43325, 26.67600, 1.34875),
    ];
    for (rank, g) in golden.iter().enumerate() {
        let s = &st.summaries[&(rank as u32)];
        assert_eq!(s.steps, 1);
        assert_eq!(s.kernels, 191);
        assert_eq!(s.rank_id, Some(rank as i64));
        assert_eq!(s.step_detection_method, "marker");
        close(s.service_ms_avg, g.0, 1e-3, "service avg");
        close(s.busy_union_ms_avg, g.1, 1e-3, "busy avg");
        close(s.underfeed_ratio_avg, g.2, 1e-5, "underfeed avg");
        assert_eq!(s.bubble_count_avg, 90.0);
        let rows = steps(&st, rank as u32);
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.step_id, "ProfilerStep#50");
        close(r.service_ms, g.0, 1e-3, "service");
        close(r.device_busy_union_ms, g.1, 1e-3, "busy");
        close(r.underfeed_ratio, g.2, 1e-5, "underfeed");
        close(r.prelaunch_gap_ms, g.3, 1e-3, "prelaunch");
        assert_eq!(r.tail_gap_ms, 0.0);
        close(r.internal_bubble_total_ms, g.4, 1e-3, "internal");
        close(r.largest_internal_bubble_ms, g.5, 1e-3, "largest");
        assert_eq!(r.bubble_count, 90);
        assert_eq!(r.kernel_count, 191);
        // §13.3: both level1 ranks carry DEVICE_IDLE (rulebook) and PRELAUNCH, nothing else heavy.
        assert_eq!(
            r.tags[..2],
            ["DEVICE_IDLE_GAP_HEAVY", "PRELAUNCH_GAP_HEAVY"]
        );
    }
    let s0 = &st.summaries[&0];
    // §13.2: streams 2, 3 and the HCCL rows without a Stream ID; pattern internal_bubble (0.695).
    assert_eq!(s0.streams, ["2", "3", "hccl"]);
    assert_eq!(s0.dominant_idle_pattern, "internal_bubble");
    close(s0.capture_span_ms, 136.581, 1e-3, "capture span");
    close(s0.device_gap_ratio, 0.188491, 1e-5, "gap ratio");
    let tag = |t: &str| s0.tags.iter().find(|x| x.tag == t).cloned();
    assert_eq!(tag("PRELAUNCH_GAP_HEAVY").unwrap().steps, 1);
    assert_eq!(tag("PRELAUNCH_GAP_HEAVY").unwrap().level, "high");
    // COMM_SYNC_RISK (rule b, wait ratio 0.756) is a group tag of rank 0 only.
    assert_eq!(tag("COMM_SYNC_RISK").unwrap().scope, "group");
    assert!(!st.summaries[&1]
        .tags
        .iter()
        .any(|t| t.tag == "COMM_SYNC_RISK"));
    assert!(tag("WAIT_ANCHOR_FALSE_HOTSPOT").is_some());
}

#[test]
fn bubble_list_and_detail_match_the_reference() {
    let st = store();
    for (rank, dir) in [(0u32, "rank0_ascend_pt"), (1, "rank1_ascend_pt")] {
        let rf = reference(dir);
        let step = &rf["steps"][0];
        let emitted = step["emitted_internal_bubbles"].as_u64().unwrap() as u32;
        // §5.6 emission: 5 global + 1 prelaunch (> 0) + internal ≥ 50 µs (≤ 50) + no tail.
        let all = bubbles(&st, q(rank, BubbleColumn::Order, false, "", ""));
        assert_eq!(all.total, 5 + 1 + emitted, "rank {rank}");
        assert_eq!(all.rows[0].scope, "global");
        assert_eq!(all.rows[5].scope, "prelaunch");
        close(
            all.rows[5].duration_ms,
            step["prelaunch_gap_ms"].as_f64().unwrap(),
            1e-3,
            "prelaunch window",
        );
        // Global windows by duration, largest first = the reference's top-5 gaps.
        let glob = bubbles(&st, q(rank, BubbleColumn::Duration, true, "", "global"));
        assert_eq!(glob.matching, 5);
        let want: Vec<f64> = rf["global_gaps"]["top_gap_ms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        for (row, w) in glob.rows.iter().zip(&want) {
            close(row.duration_ms, *w, 1e-3, "global gap");
        }
        // Largest internal bubble: duration, start and the kernels before / after (§5.6).
        let int = bubbles(
            &st,
            q(rank, BubbleColumn::Duration, true, "", "step_internal"),
        );
        assert_eq!(int.matching, emitted);
        let top = &int.rows[0];
        close(
            top.duration_ms,
            step["largest_internal_bubble_ms"].as_f64().unwrap(),
            1e-3,
            "largest internal",
        );
        let ctx = &step["largest_internal_bubble"];
        let start: f64 = ctx["start_us"].as_str().unwrap().parse().unwrap();
        close(top.start_us, start, 1e-3, "bubble start µs");
        let d = match st
            .query(&AnomalyQuery::Bubble {
                rank,
                index: top.index,
            })
            .unwrap()
        {
            AnomalyReply::Bubble(d) => d,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            d.before.as_ref().unwrap().name,
            ctx["before"].as_str().unwrap()
        );
        assert_eq!(
            d.after.as_ref().unwrap().name,
            ctx["after"].as_str().unwrap()
        );
        assert!(
            d.before.as_ref().unwrap().start_us + d.before.as_ref().unwrap().dur_us <= start + 1e-3
        );
        assert!(d.evidence_ops[0]
            .starts_with(&format!("before: {} (", ctx["before"].as_str().unwrap())));
        assert_eq!(d.reasons.len(), d.bubble.labels.len());
        assert!(d.step_window_us.is_some());
        // Label filter: every row carries it, counts agree with the summary's label counts.
        for (label, n) in &st.summaries[&rank].labels {
            let p = bubbles(&st, q(rank, BubbleColumn::Start, false, label, ""));
            assert_eq!(p.matching, *n, "{label}");
            assert!(p.rows.iter().all(|r| r.labels.contains(label)));
            assert!(p.rows.windows(2).all(|w| w[0].start_us <= w[1].start_us));
        }
        // Paging is clamped; an unknown bubble is an error, not a panic.
        let mut far = q(rank, BubbleColumn::Order, false, "", "");
        far.offset = 1000;
        assert!(bubbles(&st, far).rows.is_empty());
        assert!(st
            .query(&AnomalyQuery::Bubble { rank, index: 9999 })
            .is_err());
    }
}

fn sum_children(n: &TreeNodeDto) -> (u32, f64) {
    n.children.iter().fold((0, 0.0), |a, c| {
        (a.0 + c.kernel_count, a.1 + c.kernel_sum_ms)
    })
}

#[test]
fn structure_tree_has_the_four_perspectives_of_spec_13_2() {
    let st = store();
    for (rank, dir) in [(0u32, "rank0_ascend_pt"), (1, "rank1_ascend_pt")] {
        let rf = reference(dir);
        let p = &rf["steps"][0]["four_perspectives"];
        let t = match st
            .query(&AnomalyQuery::Structure { rank, step: 0 })
            .unwrap()
        {
            AnomalyReply::Structure(t) => t,
            other => panic!("{other:?}"),
        };
        let root = &t.root;
        assert_eq!(root.kind, "step");
        assert_eq!(root.kernel_count, 191);
        close(root.wall_ms, p["wall_ms"].as_f64().unwrap(), 1e-3, "wall");
        close(
            root.busy_union_ms,
            p["busy_union_ms"].as_f64().unwrap(),
            1e-3,
            "busy",
        );
        close(
            root.kernel_sum_ms,
            p["kernel_sum_ms"].as_f64().unwrap(),
            1e-6,
            "kernel sum",
        );
        close(
            root.total_cost_ms,
            p["total_cost_ms"].as_f64().unwrap(),
            1e-6,
            "total cost",
        );
        if rank == 0 {
            // §13.2 literal values.
            close(root.wall_ms, 136.581, 1e-3, "wall");
            close(root.kernel_sum_ms, 114.865613, 1e-6, "kernel sum");
            close(root.total_cost_ms, 215.986254, 1e-6, "total cost");
        }
        // Every level partitions its kernels: structures → block + side → ops.
        assert_eq!(sum_children(root).0, 191);
        for s in &root.children {
            assert_eq!(s.kind, "structure");
            assert_eq!(s.children.len(), 2);
            assert_eq!(sum_children(s).0, s.kernel_count);
            close(
                sum_children(s).1,
                s.kernel_sum_ms,
                1e-6,
                "block+side kernel sum",
            );
            for part in &s.children {
                assert_eq!(sum_children(part).0 + part.more.1, part.kernel_count);
                if part.more.0 == 0 {
                    close(
                        sum_children(part).1,
                        part.kernel_sum_ms,
                        1e-6,
                        "ops kernel sum",
                    );
                }
                assert!(part.busy_union_ms <= part.kernel_sum_ms + 1e-9);
                assert!(part.kernel_sum_ms <= part.total_cost_ms + 1e-9);
            }
        }
        assert!(st
            .query(&AnomalyQuery::Structure { rank, step: 1 })
            .is_err());
    }
}

#[test]
fn op_tables_and_cross_rank_table() {
    let st = store();
    let ops = match st.query(&AnomalyQuery::Ops { rank: 0 }).unwrap() {
        AnomalyReply::Ops(o) => o,
        other => panic!("{other:?}"),
    };
    // §13.2 / reference: top-10 by total cost, flags on ranks 8 and 9 only.
    let rf = reference("rank0_ascend_pt");
    let want = rf["wait_anchor_top10"].as_array().unwrap();
    for (row, w) in ops.wait_anchors.iter().zip(want) {
        assert_eq!(row.op_name, w["op_name"].as_str().unwrap());
        assert_eq!(
            row.total_cost_rank as u64,
            w["total_cost_rank"].as_u64().unwrap()
        );
        close(
            row.wait_ratio,
            w["wait_ratio"].as_f64().unwrap(),
            1e-9,
            "wait ratio",
        );
        assert_eq!(
            row.is_false_hotspot_risk,
            w["is_false_hotspot_risk"].as_bool().unwrap()
        );
    }
    let flagged: Vec<&str> = ops
        .wait_anchors
        .iter()
        .filter(|o| o.is_false_hotspot_risk)
        .map(|o| o.op_name.as_str())
        .collect();
    assert_eq!(
        flagged,
        [
            "aclnnInplaceFillScalar_FillAiCore_Fill",
            "aclnnDropoutGenMaskV2_DSAGenBitMask_DSAGenBitMask"
        ]
    );
    // AlexNet has no AI_CPU kernels. Level1 has PMU columns (§5.15): Conv2D1 has
    // aic_mte2_ratio 0.913 > 0.8 → memory_bound; Conv2D2 has mac 0.787, mte2 0.761 → latency.
    assert!(ops.aicpu.is_empty());
    let pmu = ops.pmu.clone().expect("PMU columns present in level1");
    assert_eq!(pmu.len(), 10);
    let verdict = |n: &str| pmu.iter().find(|p| p.0 == n).map(|p| p.1.as_str());
    assert_eq!(verdict("Conv2D1"), Some("memory_bound"));
    assert_eq!(verdict("Conv2D2"), Some("latency_or_scalar_bound"));
    // §13.4 for the level1 pair.
    let sums: Vec<_> = st.summaries.values().cloned().collect();
    let rows = cross_rank_table(&sums);
    assert_eq!(rows.len(), 2);
    close(
        rows[0].comm_wait_ratio_weighted.unwrap(),
        0.755777,
        1e-5,
        "wait 0",
    );
    close(
        rows[1].comm_wait_ratio_weighted.unwrap(),
        0.131691,
        1e-5,
        "wait 1",
    );
    close(
        rows[0].comm_total_ms,
        105.99187771875,
        1e-9,
        "comm json total",
    );
    // Two ranks: median = mean, MAD = half the difference, z = ±0.674 → nobody is slow.
    assert!(rows.iter().all(|r| !r.slow));
    close(rows[0].robust_z.unwrap(), 1.0 / 1.4826, 1e-9, "z rank 0");
    close(rows[1].robust_z.unwrap(), -1.0 / 1.4826, 1e-9, "z rank 1");
    assert!(st.query(&AnomalyQuery::Steps { rank: 7 }).is_err());
}
