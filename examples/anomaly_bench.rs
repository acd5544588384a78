//! Native benchmark of the whole anomaly analysis of one folder (parse kernel table
//! + trace + analysis + JSON build): `cargo run --profile bench-native --example
//! anomaly_bench -- DIR` (DIR from `anomaly_gen`). Prints input MB, wall seconds,
//! MB/s and peak RSS (VmHWM from /proc/self/status on Linux).

use std::ops::ControlFlow;
use std::time::Instant;

use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::{run, Plan};
use proflens::ingest::inventory::Inventory;
use proflens::report::anomaly_json;

fn peak_rss_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let dir = std::env::args().nth(1).expect("usage: anomaly_bench DIR");
    let (opener, files) = FsOpener::walk(std::path::Path::new(&dir)).expect("walk");
    let bytes: u64 = files.iter().map(|f| f.size).sum();
    let cfg = AnomalyConfig::spec_defaults();
    let t0 = Instant::now();
    let mut inv = Inventory::from_paths(&files);
    proflens::parse::metadata::read_side_files(&mut inv, &opener);
    let plan = Plan {
        anomaly: Some(cfg.clone()),
        ..Plan::none()
    };
    let ranks = run(&inv, &opener, plan, &mut |_| ControlFlow::Continue(()))
        .take_anomaly()
        .expect("not cancelled");
    let t_analysis = t0.elapsed().as_secs_f64();
    let mut json_bytes = 0usize;
    for r in &ranks {
        let j = anomaly_json::build(&r.kernels, &r.result, &r.meta, &cfg);
        let mut counter = Counter(0);
        serde_json::to_writer(&mut counter, &j).expect("serialise");
        json_bytes += counter.0;
    }
    let t_all = t0.elapsed().as_secs_f64();
    let mb = bytes as f64 / 1e6;
    for r in &ranks {
        eprintln!(
            "rank {:?}: {} kernels, {} steps, {} bubble windows, {} problems",
            r.meta.rank_id,
            r.kernels.len(),
            r.result.steps.len(),
            r.result.bubbles.len(),
            r.problems.total()
        );
    }
    println!(
        "input {mb:.1} MB; analysis {t_analysis:.2} s ({:.1} MB/s); with JSON ({:.1} MB) {t_all:.2} s ({:.1} MB/s); peak RSS {:.0} MB",
        mb / t_analysis,
        json_bytes as f64 / 1e6,
        mb / t_all,
        peak_rss_mb().unwrap_or(f64::NAN)
    );
}

/// Counts bytes written (the JSON is streamed, as the CLI does, not held in memory).
struct Counter(usize);
impl std::io::Write for Counter {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0 += b.len();
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
