//! GPU collectives per analysed rank (communication.md §4.2): the real MI300X trace of
//! TraceLens (rank 0 of 8, 17 RCCL kernels, 6 allreduce collectives) dropped twice — in two
//! role folders, and as two files of one folder (two traces of rank 0, `GPU-DISC-002`) —
//! keeps each copy's own 6 collectives and its own count of kernels no row holds, in the CLI's
//! store and in the page's gathered parts alike.

use std::ops::ControlFlow;

use proflens::analysis::comm::nccl::CollectiveRow;
use proflens::analysis::comm::{CommOptions, GPU_UNTABULATED};
use proflens::base::Problem;
use proflens::ingest::inventory::Inventory;
use proflens::ingest::MemOpener;

const MI300: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/real_world/AMD-AGI__TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"
);

/// The collectives and the untabulated-kernel notes of a drop of `paths`, each holding the
/// MI300 trace; from one store (the CLI) and from two gathered parts (the page).
fn run(paths: &[&str]) -> (Vec<CollectiveRow>, Vec<Problem>, Vec<CollectiveRow>, String) {
    let bytes = std::fs::read(MI300).expect("fixture");
    let mut m = MemOpener::new();
    for p in paths {
        m.add(*p, bytes.clone());
    }
    let mut inv = Inventory::from_paths(&m.list());
    proflens::parse::metadata::read_side_files(&mut inv, &m);
    let opts = CommOptions::default();
    let plan = proflens::engine::Plan {
        comm: Some(opts.clone()),
        anomaly: Some(proflens::analysis::anomaly_config::AnomalyConfig::spec_defaults()),
        ..proflens::engine::Plan::none()
    };
    let store = proflens::engine::run(&inv, &m, plan, &mut |_| ControlFlow::Continue(()));
    let kernels = proflens::engine::export::comm::gpu_kernels(&store);
    let (rep, _) = proflens::engine::export::comm::report(&store, &kernels, &opts).unwrap();
    let json = proflens::engine::export::comm::json(&rep, &opts);
    let notes = rep
        .problems
        .iter()
        .filter(|p| p.code == GPU_UNTABULATED)
        .cloned()
        .collect();
    let part = proflens::engine::export::gather::comm::part(&store).unwrap();
    let (ranks, joined) = proflens::engine::export::gather::comm::join(&[part]).unwrap();
    let refs: Vec<_> = ranks.iter().collect();
    let page = proflens::analysis::comm::analyze(&refs, &joined, &opts);
    (rep.collectives, notes, page.collectives, json)
}

fn ids(rows: &[CollectiveRow]) -> Vec<&str> {
    rows.iter().map(|r| r.collective_id.as_str()).collect()
}

const ONE: [&str; 6] = ["0_2", "0_3", "0_6", "0_7", "0_10", "0_11"];

#[test]
fn one_trace_gives_its_six_collectives_in_numeric_order() {
    let (rows, notes, page, json) = run(&["run/rank0.pt.trace.json.gz"]);
    assert_eq!(ids(&rows), ONE);
    assert_eq!(rows, page);
    assert_eq!(rows[0].ranks, [0]);
    assert_eq!(rows[4].comm_latency_us, 6748.72);
    // One rank of the group of 8: the skews cannot be measured (never 0).
    assert!(rows
        .iter()
        .all(|r| (r.skew_start_us, r.skew_end_us, r.earliest_arrival_rank) == (None, None, None)));
    assert!(json.contains(r#""collective_id": "0_2", "collective": "allreduce", "group_size": 8, "full_msg_mb": 5.4804229736328125, "comm_latency_us": 6911.678, "skew_start_us": null, "skew_end_us": null,"#), "{json}");
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].at.to_string(), "run/rank0.pt.trace.json.gz");
    assert!(notes[0]
        .message
        .starts_with("11 of its 17 NCCL/RCCL kernel(s)"));
}

/// `run` over the two trace copies `paths`, whose collectives are scoped `scopes`: each scope
/// holds the six collectives of one copy (ids `<scope>/<pg>_<n>`), the page's gathered rows
/// are the CLI's, every collective holds rank 0 only, and one note names each trace file.
fn two_scopes(paths: [&str; 2], scopes: [&str; 2]) -> (Vec<CollectiveRow>, Vec<Problem>) {
    let (rows, notes, page, _) = run(&paths);
    let want: Vec<String> = scopes
        .iter()
        .flat_map(|s| ONE.iter().map(move |i| format!("{s}/{i}")))
        .collect();
    assert_eq!(ids(&rows), want);
    assert_eq!(rows, page);
    // Each collective holds one kernel of its own trace: never the other copy's.
    assert!(rows.iter().all(|r| r.ranks == [0]));
    let files: Vec<String> = notes.iter().map(|n| n.at.to_string()).collect();
    assert_eq!(files, paths);
    (rows, notes)
}

#[test]
fn two_roles_holding_rank_0_keep_their_own_collectives() {
    let (rows, notes) = two_scopes(
        ["run/a/t.pt.trace.json.gz", "run/b/t.pt.trace.json.gz"],
        ["a", "b"],
    );
    assert_eq!(rows[4].comm_latency_us, 6748.72);
    assert_eq!(rows[10].comm_latency_us, 6748.72);
    for n in &notes {
        assert!(
            n.message.starts_with("11 of its 17 NCCL/RCCL kernel(s)"),
            "{}",
            n.message
        );
    }
}

#[test]
fn two_traces_of_rank_0_in_one_folder_keep_their_own_collectives() {
    two_scopes(
        ["run/x.pt.trace.json.gz", "run/y.pt.trace.json.gz"],
        ["x.pt.trace", "y.pt.trace"],
    );
}
