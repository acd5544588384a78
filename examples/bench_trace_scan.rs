//! Native benchmark of the shared `trace_view.json` streaming path: splitter + key scan
//! of `cat`, counting `cpu_op` events. Usage: `cargo run --release --example
//! bench_trace_scan -- FILE [--rescan]`. Prints MB/s; measure peak RSS with
//! `/usr/bin/time -v`.
//! The key comes from the splitter's member index (`Event::fields_dup`, what the readers
//! use); `--rescan` reads it with `scan::fields` over the event bytes instead (the path
//! before the index).

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Instant;

use proflens::ingest::ChunkReader;
use proflens::parse::trace_json::{for_each_indexed_event, scan};

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: bench_trace_scan FILE");
    let f = std::fs::File::open(&path).expect("open");
    let size = f.metadata().map(|m| m.len()).ok();
    let mut rdr = ChunkReader::new(f, size);
    let file: Arc<str> = path.as_str().into();
    let t0 = Instant::now();
    let mut cpu_op = 0u64;
    let rescan = std::env::args().any(|a| a == "--rescan");
    let s = for_each_indexed_event(
        &mut rdr,
        &file,
        &mut |_| ControlFlow::Continue(()),
        &mut |ev, _| {
            let cat = match rescan {
                true => scan::fields(ev.bytes(), ["cat"]).and_then(|[c]| c),
                false => ev.fields_dup(["cat"]).and_then(|([c], _)| c),
            };
            cpu_op += (cat == Some(b"\"cpu_op\"")) as u64;
            ControlFlow::Continue(())
        },
    )
    .expect("scan");
    let secs = t0.elapsed().as_secs_f64();
    let mb = s.bytes as f64 / 1_048_576.0;
    println!(
        "{} events, {} cpu_op, {:.1} MB in {:.3} s = {:.0} MB/s",
        s.events,
        cpu_op,
        mb,
        secs,
        mb / secs
    );
}
