//! Slow links end to end (docs/rules/communication.md §2.4): the ops' data sizes read in the
//! rank pass — from `trace_view.json`'s HCCL op events on text ranks, from `COMMUNICATION_OP`
//! on DB ranks — and the rule flagging on `fixtures/comm_slow_link` with the exact values of
//! communication.md §5.5 (its README), in `proflens comm`, the anomaly report, and the page's
//! cross-worker join.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::analysis::comm::CommOptions;
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::{self, Plan, Store};
use proflens::ingest::inventory::Inventory;

fn msi(rel: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/"
    ))
    .join(rel)
}

fn ours() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/comm_slow_link"
    ))
}

fn run(dir: &Path, plan: Plan) -> (Inventory, Store) {
    let (opener, files) = FsOpener::walk(dir).expect("fixture folder");
    let mut inv = Inventory::from_paths(&files);
    proflens::parse::metadata::read_side_files(&mut inv, &opener);
    let store = engine::run(&inv, &opener, plan, &mut |_| ControlFlow::Continue(()));
    (inv, store)
}

fn comm_plan() -> Plan {
    Plan {
        comm: Some(CommOptions::default()),
        ..Plan::none()
    }
}

/// Every rank's op sizes, by rank id.
fn sizes(store: &Store) -> BTreeMap<i64, (bool, BTreeMap<String, u64>)> {
    store
        .comm_ranks()
        .expect("not cancelled")
        .iter()
        .map(|r| {
            (
                r.tables.rank,
                (r.tables.has_sizes, r.tables.op_bytes.clone()),
            )
        })
        .collect()
}

/// The sizes of MSI level 1's four all-reduces, from Python's json and sqlite3 over the same
/// files (`count × element bytes`: 4,097,000 FP32 …).
fn level1_sizes(hash: &str) -> BTreeMap<String, u64> {
    [16_388_000, 67_125_248, 151_011_328, 9_878_784]
        .iter()
        .enumerate()
        .map(|(i, &b)| (format!("hcom_allReduce__{hash}_{i}_1"), b))
        .collect()
}

#[test]
fn text_ranks_take_sizes_from_trace_view_and_db_ranks_from_communication_op() {
    let (_, text) = run(&msi("text/level1"), comm_plan());
    let want = level1_sizes("586");
    assert_eq!(
        sizes(&text),
        [(0, (true, want.clone())), (1, (true, want))].into()
    );
    let (_, db) = run(&msi("db/level1"), comm_plan());
    let want = level1_sizes("210");
    assert_eq!(
        sizes(&db),
        [(0, (true, want.clone())), (1, (true, want))].into()
    );
    // With the anomaly planned too, the DB sizes come from its kernel read's scan: the same.
    let both = Plan {
        anomaly: Some(AnomalyConfig::spec_defaults()),
        ..comm_plan()
    };
    let (_, db2) = run(&msi("db/level1"), both);
    assert_eq!(sizes(&db2), sizes(&db));
}

#[test]
fn a_rank_without_trace_view_has_no_size_source() {
    // MSI-ST level2 ranks hold communication files and analysis.db only: no size source,
    // nothing tested, and the document says so.
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/ascend/Ascend__msinsight/test/st/level2"
    ));
    let (_, store) = run(&dir, comm_plan());
    let got = sizes(&store);
    assert_eq!(got.keys().copied().collect::<Vec<_>>(), [0, 1, 3]);
    assert!(got.values().all(|(has, b)| !has && b.is_empty()), "{got:?}");
    let (rep, _) = proflens::engine::export::comm::report(&store, &[], &CommOptions::default())
        .expect("not cancelled");
    assert_eq!((rep.slow_link_rows, rep.slow_link_rows_sized), (53, 0));
    assert!(rep.slow_links.is_empty());
}

#[test]
fn the_fixture_flags_one_slow_link_with_the_spec_values() {
    let (_, store) = run(&ours(), comm_plan());
    let (rep, _) = proflens::engine::export::comm::report(&store, &[], &CommOptions::default())
        .expect("not cancelled");
    assert_eq!((rep.slow_link_rows, rep.slow_link_rows_sized), (26, 24));
    assert_eq!(rep.slow_links.len(), 1);
    let s = &rep.slow_links[0];
    assert_eq!(s.name, "hcom_allReduce_2_1024");
    assert_eq!(s.count, 24);
    assert_eq!(s.mean_ns, 1333.3333333333333);
    assert_eq!(s.std_ns, 1129.3194051465598);
    assert_eq!(s.offset_ratio, 3.2467932897963596);
    assert_eq!((s.min_ns, s.max_ns, s.sum_ns), (1000.0, 5000.0, 32000.0));
    assert_eq!(s.ops, ["hcom_allReduce__111_5_1"]);
    let json = proflens::report::comm::to_json(&rep, false);
    assert!(
        json.contains("\"slow_link_rows\": 26,\n  \"slow_link_rows_sized\": 24,"),
        "{json}"
    );
}

#[test]
fn the_anomaly_report_names_the_slow_link() {
    let plan = Plan {
        anomaly: Some(AnomalyConfig::spec_defaults()),
        ..Plan::none()
    };
    let (inv, store) = run(&ours(), plan);
    let reports = proflens::engine::export::anomaly_reports(&store, &inv).expect("not cancelled");
    assert_eq!(reports.len(), 2);
    for (name, md, _, _) in &reports {
        assert!(
            md.contains("- Slow link `hcom_allReduce_2_1024`: 24 op(s), mean 1333.3 ns, std 1129.3 ns, offset ratio 3.2468; ops `hcom_allReduce__111_5_1`."),
            "{name}: {md}"
        );
    }
}
