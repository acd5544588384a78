//! Generator of a large realistic rank folder for the anomaly benchmark:
//! `cargo run --release --example anomaly_gen -- OUT_DIR [KERNELS=1000000] [STEPS=100]`.
//!
//! Writes `OUT_DIR/bench_ascend_pt/ASCEND_PROFILER_OUTPUT/{kernel_details.csv,
//! trace_view.json}`: STEPS `ProfilerStep#N` markers; per step, layers of compute
//! kernels on stream 2 with small-op runs, an auxiliary stream 3, one HCCL all-reduce
//! per layer, rare AI_CPU kernels, internal bubbles of varied size; the trace holds
//! the markers, host `cpu_op` / `python_function` events (nested), CANN API events,
//! `HostToDevice` flows and the `Ascend Hardware` device-lane copy of every kernel.
//! Deterministic (fixed LCG seed). Never commit the output (hundreds of MB). The writer is
//! `proflens::engine::synth::ascend::write_anomaly_rank`.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use proflens::engine::synth::ascend::{write_anomaly_rank, AnomalySpec};

fn main() -> std::io::Result<()> {
    let usage = "usage: anomaly_gen OUT_DIR [KERNELS] [STEPS]\n\
                 writes OUT_DIR/bench_ascend_pt/ with KERNELS kernels (default 1000000) in STEPS steps (100)";
    if std::env::args().skip(1).any(|a| a == "-h" || a == "--help") {
        println!("{usage}");
        return Ok(());
    }
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(
        args.next()
            .expect("usage: anomaly_gen OUT_DIR [KERNELS] [STEPS]"),
    );
    let n_kernels: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let steps: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    let dir = out.join("bench_ascend_pt/ASCEND_PROFILER_OUTPUT");
    fs::create_dir_all(&dir)?;
    let mut kd = BufWriter::with_capacity(1 << 20, File::create(dir.join("kernel_details.csv"))?);
    let mut tv = BufWriter::with_capacity(1 << 20, File::create(dir.join("trace_view.json"))?);
    let task = write_anomaly_rank(
        &mut kd,
        &mut tv,
        &AnomalySpec {
            kernels: n_kernels,
            steps,
        },
    )?;
    kd.flush()?;
    tv.flush()?;
    let size = |p: &str| fs::metadata(dir.join(p)).map(|m| m.len()).unwrap_or(0);
    eprintln!(
        "wrote {} kernels in {steps} steps: kernel_details.csv {:.1} MB, trace_view.json {:.1} MB under {}",
        task,
        size("kernel_details.csv") as f64 / 1e6,
        size("trace_view.json") as f64 / 1e6,
        out.display()
    );
    Ok(())
}
