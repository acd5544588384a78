//! One rule names a rank's reports and scopes its GPU collectives (anomaly.md §1.6,
//! communication.md §4.2): `cross_rank::scopes`. The real MI300X trace of TraceLens (rank 0)
//! dropped three times — two traces of rank 0 in role `a` (`GPU-DISC-002`) and one in role
//! `b` — gives each copy a scope that is its report file suffix without `rank0`, in the CLI's
//! store and in the page's gathered parts alike.

use std::ops::ControlFlow;
use std::sync::Arc;

use proflens::analysis::anomaly::cross_rank::{scope_key, scopes, Scope};
use proflens::ingest::inventory::Inventory;
use proflens::ingest::MemOpener;

const MI300: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/real_world/AMD-AGI__TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"
);

const PATHS: [&str; 3] = [
    "run/a/x.pt.trace.json.gz",
    "run/a/y.pt.trace.json.gz",
    "run/b/t.pt.trace.json.gz",
];

/// The distinct scopes of `kernels`, in order.
fn distinct(kernels: &[proflens::model::comm::NcclKernel]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in kernels {
        if out.last() != Some(&k.scope.to_string()) {
            out.push(k.scope.to_string());
        }
    }
    out
}

#[test]
fn report_suffix_without_the_rank_id_is_the_collectives_scope() {
    let bytes = std::fs::read(MI300).expect("fixture");
    let mut m = MemOpener::new();
    for p in PATHS {
        m.add(p, bytes.clone());
    }
    let mut inv = Inventory::from_paths(&m.list());
    proflens::parse::metadata::read_side_files(&mut inv, &m);
    let plan = proflens::engine::Plan {
        comm: Some(proflens::analysis::comm::CommOptions::default()),
        anomaly: Some(proflens::analysis::anomaly_config::AnomalyConfig::spec_defaults()),
        ..proflens::engine::Plan::none()
    };
    let store = proflens::engine::run(&inv, &m, plan, &mut |_| ControlFlow::Continue(()));

    let cross = store.anomaly_cross().unwrap();
    let keys: Vec<(&str, i64)> = cross.iter().map(scope_key).collect();
    assert_eq!(keys, [("a", 0), ("a", 0), ("b", 0)]);
    let both = Scope {
        role: true,
        trace: true,
    };
    let role = Scope {
        role: true,
        trace: false,
    };
    assert_eq!(scopes(&keys), [both, both, role]);

    let names: Vec<String> = proflens::engine::export::anomaly_reports(&store, &inv)
        .unwrap()
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(
        names,
        [
            "anomaly_report_run_a_rank0_x.pt.trace.md",
            "anomaly_report_run_a_rank0_y.pt.trace.md",
            "anomaly_report_run_b_rank0.md",
        ]
    );

    let want = ["a_x.pt.trace", "a_y.pt.trace", "b"];
    let suffixes: Vec<String> = names
        .iter()
        .map(|n| {
            let s = &n["anomaly_report_run_".len()..n.len() - ".md".len()];
            s.replacen("_rank0", "", 1)
        })
        .collect();
    assert_eq!(suffixes, want);
    let kernels = proflens::engine::export::comm::gpu_kernels(&store);
    assert_eq!(kernels.len(), 3 * 17);
    assert_eq!(distinct(&kernels), want);
    // Each rank's 17 kernels share one scope and one trace name (never a copy per kernel).
    for (rank, path) in kernels.chunks(17).zip(PATHS) {
        assert_eq!(&*rank[0].trace, path);
        assert!(rank.iter().all(
            |k| Arc::ptr_eq(&k.scope, &rank[0].scope) && Arc::ptr_eq(&k.trace, &rank[0].trace)
        ));
    }
    assert!(!Arc::ptr_eq(&kernels[0].scope, &kernels[17].scope));

    let part = proflens::engine::export::gather::comm::part(&store).unwrap();
    let (_, joined) = proflens::engine::export::gather::comm::join(&[part]).unwrap();
    assert_eq!(distinct(&joined), want);
}
