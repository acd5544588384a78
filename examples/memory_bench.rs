//! Native benchmark of the memory pipeline (performance): trace_view.json
//! filtering MB/s, operator_memory.csv rows/s, the whole analysis + CSV export, and peak
//! RSS (`VmHWM`). Inputs come from `examples/memory_gen.rs`.
//!
//! ```text
//! cargo run --release --example memory_gen -- DIR/memgen --trace-mb 200 --rows 1000000
//! cargo run --release --example memory_bench -- DIR/memgen/gen_run/rank0_ascend_pt
//! ```
//! Run each stage alone (`--stage split|trace|csv|all`) to get its own peak RSS.

use std::fs::File;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Instant;

use proflens::base::Problems;
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::read::memory::MemoryOptions;
use proflens::engine::{run, Plan};
use proflens::ingest::inventory::Inventory;
use proflens::ingest::ChunkReader;
use proflens::model::memory_events::MemoryEventTable;
use proflens::model::stacks::StackPool;
use proflens::model::strings::StringPool;
use proflens::parse::csv::operator_memory::{self, CsvMode};
use proflens::parse::metadata::read_side_files;
use proflens::parse::trace_json::call_stack_index::{read_host_ops, TraceMode};
use proflens::parse::trace_json::for_each_event;
use proflens::report::memory_rows::{write_csv, Columns};

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| {
                l.split_whitespace()
                    .nth(1)
                    .unwrap_or("0")
                    .parse::<f64>()
                    .unwrap_or(0.0)
            })
        })
        .unwrap_or(0.0)
        / 1024.0
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args
        .first()
        .expect("usage: memory_bench <rank folder> [--stage split|trace|csv|all]")
        .clone();
    let stage = args
        .iter()
        .position(|a| a == "--stage")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
        .unwrap_or("each");
    let tv = format!("{dir}/ASCEND_PROFILER_OUTPUT/trace_view.json");
    let om = format!("{dir}/ASCEND_PROFILER_OUTPUT/operator_memory.csv");
    let tv_mb = std::fs::metadata(&tv).map(|m| m.len()).unwrap_or(0) as f64 / 1048576.0;
    let om_mb = std::fs::metadata(&om).map(|m| m.len()).unwrap_or(0) as f64 / 1048576.0;
    let file: Arc<str> = "trace_view.json".into();
    if stage == "split" || stage == "each" {
        let t0 = Instant::now();
        let mut rdr = ChunkReader::new(File::open(&tv).unwrap(), None);
        let mut n = 0u64;
        let scan = for_each_event(
            &mut rdr,
            &file,
            &mut |_| ControlFlow::Continue(()),
            &mut |_, _| {
                n += 1;
                ControlFlow::Continue(())
            },
        )
        .unwrap();
        let s = t0.elapsed().as_secs_f64();
        println!("split only:        {tv_mb:8.1} MB, {} events in {s:.3} s = {:7.1} MB/s (peak RSS {:.0} MB)", scan.events, tv_mb / s, peak_rss_mb());
    }
    if stage == "trace" || stage == "each" {
        let t0 = Instant::now();
        let mut rdr = ChunkReader::new(File::open(&tv).unwrap(), None);
        let (mut strings, mut stacks, mut p) =
            (StringPool::new(), StackPool::new(), Problems::new());
        let (host, st) = read_host_ops(
            &mut rdr,
            "trace_view.json",
            TraceMode::Default,
            &mut strings,
            &mut stacks,
            &mut p,
            &mut |_| ControlFlow::Continue(()),
        )
        .unwrap();
        let s = t0.elapsed().as_secs_f64();
        println!("trace filter:      {tv_mb:8.1} MB, {} cpu_op kept ({} with stack, {} stacks) in {s:.3} s = {:7.1} MB/s (peak RSS {:.0} MB)", st.cpu_ops, st.with_stack, stacks.len(), tv_mb / s, peak_rss_mb());
        drop(host);
    }
    if stage == "csv" || stage == "each" {
        let t0 = Instant::now();
        let (mut strings, mut t, mut p) =
            (StringPool::new(), MemoryEventTable::new(), Problems::new());
        operator_memory::read(
            &mut File::open(&om).unwrap(),
            "operator_memory.csv",
            None,
            CsvMode::Default,
            &mut strings,
            &mut t,
            &mut p,
            &mut |_| ControlFlow::Continue(()),
        )
        .unwrap();
        let s = t0.elapsed().as_secs_f64();
        println!("operator_memory:   {om_mb:8.1} MB, {} rows in {s:.3} s = {:7.1} MB/s, {:.0} krows/s (peak RSS {:.0} MB)", t.len(), om_mb / s, t.len() as f64 / s / 1000.0, peak_rss_mb());
    }
    if stage == "all" || stage == "each" {
        let t0 = Instant::now();
        let (opener, files) = FsOpener::walk(std::path::Path::new(&dir)).unwrap();
        let mut inv = Inventory::from_paths(&files);
        read_side_files(&mut inv, &opener);
        let plan = Plan {
            memory: Some(MemoryOptions::default()),
            ..Plan::none()
        };
        let (run, _) = run(&inv, &opener, plan, &mut |_| ControlFlow::Continue(()))
            .memory_run(&inv)
            .expect("memory planned");
        let s1 = t0.elapsed().as_secs_f64();
        let mut sink = std::io::sink();
        write_csv(&run, Columns::Full, &mut sink).unwrap();
        let s2 = t0.elapsed().as_secs_f64();
        println!("whole analysis:    {:8.1} MB in {s1:.3} s = {:7.1} MB/s; + CSV export of {} rows: {:.3} s (peak RSS {:.0} MB)", tv_mb + om_mb, (tv_mb + om_mb) / s1, run.len(), s2 - s1, peak_rss_mb());
    }
}
