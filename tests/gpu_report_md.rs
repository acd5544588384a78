//! The GPU section of the Markdown report, the kernel-table CSV (`kernels_*.csv`) and the
//! cross-rank rules grouped by role, through `proflens anomaly --report-dir` on real traces
//! (reporting side).
//!
//! Where the expected values come from:
//! * `gpu_time_breakdown` / `idle_by_stream`: HTA 0.5.0's own numbers (gpu-traces.md §4 for
//!   ns_resolution; `tests/gpu_anomaly_json.rs` for the trace_filter pair); the percentages
//!   are those integers divided by the span (python: 328671 / 600674 = 54.7170 %, …).
//! * kernel categories, top kernels, the kernel table and the straggler rows: an independent
//!   Python reading of the gzip'd traces, `tests/reference/gpu_report_ref.py` (`json` with
//!   `Decimal`, device ops = `ph: X` events of `cat` kernel / gpu_memcpy / gpu_memset,
//!   communication = `re.match("nccl.*Kernel")`, memory = memcpy/memset events, Σ / union / max
//!   per name, span = last end − first start; collectives matched by order and name at epoch
//!   `baseTimeNanoseconds + ts`), run by hand while writing this test (not run by it).
//! * the role-grouped robust z: the service_ms_avg of each rank (the JSON's steps) through
//!   `gpu_report_ref.py robustz` (`(x − median) / (1.4826 · MAD)`), per role and over all.

use std::path::{Path, PathBuf};
use std::process::Command;

const HTA: &str = "../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data";

fn run_reports(folder: &Path, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("proflens_gpu_md_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(["anomaly"])
        .arg(folder)
        .arg("--report-dir")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}: {:?}", folder.display(), out);
    dir
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The lines of section `## <title>` (up to the next `## `).
fn section<'a>(md: &'a str, title: &str) -> Vec<&'a str> {
    let mut lines = md.lines().skip_while(|l| *l != title);
    let mut out: Vec<&str> = lines.next().into_iter().collect();
    out.extend(lines.take_while(|l| !l.starts_with("## ")));
    out
}

fn has(lines: &[&str], want: &str) {
    assert!(
        lines.contains(&want),
        "missing line {want:?} in\n{}",
        lines.join("\n")
    );
}

