//! The Communication tab's worker side on MSI-ST (ranks 0, 1, 3; rank 2 missing), split over
//! two sessions as on a pool of two workers: each runs its rank folders (the communication
//! read with the other analyses, one read per file), sends its per-rank tables once
//! (`ExportPart` round 0 of `ExportRequest::Comm`), one joins them (`Query::Comm(Join)`), and
//! the joined report's `comm.json` is byte for byte `proflens comm DIR --json -`. The overview
//! carries communication.md §5.1's golden numbers; the heatmap window carries the matrix.

mod session_common;

use std::path::Path;
use std::process::Command;

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::session::{Collected, Session};
use proflens::protocol::comm::{
    CommExportKind, CommMatrixQuery, CommMetric, CommOverviewDto, CommQuery, CommReply,
};
use proflens::protocol::{
    AnalysisKind, Envelope, ExportRequest, Query, Reply, Request, Response, Summary, Target,
};

const ST: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/Ascend__msinsight/test/st/level2"
);

fn send(s: &mut Session, o: &FsOpener, seq: u32, body: Request, beside: &[Vec<u8>]) -> Collected {
    let mut out = Collected::default();
    s.handle_with(Envelope { seq, body }, beside, o, &mut out);
    out
}

fn reply(c: &Collected) -> CommReply {
    match c.out.last() {
        Some((_, Response::Reply(Reply::Comm(r)))) => r.clone(),
        other => panic!("no comm reply: {other:?}"),
    }
}

/// Two sessions over folder `dir`, rank folders `split[k]` run in the k-th, joined on the first.
fn joined(dir: &str, split: [&[u32]; 2]) -> (Vec<Session>, FsOpener, CommOverviewDto) {
    let (o, files) = FsOpener::walk(Path::new(dir)).unwrap();
    let metas = session_common::metas(&files);
    let mut sessions = vec![Session::new(), Session::new()];
    let a = send(
        &mut sessions[0],
        &o,
        1,
        Request::Open {
            files: metas.clone(),
        },
        &[],
    );
    let inv = match &a.out[0].1 {
        Response::Inventory(i) => i.clone(),
        other => panic!("{other:?}"),
    };
    // Ranks 1 and 3 hold only communication files (and step_trace_time.csv): they can run
    // the communication analysis.
    for r in &inv.ranks {
        let c = r.analyses.iter().find(|c| c.analysis == AnalysisKind::Comm);
        assert!(c.is_some_and(|c| c.can_run), "{}: {:?}", r.dir, r.analyses);
    }
    send(
        &mut sessions[1],
        &o,
        1,
        Request::Open { files: metas },
        &a.beside,
    );
    let mut parts = Vec::new();
    for (k, s) in sessions.iter_mut().enumerate() {
        for &t in split[k] {
            let run = send(
                s,
                &o,
                2,
                Request::Run {
                    analyses: vec![
                        AnalysisKind::Memory,
                        AnalysisKind::Anomaly,
                        AnalysisKind::Comm,
                    ],
                    targets: vec![Target::Rank(t)],
                },
                &[],
            );
            let comm_done = run.out.iter().any(|(_, r)| {
                matches!(r, Response::Done { summary: Summary::Comm(c), .. } if c.has_time && (c.has_matrix || dir != ST))
            });
            assert!(comm_done, "rank folder {t}: {:?}", run.out);
        }
        let part = send(
            s,
            &o,
            3,
            Request::ExportPart {
                what: ExportRequest::Comm(CommExportKind::Json),
                round: 0,
            },
            &[],
        );
        parts.push(part.beside.into_iter().next().expect("a part"));
    }
    // A cut or foreign part is refused in words, never a panic.
    for bad in [
        parts[0][..parts[0].len() / 2].to_vec(),
        b"not a part".to_vec(),
    ] {
        let j = send(
            &mut sessions[0],
            &o,
            4,
            Request::Query(Query::Comm(CommQuery::Join { parity: false })),
            &[bad],
        );
        assert!(
            matches!(j.out.last(), Some((_, Response::Failed(_)))),
            "{:?}",
            j.out
        );
    }
    let j = send(
        &mut sessions[0],
        &o,
        4,
        Request::Query(Query::Comm(CommQuery::Join { parity: false })),
        &parts,
    );
    let CommReply::Overview(ov) = reply(&j) else {
        panic!("no overview")
    };
    (sessions, o, *ov)
}

