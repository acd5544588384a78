//! End to end, the memory analysis of two rank folders over a `MemOpener`
//! (src/engine/memory.rs: side files → trace → CSV → matching → curves → summary), in default
//! and parity mode, then every export (CSV, JSON, Markdown summary: src/report/memory_*).
//!
//! Input: up to 8 files separated by NUL (see `proflens_fuzz::rank_folders`): for each of two
//! rank folders `operator_memory.csv`, `trace_view.json`, `profiler_info_<k>.json`,
//! `profiler_metadata.json`.
#![no_main]

use std::ops::ControlFlow;

use libfuzzer_sys::fuzz_target;
use proflens::engine::read::memory::{MemoryOptions, Mode};
use proflens::engine::{run, Plan};
use proflens::report::memory_md::write_summary;
use proflens::report::memory_rows::{write_csv, write_json, Columns};
use proflens_fuzz::{rank_folders, render_problems};

const NAMES: [&str; 4] = [
    "ASCEND_PROFILER_OUTPUT/operator_memory.csv",
    "ASCEND_PROFILER_OUTPUT/trace_view.json",
    "profiler_info_{k}.json",
    "profiler_metadata.json",
];

fuzz_target!(|data: &[u8]| {
    let (o, inv) = rank_folders(data, &NAMES);
    for (mode, cols) in [
        (Mode::Default, Columns::Full),
        (Mode::Parity, Columns::Parity),
    ] {
        let opts = MemoryOptions {
            mode,
            ..Default::default()
        };
        let plan = Plan {
            memory: Some(opts),
            ..Plan::none()
        };
        let Some((run, drop_problems)) =
            run(&inv, &o, plan, &mut |_| ControlFlow::Continue(())).memory_run(&inv)
        else {
            unreachable!("memory is planned");
        };
        render_problems(&drop_problems);
        for r in &run.ranks {
            render_problems(&r.problems);
        }
        let mut out = Vec::new();
        write_csv(&run, cols, &mut out).expect("CSV export into memory");
        out.clear();
        write_json(&run, cols, &mut out).expect("JSON export into memory");
        serde_json::from_slice::<serde_json::Value>(&out).expect("the JSON export is JSON");
        out.clear();
        write_summary(&run, &mut out).expect("Markdown summary into memory");
    }
});