#[test]
fn gpu_section_of_the_trace_filter_pair() {
    let dir = run_reports(&Path::new(HTA).join("trace_filter"), "tf");
    let md = read(&dir.join("anomaly_report_trace_filter_rank1.md"));
    let g = section(&md, "## GPU (PyTorch profiler trace)");
    assert!(g.len() > 1, "no GPU section in\n{md}");
    has(&g, "| span | 600674 | 100.00 % |");
    has(&g, "| idle | 328671 | 54.72 % |");
    has(&g, "| compute | 135548 | 22.57 % |");
    has(&g, "| non-compute | 136455 | 22.72 % |");
    for row in [
        "| 7 | 156827 | 1816 | 281064 |",
        "| 23 | 596313 | 100 | 0 |",
        "| 25 | — | 9 | 53028 |",
        "| 84 | 251860 | — | 23247 |",
        "| 203 | — | — | 0 |",
    ] {
        has(&g, row);
    }
    has(&g, "| compute | 1094 | 271973.000 | 271973.000 | 40.74 % |");
    has(
        &g,
        "| communication | 10 | 379053.000 | 379053.000 | 56.78 % |",
    );
    has(&g, "| memory | 50 | 16504.000 | 16504.000 | 2.47 % |");
    has(&g, "### Top kernels by time (20 of 188 names)");
    has(
        &g,
        "| `ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)` | communication | 10 | 379053.000 | 56.78 % |",
    );
    has(
        &g,
        "| `Memcpy HtoD (Pinned -> Device)` | memory | 8 | 12082.000 | 1.81 % |",
    );
    // Straggler table: one view over both ranks (one role), rank 1 marked.
    has(&g, "| 0 | 2 | 13216.600 | 92521.000 |  |");
    has(
        &g,
        "| 1 (this rank) | 8 | 38132.900 | 164191.000 | **straggler** |",
    );
    // Rank 0's report marks its own row; the section sits before the cross-rank table.
    let md0 = read(&dir.join("anomaly_report_trace_filter_rank0.md"));
    let g0 = section(&md0, "## GPU (PyTorch profiler trace)");
    has(&g0, "| 0 (this rank) | 2 | 13216.600 | 92521.000 |  |");
    has(
        &g0,
        "| compute | 1144 | 210320.000 | 210320.000 | 34.60 % |",
    );
    assert!(md0.find("## GPU (").unwrap() < md0.find("## Across ranks").unwrap());
    // The kernel table of rank 1 next to the reports.
    let csv = read(&dir.join("kernels_trace_filter_rank1.csv"));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "name,category,streams,count,total_us,mean_us,max_us,share_of_span"
    );
    assert_eq!(lines.len(), 1 + 188);
    assert_eq!(
        lines[1],
        "\"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)\",communication,84;203,10,379053.000,37905.300,90771.000,0.30787630788524234"
    );
    assert_eq!(
        lines[5],
        "Memcpy HtoD (Pinned -> Device),memory,25,8,12082.000,1510.250,11387.000,0.009813301970620199"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// ns_resolution: fractional µs, exact from the integer ns; one rank (no suffix), no straggler
/// table, no cross-rank table.
#[test]
fn gpu_section_and_kernel_table_at_ns_resolution() {
    let dir = run_reports(&Path::new(HTA).join("ns_resolution_trace"), "ns");
    let md = read(&dir.join("anomaly_report_ns_resolution_trace.md"));
    let g = section(&md, "## GPU (PyTorch profiler trace)");
    has(&g, "| span | 384634 | 100.00 % |");
    has(&g, "| idle | 10113 | 2.63 % |");
    has(&g, "| compute | 372150 | 96.75 % |");
    has(&g, "| non-compute | 2371 | 0.62 % |");
    has(&g, "| 7 | 1709 | 8404 | 0 |");
    has(&g, "| compute | 4350 | 468153.602 | 468153.602 | 99.09 % |");
    has(&g, "| communication | 0 | 0.000 | 0.000 | 0.00 % |");
    has(&g, "| memory | 1745 | 4300.839 | 4300.839 | 0.91 % |");
    has(&g, "### Top kernels by time (20 of 79 names)");
    assert!(!md.contains("### Stragglers"));
    assert!(!md.contains("## Across ranks"));
    let csv = read(&dir.join("kernels_ns_resolution_trace.csv"));
    let rows: Vec<Vec<String>> = csv::Reader::from_reader(csv.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    assert_eq!(rows.len(), 79);
    // (name prefix, count, total_us, mean_us, max_us, share_of_span): mean = Σ / count rounded
    // to the nearest ns (164399.83125 → 164400; 151305.5 → 151306; 785553.83 → 785554).
    let want = [
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native",
            "160",
            "26303.973",
            "164.400",
            "378.686",
            "0.054796612686746696",
        ),
        (
            "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128,",
            "55",
            "25199.241",
            "458.168",
            "814.555",
            "0.052495227586988",
        ),
        (
            "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 32, ",
            "160",
            "24208.880",
            "151.306",
            "385.886",
            "0.0504321009202651",
        ),
        (
            "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, ",
            "30",
            "23566.615",
            "785.554",
            "1001.370",
            "0.04909413017161609",
        ),
    ];
    for (r, w) in rows.iter().zip(want) {
        assert!(r[0].starts_with(w.0), "{} vs {}", r[0], w.0);
        assert_eq!((r[1].as_str(), r[2].as_str()), ("compute", "7"));
        assert_eq!(
            (
                r[3].as_str(),
                r[4].as_str(),
                r[5].as_str(),
                r[6].as_str(),
                r[7].as_str()
            ),
            (w.1, w.2, w.3, w.4, w.5)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run of two folders (traces linked, never copied, into a temporary folder): `infer` holds
/// trace_diff's control (rank 3, A100, world 8) and test (rank 1, V100 16 GB, world 2) and
/// ns_resolution (rank 0, V100 32 GB, world 1); `train` the trace_filter pair (ranks 0 and 1,
/// world 128). The three `infer` traces state three devices and world sizes: three runs, each
/// its own role (`GPU-DISC-006`), named in its files, alone: not compared (robust z "—").
/// Services (ms): infer 77.5245, 124.2128, 96.7035; train 612.8915, 617.0415. One median over
/// all five would flag both train ranks slow (median 124.2128, MAD 46.6883, z 7.06 and 7.12);
/// within each role nothing is slow: train ±0.67.
#[cfg(unix)]
#[test]
fn slow_rank_rule_and_report_names_grouped_by_role() {
    let run = std::env::temp_dir().join(format!("proflens_gpu_run_roles_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&run);
    let hta = Path::new(HTA).canonicalize().unwrap();
    for (role, files) in [
        (
            "infer",
            &[
                "trace_diff/control/control.json.gz",
                "trace_diff/test/test.json.gz",
                "ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
            ][..],
        ),
        (
            "train",
            &[
                "trace_filter/sampled_rank-0.json.gz",
                "trace_filter/sampled_rank-1.json.gz",
            ][..],
        ),
    ] {
        let d = run.join(role);
        std::fs::create_dir_all(&d).unwrap();
        for f in files {
            let name = Path::new(f).file_name().unwrap();
            std::os::unix::fs::symlink(hta.join(f), d.join(name)).unwrap();
        }
    }
    let dir = run_reports(&run, "roles");
    let base = run.file_name().unwrap().to_str().unwrap().to_string();
    // Two roles hold rank ids 0 and 1: the role is in every file name, no report overwritten.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("anomaly_report_") || n.starts_with("kernels_"))
        .collect();
    names.sort();
    let mut want: Vec<String> = Vec::new();
    for (role, rank) in [
        ("infer_Tesla_V100-SXM2-32GB_world_1", 0),
        ("infer_Tesla_V100-SXM2-16GB_world_2", 1),
        ("infer_NVIDIA_A100-PG509-200_world_8", 3),
        ("train", 0),
        ("train", 1),
    ] {
        want.push(format!("anomaly_report_{base}_{role}_rank{rank}.md"));
        want.push(format!("kernels_{base}_{role}_rank{rank}.csv"));
    }
    want.sort();
    assert_eq!(names, want);
    let md = read(&dir.join(format!("anomaly_report_{base}_train_rank1.md")));
    let a = section(&md, "## Across ranks");
    has(&a, "The ranks hold several roles: the median, robust z and slow flag of each row are computed among the ranks of its role.");
    // (role, rank, service_ms avg, robust z, slow) per row, inventory order (service as the
    // report prints it, `{:.3}` of the f64: 612.8915 prints 612.891). Each infer run is alone
    // in its role: not compared, its robust z reads "—" (never 0.00).
    let rows: Vec<[String; 5]> = a
        .iter()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let c: Vec<&str> = l.split('|').map(str::trim).collect();
            [c[1], c[2], c[4], c[11], c[12]].map(str::to_string)
        })
        .collect();
    let row = |r: &str, k: &str, ms: &str, z: &str| {
        [
            format!("`{r}`"),
            k.into(),
            ms.into(),
            z.into(),
            String::new(),
        ]
    };
    assert_eq!(
        rows,
        vec![
            row("infer (NVIDIA A100-PG509-200, world 8)", "3", "77.525", "—"),
            row("infer (Tesla V100-SXM2-16GB, world 2)", "1", "124.213", "—"),
            row("infer (Tesla V100-SXM2-32GB, world 1)", "0", "96.704", "—"),
            row("train", "0", "612.891", "-0.67"),
            row("train", "1", "617.042", "0.67"),
        ]
    );
    // The straggler view is the train role's own.
    let g = section(&md, "## GPU (PyTorch profiler trace)");
    has(&g, "Collectives matched (by order and name) over the GPU ranks of role `train`: 10. The straggler of a collective is the rank that starts it last.");
    has(
        &g,
        "| 1 (this rank) | 8 | 38132.900 | 164191.000 | **straggler** |",
    );
    // Each infer run is alone in its role: no straggler section (no other rank to match).
    let md = read(&dir.join(format!(
        "anomaly_report_{base}_infer_Tesla_V100-SXM2-16GB_world_2_rank1.md"
    )));
    let g = section(&md, "## GPU (PyTorch profiler trace)");
    assert!(!g
        .iter()
        .any(|l| l.contains("ollective") || l.contains("straggler")));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&run);
}

/// Two real single-GPU traces of one folder (HTA's alexnet benchmark and simple-add trace,
/// linked into a temporary folder): both state the A100-PG509-200 and no world size, so they
/// are one run, two traces of rank 0 (`GPU-DISC-002`). Neither holds a communication kernel,
/// so no collective is matched and each report says so (no straggler table).
#[cfg(unix)]
#[test]
fn no_collective_matched_over_the_run() {
    let run = std::env::temp_dir().join(format!("proflens_gpu_run_nomatch_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&run);
    let hta = Path::new(HTA).canonicalize().unwrap();
    let d = run.join("run");
    std::fs::create_dir_all(&d).unwrap();
    for f in [
        "critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
        "execution_trace/benchmark_simple_add_trace.json.gz",
    ] {
        let name = Path::new(f).file_name().unwrap();
        std::os::unix::fs::symlink(hta.join(f), d.join(name)).unwrap();
    }
    let dir = run_reports(&d, "nomatch");
    for trace in [
        "benchmark_result_2869224_1695835535_trace",
        "benchmark_simple_add_trace",
    ] {
        let md = read(&dir.join(format!("anomaly_report_run_rank0_{trace}.md")));
        let g = section(&md, "## GPU (PyTorch profiler trace)");
        has(&g, "### Stragglers");
        has(&g, "No collective matched over every GPU rank of the run (communication kernels per rank: 0, 0): no straggler.");
        assert!(!g.iter().any(|l| l.starts_with("| rank |")), "{g:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&run);
}

/// The real rl_insight torch_profile folder: three roles each holding ranks 0 and 1 (L20
/// traces without device events). Every rank gets its own report and kernel table (before the
/// role was in the names, the three roles' rank-0 reports overwrote each other), and each
/// rank's JSON straggler row names its role (2 ranks per role, no collective: 0 matched).
#[test]
fn rl_insight_roles_get_their_own_reports_and_views() {
    let tp = Path::new("../shared/fixtures/rl_insight/data/recipe/torch_data/torch_profile");
    let dir = run_reports(tp, "rl");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("anomaly_report_"))
        .collect();
    names.sort();
    let roles = [
        "actor_compute_log_prob",
        "actor_update",
        "agent_loop_rollout_replica_0",
    ];
    let want: Vec<String> = roles
        .iter()
        .flat_map(|r| (0..2).map(move |k| format!("anomaly_report_torch_profile_{r}_rank{k}.md")))
        .collect();
    assert_eq!(names, want);
    let out = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .arg("anomaly")
        .arg(tp)
        .output()
        .unwrap();
    let v: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let rows: Vec<(String, String, i64, i64)> = v
        .iter()
        .map(|r| {
            let s = &r["gpu"]["straggler"];
            (
                r["role"].as_str().unwrap().to_string(),
                s["group"].as_str().unwrap().to_string(),
                r["rank_id"].as_i64().unwrap(),
                s["collectives_matched"].as_i64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, String, i64, i64)> = roles
        .iter()
        .flat_map(|r| (0..2).map(move |k| (r.to_string(), r.to_string(), k, 0)))
        .collect();
    assert_eq!(rows, want);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `proflens analyze --out-dir` writes the same reports and kernel tables under `reports/`
/// (the one renderer: `Store::anomaly_reports`, `Store::gpu_kernel_tables`).
#[test]
fn analyze_writes_the_same_gpu_reports_and_kernel_tables() {
    let tf = Path::new(HTA).join("trace_filter");
    let rep = run_reports(&tf, "tf_for_analyze");
    let out = std::env::temp_dir().join(format!("proflens_gpu_md_analyze_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let st = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(["analyze"])
        .arg(&tf)
        .arg("--out-dir")
        .arg(&out)
        .output()
        .unwrap();
    assert!(st.status.success(), "{st:?}");
    for name in [
        "anomaly_report_trace_filter_rank0.md",
        "anomaly_report_trace_filter_rank1.md",
        "kernels_trace_filter_rank0.csv",
        "kernels_trace_filter_rank1.csv",
    ] {
        assert_eq!(
            read(&out.join("reports").join(name)),
            read(&rep.join(name)),
            "{name}"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&rep);
}

/// The page's export of a GPU rank's kernel table (`engine::session::anomaly::export`,
/// `AnomalyExportKind::KernelsCsv`, from the page's store) is the CLI's `kernels_*.csv`;
/// an Ascend rank has none (an error, not an empty file).
#[test]
fn page_kernel_table_export_is_the_cli_file() {
    use proflens::cli::fs_opener::FsOpener;
    use proflens::engine::contract::no_progress;
    use proflens::engine::session::anomaly::export;
    use proflens::engine::session::Session;
    use proflens::engine::store::Store;
    use proflens::ingest::inventory::Inventory;
    use proflens::protocol::anomaly::AnomalyExportKind;
    let page = |dir: &Path, rank: u32| {
        let (opener, files) = FsOpener::walk(dir).unwrap();
        let mut inv = Inventory::from_paths(&files);
        proflens::parse::metadata::read_side_files(&mut inv, &opener);
        let mut store = Store::new(Session::plan());
        store.run_inventory(&inv, &opener, &mut no_progress);
        let mut bytes = Vec::new();
        export(
            AnomalyExportKind::KernelsCsv,
            Some(rank),
            &inv,
            &store,
            &mut bytes,
        )
        .map(|(name, mime)| (name, mime, bytes))
    };
    let tf = Path::new(HTA).join("trace_filter");
    let rep = run_reports(&tf, "tf_for_page");
    for rank in [0u32, 1] {
        let (name, mime, bytes) = page(&tf, rank).unwrap();
        assert_eq!(name, format!("kernels_trace_filter_rank{rank}.csv"));
        assert_eq!(mime, "text/csv");
        assert!(bytes == std::fs::read(rep.join(&name)).unwrap(), "{name}");
    }
    let level1 =
        Path::new("../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1");
    let e = page(level1, 0).unwrap_err();
    assert!(e.to_string().contains("not a GPU rank"), "{e}");
    let _ = std::fs::remove_dir_all(&rep);
}

/// Names from the trace are escaped as the reports escape input text: a kernel named
/// ``a|b`c`` (pipe and backtick) is one code span in its table cell (`snapshot_md::md_code`:
/// fence one backtick longer than the longest run, `|` escaped), and one quoted CSV field.
/// A synthetic two-step trace: ProfilerStep#1 at 0 µs, #2 at 100 µs; kernels `a|b`c` 10–40 µs
/// and 110–130 µs, `plain` 50–60 µs, all stream 7.
#[test]
fn trace_names_are_escaped_in_the_report_and_the_csv() {
    let dir = std::env::temp_dir().join(format!("proflens_gpu_trace_names_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let k = |name: &str, corr: u32, ts: u32, dur: u32| {
        format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":1,"args":{{"correlation":{corr}}}}},
{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7,"correlation":{corr}}}}}"#,
            ts - 5
        )
    };
    let trace = format!(
        r#"{{"schemaVersion":1,"deviceProperties":[{{"id":0,"name":"NVIDIA L20"}}],"traceEvents":[
{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":90}},
{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":100,"dur":90}},
{},
{},
{}
]}}"#,
        k("a|b`c", 1, 10, 30),
        k("plain", 2, 50, 10),
        k("a|b`c", 3, 110, 20)
    );
    std::fs::write(dir.join("rank0.pt.trace.json"), trace).unwrap();
    let rep = run_reports(&dir, "names");
    let md_name = std::fs::read_dir(&rep)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.starts_with("anomaly_report_"))
        .unwrap();
    let md = read(&rep.join(&md_name));
    let g = section(&md, "## GPU (PyTorch profiler trace)");
    // Σ 30 + 20 = 50 µs of 60 µs kernel time (83.33 %); plain 10 µs (16.67 %).
    has(&g, "| ``a\\|b`c`` | compute | 2 | 50.000 | 83.33 % |");
    has(&g, "| `plain` | compute | 1 | 10.000 | 16.67 % |");
    let csv_name = md_name
        .replace("anomaly_report_", "kernels_")
        .replace(".md", ".csv");
    let csv = read(&rep.join(csv_name));
    // Span 10 → 130 µs = 120 µs: shares 50/120 and 10/120; means 25 µs and 10 µs.
    assert_eq!(
        csv,
        "name,category,streams,count,total_us,mean_us,max_us,share_of_span\n\
         a|b`c,compute,7,2,50.000,25.000,30.000,0.4166666666666667\n\
         plain,compute,7,1,10.000,10.000,10.000,0.08333333333333333\n"
    );
    let _ = std::fs::remove_dir_all(&rep);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A capture whose device idles long outside its steps (the profiler started 10 ms before the
/// first `ProfilerStep`, one kernel ran then): the Bubble-first answer to "significant device
/// idle bubbles?" named only the in-step windows (a 0.050 ms tail) and never the 10 ms idle
/// before the steps, 96.6% of the capture (10000 / 10350 µs). A real SGLang decode trace (MI300) read "the largest
/// is 0.274 ms" with a 463.295 ms gap (97.8% of its capture) before its first step.
#[test]
fn bubble_first_answer_names_a_longer_idle_outside_the_steps() {
    let dir = std::env::temp_dir().join(format!("proflens_outside_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut ev = vec![
        r#"{"ph":"X","cat":"kernel","name":"warmup_kernel","pid":0,"tid":7,"ts":0,"dur":10,"args":{"device":0,"stream":7,"correlation":1}}"#.to_string(),
    ];
    for (n, s) in [(1, 10000), (2, 10200)] {
        ev.push(format!(
            r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{n}","pid":9,"tid":9,"ts":{s},"dur":200,"args":{{}}}}"#
        ));
        for (i, k) in [(10, "gemm"), (100, "relu")] {
            ev.push(format!(
                r#"{{"ph":"X","cat":"kernel","name":"{k}","pid":0,"tid":7,"ts":{},"dur":50,"args":{{"device":0,"stream":7,"correlation":{}}}}}"#,
                s + i,
                n * 10 + i
            ));
        }
    }
    let trace = format!(
        r#"{{"schemaVersion":1,"deviceProperties":[{{"id":0,"name":"NVIDIA H100"}}],"traceEvents":[{}]}}"#,
        ev.join(",\n")
    );
    std::fs::write(dir.join("w.pt.trace.json"), trace).unwrap();
    let out = run_reports(&dir, "outside");
    let report = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("anomaly_report_")
        })
        .unwrap();
    let md = read(&report);
    let q1 = md
        .lines()
        .find(|l| l.starts_with("1. **Are there significant device idle bubbles?**"))
        .unwrap();
    assert_eq!(
        q1,
        "1. **Are there significant device idle bubbles?** Yes: 3 significant window(s); the \
         largest is 0.050 ms (`ProfilerStep#1:tail:0`). Outside the steps the device is idle \
         longer: `global:global:0` lasts 10.000 ms (96.6% of the 10.350 ms capture span), \
         9.990 ms of it outside every step window."
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
