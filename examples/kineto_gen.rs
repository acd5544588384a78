//! Generator of a large realistic PyTorch profiler (Kineto) trace for the GPU benchmarks
//! (`cargo run --release --example kineto_gen -- --help`).
//!
//! One rank's `*.pt.trace.json` (and, with `--gzip`, `*.pt.trace.json.gz` streamed through
//! flate2): the 2023+ layout with `schemaVersion`, `deviceProperties`, `distributedInfo`,
//! `baseTimeNanoseconds` and `traceEvents`. Per step a `ProfilerStep#N` `user_annotation`;
//! per three kernels an `aten::` `cpu_op`; per kernel its `cudaLaunchKernel` `cuda_runtime` call (with
//! `correlation`), the `ac2g` flow pair and the `kernel` on stream 7 — a mix of GEMMs and
//! elementwise kernels, one NCCL all-reduce on stream 20 every 50 kernels, a memcpy / memset
//! now and then, and a device that falls a little behind the host (launch queue). Float `ts`
//! with ns fractions. Compact JSON, about 500 bytes per kernel: 1M kernels ≈ 500 MB. Deterministic (fixed
//! seed). Never commit the output.

use std::fs::File;
use std::io::{BufWriter, Write};

use proflens::engine::synth::{write_kineto_trace, KinetoSpec};

const HELP: &str = "kineto_gen: write a large synthetic PyTorch profiler (Kineto) trace

usage: cargo run --release --example kineto_gen -- OUT.pt.trace.json [options]

options:
  --kernels N   GPU kernels to write (default 1000000; about 500 bytes each)
  --steps N     ProfilerStep#N ranges (default 100)
  --rank R      distributedInfo.rank (default 0)
  --gzip        also write OUT.gz (streamed, default compression)
  -h, --help    this text

The output is deterministic; never commit it.";

struct Args {
    out: String,
    kernels: u64,
    steps: u64,
    rank: u64,
    gzip: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        out: String::new(),
        kernels: 1_000_000,
        steps: 100,
        rank: 0,
        gzip: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        let mut num = |name: &str| -> Result<u64, String> {
            it.next()
                .and_then(|v| v.parse().ok())
                .ok_or(format!("{name} needs a whole number"))
        };
        match x.as_str() {
            "-h" | "--help" => {
                println!("{HELP}");
                std::process::exit(0);
            }
            "--kernels" => a.kernels = num("--kernels")?,
            "--steps" => a.steps = num("--steps")?.max(1),
            "--rank" => a.rank = num("--rank")?,
            "--gzip" => a.gzip = true,
            s if s.starts_with('-') => return Err(format!("unknown option {s}")),
            s => a.out = s.to_string(),
        }
    }
    if a.out.is_empty() {
        return Err("missing OUT.pt.trace.json".into());
    }
    Ok(a)
}

fn main() {
    let a = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("kineto_gen: {e}\n\n{HELP}");
            std::process::exit(2);
        }
    };
    let run = || -> std::io::Result<()> {
        let mut w = BufWriter::with_capacity(1 << 20, File::create(&a.out)?);
        write_kineto_trace(
            &mut w,
            &KinetoSpec {
                kernels: a.kernels,
                steps: a.steps,
                rank: a.rank,
            },
        )?;
        w.flush()?;
        if a.gzip {
            let gz_path = format!("{}.gz", a.out);
            let mut enc = flate2::write::GzEncoder::new(
                BufWriter::with_capacity(1 << 20, File::create(&gz_path)?),
                flate2::Compression::default(),
            );
            std::io::copy(&mut std::io::BufReader::new(File::open(&a.out)?), &mut enc)?;
            enc.finish()?.flush()?;
        }
        Ok(())
    };
    if let Err(e) = run() {
        eprintln!("kineto_gen: {}: {e}", a.out);
        std::process::exit(1);
    }
}
