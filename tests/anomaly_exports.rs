//! The page's anomaly exports (`engine::session::anomaly::export`, written from the page's
//! store after one run of both analyses over every rank) are the CLI's bytes:
//! `proflens anomaly <level1> --out … --report-dir …` is run as a process and its files are
//! compared byte for byte; the CSV exports are checked against the §13.1 goldens.

mod engine_support;

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::Command;

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::contract::no_progress;
use proflens::engine::session::anomaly::export;
use proflens::engine::session::Session;
use proflens::engine::store::Store;
use proflens::ingest::inventory::Inventory;
use proflens::protocol::anomaly::AnomalyExportKind;

const LEVEL1: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1"
);

fn inventory() -> (FsOpener, Inventory) {
    let (opener, files) = FsOpener::walk(&PathBuf::from(LEVEL1)).unwrap();
    let mut inv = Inventory::from_paths(&files);
    proflens::parse::metadata::read_side_files(&mut inv, &opener);
    (opener, inv)
}

/// The page's store of every rank folder (memory and anomaly from one read of each).
fn page_store(inv: &Inventory, opener: &FsOpener) -> Store {
    let mut store = Store::new(Session::plan());
    store.run_inventory(inv, opener, &mut no_progress);
    store
}

fn page_export(kind: AnomalyExportKind, rank: Option<u32>) -> (String, Vec<u8>) {
    let (opener, inv) = inventory();
    let store = page_store(&inv, &opener);
    let mut bytes = Vec::new();
    let (name, _mime) = export(kind, rank, &inv, &store, &mut bytes).unwrap();
    (name, bytes)
}

#[test]
fn json_and_reports_are_the_cli_bytes() {
    let dir = std::env::temp_dir().join(format!("proflens-anom-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out.json");
    let st = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(["anomaly", LEVEL1, "--out"])
        .arg(&out)
        .arg("--report-dir")
        .arg(&dir)
        .status()
        .unwrap();
    assert!(st.code().is_some_and(|c| c <= 1), "CLI failed: {st:?}");
    let (name, json) = page_export(AnomalyExportKind::Json, None);
    assert_eq!(name, "anomaly_level1.json");
    assert_eq!(
        json,
        std::fs::read(&out).unwrap(),
        "JSON differs from the CLI's"
    );
    for (rank, n) in [(0u32, 0), (1, 1)] {
        let (name, md) = page_export(AnomalyExportKind::ReportMd, Some(rank));
        assert_eq!(name, format!("anomaly_report_level1_rank{n}.md"));
        assert_eq!(md, std::fs::read(dir.join(&name)).unwrap(), "{name}");
        let (name, md) = page_export(AnomalyExportKind::ArchitectureMd, Some(rank));
        assert_eq!(name, format!("model_architecture_report_level1_rank{n}.md"));
        assert_eq!(md, std::fs::read(dir.join(&name)).unwrap(), "{name}");
    }
    // A per-rank report needs a rank.
    let (opener, inv) = inventory();
    assert!(export(
        AnomalyExportKind::ReportMd,
        None,
        &inv,
        &page_store(&inv, &opener),
        &mut Vec::new()
    )
    .is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn steps_and_bubbles_csv_carry_the_golden_values() {
    let (name, csv) = page_export(AnomalyExportKind::StepsCsv, None);
    assert_eq!(name, "anomaly_steps_level1.csv");
    let text = String::from_utf8(csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "header + one step per rank");
    let header: Vec<&str> = lines[0].split(',').collect();
    let col = |line: &str, name: &str| -> String {
        let i = header.iter().position(|h| *h == name).unwrap();
        line.split(',').nth(i).unwrap().to_string()
    };
    // §13.1 (tolerance ±0.001 ms, ±1e-5 on ratios).
    for (line, rank, service, busy, under, prelaunch, bubbles) in [
        (
            lines[1], "0", 154.48350, 110.83675, 0.282533, 17.90250, "90",
        ),
        (
            lines[2], "1", 152.34575, 105.23650, 0.309226, 20.43325, "90",
        ),
    ] {
        assert_eq!(col(line, "rank_id"), rank);
        assert_eq!(col(line, "step_id"), "ProfilerStep#50");
        let f = |n: &str| col(line, n).parse::<f64>().unwrap();
        assert!((f("service_ms") - service).abs() <= 1e-3);
        assert!((f("device_busy_union_ms") - busy).abs() <= 1e-3);
        assert!((f("underfeed_ratio") - under).abs() <= 1e-5);
        assert!((f("prelaunch_gap_ms") - prelaunch).abs() <= 1e-3);
        assert_eq!(col(line, "tail_gap_ms"), "0.0");
        assert_eq!(col(line, "bubble_count"), bubbles);
        assert_eq!(col(line, "total_kernel_count"), "191");
        assert!(col(line, "tags").starts_with("DEVICE_IDLE_GAP_HEAVY;PRELAUNCH_GAP_HEAVY"));
    }
    let (name, csv) = page_export(AnomalyExportKind::BubblesCsv, None);
    assert_eq!(name, "anomaly_bubbles_level1.csv");
    let mut r = csv::Reader::from_reader(csv.as_slice());
    let h = r.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    // 56 emitted windows per rank (5 global + 1 prelaunch + 50 internal ≥ 50 µs).
    assert_eq!(rows.len(), 112);
    let at =
        |rec: &csv::StringRecord, n: &str| rec[h.iter().position(|x| x == n).unwrap()].to_string();
    assert_eq!(at(&rows[0], "bubble_id"), "global:global:0");
    assert!((at(&rows[0], "duration_ms").parse::<f64>().unwrap() - 1.31875).abs() <= 1e-3);
    assert_eq!(at(&rows[5], "scope"), "prelaunch");
    assert_eq!(at(&rows[5], "bubble_id"), "ProfilerStep#50:prelaunch:0");
    assert!((at(&rows[5], "duration_ms").parse::<f64>().unwrap() - 17.9025).abs() <= 1e-3);
    assert!(at(&rows[0], "before_kernel")
        .starts_with("aclnnMaxPool2dWithMask_TransDataSpecial_TransData ("));
}

#[test]
fn cancelled_rank_run_is_reported_not_panicking() {
    let (opener, inv) = inventory();
    let cfg = proflens::engine::session::anomaly::config();
    let o = engine_support::anomaly_rank(&inv, 0, &opener, &cfg, &mut |_| ControlFlow::Break(()));
    assert!(matches!(o, Err(proflens::engine::contract::Cancelled)));
}
