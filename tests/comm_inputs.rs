//! What the communication analysis makes of its inputs beside the numbers (MSI-ST): a `--step`
//! no rank has, and `ASCEND_PROFILER_OUTPUT` folders given to the CLI directly.

use std::ops::ControlFlow;
use std::path::PathBuf;

use proflens::analysis::comm::CommOptions;
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::{self, Plan};
use proflens::ingest::inventory::Inventory;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/ascend/Ascend__msinsight/"
    ))
    .join(rel)
}

#[test]
fn a_step_no_rank_has_is_a_warning_naming_the_steps_present() {
    let dir = fixture("test/st/level2");
    let (opener, files) = FsOpener::walk(&dir).unwrap();
    let mut inv = Inventory::from_paths(&files);
    proflens::parse::metadata::read_side_files(&mut inv, &opener);
    for (step, warned) in [("99", true), ("step13", false), ("13", false)] {
        let opts = CommOptions {
            parity: false,
            step: Some(step.into()),
        };
        let plan = Plan {
            comm: Some(opts.clone()),
            ..Plan::none()
        };
        let store = engine::run(&inv, &opener, plan, &mut |_| ControlFlow::Continue(()));
        let (rep, problems) = proflens::engine::export::comm::report(&store, &[], &opts).unwrap();
        let w: Vec<_> = problems
            .kept()
            .iter()
            .filter(|p| p.code == proflens::analysis::comm::STEP_ABSENT)
            .map(|p| p.message.clone())
            .collect();
        assert_eq!(!w.is_empty(), warned, "{step}: {w:?}");
        if warned {
            assert_eq!(
                w,
                ["no rank has a step 99: the steps present are step13; the tables are empty"]
            );
            assert!(rep.time_summary.is_empty());
        } else {
            assert_eq!(rep.time_summary.len(), 17);
        }
    }
}

#[test]
fn ascend_profiler_output_folders_given_directly_keep_their_rank_folders() {
    // Two ranks' ASCEND_PROFILER_OUTPUT folders given together (or one file in one) are listed
    // with their rank folder's name: two ranks, their ids from the folder names (both used to be
    // listed as `ASCEND_PROFILER_OUTPUT/…`, the second silently shadowed by the first).
    let st = fixture("test/st/level2");
    let out = |inputs: &[PathBuf]| -> serde_json::Value {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_proflens"))
            .arg("comm")
            .args(inputs)
            .args(["--json", "-"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let apo = |r: u32| st.join(format!("rank_{r}_ascend_pt/ASCEND_PROFILER_OUTPUT"));
    assert_eq!(out(&[apo(1), apo(3)])["ranks"], serde_json::json!([1, 3]));
    // One output folder alone is the rank folder itself, as a drop of it in the page.
    assert_eq!(out(&[apo(3)])["ranks"], serde_json::json!([0]));
    assert_eq!(
        out(&[apo(1).join("communication.json")])["ranks"],
        serde_json::json!([1])
    );
    // The rank folders themselves: the same document as the two output folders.
    let by_rank = out(&[st.join("rank_1_ascend_pt"), st.join("rank_3_ascend_pt")]);
    assert_eq!(
        by_rank["time_summary"],
        out(&[apo(1), apo(3)])["time_summary"]
    );
}

/// A GPU trace with kernels but no collective (a single-GPU run) given to `comm`: exit 2, and
/// stderr says the trace was read and holds no collective kernel (communication.md §6).
/// Before, it said "no communication file could be read", as if the trace had not been read.
#[test]
fn gpu_traces_without_collectives_say_so() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("comm_no_nccl_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("rank0.pt.trace.json"),
        r#"{"deviceProperties": [{"id": 0, "name": "NVIDIA H100"}], "traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 10, "dur": 100},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 5, "args": {"correlation": 7}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 30, "dur": 40, "args": {"device": 0, "stream": 7, "correlation": 7}}]}"#,
    )
    .unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_proflens"))
        .arg("comm")
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "proflens comm: nothing to report: the 1 PyTorch profiler trace(s) read hold no collective kernel (a kernel whose name carries nccl, rccl or cross_device_reduce; communication.md §4.1), and no rank folder has communication.json or communication_matrix.json\n"
    );
    assert!(o.stdout.is_empty());
}
