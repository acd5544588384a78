//! Generator of large, realistic memory-snapshot pickles for benchmarks (torch-snapshot.md §8.4).
//!
//! `cargo run --release --example snapshot_gen -- OUT.pickle [EVENTS] [SEED]`
//! (default 1,500,000 events; write to /tmp or target/, never into git).
//!
//! The output is what CPython's pickler writes for `_dump_snapshot()` data at
//! protocol 4 (without FRAME opcodes, which are optional): containers memoized
//! right after creation, `MARK … SETITEMS`/`APPENDS` batches of ≤ 1000, and
//! heavy sharing like real files: dict keys and action strings written once,
//! ~600 distinct frame dicts and ~200 distinct frame lists (20–60 frames each,
//! C++ and Python frames like `stacks="all"`) referenced with `BINGET`s. The
//! trace simulates training steps (forward allocations, backward frees,
//! optimizer updates) with `time_us`, `compile_context` and `user_metadata` on
//! every entry, record-stream delays on a second stream, segment events, and
//! an end state whose active blocks are the allocations still live. The writer is
//! `proflens::engine::synth::snapshot::write_snapshot`.

use std::fs::File;
use std::io::{self, BufWriter, Write};

use proflens::engine::synth::snapshot::{write_snapshot, SnapshotSpec, SNAPSHOT_SEED};

mod common;
use common::exit_on_help;

fn main() -> io::Result<()> {
    exit_on_help(
        "usage: snapshot_gen [OUT.pickle] [EVENTS] [SEED]\n\
         writes a memory-snapshot pickle with EVENTS trace entries (default \
         /tmp/proflens_snapshot_big.pickle, 1500000 entries)",
    );
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = args
        .first()
        .cloned()
        .unwrap_or_else(|| "/tmp/proflens_snapshot_big.pickle".into());
    let events: u64 = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_500_000);
    let seed = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(SNAPSHOT_SEED);
    let mut w = BufWriter::with_capacity(1 << 20, File::create(&out)?);
    let n = write_snapshot(&mut w, &SnapshotSpec { events, seed })?;
    w.flush()?;
    let size = std::fs::metadata(&out)?.len();
    eprintln!("wrote {out}: {n} events, {:.1} MB", size as f64 / 1048576.0);
    Ok(())
}
