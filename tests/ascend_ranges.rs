//! One large `trace_view.json` read on several threads (formats.md §8.2): `proflens analyze`
//! (memory and anomaly), `anomaly` and `memory` (default and `--parity`) write the same bytes
//! with `--threads 1` and `--threads 4` on a generated torch_npu rank whose trace is cut into
//! ranges of 64 KiB (`PROFLENS_MIN_RANGE_BYTES`), plain, with `B`/`E` pairs and damaged
//! strings, with the parity index's stop in a later range, and with bytes after the array.

mod ranges_common;

use std::path::Path;

use ranges_common::{run, same_bytes, scratch};

use proflens::engine::synth::ascend::{
    memory_rng, profiler_info_json, write_anomaly_rank, write_memory_trace, write_operator_memory,
    AnomalySpec, MemoryTraceSpec,
};

/// A rank folder: the memory generator's trace (call stacks) and the anomaly generator's
/// (markers, device lanes, flows) joined in one `trace_view.json`, with `extra` events
/// after the first ones, `operator_memory.csv` and `kernel_details.csv`.
fn rank(dir: &Path, extra: &str) -> usize {
    let rd = dir.join("rank0_ascend_pt");
    let out = rd.join("ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(rd.join("profiler_info_0.json"), profiler_info_json(0)).unwrap();
    let mut rng = memory_rng(1);
    let (mut ops, mut mem) = (Vec::new(), Vec::new());
    let spec = MemoryTraceSpec {
        target_bytes: 700_000,
        rank: 0,
    };
    write_memory_trace(&mut mem, &spec, &mut rng, &mut ops).unwrap();
    let mut csv = Vec::new();
    write_operator_memory(&mut csv, 3000, &ops, &mut rng).unwrap();
    let (mut kd, mut tv) = (Vec::new(), Vec::new());
    let spec = AnomalySpec {
        kernels: 1500,
        steps: 3,
    };
    write_anomaly_rank(&mut kd, &mut tv, &spec).unwrap();
    // `[a…]` + `[b…]` → `[a…,extra,b…]`.
    let a = String::from_utf8(tv).unwrap();
    let b = String::from_utf8(mem).unwrap();
    let a = a.trim_end().strip_suffix(']').unwrap().trim_end();
    let b = b.trim_start().strip_prefix('[').unwrap();
    let joined = format!("{a},\n{extra}{b}");
    std::fs::write(out.join("trace_view.json"), &joined).unwrap();
    std::fs::write(out.join("operator_memory.csv"), csv).unwrap();
    std::fs::write(out.join("kernel_details.csv"), kd).unwrap();
    joined.len()
}

/// [`same_bytes`] and `proflens memory` (default and `--parity`, CSV and JSON) on `dir`: the
/// same stdout, stderr, exit code and files with `--threads 1` and `--threads 4`.
fn same_bytes_all(dir: &Path, name: &str) {
    same_bytes(dir, name);
    let d = dir.to_str().unwrap();
    for (k, args) in [
        ("mem", vec!["memory", d, "--out", "m.csv", "--quiet"]),
        ("memjson", vec!["memory", d, "--format", "json", "--quiet"]),
        (
            "par",
            vec!["memory", d, "--parity", "--out", "p.csv", "--quiet"],
        ),
    ] {
        let one = run(&args, 1, &dir.with_extension(format!("{k}1")));
        let four = run(&args, 4, &dir.with_extension(format!("{k}4")));
        assert_eq!(one.2, four.2, "{name} {k}: exit code");
        assert!(one.0 == four.0, "{name} {k}: stdout");
        assert_eq!(
            String::from_utf8_lossy(&one.1),
            String::from_utf8_lossy(&four.1),
            "{name} {k}: stderr"
        );
        assert!(one.3 == four.3, "{name} {k}: files");
        assert!(
            !(one.0.is_empty() && one.1.is_empty() && one.3.is_empty()),
            "{name} {k}: nothing written"
        );
    }
}

#[test]
fn one_rank_trace_on_four_threads_writes_the_same_bytes() {
    let dir = scratch("tv_ranges", "plain");
    let size = rank(&dir, "");
    assert!(size > 8 * 65536, "the trace is cut into ranges");
    same_bytes_all(&dir, "plain");

    // `B`/`E` pairs far apart (an `E` in a later range than its `B`), a bad `ts` and a
    // control byte in a name.
    let dir = scratch("tv_ranges", "begin_end");
    let mut extra = String::new();
    extra += "{\"ph\":\"B\",\"name\":\"ProfilerStep#9\",\"cat\":\"x\",\"pid\":7,\"tid\":1,\"ts\":\"1\"},\n";
    extra += "{\"ph\":\"B\",\"name\":\"outer\",\"cat\":\"x\",\"pid\":7,\"tid\":2,\"ts\":\"2\"},\n";
    extra += "{\"ph\":\"X\",\"name\":\"bad\u{1}\",\"cat\":\"cpu_op\",\"pid\":7,\"tid\":3,\"ts\":\"q\",\"dur\":1},\n";
    let size = rank(&dir, &extra);
    let tv = dir.join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
    let text = std::fs::read_to_string(&tv).unwrap();
    let t = text.trim_end().strip_suffix(']').unwrap().trim_end();
    let closing = "{\"ph\":\"E\",\"pid\":7,\"tid\":2,\"ts\":\"900000000\"},\n{\"ph\":\"E\",\"pid\":7,\"tid\":1,\"ts\":\"900000001\"}";
    std::fs::write(&tv, format!("{t},\n{closing}\n]\n")).unwrap();
    assert!(size > 8 * 65536);
    same_bytes_all(&dir, "begin_end");

    // A kept `cpu_op` (with a call stack) without a numeric `ts` past the middle: the parity
    // index stops there (`MEM-TV-003`, the rank fails), in a range after the first.
    let dir = scratch("tv_ranges", "parity_stop");
    rank(&dir, "");
    let tv = dir.join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
    let mut bytes = std::fs::read(&tv).unwrap();
    let mid = bytes.len() * 3 / 5;
    let at = mid + bytes[mid..].windows(2).position(|w| w == b"},").unwrap() + 2;
    let bad = b"\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"late\",\"pid\":1,\"tid\":1,\"ts\":\"q\",\"args\":{\"Call stack\":\"x.py(1): f\"}},";
    bytes.splice(at..at, bad.iter().copied());
    std::fs::write(&tv, bytes).unwrap();
    same_bytes_all(&dir, "parity_stop");

    // Bytes after an early end of the array: the cut read hands the file to one reader for
    // both consumers.
    let dir = scratch("tv_ranges", "garbage");
    rank(&dir, "");
    let tv = dir.join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
    let mut bytes = std::fs::read(&tv).unwrap();
    let mid = bytes.len() / 2;
    let at = mid + bytes[mid..].windows(2).position(|w| w == b"},").unwrap() + 2;
    bytes.splice(at..at, b"]]] ".iter().copied());
    std::fs::write(&tv, bytes).unwrap();
    same_bytes_all(&dir, "garbage");
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
fn spare_threads_go_to_the_one_large_rank_trace() {
    use proflens::engine::{parallel, Plan, Store};
    let dir = scratch("tv_ranges", "engine");
    rank(&dir, "");
    let mut m = proflens::ingest::MemOpener::new();
    for f in [
        "trace_view.json",
        "kernel_details.csv",
        "operator_memory.csv",
    ] {
        let p = dir.join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT").join(f);
        m.add(
            format!("run/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/{f}"),
            std::fs::read(p).unwrap(),
        );
    }
    let inv = proflens::ingest::inventory::Inventory::from_paths(&m.list());
    let opener = CountFrom(m, Default::default());
    // Both consumers of the trace planned: the ranges serve both.
    let plan = || Plan {
        anomaly: Some(proflens::analysis::anomaly_config::AnomalyConfig::spec_defaults()),
        memory: Some(Default::default()),
        ..Plan::none()
    };
    let progress =
        |_: &proflens::engine::contract::Progress<'_>| std::ops::ControlFlow::Continue(());
    let mut one = Store::new(plan());
    parallel::run_inventory_ranges(&mut one, &inv, &opener, 1, 65536, &progress);
    assert_eq!(opener.1.load(std::sync::atomic::Ordering::Relaxed), 0);
    let mut four = Store::new(plan());
    parallel::run_inventory_ranges(&mut four, &inv, &opener, 4, 65536, &progress);
    // Ranges 1–3 open the file at their guessed starts.
    assert!(opener.1.load(std::sync::atomic::Ordering::Relaxed) >= 3);
    let (a, b) = (one.anomaly_ranks().unwrap(), four.anomaly_ranks().unwrap());
    assert_eq!(a.len(), 1);
    assert!(a[0].result == b[0].result);
    assert_eq!(
        format!("{:?}", a[0].problems.kept()),
        format!("{:?}", b[0].problems.kept())
    );
    let (ma, mb) = (
        one.memory_run(&inv).unwrap(),
        four.memory_run(&inv).unwrap(),
    );
    assert!(!ma.0.ranks.is_empty() && ma.0.ranks[0].len() > 1000);
    assert_eq!(format!("{:?}", ma), format!("{:?}", mb));
}

/// A real rank (msinsight's level-1 capture: call stacks, kernels, `communication.json`,
/// `step_trace_time.csv`): with four threads its trace is read in ranges for both analyses and
/// the anomaly's side files run beside the memory matching, with the same bytes.
#[test]
fn a_real_rank_with_communication_files_writes_the_same_bytes() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1/rank0_ascend_pt",
    );
    if !src.is_dir() {
        eprintln!("skipped: no fixture at {}", src.display());
        return;
    }
    let dir = scratch("tv_ranges", "real");
    let out = dir.join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out).unwrap();
    for e in std::fs::read_dir(src.join("ASCEND_PROFILER_OUTPUT")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, out.join(p.file_name().unwrap())).unwrap();
    }
    for f in ["profiler_info_0.json", "profiler_metadata.json"] {
        std::fs::copy(src.join(f), dir.join("rank0_ascend_pt").join(f)).unwrap();
    }
    same_bytes_all(&dir, "real");
}
