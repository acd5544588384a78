//! The communication section of the anomaly Markdown report (docs/rules/anomaly.md
//! "Communication section"): the rank's totals and ratios as communication.md §5.1 / §5.3 give
//! them, per group, and the cross-rank slow-rank and slow-link rows when several ranks were
//! analysed together.

use std::ops::ControlFlow;
use std::path::PathBuf;

use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::analysis::comm::rank_view::{cross_rank, rank_view};
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::{self, Plan};
use proflens::ingest::inventory::Inventory;
use proflens::model::side_tables::CommOp;
use proflens::report::anomaly_md::{write_comm_section, CommSection};

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/ascend/Ascend__msinsight/"
    ))
    .join(rel)
}

/// `(report name, text)` of every analysed rank of `rel`.
fn reports(rel: &str) -> Vec<(String, String)> {
    let (opener, files) = FsOpener::walk(&fixture(rel)).expect("fixture");
    let mut inv = Inventory::from_paths(&files);
    proflens::parse::metadata::read_side_files(&mut inv, &opener);
    let plan = Plan {
        anomaly: Some(AnomalyConfig::spec_defaults()),
        ..Plan::none()
    };
    let store = engine::run(&inv, &opener, plan, &mut |_| ControlFlow::Continue(()));
    proflens::engine::export::anomaly_reports(&store, &inv)
        .expect("not cancelled")
        .into_iter()
        .map(|(name, md, _, _)| (name, md))
        .collect()
}

fn section(md: &str) -> &str {
    let at = md
        .find("\n## Communication\n")
        .expect("a communication section");
    let rest = &md[at + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
    &rest[..end]
}

const HEAD: &str = "| ops | elapse_ms | transit_ms | wait_ms | sync_ms | idle_ms | wait ratio | sync ratio |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n";

#[test]
fn two_ranks_msi_level1_totals_and_no_vote() {
    // communication.md §5.3 MSI-L1: rank 0 4 ops, elapse 105.99187771875, transit
    // 3.6833535, wait 5.94061871875, sync 5.61571221875, idle 96.3679055, 0.6173 / 0.6039;
    // rank 1 100.37528546875 / 3.85967709375 / 0.1913838125 / 0.02090040625 / 96.3242245625,
    // 0.0472 / 0.0054. Two ranks: nothing for Dixon (n ≤ 2); the ops' data sizes come from
    // trace_view.json, and 8 rows are too few for a slow link (a group needs 11).
    let r = reports("test/data/pytorch/text/level1");
    assert_eq!(r.len(), 2);
    let s0 = section(&r[0].1);
    assert!(
        s0.contains(&format!(
            "{HEAD}| 4 | 105.992 | 3.683 | 5.941 | 5.616 | 96.368 | 0.6173 | 0.6039 |\n"
        )),
        "{s0}"
    );
    let s1 = section(&r[1].1);
    assert!(
        s1.contains(&format!(
            "{HEAD}| 4 | 100.375 | 3.860 | 0.191 | 0.021 | 96.324 | 0.0472 | 0.0054 |\n"
        )),
        "{s1}"
    );
    for s in [s0, s1] {
        assert!(
            s.contains("Across the 2 ranks analysed together (4 op(s) tested;"),
            "{s}"
        );
        assert!(
            s.contains("- Slow rank: no op votes this rank slow."),
            "{s}"
        );
        assert!(s.contains("- Slow links: none flagged."), "{s}");
        assert!(!s.contains("Per group"), "one group: {s}");
    }
}

#[test]
fn one_rank_msi_st_totals_per_group_and_no_cross_rank_rows() {
    // communication.md §5.1 `rank_totals` r0: 15 ops, elapse 420.17426, wait 164.14354,
    // ratios 1.0 / 1.0; its five groups as in the time summary. Only rank 0 has kernels.
    let r = reports("test/st/level2");
    assert_eq!(r.len(), 1);
    let s = section(&r[0].1);
    assert!(
        s.contains(&format!(
            "{HEAD}| 15 | 420.174 | 0.000 | 164.144 | 164.144 | 256.031 | 1.0000 | 1.0000 |\n"
        )),
        "{s}"
    );
    for line in [
        "| `3985310379703952346` | collective | 3 | 4.028 | 0.000 | 3.992 | 3.992 | 0.036 | 1.0000 | 1.0000 |",
        "| `3985310405473756128` | p2p | 3 | 313.878 | 0.000 | 158.505 | 158.505 | 155.372 | 1.0000 | 1.0000 |",
        "| `3985310491373102170` | collective | 1 | 34.624 | 0.000 | 0.000 | 0.000 | 34.624 | 0.0000 | 0.0000 |",
        "| `5862276093215481612` | collective | 4 | 2.232 | 0.000 | 1.646 | 1.646 | 0.586 | 1.0000 | 1.0000 |",
        "| `5862276114690318097` | collective | 4 | 65.412 | 0.000 | 0.000 | 0.000 | 65.412 | 0.0000 | 0.0000 |",
    ] {
        assert!(s.contains(line), "{line}\n{s}");
    }
    assert!(
        s.contains("Slow ranks and slow links: not computed here"),
        "{s}"
    );
}

#[test]
fn a_slow_rank_vote_is_listed_in_its_ranks_report_only() {
    let op = |t: f64| CommOp {
        step_key: "step1".into(),
        group_kind: "collective".into(),
        collective_name: "hcom_allReduce__042_1_1".into(),
        group_name: "42".into(),
        start_ns: 5_000,
        elapse_ms: t,
        transit_ms: t / 2.0,
        idle_ms: t / 2.0,
        ..Default::default()
    };
    // Seven ranks, rank 3 far shortest: Dixon r = (1.0 − 0.01) / (1.006 − 0.01) = 0.9940 > 0.680
    // (n = 7, communication.md §5.5); mean (6.018 + 0.01) / 7 ms = 861.143 µs.
    let ops: Vec<Vec<CommOp>> = (0..7)
        .map(|r| vec![op(if r == 3 { 0.01 } else { 1.0 + r as f64 * 0.001 })])
        .collect();
    let ranks: Vec<(i64, &[CommOp])> = ops
        .iter()
        .enumerate()
        .map(|(r, o)| (r as i64, o.as_slice()))
        .collect();
    let cross = cross_rank(&ranks).expect("seven ranks");
    let render = |r: usize| {
        let view = rank_view(&ops[r]).expect("ops");
        let mut o = String::new();
        let s = CommSection {
            view: &view,
            cross: Some(&cross),
        };
        write_comm_section(&mut o, Some(r as i64), &s);
        o
    };
    let three = render(3);
    assert!(
        three.contains("- Slow rank: **1 op(s)** vote this rank slow:"),
        "{three}"
    );
    assert!(
        three.contains(
            "| `42` | `hcom_allReduce__042_1_1` | 7 | dixon | 0.9940 | 0.6800 | 10.000 | 861.143 |"
        ),
        "{three}"
    );
    assert!(three.contains("| 1 | 0.010 | 0.005 | 0.000 | 0.000 | 0.005 | 0.0000 | 0.0000 |"));
    let zero = render(0);
    assert!(
        zero.contains("- Slow rank: no op votes this rank slow."),
        "{zero}"
    );
}
