//! Native benchmark of the snapshot pipeline: decode + full analysis of one pickle.
//!
//! ```text
//! cargo run --release --example snapshot_gen -- /tmp/snap_big.pickle 1500000
//! /usr/bin/time -v target/release/examples/snapshot_bench /tmp/snap_big.pickle
//! python3 tests/reference/snapshot_pickle_load.py /tmp/snap_big.pickle   # CPython pickle.load, for comparison
//! ```
//!
//! Prints decode and analysis time, MB/s (file MiB / wall seconds) and the
//! process's peak RSS (`VmHWM`), which `/usr/bin/time -v` confirms.

use std::fs::File;
use std::io::BufReader;
use std::ops::ControlFlow;
use std::time::Instant;

use proflens::analysis::snapshot::device::{analyze, AnalysisOptions};
use proflens::parse::pickle::read_snapshot;

fn vm_hwm_kb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/tmp/proflens_snapshot_big.pickle".into());
    let size = std::fs::metadata(&path).expect("input file").len();
    let mb = size as f64 / 1048576.0;
    let t0 = Instant::now();
    let mut src = BufReader::with_capacity(1 << 16, File::open(&path).expect("open"));
    let decoded = read_snapshot(&path, &mut src, Some(size), &mut |_| {
        ControlFlow::Continue(())
    })
    .expect("decode");
    let t_decode = t0.elapsed().as_secs_f64();
    let snap = decoded.snapshot;
    let entries: usize = snap.devices.iter().map(|d| d.entries.len()).sum();
    let rss_decode = vm_hwm_kb();
    let t1 = Instant::now();
    let opts = AnalysisOptions::spec_defaults();
    let mut points = 0;
    for dev in snap.devices.iter().filter(|d| !d.entries.is_empty()) {
        let a = analyze(&snap, dev, &opts);
        points += a.points.len();
    }
    let t_analysis = t1.elapsed().as_secs_f64();
    let total = t_decode + t_analysis;
    println!(
        "file: {path} ({mb:.1} MiB, {entries} entries, {} stacks, {} frames)",
        snap.pools.stacks.len(),
        snap.pools.frames.len()
    );
    println!("decode: {t_decode:.3} s ({:.0} MiB/s)", mb / t_decode);
    println!("analysis: {t_analysis:.3} s ({points} points)");
    println!("decode+analysis: {total:.3} s ({:.0} MiB/s)", mb / total);
    if let (Some(d), Some(p)) = (rss_decode, vm_hwm_kb()) {
        println!(
            "peak RSS after decode: {:.1} MiB; overall: {:.1} MiB ({:.2}× file size)",
            d as f64 / 1024.0,
            p as f64 / 1024.0,
            p as f64 * 1024.0 / size as f64
        );
    }
}
