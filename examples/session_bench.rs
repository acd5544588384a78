//! Native benchmark of the worker path: the same `Session` the browser worker runs (`Open`,
//! then `Run` of one analysis, or of every analysis (`all`, what a drop runs), over every
//! target), over the fs opener instead of `File`
//! slices. Compare with `tests/e2e/bench.mjs` on the same folder to see the browser's own cost.
//!
//! Usage: `cargo run --release --example session_bench -- <folder> [memory|anomaly|snapshot|all]`
//! Prints input MB, wall seconds, MB/s and peak RSS (VmHWM).

use std::time::Instant;

use proflens::cli::fs_opener::FsOpener;
use proflens::protocol::{AnalysisKind, FileMeta};

#[path = "common/drop.rs"]
mod drop;

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            l.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .unwrap_or(0.0)
        / 1024.0
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args
        .first()
        .expect("usage: session_bench <folder> [memory|anomaly|snapshot|all]");
    let which = args.get(1).map(String::as_str).unwrap_or("memory");
    let analyses = match which {
        "anomaly" => vec![AnalysisKind::Anomaly],
        "snapshot" => vec![AnalysisKind::Snapshot],
        "all" => AnalysisKind::ALL.to_vec(),
        _ => vec![AnalysisKind::Memory],
    };
    let (opener, files) = FsOpener::walk(std::path::Path::new(dir)).expect("readable folder");
    let bytes: u64 = files.iter().map(|f| f.size).sum();
    let metas: Vec<FileMeta> = files
        .iter()
        .map(|f| FileMeta {
            path: f.path.clone(),
            size: f.size,
        })
        .collect();
    let t0 = Instant::now();
    let sink = drop::run(&opener, metas, analyses);
    let s = t0.elapsed().as_secs_f64();
    let mb = bytes as f64 / 1048576.0;
    println!(
        "{which}: {mb:.1} MB in {s:.3} s = {:.1} MB/s, {} target(s) done, peak RSS {:.0} MB",
        mb / s,
        sink.done,
        peak_rss_mb()
    );
    for f in &sink.failed {
        println!("failed: {f}");
    }
}
