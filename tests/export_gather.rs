//! "each input byte is read once per drop", for a drop spread over two workers: the
//! two ranks of level1 run in two sessions (as on a pool of two workers), the second
//! session's `Open` reads the side files from the first one's bundle, and every memory and
//! anomaly export is gathered from the two sessions' parts (`ExportPart` rounds, then
//! `ExportJoin`) — byte for byte the CLI's output, with no file read by any export.

mod session_common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::session::{Collected, Session};
use proflens::protocol::{
    AnalysisKind, AnomalyExportKind, Envelope, ExportRequest, MemoryExportKind, Request, Response,
    Target,
};
use session_common::counting::Counting;

const LEVEL1: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1"
);

fn send(s: &mut Session, o: &Counting, seq: u32, body: Request, beside: &[Vec<u8>]) -> Collected {
    let mut out = Collected::default();
    s.handle_with(Envelope { seq, body }, beside, o, &mut out);
    out
}

/// The export gathered from the two sessions' parts (the page's relay: every round's parts
/// go beside the next round's requests, the last round's beside the join on `joiner`),
/// with the parts of each round handed over in `order`.
fn gather(
    sessions: &mut [Session; 2],
    o: &Counting,
    what: &ExportRequest,
    order: [usize; 2],
) -> Collected {
    let mut parts: Vec<Vec<u8>> = Vec::new();
    for round in 0..what.part_rounds() {
        let mut next = vec![Vec::new(); 2];
        for k in order {
            let body = Request::ExportPart {
                what: what.clone(),
                round,
            };
            let out = send(&mut sessions[k], o, 20 + round, body, &parts);
            assert!(
                matches!(out.out.last(), Some((_, Response::ExportPart { round: r, bytes })) if *r == round && *bytes == out.beside[0].len() as u64),
                "{what:?} round {round}: {:?}",
                out.out.last()
            );
            next[k] = out.beside.into_iter().next().unwrap();
        }
        parts = order.iter().map(|&k| next[k].clone()).collect();
    }
    send(
        &mut sessions[order[0]],
        o,
        30,
        Request::ExportJoin(what.clone()),
        &parts,
    )
}

