//! Steps and bubbles on GPU ranks through the anomaly pipeline (anomaly.md on GPU
//! streams), on the real PyTorch profiler traces: the device busy union over all streams and
//! the five longest global gaps with the launch lead of their next kernel equal an independent
//! Python reading (`tests/reference/kineto_ref.py`); the host-only L20 traces of rl_insight are
//! analysed (HTA fails on them), and `proflens anomaly` on a GPU folder exits 0.

mod engine_support;

use engine_support::anomaly_of_folder as analyse;

use std::ops::ControlFlow;
use std::path::Path;
use std::process::Command;

use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::analysis::launch_timing::Timing;
use proflens::cli::fs_opener::FsOpener;
use proflens::ingest::inventory::Inventory;
use proflens::parse::metadata::read_side_files;
use serde_json::Value;

const HTA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/"
);
const RLI: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/rl_insight/data/recipe/torch_data/torch_profile"
);

/// The JSON that `tests/reference/<script>` prints for the trace at `path`.
fn python_reading(script: &str, path: &str) -> Value {
    let script = format!("{}/tests/reference/{script}", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(script)
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn reference(path: &str) -> Value {
    python_reading("kineto_ref.py", path)
}

#[test]
fn busy_union_steps_and_global_gaps_equal_the_python_reading() {
    for (dir, file) in [
        (
            "ns_resolution_trace",
            "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
        ),
        ("nccl_parser_config", "nccl_data.json.gz"),
        ("amd_trace", "mi250_minitoy_train_ROCm6_2_kineto.json.gz"),
        (
            "critical_path/alexnet",
            "benchmark_result_2869224_1695835535_trace.json.gz",
        ),
        ("negative_queue_length_values_check", "rank0.json.gz"),
    ] {
        let ranks = analyse(&format!("{HTA}{dir}"));
        assert_eq!(ranks.len(), 1, "{dir}");
        let r = &ranks[0];
        let want = reference(&format!("{HTA}{dir}/{file}"));
        assert_eq!(
            r.result.global.busy_ns,
            want["busy_union_ns"].as_i64().unwrap(),
            "{dir}"
        );
        let steps: Vec<&str> = r.result.steps.iter().map(|s| s.step_id.as_str()).collect();
        let mut want_steps: Vec<&str> = want["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s[0].as_str().unwrap())
            .collect();
        if want_steps.is_empty() {
            want_steps.push("pseudo_step_0"); // no ProfilerStep#: the §3.1 fallback
        }
        assert_eq!(steps, want_steps, "{dir}");
        let mut got: Vec<(i64, i64, Option<i64>)> = r
            .result
            .bubbles
            .iter()
            .filter(|b| b.window.step.is_none())
            .map(|b| {
                (
                    b.window.interval.start_ns,
                    b.window.interval.end_ns,
                    b.next_launch.map(|n| n.lead_ns),
                )
            })
            .collect();
        got.sort();
        let mut top: Vec<(i64, i64, Option<i64>)> = want["top_gaps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                (
                    g[0].as_i64().unwrap(),
                    g[1].as_i64().unwrap(),
                    g[2].as_i64(),
                )
            })
            .collect();
        top.sort();
        assert_eq!(got, top, "{dir}");
        assert!(r.gpu.is_some());
        assert!(r
            .result
            .limitations
            .iter()
            .any(|l| l.starts_with("GPU trace (PyTorch profiler): Ascend-only rules")));
        assert!(!r
            .result
            .limitations
            .iter()
            .any(|l| l.starts_with("no communication.json")));
    }
}

/// Exact values read by hand from the nccl_parser_config trace (2 ranks' job, rank 0 file).
#[test]
fn nccl_trace_steps_and_the_longest_bubble() {
    let ranks = analyse(&format!("{HTA}nccl_parser_config"));
    let r = &ranks[0];
    assert_eq!(r.result.step_detection_method(), "marker");
    let s = &r.result.steps[0];
    assert_eq!(s.step_id, "ProfilerStep#4");
    // [start of #4, start of #5) — anomaly.md §3.2
    assert_eq!(
        (s.window.start_ns, s.window.end_ns),
        (4_458_676_416_788_066, 4_458_676_639_291_351)
    );
    assert_eq!(s.metrics.prelaunch_ns, 6_092_115);
    let b = r
        .result
        .bubbles
        .iter()
        .find(|b| b.window.bubble_id == "global:global:0")
        .unwrap();
    assert_eq!(b.window.interval.len_ns(), 15_718_606);
    let n = b.next_launch.unwrap();
    assert_eq!((n.timing, n.lead_ns), (Timing::LateHostBound, 15_682_922));
    // one launch inside: the late launch of the kernel that ends it (h2d_flow_count on GPUs)
    assert_eq!(b.evidence.h2d_flow_count, 1);
    // NCCL kernels are communication kernels on their own stream
    let comm = r.kernels.comm().iter().filter(|&&c| c).count();
    assert!(comm > 0);
    let streams: std::collections::BTreeSet<&str> = (0..r.kernels.len())
        .map(|i| r.kernels.stream_of(i))
        .collect();
    assert_eq!(streams.into_iter().collect::<Vec<_>>(), vec!["40", "7"]); // gpu-traces.md §4
}

#[test]
fn rl_insight_host_only_traces_are_analysed_not_errors() {
    let ranks = analyse(RLI);
    assert_eq!(ranks.len(), 6);
    for r in &ranks {
        assert!(r.kernels.is_empty());
        assert!(r.problems.kept().iter().any(|p| p.code == "GPU-RUN-001"));
        assert!(
            r.problems
                .kept()
                .iter()
                .all(|p| p.severity != proflens::base::Severity::Error),
            "{:?}",
            r.meta.problems
        );
        assert!(r
            .result
            .limitations
            .iter()
            .any(|l| l.starts_with("host-only trace")));
    }
    let roles: Vec<(Option<&str>, Option<i64>)> = ranks
        .iter()
        .map(|r| (r.meta.role.as_deref(), r.meta.rank_id))
        .collect();
    assert_eq!(
        roles,
        vec![
            (Some("actor_compute_log_prob"), Some(0)),
            (Some("actor_compute_log_prob"), Some(1)),
            (Some("actor_update"), Some(0)),
            (Some("actor_update"), Some(1)),
            (Some("agent_loop_rollout_replica_0"), Some(0)),
            (Some("agent_loop_rollout_replica_0"), Some(1)),
        ]
    );
}

/// The terminal headline of `proflens anomaly` on a host-only GPU trace names the GPU problem
/// and its reason: the Ascend wording ("see the ANOM-FILE-002 problem on stderr") pointed at
/// a problem these ranks never have (they carry GPU-RUN-001, an info the CLI does not print).
#[test]
fn host_only_headline_names_the_gpu_reason() {
    let ranks = analyse(&format!("{RLI}/actor_update"));
    let r = &ranks[0];
    let h = proflens::report::anomaly_md::headline(&r.kernels, &r.result, &r.meta);
    assert_eq!(
        h,
        "rank 0 (actor_update/prof_rank-0_031904.json.gz): steps & bubbles cannot run (GPU-RUN-001): \
         host-only trace: no device events (kernel, gpu_memcpy, gpu_memset) among its 1 host events \
         and 0 steps — profiled without CUDA/ROCm activities or on a process that launched no GPU \
         work; steps and host events only, no busy union and no bubbles"
    );
    assert!(!h.contains("ANOM-FILE-002"));
}

#[test]
fn cli_anomaly_on_a_gpu_folder_exits_0() {
    let out = std::env::temp_dir().join(format!("proflens_gpu_{}.json", std::process::id()));
    let o = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(["anomaly", RLI, "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 6);
    let _ = std::fs::remove_file(out);
}

fn flow_reference(path: &str) -> Value {
    python_reading("gpu_flow_count_ref.py", path)
}

/// `h2d_flow_count` on GPU ranks (the GPU rule, docs/rules/anomaly.md §5.6): the device ops
/// whose launching runtime call (same `correlation`) starts inside the window. Every emitted
/// window equals `tests/reference/gpu_flow_count_ref.py` (a window that is a whole device gap
/// by the script's own gap list, any other by its launch list), and the totals are the exact
/// values of that reading. The Ascend-style rule (flow `f` ends inside) would give 0 here.
#[test]
fn h2d_flow_count_is_the_launches_inside_each_window() {
    // (folder, file, emitted windows, whole-gap windows, Σ count, windows with count > 0,
    //  flow ends of paired flows inside any gap, lone flow ends inside any gap)
    for (dir, file, want) in [
        (
            "nccl_parser_config",
            "nccl_data.json.gz",
            [160, 155, 158, 158, 0, 3731],
        ),
        (
            "ns_resolution_trace",
            "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
            [14, 13, 10, 10, 0, 177],
        ),
        // flows to `cuda_sync` events: 14 paired `f` ends inside gaps, not launches of device ops
        (
            "critical_path/alexnet",
            "benchmark_result_2869224_1695835535_trace.json.gz",
            [38, 38, 39, 38, 14, 120],
        ),
    ] {
        let ranks = analyse(&format!("{HTA}{dir}"));
        let r = &ranks[0];
        let reference = flow_reference(&format!("{HTA}{dir}/{file}"));
        let launches: Vec<i64> = reference["launches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        let gaps: std::collections::HashMap<(i64, i64), usize> = reference["gaps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                let g: Vec<i64> = g
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_i64().unwrap())
                    .collect();
                ((g[0], g[1]), g[2] as usize)
            })
            .collect();
        let (mut whole, mut sum, mut nonzero) = (0, 0, 0);
        for b in &r.result.bubbles {
            let w = b.window.interval;
            let expected = match gaps.get(&(w.start_ns, w.end_ns)) {
                Some(&n) => {
                    whole += 1;
                    n
                }
                None => launches
                    .iter()
                    .filter(|&&t| w.start_ns <= t && t < w.end_ns)
                    .count(),
            };
            assert_eq!(
                b.evidence.h2d_flow_count, expected,
                "{dir} {}",
                b.window.bubble_id
            );
            sum += expected;
            nonzero += usize::from(expected > 0);
        }
        let f = &reference["f_ends_in_gaps"];
        let got = [
            r.result.bubbles.len(),
            whole,
            sum,
            nonzero,
            f["paired"].as_u64().unwrap() as usize,
            f["lone"].as_u64().unwrap() as usize,
        ];
        assert_eq!(got, want, "{dir}");
    }
}

/// The JSON of `proflens anomaly` carries the same `h2d_flow_count` per window as the analysis
/// (ns_resolution: 10 windows with launches inside, 10 launches in all).
#[test]
fn cli_json_prints_the_gpu_h2d_flow_count() {
    let dir = format!("{HTA}ns_resolution_trace");
    let ranks = analyse(&dir);
    let want: Vec<(String, u64)> = ranks[0]
        .result
        .bubbles
        .iter()
        .map(|b| (b.window.bubble_id.clone(), b.evidence.h2d_flow_count as u64))
        .collect();
    let out = std::env::temp_dir().join(format!("proflens_gpu_h2d_{}.json", std::process::id()));
    let o = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(["anomaly", &dir, "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let _ = std::fs::remove_file(out);
    let got: Vec<(String, u64)> = v[0]["anomaly_discovery"]["bubble_windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["bubble_id"].as_str().unwrap().to_string(),
                b["h2d_flow_count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(got.iter().filter(|(_, n)| *n > 0).count(), 10);
    assert_eq!(got.iter().map(|(_, n)| n).sum::<u64>(), 10);
}

/// A merged trace of three ranks (TraceLens' trace fusion: `pid` = rank × 10^8 + pid,
/// `args.rank`, only `traceEvents`) is split into its three ranks, each with its own two steps
/// and kernels, with one warning that names the ranks and how they were told apart
/// (gpu-traces.md §6); the same trace of one rank is not flagged.
#[test]
fn merged_multi_rank_trace_is_split_into_its_ranks_with_a_warning() {
    fn trace(ranks: &[i64]) -> String {
        let mut evs = Vec::new();
        for &r in ranks {
            let (host, dev) = (r * 100_000_000 + 4242, r * 100_000_000 + r);
            for s in 0..2 {
                let t = 1_000 * s + 10 * r;
                evs.push(format!(r#"{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{s}", "pid": {host}, "tid": 1, "ts": {t}, "dur": 900, "args": {{"rank": {r}}}}}"#));
                evs.push(format!(r#"{{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": {host}, "tid": 1, "ts": {}, "dur": 50, "args": {{"External id": {s}, "rank": {r}}}}}"#, t + 10));
                evs.push(format!(r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": {host}, "tid": 1, "ts": {}, "dur": 5, "args": {{"correlation": {}, "External id": {s}, "rank": {r}}}}}"#, t + 20, 100 * r + s));
                evs.push(format!(r#"{{"ph": "X", "cat": "kernel", "name": "gemm", "pid": {dev}, "tid": 7, "ts": {}, "dur": 300, "args": {{"device": {r}, "stream": 7, "correlation": {}, "External id": {s}, "rank": {r}}}}}"#, t + 40, 100 * r + s));
            }
        }
        format!("{{\"traceEvents\": [\n{}\n]}}", evs.join(",\n"))
    }
    let run = |text: String| {
        let mut m = proflens::ingest::MemOpener::new();
        m.add("run/merged.pt.trace.json", text.into_bytes());
        let mut inv = Inventory::from_paths(&m.list());
        read_side_files(&mut inv, &m);
        let (v, _) =
            engine_support::anomaly_run(&inv, &m, &AnomalyConfig::spec_defaults(), &mut |_| {
                ControlFlow::Continue(())
            })
            .unwrap();
        v
    };
    let ranks = run(trace(&[0, 1, 2]));
    assert_eq!(ranks.len(), 3);
    for (k, r) in ranks.iter().enumerate() {
        assert_eq!(r.meta.rank_id, Some(k as i64));
        assert_eq!(r.kernels.len(), 2);
        // Rank r's steps start 10·r µs after rank 0's: its own markers, not the others'.
        let starts: Vec<i64> = r.result.steps.iter().map(|s| s.window.start_ns).collect();
        let base = 10_000 * k as i64;
        assert_eq!(starts, vec![base, 1_000_000 + base]);
    }
    assert!(ranks[1..]
        .iter()
        .all(|r| r.problems.count("GPU-TV-020") == 0));
    let r = &ranks[0];
    let merged: Vec<_> = r
        .problems
        .kept()
        .iter()
        .filter(|p| p.code == "GPU-TV-020")
        .collect();
    assert_eq!(merged.len(), 1, "{:?}", r.problems.kept());
    assert_eq!(merged[0].severity, proflens::base::Severity::Warning);
    assert!(merged[0].message.contains("3 ranks (0, 1, 2)"));
    assert!(merged[0].message.contains("args.rank"));
    assert!(merged[0].message.contains("split into its 3 ranks"));
    let one = run(trace(&[1]));
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].kernels.len(), 2);
    assert!(one[0]
        .problems
        .kept()
        .iter()
        .all(|p| p.code != "GPU-TV-020"));
}

/// Three steps of 1000 µs whose first 600 µs the DataLoader spends in `next()` (the span
/// PyTorch records, `enumerate(DataLoader)#…`, enclosing one traced collate op), then one
/// 300 µs kernel: each step's prelaunch bubble (650 µs) lies 600/650 under the DataLoader
/// (anomaly.md §5.7.1). The labels stay §5.8's (the leaf-only host coverage is 105/650, the
/// collate op and the launch: `possible_host_launch_lag`); the bubble detail says the step
/// waited for its next batch and the summary's evidence quotes `input=0.92`. In `script` mode
/// there is no input class.
#[test]
fn a_step_waiting_on_the_dataloader_is_named_beside_its_labels() {
    use proflens::analysis::anomaly_config::Compat;
    use proflens::analysis::host_evidence::Label;
    let mut ev = Vec::new();
    for s in 0..3u64 {
        let t = 10_000 + s * 1000;
        ev.push(format!(r#"{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{s}", "pid": 1, "tid": 1, "ts": {t}, "dur": 1000}}"#));
        ev.push(format!(r#"{{"ph": "X", "cat": "user_annotation", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "pid": 1, "tid": 1, "ts": {}, "dur": 600}}"#, t + 1));
        ev.push(format!(r#"{{"ph": "X", "cat": "cpu_op", "name": "aten::stack", "pid": 1, "tid": 1, "ts": {}, "dur": 100}}"#, t + 500));
        ev.push(format!(r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {}, "dur": 5, "args": {{"correlation": {s}}}}}"#, t + 640));
        ev.push(format!(r#"{{"ph": "X", "cat": "kernel", "name": "conv", "pid": 0, "tid": 7, "ts": {}, "dur": 300, "args": {{"device": 0, "stream": 7, "correlation": {s}}}}}"#, t + 650));
    }
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dataloader_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("rank0.pt.trace.json"),
        format!(
            r#"{{"deviceProperties": [{{"id": 0, "name": "NVIDIA H100"}}], "traceEvents": [{}]}}"#,
            ev.join(",\n")
        ),
    )
    .unwrap();
    let run = |cfg: &AnomalyConfig| {
        let (opener, files) = FsOpener::walk(&dir).unwrap();
        let mut inv = Inventory::from_paths(&files);
        read_side_files(&mut inv, &opener);
        let ranks =
            engine_support::anomaly_run(&inv, &opener, cfg, &mut |_| ControlFlow::Continue(()))
                .unwrap()
                .0;
        ranks[0]
            .result
            .bubbles
            .iter()
            .filter(|b| b.window.bubble_id.ends_with(":prelaunch:0"))
            .map(|b| {
                (
                    b.window.bubble_id.clone(),
                    b.window.interval.len_ns(),
                    b.evidence.input,
                    b.evidence.host,
                    b.labels.clone(),
                    proflens::views::anomaly_bubbles::label_reasons(b, cfg),
                )
            })
            .collect::<Vec<_>>()
    };
    let rule = run(&AnomalyConfig::spec_defaults());
    let input_line = "input pipeline: the DataLoader's next() (enumerate(DataLoader)#…) covers 0.923 of the window (≥ 0.5): the step waited for its next batch";
    let launch_line =
        "next kernel launched 0.640 ms after the device went idle: late launch (host-bound)";
    let want: Vec<_> = (0..3)
        .map(|s| {
            // The first step's window touches the capture boundary (§5.10.3).
            let (label, reason) = if s == 0 {
                (Label::InsufficientEvidence, "insufficient_evidence: the window touches the capture boundary, host-side labels are not given there (the host events before the capture are unknown)")
            } else {
                (Label::HostLaunchLag, "possible_host_launch_lag: no direct evidence and host coverage 0.162 ≥ 0.1")
            };
            (
                format!("ProfilerStep#{s}:prelaunch:0"),
                650_000,
                Some(600.0 / 650.0),
                Some(105.0 / 650.0),
                vec![label],
                vec![reason.to_string(), input_line.to_string(), launch_line.to_string()],
            )
        })
        .collect();
    assert_eq!(rule, want);
    // The summary quotes the input ratio of its evidence (anomaly.md §5.9).
    let top = {
        let (opener, files) = FsOpener::walk(&dir).unwrap();
        let mut inv = Inventory::from_paths(&files);
        read_side_files(&mut inv, &opener);
        let ranks = engine_support::anomaly_run(
            &inv,
            &opener,
            &AnomalyConfig::spec_defaults(),
            &mut |_| ControlFlow::Continue(()),
        )
        .unwrap()
        .0;
        let e = ranks[0].result.soft_root_cause_summary[0].clone();
        (e.label, e.confidence, e.evidence[0].clone())
    };
    assert_eq!(
        top,
        (
            Label::HostLaunchLag,
            "medium",
            "bubble ProfilerStep#1:prelaunch:0 sync=0.00 comm=0.00 host=0.16 input=0.92"
                .to_string()
        )
    );
    let script = run(&AnomalyConfig {
        compat: Compat::Script,
        ..AnomalyConfig::spec_defaults()
    });
    assert!(
        script
            .iter()
            .all(|b| b.2.is_none() && !b.5.iter().any(|r| r.starts_with("input pipeline"))),
        "{script:?}"
    );
}
