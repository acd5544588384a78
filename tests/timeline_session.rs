//! `AnomalyQuery::Timeline` / `AnomalyQuery::KernelAt` through the worker's session handler, natively,
//! on the real level1 folder (as the worker runs them in the browser).

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::session::{Collected, Session};
use proflens::protocol::{
    AnalysisKind, AnomalyQuery, AnomalyReply, Envelope, FileMeta, LaneKind, Query, Reply, Request,
    Response,
};

fn ask(s: &mut Session, opener: &FsOpener, body: Request) -> Response {
    let mut out = Collected::default();
    s.handle(Envelope { seq: 9, body }, opener, &mut out);
    assert_eq!(out.out.len(), 1, "one reply: {:?}", out.out);
    // The reply survives the wire format.
    let r = out.out.pop().unwrap().1;
    let json = serde_json::to_string(&r).unwrap();
    assert_eq!(serde_json::from_str::<Response>(&json).unwrap(), r);
    r
}

#[test]
fn timeline_and_kernel_at_answer_from_the_anomaly_results() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1");
    let (opener, files) = FsOpener::walk(&dir).unwrap();
    let files = files
        .iter()
        .map(|f| FileMeta {
            path: f.path.clone(),
            size: f.size,
        })
        .collect();
    let mut s = Session::new();
    let mut out = Collected::default();
    s.handle(
        Envelope {
            seq: 1,
            body: Request::Open { files },
        },
        &opener,
        &mut out,
    );
    // Before the run: a clear failure, not a panic.
    let before = ask(
        &mut s,
        &opener,
        Request::Query(Query::Anomaly(AnomalyQuery::Timeline {
            rank: 0,
            x_range_ms: None,
            width_px: 800,
        })),
    );
    assert!(
        matches!(before, Response::Failed(ref f) if f.message.contains("not been analysed")),
        "{before:?}"
    );
    s.handle(
        Envelope {
            seq: 2,
            body: Request::run(AnalysisKind::Anomaly, vec![0, 1]),
        },
        &opener,
        &mut out,
    );
    let Response::Reply(Reply::Anomaly(AnomalyReply::Timeline(d))) = ask(
        &mut s,
        &opener,
        Request::Query(Query::Anomaly(AnomalyQuery::Timeline {
            rank: 0,
            x_range_ms: None,
            width_px: 1600,
        })),
    ) else {
        panic!("timeline reply");
    };
    // Streams 2, 3, hccl + 7 host threads (tests/timeline_fixture.rs has the per-lane checks).
    assert_eq!(d.lanes.len(), 10);
    assert_eq!(
        d.lanes
            .iter()
            .filter(|l| l.kind == LaneKind::Device)
            .count(),
        3
    );
    assert_eq!(d.lanes[2].label, "stream hccl");
    assert_eq!(d.lanes[2].total, 4);
    assert_eq!(
        (d.origin_ms * 1000.0).round() / 1000.0,
        1_736_408_883_686.741
    );
    // Last kernel end − ProfilerStep#50 ts = 154483.511 µs (Decimal sum over kernel_details.csv;
    // §13.1's service 154.48350 ms is the same within its ±0.001 ms).
    assert!(
        (d.full_range_ms.1 - 154.483511).abs() < 1e-9,
        "{:?}",
        d.full_range_ms
    );
    assert_eq!(d.steps.len(), 1);
    // The first HCCL box: its kernel row.
    let t = d.lanes[2].boxes.start_ms[0] + 0.001;
    let Response::Reply(Reply::Anomaly(AnomalyReply::KernelAt(Some(k)))) = ask(
        &mut s,
        &opener,
        Request::Query(Query::Anomaly(AnomalyQuery::KernelAt {
            rank: 0,
            t_ms: t,
            lane: 2,
            slop_ms: 0.0,
        })),
    ) else {
        panic!("kernel reply");
    };
    assert!(k.name.starts_with("hcom_allReduce__586_"), "{}", k.name);
    assert_eq!(
        (k.stream.as_str(), k.class.as_str(), k.kind),
        ("hccl", "HCCL", LaneKind::Device)
    );
    assert!(k.source_row > 1);
    assert_eq!(k.step_id.as_deref(), Some("ProfilerStep#50"));
    // Nothing there: None; unknown rank: a failure.
    assert_eq!(
        ask(
            &mut s,
            &opener,
            Request::Query(Query::Anomaly(AnomalyQuery::KernelAt {
                rank: 0,
                t_ms: -50.0,
                lane: 2,
                slop_ms: 0.0
            }))
        ),
        Response::Reply(Reply::Anomaly(AnomalyReply::KernelAt(None)))
    );
    assert!(matches!(
        ask(
            &mut s,
            &opener,
            Request::Query(Query::Anomaly(AnomalyQuery::KernelAt {
                rank: 7,
                t_ms: 1.0,
                lane: 0,
                slop_ms: 0.0
            }))
        ),
        Response::Failed(_)
    ));
    // Rank 1 is served from the same session.
    let Response::Reply(Reply::Anomaly(AnomalyReply::Timeline(d1))) = ask(
        &mut s,
        &opener,
        Request::Query(Query::Anomaly(AnomalyQuery::Timeline {
            rank: 1,
            x_range_ms: Some((20.0, 21.0)),
            width_px: 800,
        })),
    ) else {
        panic!("timeline reply");
    };
    assert_eq!(d1.x_range_ms, (20.0, 21.0));
    assert_eq!(d1.rank, 1);
}
