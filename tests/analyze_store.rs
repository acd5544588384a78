//! Engine half: one read per input byte (a counting opener around the real
//! fixtures), and `proflens analyze` writing the single commands' bytes.

mod session_common;

use session_common::counting::{Counting, Counts};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::contract::{no_progress, AnalysisKind, Status, Target};
use proflens::engine::{export::Export, Plan, Store};
use proflens::ingest::inventory::Inventory;
use proflens::parse::metadata::read_side_files;
use proflens::report::memory_rows::Columns;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures");

fn fixture(rel: &str) -> PathBuf {
    Path::new(FIX).join(rel)
}

const LEVEL1: &str = "ascend/Ascend__msinsight/test/data/pytorch/text/level1";
const RLI_MEMORY: &str = "rl_insight/data/recipe/memory_data";

/// Level1 `rank0_ascend_pt`: its path, a counting opener over it, the counts, its files.
fn counting_rank0() -> (PathBuf, Counting, Counts, Vec<proflens::ingest::InputFile>) {
    let root = fixture(&format!("{LEVEL1}/rank0_ascend_pt"));
    let (fs, files) = FsOpener::walk(&root).unwrap();
    let counts: Counts = Default::default();
    let opener = Counting {
        inner: fs,
        counts: counts.clone(),
    };
    (root, opener, counts, files)
}

/// A worker session over `opener`: `Open` of `files` (seq 1), then one `Run` of `analyses` on
/// `targets` (seq 2), as the page posts them; the session and the run's replies.
fn open_and_run(
    opener: &Counting,
    files: &[proflens::ingest::InputFile],
    analyses: Vec<AnalysisKind>,
    targets: Vec<Target>,
) -> (
    proflens::engine::session::Session,
    proflens::engine::session::Collected,
) {
    use proflens::engine::session::{Collected, Session};
    use proflens::protocol::{Envelope, Request};
    let mut s = Session::new();
    let files = session_common::metas(files);
    let mut open = Collected::default();
    s.handle(
        Envelope {
            seq: 1,
            body: Request::Open { files },
        },
        opener,
        &mut open,
    );
    let mut run = Collected::default();
    s.handle(
        Envelope {
            seq: 2,
            body: Request::Run { analyses, targets },
        },
        opener,
        &mut run,
    );
    (s, run)
}

#[test]
fn memory_and_anomaly_read_each_input_byte_once() {
    let (_, opener, counts, files) = counting_rank0();
    let mut inv = Inventory::from_paths(&files);
    read_side_files(&mut inv, &opener);
    let mut plan = Plan::defaults();
    plan.snapshot = None;
    let mut store = Store::new(plan);
    store.run_inventory(&inv, &opener, &mut no_progress);
    assert!(store.memory(0).is_some_and(|m| m.len() > 0));
    assert!(store.anomaly(0).is_some_and(|a| a.kernels.len() > 0));
    // Every export reads the store, never the files.
    let before = counts.lock().unwrap().clone();
    let mut sink = Vec::new();
    proflens::engine::export::write(&store, &inv, Export::MemoryCsv(Columns::Full), &mut sink)
        .unwrap();
    proflens::engine::export::write(&store, &inv, Export::AnomalyJson, &mut sink).unwrap();
    assert!(!proflens::engine::export::anomaly_reports(&store, &inv)
        .unwrap()
        .is_empty());
    let counts = counts.lock().unwrap().clone();
    assert_eq!(before, counts, "exports read no file");
    let size: BTreeMap<&str, u64> = files.iter().map(|f| (f.path.as_str(), f.size)).collect();
    for (path, (opens, bytes)) in &counts {
        assert_eq!(*opens, 1, "{path} opened {opens} times");
        assert_eq!(*bytes, size[path.as_str()], "{path}: bytes read vs size");
    }
    let name = |p: &String| p.rsplit('/').next().unwrap().to_string();
    let read: Vec<String> = counts.keys().map(name).collect();
    for must in [
        "trace_view.json",
        "operator_memory.csv",
        "kernel_details.csv",
        "communication.json",
        "step_trace_time.csv",
    ] {
        assert!(read.iter().any(|r| r == must), "{must} not read: {read:?}");
    }
    let total: u64 = counts.values().map(|c| c.1).sum();
    let read_sizes: u64 = counts.keys().map(|p| size[p.as_str()]).sum();
    assert_eq!(total, read_sizes);
}

