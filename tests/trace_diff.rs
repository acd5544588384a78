//! `proflens diff` on traces, rank folders and runs (traces and steps):
//! the HTA `trace_diff` pair's ops table equal to HTA 0.5.0 `TraceDiff.compare_traces`
//! (`tests/reference/hta_trace_diff.json`, written by `tests/reference/hta_trace_diff.py` from
//! HTA itself: row count, column sums, new/gone, a digest of every row, the largest changes);
//! the steps table equal to each side's own anomaly steps; a rank compared with itself; steps
//! matched by order when the ids differ; refusals in words.

mod diff_common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use diff_common::{diff_json, proflens};

use proflens::analysis::compare::ops::StepChoice;
use proflens::analysis::compare::{compare_ranks, RankComparison, RankSide};
use proflens::cli::diff_runs::{load, RunSide};
use proflens::report::trace_diff::{build, TraceDiffJson, TraceSideJson};
use serde_json::Value;

const PAIR: &str =
    "../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/trace_diff";
const LEVEL1: &str = "../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1";

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Both sides of the HTA pair, read and analysed once per test binary.
fn pair() -> &'static (RunSide, RunSide) {
    static P: OnceLock<(RunSide, RunSide)> = OnceLock::new();
    P.get_or_init(|| {
        let mut n = 0;
        let a = load(&fixture(&format!("{PAIR}/control")), &mut n).unwrap();
        let b = load(&fixture(&format!("{PAIR}/test")), &mut n).unwrap();
        (a, b)
    })
}

fn side(s: &RunSide) -> RankSide<'_> {
    let r = s.store.anomaly_ranks().unwrap()[0];
    RankSide {
        rank_id: r.meta.rank_id,
        result: &r.result,
        kernels: &r.kernels,
        gpu: r.gpu.as_deref(),
        memory: None,
    }
}

fn side_json(s: &RunSide) -> TraceSideJson {
    TraceSideJson {
        path: s.path.clone(),
        capture: "kineto",
        ranks: vec![side(s).rank_id],
        rank: side(s).rank_id,
    }
}

fn doc(choice: StepChoice) -> (RankComparison, TraceDiffJson) {
    let (a, b) = pair();
    let c = compare_ranks(&side(a), &side(b), choice);
    let j = build(
        side_json(a),
        side_json(b),
        &c,
        &[],
        choice,
        &Default::default(),
    );
    (c, j)
}

fn fnv1a64(text: &str) -> String {
    let mut h: u64 = 0xCBF29CE484222325;
    for b in text.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100000001B3);
    }
    format!("{h:016x}")
}

/// The reference summary of `tests/reference/hta_trace_diff.py` computed from our table.
fn summary(j: &TraceDiffJson) -> Value {
    let mut rows: Vec<(String, u64, u64, i64, i64)> = j
        .ops
        .iter()
        .map(|o| {
            let us = |t: f64| {
                assert_eq!(t.fract(), 0.0, "HTA times are integral µs: {}", o.name);
                t as i64
            };
            (
                o.name.clone(),
                o.a_count,
                o.b_count,
                us(o.a_time_us),
                us(o.b_time_us),
            )
        })
        .collect();
    rows.sort();
    let text: String = rows
        .iter()
        .map(|r| format!("{}\t{}\t{}\t{}\t{}\n", r.0, r.1, r.2, r.3, r.4))
        .collect();
    let mut largest = rows.clone();
    largest.sort_by(|x, y| {
        (y.4 - y.3)
            .abs()
            .cmp(&(x.4 - x.3).abs())
            .then(x.0.cmp(&y.0))
    });
    largest.truncate(12);
    serde_json::json!({
        "rows": rows.len(),
        "sums": [
            rows.iter().map(|r| r.1).sum::<u64>(),
            rows.iter().map(|r| r.2).sum::<u64>(),
            rows.iter().map(|r| r.3).sum::<i64>(),
            rows.iter().map(|r| r.4).sum::<i64>(),
        ],
        "new": rows.iter().filter(|r| r.1 == 0).count(),
        "gone": rows.iter().filter(|r| r.2 == 0).count(),
        "fnv1a64": fnv1a64(&text),
        "largest_changes": largest
            .iter()
            .map(|r| serde_json::json!([r.0, r.1, r.2, r.3, r.4]))
            .collect::<Vec<_>>(),
    })
}

