//! The Ascend DB export end to end (docs/rules/ascend-db.md): `data` is the bytes of
//! `ascend_pytorch_profiler_0.db` in a rank folder with a fixed `profiler_info_0.json`; the
//! memory and the anomaly analyses run on it through SQLite (read-only VFS over a `MemOpener`),
//! then every problem is rendered. Corrupt pages, truncated files, wrong schemas and
//! non-SQLite bytes must give problems, never a panic.
#![no_main]

use std::ops::ControlFlow;

use libfuzzer_sys::fuzz_target;
use proflens::engine::{run, Plan};
use proflens::ingest::inventory::Inventory;
use proflens::ingest::MemOpener;
use proflens_fuzz::render_problems;

const INFO: &[u8] = br#"{"config":{"common_config":{"with_stack":true,"profile_memory":true}},"rank_id":0}"#;

fuzz_target!(|data: &[u8]| {
    let mut o = MemOpener::new();
    o.add("run/r0_ascend_pt/profiler_info_0.json", INFO.to_vec());
    o.add(
        "run/r0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
        data.to_vec(),
    );
    let mut inv = Inventory::from_paths(&o.list());
    proflens::parse::metadata::read_side_files(&mut inv, &o);
    let store = run(&inv, &o, Plan::defaults(), &mut |_| ControlFlow::Continue(()));
    if let Some((mem, drop_problems)) = store.memory_run(&inv) {
        render_problems(&drop_problems);
        for r in &mem.ranks {
            render_problems(&r.problems);
        }
    }
    if let Ok(ranks) = store.anomaly_ranks() {
        for a in ranks {
            render_problems(&a.problems);
        }
    }
});