/// The worker's session on a drop of level1 `rank0_ascend_pt`: `Open`, then ONE `Run` of
/// memory + anomaly on the rank (what the page posts) opens every input once and reads each
/// of its bytes exactly once (the old session ran the two analyses separately and read
/// `trace_view.json` twice); every export afterwards (memory CSV / JSON / Markdown, anomaly
/// JSON / CSVs / reports) reads no file and is the CLI's bytes.
#[test]
fn session_drop_reads_each_byte_once_and_exports_read_none() {
    use proflens::engine::session::Collected;
    use proflens::protocol::{
        AnomalyExportKind, Envelope, ExportRequest, MemoryExportKind, Request, Response,
    };
    let (root, opener, counts, files) = counting_rank0();
    let (mut s, run) = open_and_run(
        &opener,
        &files,
        vec![AnalysisKind::Memory, AnalysisKind::Anomaly],
        vec![Target::Rank(0)],
    );
    let mut send = |seq: u32, body: Request| {
        let mut out = Collected::default();
        s.handle(Envelope { seq, body }, &opener, &mut out);
        out
    };
    assert!(matches!(
        run.out.last(),
        Some((2, Response::RunDone { done: 2, failed: 0 }))
    ));
    let after_run = counts.lock().unwrap().clone();
    let size: BTreeMap<&str, u64> = files.iter().map(|f| (f.path.as_str(), f.size)).collect();
    let trace = after_run
        .keys()
        .find(|p| p.ends_with("trace_view.json"))
        .expect("trace_view.json read");
    assert_eq!(after_run[trace], (1, size[trace.as_str()]), "{trace}");
    for (path, (opens, bytes)) in &after_run {
        assert_eq!(*opens, 1, "{path} opened {opens} times");
        assert_eq!(*bytes, size[path.as_str()], "{path}: bytes read vs size");
    }
    let cli = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_proflens"))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.code().is_some_and(|c| c <= 1), "{args:?}");
        out.stdout
    };
    let root_s = root.to_str().unwrap();
    let exports = [
        (
            ExportRequest::Memory(MemoryExportKind::MemoryCsv),
            Some(cli(&["memory", root_s, "--format", "csv"])),
        ),
        (
            ExportRequest::Memory(MemoryExportKind::MemoryJson),
            Some(cli(&["memory", root_s, "--format", "json"])),
        ),
        (
            ExportRequest::Memory(MemoryExportKind::MemorySummaryMd),
            None,
        ),
        (
            ExportRequest::Anomaly {
                what: AnomalyExportKind::Json,
                rank: None,
            },
            None,
        ),
        (
            ExportRequest::Anomaly {
                what: AnomalyExportKind::StepsCsv,
                rank: None,
            },
            None,
        ),
        (
            ExportRequest::Anomaly {
                what: AnomalyExportKind::ReportMd,
                rank: Some(0),
            },
            None,
        ),
    ];
    for (k, (what, want)) in exports.into_iter().enumerate() {
        let out = send(10 + k as u32, Request::Export(what.clone()));
        assert!(
            matches!(out.out.last(), Some((_, Response::ExportDone { .. }))),
            "{what:?}: {:?}",
            out.out.last()
        );
        assert!(!out.bytes.is_empty(), "{what:?}");
        if let Some(want) = want {
            assert_eq!(out.bytes, want, "{what:?} differs from the CLI's");
        }
    }
    assert_eq!(after_run, *counts.lock().unwrap(), "exports read no file");
}

/// A folder of PyTorch profiler traces: the HTA `trace_filter` pair (gzip) and, beside them,
/// HTA's `sampled_rank-0` written out inflated (a plain `.pt.trace.json`), in a temp folder
/// of this test's own.
fn kineto_folder(tag: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("proflens_kineto_once_{tag}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("gz")).unwrap();
    std::fs::create_dir_all(dir.join("plain")).unwrap();
    let hta = fixture("ascend/facebookresearch__HolisticTraceAnalysis/tests/data/trace_filter");
    for n in ["sampled_rank-0.json.gz", "sampled_rank-1.json.gz"] {
        std::fs::copy(hta.join(n), dir.join("gz").join(n)).unwrap();
    }
    let gz = std::fs::read(hta.join("sampled_rank-0.json.gz")).unwrap();
    let mut plain = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut plain).unwrap();
    std::fs::write(dir.join("plain/rank2.pt.trace.json"), plain).unwrap();
    dir
}

