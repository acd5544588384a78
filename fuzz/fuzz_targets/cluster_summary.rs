//! A cluster summary file as the page opens it (src/parse/cluster_summary.rs head sniff,
//! src/engine/session/cluster.rs: gzip sniffed and inflated as a stream, serde over a
//! buffer, the version/format checks, then src/views/cluster.rs builds the page's payload),
//! and `ClusterSummary::from_slice` (the CLI's `reduce` reads summaries with it).
//!
//! Input: the bytes of one summary file (plain JSON or gzip).
#![no_main]

use libfuzzer_sys::fuzz_target;
use proflens::base::Problems;
use proflens::engine::session::cluster::read;
use proflens::ingest::summary_file::{SummaryFile, SummaryHead};
use proflens::ingest::MemOpener;
use proflens::parse::cluster_summary::head;
use proflens::protocol::cluster::ClusterSummary;
use proflens_fuzz::render_problems;

fuzz_target!(|data: &[u8]| {
    let gz = data.starts_with(&[0x1f, 0x8b]);
    let path = if gz { "run/cluster.json.gz" } else { "run/cluster.json" };
    let mut o = MemOpener::new();
    o.add(path, data);
    // A gzip file's head is read after inflating; take it as version 1 so the body is read.
    let head = if gz { Some(SummaryHead { version: 1 }) } else { head(data) };
    let file = SummaryFile {
        path: path.to_string(),
        size: data.len() as u64,
        head: head.unwrap_or(SummaryHead { version: 1 }),
    };
    let mut problems = Problems::new();
    match read(&file, &o, &mut problems) {
        Ok(view) => {
            serde_json::to_vec(&view).expect("the view serialises");
        }
        Err(why) => assert!(!why.is_empty()),
    }
    render_problems(&problems);
    if let Ok(s) = ClusterSummary::from_slice(data) {
        let back = serde_json::to_vec(&s).expect("a summary serialises");
        ClusterSummary::from_slice(&back).expect("a written summary reads back");
    }
});
