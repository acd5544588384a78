//! The cluster path's CLI (`docs/cluster-summary.md`): `targets`, `summarize` and
//! `reduce` on real rank folders, a Kineto trace, a snapshot pickle and a generated 12-rank
//! run with one straggler; every step's numbers equal `proflens anomaly`'s JSON values.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures/");
const LEVEL1: &str = "ascend/Ascend__msinsight/test/data/pytorch/text/level1";
const GEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/bench/gen_ascend.py");

/// The step fields of a rank summary (`docs/cluster-summary.md` §2, Step).
const STEP_FIELDS: [&str; 14] = [
    "step_id",
    "service_ms",
    "device_busy_union_ms",
    "underfeed_ms",
    "underfeed_ratio",
    "prelaunch_gap_ms",
    "tail_gap_ms",
    "internal_bubble_total_ms",
    "largest_internal_bubble_ms",
    "bubble_count",
    "total_kernel_count",
    "kernel_duration_sum_ms",
    "tags",
    "labels",
];

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("proflens_cluster_{}_{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn proflens(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(args)
        .output()
        .unwrap()
}

fn lines(out: &[u8]) -> Vec<Value> {
    std::str::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `proflens anomaly PATH --out F`, parsed: the array over ranks.
fn anomaly(path: &str, dir: &Path) -> Vec<Value> {
    let f = dir.join("anomaly.json");
    let o = proflens(&["anomaly", path, "--out", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice::<Value>(&std::fs::read(f).unwrap())
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// Every step of `summary` equals the anomaly JSON's step of the same index, field by field
/// (parsed JSON values: the same f64).
fn assert_steps_equal(summary: &Value, anomaly_rank: &Value) {
    let s = summary["steps"].as_array().unwrap();
    let a = anomaly_rank["steps"].as_array().unwrap();
    assert!(!s.is_empty());
    assert_eq!(s.len(), a.len(), "{}", summary["target"]);
    for (x, y) in s.iter().zip(a) {
        for f in STEP_FIELDS {
            assert_eq!(x[f], y[f], "{} {f}", summary["target"]);
        }
    }
    let g0 = &anomaly_rank["anomaly_discovery"]["step_group_anomalies"][0];
    assert_eq!(
        summary["anomaly"]["dominant_anomaly_tags"],
        g0["dominant_anomaly_tags"]
    );
    assert_eq!(
        summary["anomaly"]["dominant_idle_pattern"],
        g0["dominant_idle_pattern"]
    );
    assert_eq!(summary["anomaly"]["step_count"], a.len());
}

#[test]
fn level1_ranks_summarised_equal_proflens_anomaly_and_the_targets() {
    let dir = tmp("level1");
    let root = format!("{FIX}{LEVEL1}");
    let t = proflens(&["targets", &root, "--json"]);
    assert!(t.status.success());
    let targets: Vec<Value> = serde_json::from_slice(&t.stdout).unwrap();
    assert_eq!(targets.len(), 2);
    let canon = |p: &str| {
        Path::new(p)
            .canonicalize()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    for (i, tg) in targets.iter().enumerate() {
        let rank = format!("{root}/rank{i}_ascend_pt");
        assert_eq!(tg["target"], canon(&rank));
        assert_eq!(tg["kind"], "ascend");
        assert_eq!(tg["rank_id"], i);
        assert_eq!(tg["role"], "level1");
        assert_eq!(tg["root"], canon(&root));
        assert_eq!(tg["paths"], serde_json::json!([canon(&rank)]));
        // One rank folder alone, as a task would give it (with the targets' root).
        let o = proflens(&[
            "summarize",
            "--root",
            &root,
            tg["paths"][0].as_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let l = lines(&o.stdout);
        assert_eq!(l.len(), 1);
        let s = &l[0];
        for k in ["target", "kind", "rank_id", "role"] {
            assert_eq!(s[k], tg[k], "{k}");
        }
        assert_eq!(s["status"], "ok");
        assert!(o.stdout.len() <= 64 * 1024);
        let a = anomaly(&rank, &dir);
        assert_eq!(a.len(), 1);
        assert_steps_equal(s, &a[0]);
        // The top bubble is the anomaly JSON's longest window.
        let longest = a[0]["anomaly_discovery"]["bubble_windows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["duration_ms"].as_f64().unwrap())
            .fold(0.0, f64::max);
        assert_eq!(
            s["top_bubbles"][0]["duration_ms"].as_f64().unwrap(),
            longest
        );
        // Memory: level1 has operator_memory.csv.
        assert_eq!(s["memory"]["component"], "PTA");
        assert!(s["memory"]["peak_allocated_mb"].as_f64().unwrap() > 0.0);
    }
    // Without --root the role comes from the folder alone (no parent folder): the targets'
    // root is what makes them agree.
    let o = proflens(&["summarize", &format!("{root}/rank0_ascend_pt")]);
    assert_eq!(lines(&o.stdout)[0]["role"], "unknown");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn kineto_trace_and_snapshot_pickle_are_summarised() {
    let dir = tmp("gpu_snap");
    let trace = format!(
        "{FIX}ascend/facebookresearch__HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
    );
    let pickle = format!("{FIX}torch_snapshots/ZidongLiu_DeComFL__memory.pickle");
    let o = proflens(&["summarize", &trace, &pickle]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let l = lines(&o.stdout);
    assert_eq!(l.len(), 2);
    assert_eq!(
        (l[0]["kind"].as_str(), l[1]["kind"].as_str()),
        (Some("kineto"), Some("snapshot"))
    );
    let a = anomaly(&trace, &dir);
    assert_steps_equal(&l[0], &a[0]);
    // Snapshot peaks: the snapshot JSON's points, same names and values.
    let j = dir.join("snap.json");
    assert!(
        proflens(&["snapshot", &pickle, "--json", j.to_str().unwrap()])
            .status
            .success()
    );
    let snap: Value = serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap();
    let points = snap["devices"][0]["points"].as_array().unwrap();
    let peaks = l[1]["snapshots"][0]["peaks"].as_array().unwrap();
    assert_eq!(peaks.len(), points.len().min(10));
    for (p, q) in peaks.iter().zip(points) {
        for k in ["kind", "index", "height_bytes"] {
            assert_eq!(p[k], q[k], "{k}");
        }
    }
    assert_eq!(peaks[0]["kind"], "global_peak");
    assert_eq!(l[1]["snapshots"][0]["peak_bytes"], peaks[0]["height_bytes"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(unix)]
#[test]
fn a_rank_with_nothing_usable_is_a_failed_line_and_bad_part_lines_are_located() {
    let dir = tmp("failed");
    let run = dir.join("run");
    std::fs::create_dir_all(run.join("rank9_ascend_pt")).unwrap();
    std::fs::write(run.join("rank9_ascend_pt/profiler_info_9.json"), "{}").unwrap();
    std::os::unix::fs::symlink(
        format!("{FIX}{LEVEL1}/rank0_ascend_pt"),
        run.join("rank0_ascend_pt"),
    )
    .unwrap();
    let part = dir.join("part.jsonl");
    let o = proflens(&[
        "summarize",
        run.to_str().unwrap(),
        "--out",
        part.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&part).unwrap();
    let l = lines(text.as_bytes());
    assert_eq!(l.len(), 2);
    assert_eq!(
        (l[0]["rank_id"].as_i64(), l[0]["status"].as_str()),
        (Some(0), Some("ok"))
    );
    assert_eq!(
        (l[1]["rank_id"].as_i64(), l[1]["status"].as_str()),
        (Some(9), Some("failed"))
    );
    assert_eq!(l[1]["problems"][0]["code"], "CLUSTER-RANK-001");
    assert!(l[1]["problems"][0]["message"]
        .as_str()
        .unwrap()
        .starts_with("nothing analysed: no kernel_details.csv"));
    // A second part: a garbage line, a cut line, a repeated target, on stdin.
    let first = text.lines().next().unwrap();
    let bad = format!("not json\n\n{}\n{first}\n", &first[..first.len() / 2]);
    let out = dir.join("summary.json.gz");
    let mut child = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args([
            "reduce",
            part.to_str().unwrap(),
            "-",
            "--out",
            out.to_str().unwrap(),
            "--gzip",
            "--run-mode",
            "local",
            "--tasks",
            "3",
            "--wall-s",
            "1.5",
            "--root",
            run.to_str().unwrap(),
        ])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::{Read, Write};
    child
        .stdin
        .take()
        .unwrap()
        .write_all(bad.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&out).unwrap())
        .read_to_end(&mut json)
        .unwrap();
    let s = proflens::protocol::cluster::ClusterSummary::from_slice(&json).unwrap();
    assert_eq!(s.rank_count, 2);
    assert_eq!(s.run.mode, "local");
    assert_eq!((s.run.tasks, s.run.wall_s), (3, Some(1.5)));
    let got: Vec<(&str, &str, &str)> = s
        .problems
        .iter()
        .map(|p| (p.code.as_str(), p.file.as_str(), p.location.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("CLUSTER-PART-001", "-", "line 1"),
            ("CLUSTER-PART-001", "-", "line 3"),
            ("CLUSTER-PART-003", "-", "line 4"),
        ]
    );
    assert!(s.problems[0]
        .message
        .starts_with("not a rank summary (expected"));
    // The failed rank is kept, not compared; rank 0 is then alone: no peer, no robust z
    // (`null`, never 0).
    assert_eq!(s.cross_rank.len(), 1);
    assert_eq!(s.cross_rank[0].robust_z, None);
    assert!(!s.cross_rank[0].slow);
    let text = String::from_utf8(json.clone()).unwrap();
    assert!(text.contains(r#""bubble_count_avg":"#), "{text}");
    assert!(text.contains(r#""robust_z":null,"slow":false"#), "{text}");
    assert!(s.slow_ranks.is_empty());
    std::fs::remove_dir_all(dir).unwrap();
}

/// 12 ranks of `gen_ascend.py`; rank 0 regenerated alone with `--kernel-scale 3` (the same
/// seed and folder name: the same host program, 10× longer kernels), the straggler.
fn generate_run(dir: &Path) -> PathBuf {
    let gen = |out: &Path, ranks: &str, scale: &str| {
        let o = Command::new("python3")
            .args([GEN, "--out", out.to_str().unwrap(), "--ranks", ranks])
            .args(["--steps", "3", "--layers", "2", "--kernel-scale", scale])
            .arg("--quiet")
            .output()
            .expect("python3 runs gen_ascend.py");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let run = dir.join("run");
    let slow = dir.join("slow");
    gen(&run, "12", "0.3");
    gen(&slow, "1", "3");
    let role = run.join("actor_update");
    let mut names: Vec<_> = std::fs::read_dir(&role)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    let rank0 = std::fs::read_dir(slow.join("actor_update"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert!(
        names.contains(&rank0.file_name()),
        "rank 0 has the same folder name"
    );
    std::fs::remove_dir_all(role.join(rank0.file_name())).unwrap();
    std::fs::rename(rank0.path(), role.join(rank0.file_name())).unwrap();
    run
}

#[test]
fn twelve_generated_ranks_one_straggler_end_to_end() {
    let dir = tmp("twelve");
    let run = generate_run(&dir);
    let root = run.to_str().unwrap();
    let t = proflens(&["targets", root, "--json"]);
    let targets: Vec<Value> = serde_json::from_slice(&t.stdout).unwrap();
    assert_eq!(targets.len(), 12);
    // Two tasks, as the driver would split them.
    let mut parts = Vec::new();
    for (k, task) in targets.chunks(6).enumerate() {
        let part = dir.join(format!("part{k}.jsonl"));
        let mut args = vec!["summarize", "--root", root, "--out", part.to_str().unwrap()];
        args.extend(task.iter().map(|t| t["paths"][0].as_str().unwrap()));
        let o = proflens(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        for l in std::fs::read_to_string(&part).unwrap().lines() {
            assert!(l.len() <= 64 * 1024);
        }
        parts.push(part);
    }
    let out = dir.join("summary.json");
    let mut args = vec!["reduce", "--out", out.to_str().unwrap()];
    args.extend(parts.iter().map(|p| p.to_str().unwrap()));
    let o = proflens(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let ranks = s["ranks"].as_array().unwrap();
    let ids: Vec<i64> = ranks
        .iter()
        .map(|r| r["rank_id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, (0..12).collect::<Vec<i64>>());
    // Per-rank steps equal `proflens anomaly` on the whole run (its array is in rank order).
    let a = anomaly(root, &dir);
    assert_eq!(a.len(), 12);
    for (r, x) in ranks.iter().zip(&a) {
        assert_eq!(r["rank_id"], x["rank_id"]);
        assert_eq!(r["steps"].as_array().unwrap().len(), 3);
        assert_steps_equal(r, x);
    }
    assert_eq!(s["slow_ranks"], serde_json::json!([0]));
    assert_eq!(s["cross_rank"].as_array().unwrap().len(), 12);
    assert_eq!(
        s["matrices"]["step_ids"],
        serde_json::json!(["ProfilerStep#11", "ProfilerStep#12", "ProfilerStep#13"])
    );
    assert_eq!(
        s["matrices"]["service_ms"][0][1],
        ranks[0]["steps"][1]["service_ms"]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_cluster_summary_flags_the_slow_link_of_summarised_ranks() {
    // Each rank's summary carries its ops' data sizes (read from its trace_view.json), so the
    // reduce flags fixtures/comm_slow_link's link with communication.md §5.5's values.
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/comm_slow_link");
    let dir = tmp("slow_link");
    let parts = dir.join("parts.jsonl");
    let out = dir.join("summary.json");
    let s = proflens(&[
        "summarize",
        root,
        "--root",
        root,
        "--out",
        parts.to_str().unwrap(),
    ]);
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let r = proflens(&[
        "reduce",
        parts.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let links = doc["comm_slow_links"].as_array().expect("comm_slow_links");
    assert_eq!(links.len(), 1, "{links:?}");
    let l = &links[0];
    assert_eq!(l["name"], "hcom_allReduce_2_1024");
    assert_eq!(l["count"], 24);
    assert_eq!(l["std_ns"].as_f64(), Some(1129.3194051465598));
    assert_eq!(l["offset_ratio"].as_f64(), Some(3.2467932897963596));
    assert_eq!(l["ops"], serde_json::json!(["hcom_allReduce__111_5_1"]));
    let _ = std::fs::remove_dir_all(&dir);
}
