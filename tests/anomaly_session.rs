//! The worker's request handler driven natively for the steps / bubbles view, as the browser
//! drives it: `Open`, `Run { Anomaly }`, the `Anomaly` queries and an `AnomalyExport` whose
//! chunked bytes equal `proflens anomaly`'s output, on the real msinsight level1 folder.

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::session::Session;
use proflens::protocol::anomaly::{
    AnomalyExportKind, AnomalyQuery, AnomalyReply, BubbleColumn, BubbleQuery,
};
use proflens::protocol::{AnalysisKind, ExportRequest, Query, Reply, Request, Response, Summary};

const LEVEL1: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1"
);

mod session_common;
use session_common::{open_dir, send as ask};

fn open() -> (Session, FsOpener) {
    let mut s = Session::new();
    let (opener, out) = open_dir(&mut s, std::path::Path::new(LEVEL1));
    let Response::Inventory(inv) = &out.out[0].1 else {
        panic!("{:?}", out.out[0].1)
    };
    let anom = inv.ranks[0]
        .analyses
        .iter()
        .find(|a| a.analysis == AnalysisKind::Anomaly)
        .unwrap();
    assert!(anom.can_run, "level1 rank 0 can run the anomaly analysis");
    (s, opener)
}

#[test]
fn run_queries_and_export_through_the_session() {
    let (mut s, opener) = open();
    // Queries before the run name what is missing.
    let early = ask(
        &mut s,
        &opener,
        2,
        Request::Query(Query::Anomaly(AnomalyQuery::Steps { rank: 0 })),
    );
    assert!(
        matches!(&early.out[0].1, Response::Failed(f) if f.message.contains("no anomaly analysis"))
    );
    let run = ask(
        &mut s,
        &opener,
        3,
        Request::run(AnalysisKind::Anomaly, vec![0, 1, 9]),
    );
    let done: Vec<_> = run
        .out
        .iter()
        .filter_map(|(seq, r)| match r {
            Response::Done {
                summary: Summary::Anomaly(d),
                ..
            } => Some((*seq, d.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(done.len(), 2);
    assert!(done.iter().all(|(seq, _)| *seq == 3));
    // §13.1 service of both ranks.
    assert!((done[0].1.service_ms_avg - 154.4835).abs() <= 1e-3);
    assert!((done[1].1.service_ms_avg - 152.34575).abs() <= 1e-3);
    assert_eq!(done[0].1.dir, "level1/rank0_ascend_pt");
    // The unknown target fails alone; RunDone counts both.
    assert!(run.out.iter().any(|(_, r)| matches!(
        r,
        Response::TargetFailed {
            analysis: AnalysisKind::Anomaly,
            target: 9,
            ..
        }
    )));
    assert!(run
        .out
        .iter()
        .any(|(_, r)| matches!(r, Response::RunDone { done: 2, failed: 1 })));

    let steps = ask(
        &mut s,
        &opener,
        4,
        Request::Query(Query::Anomaly(AnomalyQuery::Steps { rank: 1 })),
    );
    let Response::Reply(Reply::Anomaly(AnomalyReply::Steps { rank: 1, steps })) = &steps.out[0].1
    else {
        panic!("{:?}", steps.out[0].1)
    };
    assert_eq!(steps.len(), 1);
    assert!((steps[0].prelaunch_gap_ms - 20.43325).abs() <= 1e-3);
    let page = ask(
        &mut s,
        &opener,
        5,
        Request::Query(Query::Anomaly(AnomalyQuery::Bubbles(BubbleQuery {
            rank: 0,
            sort: BubbleColumn::Duration,
            descending: true,
            label: String::new(),
            scope: "global".into(),
            step: None,
            offset: 0,
            limit: 2,
        }))),
    );
    let Response::Reply(Reply::Anomaly(AnomalyReply::Bubbles(p))) = &page.out[0].1 else {
        panic!("{:?}", page.out[0].1)
    };
    assert_eq!((p.total, p.matching, p.rows.len()), (56, 5, 2));
    // §13.2 top-2 global gaps.
    assert!((p.rows[0].duration_ms - 1.31875).abs() <= 1e-3);
    assert!((p.rows[1].duration_ms - 1.2405).abs() <= 1e-3);
    let detail = ask(
        &mut s,
        &opener,
        6,
        Request::Query(Query::Anomaly(AnomalyQuery::Bubble {
            rank: 0,
            index: p.rows[0].index,
        })),
    );
    let Response::Reply(Reply::Anomaly(AnomalyReply::Bubble(d))) = &detail.out[0].1 else {
        panic!("{:?}", detail.out[0].1)
    };
    assert_eq!(d.bubble.bubble_id, "global:global:0");
    assert_eq!(
        d.after.as_ref().map(|k| k.name.as_str()),
        Some("trans_TransData_6")
    );

    // Export: chunks then ExportDone; the bytes are the CLI's stdout.
    let exp = ask(
        &mut s,
        &opener,
        7,
        Request::Export(ExportRequest::Anomaly {
            what: AnomalyExportKind::Json,
            rank: None,
        }),
    );
    assert!(
        matches!(exp.out.last().unwrap().1, Response::ExportDone { ref file_name, .. } if file_name == "anomaly_level1.json")
    );
    let cli = std::process::Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(["anomaly", LEVEL1])
        .output()
        .unwrap();
    assert_eq!(exp.bytes, cli.stdout, "export bytes differ from the CLI's");
    let md = ask(
        &mut s,
        &opener,
        8,
        Request::Export(ExportRequest::Anomaly {
            what: AnomalyExportKind::ArchitectureMd,
            rank: None,
        }),
    );
    assert!(
        matches!(&md.out.last().unwrap().1, Response::Failed(f) if f.message.contains("no rank folder chosen"))
    );
}
