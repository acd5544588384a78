//! The `gpu` block of `proflens anomaly --out` on a real two-rank GPU run (HTA's
//! `trace_filter` pair): HTA 0.5.0's own breakdowns of both ranks (`TraceAnalysis` on the
//! folder, `get_temporal_breakdown`, `get_idle_time_breakdown(ranks=[0, 1])`), the straggler
//! row of each rank, and no `gpu` block on Ascend ranks.

use std::process::Command;

use serde_json::{json, Value};

const TF: &str =
    "../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/trace_filter";
const LEVEL1: &str = "../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1";

fn anomaly_json(folder: &str, name: &str) -> Vec<Value> {
    let out = std::env::temp_dir().join(format!(
        "proflens_gpu_json_{name}_{}.json",
        std::process::id()
    ));
    let st = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(["anomaly", folder, "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success(), "{folder}: {st}");
    let v: Vec<Value> = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let _ = std::fs::remove_file(&out);
    v
}

fn idle(rows: &[(i64, Option<i64>, Option<i64>, i64)]) -> Value {
    rows.iter()
        .map(|&(s, h, k, o)| json!({"stream": s, "host_wait_us": h, "kernel_wait_us": k, "other_us": o}))
        .collect()
}

#[test]
fn two_gpu_ranks_carry_hta_breakdowns_and_straggler_rows() {
    let v = anomaly_json(TF, "tf");
    assert_eq!(v.len(), 2);
    let g0 = &v[0]["gpu"];
    let g1 = &v[1]["gpu"];
    assert_eq!(
        (v[0]["rank_id"].as_i64(), v[1]["rank_id"].as_i64()),
        (Some(0), Some(1))
    );
    assert_eq!(g0["hta_window"]["window"], "hta_parity");
    assert_eq!(
        g0["gpu_time_breakdown"],
        json!({"span_us": 600058, "idle_us": 321378, "compute_us": 106252, "non_compute_us": 172428})
    );
    assert_eq!(
        g1["gpu_time_breakdown"],
        json!({"span_us": 600674, "idle_us": 328671, "compute_us": 135548, "non_compute_us": 136455})
    );
    assert_eq!(
        g0["idle_by_stream"],
        idle(&[
            (7, Some(213825), Some(1985), 261740),
            (23, Some(596037), Some(70), 34),
            (25, None, Some(9), 47865),
            (84, Some(148934), Some(6), 0),
            (203, None, None, 0),
        ])
    );
    assert_eq!(
        g1["idle_by_stream"],
        idle(&[
            (7, Some(156827), Some(1816), 281064),
            (23, Some(596313), Some(100), 0),
            (25, None, Some(9), 53028),
            (84, Some(251860), None, 23247),
            (203, None, None, 0),
        ])
    );
    // Straggler view (tests/gpu_kernels_golden.rs has the same pair through the library).
    assert_eq!(
        g0["straggler"],
        json!({"group": null, "collectives_matched": 10, "started_last": 2,
               "mean_start_delay_ms": 13.2166, "max_start_delay_ms": 92.521, "is_straggler": false})
    );
    assert_eq!(g1["straggler"]["started_last"], 8);
    assert_eq!(g1["straggler"]["is_straggler"], true);
    // Categories: the 10 SendRecv kernels of each rank are its communication.
    assert_eq!(g0["kernel_categories"][1]["category"], "communication");
    assert_eq!(g0["kernel_categories"][1]["count"], 10);
}

/// Two roles holding the same two rank ids (an RL run: actor ranks 0 and 1, critic ranks 0
/// and 1; here both roles are the trace_filter pair, linked — never copied — into a temporary
/// run folder). The straggler view is grouped by role (ranks of different roles run different
/// collectives): each role is its own view, so each role's rank 1 is its straggler (8 of 10
/// collectives started last, rank 0 2 — the single-role numbers above), and each row names
/// its group. Before the grouping one view over all four rows marked only actor rank 1.
#[cfg(unix)]
#[test]
fn one_straggler_view_per_role() {
    let run = std::env::temp_dir().join(format!("proflens_gpu_roles_{}", std::process::id()));
    let tf = std::path::Path::new(TF).canonicalize().unwrap();
    for role in ["actor", "critic"] {
        let d = run.join(role);
        std::fs::create_dir_all(&d).unwrap();
        for f in ["sampled_rank-0.json.gz", "sampled_rank-1.json.gz"] {
            std::os::unix::fs::symlink(tf.join(f), d.join(f)).unwrap();
        }
    }
    let v = anomaly_json(run.to_str().unwrap(), "roles");
    let _ = std::fs::remove_dir_all(&run);
    let rows: Vec<(&str, &str, i64, i64, i64, bool)> = v
        .iter()
        .map(|r| {
            let s = &r["gpu"]["straggler"];
            (
                r["role"].as_str().unwrap(),
                s["group"].as_str().unwrap(),
                r["rank_id"].as_i64().unwrap(),
                s["collectives_matched"].as_i64().unwrap(),
                s["started_last"].as_i64().unwrap(),
                s["is_straggler"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("actor", "actor", 0, 10, 2, false),
            ("actor", "actor", 1, 10, 8, true),
            ("critic", "critic", 0, 10, 2, false),
            ("critic", "critic", 1, 10, 8, true),
        ]
    );
}

/// Every `(task_type, task_class)` pair of the kernels quoted anywhere in the JSON.
fn class_pairs(v: &Value, out: &mut std::collections::BTreeSet<(String, String)>) {
    match v {
        Value::Object(m) => {
            if let (Some(t), Some(c)) = (m.get("task_type"), m.get("task_class")) {
                out.insert((
                    t.as_str().unwrap_or("").to_string(),
                    c.as_str().unwrap_or("").to_string(),
                ));
            }
            m.values().for_each(|x| class_pairs(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| class_pairs(x, out)),
        _ => {}
    }
}

/// NCCL collectives on GPU ranks say `communication` (gpu-traces.md §2's GPU vocabulary,
/// HTA's kernel type), not the Ascend `HCCL`; the other GPU classes and Ascend ranks keep the
/// §1.2.2 spelling. The trace_filter pair's only collectives are its `ncclKernel_SendRecv…`
/// kernels (core `NCCL`).
#[test]
fn gpu_collectives_say_communication_ascend_keeps_hccl() {
    let mut gpu = std::collections::BTreeSet::new();
    for r in anomaly_json(TF, "tf_class") {
        class_pairs(&r, &mut gpu);
    }
    let p = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        gpu.into_iter().collect::<Vec<_>>(),
        vec![
            p("GPU_MEMCPY", "OTHER"),
            p("GPU_MEMSET", "OTHER"),
            p("KERNEL", "AI_CORE"),
            p("NCCL", "communication"),
        ]
    );
    let mut ascend = std::collections::BTreeSet::new();
    for r in anomaly_json(LEVEL1, "level1_class") {
        class_pairs(&r, &mut ascend);
    }
    assert!(ascend.iter().any(|(_, c)| c == "HCCL"), "{ascend:?}");
    assert!(
        !ascend.iter().any(|(_, c)| c == "communication"),
        "{ascend:?}"
    );
}

#[test]
fn ascend_ranks_have_no_gpu_block() {
    for r in anomaly_json(LEVEL1, "level1") {
        assert!(r.get("gpu").is_none());
    }
}
