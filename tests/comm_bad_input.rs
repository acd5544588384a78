//! Bad input for the communication analysis (docs/rules/communication.md §6): a cut file, an
//! unknown era, a group only one rank names — each a located problem, the rest built. And the
//! single read: with the anomaly analysis planned too, `communication.json` is opened once.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Read;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use proflens::analysis::comm::CommOptions;
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::{self, Plan};
use proflens::ingest::inventory::Inventory;
use proflens::ingest::Opener;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("proflens_comm_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn op(name: &str, group: &str, elapse: f64) -> String {
    format!(
        r#""{name}@{group}": {{"Communication Time Info": {{"Start Timestamp(us)": 1.0, "Elapse Time(ms)": {elapse}, "Transit Time(ms)": 0.5, "Wait Time(ms)": 0.25, "Synchronization Time(ms)": 0.125, "Idle Time(ms)": 0.25, "Wait Time Ratio": 0.3333, "Synchronization Time Ratio": 0.2}}, "Communication Bandwidth Info": {{"HCCS": {{"Transit Size(MB)": 1.0, "Transit Time(ms)": 0.5, "Bandwidth(GB/s)": 2.0, "Large Packet Ratio": 0, "Size Distribution": {{"1.0": [1, 0.5]}}}}}}}}"#
    )
}

fn rank(root: &Path, r: i64, comm: &str, matrix: Option<&str>) {
    let d = root.join(format!("rank_{r}_ascend_pt"));
    std::fs::create_dir_all(d.join("ASCEND_PROFILER_OUTPUT")).unwrap();
    std::fs::write(d.join(format!("profiler_info_{r}.json")), "{}").unwrap();
    std::fs::write(d.join("ASCEND_PROFILER_OUTPUT/communication.json"), comm).unwrap();
    if let Some(m) = matrix {
        std::fs::write(
            d.join("ASCEND_PROFILER_OUTPUT/communication_matrix.json"),
            m,
        )
        .unwrap();
    }
}

fn good(r: i64, local: usize) -> (String, String) {
    let comm = format!(
        r#"{{"step1": {{"p2p": {{}}, "collective": {{{}, {}}}}}}}"#,
        op("hcom_allReduce__777_1_1", "77", 2.0),
        op("hcom_allReduce__777_2_1", "77", 1.0)
    );
    let other = 1 - local;
    let matrix = format!(
        r#"{{"step1": {{"collective": {{"allreduce-total@77": {{"{local}-{local}": {{"Transport Type": "LOCAL", "Transit Size(MB)": 2.0, "Transit Time(ms)": 0.5, "Bandwidth(GB/s)": 4.0}}, "{local}-{other}": {{"Transport Type": "HCCS", "Transit Size(MB)": 1.0, "Transit Time(ms)": 0.5, "Bandwidth(GB/s)": 2.0}}}}}}}}}}"#
    );
    let _ = r;
    (comm, matrix)
}

/// An opener over the folder that counts how often each file is opened.
struct Counting {
    inner: FsOpener,
    opened: RefCell<HashMap<String, usize>>,
}

impl Opener for Counting {
    fn open(&self, path: &str) -> std::io::Result<Box<dyn Read + '_>> {
        *self
            .opened
            .borrow_mut()
            .entry(path.to_string())
            .or_default() += 1;
        self.inner.open(path)
    }
}

fn run(
    root: &Path,
    anomaly: bool,
) -> (
    proflens::analysis::comm::CommReport,
    proflens::base::Problems,
    HashMap<String, usize>,
) {
    let (fs, files) = FsOpener::walk(root).unwrap();
    let mut inv = Inventory::from_paths(&files);
    proflens::parse::metadata::read_side_files(&mut inv, &fs);
    let opener = Counting {
        inner: fs,
        opened: RefCell::new(HashMap::new()),
    };
    let opts = CommOptions::default();
    let plan = Plan {
        comm: Some(opts.clone()),
        anomaly: anomaly.then(proflens::analysis::anomaly_config::AnomalyConfig::spec_defaults),
        ..Plan::none()
    };
    let store = engine::run(&inv, &opener, plan, &mut |_| ControlFlow::Continue(()));
    let (rep, problems) = proflens::engine::export::comm::report(&store, &[], &opts).unwrap();
    (rep, problems, opener.opened.into_inner())
}

