//! The small JSON side files: `communication.json` (src/parse/communication.rs) and
//! `profiler_info_*.json` / `profiler_metadata.json` (src/parse/metadata.rs, then the
//! inventory's rank-id cross-check and readiness).
//!
//! Input: the bytes of one JSON file, given to all three readers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proflens::ingest::inventory::Inventory;
use proflens::ingest::MemOpener;
use proflens::parse::communication;
use proflens::parse::metadata::read_side_files;

const DIR: &str = "run/r_ascend_pt";

fuzz_target!(|data: &[u8]| {
    match communication::read(data, "communication.json") {
        Ok(ops) => {
            let _ = ops.len();
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    let mut o = MemOpener::new();
    o.add(format!("{DIR}/profiler_info_3.json"), data);
    o.add(format!("{DIR}/profiler_metadata.json"), data);
    o.add(
        format!("{DIR}/ASCEND_PROFILER_OUTPUT/trace_view.json"),
        "[]",
    );
    let mut inv = Inventory::from_paths(&o.list());
    read_side_files(&mut inv, &o);
    assert_eq!(inv.ranks.len(), 1);
    let _ = inv.problems();
    let _ = inv.ranks[0].label();
});
