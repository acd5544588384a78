//! The one exit-code contract of every command: 0 when anything was analysed
//! (warnings included), 2 when nothing could be, 1 only with `--strict` and a warning — on
//! real fixtures — and the native walk's file-system edges (unreadable folder, broken and
//! looping links, a folder where `trace_view.json` should be), built in temp folders.

use std::path::{Path, PathBuf};
use std::process::Command;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures");

fn fixture(rel: &str) -> PathBuf {
    Path::new(FIX).join(rel)
}

const LEVEL1: &str = "ascend/Ascend__msinsight/test/data/pytorch/text/level1";
/// A real rank whose kernel_details.csv has a short row (ANOM-KD-006 warning).
const SHORT_ROW: &str = "ascend/Ascend__msinsight/server/src/test/test_data/test_rank_0";
/// Four of five rank folders lack operator_memory.csv (MEM-FILE-001), one is analysed.
const RECIPE: &str = "rl_insight/data/recipe";
/// A snapshot without any problem.
const SNAP_CLEAN: &str = "torch_snapshots/ZidongLiu_DeComFL__memory.pickle";
/// A snapshot with SNAP-TRUNCATED warnings (the recording's start is missing).
const SNAP_WARN: &str = "torch_snapshots/bcrafton_assignment2-systems__memory_snapshot.pickle";

