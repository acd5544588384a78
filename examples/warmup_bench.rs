//! Native time of each worker warm-up step (`engine::session::warmup`): input size, then the time of
//! `run_step` (writing the input and analysing it), best and median of `RUNS` runs.
//!
//! ```text
//! cargo run --release --example warmup_bench [-- RUNS]
//! ```

use std::time::Instant;

use proflens::engine::session::warmup::{input, run_step, STEPS};

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(7)
        .max(1);
    for step in 0..STEPS {
        let files = input(step).map(|o| o.list()).unwrap_or_default();
        let bytes: u64 = files.iter().map(|f| f.size).sum();
        let mut ms: Vec<f64> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                assert!(run_step(step));
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        println!(
            "step {step}: {} file(s), {bytes} bytes ({:.2} MiB): best {:.1} ms, median {:.1} ms",
            files.len(),
            bytes as f64 / 1048576.0,
            ms[0],
            ms[ms.len() / 2]
        );
        for f in files {
            println!("  {} {}", f.path, f.size);
        }
    }
}
