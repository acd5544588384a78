//! Native benchmark of the timeline's level-of-detail build (views::timeline) on a generated
//! rank: `cargo run --profile bench-native --example timeline_bench -- DIR [WIDTH]` (DIR from
//! `anomaly_gen`, e.g. 1M kernels). Prints the index build time, then for width WIDTH
//! (default 1600) the time to build one `TimelineDto` at full zoom-out, while panning a
//! 10% window, and zoomed to 0.1%, with the box counts and the JSON size of one payload.

use std::ops::ControlFlow;
use std::time::Instant;

use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::{run, Plan};
use proflens::ingest::inventory::Inventory;
use proflens::views::timeline::{TimelineIndex, TimelineQuery};

/// CPU time of this thread (user + system), ms, from /proc (10 ms ticks): unlike wall time it
/// does not count the time other processes of a loaded machine take.
fn thread_cpu_ms() -> f64 {
    let s = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let after = s.rsplit_once(')').map(|x| x.1).unwrap_or("");
    let f: Vec<f64> = after
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    // Fields after the command: state(0, not a number), ..., utime = 14th, stime = 15th field.
    f.get(10)
        .zip(f.get(11))
        .map(|(u, s)| (u + s) * 10.0)
        .unwrap_or(f64::NAN)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("usage: timeline_bench DIR [WIDTH]");
    let width: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1600);
    let (opener, files) = FsOpener::walk(std::path::Path::new(&dir)).expect("walk");
    let mut inv = Inventory::from_paths(&files);
    proflens::parse::metadata::read_side_files(&mut inv, &opener);
    let t0 = Instant::now();
    let plan = Plan {
        anomaly: Some(AnomalyConfig::spec_defaults()),
        ..Plan::none()
    };
    let ranks = run(&inv, &opener, plan, &mut |_| ControlFlow::Continue(()))
        .take_anomaly()
        .expect("not cancelled");
    println!("analysis: {:.2} s", t0.elapsed().as_secs_f64());
    for r in &ranks {
        let src = proflens::engine::session::timeline::source(r);
        let t = Instant::now();
        let ix = TimelineIndex::new(src);
        println!(
            "{}: {} kernels, {} host events, {} lanes, {} bubbles; index {:.1} ms",
            r.dir_name,
            r.kernels.len(),
            r.trace.as_ref().map_or(0, |t| t.events().len()),
            ix.lane_count(),
            r.result.bubbles.len(),
            t.elapsed().as_secs_f64() * 1e3
        );
        let full = ix.build(
            src,
            0,
            &TimelineQuery {
                x_range_ms: None,
                width_px: width,
            },
        );
        let (f0, f1) = full.full_range_ms;
        let report = |what: &str, windows: Vec<Option<(f64, f64)>>| {
            let mut times = Vec::new();
            let mut boxes = 0usize;
            let mut items = 0u64;
            let mut bytes = 0usize;
            let mut cpu = 0.0;
            for w in &windows {
                let c0 = thread_cpu_ms();
                let q = TimelineQuery {
                    x_range_ms: *w,
                    width_px: width,
                };
                let t = Instant::now();
                let d = ix.build(src, 0, &q);
                times.push(t.elapsed().as_secs_f64() * 1e3);
                cpu += thread_cpu_ms() - c0;
                boxes = d.lanes.iter().map(|l| l.boxes.count.len()).sum();
                items = d.lanes.iter().map(|l| l.in_window).sum();
                bytes = serde_json::to_vec(&d).map(|v| v.len()).unwrap_or(0);
            }
            println!(
                "  {what:<20} wall median {:.2} ms, min {:.2} ms, max {:.2} ms; CPU {:.2} ms/build over {} builds; last: {items} items → {boxes} boxes, {} KB JSON",
                median(times.clone()),
                times.iter().cloned().fold(f64::INFINITY, f64::min),
                times.iter().cloned().fold(0.0, f64::max),
                cpu / windows.len() as f64,
                windows.len(),
                bytes / 1024
            );
        };
        report("full zoom-out", vec![None; 60]);
        let span = (f1 - f0) * 0.1;
        report(
            "pan, 10% window",
            (0..30)
                .map(|i| {
                    Some((
                        f0 + i as f64 * span * 0.3,
                        f0 + i as f64 * span * 0.3 + span,
                    ))
                })
                .collect(),
        );
        let span = (f1 - f0) * 0.001;
        report(
            "pan, 0.1% window",
            (0..30)
                .map(|i| {
                    Some((
                        f0 + (f1 - f0) * 0.5 + i as f64 * span * 0.3,
                        f0 + (f1 - f0) * 0.5 + i as f64 * span * 0.3 + span,
                    ))
                })
                .collect(),
        );
    }
}
