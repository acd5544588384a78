//! The memory tab's summary card and its chart agree (ascend-memory.md §9.5–9.6, one rule in
//! `analysis::memory_peak`): on every real rank folder the chart's peak marker is the card's
//! allocator peak (same time, same MiB), and the live set the chart reports at that instant is
//! the card's live set at the peak (same rows, same KiB) with the allocator total at the peak.

mod session_common;

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::session::{Collected, Session};
use proflens::protocol::{
    AnalysisKind, CurveDto, Envelope, LiveAtDto, MemoryQuery, MemoryReply, MemorySummaryDto, Query,
    Reply, Request, Response, Summary,
};

fn fixture(rel: &str) -> std::path::PathBuf {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures")
        .join(rel);
    assert!(p.exists(), "fixture missing: {}", p.display());
    p
}

/// Every real folder with `operator_memory.csv` (msinsight text levels 0–2, its st level2
/// and server test data, rl-insight's recipe).
const FOLDERS: &[&str] = &[
    "ascend/Ascend__msinsight/test/data/pytorch/text",
    "ascend/Ascend__msinsight/test/st/level2",
    "ascend/Ascend__msinsight/server/src/test/test_data",
    "rl_insight/data/recipe/memory_data",
];

fn handle(s: &mut Session, opener: &FsOpener, body: Request) -> Vec<Response> {
    let mut out = Collected::default();
    s.handle(Envelope { seq: 1, body }, opener, &mut out);
    out.out.into_iter().map(|(_, r)| r).collect()
}

/// Opens `rel` and runs the memory analysis on every rank folder: the summaries.
fn summaries(s: &mut Session, rel: &str) -> (FsOpener, Vec<MemorySummaryDto>) {
    let (opener, files) = FsOpener::walk(&fixture(rel)).unwrap();
    let files = session_common::metas(&files);
    let Some(Response::Inventory(inv)) = handle(s, &opener, Request::Open { files }).pop() else {
        panic!("{rel}: no inventory");
    };
    let targets = 0..inv.ranks.len() as u32;
    let run = Request::run(AnalysisKind::Memory, targets);
    let done = handle(s, &opener, run)
        .into_iter()
        .filter_map(|r| match r {
            Response::Done {
                summary: Summary::Memory(d),
                ..
            } => Some(d),
            _ => None,
        })
        .collect();
    (opener, done)
}

fn curve(s: &mut Session, opener: &FsOpener, rank: u32) -> CurveDto {
    let q = Request::Query(Query::Memory(MemoryQuery::Curve {
        rank,
        x_range: None,
        width_px: 1000,
        pool: None,
    }));
    match handle(s, opener, q).pop() {
        Some(Response::Reply(Reply::Memory(MemoryReply::Curve(c)))) => c,
        other => panic!("{other:?}"),
    }
}

fn live_at(s: &mut Session, opener: &FsOpener, rank: u32, t_ms: f64) -> LiveAtDto {
    let q = Request::Query(Query::Memory(MemoryQuery::LiveAt {
        rank,
        t_ms,
        limit: 3,
        pool: None,
    }));
    match handle(s, opener, q).pop() {
        Some(Response::Reply(Reply::Memory(MemoryReply::LiveAt(l)))) => l,
        other => panic!("{other:?}"),
    }
}

#[test]
fn card_and_chart_marker_show_the_same_peak_and_live_set() {
    let mut checked = 0;
    for rel in FOLDERS {
        let mut s = Session::new();
        let (opener, done) = summaries(&mut s, rel);
        assert!(!done.is_empty(), "{rel}: no rank analysed");
        for card in done {
            let who = format!("{rel} rank folder {}", card.rank);
            let (Some(peak_mb), Some(peak_ms)) = (card.peak_allocated_mb, card.peak_time_ms) else {
                continue;
            };
            let c = curve(&mut s, &opener, card.rank);
            assert_eq!(c.peak, Some((peak_ms, peak_mb)), "{who}: marker vs card");
            let l = live_at(&mut s, &opener, card.rank, peak_ms);
            assert_eq!(
                l.live_rows, card.live_at_peak_rows,
                "{who}: live rows at the marker vs the card"
            );
            assert!(
                (l.live_mb * 1024.0 - card.live_at_peak_kb).abs() <= 1e-6 * card.live_at_peak_kb,
                "{who}: live KiB at the marker {} vs the card {}",
                l.live_mb * 1024.0,
                card.live_at_peak_kb
            );
            assert_eq!(
                l.totals_mb.map(|t| t.0),
                Some(peak_mb),
                "{who}: allocator total at the marker"
            );
            checked += 1;
        }
    }
    assert!(checked >= 8, "only {checked} ranks had a peak");
}
