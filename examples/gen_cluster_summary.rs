//! Generator of an N-rank cluster summary for the page's cluster view and its
//! tests: `cargo run --release --example gen_cluster_summary -- --ranks N --steps S --out F
//! [--straggler RANK] [--gzip]`.
//!
//! Builds N Ascend rank summaries (`protocol::cluster::RankSummary`) with S steps each —
//! service ~100 ms with a deterministic per-rank and per-step jitter (fixed LCG seed), a
//! busy union, bubbles, underfeed — where rank `--straggler` (default N / 3, `-1`: none) has
//! 30 % longer steps (its kernels longer: busy union and service grow together), then runs
//! them through the same reduce as `proflens reduce` (`engine::export::cluster::reduce::Reducer`), so
//! the file is what the CLI writes: cross-rank table, slow ranks, matrices, outliers.
//! Deterministic: the same arguments give the same bytes. Never commit the output.

use std::io::Write;

use proflens::engine::export::cluster::reduce::Reducer;
use proflens::engine::synth::XorShift;
use proflens::protocol::cluster::{
    AnomalySummary, BubbleSummary, RankStatus, RankSummary, RunInfo, StepSummary, TargetKind,
};

mod common;

/// Uniform in [0, 1).
fn unit(rng: &mut XorShift) -> f64 {
    (rng.next_u64() % 1_000_000) as f64 / 1e6
}

/// A value rounded to µs in ms (the anomaly JSON's `_ms` values are exact µs / 1000).
fn ms(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn rank(r: u64, steps: u64, slow: bool, lcg: &mut XorShift) -> RankSummary {
    let base = 100.0 + 4.0 * unit(lcg);
    let scale = if slow { 1.3 } else { 1.0 };
    let mut out = Vec::new();
    let mut bubbles = Vec::new();
    let mut t_us = 1_700_000_000_000_000.0 + r as f64 * 17.0;
    for s in 0..steps {
        let busy = ms((base * 0.7 + 3.0 * unit(lcg)) * scale);
        let prelaunch = ms(5.0 + 2.0 * unit(lcg));
        let tail = ms(0.5 * unit(lcg));
        let internal = ms(base * 0.3 - prelaunch - tail + 2.0 * unit(lcg));
        let service = ms(busy + prelaunch + tail + internal);
        let underfeed = ms(service - busy);
        let bubble_count = 80 + lcg.below(20);
        let largest = ms(internal / bubble_count as f64 * (2.0 + unit(lcg)));
        let step_id = format!("ProfilerStep#{}", 50 + s);
        bubbles.push(BubbleSummary {
            step_id: step_id.clone(),
            scope: "prelaunch".into(),
            start_us: t_us,
            end_us: t_us + prelaunch * 1000.0,
            duration_ms: prelaunch,
            labels: vec!["possible_untraced_host_blocking".into()],
        });
        t_us += service * 1000.0;
        out.push(StepSummary {
            step_id,
            service_ms: service,
            device_busy_union_ms: busy,
            underfeed_ms: underfeed,
            underfeed_ratio: underfeed / service,
            prelaunch_gap_ms: prelaunch,
            tail_gap_ms: tail,
            internal_bubble_total_ms: internal,
            largest_internal_bubble_ms: largest,
            bubble_count,
            total_kernel_count: 191,
            kernel_duration_sum_ms: ms(busy * 1.05),
            tags: vec![],
            labels: vec![],
        });
    }
    let n = out.len().max(1) as f64;
    let avg = |f: fn(&StepSummary) -> f64| out.iter().map(f).sum::<f64>() / n;
    let anomaly = AnomalySummary {
        step_count: steps,
        service_ms_avg: avg(|s| s.service_ms),
        busy_union_ms_avg: avg(|s| s.device_busy_union_ms),
        underfeed_ratio_avg: avg(|s| s.underfeed_ratio),
        comm_total_ms: ms(10.0 + unit(lcg)),
        comm_wait_ratio_weighted: Some(0.1 + 0.1 * unit(lcg)),
        bubble_count_avg: avg(|s| s.bubble_count as f64),
        dominant_idle_pattern: "prelaunch_dominant".into(),
        dominant_anomaly_tags: vec![],
    };
    bubbles.sort_by(|a, b| b.duration_ms.total_cmp(&a.duration_ms));
    let kept = bubbles.len().min(10);
    let dir = format!("/data/run/rank{r}_ascend_pt");
    let mut s = RankSummary::new(dir.clone(), TargetKind::Ascend, dir);
    s.rank_id = Some(r as i64);
    s.status = RankStatus::Ok;
    s.bytes_read = 1 << 30;
    s.analysis_s = 1.0;
    s.steps = out;
    s.anomaly = Some(anomaly);
    s.top_bubbles_dropped = (bubbles.len() - kept) as u64;
    s.top_bubbles = bubbles.into_iter().take(kept).collect();
    s
}

fn main() {
    common::exit_on_help(
        "gen_cluster_summary --ranks N --steps S --out F [--straggler RANK] [--gzip]",
    );
    let mut ranks = 64u64;
    let mut steps = 8u64;
    let mut out: Option<String> = None;
    let mut straggler: Option<i64> = None;
    let mut gzip = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = |name: &str| {
            args.next()
                .unwrap_or_else(|| panic!("{name} needs a value"))
        };
        match a.as_str() {
            "--ranks" => ranks = val("--ranks").parse().expect("--ranks N"),
            "--steps" => steps = val("--steps").parse().expect("--steps S"),
            "--out" => out = Some(val("--out")),
            "--straggler" => straggler = Some(val("--straggler").parse().expect("--straggler RANK")),
            "--gzip" => gzip = true,
            other => panic!("unknown argument {other}; usage: --ranks N --steps S --out F [--straggler RANK] [--gzip]"),
        }
    }
    let out = out.expect("--out F is required");
    let straggler = straggler.unwrap_or((ranks / 3) as i64);
    let mut lcg = XorShift(0x005e_edc1_u64);
    let mut red = Reducer::new();
    for r in 0..ranks {
        let s = rank(r, steps, r as i64 == straggler, &mut lcg);
        red.push(s, "gen_cluster_summary", "");
    }
    let summary = red.finish(
        vec!["/data/run".into()],
        RunInfo {
            mode: "cli".into(),
            tasks: ranks,
            wall_s: None,
        },
    );
    let f = std::fs::File::create(&out).unwrap_or_else(|e| panic!("cannot create {out}: {e}"));
    let mut w = std::io::BufWriter::new(f);
    if gzip {
        let mut z = flate2::write::GzEncoder::new(&mut w, flate2::Compression::default());
        serde_json::to_writer(&mut z, &summary).expect("write");
        z.finish().expect("write");
    } else {
        serde_json::to_writer(&mut w, &summary).expect("write");
    }
    w.flush().expect("flush");
    eprintln!(
        "wrote {out}: {} ranks × {} steps, slow ranks {:?}",
        summary.rank_count, steps, summary.slow_ranks
    );
}
