//! End to end, the anomaly analysis of two rank folders over a `MemOpener`
//! (src/engine/anomaly.rs: kernels → trace timeline → steps, bubbles, groups, tags →
//! cross-rank table), rulebook and script-compatible settings, then the JSON, the CSV
//! exports and both Markdown reports (src/report/anomaly_*, arch_md.rs).
//!
//! Input: up to 10 files separated by NUL (see `proflens_fuzz::rank_folders`): for each of
//! two rank folders `kernel_details.csv`, `trace_view.json`, `step_trace_time.csv`,
//! `communication.json`, `profiler_info_<k>.json`.
#![no_main]

use std::ops::ControlFlow;

use libfuzzer_sys::fuzz_target;
use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::engine::export::anomaly::{rank_reports, write_json};
use proflens::engine::{run, Plan};
use proflens::report::anomaly_csv::{write_bubbles, write_steps, CsvRank};
use proflens_fuzz::{rank_folders, render_problems};

const NAMES: [&str; 5] = [
    "ASCEND_PROFILER_OUTPUT/kernel_details.csv",
    "ASCEND_PROFILER_OUTPUT/trace_view.json",
    "ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
    "ASCEND_PROFILER_OUTPUT/communication.json",
    "profiler_info_{k}.json",
];

fuzz_target!(|data: &[u8]| {
    let (o, inv) = rank_folders(data, &NAMES);
    for cfg in [
        AnomalyConfig::spec_defaults(),
        AnomalyConfig::script_compatible(),
    ] {
        let plan = Plan { anomaly: Some(cfg.clone()), ..Plan::none() };
        let mut store = run(&inv, &o, plan, &mut |_| ControlFlow::Continue(()));
        let (Ok(cross), Ok(ranks)) = (store.anomaly_cross(), store.take_anomaly()) else {
            unreachable!("nothing cancels");
        };
        for r in &ranks {
            render_problems(&r.problems);
        }
        let mut out = Vec::new();
        write_json(&mut out, &ranks, &cfg).expect("JSON into memory");
        serde_json::from_slice::<serde_json::Value>(&out).expect("the JSON output is JSON");
        let csv: Vec<CsvRank<'_>> = ranks
            .iter()
            .map(|r| CsvRank {
                rank_id: r.meta.rank_id,
                rank_dir: &r.dir_name,
                result: &r.result,
                kernels: &r.kernels,
            })
            .collect();
        out.clear();
        write_steps(&csv, &mut out).expect("steps CSV into memory");
        out.clear();
        write_bubbles(&csv, &mut out).expect("bubbles CSV into memory");
        let views = proflens::engine::export::gpu_report::straggler_views(&ranks);
        for i in 0..ranks.len() {
            let (_, md, _, arch) =
                rank_reports(&inv, &ranks, &cross, &views, &cfg, i).expect("rank i exists");
            assert!(!md.is_empty() && !arch.is_empty());
        }
    }
});
