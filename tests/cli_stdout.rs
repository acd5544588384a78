//! Output to a reader that went away (`proflens comm … | head -c 100`): a located write error
//! and exit 2, never a panic (exit 101).

use std::process::{Command, Stdio};

const ST: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/Ascend__msinsight/test/st/level2"
);

/// Runs `args` with stdout a pipe whose reading end is already closed.
fn into_closed_pipe(args: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(args)
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_stdout_is_a_write_error_not_a_panic() {
    for args in [
        &["comm", ST][..],
        &["comm", ST, "--json", "-"][..],
        &["targets", ST, "--json"][..],
    ] {
        let (code, err) = into_closed_pipe(args);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("write failed"), "{args:?}: {err}");
    }
}

#[test]
fn comm_json_to_a_file_ends_with_the_newline_of_stdout() {
    let dir = std::env::temp_dir().join(format!("proflens_stdout_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("comm.json");
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_proflens"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0));
        o.stdout
    };
    let stdout = run(&["comm", ST, "--json", "-"]);
    run(&["comm", ST, "--json", f.to_str().unwrap()]);
    assert_eq!(std::fs::read(&f).unwrap(), stdout);
    assert!(stdout.ends_with(b"}\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn memory_on_a_gpu_trace_says_which_command_reads_it_and_no_empty_location() {
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz"
    );
    let out = std::env::temp_dir().join(format!("proflens_mem_none_{}.csv", std::process::id()));
    let _ = std::fs::remove_file(&out);
    let o = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(["memory", trace, "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("holds no Ascend rank folder"), "{err}");
    // Nothing collected: no table, not an empty one (no --out file holding only a header).
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!out.exists(), "{err}");
    assert!(err.contains("nothing written"), "{err}");
    assert!(
        err.contains("`proflens snapshot`") && err.contains("`proflens anomaly`"),
        "{err}"
    );
    assert!(
        err.contains("error MEM-RUN-001: No valid data collected from any rank"),
        "{err}"
    );
    assert!(!err.contains(": : "), "{err}");
}

/// `proflens analyze --quiet --out-dir OUT` on a folder `run` holding the real TraceLens traces
/// `files` (source path under the fixtures, name in the folder): the report files written,
/// sorted, and the output folder.
fn reports_of_traces(tag: &str, files: &[(&str, &str)]) -> (Vec<String>, std::path::PathBuf) {
    let fix = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/real_world/AMD-AGI__TraceLens/tests/traces"
    );
    let dir = std::env::temp_dir().join(format!("proflens_{tag}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let drop = dir.join("run");
    std::fs::create_dir_all(&drop).unwrap();
    for (from, name) in files {
        std::fs::copy(format!("{fix}/{from}"), drop.join(name)).unwrap();
    }
    let out = dir.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(["analyze", "--quiet", "--out-dir"])
        .arg(&out)
        .arg(&drop)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut names: Vec<String> = std::fs::read_dir(out.join("reports"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    (names, dir)
}

/// Two traces of one rank of one run in one folder (the real TraceLens B200 trace under two
/// names, both `distributedInfo.rank` 0: `GPU-DISC-002`, each analysed on its own). Their report
/// files were named alike (`…_rank0.md`, `kernels_…_rank0.csv`), so the second overwrote the
/// first without a word; now each name adds the trace's own, and every file is kept.
#[test]
fn two_traces_of_one_rank_keep_their_own_report_files() {
    let b200 = "b200/eager_trace.json.gz";
    let (names, dir) = reports_of_traces(
        "dup_rank",
        &[(b200, "eager_trace.json.gz"), (b200, "again.json.gz")],
    );
    assert_eq!(
        names,
        [
            "anomaly_report_run_rank0_again.md",
            "anomaly_report_run_rank0_eager_trace.md",
            "kernels_run_rank0_again.csv",
            "kernels_run_rank0_eager_trace.csv",
            "model_architecture_report_run_rank0_again.md",
            "model_architecture_report_run_rank0_eager_trace.md",
        ]
    );
    let kernels = |n: &str| std::fs::read_to_string(dir.join("out/reports").join(n)).unwrap();
    let first = kernels("kernels_run_rank0_eager_trace.csv");
    assert!(first.contains("multimem_all_reduce"), "B200 kernels");
    assert_eq!(first, kernels("kernels_run_rank0_again.csv"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Traces of two runs in one folder (the real TraceLens B200 and MI300X traces, both rank 0 of
/// world 8) are not peers: each is its own role (`GPU-DISC-006`), named in its files, and each
/// file holds its own trace's kernels.
#[test]
fn traces_of_two_runs_in_one_folder_are_reported_as_two_roles() {
    let (names, dir) = reports_of_traces(
        "two_runs",
        &[
            ("b200/eager_trace.json.gz", "eager_trace.json.gz"),
            (
                "mi300/resnet_act_checkpoint.json.gz",
                "resnet_act_checkpoint.json.gz",
            ),
        ],
    );
    let b = "run_run_NVIDIA_B200_world_8_rank0";
    let m = "run_run_AMD_Instinct_MI300X_world_8_rank0";
    assert_eq!(
        names,
        [
            format!("anomaly_report_{m}.md"),
            format!("anomaly_report_{b}.md"),
            format!("kernels_{m}.csv"),
            format!("kernels_{b}.csv"),
            format!("model_architecture_report_{m}.md"),
            format!("model_architecture_report_{b}.md"),
        ]
    );
    let kernels = |n: String| std::fs::read_to_string(dir.join("out/reports").join(n)).unwrap();
    assert!(
        kernels(format!("kernels_{b}.csv")).contains("multimem_all_reduce"),
        "B200 kernels"
    );
    assert!(
        kernels(format!("kernels_{m}.csv")).contains("ncclDevKernel_Generic"),
        "MI300X kernels"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
