//! Two captures without a rank id dropped together (wio1997's run148 and run358: no
//! profiler_info_<N>.json, no rank_id, no rank<N> folder name): the page's inventory says the
//! steps analysis can run on both — it numbers them by position, as `proflens anomaly` does —
//! and a run analyses both (it used to say "cannot run — missing a rank id" and run nothing).

mod session_common;

use std::path::Path;

use proflens::engine::session::Session;
use proflens::protocol::{AnalysisKind, Request};

const ROOT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/real_world/wio1997__Inference-Foundry/evidence"
);

#[test]
fn unranked_captures_run_the_steps_analysis_in_the_page() {
    let mut s = Session::new();
    let (opener, out) = session_common::open_dir(&mut s, Path::new(ROOT));
    let inv = session_common::inventory(&out);
    let ascend: Vec<_> = inv
        .ranks
        .iter()
        .enumerate()
        .filter(|(_, r)| r.dir.ends_with("_ascend_pt"))
        .collect();
    assert_eq!(
        ascend.len(),
        2,
        "{:?}",
        inv.ranks.iter().map(|r| &r.dir).collect::<Vec<_>>()
    );
    for (_, r) in &ascend {
        let a = r
            .analyses
            .iter()
            .find(|c| c.analysis == AnalysisKind::Anomaly)
            .expect("a steps capability");
        assert!(a.can_run, "{}: {:?}", r.dir, a);
        assert!(
            r.notes.iter().any(|n| n.starts_with("MEM-DISC-003")),
            "{:?}",
            r.notes
        );
    }
    let targets: Vec<u32> = ascend.iter().map(|(i, _)| *i as u32).collect();
    let run = session_common::send(
        &mut s,
        &opener,
        2,
        Request::run(AnalysisKind::Anomaly, targets),
    );
    let done = session_common::anomaly_summaries(&run);
    assert_eq!(done.len(), 2, "{:?}", run.out);
    assert!(done.iter().all(|d| d.steps > 0), "{done:?}");
}