#[test]
fn a_cut_file_and_an_unknown_era_are_located_and_the_other_ranks_are_built() {
    let root = tmp("bad");
    let (c0, m0) = good(0, 0);
    let (c1, m1) = good(1, 1);
    rank(&root, 0, &c0, Some(&m0));
    rank(&root, 1, &c1, Some(&m1));
    rank(&root, 2, &c1[..c1.len() / 2], None);
    rank(&root, 3, r#"{"step1": {"ops": {"x@1": {}}}}"#, None);
    let (rep, problems, _) = run(&root, false);
    let msgs: Vec<String> = problems
        .kept()
        .iter()
        .map(|p| format!("{}: {}", p.at, p.message))
        .collect();
    assert!(
        msgs.iter()
            .any(|m| m.contains("rank_2_ascend_pt") && m.contains("cut")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("rank_3_ascend_pt") && m.contains("known era")),
        "{msgs:?}"
    );
    assert_eq!(rep.ranks, [0, 1]);
    assert_eq!(rep.time_summary.len(), 2);
    let t = &rep.time_summary[0];
    assert_eq!(
        (t.n_ops, t.elapse_ms, t.transit_ms, t.wait_ms),
        (2, 3.0, 1.0, 0.5)
    );
    assert_eq!(t.wait_ratio, 0.3333);
    assert_eq!(rep.matrix.len(), 4);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_group_only_one_rank_names_is_a_located_problem() {
    let root = tmp("alone");
    let (c0, m0) = good(0, 0);
    let (c1, m1) = good(1, 1);
    let c1 = c1.replacen(
        r#""collective": {"#,
        &format!(
            r#""collective": {{{}, "#,
            op("hcom_allGather__999_1_1", "99", 1.0)
        ),
        1,
    );
    rank(&root, 0, &c0, Some(&m0));
    rank(&root, 1, &c1, Some(&m1));
    let (rep, problems, _) = run(&root, false);
    let p = problems
        .kept()
        .iter()
        .find(|p| p.code == proflens::analysis::comm::GROUP_ALONE)
        .expect("GROUP_ALONE");
    assert!(p.at.to_string().contains("rank_1_ascend_pt"), "{}", p.at);
    assert!(p.message.contains("99"));
    // Still shown for that rank alone, never joined with the others.
    let t: Vec<_> = rep
        .time_summary
        .iter()
        .filter(|t| t.group == "99")
        .collect();
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].rank_set[..], [1]);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn communication_json_is_opened_once_with_the_anomaly_analysis_planned() {
    let root = tmp("once");
    let (c0, m0) = good(0, 0);
    rank(&root, 0, &c0, Some(&m0));
    std::fs::write(
        root.join("rank_0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"),
        "[]",
    )
    .unwrap();
    let (rep, _, opened) = run(&root, true);
    assert!(
        opened.keys().any(|k| k.ends_with("trace_view.json")),
        "the anomaly ran: {opened:?}"
    );
    assert_eq!(rep.ranks, [0]);
    let n = opened
        .iter()
        .filter(|(k, _)| k.ends_with("/communication.json"))
        .map(|(_, n)| *n)
        .sum::<usize>();
    assert_eq!(n, 1, "{opened:?}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn an_op_on_some_ranks_only_is_listed_and_each_rank_sums_what_it_has() {
    let root = tmp("partial");
    let (c0, m0) = good(0, 0);
    let (c1, m1) = good(1, 1);
    let c0 = c0.replacen(
        r#""collective": {"#,
        &format!(
            r#""collective": {{{}, "#,
            op("hcom_allReduce__777_3_1", "77", 4.0)
        ),
        1,
    );
    rank(&root, 0, &c0, Some(&m0));
    rank(&root, 1, &c1, Some(&m1));
    let (rep, problems, _) = run(&root, false);
    assert_eq!(rep.partial_ops.len(), 1);
    let p = &rep.partial_ops[0];
    assert_eq!(
        (p.op.as_str(), p.ranks.as_slice(), p.missing.as_slice()),
        ("hcom_allReduce__777_3_1", &[0i64][..], &[1i64][..])
    );
    assert_eq!(problems.count(proflens::analysis::comm::OP_PARTIAL), 1);
    let n: Vec<usize> = rep.time_summary.iter().map(|t| t.n_ops).collect();
    assert_eq!(n, [3, 2]);
    let _ = std::fs::remove_dir_all(&root);
}

/// The bad inputs of `fixtures/comm_bad` (its README): each a located problem — file, line
/// or byte, what was expected — and the matrix and summaries of the usable ranks built.
#[test]
fn the_bad_fixture_run_is_located_problem_by_problem_and_the_rest_is_built() {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/comm_bad"));
    let (rep, problems, _) = run(&root, false);
    let kept = problems.kept();
    let find = |code: &str, file: &str| {
        kept.iter()
            .find(|p| p.code == code && p.at.file.ends_with(file))
            .unwrap_or_else(|| panic!("{code} at {file}: {kept:#?}"))
    };
    // Cut after 300 bytes, inside the first op: located at its end.
    let cut = find(
        "COMM-FILE-001",
        "rank_3_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json",
    );
    assert_eq!((cut.at.line, cut.at.byte), (Some(12), Some(300)));
    assert_eq!(
        cut.message,
        "expected the rest of the file: it ends early (cut); this rank's communication file is not used, the other ranks are"
    );
    assert_eq!(cut.severity, proflens::base::Severity::Error);
    // A step with neither "p2p" nor "collective": the line where that step object ends.
    let era = find(
        "COMM-FILE-001",
        "rank_4_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json",
    );
    assert_eq!(era.at.line, Some(57));
    assert!(
        era.message.starts_with(
            "expected a step object with \"p2p\" or \"collective\" (this layout is not a known era)"
        ),
        "{}",
        era.message
    );
    // A group no other rank names, without metadata: a warning at the rank.
    let alone = find("COMM-GROUP-001", "rank_2_ascend_pt");
    assert_eq!(alone.severity, proflens::base::Severity::Warning);
    assert_eq!(
        alone.message,
        "group 99 is named by rank 2 only, and no metadata says which ranks it spans: its ops are shown for that rank alone"
    );
    // An op on ranks 0 and 1 only: said once for the group, at the rank that lacks it.
    let partial = find("COMM-OP-001", "rank_2_ascend_pt");
    assert!(
        partial.message.starts_with(
            "group 77: 1 op(s) present on some of its ranks only, e.g. hcom_allReduce__777_2_1 of step1 on rank(s) [0, 1], missing on rank(s) [2]"
        ),
        "{}",
        partial.message
    );
    assert_eq!(problems.count("COMM-OP-001"), 1);
    // The rest: ranks 0, 1, 2, their ring of links, their time rows.
    assert_eq!(rep.ranks, [0, 1, 2]);
    let links: Vec<(i64, i64)> = rep.matrix.iter().map(|m| (m.src, m.dst)).collect();
    assert_eq!(links, [(0, 0), (0, 1), (1, 1), (1, 2), (2, 2), (2, 0)]);
    let rows: Vec<(i64, &str, usize)> = rep
        .time_summary
        .iter()
        .map(|t| (t.rank, t.group.as_str(), t.n_ops))
        .collect();
    assert_eq!(
        rows,
        [(0, "77", 2), (1, "77", 2), (2, "77", 1), (2, "99", 1)]
    );
    assert_eq!(rep.partial_ops.len(), 1);
    assert_eq!(
        (
            rep.partial_ops[0].ranks.as_slice(),
            rep.partial_ops[0].missing.as_slice()
        ),
        (&[0i64, 1][..], &[2i64][..])
    );
}

#[test]
fn two_captures_with_the_same_rank_ids_keep_the_first_by_label_and_say_so() {
    // runA's ranks 0 and 1 (two ops, 2 and 1 ms) and runB's ranks 0, 1 and 3 (one op, 5 ms): runB's
    // ranks 0 and 1 are not used, each with a warning naming runA's folder; rank 3 is.
    let root = tmp("two_captures");
    let (comm, matrix) = good(0, 0);
    for r in [0, 1] {
        rank(&root.join("runA"), r, &comm, Some(&matrix));
    }
    let slow = format!(
        r#"{{"step1": {{"p2p": {{}}, "collective": {{{}}}}}}}"#,
        op("hcom_allReduce__777_1_1", "77", 5.0)
    );
    for r in [0, 1, 3] {
        rank(&root.join("runB"), r, &slow, None);
    }
    let (rep, problems, _) = run(&root, false);
    assert_eq!(rep.ranks, [0, 1, 3]);
    let twice: Vec<_> = problems
        .kept()
        .iter()
        .filter(|p| p.code == proflens::analysis::comm::RANK_TWICE)
        .map(|p| (p.at.file.to_string(), p.message.clone()))
        .collect();
    assert_eq!(twice.len(), 2, "{twice:?}");
    assert!(twice[0].0.ends_with("runB/rank_0_ascend_pt"), "{twice:?}");
    assert!(twice[0].1.starts_with("rank 0 is also "), "{twice:?}");
    assert!(twice[0].1.contains("runA/rank_0_ascend_pt"), "{twice:?}");
    // Rank 0's time is runA's (2 + 1 ms), not runB's 5 ms; rank 3's is runB's.
    let t0: f64 = rep
        .time_summary
        .iter()
        .filter(|t| t.rank == 0)
        .map(|t| t.elapse_ms)
        .sum();
    assert_eq!(t0, 3.0);
    assert!(rep
        .time_summary
        .iter()
        .any(|t| t.rank == 3 && t.elapse_ms == 5.0));
    let _ = std::fs::remove_dir_all(&root);
}