/// Runs proflens; returns (exit code, stdout, stderr).
fn proflens(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A fresh temp folder for one test.
fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("proflens_exit_{}_{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `cmd` on `input` with and without `--strict`: asserts both codes, returns the stderr.
fn both(cmd: &[&str], input: &Path, plain: i32, strict: i32) -> String {
    let mut a: Vec<&str> = cmd.to_vec();
    a.insert(1, s(input));
    let (code, _, err) = proflens(&a);
    assert_eq!(code, plain, "{a:?}: {err}");
    a.push("--strict");
    let (code, _, err2) = proflens(&a);
    assert_eq!(code, strict, "{a:?}: {err2}");
    err
}

#[test]
fn memory_exit_codes() {
    let out = temp("mem");
    let csv = out.join("rows.csv");
    let m = ["memory", "--out", s(&csv)];
    let err = both(&m, &fixture(LEVEL1), 0, 0);
    assert!(!err.contains("warning") && !err.contains("error"), "{err}");
    let err = both(&m, &fixture(RECIPE), 0, 1);
    assert!(err.contains("MEM-FILE-001"), "{err}");
    assert!(err.contains("49 rows from 1 of 5 rank folder(s)"), "{err}");
    std::fs::write(out.join("readme.txt"), "no profiler data").unwrap();
    let nothing = out.join("readme.txt");
    both(&m, &nothing, 2, 2);
}

#[test]
fn anomaly_exit_codes() {
    let out = temp("anom");
    let json = out.join("a.json");
    let a = ["anomaly", "--out", s(&json)];
    let err = both(&a, &fixture(LEVEL1), 0, 0);
    assert!(!err.contains("warning") && !err.contains("error"), "{err}");
    let err = both(&a, &fixture(SHORT_ROW), 0, 1);
    assert!(err.contains("ANOM-KD-006"), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        v.as_array().unwrap().len(),
        1,
        "the rank with a warning is analysed"
    );
    let empty = out.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "nothing").unwrap();
    both(&a, &empty, 2, 2);
}

/// A Chrome trace that is not a PyTorch profiler trace (a C program's own `B`/`E` events):
/// `anomaly` and `comm` say which file was not used and why, as `analyze` does, instead of
/// an empty file name (`  : No folder ending in "ascend_pt"…`) or nothing at all.
#[test]
fn anomaly_and_comm_say_why_a_chrome_trace_is_not_read() {
    let dir = temp("chrome");
    let file = dir.join("trace.json");
    std::fs::write(
        &file,
        "[\n{\"name\": \"main\", \"ph\": \"B\", \"ts\": 343, \"pid\": 1, \"tid\": 1},\n\
         {\"name\": \"main\", \"ph\": \"E\", \"ts\": 900, \"pid\": 1, \"tid\": 1}\n]\n",
    )
    .unwrap();
    let name = dir.file_name().unwrap().to_str().unwrap();
    let why = |label: &str| {
        format!(
            "  {label}: not used (123 B): not a trace: a Chrome trace without deviceProperties, \
             distributedInfo or any PyTorch profiler category (cpu_op, python_function, \
             user_annotation, kernel, …)\n"
        )
    };
    let (code, out, err) = proflens(&["anomaly", s(&file)]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert_eq!(
        err,
        format!(
            "proflens anomaly: no rank folder with kernel_details.csv, op_summary*.csv or \
             trace_view.json and no PyTorch profiler trace under {}:\n  No folder ending in \
             \"ascend_pt\" and no PyTorch profiler trace found under trace.json\n{}",
            s(&file),
            why("trace.json")
        )
    );
    let (code, _, err) = proflens(&["comm", s(&dir)]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err,
        format!(
            "proflens comm: no rank folder with communication.json or \
             communication_matrix.json and no PyTorch profiler trace among the 1 file(s) \
             found:\n  No folder ending in \"ascend_pt\" and no PyTorch profiler trace \
             found under {name}\n{}",
            why(&format!("{name}/trace.json"))
        )
    );
}

#[test]
fn snapshot_exit_codes() {
    let out = temp("snap");
    let json = out.join("s.json");
    let c = ["snapshot", "--json", s(&json)];
    let err = both(&c, &fixture(SNAP_CLEAN), 0, 0);
    assert!(!err.contains("warning"), "{err}");
    let err = both(&c, &fixture(SNAP_WARN), 0, 1);
    assert!(err.contains("SNAP-TRUNCATED"), "{err}");
    let text = out.join("not_a_pickle.pickle");
    std::fs::write(&text, "{\"json\": true}").unwrap();
    let err = both(&c, &text, 2, 2);
    assert!(
        err.contains("wrong file type") || err.contains("JSON"),
        "{err}"
    );
}

#[test]
fn analyze_exit_codes() {
    let out = temp("analyze");
    let dir = out.join("out");
    let c = ["analyze", "--out-dir", s(&dir), "--quiet"];
    let err = both(&c, &fixture(LEVEL1), 0, 0);
    assert!(!err.contains("warning") && !err.contains("error"), "{err}");
    let err = both(&c, &fixture(SHORT_ROW), 0, 1);
    assert!(err.contains("ANOM-KD-006"), "{err}");
    both(&c, &fixture(SNAP_CLEAN), 0, 0);
    both(&c, &fixture(SNAP_WARN), 0, 1);
    let empty = out.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "nothing").unwrap();
    both(&c, &empty, 2, 2);
}

/// A torch_npu 2.7.1 cluster capture where only rank 0 holds `operator_memory.csv`
/// (ranks 1 and 3 hold only the communication files).
const LEVEL2_ST: &str = "ascend/Ascend__msinsight/test/st/level2";

/// `analyze` reads memory only where the rank folder holds memory events
/// (docs/rules/ascend-memory.md §7): the communication-only ranks are no `MEM-FILE-001` error
/// there, while `proflens memory` on the same folder still reports them.
#[test]
fn analyze_reads_memory_only_where_present() {
    let out = temp("mem_where_present");
    let dir = out.join("out");
    let c = ["analyze", "--out-dir", s(&dir)];
    let err = both(&c, &fixture(LEVEL2_ST), 0, 1);
    assert!(!err.contains("MEM-FILE-001"), "{err}");
    assert!(!err.contains("operator_memory.csv not found"), "{err}");
    let memory: Vec<&str> = err.lines().filter(|l| l.starts_with("memory: ")).collect();
    assert_eq!(
        memory,
        [
            "memory: warning MEM-FILE-002: level2/rank_0_ascend_pt: No call stacks for rank 0: \
          trace_view.json missing or recorded with with_stack=false"
        ]
    );
    // rank 0's rows only: 3,103 rows and the header
    let csv = std::fs::read_to_string(dir.join("memory.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3104);
    let comm: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("comm.json")).unwrap()).unwrap();
    assert_eq!(comm["ranks"], serde_json::json!([0, 1, 3]));
    // `proflens memory` keeps the rule of every selected rank folder
    let csv = out.join("rows.csv");
    let err = both(&["memory", "--out", s(&csv)], &fixture(LEVEL2_ST), 0, 1);
    let missing: Vec<&str> = err.lines().filter(|l| l.contains("MEM-FILE-001")).collect();
    assert_eq!(
        missing,
        [
            "error MEM-FILE-001: level2/rank_1_ascend_pt: operator_memory.csv not found in level2/rank_1_ascend_pt",
            "error MEM-FILE-001: level2/rank_3_ascend_pt: operator_memory.csv not found in level2/rank_3_ascend_pt",
        ]
    );
}

#[test]
fn help_states_the_contract() {
    for cmd in ["memory", "anomaly", "snapshot", "analyze"] {
        let (code, out, _) = proflens(&[cmd, "--help"]);
        assert_eq!(code, 0);
        assert!(out.contains("--strict"), "{cmd}: {out}");
        assert!(
            out.contains("2  nothing could be analysed"),
            "{cmd} --help lacks the exit codes: {out}"
        );
    }
}

/// `run/rank{0,1}_ascend_pt/ASCEND_PROFILER_OUTPUT/` with the level1 files linked in.
fn linked_run(root: &Path, skip: &[(&str, &str)]) -> PathBuf {
    let run = root.join("run");
    for rank in ["rank0", "rank1"] {
        let src = fixture(LEVEL1).join(format!("{rank}_ascend_pt"));
        let dst = run.join(format!("{rank}_ascend_pt"));
        std::fs::create_dir_all(dst.join("ASCEND_PROFILER_OUTPUT")).unwrap();
        for f in std::fs::read_dir(&src).unwrap() {
            let f = f.unwrap();
            if f.file_type().unwrap().is_file() {
                std::os::unix::fs::symlink(f.path(), dst.join(f.file_name())).unwrap();
            }
        }
        let out = src.join("ASCEND_PROFILER_OUTPUT");
        for f in std::fs::read_dir(&out).unwrap() {
            let f = f.unwrap();
            let name = f.file_name().into_string().unwrap();
            if skip.contains(&(rank, name.as_str())) || !f.file_type().unwrap().is_file() {
                continue;
            }
            std::os::unix::fs::symlink(f.path(), dst.join("ASCEND_PROFILER_OUTPUT").join(&name))
                .unwrap();
        }
    }
    run
}

#[test]
fn a_folder_where_trace_view_json_should_be_is_named_and_the_rest_goes_on() {
    let root = temp("dirfile");
    let run = linked_run(&root, &[("rank0", "trace_view.json")]);
    let tv = run.join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
    std::fs::create_dir_all(&tv).unwrap();
    std::fs::write(tv.join("part0"), "[]").unwrap();
    let json = root.join("a.json");
    let (code, _, err) = proflens(&["anomaly", s(&run), "--out", s(&json)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning FS-WALK-004: run/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json: a folder where the input file trace_view.json is expected"),
        "{err}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let ranks = v.as_array().unwrap();
    assert_eq!(
        ranks.len(),
        2,
        "both ranks analysed (rank0 from its kernel table)"
    );
    let (code, _, _) = proflens(&["anomaly", s(&run), "--out", s(&json), "--strict"]);
    assert_eq!(code, 1);
    // Memory needs the trace for call stacks; rank1 is whole, so memory still analyses.
    let (code, _, err) = proflens(&["memory", s(&run), "--out", s(&root.join("m.csv"))]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("FS-WALK-004"), "{err}");
}

#[test]
fn broken_and_looping_links_are_named_and_the_rest_goes_on() {
    let root = temp("links");
    let run = linked_run(&root, &[]);
    std::os::unix::fs::symlink(root.join("nowhere"), run.join("dangling")).unwrap();
    std::os::unix::fs::symlink(&run, run.join("rank1_ascend_pt/back_to_run")).unwrap();
    std::os::unix::fs::symlink("self_loop", run.join("self_loop")).unwrap();
    let csv = root.join("m.csv");
    let (code, _, err) = proflens(&["memory", s(&run), "--out", s(&csv)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning FS-WALK-002: run/dangling: symbolic link that cannot be followed"),
        "{err}"
    );
    assert!(
        err.contains("warning FS-WALK-002: run/self_loop: symbolic link that cannot be followed"),
        "{err}"
    );
    assert!(err.contains("warning FS-WALK-003: run/rank1_ascend_pt/back_to_run: leads to a folder already listed"), "{err}");
    assert!(err.contains("368 rows from 2 of 2 rank folder(s)"), "{err}");
    let (code, _, _) = proflens(&["memory", s(&run), "--out", s(&csv), "--strict"]);
    assert_eq!(code, 1);
}

#[test]
fn an_unreadable_folder_is_named_and_the_rest_goes_on() {
    use std::os::unix::fs::PermissionsExt;
    let root = temp("unreadable");
    let run = linked_run(&root, &[]);
    let locked = run.join("locked_extra");
    std::fs::create_dir_all(&locked).unwrap();
    std::fs::write(locked.join("x.txt"), "x").unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read_dir(&locked).is_ok() {
        // Root (or CAP_DAC_OVERRIDE) reads through mode 000: the case cannot be built here.
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
        eprintln!("skipped: running with permission to read a mode-000 folder (root); the broken-link test covers an entry that cannot be listed");
        return;
    }
    let csv = root.join("m.csv");
    let (code, _, err) = proflens(&["memory", s(&run), "--out", s(&csv)]);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning FS-WALK-001: run/locked_extra: cannot list this folder"),
        "{err}"
    );
    assert!(err.contains("368 rows from 2 of 2 rank folder(s)"), "{err}");
}

/// Argument and output-folder mistakes are said before any input is read: `--threads 0` is
/// refused by every command that takes it, an `--out-dir` that cannot be made stops `analyze`
/// with its name (it read the whole input first).
#[test]
fn mistakes_are_said_before_the_read() {
    let input = fixture(LEVEL1);
    for cmd in ["analyze", "anomaly", "memory", "summarize"] {
        let (code, _, err) = proflens(&[cmd, s(&input), "--threads", "0"]);
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(err.contains("at least 1 thread is needed"), "{cmd}: {err}");
    }
    let d = temp("outdir");
    let blocked = d.join("a_file");
    std::fs::write(&blocked, "x").unwrap();
    let out = blocked.join("out");
    let (code, _, err) = proflens(&["analyze", s(&input), "--out-dir", s(&out)]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("proflens analyze: cannot create {}: ", s(&out))),
        "{err}"
    );
    assert!(!err.contains("wrote"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}
