//! A merged multi-rank trace in the page (gpu-traces.md §6): the worker's session splits it in
//! its one read and reports every rank with its own view index (`protocol::view_index`), answers
//! each rank's queries, and writes exports that are the CLI's bytes — the JSON of every rank,
//! and a chosen rank's report.
mod real_world_common;
mod session_common;

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::session::{Collected, Session};
use proflens::protocol::anomaly::{AnomalyExportKind, AnomalyQuery, AnomalyReply};
use proflens::protocol::view_index::{part_index, split_index};
use proflens::protocol::{
    AnalysisKind, Envelope, ExportRequest, Query, Reply, Request, Response, Summary, Target,
};
use real_world_common::fused_dlrm;

/// The bytes of the CLI's anomaly report of rank `r` in `dir` (`anomaly_report_…_rank<r>.md`).
fn report_of_rank(dir: &std::path::Path, r: i64) -> Vec<u8> {
    let end = format!("_rank{r}.md");
    let p = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("anomaly_report_") && n.ends_with(&end)
        })
        .unwrap();
    std::fs::read(p).unwrap()
}

fn handle(s: &mut Session, o: &FsOpener, seq: u32, body: Request) -> Collected {
    let mut out = Collected::default();
    s.handle(Envelope { seq, body }, o, &mut out);
    out
}

#[test]
fn a_merged_trace_shows_every_rank_in_the_page_with_the_clis_exports() {
    let dir = std::env::temp_dir().join(format!("proflens-merged-session-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (_, merged) = fused_dlrm("merged_session");
    std::fs::write(dir.join("merged_trace.json"), merged).unwrap();

    let mut s = Session::new();
    let (opener, _) = session_common::open_dir(&mut s, &dir);
    let run = handle(
        &mut s,
        &opener,
        2,
        Request::Run {
            analyses: vec![AnalysisKind::Anomaly],
            targets: vec![Target::Rank(0)],
        },
    );
    // The file's own rank first, then the seven others, each with its view index and id.
    let done: Vec<(u32, Option<i64>)> = run
        .out
        .iter()
        .filter_map(|(_, r)| match r {
            Response::Done {
                target,
                summary: Summary::Anomaly(a),
            } => Some((*target, a.rank_id)),
            _ => None,
        })
        .collect();
    let mut want = vec![(0, Some(0))];
    want.extend((1..8).map(|k| (part_index(0, k).unwrap(), Some(k as i64))));
    assert_eq!(done, want);
    assert!(matches!(
        run.out.last(),
        Some((2, Response::RunDone { done: 8, failed: 0 }))
    ));
    assert_eq!(split_index(want[3].0), (0, Some(3)));

    // Each rank answers its own steps (ProfilerStep#10 of that rank, its own window).
    let mut starts = Vec::new();
    for &(v, _) in &want {
        let out = handle(
            &mut s,
            &opener,
            3,
            Request::Query(Query::Anomaly(AnomalyQuery::Steps { rank: v })),
        );
        match &out.out[0].1 {
            Response::Reply(Reply::Anomaly(AnomalyReply::Steps { rank, steps })) => {
                assert_eq!(*rank, v);
                assert_eq!(steps.len(), 1);
                assert_eq!(steps[0].step_id, "ProfilerStep#10");
                starts.push(steps[0].start_us);
            }
            other => panic!("{other:?}"),
        }
    }
    starts.dedup();
    assert_eq!(starts.len(), 8, "eight ranks, eight windows: {starts:?}");

    // The exports are the CLI's bytes on the same file: the JSON of all eight ranks, and the
    // report of rank 3 chosen by its view index.
    let cli_dir = dir.with_extension("cli");
    let json = cli_dir.join("anomaly.json");
    let reports = cli_dir.join("reports");
    std::fs::create_dir_all(&cli_dir).unwrap();
    let code = proflens::cli::main(vec![
        "anomaly".into(),
        dir.display().to_string(),
        "--out".into(),
        json.display().to_string(),
        "--report-dir".into(),
        reports.display().to_string(),
    ]);
    assert_eq!(code, 0);
    for (what, rank, want) in [
        (AnomalyExportKind::Json, None, std::fs::read(&json).unwrap()),
        (
            AnomalyExportKind::ReportMd,
            Some(part_index(0, 3).unwrap()),
            report_of_rank(&reports, 3),
        ),
    ] {
        let out = handle(
            &mut s,
            &opener,
            4,
            Request::Export(ExportRequest::Anomaly { what, rank }),
        );
        assert!(
            matches!(out.out.last(), Some((4, Response::ExportDone { .. }))),
            "{what:?}: {:?}",
            out.out.last()
        );
        assert!(out.bytes == want, "{what:?} differs from the CLI's");
        // Gathered the way a pool of workers writes it (part rounds, then the join): the same.
        let req = ExportRequest::Anomaly { what, rank };
        let mut parts: Vec<Vec<u8>> = Vec::new();
        for round in 0..req.part_rounds() {
            let mut out = Collected::default();
            let body = Request::ExportPart {
                what: req.clone(),
                round,
            };
            s.handle_with(Envelope { seq: 5, body }, &parts, &opener, &mut out);
            parts = vec![out.beside.into_iter().next().unwrap()];
        }
        let mut out = Collected::default();
        let body = Request::ExportJoin(req);
        s.handle_with(Envelope { seq: 6, body }, &parts, &opener, &mut out);
        assert!(
            out.bytes == want,
            "{what:?} gathered differs from the CLI's"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&cli_dir);
}
