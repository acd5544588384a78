//! Native benchmark of the snapshot pipeline: decode + full analysis of one pickle.
//!
//! ```text
//! cargo run --release --example snapshot_gen -- DIR/snap_big.pickle 1500000
//! /usr/bin/time -v target/release/examples/snapshot_bench DIR/snap_big.pickle
//! python3 tests/reference/snapshot_pickle_load.py DIR/snap_big.pickle   # CPython pickle.load, for comparison
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
    if std::env::args().any(|a| a == "--views") {
        views(&path, size, snap);
    }
    if let (Some(d), Some(p)) = (rss_decode, vm_hwm_kb()) {
        println!(
            "peak RSS after decode: {:.1} MiB; overall: {:.1} MiB ({:.2}× file size)",
            d as f64 / 1024.0,
            p as f64 / 1024.0,
            p as f64 * 1024.0 / size as f64
        );
    }
}

/// The snapshot tab's queries on the whole file: curve (1000 columns, both axes), live set at
/// 50 entries spread over the trace (each a full pass over the lifetime table), summary.
fn views(path: &str, size: u64, snap: proflens::model::snapshot::Snapshot) {
    use proflens::engine::read::snapshot::{analyse, SnapshotOptions};
    use proflens::engine::session::snapshot_view::SnapshotView;
    use proflens::ingest::InputFile;
    use proflens::protocol::snapshot::{
        SnapAxis, SnapCurveQuery, SnapLiveQuery, SnapshotSettingsDto,
    };
    let settings = SnapshotSettingsDto::default();
    let opts = SnapshotOptions::from_settings(&settings).expect("defaults");
    let file = InputFile {
        path: path.to_string(),
        size,
    };
    let run = analyse(&file, snap, proflens::base::Problems::new(), &opts);
    let n = run.devices.first().map_or(0, |d| d.n_entries);
    let records = run.devices.first().map_or(0, |d| d.lifetimes.len());
    let t = Instant::now();
    let v = SnapshotView::from_parts(0, run, settings, opts);
    println!(
        "view made (allocator history built): {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    // The summary is asked once per drop and again after every settings change: 21 calls,
    // the first reported alone, then the median and minimum of the other 20.
    let t = Instant::now();
    let s = v.summary();
    let first = t.elapsed().as_secs_f64() * 1e3;
    let mut ms: Vec<f64> = (0..20)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(v.summary());
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    println!(
        "view summary: first {first:.2} ms, then median {:.2} ms, min {:.2} ms (20 calls)",
        ms[10], ms[0]
    );
    for axis in [SnapAxis::Index, SnapAxis::Time] {
        let t = Instant::now();
        let c = v
            .data()
            .curve(&SnapCurveQuery {
                target: 0,
                slot: 0,
                axis,
                range: None,
                width_px: 1000,
            })
            .expect("curve");
        println!(
            "view curve {axis:?} (1000 columns, {} entries): {:.1} ms",
            c.entries_in_window,
            t.elapsed().as_secs_f64() * 1e3
        );
    }
    let k = 50;
    let t = Instant::now();
    let mut live = 0;
    for j in 0..k {
        let x = (n as f64 - 1.0) * j as f64 / (k - 1) as f64;
        let l = v
            .data()
            .live_at(&SnapLiveQuery {
                target: 0,
                slot: 0,
                axis: SnapAxis::Index,
                x,
                limit: 200,
            })
            .expect("live");
        live += l.live_tensors;
    }
    println!(
        "view live_at: {:.1} ms per click ({n} entries, {records} records, {:.0} live tensors on average, {} devices)",
        t.elapsed().as_secs_f64() * 1e3 / k as f64,
        live as f64 / k as f64,
        s.devices.len()
    );
    // The allocator state (segment map, fragmentation, entry list) at the same 50 entries,
    // and at the worst case of a checkpoint interval: just after a checkpoint.
    let t = Instant::now();
    let (mut blocks, mut worst) = (0usize, 0f64);
    for j in 0..k {
        let index = ((n as f64 - 1.0) * j as f64 / (k - 1) as f64) as u32;
        let t1 = Instant::now();
        let a = v
            .data()
            .allocator(&proflens::protocol::SnapAllocatorQuery {
                target: 0,
                slot: 0,
                index: Some(index),
                context: 8,
            })
            .expect("allocator");
        worst = worst.max(t1.elapsed().as_secs_f64());
        blocks += a.segments.iter().map(|s| s.blocks.len()).sum::<usize>();
    }
    println!(
        "view allocator: {:.1} ms per click, worst {:.1} ms ({:.0} blocks in the map on average)",
        t.elapsed().as_secs_f64() * 1e3 / k as f64,
        worst * 1e3,
        blocks as f64 / k as f64
    );
    // The stacked chart (Active Memory Timeline) as the page asks for it: 1400 × 230 device
    // pixels, full range and windows of 10 % and 0.1 % of the entries.
    for frac in [1.0, 0.1, 0.001] {
        let span = n as f64 * frac;
        let x0 = (n as f64 - span) / 2.0;
        let t = Instant::now();
        let b = v
            .data()
            .bands(&proflens::protocol::snapshot::SnapBandsQuery {
                target: 0,
                slot: 0,
                axis: SnapAxis::Index,
                range: (frac < 1.0).then_some((x0, x0 + span)),
                width_px: 1400,
                height_px: 230,
            })
            .expect("bands");
        let cells: usize = b
            .bands
            .iter()
            .map(|b| b.runs.iter().map(|r| r.0 as usize).sum::<usize>())
            .sum();
        println!(
            "view bands ({:.1} % of entries, 1400 columns): {:.1} ms ({} bands, {} runs, {cells} band cells, {} records in view)",
            frac * 100.0,
            t.elapsed().as_secs_f64() * 1e3,
            b.bands.len(),
            b.bands.iter().map(|b| b.runs.len()).sum::<usize>(),
            b.records_in_view
        );
    }
}
