//! Generator of large, realistic torch_npu rank folders for the memory benchmark
//! (performance). Never commit its output: write to /tmp or target/.
//!
//! ```text
//! cargo run --release --example memory_gen -- <out dir> [--trace-mb 200] [--rows 1000000] [--ranks 1] [--seed 1]
//! ```
//!
//! Writes `<out>/gen_run/rank<k>_ascend_pt/` with `profiler_info_<k>.json`,
//! `profiler_metadata.json` and `ASCEND_PROFILER_OUTPUT/{trace_view.json, operator_memory.csv}`.
//! The trace mimics a real Level1 capture (formats.md §5): a bare array written like
//! Python `json.dumps` (`", "` separators), string `ts` with 3 decimals, `cpu_op` events
//! with innermost-first `Call stack`s, `Sequence number`/`Fwd thread id`, a backward
//! thread without stacks, `python_function`, enqueue/dequeue, device kernels (no `cat`),
//! `async_npu`/`fwdbwd` flows and counters. The CSV is the 15-column form with the
//! trailing-TAB quirk; its rows are allocations inside the generated ops, so matching has
//! realistic work to do. The writers are `proflens::engine::synth::ascend` (the worker's
//! warm-up writes a small rank with them).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use proflens::engine::synth::ascend::{
    memory_rng, profiler_info_json, write_memory_trace, write_operator_memory, MemoryTraceSpec,
    PROFILER_METADATA_JSON,
};

mod common;
use common::exit_on_help;

const USAGE: &str =
    "usage: memory_gen <out dir> [--trace-mb N] [--rows N] [--ranks K] [--seed S]\n\
     writes <out dir>/gen_run/rank<k>_ascend_pt/ (trace_view.json of about N MB, N operator_memory rows)";

fn main() -> std::io::Result<()> {
    exit_on_help(USAGE);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut out: Option<PathBuf> = None;
    let (mut trace_mb, mut rows, mut ranks, mut seed) = (200.0f64, 1_000_000u64, 1u32, 1u64);
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--trace-mb" => trace_mb = v.parse().expect("--trace-mb N"),
            "--rows" => rows = v.parse().expect("--rows N"),
            "--ranks" => ranks = v.parse().expect("--ranks N"),
            "--seed" => seed = v.parse().expect("--seed N"),
            p if p.starts_with('-') => {
                eprintln!("unknown option {p}\n{USAGE}");
                std::process::exit(2);
            }
            p => {
                out = Some(PathBuf::from(p));
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    let Some(out) = out else {
        eprintln!("{USAGE}");
        std::process::exit(2);
    };
    let mut rng = memory_rng(seed);
    for rank in 0..ranks {
        let dir = out.join("gen_run").join(format!("rank{rank}_ascend_pt"));
        fs::create_dir_all(dir.join("ASCEND_PROFILER_OUTPUT"))?;
        fs::write(
            dir.join(format!("profiler_info_{rank}.json")),
            profiler_info_json(rank),
        )?;
        fs::write(dir.join("profiler_metadata.json"), PROFILER_METADATA_JSON)?;
        let mut ops = Vec::new();
        let spec = MemoryTraceSpec {
            target_bytes: (trace_mb * 1048576.0) as u64,
            rank,
        };
        let mut w = BufWriter::with_capacity(
            1 << 20,
            File::create(dir.join("ASCEND_PROFILER_OUTPUT/trace_view.json"))?,
        );
        let tb = write_memory_trace(&mut w, &spec, &mut rng, &mut ops)?;
        w.flush()?;
        let mut w = BufWriter::with_capacity(
            1 << 20,
            File::create(dir.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv"))?,
        );
        let cb = write_operator_memory(&mut w, rows, &ops, &mut rng)?;
        w.flush()?;
        eprintln!("{}: trace_view.json {:.1} MB ({} allocating ops), operator_memory.csv {:.1} MB ({rows} rows)", dir.display(), tb as f64 / 1048576.0, ops.len(), cb as f64 / 1048576.0);
    }
    Ok(())
}
