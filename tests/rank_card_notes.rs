//! The rank card's notes in the page (formats.md §8): a trace whose `distributedInfo` comes
//! after its events (past the head the inventory reads) is numbered by the order of the
//! traces (`GPU-DISC-001`); the run reads the late `distributedInfo` and checks the number
//! (`GPU-DISC-005`). Once the run is done the card shows the check, the more precise, in place
//! of the guess. Real input: HTA's cupti_profiler benchmark trace (late `distributedInfo`,
//! rank 0) beside its simple-add trace (`distributedInfo` in the head, rank 0), linked into
//! one folder, driven through the worker's session as the browser drives it.

#![cfg(unix)]

use proflens::engine::session::Session;
use proflens::protocol::{AnalysisKind, Request, Response};
use proflens::views::gpu::rank_card_notes;

mod session_common;
use session_common::{anomaly_summaries, open_dir, send as ask};

const HTA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data"
);

#[test]
fn the_card_shows_the_runs_check_of_the_rank_number() {
    let hta = std::path::Path::new(HTA).canonicalize().unwrap();
    let root = format!("proflens_card_notes_{}", std::process::id());
    let top = std::env::temp_dir().join(&root);
    let _ = std::fs::remove_dir_all(&top);
    let d = top.join("run");
    std::fs::create_dir_all(&d).unwrap();
    for f in [
        "cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz",
        "execution_trace/benchmark_simple_add_trace.json.gz",
    ] {
        let name = std::path::Path::new(f).file_name().unwrap();
        std::os::unix::fs::symlink(hta.join(f), d.join(name)).unwrap();
    }
    let mut s = Session::new();
    let (opener, out) = open_dir(&mut s, &top);
    let inv = session_common::inventory(&out);
    let trace = format!("{root}/run/benchmark_result_924719_1679055439_trace.json.gz");
    let guess = format!("GPU-DISC-001: Rank 1 of {trace} taken from the order of the traces (no distributedInfo in the head, no rank in the name)");
    let check = format!("GPU-DISC-005: {trace} says distributedInfo.rank 0 after its trace events (past the head the inventory reads), but it was numbered rank 1 from the order of the traces (no distributedInfo in the head, no rank in the name) before the read: this run keeps rank 1; name the file with rank0 (rank0.pt.trace.json) to number it 0");
    assert_eq!(inv.ranks.len(), 2);
    assert_eq!(
        inv.ranks[0].rank_source,
        "distributedInfo.rank of the trace"
    );
    assert!(inv.ranks[0].notes.is_empty(), "{:?}", inv.ranks[0].notes);
    assert_eq!(inv.ranks[1].notes, [guess.clone()]);
    // Before the run: the inventory's guess.
    assert_eq!(rank_card_notes(&inv.ranks[1], None), [guess.clone()]);

    let out = ask(
        &mut s,
        &opener,
        2,
        Request::run(AnalysisKind::Anomaly, vec![0u32, 1]),
    );
    let done = anomaly_summaries(&out);
    assert_eq!(done.iter().map(|a| a.rank).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(done[0].rank_check, None);
    assert_eq!(
        rank_card_notes(&inv.ranks[0], Some(&done[0])),
        Vec::<String>::new()
    );
    // After the run: the check, in place of the guess.
    assert_eq!(
        rank_card_notes(&inv.ranks[1], Some(&done[1])),
        [check.clone()]
    );
    // The Problems tab keeps the run's check (the guess is the inventory's note).
    let problems: Vec<String> = out
        .out
        .iter()
        .filter_map(|(_, r)| match r {
            Response::Problems(p) => {
                Some(p.kept.iter().map(|p| format!("{}: {}", p.code, p.message)))
            }
            _ => None,
        })
        .flatten()
        .filter(|p| p.starts_with("GPU-DISC"))
        .collect();
    assert_eq!(problems, [check]);
    let _ = std::fs::remove_dir_all(&top);
}
