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
