//! One large Kineto trace read on several threads (formats.md §8.2): `proflens anomaly` and
//! `proflens analyze` write the same bytes with `--threads 1` and `--threads 4`, on a
//! generated trace cut into ranges of 64 KiB (`PROFLENS_MIN_RANGE_BYTES`), plain and
//! pretty-printed; and several GPU ranks side by side.

mod ranges_common;

use ranges_common::{same_bytes, scratch};

use proflens::engine::synth::{write_kineto_trace, KinetoSpec};

#[test]
fn one_trace_on_four_threads_writes_the_same_bytes() {
    let dir = scratch("ranges", "plain");
    let mut v = Vec::new();
    let spec = KinetoSpec {
        kernels: 3000,
        steps: 6,
        rank: 2,
    };
    write_kineto_trace(&mut v, &spec).unwrap();
    assert!(v.len() > 4 * 65536, "the trace is cut into ranges");
    std::fs::write(dir.join("rank2.pt.trace.json"), &v).unwrap();
    same_bytes(&dir, "plain");

    // Pretty-printed, with a Windows path (a located problem) and a bad `ts`.
    let dir = scratch("ranges", "pretty");
    let mut j: serde_json::Value = serde_json::from_slice(&v).unwrap();
    let evs = j["traceEvents"].as_array_mut().unwrap();
    for (i, e) in evs.iter_mut().enumerate() {
        if i % 11 == 0 {
            e["args"]["extra"] = serde_json::json!([{"a": [{"b": 1}]}, {"c": 2}]);
        }
    }
    let mut text = serde_json::to_string_pretty(&j).unwrap();
    text = text.replacen(
        "\"name\": \"cudaLaunchKernel\"",
        "\"name\": \"C:\\path\\x\"",
        3,
    );
    text = text.replacen("\"ts\": ", "\"ts\": \"bad\", \"t0\": ", 2);
    std::fs::write(dir.join("rank2.pt.trace.json"), text).unwrap();
    same_bytes(&dir, "pretty");
}

/// Several GPU ranks on four threads: the ranks side by side, and `analyze` computes their
/// GPU summaries on the threads before writing (`export::gpu_report::warm_summaries`).
#[test]
fn several_gpu_ranks_on_four_threads_write_the_same_bytes() {
    let dir = scratch("ranges", "ranks");
    for rank in 0..3 {
        let mut v = Vec::new();
        let spec = KinetoSpec {
            kernels: 400 + 300 * rank,
            steps: 3 + rank,
            rank,
        };
        write_kineto_trace(&mut v, &spec).unwrap();
        std::fs::write(dir.join(format!("rank{rank}.pt.trace.json")), &v).unwrap();
    }
    same_bytes(&dir, "ranks");
}

/// Counts the opens at an offset (range readers) over a [`MemOpener`].
struct CountFrom(proflens::ingest::MemOpener, std::sync::atomic::AtomicUsize);

impl proflens::ingest::Opener for CountFrom {
    fn open(&self, path: &str) -> std::io::Result<Box<dyn std::io::Read + '_>> {
        self.0.open(path)
    }
    fn open_from(&self, path: &str, at: u64) -> std::io::Result<Box<dyn std::io::Read + '_>> {
        if at > 0 {
            self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.0.open_from(path, at)
    }
}

#[test]
fn spare_threads_go_to_the_one_large_trace() {
    use proflens::engine::{parallel, Plan, Store};
    let mut v = Vec::new();
    let spec = KinetoSpec {
        kernels: 2000,
        steps: 4,
        rank: 0,
    };
    write_kineto_trace(&mut v, &spec).unwrap();
    let mut m = proflens::ingest::MemOpener::new();
    m.add("run/rank0.pt.trace.json", v);
    let inv = proflens::ingest::inventory::Inventory::from_paths(&m.list());
    let opener = CountFrom(m, Default::default());
    let plan = || Plan {
        anomaly: Some(proflens::analysis::anomaly_config::AnomalyConfig::spec_defaults()),
        ..Plan::none()
    };
    let progress =
        |_: &proflens::engine::contract::Progress<'_>| std::ops::ControlFlow::Continue(());
    let mut one = Store::new(plan());
    parallel::run_inventory_ranges(&mut one, &inv, &opener, 1, 65536, &progress);
    assert_eq!(opener.1.load(std::sync::atomic::Ordering::Relaxed), 0);
    let mut four = Store::new(plan());
    parallel::run_inventory_ranges(&mut four, &inv, &opener, 4, 65536, &progress);
    // Ranges 1–3 open the file at their guessed starts (and their guesses read at offsets).
    assert!(opener.1.load(std::sync::atomic::Ordering::Relaxed) >= 3);
    let (a, b) = (one.anomaly_ranks().unwrap(), four.anomaly_ranks().unwrap());
    assert_eq!(a.len(), 1);
    assert!(a[0].result == b[0].result);
    assert_eq!(
        format!("{:?}", a[0].problems.kept()),
        format!("{:?}", b[0].problems.kept())
    );
}
