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
        json!({"collectives_matched": 10, "started_last": 2, "mean_start_delay_ms": 13.2166,
               "max_start_delay_ms": 92.521, "is_straggler": false})
    );
    assert_eq!(g1["straggler"]["started_last"], 8);
    assert_eq!(g1["straggler"]["is_straggler"], true);
    // Categories: the 10 SendRecv kernels of each rank are its communication.
    assert_eq!(g0["kernel_categories"][1]["category"], "communication");
    assert_eq!(g0["kernel_categories"][1]["count"], 10);
}

/// Two roles holding the same two rank ids (an RL run: actor ranks 0 and 1, critic ranks 0
/// and 1; here both roles are the trace_filter pair, linked — never copied — into a temporary
/// run folder). The straggler view marks one row, the one that started last most often
/// (actor rank 1: 8 of 10; critic rank 1 ties it on time but comes later in the order); a rank
/// id shared by two rows does not mark both (critic rank 1 started 0 collectives last).
#[cfg(unix)]
#[test]
fn one_straggler_row_when_two_roles_share_rank_ids() {
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
    let rows: Vec<(&str, i64, i64, bool)> = v
        .iter()
        .map(|r| {
            let s = &r["gpu"]["straggler"];
            (
                r["role"].as_str().unwrap(),
                r["rank_id"].as_i64().unwrap(),
                s["started_last"].as_i64().unwrap(),
                s["is_straggler"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("actor", 0, 2, false),
            ("actor", 1, 8, true),
            ("critic", 0, 0, false),
            ("critic", 1, 0, false),
        ]
    );
}

#[test]
fn ascend_ranks_have_no_gpu_block() {
    for r in anomaly_json(LEVEL1, "level1") {
        assert!(r.get("gpu").is_none());
    }
}
