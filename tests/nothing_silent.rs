//! Nothing skipped in silence (formats.md §11.1): `proflens analyze` names on stderr every
//! file and folder it does not use and why (`DROP-001`…`DROP-005`); "nothing to analyse"
//! lists what was found; a host-only trace and a kernel table without intervals say so on
//! stderr. And the real-world sets: every file in exactly one list of the inventory.

use std::path::{Path, PathBuf};
use std::process::Command;

use proflens::cli::fs_opener::FsOpener;
use proflens::ingest::inventory::Inventory;
use proflens::ingest::rank::CaptureKind;
use proflens::parse::metadata::read_side_files;

fn temp_dir(tag: &str) -> PathBuf {
    let d =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("silent_{tag}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// The project's small JSON snapshot written as `root/mem.json`.
fn write_json_snapshot(root: &Path) {
    let json = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/snapshot_json/memory_snapshot.json"
    ))
    .unwrap();
    write(root, "mem.json", &json);
}

/// `proflens analyze DIR --out-dir OUT --quiet`: exit code and stderr lines.
fn analyze(dir: &Path, out: &Path) -> (i32, Vec<String>) {
    let o = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args([
            "analyze",
            dir.to_str().unwrap(),
            "--out-dir",
            out.to_str().unwrap(),
            "--quiet",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr)
        .lines()
        .map(str::to_string)
        .collect();
    (o.status.code().unwrap_or(-1), err)
}

fn has(lines: &[String], want: &str) -> bool {
    lines.iter().any(|l| l == want)
}

const CPU_TRACE: &str = r#"{"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 10, "dur": 100},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 20, "dur": 50}]}"#;

/// A run folder with a CPU-only trace (used, host-only), a README, an archive, a config JSON,
/// a capture folder holding raw data only, and a rank folder with a kernel table of aggregate
/// columns: each one named on stderr with why. Before, stderr named none of the unused files
/// and said nothing of the aggregate table.
#[test]
fn analyze_names_every_file_it_does_not_use() {
    let d = temp_dir("run");
    let root = d.join("run");
    write(&root, "cpu.json", CPU_TRACE);
    write(&root, "README.md", "notes\n");
    write(&root, "logs.tar.gz", "\x1f not really");
    write(&root, "config.json", r#"{"lr": 0.1}"#);
    write(
        &root,
        "raw_ascend_pt/profiler_info_0.json",
        r#"{"rank_id": 0}"#,
    );
    write(&root, "raw_ascend_pt/PROF_000001/device_0/data/a.data", "x");
    write(
        &root,
        "agg_ascend_pt/profiler_info_1.json",
        r#"{"rank_id": 1}"#,
    );
    write(
        &root,
        "agg_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
        "Name,Count,Total Time(us)\nk,3,30\n",
    );
    let (code, err) = analyze(&root, &d.join("out"));
    assert_eq!(code, 0, "{err:#?}");
    for want in [
        "inventory: info DROP-001: run/README.md: not used (6 B): not a profiler output proflens reads (a PyTorch profiler trace or memory snapshot, or a file of a folder ending in \"ascend_pt\")",
        "inventory: info DROP-001: run/config.json: not used (11 B): not a trace: a JSON file without trace events",
        "inventory: info DROP-001: run/logs.tar.gz: not used (12 B): an archive: extract it and drop the extracted folder",
        "inventory: info DROP-003: run/raw_ascend_pt: 1 file(s) (1 B) inside run/raw_ascend_pt are not read by any analysis (raw profiler data or outputs proflens does not analyse): PROF_000001/device_0/data/a.data",
        "anomaly: info ANOM-FILE-003: run/agg_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv: kernel_details.csv has aggregate columns only (Count, Total …), no kernel start and end times: op-level statistics only, no steps and no bubbles",
    ] {
        assert!(has(&err, want), "missing {want:?} in {err:#?}");
    }
    let rank = err
        .iter()
        .find(|l| {
            l.starts_with(
                "inventory: warning DROP-002: run/raw_ascend_pt: rank folder not analysed: missing",
            )
        })
        .unwrap_or_else(|| panic!("{err:#?}"));
    assert!(rank.contains("kernel_details.csv"), "{rank}");
    let host = err
        .iter()
        .find(|l| l.starts_with("anomaly: info GPU-RUN-001: run/cpu.json: host-only trace"))
        .unwrap_or_else(|| panic!("{err:#?}"));
    assert!(host.contains("no busy union and no bubbles"), "{host}");
}

/// Nothing to analyse: the message lists every file found, with why it is not used. Before,
/// only "No folder ending in ascend_pt and no PyTorch profiler trace found".
#[test]
fn nothing_to_analyse_lists_what_was_found() {
    let d = temp_dir("nothing");
    let root = d.join("notes");
    write(&root, "readme.txt", "not a profile\n");
    write(
        &root,
        "chrome.json",
        r#"[{"ph": "X", "cat": "python", "name": "f", "ts": 1, "dur": 1}]"#,
    );
    let (code, err) = analyze(&root, &d.join("out"));
    assert_eq!(code, 2);
    assert_eq!(err, vec![
        "proflens analyze: nothing to analyse: no rank folder with operator_memory.csv, kernel_details.csv, op_summary*.csv, trace_view.json or ascend_pytorch_profiler_<rank>.db, no PyTorch profiler trace and no memory snapshot among the 2 file(s) found:".to_string(),
        "  No folder ending in \"ascend_pt\" and no PyTorch profiler trace found under notes".into(),
        "  notes/chrome.json: not used (62 B): not a trace: a Chrome trace without deviceProperties, distributedInfo or any PyTorch profiler category (cpu_op, python_function, user_annotation, kernel, …)".into(),
        "  notes/readme.txt: not used (14 B): not a profiler output proflens reads (a PyTorch profiler trace or memory snapshot, or a file of a folder ending in \"ascend_pt\")".into(),
    ]);
}

/// A JSON snapshot given to `analyze` is analysed (its outputs written), not skipped.
#[test]
fn a_json_snapshot_is_analysed_not_skipped() {
    let d = temp_dir("snap");
    let root = d.join("snaps");
    write_json_snapshot(&root);
    let (code, err) = analyze(&root, &d.join("out"));
    assert_eq!(code, 0, "{err:#?}");
    assert!(err.iter().all(|l| !l.contains("DROP-")), "{err:#?}");
    let doc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.join("out/snapshots/mem.json.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(doc["format"]["encoding"], "json");
}

/// The page's inventory (the worker's reply to `Open`) names the same: each ignored file with
/// its reason, and on a rank card the files inside it no analysis reads (`DROP-003`).
#[test]
fn the_page_inventory_names_what_is_not_used() {
    use proflens::engine::session::{Collected, Session};
    use proflens::protocol::{Envelope, FileMeta, Request, Response};
    let d = temp_dir("page");
    let root = d.join("run");
    write(&root, "README.md", "notes\n");
    write(&root, "cpu.json", CPU_TRACE);
    write(
        &root,
        "r0_ascend_pt/profiler_info_0.json",
        r#"{"rank_id": 0}"#,
    );
    write(
        &root,
        "r0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
        "Name,Count\nk,1\n",
    );
    write(&root, "r0_ascend_pt/PROF_1/device_0/data/a.data", "xy");
    let (opener, files) = FsOpener::walk(&root).unwrap();
    let files: Vec<FileMeta> = files
        .iter()
        .map(|f| FileMeta {
            path: f.path.clone(),
            size: f.size,
        })
        .collect();
    let mut out = Collected::default();
    Session::new().handle(
        Envelope {
            seq: 1,
            body: Request::Open { files },
        },
        &opener,
        &mut out,
    );
    let Some((_, Response::Inventory(inv))) = out.out.first() else {
        panic!("{:?}", out.out.first().map(|r| &r.1));
    };
    let ignored: Vec<(&str, &str)> = inv
        .ignored
        .iter()
        .map(|f| (f.path.as_str(), f.kind.as_str()))
        .collect();
    assert_eq!(ignored, [("run/README.md", "not a profiler output proflens reads (a PyTorch profiler trace or memory snapshot, or a file of a folder ending in \"ascend_pt\")")]);
    let card = inv
        .ranks
        .iter()
        .find(|r| r.dir == "run/r0_ascend_pt")
        .unwrap();
    assert!(card.notes.contains(&"DROP-003: 1 file(s) (2 B) inside run/r0_ascend_pt are not read by any analysis (raw profiler data or outputs proflens does not analyse): PROF_1/device_0/data/a.data".to_string()), "{:?}", card.notes);
    assert!(inv
        .ranks
        .iter()
        .any(|r| r.dir == "run/cpu.json" && r.kineto));
}

const REAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures/real_world");

/// The eleven real-world sets (SOURCES.md): 5 PyTorch profiler traces (H800, MI300X, B200,
/// H100, the vLLM capture), 2 torch_npu rank folders, 3 snapshot pickles; the two files that
/// are not profiler output (SOURCES.md, the DLRM tarball) are not used, each with its reason.
/// Every path is in exactly one list.
#[test]
fn every_real_world_file_is_in_one_list() {
    let (opener, files) = FsOpener::walk(Path::new(REAL)).unwrap();
    let mut inv = Inventory::from_paths(&files);
    read_side_files(&mut inv, &opener);
    let gpu: Vec<&str> = inv
        .ranks
        .iter()
        .filter(|r| r.kind == CaptureKind::Kineto)
        .map(|r| r.files[0].rel.as_str())
        .collect();
    assert_eq!(gpu.len(), 5, "{gpu:?}");
    for name in [
        "train.json",
        "resnet_act_checkpoint.json.gz",
        "eager_trace.json.gz",
        "google_owlv2-large-patch14-ensemble__1016001.json.gz",
        "graph_capture_rank_0.1773709742341309550.pt.trace.json.gz",
    ] {
        assert!(gpu.contains(&name), "{name} in {gpu:?}");
    }
    assert!(inv
        .ranks
        .iter()
        .all(|r| r.side.kineto.as_ref().is_none_or(|h| !h.undecided)));
    assert_eq!(
        inv.ranks
            .iter()
            .filter(|r| r.kind == CaptureKind::AscendPt)
            .count(),
        2
    );
    let snaps: Vec<&str> = inv.snapshots.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        snaps,
        [
            "real_world/JasperSolt__EoR_NN/snapshot.pickle",
            "real_world/Maphsge4__select_n/snapshot.pickle",
            "real_world/volcengine__verl/mem.pickle"
        ]
    );
    let ignored: Vec<(&str, &str)> = inv
        .ignored
        .iter()
        .map(|f| (f.path.as_str(), f.reason.as_str()))
        .collect();
    assert_eq!(ignored, [
        ("real_world/SOURCES.md", "not a profiler output proflens reads (a PyTorch profiler trace or memory snapshot, or a file of a folder ending in \"ascend_pt\")"),
        ("real_world/facebookresearch__param/et_replay/tests/inputs/dlrm_kineto.tar.gz", "an archive: extract it and drop the extracted folder"),
    ]);
    let listed: usize = inv
        .ranks
        .iter()
        .map(|r| r.files.len() + r.other_files as usize)
        .sum::<usize>()
        + inv.snapshots.len()
        + inv.ignored.len()
        + inv.summaries.len();
    assert_eq!(listed, files.len());
}

const GPU_TRACE: &str = r#"{"deviceProperties": [{"id": 0, "name": "NVIDIA H100"}], "traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 10, "dur": 100},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 5, "args": {"correlation": 7}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 30, "dur": 40, "args": {"device": 0, "stream": 7, "correlation": 7}}]}"#;

/// `analyze run --out-dir run/out`, twice: the second run does not read the first run's
/// outputs (`anomaly.json` as a trace, the snapshot JSON documents as snapshots); it says so
/// once (`DROP-005`) and writes the same files. Before, it read them: a phantom rank `out`,
/// GPU-FILE-002 and SNAP-LAYOUT problems, and `mem.json.json.json`-style outputs.
#[test]
fn the_output_folder_inside_the_input_is_not_read_again() {
    let d = temp_dir("outdir");
    let root = d.join("run");
    write(&root, "rank0.pt.trace.json", GPU_TRACE);
    write_json_snapshot(&root);
    let out = root.join("out");
    let list = |dir: &Path| {
        let (_, files) = FsOpener::walk(dir).unwrap();
        files.into_iter().map(|f| f.path).collect::<Vec<_>>()
    };
    let (code, first) = analyze(&root, &out);
    assert_eq!(code, 0, "{first:#?}");
    assert!(first.iter().all(|l| !l.contains("DROP-005")), "{first:#?}");
    let written = list(&out);
    assert_eq!(
        written,
        vec![
            "out/anomaly.json",
            "out/reports/anomaly_report_run.md",
            "out/reports/kernels_run.csv",
            "out/reports/model_architecture_report_run.md",
            "out/snapshots/mem.json.json",
            "out/snapshots/mem.json.md",
        ]
    );
    let (code, second) = analyze(&root, &out);
    assert_eq!(code, 0, "{second:#?}");
    let n = written.len();
    let bytes: u64 = written
        .iter()
        .map(|p| std::fs::metadata(root.join(p)).unwrap().len())
        .sum();
    let note = format!(
        "inventory: info DROP-005: {}: {n} file(s) ({}) under the output folder are not read as inputs: it lies inside the input, so they are outputs of an earlier run (first: run/out/anomaly.json)",
        out.display(),
        proflens::base::format::bytes(bytes as f64)
    );
    let without_note: Vec<&String> = second.iter().filter(|l| **l != note).collect();
    let first_refs: Vec<&String> = first.iter().collect();
    assert_eq!(without_note, first_refs, "{second:#?}");
    assert!(has(&second, &note), "{second:#?}");
    assert_eq!(list(&out), written);
}

/// `proflens snapshot mem.json --json mem.result.json` beside the snapshot, then `analyze` of
/// the folder: the result document (first key `file`, a `segments` summary object) is a file
/// not used (`DROP-001`), not a snapshot (torch-snapshot.md §2.6). Before, it was read as a
/// JSON snapshot: `SNAP-LAYOUT` and `SNAP-EMPTY` warnings and `mem.result.json.json` outputs.
#[test]
fn a_snapshot_result_beside_its_snapshot_is_not_read_as_one() {
    let d = temp_dir("snapresult");
    let root = d.join("snaps");
    write_json_snapshot(&root);
    let o = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(["snapshot", "mem.json", "--json", "mem.result.json"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (code, err) = analyze(&root, &d.join("out"));
    assert_eq!(code, 0, "{err:#?}");
    assert!(err.iter().all(|l| !l.contains("SNAP-")), "{err:#?}");
    assert!(
        err.iter()
            .any(|l| l.starts_with("inventory: info DROP-001: snaps/mem.result.json: not used")),
        "{err:#?}"
    );
    let (_, files) = FsOpener::walk(&d.join("out")).unwrap();
    let names: Vec<String> = files.into_iter().map(|f| f.path).collect();
    assert_eq!(
        names,
        vec!["out/snapshots/mem.json.json", "out/snapshots/mem.json.md"]
    );
}
