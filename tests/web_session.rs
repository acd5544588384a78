//! The worker's request handler (`engine::session::Session`) driven natively, as the worker
//! drives it in the browser: `Open` with the file list, then `Run` and the view queries,
//! on the real msinsight level1 fixture through the fs opener.

mod session_common;

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::session::{Collected, Session};
use proflens::protocol::{
    AnalysisKind, Envelope, MemoryQuery, MemoryReply, Query, Reply, Request, Response, Summary,
};

fn fixture(rel: &str) -> std::path::PathBuf {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures")
        .join(rel);
    assert!(p.exists(), "fixture missing: {}", p.display());
    p
}

const LEVEL1: &str = "ascend/Ascend__msinsight/test/data/pytorch/text/level1";

fn open(session: &mut Session, rel: &str) -> (FsOpener, Collected) {
    session_common::open_dir(session, &fixture(rel))
}

#[test]
fn open_gives_the_inventory_of_level1() {
    let mut s = Session::new();
    let (_opener, out) = open(&mut s, LEVEL1);
    assert_eq!(out.out.len(), 1);
    let Response::Inventory(inv) = &out.out[0].1 else {
        panic!("expected an inventory, got {:?}", out.out[0].1);
    };
    assert_eq!(inv.ranks.len(), 2);
    let r0 = &inv.ranks[0];
    assert_eq!(r0.dir, "level1/rank0_ascend_pt");
    assert_eq!(r0.role, "level1");
    assert_eq!(r0.rank_id, Some(0));
    assert_eq!(r0.level.as_deref(), Some("Level1"));
    assert_eq!(r0.export_type.as_deref(), Some("text"));
    let mem = r0
        .analyses
        .iter()
        .find(|a| a.analysis == AnalysisKind::Memory)
        .unwrap();
    assert!(mem.can_run && mem.missing.is_empty());
    // Every file of the card carries its index in the Open list, for progress bars.
    let csv = r0
        .files
        .iter()
        .find(|f| f.kind == "operator_memory.csv")
        .unwrap();
    assert_eq!(
        csv.path,
        "level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv"
    );
    assert_ne!(csv.file, u32::MAX);
    assert!(inv.ignored.is_empty());
    assert_eq!(inv.ranks[1].rank_id, Some(1));
}

#[test]
fn queries_before_a_run_fail_with_a_message() {
    let mut s = Session::new();
    let (opener, _) = FsOpener::walk(&fixture(LEVEL1)).unwrap();
    let mut out = Collected::default();
    s.handle(
        Envelope {
            seq: 9,
            body: Request::Query(Query::Memory(MemoryQuery::Stack { rank: 0, row: 0 })),
        },
        &opener,
        &mut out,
    );
    match &out.out[0] {
        (9, Response::Failed(f)) => assert!(f.message.contains("nothing is loaded")),
        other => panic!("unexpected {other:?}"),
    }
}

fn run_all(s: &mut Session, opener: &FsOpener, ranks: Vec<u32>) -> Vec<(u32, Response)> {
    let mut out = Collected::default();
    s.handle(
        Envelope {
            seq: 2,
            body: Request::run(AnalysisKind::Memory, ranks),
        },
        opener,
        &mut out,
    );
    out.out
}

fn ask(s: &mut Session, opener: &FsOpener, body: Request) -> Response {
    let mut out = Collected::default();
    s.handle(Envelope { seq: 3, body }, opener, &mut out);
    assert_eq!(out.out.len(), 1, "one reply per query");
    out.out.remove(0).1
}