fn cli_json(dir: &str) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(["comm", dir, "--json", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    out.stdout
}

#[test]
fn joined_over_two_sessions_equals_the_cli_and_the_golden_values() {
    let want = cli_json(ST);
    for split in [[&[0u32][..], &[1, 2][..]], [&[2u32, 0][..], &[1][..]]] {
        let (mut sessions, o, ov) = joined(ST, split);
        let exp = send(
            &mut sessions[0],
            &o,
            5,
            Request::Export(ExportRequest::Comm(CommExportKind::Json)),
            &[],
        );
        assert!(
            matches!(exp.out.last(), Some((_, Response::ExportDone { file_name, .. })) if file_name == "comm.json")
        );
        assert_eq!(
            String::from_utf8_lossy(&exp.bytes),
            String::from_utf8_lossy(&want),
            "split {split:?}"
        );
        assert_eq!(ov.ranks, vec![0, 1, 3]);
        assert_eq!(ov.time.len(), 17);
        // Every Ascend table of --csv-dir is offered, no GPU one.
        assert_eq!(
            ov.csv_tables,
            proflens::report::comm::NAMES[..9]
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
        );
        // §5.1: rank 1 of the default group: elapse 2.92572, transit 0.00658, ratios.
        let t = ov
            .time
            .iter()
            .find(|t| t.group == "5862276093215481612" && t.rank == 1)
            .unwrap();
        assert!((t.elapse_ms - 2.92572).abs() < 1e-9 && (t.transit_ms - 0.00658).abs() < 1e-12);
        assert_eq!((t.wait_ratio, t.sync_ratio), (0.9972, 0.9942));
        // §5.1 bandwidth: dp_cp rank 0 HCCS 18.9444 GB/s, large-packet ratio 0.9091.
        let b = ov
            .bandwidth
            .iter()
            .find(|b| b.group == "5862276114690318097" && b.rank == 0 && b.transport == "HCCS")
            .unwrap();
        assert_eq!(
            (b.bandwidth_gbps, b.large_packet_ratio),
            (18.9444, Some(0.9091))
        );
        // Who arrived last: every op of the step has a row.
        assert!(!ov.arrivals.is_empty());

        // The heatmap of dp_cp (global ranks 0, 1): link 0→1 HCCS 18.9444 GB/s (§5.1).
        let m = send(
            &mut sessions[0],
            &o,
            6,
            Request::Query(Query::Comm(CommQuery::Matrix(CommMatrixQuery {
                step: "step13".into(),
                group: "5862276114690318097".into(),
                kind: "Total Op Info".into(),
                metric: CommMetric::Bandwidth,
                x0: 0,
                y0: 0,
                span: 64,
                max_blocks: 64,
            }))),
            &[],
        );
        let CommReply::Matrix(m) = reply(&m) else {
            panic!("no matrix")
        };
        assert_eq!(m.axis, vec![0, 1]);
        assert_eq!(m.block, 1);
        // Row = dst 1, column = src 0.
        assert_eq!(m.mean[2], 18.9444);
        assert_eq!(m.detail[2].3, "HCCS");
        assert_eq!(m.mean[0], 90.2654, "0→0 LOCAL");
    }
}

#[test]
fn op_sizes_cross_workers_so_the_page_flags_the_slow_link_the_cli_flags() {
    // Each rank's data sizes (read from its trace_view.json in the worker that ran it) travel
    // with its tables to the joining worker (fixtures/comm_slow_link: one flagged link).
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/comm_slow_link");
    let (mut sessions, o, ov) = joined(dir, [&[1], &[0]]);
    assert_eq!((ov.slow_link_rows, ov.slow_link_rows_sized), (26, 24));
    assert_eq!(ov.slow_links.len(), 1);
    assert_eq!(ov.slow_links[0].name, "hcom_allReduce_2_1024");
    let exp = send(
        &mut sessions[0],
        &o,
        5,
        Request::Export(ExportRequest::Comm(CommExportKind::Json)),
        &[],
    );
    assert_eq!(
        String::from_utf8_lossy(&exp.bytes),
        String::from_utf8_lossy(&cli_json(dir))
    );
}

#[test]
fn the_default_groups_missing_rank_is_marked_in_the_heatmap() {
    let (mut sessions, o, ov) = joined(ST, [&[0, 1, 2], &[]]);
    let g = ov
        .groups
        .iter()
        .find(|g| g.group == "5862276093215481612")
        .unwrap();
    assert_eq!(g.missing, vec![2]);
    let m = send(
        &mut sessions[0],
        &o,
        6,
        Request::Query(Query::Comm(CommQuery::Matrix(CommMatrixQuery {
            step: "step13".into(),
            group: g.group.clone(),
            kind: "Total Op Info".into(),
            metric: CommMetric::Size,
            x0: 0,
            y0: 0,
            span: 4,
            max_blocks: 64,
        }))),
        &[],
    );
    let CommReply::Matrix(m) = reply(&m) else {
        panic!("no matrix")
    };
    assert_eq!(m.axis, vec![0, 1, 2, 3]);
    assert_eq!(m.missing, vec![2]);
    assert!(m.missing_cell[2] && m.missing_cell[2 * 4 + 1]);
    // §5.1: 0→3 in the default group 0.000096 MB (row dst 3, column src 0).
    assert_eq!(m.mean[3 * 4], 0.000096);
    // A CSV table export, the `--csv-dir` bytes.
    let csv = send(
        &mut sessions[0],
        &o,
        7,
        Request::Export(ExportRequest::Comm(CommExportKind::Csv(
            "time_summary".into(),
        ))),
        &[],
    );
    let text = String::from_utf8(csv.bytes).unwrap();
    assert!(
        text.starts_with("step,group,rank,n_ops,elapse_ms"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 18);
}

#[test]
fn gpu_collectives_of_a_trace_join_as_the_cli_writes_them() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/nccl_parser_config"
    );
    let (o, files) = FsOpener::walk(Path::new(dir)).unwrap();
    let files: Vec<_> = files
        .into_iter()
        .filter(|f| f.path.ends_with("nccl_data.json.gz"))
        .collect();
    let mut s = Session::new();
    let open = send(
        &mut s,
        &o,
        1,
        Request::Open {
            files: session_common::metas(&files),
        },
        &[],
    );
    let Response::Inventory(inv) = &open.out[0].1 else {
        panic!("{:?}", open.out)
    };
    // A GPU rank asks for no communication files.
    assert!(inv.ranks[0]
        .analyses
        .iter()
        .all(|a| a.analysis != AnalysisKind::Comm));
    send(&mut s, &o, 2, Request::run(AnalysisKind::Anomaly, [0]), &[]);
    let part = send(
        &mut s,
        &o,
        3,
        Request::ExportPart {
            what: ExportRequest::Comm(CommExportKind::Json),
            round: 0,
        },
        &[],
    );
    let j = send(
        &mut s,
        &o,
        4,
        Request::Query(Query::Comm(CommQuery::Join { parity: false })),
        &part.beside,
    );
    let CommReply::Overview(ov) = reply(&j) else {
        panic!("no overview")
    };
    assert!(!ov.collectives.is_empty());
    // A GPU drop's export offers its collectives only.
    assert_eq!(ov.csv_tables, ["collectives"]);
    let exp = send(
        &mut s,
        &o,
        5,
        Request::Export(ExportRequest::Comm(CommExportKind::Json)),
        &[],
    );
    let want = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(["comm", &format!("{dir}/nccl_data.json.gz"), "--json", "-"])
        .output()
        .unwrap()
        .stdout;
    assert_eq!(
        String::from_utf8_lossy(&exp.bytes),
        String::from_utf8_lossy(&want)
    );
}
