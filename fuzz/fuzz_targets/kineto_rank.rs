//! End to end, the GPU (PyTorch profiler / Kineto) analysis of two GPU ranks over a
//! `MemOpener` (src/parse/kineto: the streaming reader with its top-level-member pass and the
//! raw-backslash locator; src/ingest/gzip.rs when a part starts with the gzip magic;
//! src/ingest/kineto.rs inventory; src/engine/gpu.rs → the anomaly pipeline, the HTA
//! breakdowns, memory counters and the straggler table), then the JSON and both Markdown
//! reports.
//!
//! Input: up to 2 trace files separated by NUL (see `proflens_fuzz::split_files`); a part
//! that starts with `1F 8B` is named `.pt.trace.json.gz`, else `.pt.trace.json`.
#![no_main]

use std::ops::ControlFlow;

use libfuzzer_sys::fuzz_target;
use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::engine::export::anomaly::{rank_reports, write_json};
use proflens::engine::{run, Plan};
use proflens::ingest::inventory::Inventory;
use proflens::ingest::MemOpener;
use proflens::parse::metadata::read_side_files;
use proflens_fuzz::{render_problems, split_files};

fuzz_target!(|data: &[u8]| {
    let mut o = MemOpener::new();
    for (k, part) in split_files(data, 2).into_iter().enumerate() {
        if let Some(bytes) = part {
            let gz = if bytes.starts_with(&[0x1f, 0x8b]) { ".gz" } else { "" };
            o.add(format!("run/host_{k}.1700000000000.pt.trace.json{gz}"), bytes);
        }
    }
    let mut inv = Inventory::from_paths(&o.list());
    read_side_files(&mut inv, &o);
    let cfg = AnomalyConfig::spec_defaults();
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
    let views = proflens::engine::export::gpu_report::straggler_views(&ranks);
    for i in 0..ranks.len() {
        let (_, md, _, arch) = rank_reports(&inv, &ranks, &cross, &views, &cfg, i).expect("rank i exists");
        assert!(!md.is_empty() && !arch.is_empty());
    }
});