#[test]
fn run_then_query_level1_rank0_golden_values() {
    use proflens::protocol::{RowFilter, RowsQuery};
    let mut s = Session::new();
    let (opener, _) = open(&mut s, LEVEL1);
    let replies = run_all(&mut s, &opener, vec![0, 1]);
    let done: Vec<_> = replies
        .iter()
        .filter_map(|(_, r)| match r {
            Response::Done {
                summary: Summary::Memory(d),
                ..
            } => Some(d.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(done.len(), 2);
    assert!(matches!(
        replies.last(),
        Some((2, Response::RunDone { done: 2, failed: 0 }))
    ));
    // ascend-memory.md §12.2 (level1 rank 0).
    let r0 = &done[0];
    assert_eq!((r0.rank, r0.rank_id, r0.rows), (0, 0, 184));
    assert_eq!(
        (
            r0.matches.exact,
            r0.matches.enclosing,
            r0.matches.nearest_before
        ),
        (0, 69, 7)
    );
    assert_eq!(r0.peak_allocated_mb, Some(1187.9814453125));
    assert_eq!(r0.reserved_at_peak_mb, Some(1452.0));
    assert_eq!(r0.live_at_peak_rows, 41);
    assert_eq!(r0.live_at_peak_kb, 498_238.5);
    assert_eq!(r0.unreleased_rows, 24);
    assert!(!r0.no_stacks);
    assert_eq!(done[1].rows, 184);

    // Table: export order starts with the first row after the sort (§12.2).
    let page = match ask(
        &mut s,
        &opener,
        Request::Query(Query::Memory(MemoryQuery::Rows(RowsQuery {
            rank: 0,
            offset: 0,
            limit: 3,
            sort: None,
            filter: RowFilter::default(),
        }))),
    ) {
        Response::Reply(Reply::Memory(MemoryReply::Rows(p))) => p,
        other => panic!("{other:?}"),
    };
    assert_eq!((page.total_rows, page.matching_rows), (184, 184));
    assert_eq!(page.rows[0].name, "aten::empty_strided");
    assert_eq!(page.rows[0].start_time_ms, 1736408883694.6248);
    // Filter on the user frame: every row shown carries it.
    let page = match ask(
        &mut s,
        &opener,
        Request::Query(Query::Memory(MemoryQuery::Rows(RowsQuery {
            rank: 0,
            offset: 0,
            limit: 200,
            sort: None,
            filter: RowFilter {
                text: "imagenet_script/main.py(354): train".into(),
                ..Default::default()
            },
        }))),
    ) {
        Response::Reply(Reply::Memory(MemoryReply::Rows(p))) => p,
        other => panic!("{other:?}"),
    };
    let with_354 = page
        .rows
        .iter()
        .filter(|r| {
            r.user_frame
                .ends_with("imagenet_script/main.py(354): train")
        })
        .count();
    // §12.2: 25 matched rows have this user frame.
    assert!(with_354 >= 25, "{with_354}");
    // Stack of such a row: frames one per line, the user frame marked.
    let row = page.rows[0].row;
    let stack = match ask(
        &mut s,
        &opener,
        Request::Query(Query::Memory(MemoryQuery::Stack { rank: 0, row })),
    ) {
        Response::Reply(Reply::Memory(MemoryReply::Stack(st))) => st,
        other => panic!("{other:?}"),
    };
    let users: Vec<_> = stack.frames.iter().filter(|f| f.user).collect();
    assert_eq!(users.len(), 1);
    assert!(users[0].text.ends_with("main.py(354): train"));
    assert_eq!(
        stack.frames.last().map(|f| f.text.as_str()),
        Some("<string>(1): <module>")
    );
    // Curve: the allocator peak is the summary's peak.
    match ask(
        &mut s,
        &opener,
        Request::Query(Query::Memory(MemoryQuery::Curve {
            rank: 0,
            x_range: None,
            width_px: 800,
            pool: None,
        })),
    ) {
        Response::Reply(Reply::Memory(MemoryReply::Curve(c))) => {
            assert_eq!(c.peak.map(|p| p.1), Some(1187.9814453125));
            assert_eq!(c.series.len(), 4);
            assert_eq!(c.series[0].max.len(), 800);
            let max_alloc = c.series[0]
                .max
                .iter()
                .copied()
                .filter(|v| !v.is_nan())
                .fold(0.0, f64::max);
            assert_eq!(max_alloc, 1187.9814453125);
        }
        other => panic!("{other:?}"),
    }
    // Live set at the allocator peak: 41 rows, 498,238.5 KB (§12.2).
    let t = r0.peak_time_ms.unwrap();
    match ask(
        &mut s,
        &opener,
        Request::Query(Query::Memory(MemoryQuery::LiveAt {
            rank: 0,
            t_ms: t,
            limit: 2,
            pool: None,
        })),
    ) {
        Response::Reply(Reply::Memory(MemoryReply::LiveAt(l))) => {
            assert_eq!(l.live_rows, 41);
            assert_eq!(l.live_mb * 1024.0, 498_238.5);
            assert_eq!(l.largest[0].size_kb, 147_456.5);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn exports_are_byte_identical_to_the_cli() {
    use proflens::protocol::{ExportRequest, MemoryExportKind as ExportKind};
    let mut s = Session::new();
    let (opener, _) = open(&mut s, LEVEL1);
    // Exports are written from the ranks the session holds (no file is read by an export).
    let run = session_common::send(
        &mut s,
        &opener,
        2,
        Request::Run {
            analyses: vec![AnalysisKind::Memory],
            targets: vec![
                proflens::protocol::Target::Rank(0),
                proflens::protocol::Target::Rank(1),
            ],
        },
    );
    assert!(matches!(
        run.out.last(),
        Some((2, Response::RunDone { done: 2, failed: 0 }))
    ));
    let dir = std::env::temp_dir().join(format!("proflens-web-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (what, fmt) in [
        (ExportKind::MemoryCsv, "csv"),
        (ExportKind::MemoryJson, "json"),
        (ExportKind::MemorySummaryMd, "md"),
    ] {
        let mut out = Collected::default();
        s.handle(
            Envelope {
                seq: 4,
                body: Request::Export(ExportRequest::Memory(what)),
            },
            &opener,
            &mut out,
        );
        assert!(
            matches!(out.out.last(), Some((4, Response::ExportDone { .. }))),
            "{:?}",
            out.out.last()
        );
        let cli_out = dir.join(format!("cli.{fmt}"));
        let code = proflens::cli::main(vec![
            "memory".into(),
            fixture(LEVEL1).display().to_string(),
            "--format".into(),
            fmt.into(),
            "--out".into(),
            cli_out.display().to_string(),
            "--quiet".into(),
        ]);
        assert_eq!(code, 0);
        let cli = std::fs::read(&cli_out).unwrap();
        assert!(cli.len() > 1000);
        assert!(out.bytes == cli, "{fmt} export differs from the CLI");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
