//! proflens native side of the GPU benchmark: reads one Kineto trace (plain or
//! gzip, streamed) and runs the HTA-compatible breakdowns and the kernel categories, printing
//! the numbers as one JSON line (the same fields `scripts/hta_reference.py` prints from HTA,
//! so the two sides check each other) and the phase times on stderr.
//!
//! `cargo run --release --example kineto_bench -- TRACE.json[.gz] [--read-only] [--threads N]`
//! (`--read-only`: the reader alone, so that `/usr/bin/time` measures its CPU; `--threads N`:
//! a plain trace cut into byte ranges read on N threads, formats.md §8.2).

use std::ops::ControlFlow;
use std::time::Instant;

use proflens::analysis::gpu_breakdown::{analyse, hta_events};
use proflens::analysis::gpu_kernels::summarise;
use proflens::parse::kineto;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: kineto_bench TRACE.json[.gz]");
        std::process::exit(2);
    };
    let t0 = Instant::now();
    let file = std::fs::File::open(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1)
    });
    let args: Vec<String> = std::env::args().collect();
    let threads: usize = args
        .iter()
        .position(|a| a == "--threads")
        .and_then(|k| args.get(k + 1)?.parse().ok())
        .unwrap_or(1);
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let cut = (threads > 1).then(|| {
        // A single file walks as a one-file inventory (its path relative to its folder).
        let (opener, files) = proflens::cli::fs_opener::FsOpener::walk(path.as_ref())
            .unwrap_or_else(|e| {
                eprintln!("{path}: {e}");
                std::process::exit(1)
            });
        let name = files[0].path.clone();
        let ranges = kineto::ranges::Ranges::threads(threads);
        kineto::ranges::read_traces_ranges(&opener, &name, size, ranges, &mut |_| {
            ControlFlow::Continue(())
        })
    });
    let read = match cut.flatten() {
        Some(r) => r.map(|(t, _)| t.into_one().unwrap_or_default()),
        None => kineto::read(Box::new(file), &path, None, &mut |_| {
            ControlFlow::Continue(())
        })
        .map(|(t, _)| t),
    };
    let t = read.unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1)
    });
    let parsed = t0.elapsed();
    if args.iter().any(|a| a == "--read-only") {
        eprintln!(
            "device ops {}, host events {}; parse {:.2} s",
            t.device_ops.len(),
            t.host_ops.len(),
            parsed.as_secs_f64()
        );
        return;
    }
    let b = analyse(&hta_events(&t));
    let k = summarise(&t, &[]);
    let analysed = t0.elapsed() - parsed;
    let time = b.time.map(|x| {
        format!(
            "{{\"span_us\": {}, \"idle_us\": {}, \"compute_us\": {}, \"non_compute_us\": {}}}",
            x.span_us, x.idle_us, x.compute_us, x.non_compute_us
        )
    });
    let opt = |v: Option<i64>| v.map_or("null".to_string(), |v| v.to_string());
    let idle: Vec<String> = b
        .idle_by_stream
        .iter()
        .map(|s| {
            format!(
                "{{\"stream\": {}, \"host_wait_us\": {}, \"kernel_wait_us\": {}, \"other_us\": {}}}",
                s.stream,
                opt(s.host_wait_us),
                opt(s.kernel_wait_us),
                s.other_us
            )
        })
        .collect();
    println!(
        "{{\"gpu_time_breakdown\": {}, \"idle_by_stream\": [{}]}}",
        time.unwrap_or("null".into()),
        idle.join(", ")
    );
    eprintln!(
        "device ops {}, host events {}, kernel names {}; parse {:.2} s, analyses {:.2} s",
        t.device_ops.len(),
        t.host_ops.len(),
        k.by_name.len(),
        parsed.as_secs_f64(),
        analysed.as_secs_f64()
    );
}