fn cli(args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    out.stdout
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("proflens_gather_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn done_name(out: &Collected) -> String {
    match out.out.last() {
        Some((_, Response::ExportDone { file_name, .. })) => file_name.clone(),
        other => panic!("no ExportDone: {other:?}"),
    }
}

#[test]
fn exports_gathered_from_two_sessions_equal_the_cli_and_read_no_file() {
    let (fs, files) = FsOpener::walk(Path::new(LEVEL1)).unwrap();
    let (o, _) = Counting::new(fs);
    let metas = session_common::metas(&files);
    let mut sessions = [Session::new(), Session::new()];

    // Open: the first session reads the side files and sends their bytes beside the
    // inventory; the second reads them from that bundle, not from the files.
    let open_a = send(
        &mut sessions[0],
        &o,
        1,
        Request::Open {
            files: metas.clone(),
        },
        &[],
    );
    assert_eq!(open_a.beside.len(), 1, "the side-file bundle");
    let side_reads = o.snapshot();
    let side: Vec<&str> = side_reads
        .keys()
        .map(|p| p.rsplit('/').next().unwrap())
        .collect();
    assert_eq!(
        side,
        [
            "profiler_info_0.json",
            "profiler_metadata.json",
            "profiler_info_1.json",
            "profiler_metadata.json"
        ],
        "{side_reads:?}"
    );
    let open_b = send(
        &mut sessions[1],
        &o,
        1,
        Request::Open { files: metas },
        &open_a.beside,
    );
    assert_eq!(o.snapshot(), side_reads, "the second Open reads no file");
    assert!(open_b.beside.is_empty());
    assert_eq!(open_a.out, open_b.out, "the same inventory from the bundle");

    // One rank folder per session, every analysis of it in one Run.
    for (k, s) in sessions.iter_mut().enumerate() {
        let run = send(
            s,
            &o,
            2,
            Request::Run {
                analyses: vec![AnalysisKind::Memory, AnalysisKind::Anomaly],
                targets: vec![Target::Rank(k as u32)],
            },
            &[],
        );
        assert!(
            matches!(
                run.out.last(),
                Some((2, Response::RunDone { done: 2, failed: 0 }))
            ),
            "{:?}",
            run.out.last()
        );
    }
    let after_run = o.snapshot();
    let size: BTreeMap<&str, u64> = files.iter().map(|f| (f.path.as_str(), f.size)).collect();
    for (path, (opens, bytes)) in &after_run {
        assert_eq!(*opens, 1, "{path} opened {opens} times");
        assert_eq!(*bytes, size[path.as_str()], "{path}: bytes read vs size");
    }
    assert_eq!(after_run.len(), 2 * 7, "{:?}", after_run.keys());

    // The CLI's outputs on the same folder.
    let dir = tmp("cli");
    let reports = dir.join("reports");
    let json_path = dir.join("anomaly.json");
    cli(&[
        "anomaly",
        LEVEL1,
        "--out",
        json_path.to_str().unwrap(),
        "--report-dir",
        reports.to_str().unwrap(),
    ]);
    let report = |name: &str| std::fs::read(reports.join(name)).unwrap();
    let mut want: Vec<(ExportRequest, Vec<u8>, String)> = Vec::new();
    for (kind, fmt, name) in [
        (
            MemoryExportKind::MemoryCsv,
            "csv",
            "proflens-memory-events.csv",
        ),
        (
            MemoryExportKind::MemoryJson,
            "json",
            "proflens-memory-events.json",
        ),
        (
            MemoryExportKind::MemorySummaryMd,
            "md",
            "proflens-memory-summary.md",
        ),
    ] {
        let bytes = cli(&["memory", LEVEL1, "--format", fmt, "--quiet"]);
        want.push((ExportRequest::Memory(kind), bytes, name.into()));
    }
    let anomaly = |what, rank| ExportRequest::Anomaly { what, rank };
    want.push((
        anomaly(AnomalyExportKind::Json, None),
        std::fs::read(&json_path).unwrap(),
        "anomaly_level1.json".into(),
    ));
    for rank in [0u32, 1] {
        for (what, stem) in [
            (AnomalyExportKind::ReportMd, "anomaly_report"),
            (
                AnomalyExportKind::ArchitectureMd,
                "model_architecture_report",
            ),
        ] {
            let name = format!("{stem}_level1_rank{rank}.md");
            want.push((anomaly(what, Some(rank)), report(&name), name));
        }
    }
    // The CSVs have no CLI command: one session holding both ranks writes the reference.
    let mut whole = Session::new();
    let metas = session_common::metas(&files);
    send(&mut whole, &o, 1, Request::Open { files: metas }, &[]);
    let run = Request::Run {
        analyses: vec![AnalysisKind::Anomaly],
        targets: vec![Target::Rank(0), Target::Rank(1)],
    };
    send(&mut whole, &o, 2, run, &[]);
    for (what, name) in [
        (AnomalyExportKind::StepsCsv, "anomaly_steps_level1.csv"),
        (AnomalyExportKind::BubblesCsv, "anomaly_bubbles_level1.csv"),
    ] {
        let out = send(&mut whole, &o, 3, Request::Export(anomaly(what, None)), &[]);
        assert_eq!(done_name(&out), name);
        want.push((anomaly(what, None), out.bytes, name.into()));
    }
    let before_exports = o.snapshot();

    for (what, bytes, name) in &want {
        assert!(bytes.len() > 500, "{what:?}: {} bytes", bytes.len());
        for order in [[0, 1], [1, 0]] {
            let out = gather(&mut sessions, &o, what, order);
            assert_eq!(done_name(&out), *name, "{what:?}");
            assert!(
                out.bytes == *bytes,
                "{what:?} gathered in order {order:?} differs from the CLI's ({} vs {} bytes)",
                out.bytes.len(),
                bytes.len()
            );
        }
    }
    assert_eq!(o.snapshot(), before_exports, "exports read no file");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gathering_refuses_parts_it_cannot_use() {
    let (fs, files) = FsOpener::walk(Path::new(LEVEL1)).unwrap();
    let (o, _) = Counting::new(fs);
    let mut s = Session::new();
    let metas = session_common::metas(&files);
    send(&mut s, &o, 1, Request::Open { files: metas }, &[]);
    let run = Request::Run {
        analyses: vec![AnalysisKind::Memory, AnalysisKind::Anomaly],
        targets: vec![Target::Rank(0)],
    };
    send(&mut s, &o, 2, run, &[]);
    let csv = ExportRequest::Memory(MemoryExportKind::MemoryCsv);
    let failed = |out: &Collected| match out.out.last() {
        Some((_, Response::Failed(f))) => f.message.clone(),
        other => panic!("expected Failed, got {other:?}"),
    };
    // The same rank twice.
    let part = send(
        &mut s,
        &o,
        3,
        Request::ExportPart {
            what: csv.clone(),
            round: 0,
        },
        &[],
    );
    let twice = [part.beside[0].clone(), part.beside[0].clone()];
    let out = send(&mut s, &o, 4, Request::ExportJoin(csv.clone()), &twice);
    assert_eq!(
        failed(&out),
        "export Memory(MemoryCsv) failed: rank folder 0 is in two memory parts"
    );
    // A part of another export, a cut part, a round the export does not have.
    let json = ExportRequest::Memory(MemoryExportKind::MemoryJson);
    let out = send(&mut s, &o, 5, Request::ExportJoin(json), &part.beside);
    assert_eq!(
        failed(&out),
        "export Memory(MemoryJson) failed: a part of another memory export"
    );
    let cut = [part.beside[0][..part.beside[0].len() - 3].to_vec()];
    let out = send(&mut s, &o, 6, Request::ExportJoin(csv.clone()), &cut);
    assert!(failed(&out).starts_with("export Memory(MemoryCsv) failed: buffer cut at byte "));
    let out = send(
        &mut s,
        &o,
        7,
        Request::ExportPart {
            what: csv,
            round: 1,
        },
        &[],
    );
    assert_eq!(
        failed(&out),
        "export part Memory(MemoryCsv): Memory(MemoryCsv) has 1 part round(s); round 1 asked"
    );
    // A report of a rank no part holds.
    let report = ExportRequest::Anomaly {
        what: AnomalyExportKind::ReportMd,
        rank: Some(1),
    };
    let facts = send(
        &mut s,
        &o,
        8,
        Request::ExportPart {
            what: report.clone(),
            round: 0,
        },
        &[],
    );
    let pieces = send(
        &mut s,
        &o,
        9,
        Request::ExportPart {
            what: report.clone(),
            round: 1,
        },
        &facts.beside,
    );
    let out = send(&mut s, &o, 10, Request::ExportJoin(report), &pieces.beside);
    assert_eq!(
        failed(&out),
        "export Anomaly { what: ReportMd, rank: Some(1) } failed: level1/rank1_ascend_pt: no anomaly analysis"
    );
    // A session that holds no rank folder exports nothing and says why.
    let mut fresh = Session::new();
    let metas = session_common::metas(&files);
    send(&mut fresh, &o, 1, Request::Open { files: metas }, &[]);
    let csv = ExportRequest::Memory(MemoryExportKind::MemoryCsv);
    let out = send(&mut fresh, &o, 2, Request::Export(csv), &[]);
    assert_eq!(
        failed(&out),
        "export Memory(MemoryCsv): no rank folder has been analysed here (Run first)"
    );
}

/// Opens `folder` in two sessions, runs rank folder `i` on session `i % 2`, writes the CLI's
/// JSON and reports, and checks the gathered JSON (`json_name`), reports (`reports`: rank
/// folder index and file name) and kernel tables (`kernels_….csv` of the same ranks) equal
/// the CLI's bytes in both orders, reading no file.
/// Returns the CLI's JSON.
fn gpu_gather_equals_cli(
    folder: &str,
    ranks: u32,
    json_name: &str,
    reports: &[(u32, String)],
) -> serde_json::Value {
    let (fs, files) = FsOpener::walk(Path::new(folder)).unwrap();
    let (o, _) = Counting::new(fs);
    let metas = session_common::metas(&files);
    let mut sessions = [Session::new(), Session::new()];
    let open = send(
        &mut sessions[0],
        &o,
        1,
        Request::Open {
            files: metas.clone(),
        },
        &[],
    );
    send(
        &mut sessions[1],
        &o,
        1,
        Request::Open { files: metas },
        &open.beside,
    );
    for (k, s) in sessions.iter_mut().enumerate() {
        let targets: Vec<Target> = (0..ranks)
            .filter(|i| *i as usize % 2 == k)
            .map(Target::Rank)
            .collect();
        let n = targets.len() as u32;
        let run = Request::Run {
            analyses: vec![AnalysisKind::Anomaly],
            targets,
        };
        let out = send(s, &o, 2, run, &[]);
        assert!(
            matches!(
                out.out.last(),
                Some((2, Response::RunDone { done, failed: 0 })) if *done == n
            ),
            "{:?}",
            out.out
        );
    }
    let dir = tmp(json_name);
    let (json_path, report_dir) = (dir.join("a.json"), dir.join("reports"));
    cli(&[
        "anomaly",
        folder,
        "--out",
        json_path.to_str().unwrap(),
        "--report-dir",
        report_dir.to_str().unwrap(),
    ]);
    let json = std::fs::read(&json_path).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let mut want = vec![(
        ExportRequest::Anomaly {
            what: AnomalyExportKind::Json,
            rank: None,
        },
        json,
        json_name.to_string(),
    )];
    for (rank, name) in reports {
        let what = ExportRequest::Anomaly {
            what: AnomalyExportKind::ReportMd,
            rank: Some(*rank),
        };
        want.push((
            what,
            std::fs::read(report_dir.join(name)).unwrap(),
            name.clone(),
        ));
        // The rank's kernel table, written next to its report.
        let csv = name
            .replace("anomaly_report_", "kernels_")
            .replace(".md", ".csv");
        let what = ExportRequest::Anomaly {
            what: AnomalyExportKind::KernelsCsv,
            rank: Some(*rank),
        };
        want.push((what, std::fs::read(report_dir.join(&csv)).unwrap(), csv));
    }
    let before = o.snapshot();
    for (what, bytes, name) in &want {
        for order in [[0, 1], [1, 0]] {
            let out = gather(&mut sessions, &o, what, order);
            assert_eq!(done_name(&out), *name);
            assert!(out.bytes == *bytes, "{what:?} in order {order:?} differs");
        }
    }
    assert_eq!(o.snapshot(), before, "exports read no file");
    let _ = std::fs::remove_dir_all(&dir);
    v
}

/// The trace_filter pair split over two sessions: the JSON's straggler rows need both ranks'
/// collectives, and the reports the cross-rank table of both — the CLI's bytes.
#[test]
fn gpu_ranks_split_over_two_sessions_gather_the_straggler_view() {
    const TF: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/trace_filter"
    );
    let reports: Vec<(u32, String)> = (0..2)
        .map(|r| (r, format!("anomaly_report_trace_filter_rank{r}.md")))
        .collect();
    let v = gpu_gather_equals_cli(TF, 2, "anomaly_trace_filter.json", &reports);
    let last = |k: usize| v[k]["gpu"]["straggler"]["started_last"].as_u64();
    assert_eq!(
        (last(0), last(1)),
        (Some(2), Some(8)),
        "straggler rows of both ranks"
    );
}

/// Two roles (actor, critic) each linked to the trace_filter pair, the four ranks spread over
/// two sessions (each session holds one rank of each role): the gathered JSON and reports
/// group the slow-rank rule and the straggler view by role exactly as the CLI does (each
/// role's rank 1 started 8 of 10 collectives last), and the report names carry the role.
#[cfg(unix)]
#[test]
fn two_roles_split_over_two_sessions_gather_per_role_views() {
    let run = tmp("roles_run");
    let tf = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/trace_filter"
    ))
    .canonicalize()
    .unwrap();
    for role in ["actor", "critic"] {
        let d = run.join(role);
        std::fs::create_dir_all(&d).unwrap();
        for f in ["sampled_rank-0.json.gz", "sampled_rank-1.json.gz"] {
            std::os::unix::fs::symlink(tf.join(f), d.join(f)).unwrap();
        }
    }
    let base = run.file_name().unwrap().to_str().unwrap().to_string();
    let reports: Vec<(u32, String)> = [("actor", 0), ("actor", 1), ("critic", 0), ("critic", 1)]
        .iter()
        .enumerate()
        .map(|(i, (role, r))| (i as u32, format!("anomaly_report_{base}_{role}_rank{r}.md")))
        .collect();
    let v = gpu_gather_equals_cli(
        run.to_str().unwrap(),
        4,
        &format!("anomaly_{base}.json"),
        &reports,
    );
    let rows: Vec<(String, u64, bool)> = (0..4)
        .map(|k| {
            let s = &v[k]["gpu"]["straggler"];
            (
                s["group"].as_str().unwrap().to_string(),
                s["started_last"].as_u64().unwrap(),
                s["is_straggler"].as_bool().unwrap(),
            )
        })
        .collect();
    let r = |g: &str, n: u64, s: bool| (g.to_string(), n, s);
    assert_eq!(
        rows,
        vec![
            r("actor", 2, false),
            r("actor", 8, true),
            r("critic", 2, false),
            r("critic", 8, true)
        ]
    );
    let _ = std::fs::remove_dir_all(&run);
}