fn reference() -> Value {
    let text = std::fs::read_to_string(fixture("tests/reference/hta_trace_diff.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn gpu_pair_ops_equal_hta_trace_diff_first_and_third_step() {
    let r = reference();
    let (c, j) = doc(StepChoice::Nth(0));
    assert_eq!(j.ops_rule, "hta_trace_diff");
    assert_eq!(j.ops_steps.a, ["ProfilerStep#1009"]);
    assert_eq!(j.ops_steps.b, ["ProfilerStep#1009"]);
    assert_eq!((c.a_ops.step_count, c.b_ops.step_count), (6, 6));
    assert_eq!((j.a.rank, j.b.rank), (Some(3), Some(1)));
    assert_eq!(summary(&j), r["first_step"]);
    // gpu-traces.md §5's examples, and the change words.
    let op = |n: &str| j.ops.iter().find(|o| o.name == n).unwrap();
    let got = |n: &str| {
        let o = op(n);
        (o.a_count, o.b_count, o.a_time_us, o.b_time_us, o.change)
    };
    assert_eq!(
        got("cudaMemcpyAsync"),
        (38, 802, 10190.0, 40994.0, "changed")
    );
    assert_eq!(
        got("Memcpy DtoD (Device -> Device)"),
        (3, 768, 455.0, 15355.0, "changed")
    );
    assert_eq!(got("aten::item"), (5, 5, 4826.0, 32455.0, "changed"));
    assert_eq!(op("cudaMemcpyAsync").delta_count, 764);
    assert_eq!(op("cudaMemcpyAsync").delta_time_us, 30804.0);
    let (_, j3) = doc(StepChoice::Nth(2));
    assert_eq!(j3.ops_steps.a, ["ProfilerStep#1011"]);
    assert_eq!(summary(&j3), r["third_step"]);
    // The ops table is sorted by |Δ time| (then the larger side, then the name).
    let d: Vec<f64> = j.ops.iter().map(|o| o.delta_time_us.abs()).collect();
    assert!(d.windows(2).all(|w| w[0] >= w[1]));
}

#[test]
fn gpu_pair_steps_are_each_sides_anomaly_steps() {
    let (a, b) = pair();
    let (_, j) = doc(StepChoice::Nth(0));
    assert_eq!(j.steps_matched_by, "id");
    assert!(j.notes.is_empty(), "{:?}", j.notes);
    let steps = |s: &RunSide| {
        let r = s.store.anomaly_ranks().unwrap()[0];
        r.result
            .steps
            .iter()
            .map(proflens::report::anomaly_json::step_json)
            .collect::<Vec<_>>()
    };
    let (sa, sb) = (steps(a), steps(b));
    assert_eq!(j.steps.len(), 6);
    for (k, s) in j.steps.iter().enumerate() {
        assert_eq!(s.step_id, format!("ProfilerStep#{}", 1009 + k));
        assert_eq!(s.b_step_id, None);
        assert_eq!(s.a_service_ms, Some(sa[k].service_ms));
        assert_eq!(s.b_service_ms, Some(sb[k].service_ms));
        assert_eq!(s.a_device_busy_union_ms, Some(sa[k].device_busy_union_ms));
        assert_eq!(s.b_underfeed_ms, Some(sb[k].underfeed_ms));
        assert_eq!(s.a_bubble_count, Some(sa[k].bubble_count));
        assert_eq!(s.b_bubble_total_ms, Some(sb[k].internal_bubble_total_ms));
        assert_eq!(
            s.delta_bubble_count,
            Some(sb[k].bubble_count as i64 - sa[k].bubble_count as i64)
        );
    }
    // First step of control: 75.516 ms service, 1156 internal bubbles (proflens anomaly).
    assert_eq!(j.steps[0].a_service_ms, Some(75.516));
    assert_eq!(j.steps[0].a_bubble_count, Some(1156));
    // The label mix counts every emitted step window once per label it carries.
    let windows = |s: &RunSide| {
        let r = s.store.anomaly_ranks().unwrap()[0];
        r.result
            .bubbles
            .iter()
            .filter(|b| b.window.step.is_some())
            .map(|b| b.labels.len() as u64)
            .sum::<u64>()
    };
    assert_eq!(
        j.bubble_labels.iter().map(|l| l.a_windows).sum::<u64>(),
        windows(a)
    );
    assert_eq!(
        j.bubble_labels.iter().map(|l| l.b_windows).sum::<u64>(),
        windows(b)
    );
}

#[test]
fn an_ascend_rank_against_itself_has_zero_deltas_and_its_step_kernels() {
    let r0 = fixture(&format!("{LEVEL1}/rank0_ascend_pt"));
    let j = diff_json(&r0, &r0, &[]);
    assert_eq!(j["kind"], "trace");
    assert_eq!(j["ops_rule"], "kernels");
    assert_eq!(j["a"]["capture"], "ascend");
    assert_eq!(j["ops_steps"]["a"], serde_json::json!(["ProfilerStep#50"]));
    let ops = j["ops"].as_array().unwrap();
    assert!(!ops.is_empty());
    assert!(ops
        .iter()
        .all(|o| o["change"] == "same" && o["delta_count"] == 0 && o["delta_time_us"] == 0.0));
    // The step's 191 kernels (proflens anomaly: total_kernel_count) are all in the table.
    assert_eq!(
        ops.iter()
            .map(|o| o["a_count"].as_u64().unwrap())
            .sum::<u64>(),
        191
    );
    let s = &j["steps"][0];
    assert_eq!(s["step_id"], "ProfilerStep#50");
    assert_eq!(s["a_service_ms"], 154.483511);
    assert_eq!(s["delta_service_ms"], 0.0);
    assert_eq!(s["a_bubble_count"], 90);
    assert_eq!(s["delta_bubble_count"], 0);
}

#[test]
fn two_ascend_ranks_of_level1_and_markdown() {
    let r0 = fixture(&format!("{LEVEL1}/rank0_ascend_pt"));
    let r1 = fixture(&format!("{LEVEL1}/rank1_ascend_pt"));
    let md = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trace_diff_level1.md");
    let j = diff_json(&r0, &r1, &["--md", md.to_str().unwrap()]);
    assert_eq!(
        (j["a"]["rank"].as_i64(), j["b"]["rank"].as_i64()),
        (Some(0), Some(1))
    );
    assert_eq!(j["steps_matched_by"], "id");
    let s = &j["steps"][0];
    // proflens anomaly: 154.483511 ms (rank 0) and 152.345805 ms (rank 1).
    assert_eq!(s["a_service_ms"], 154.483511);
    assert_eq!(s["b_service_ms"], 152.345805);
    let d = s["delta_service_ms"].as_f64().unwrap();
    assert!((d - (152.345805 - 154.483511)).abs() < 1e-9, "{d}");
    let ops = j["ops"].as_array().unwrap();
    for side in ["a_count", "b_count"] {
        let n: u64 = ops.iter().map(|o| o[side].as_u64().unwrap()).sum();
        assert_eq!(n, 191, "{side}");
    }
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.starts_with("# Trace comparison\n"), "{text}");
    assert!(text.contains("## Steps (matched by id)"), "{text}");
    assert!(
        text.contains("| ProfilerStep\\#50 | 154.484 ms | 152.346 ms | −2.138 ms |"),
        "{text}"
    );
}

#[test]
fn steps_are_matched_by_order_when_the_ids_differ() {
    // A GPU trace (ProfilerStep#1009…1014) against an Ascend rank (ProfilerStep#50).
    let mut n = 0;
    let r0 = load(&fixture(&format!("{LEVEL1}/rank0_ascend_pt")), &mut n).unwrap();
    let (a, _) = pair();
    let c = compare_ranks(&side(a), &side(&r0), StepChoice::All);
    let mut bj = side_json(&r0);
    bj.capture = "ascend";
    let j = build(
        side_json(a),
        bj,
        &c,
        &[],
        StepChoice::All,
        &Default::default(),
    );
    assert_eq!(j.ops_rule, "kernels", "a GPU trace against an Ascend rank");
    assert_eq!(j.ops_steps.mode, "all");
    assert!(j.ops_steps.a.is_empty() && j.ops_steps.b.is_empty());
    // The whole capture: every kernel of each side.
    let kernels = |s: &RunSide| s.store.anomaly_ranks().unwrap()[0].kernels.len() as u64;
    assert_eq!(j.ops.iter().map(|o| o.a_count).sum::<u64>(), kernels(a));
    assert_eq!(j.ops.iter().map(|o| o.b_count).sum::<u64>(), kernels(&r0));
    assert_eq!(j.steps_matched_by, "order");
    assert_eq!(j.steps.len(), 6);
    assert_eq!(j.steps[0].step_id, "ProfilerStep#1009");
    assert_eq!(j.steps[0].b_step_id.as_deref(), Some("ProfilerStep#50"));
    assert_eq!(j.steps[0].b_service_ms, Some(154.483511));
    assert_eq!(j.steps[1].b_service_ms, None);
    assert_eq!(j.steps[1].delta_service_ms, None);
    assert!(j.notes[0].contains("matched by order"), "{:?}", j.notes);
}

#[test]
fn bad_requests_are_refused_in_words() {
    let r0 = fixture(&format!("{LEVEL1}/rank0_ascend_pt"));
    let r0s = r0.to_str().unwrap();
    let (rc, _, err) = proflens(&["diff", r0s, r0s, "--step", "0"]);
    assert_eq!(rc, 2);
    assert!(err.contains("--step counts from 1"), "{err}");
    let (rc, _, err) = proflens(&["diff", r0s, r0s, "--rank", "7"]);
    assert_eq!(rc, 2);
    assert!(err.contains("has no rank 7 (ranks: 0)"), "{err}");
    let (rc, _, err) = proflens(&["diff", r0s, r0s, "--step", "2"]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        err.contains("Side A has 1 step: the chosen step does not exist"),
        "{err}"
    );
    // Options of the other kind of diff are refused, not ignored.
    let (rc, _, err) = proflens(&["diff", r0s, r0s, "--a-device", "1"]);
    assert_eq!(rc, 2);
    assert!(
        err.contains("--a-device applies to snapshot files"),
        "{err}"
    );
    let (rc, _, err) = proflens(&["diff", r0s, r0s, "--step", "2", "--all-steps"]);
    assert_eq!(rc, 2);
    assert!(
        err.contains("--step and --all-steps exclude each other"),
        "{err}"
    );
    let snap = "../shared/fixtures/torch_snapshots/jogregoire_How-Diffusion-Models-Work__my_snapshot.pickle";
    let snap = fixture(snap);
    let snap = snap.to_str().unwrap();
    let (rc, _, err) = proflens(&["diff", snap, snap, "--rank", "0"]);
    assert_eq!(rc, 2);
    assert!(
        err.contains("--rank applies to traces, rank folders and runs"),
        "{err}"
    );
    let (rc, _, err) = proflens(&["diff", snap, r0s]);
    assert_eq!(rc, 2);
    assert!(err.contains("are not the same kind of input"), "{err}");
    let empty = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trace_diff_empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (rc, _, err) = proflens(&["diff", empty.to_str().unwrap(), r0s]);
    assert_eq!(rc, 2);
    assert!(err.contains("no GPU trace and no rank folder"), "{err}");
}

/// Two rank folders of different ranks: the rank table pairs ranks by id, so it pairs none,
/// and the summary line says so instead of an empty "changed most" list.
#[test]
fn two_ranks_of_one_run_say_the_rank_table_pairs_none() {
    let r0 = fixture(&format!("{LEVEL1}/rank0_ascend_pt"));
    let r1 = fixture(&format!("{LEVEL1}/rank1_ascend_pt"));
    let (rc, _, err) = proflens(&["diff", r0.to_str().unwrap(), r1.to_str().unwrap()]);
    assert_eq!(rc, 0, "{err}");
    let line: Vec<&str> = err.lines().filter(|l| l.starts_with("ranks: ")).collect();
    assert_eq!(
        line,
        [
            "ranks: 2 (no rank id on both sides, so the rank table pairs none: A has 0, B has 1; \
          the ops, steps and memory above compare A's rank 0 with B's rank 1)"
        ]
    );
}

/// A copy of level1 rank 0 whose `operator_memory.csv` has known changes: the never-released
/// `aten::mm` row of 16000.5 KB (CSV line 56) grown by 1000 KB, a new never-released row
/// `aten::brand_new` of 300 KB after it, and the peak row's (line 125) allocated total raised by
/// 10 MiB.
fn changed_rank0() -> PathBuf {
    let src = fixture(&format!("{LEVEL1}/rank0_ascend_pt"));
    let dst = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("diff_mem_{}", std::process::id()))
        .join("rank0_ascend_pt");
    for rel in [
        "profiler_info_0.json",
        "profiler_metadata.json",
        "ASCEND_PROFILER_OUTPUT/kernel_details.csv",
        "ASCEND_PROFILER_OUTPUT/trace_view.json",
        "ASCEND_PROFILER_OUTPUT/operator_memory.csv",
    ] {
        let to = dst.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(src.join(rel), &to).unwrap();
    }
    let csv = dst.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut out = String::new();
    for (k, line) in text.lines().enumerate() {
        let mut cells: Vec<String> = line.split(',').map(str::to_string).collect();
        match k + 1 {
            56 => {
                assert_eq!(
                    (cells[0].as_str(), cells[1].as_str()),
                    ("aten::mm", "16000.5")
                );
                cells[1] = "17000.5".into();
                out.push_str(&cells.join(","));
                out.push('\n');
                cells[0] = "aten::brand_new".into();
                cells[1] = "300.0".into();
            }
            125 => {
                let t: f64 = cells[7].parse().unwrap();
                cells[7] = format!("{}", t + 10.0);
            }
            _ => {}
        }
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    std::fs::write(&csv, out).unwrap();
    dst
}

#[test]
fn memory_events_with_known_changes_give_exactly_those_deltas() {
    let a = fixture(&format!("{LEVEL1}/rank0_ascend_pt"));
    let b = changed_rank0();
    let md = b.parent().unwrap().join("diff.md");
    let j = diff_json(&a, &b, &["--md", md.to_str().unwrap()]);
    let pools = j["memory"].as_array().unwrap();
    let comps: Vec<&str> = pools
        .iter()
        .map(|p| p["component"].as_str().unwrap())
        .collect();
    assert_eq!(comps, ["PTA", "GE", "OTHER"]);
    let pta = &pools[0];
    assert_eq!(
        (pta["a_rows"].as_u64(), pta["b_rows"].as_u64()),
        (Some(122), Some(123))
    );
    assert_eq!(pta["a"]["peak_allocated_mb"], 1187.9814453125);
    assert_eq!(pta["b"]["peak_allocated_mb"], 1197.9814453125);
    assert_eq!(pta["delta_peak_allocated_mb"], 10.0);
    assert_eq!(pta["a"]["peak_source_line"], 125);
    assert_eq!(pta["b"]["peak_source_line"], 126);
    assert_eq!(pta["a"]["live_kb"], 498238.5);
    assert_eq!(pta["delta_live_kb"], 1300.0);
    assert_eq!(pta["b"]["live_rows"], 42);
    let by_name = pta["live_by_name"].as_array().unwrap();
    let row = |k: &str| by_name.iter().find(|r| r["key"] == k).unwrap();
    assert_eq!(row("aten::mm")["delta_kb"], 1000.0);
    assert_eq!(row("aten::mm")["change"], "changed");
    assert_eq!(row("aten::brand_new")["change"], "new");
    assert_eq!(row("aten::brand_new")["b_kb"], 300.0);
    assert_eq!(by_name[0]["key"], "aten::mm", "largest change first");
    for t in ["live_by_name", "live_by_user_frame"] {
        let rows = pta[t].as_array().unwrap();
        let sum: f64 = rows.iter().map(|r| r["delta_kb"].as_f64().unwrap()).sum();
        assert_eq!(sum, 1300.0, "{t}");
        let changed = rows.iter().filter(|r| r["change"] != "same").count();
        assert!(changed <= 2, "{t}: only the two changed rows move");
    }
    // The other pools are untouched.
    for p in &pools[1..] {
        assert_eq!(p["delta_peak_allocated_mb"], 0.0);
        assert_eq!(p["delta_live_kb"], 0.0);
    }
    // User frames carry the snapshot report's source links (default style vscode).
    let frame = &pta["live_by_user_frame"][0];
    let key = frame["key"].as_str().unwrap();
    assert!(
        key.starts_with("/home/z30057886/imagenet_script/main.py("),
        "{key}"
    );
    let link = frame["link"].as_str().unwrap();
    assert!(
        link.starts_with("vscode://file/home/z30057886/imagenet_script/main.py:"),
        "{link}"
    );
    assert!(by_name.iter().all(|r| r.get("link").is_none()));
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.contains("](vscode://file/home/z30057886/imagenet_script/main.py:"),
        "{text}"
    );
    assert!(
        text.contains("### PTA (PyTorch allocator): 122 rows on A, 123 on B"),
        "{text}"
    );
    assert!(
        text.contains("| peak allocated | 1.16 GiB | 1.17 GiB | +10.0 MiB |"),
        "{text}"
    );
    assert!(
        text.contains(
            "| aten::brand\\_new | 0 B (0 rows) | 300.0 KiB (1 row) | +300.0 KiB | new |"
        ),
        "{text}"
    );
}