/// "each input byte is read once per drop", for GPU traces: the inventory reads the
/// head of each trace (is it one, its rank, devices); the run reads the rest of the file only
/// and takes the head from what the inventory kept (`Resume`). Each trace's bytes are read
/// exactly once (in two opens: head, rest), no head is left held, and the results are those
/// of a run that reads every file from its start.
#[test]
fn kineto_traces_are_read_once_head_and_rest() {
    use proflens::ingest::replay::Resume;
    use proflens::parse::metadata::read_side_files_keeping_heads;
    let dir = kineto_folder("store");
    let (fs, files) = FsOpener::walk(&dir).unwrap();
    let (opener, counts) = Counting::new(fs);
    let mut inv = Inventory::from_paths(&files);
    let heads = read_side_files_keeping_heads(&mut inv, &opener);
    assert_eq!(inv.ranks.len(), 3, "three GPU ranks");
    assert!(heads.bytes() > 0);
    let after_inventory = counts.lock().unwrap().clone();
    let mut plan = Plan::defaults();
    plan.memory = None;
    plan.snapshot = None;
    let mut store = Store::new(plan.clone());
    store.run_inventory(&inv, &Resume::new(&heads, &opener), &mut no_progress);
    assert_eq!(heads.bytes(), 0, "every head was handed to its run");
    let size: BTreeMap<&str, u64> = files.iter().map(|f| (f.path.as_str(), f.size)).collect();
    let counts = counts.lock().unwrap().clone();
    assert_eq!(counts.len(), 3);
    for (path, (opens, bytes)) in &counts {
        let (_, head) = after_inventory[path];
        assert!(
            head > 0 && head < size[path.as_str()],
            "{path}: head {head}"
        );
        assert_eq!(*opens, 2, "{path}: the head, then the rest");
        assert_eq!(*bytes, size[path.as_str()], "{path}: bytes read vs size");
    }
    // The same results as a run that reads every file from its start.
    let (fs, _) = FsOpener::walk(&dir).unwrap();
    let mut inv2 = Inventory::from_paths(&files);
    read_side_files(&mut inv2, &fs);
    let mut plain = Store::new(plan);
    plain.run_inventory(&inv2, &fs, &mut no_progress);
    let json = |s: &Store, inv: &Inventory| {
        let mut w = Vec::new();
        proflens::engine::export::write(s, inv, Export::AnomalyJson, &mut w).unwrap();
        w
    };
    let (a, b) = (json(&store, &inv), json(&plain, &inv2));
    assert!(a.len() > 1000);
    assert_eq!(a, b);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The worker's session on the same drop: `Open` reads the traces' heads, one `Run` of the
/// three GPU ranks reads the rest of each file; every byte once, nothing held afterwards.
#[test]
fn session_reads_each_kineto_byte_once() {
    use proflens::protocol::Response;
    let dir = kineto_folder("session");
    let (fs, files) = FsOpener::walk(&dir).unwrap();
    let (opener, counts) = Counting::new(fs);
    let (_, run) = open_and_run(
        &opener,
        &files,
        vec![AnalysisKind::Anomaly],
        vec![Target::Rank(0), Target::Rank(1), Target::Rank(2)],
    );
    assert!(
        matches!(
            run.out.last(),
            Some((2, Response::RunDone { done: 3, failed: 0 }))
        ),
        "{:?}",
        run.out.last()
    );
    let size: BTreeMap<&str, u64> = files.iter().map(|f| (f.path.as_str(), f.size)).collect();
    let counts = counts.lock().unwrap().clone();
    assert_eq!(counts.len(), 3);
    for (path, (opens, bytes)) in &counts {
        assert_eq!(*opens, 2, "{path}: the head at Open, the rest at Run");
        assert_eq!(*bytes, size[path.as_str()], "{path}: bytes read vs size");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn contract_reports_status_and_problems_for_every_target() {
    let root = fixture(LEVEL1);
    let (fs, files) = FsOpener::walk(&root).unwrap();
    let mut inv = Inventory::from_paths(&files);
    read_side_files(&mut inv, &fs);
    let mut store = Store::new(Plan::defaults());
    store.run_inventory(&inv, &fs, &mut no_progress);
    let got: Vec<(Target, AnalysisKind, Status)> = store
        .outcomes()
        .into_iter()
        .map(|(t, k, s, _)| (t, k, s))
        .collect();
    use AnalysisKind::*;
    assert_eq!(
        got,
        vec![
            (Target::Rank(0), Memory, Status::Done),
            (Target::Rank(0), Anomaly, Status::Done),
            (Target::Rank(1), Memory, Status::Done),
            (Target::Rank(1), Anomaly, Status::Done),
        ]
    );
}

#[test]
fn cancel_from_progress_stops_the_rank_and_the_run() {
    let root = fixture(LEVEL1);
    let (fs, files) = FsOpener::walk(&root).unwrap();
    let mut inv = Inventory::from_paths(&files);
    read_side_files(&mut inv, &fs);
    let mut plan = Plan::defaults();
    plan.snapshot = None;
    let mut store = Store::new(plan);
    let mut seen = Vec::new();
    store.run_inventory(&inv, &fs, &mut |p| {
        seen.push(p.file.rsplit('/').next().unwrap().to_string());
        if p.file.ends_with("trace_view.json") {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    });
    assert!(store.cancelled(Target::Rank(0)));
    assert!(store.rank(1).is_none(), "no rank starts after a cancel");
    assert_eq!(store.memory(0).map(|m| m.len()), Some(0));
    assert!(store.anomaly(0).is_none());
    assert_eq!(seen.last().map(String::as_str), Some("trace_view.json"));
}

fn proflens(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(args)
        .output()
        .unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("proflens_analyze_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn files_in(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `analyze` on `input` against `memory --format csv`, `anomaly --out --report-dir`.
fn check_rank_outputs(input: &Path, name: &str, expect_anomaly: bool) {
    let out = tmp(name);
    let dir = out.join("analyze");
    let inp = input.to_str().unwrap();
    let o = proflens(&[
        "analyze",
        inp,
        "--out-dir",
        dir.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(
        o.status.code().unwrap() < 2,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mem = out.join("memory.csv");
    proflens(&[
        "memory",
        inp,
        "--format",
        "csv",
        "--out",
        mem.to_str().unwrap(),
        "--quiet",
    ]);
    let csv = read(&dir.join("memory.csv"));
    assert!(csv.len() > 1000, "memory.csv has rows");
    assert_eq!(csv, read(&mem), "memory.csv");
    if !expect_anomaly {
        assert!(!dir.join("anomaly.json").exists());
        return;
    }
    let json = out.join("anomaly.json");
    let reports = out.join("reports");
    proflens(&[
        "anomaly",
        inp,
        "--out",
        json.to_str().unwrap(),
        "--report-dir",
        reports.to_str().unwrap(),
    ]);
    assert_eq!(read(&dir.join("anomaly.json")), read(&json), "anomaly.json");
    let names = files_in(&reports);
    assert!(!names.is_empty());
    assert_eq!(files_in(&dir.join("reports")), names);
    for n in names {
        assert_eq!(
            read(&dir.join("reports").join(&n)),
            read(&reports.join(&n)),
            "{n}"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn analyze_equals_single_commands_on_level1_both_ranks() {
    check_rank_outputs(&fixture(LEVEL1), "level1", true);
}

#[test]
fn analyze_equals_single_commands_on_one_rank_folder() {
    check_rank_outputs(
        &fixture(&format!("{LEVEL1}/rank1_ascend_pt")),
        "rank1",
        true,
    );
}

#[test]
fn analyze_equals_memory_on_rl_insight_memory_folder() {
    let p = fixture(RLI_MEMORY);
    let has_trace_or_kernels = walk_names(&p)
        .iter()
        .any(|n| n == "trace_view.json" || n == "kernel_details.csv");
    check_rank_outputs(&p, "rli", has_trace_or_kernels);
}

fn walk_names(p: &Path) -> Vec<String> {
    let (_, files) = FsOpener::walk(p).unwrap();
    files
        .iter()
        .map(|f| f.path.rsplit('/').next().unwrap().to_string())
        .collect()
}

#[test]
fn analyze_writes_each_snapshot_as_the_snapshot_command() {
    let snaps = [
        "Muduard_LayoutEditing__memory_snapshot.pkl",
        "jogregoire_How-Diffusion-Models-Work__my_snapshot.pickle",
        "Ascend_msinsight__scripts_MemSnapDump_test_test-data_snapshot_expandable.pkl",
    ];
    let out = tmp("snap");
    let dir = out.join("analyze");
    let mut args: Vec<String> = vec!["analyze".into()];
    let paths: Vec<PathBuf> = snaps
        .iter()
        .map(|s| fixture(&format!("torch_snapshots/{s}")))
        .collect();
    args.extend(paths.iter().map(|p| p.to_str().unwrap().to_string()));
    args.extend([
        "--out-dir".into(),
        dir.to_str().unwrap().into(),
        "--quiet".into(),
    ]);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = proflens(&a);
    assert!(
        o.status.code().unwrap() < 2,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!dir.join("memory.csv").exists());
    for (s, p) in snaps.iter().zip(&paths) {
        let j = out.join(format!("{s}.json"));
        let m = out.join(format!("{s}.md"));
        proflens(&[
            "snapshot",
            p.to_str().unwrap(),
            "--json",
            j.to_str().unwrap(),
            "--report",
            m.to_str().unwrap(),
        ]);
        let got_j = read(&dir.join("snapshots").join(format!("{s}.json")));
        assert!(got_j.len() > 100);
        assert_eq!(got_j, read(&j), "{s}.json");
        assert_eq!(
            read(&dir.join("snapshots").join(format!("{s}.md"))),
            read(&m),
            "{s}.md"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// A DB rank (level1 `rank0_ascend_pt` of the DB export): planning the communication analysis
/// beside memory and anomaly adds no read of `analysis.db` — the communication tables are read
/// once, from the handle the rank read opened, and give the anomaly its comm ops (the text
/// path's rule: `communication.json` read once for both); the anomaly's ops are those of the
/// communication analysis' tables.
#[test]
fn a_db_rank_reads_analysis_db_once_for_every_analysis() {
    let root = fixture("ascend/Ascend__msinsight/test/data/pytorch/db/level1/rank0_ascend_pt");
    let run = |with_comm: bool| {
        let (fs, files) = FsOpener::walk(&root).unwrap();
        let counts: Counts = Default::default();
        let opener = Counting {
            inner: fs,
            counts: counts.clone(),
        };
        let mut inv = Inventory::from_paths(&files);
        read_side_files(&mut inv, &opener);
        counts.lock().unwrap().clear();
        let mut plan = Plan::defaults();
        plan.snapshot = None;
        if with_comm {
            plan.comm = Some(Default::default());
        }
        let mut store = Store::new(plan);
        store.run_inventory(&inv, &opener, &mut no_progress);
        let ops = store.anomaly(0).expect("anomaly ran").comm_ops.clone();
        let tables = with_comm.then(|| {
            let comm = store.comm_ranks().unwrap();
            assert_eq!(comm.len(), 1);
            proflens::parse::communication::ops_of(&comm[0].tables)
        });
        let name = |p: &String| p.rsplit('/').next().unwrap().to_string();
        let reads: BTreeMap<String, (u32, u64)> = counts
            .lock()
            .unwrap()
            .iter()
            .map(|(p, c)| (name(p), *c))
            .collect();
        (ops, tables, reads)
    };
    let (ops_alone, _, reads_alone) = run(false);
    let (ops, tables, reads) = run(true);
    assert!(!ops.is_empty(), "the anomaly has the rank's comm ops");
    assert_eq!(ops, ops_alone);
    assert_eq!(Some(ops), tables);
    assert!(reads.contains_key("analysis.db"), "{reads:?}");
    assert_eq!(
        reads, reads_alone,
        "the communication analysis adds no read"
    );
}
