//! The memory analysis' trace reader (src/parse/trace_json/call_stack_index.rs): `cpu_op`
//! events, their `Call stack` strings and `fwdbwd` flows, in default and parity mode.
//!
//! Input: byte 0 picks the read-chunk size, the rest is `trace_view.json`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proflens::base::Problems;
use proflens::ingest::ChunkReader;
use proflens::model::stacks::StackPool;
use proflens::model::strings::StringPool;
use proflens::parse::trace_json::call_stack_index::{read_host_ops, TraceMode};
use proflens_fuzz::{chunk_of, go_on, render_problems};

fuzz_target!(|data: &[u8]| {
    let Some((&b, file)) = data.split_first() else {
        return;
    };
    for mode in [TraceMode::Default, TraceMode::Parity] {
        let mut rdr = ChunkReader::with_sizes(file, Some(file.len() as u64), chunk_of(b), 16 << 20);
        let mut strings = StringPool::new();
        let mut stacks = StackPool::new();
        let mut problems = Problems::new();
        let res = read_host_ops(
            &mut rdr,
            "r_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
            mode,
            &mut strings,
            &mut stacks,
            &mut problems,
            &mut go_on,
        );
        if let Ok((host, stats)) = &res {
            assert_eq!(host.len() as u64, stats.cpu_ops);
            assert!(stats.with_stack <= stats.cpu_ops);
        }
        if let Err(e) = &res {
            let _ = e.to_string();
        }
        render_problems(&problems);
    }
});