#[test]
fn two_runs_give_a_rank_by_rank_table_and_the_ranks_that_changed_most() {
    let text = "../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text";
    let j = diff_json(
        &fixture(&format!("{text}/level0")),
        &fixture(&format!("{text}/level1")),
        &[],
    );
    assert_eq!(j["a"]["ranks"], serde_json::json!([0, 1]));
    assert_eq!(j["b"]["ranks"], serde_json::json!([0, 1]));
    let ranks = j["ranks"].as_array().unwrap();
    let got: Vec<(i64, f64, f64)> = ranks
        .iter()
        .map(|r| {
            (
                r["rank"].as_i64().unwrap(),
                r["a"]["service_ms_avg"].as_f64().unwrap(),
                r["b"]["service_ms_avg"].as_f64().unwrap(),
            )
        })
        .collect();
    // proflens anomaly on each rank folder: level0 135.609373 / 119.522398 ms, level1
    // 154.483511 / 152.345805 ms.
    assert_eq!(
        got,
        [(0, 135.609373, 154.483511), (1, 119.522398, 152.345805)]
    );
    let d = ranks[1]["delta_service_ms_avg"].as_f64().unwrap();
    assert!((d - (152.345805 - 119.522398)).abs() < 1e-9);
    assert_eq!(j["ranks_changed_most"], serde_json::json!([1, 0]));
    assert_eq!(ranks[0]["a"]["peak_allocated_mb"], 1187.9814453125);
    // The ops and steps tables compare the first rank of each side.
    assert_eq!(
        (j["a"]["rank"].as_i64(), j["b"]["rank"].as_i64()),
        (Some(0), Some(0))
    );
    let j1 = diff_json(
        &fixture(&format!("{text}/level0")),
        &fixture(&format!("{text}/level1")),
        &["--rank", "1"],
    );
    assert_eq!(j1["steps"][0]["a_service_ms"], 119.522398);
    assert_eq!(j1["steps"][0]["b_service_ms"], 152.345805);
}
