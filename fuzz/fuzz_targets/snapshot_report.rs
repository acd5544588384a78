//! A whole snapshot run: decode → per-device analysis (src/analysis/snapshot: lifetimes,
//! curves, peaks, attribution, quality) → JSON and Markdown report (src/report/snapshot_*),
//! as `proflens snapshot --json --report` does. Analysis arithmetic on pickled times and
//! sizes is where overflow lives.
//!
//! Input: the bytes of a snapshot pickle.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proflens::engine::read::snapshot::{analyse, SnapshotOptions};
use proflens::ingest::InputFile;
use proflens::parse::pickle::read_snapshot;
use proflens_fuzz::{go_on, render_problems};

fuzz_target!(|data: &[u8]| {
    let mut src = data;
    let Ok(d) = read_snapshot(
        "snapshot.pickle",
        &mut src,
        Some(data.len() as u64),
        &mut go_on,
    ) else {
        return;
    };
    let file = InputFile {
        path: "snapshot.pickle".into(),
        size: data.len() as u64,
    };
    let opts = SnapshotOptions::spec_defaults();
    let run = analyse(&file, d.snapshot, d.problems, &opts);
    render_problems(&run.problems);
    let json = run
        .json_text(&opts.report)
        .expect("the report encodes as JSON");
    let md = run.markdown(&opts.report);
    assert!(!json.is_empty() && !md.is_empty());
});
