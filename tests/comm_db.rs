//! The communication analysis from `analysis.db` (communication.md §1.5, §2.3.3, §5.2): on
//! MSI-ST, which holds both exports, the DB path (the rank folders without their
//! `communication*.json`) gives the same document as the text path, byte for byte; on
//! MSI-DB/level1 (DB ranks) the per-rank totals and matrix of §5.3.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use proflens::analysis::comm::{CommOptions, CommReport};
use proflens::base::Problems;
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::{self, Plan};
use proflens::ingest::inventory::{FileKind, Inventory};
use proflens::ingest::InputFile;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/ascend/Ascend__msinsight/"
    ))
    .join(rel)
}

/// The report of `dir`, its files filtered by `keep`.
fn run(dir: &Path, parity: bool, keep: &dyn Fn(&InputFile) -> bool) -> (CommReport, Problems) {
    let (opener, files) = FsOpener::walk(dir).expect("fixture folder");
    let files: Vec<InputFile> = files.into_iter().filter(|f| keep(f)).collect();
    let mut inv = Inventory::from_paths(&files);
    proflens::parse::metadata::read_side_files(&mut inv, &opener);
    let opts = CommOptions { parity, step: None };
    let plan = Plan {
        comm: Some(opts.clone()),
        ..Plan::none()
    };
    let store = engine::run(&inv, &opener, plan, &mut |_| ControlFlow::Continue(()));
    proflens::engine::export::comm::report(&store, &[], &opts).expect("not cancelled")
}

fn no_json(f: &InputFile) -> bool {
    !f.path.ends_with("communication.json") && !f.path.ends_with("communication_matrix.json")
}

fn no_db(f: &InputFile) -> bool {
    !f.path.ends_with("analysis.db")
}

#[test]
fn st_db_path_equals_the_text_path_byte_for_byte() {
    let dir = fixture("test/st/level2");
    for parity in [false, true] {
        let (text, tp) = run(&dir, parity, &no_db);
        let (db, dp) = run(&dir, parity, &no_json);
        assert_eq!(text.ranks, vec![0, 1, 3]);
        assert_eq!(db.ranks, text.ranks);
        // §5.2: 17 time rows, every time and ratio equal; the matrix equal after rounding.
        assert_eq!(db.time_summary.len(), 17);
        assert_eq!(db.time_summary, text.time_summary);
        assert_eq!(db.bandwidth_summary, text.bandwidth_summary);
        assert_eq!(db.matrix, text.matrix);
        assert_eq!(db.matrix_by_kind, text.matrix_by_kind);
        assert_eq!(db.dropped_links, text.dropped_links);
        let (a, b) = (
            proflens::report::comm::to_json(&text, parity),
            proflens::report::comm::to_json(&db, parity),
        );
        assert!(a == b, "the DB document differs from the text one");
        if parity {
            // 36 links dropped on the 3-rank set, as in text (§5.2).
            assert_eq!(db.dropped_links.len(), 36);
        }
        let codes = |p: &Problems| {
            p.kept()
                .iter()
                .map(|x| x.code.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(codes(&dp), codes(&tp));
    }
    // The merged histogram of the DB rows equals the text's: rank 0's dp_cp HCCS bins.
    let (opener, files) = FsOpener::walk(&dir).expect("fixture");
    let files: Vec<InputFile> = files.into_iter().filter(no_json).collect();
    let mut inv = Inventory::from_paths(&files);
    proflens::parse::metadata::read_side_files(&mut inv, &opener);
    let r0 = &inv.ranks[0];
    assert!(r0.file(FileKind::AnalysisDb).is_some());
    let read =
        proflens::engine::read::comm::read(r0, &opener, &mut |_, _| ControlFlow::Continue(()));
    let ControlFlow::Continue(read) = read else {
        panic!("not cancelled")
    };
    assert_eq!(read.tables.ops.len(), 15);
    let op = read
        .tables
        .ops
        .iter()
        .position(|o| o.op == "hcom_allGather__612_7_1")
        .expect("op") as u32;
    let hccs = read
        .tables
        .bands
        .iter()
        .find(|b| b.op == op && b.transport == "HCCS")
        .expect("HCCS");
    assert_eq!(hccs.bins.len(), 1);
    assert_eq!(hccs.bins[0].size_key, "9.6e-05");
    assert_eq!((hccs.bins[0].count, hccs.bins[0].time_ms), (3.0, 0.00414));
    let transports: Vec<&str> = read
        .tables
        .bands
        .iter()
        .filter(|b| b.op == op)
        .map(|b| b.transport.as_str())
        .collect();
    assert_eq!(transports, ["RDMA", "HCCS", "PCIE", "SDMA", "SIO"]);
}

#[test]
fn db_ranks_read_analysis_db_msi_db_level1() {
    // §5.3 `MSI-DB/level1`: ranks with ascend_pytorch_profiler_N.db read analysis.db.
    let (rep, problems) = run(&fixture("test/data/pytorch/db/level1"), false, &|_| true);
    assert_eq!(rep.ranks, vec![0, 1], "{:?}", problems.kept());
    let t: Vec<_> = rep.time_summary.iter().collect();
    assert_eq!(t.len(), 2);
    assert_eq!(t[0].group, "17148521525495523210");
    assert_eq!(
        (
            t[0].elapse_ms,
            t[0].transit_ms,
            t[0].wait_ms,
            t[0].sync_ms,
            t[0].idle_ms
        ),
        (
            102.10810009375,
            3.9856596250000003,
            3.6895737187499997,
            3.51773028125,
            94.43286675
        )
    );
    assert_eq!((t[0].sync_ratio, t[0].wait_ratio), (0.4688, 0.4807));
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
    for (got, want) in [
        (t[1].elapse_ms, 98.59018981249999),
        (t[1].transit_ms, 4.02176028125),
        (t[1].wait_ms, 3.841536750000001),
        (t[1].sync_ms, 3.65839309375),
        (t[1].idle_ms, 90.72689278125),
    ] {
        assert!(close(got, want), "{got} vs {want}");
    }
    assert_eq!((t[1].sync_ratio, t[1].wait_ratio), (0.4763, 0.4885));
    // Matrix totals (§5.3, sizes and times; the bandwidth rounded by the text rule).
    let link = |s: i64, d: i64| {
        rep.matrix
            .iter()
            .find(|m| m.src == s && m.dst == d)
            .unwrap_or_else(|| panic!("link {s}-{d}: {:?}", rep.matrix))
    };
    let want = [
        (0, 0, "LOCAL", 61.210656, 0.145022875, 422.07586906548363),
        (0, 1, "HCCS", 61.210624, 4.11136215625, 14.888161556614268),
        (1, 0, "HCCS", 61.210624, 4.00912009375, 15.267844955660976),
        (1, 1, "LOCAL", 61.210656, 0.143242875, 427.32077249915574),
    ];
    for (s, d, tr, size, time, bw) in want {
        let m = link(s, d);
        assert_eq!(m.transport, tr);
        assert!(close(m.size_mb, size), "{s}-{d} size {}", m.size_mb);
        assert!(close(m.time_ms, time), "{s}-{d} time {}", m.time_ms);
        assert_eq!(m.bandwidth_gbps, (bw * 1e4_f64).round() / 1e4, "{s}-{d}");
    }
    assert!(!problems
        .kept()
        .iter()
        .any(|p| p.severity >= proflens::base::Severity::Error));
}
