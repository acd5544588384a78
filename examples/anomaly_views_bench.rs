//! Native benchmark of the steps / bubbles view queries on a large rank: after
//! the analysis, times each `AnomalyQuery` the page sends (summary, step table, bubble pages
//! sorted / filtered over every emitted window, one bubble, the structure tree, op tables) and
//! the per-rank exports. `cargo run --profile bench-native --example anomaly_views_bench -- DIR`
//! (DIR from `examples/anomaly_gen`). Prints milliseconds per query and peak RSS.

use std::time::Instant;

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::contract::{no_progress, AnalysisKind, Target};
use proflens::engine::session::anomaly::{query, summary_of};
use proflens::engine::session::Session;
use proflens::engine::store::Store;
use proflens::ingest::inventory::Inventory;
use proflens::protocol::anomaly::{AnomalyQuery, BubbleColumn, BubbleQuery};

fn peak_rss_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: anomaly_views_bench DIR");
    let (opener, files) = FsOpener::walk(std::path::Path::new(&dir)).expect("walk");
    let mut inv = Inventory::from_paths(&files);
    proflens::parse::metadata::read_side_files(&mut inv, &opener);
    let t = Instant::now();
    let mut st = Store::new(Session::plan().only(&[AnalysisKind::Anomaly]));
    let mut summaries = Vec::new();
    for (i, f) in inv.ranks.iter().enumerate() {
        st.run_target(&inv, Target::Rank(i as u32), &opener, &mut no_progress);
        if let Some(a) = st.anomaly(i as u32) {
            summaries.push(summary_of(i as u32, f, a));
        }
    }
    println!("analysis + summary: {:.2} s", t.elapsed().as_secs_f64());
    let s = summaries.first().expect("one rank").clone();
    println!(
        "rank: {} kernels, {} steps, {} emitted bubble windows",
        s.kernels, s.steps, s.bubbles
    );
    let time = |what: &str, q: AnomalyQuery| {
        let t = Instant::now();
        let n = 5;
        for _ in 0..n {
            query(&st, &q).expect("query");
        }
        println!(
            "{what}: {:.2} ms",
            t.elapsed().as_secs_f64() * 1000.0 / n as f64
        );
    };
    let rank = s.rank;
    time("steps table", AnomalyQuery::Steps { rank });
    let page = |sort, descending, label: &str| {
        AnomalyQuery::Bubbles(BubbleQuery {
            rank,
            sort,
            descending,
            label: label.into(),
            scope: String::new(),
            step: None,
            offset: 0,
            limit: 50,
        })
    };
    time(
        "bubble page, output order",
        page(BubbleColumn::Order, false, ""),
    );
    time(
        "bubble page, sorted by duration",
        page(BubbleColumn::Duration, true, ""),
    );
    time(
        "bubble page, label filter + host sort",
        page(BubbleColumn::Host, true, "possible_host_launch_lag"),
    );
    time("one bubble", AnomalyQuery::Bubble { rank, index: 0 });
    time(
        "structure tree of step 0",
        AnomalyQuery::Structure { rank, step: 0 },
    );
    time("op tables", AnomalyQuery::Ops { rank });
    if let Some(mb) = peak_rss_mb() {
        println!("peak RSS: {mb:.0} MB");
    }
}
