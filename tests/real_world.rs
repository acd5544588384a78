//! Exact values on the real profiler outputs of `../shared/fixtures/real_world/` (its
//! SOURCES.md says where each set comes from), for the rules that real files from other
//! projects' runs exercised: capabilities read from what the trace holds (anomaly.md §1.1.1),
//! step annotations without `ProfilerStep#` (§3.1.1) and overrun tails (§3.2.1).
//!
//! Every expected number was derived independently of proflens, by reading the JSON / CSV
//! with Python's `json`, `csv` and `decimal` (`tests/reference/real_world_check.py`, run once by
//! hand: `python3 tests/reference/real_world_check.py <check> <path>`), or by hand from the
//! rows quoted in the comments.

mod engine_support;
mod real_world_common;

use std::ops::ControlFlow;
use std::path::Path;

use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::analysis::intervals::Interval;
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::read::RankAnalysis;
use proflens::ingest::inventory::Inventory;
use proflens::ingest::{InputFile, MemOpener, Opener};
use proflens::parse::metadata::read_side_files;
use real_world_common::{untar_gz, RW};

fn analyse_with(inv_files: Vec<InputFile>, opener: &dyn Opener) -> Vec<RankAnalysis> {
    let mut inv = Inventory::from_paths(&inv_files);
    read_side_files(&mut inv, opener);
    engine_support::anomaly_run(&inv, opener, &AnomalyConfig::spec_defaults(), &mut |_| {
        ControlFlow::Continue(())
    })
    .unwrap()
    .0
}

/// The anomaly analysis of every rank under `rel` (a folder of `real_world/`).
fn analyse(rel: &str) -> Vec<RankAnalysis> {
    let (opener, files) = FsOpener::walk(Path::new(&format!("{RW}{rel}"))).unwrap();
    analyse_with(files, &opener)
}

/// The anomaly analysis of one trace file of `real_world/`, dropped alone.
fn analyse_file(rel: &str) -> RankAnalysis {
    let path = format!("{RW}{rel}");
    let bytes = std::fs::read(&path).unwrap();
    let name = rel.rsplit('/').next().unwrap();
    let mut m = MemOpener::new();
    m.add(format!("drop/{name}"), bytes);
    let mut v = analyse_with(m.list(), &m);
    assert_eq!(v.len(), 1, "{rel}");
    v.remove(0)
}

fn windows(r: &RankAnalysis) -> Vec<Interval> {
    r.result.steps.iter().map(|s| s.window).collect()
}

// ---------------------------------------------------------------------------------------
// §3.2.1 overrun tails: the torch_npu 2.10 eager rank (run148).
// ---------------------------------------------------------------------------------------

const RUN148: &str = "wio1997__Inference-Foundry/evidence/20260925_loop044_target/run148/profile";

/// run148: 4 steps of one `GroupedMatmulSwigluQuantV2` kernel each (`Step Id` 1–4); each
/// kernel starts inside its own `ProfilerStep#N` window and runs past the next marker.
///
/// From the files (`real_world_check.py run148`): markers at …3677.140, …4327.800, …4780.050,
/// …5244.390 µs; kernels (start + Duration of kernel_details.csv) …4221.578 + 118.762,
/// …4706.427 + 118.723, …5175.537 + 118.242, …5629.946 + 121.402 µs. Overrun tails into
/// windows 2–4: 4340.340 − 4327.800 = 12.540, 4825.150 − 4780.050 = 45.100,
/// 5293.779 − 5244.390 = 49.389 µs; lagged shares 12.540 / 131.263 = 9.55 %,
/// 45.100 / 163.342 = 27.6 %, 49.389 / 170.791 = 28.9 % (the largest, step 4): above 5 %, so
/// device-side windows. Device-side prelaunch of step i + 1 = its kernel start − step i's
/// kernel end: 4706.427 − 4340.340 = 366.087, 5175.537 − 4825.150 = 350.387,
/// 5629.946 − 5293.779 = 336.167 µs (step 1: 4221.578 − 3677.140 = 544.438). Before
/// §3.2.1 the marker windows were kept and steps 2–4 had a prelaunch of 0.
#[test]
fn run148_kernels_running_past_their_marker_give_device_side_windows() {
    let ranks = analyse(RUN148);
    assert_eq!(ranks.len(), 1);
    let r = &ranks[0].result;
    assert_eq!(r.step_detection_method(), "marker+device_lag");
    const T: i64 = 1_790_306_117_000_000_000;
    assert_eq!(
        windows(&ranks[0]),
        [
            Interval::new(T + 3_677_140, T + 4_340_340),
            Interval::new(T + 4_340_340, T + 4_825_150),
            Interval::new(T + 4_825_150, T + 5_293_779),
            Interval::new(T + 5_293_779, T + 5_751_348),
        ]
    );
    let prelaunch: Vec<i64> = r.steps.iter().map(|s| s.metrics.prelaunch_ns).collect();
    assert_eq!(prelaunch, [544_438, 366_087, 350_387, 336_167]);
    let d = r.device_lag.as_ref().unwrap();
    assert!(d.applied);
    assert_eq!(
        d.steps.iter().map(|s| s.tail_ns).collect::<Vec<_>>(),
        [0, 12_540, 45_100, 49_389]
    );
    assert_eq!(
        d.steps.iter().map(|s| s.overrun_ns).collect::<Vec<_>>(),
        [0, 12_540, 45_100, 49_389]
    );
    assert_eq!(d.max_share.1, 3);
    assert!((d.max_share.0 - 49.389 / 170.791).abs() < 1e-12);
    assert!((d.steps[1].lagged_share - 12.540 / 131.263).abs() < 1e-12);
    assert!((d.steps[2].lagged_share - 45.100 / 163.342).abs() < 1e-12);
    // Median of the first-kernel lags from the host markers 544.438, 378.627, 395.487,
    // 385.556 µs: (385.556 + 395.487) / 2.
    assert!((d.median_lag_ms - 0.3905215).abs() < 1e-12);
    // step_trace_time.csv Preparing 544.25 / 378.75 / 395.5 / 385.5 µs against device-side
    // prelaunch + overrun 544.438 / 378.627 / 395.487 / 385.556: all within 1 µs.
    assert_eq!(d.step_trace_check, Some((4, 4)));
}

// ---------------------------------------------------------------------------------------
// §1.1.1 capabilities read from what the trace holds.
// ---------------------------------------------------------------------------------------

/// `(option, on, source)` of the five options of a rank.
fn caps(r: &RankAnalysis) -> [(&'static str, bool, &'static str); 5] {
    let c = &r.result.capabilities;
    [
        ("record_shapes", c.record_shapes, c.record_shapes_source),
        ("with_stack", c.with_stack, c.with_stack_source),
        ("profile_memory", c.profile_memory, c.profile_memory_source),
        ("with_flops", c.with_flops, c.with_flops_source),
        ("with_modules", c.with_modules, c.with_modules_source),
    ]
}

/// `(kernel rows with shapes, distinct shape texts, the shapes of the first such row)`.
fn kernel_shapes(r: &RankAnalysis) -> (usize, usize, String) {
    let k = &r.kernels;
    let with: Vec<&str> = (0..k.len())
        .map(|i| k.text(k.shapes()[i]))
        .filter(|s| !s.is_empty())
        .collect();
    let mut distinct = with.clone();
    distinct.sort_unstable();
    distinct.dedup();
    (
        with.len(),
        distinct.len(),
        with.first().unwrap_or(&"").to_string(),
    )
}

const DLRM: &str = "facebookresearch__param/et_replay/tests/inputs/dlrm_kineto.tar.gz";

/// The 8-rank DLRM run (V100, Sep 2023), its tarball unpacked in memory. Every rank was
/// recorded with `record_shapes=True` (top-level `"record_shapes": 1`, `Input Dims` /
/// `Input type` on 1,579 of rank 0's 1,633 cpu_ops); nothing else was on. Before §1.1.1 every
/// rank said `record_shapes` off (`inferred`).
///
/// Kernel shapes (`real_world_check.py capabilities`, brute force over each launch's innermost
/// enclosing cpu_op): device ops with shapes / all, distinct shape texts, per rank 0–7.
#[test]
fn dlrm_eight_ranks_recorded_with_shapes_say_so() {
    let mut m = MemOpener::new();
    for (path, bytes) in untar_gz(&format!("{RW}{DLRM}")) {
        m.add(format!("run/{path}"), bytes);
    }
    let mut ranks = analyse_with(m.list(), &m);
    assert_eq!(ranks.len(), 8);
    ranks.sort_by_key(|r| r.meta.rank_id);
    // (rank, device ops, with shapes, distinct)
    const SHAPES: [(i64, usize, usize, usize); 8] = [
        (0, 261, 261, 139),
        (1, 326, 262, 140),
        (2, 262, 262, 140),
        (3, 337, 273, 140),
        (4, 273, 273, 140),
        (5, 261, 261, 139),
        (6, 262, 262, 140),
        (7, 262, 262, 140),
    ];
    for (r, &(rank, ops, with, distinct)) in ranks.iter().zip(&SHAPES) {
        assert_eq!(r.meta.rank_id, Some(rank));
        assert_eq!(
            caps(r),
            [
                ("record_shapes", true, "trace"),
                ("with_stack", false, "absent"),
                ("profile_memory", false, "absent"),
                ("with_flops", false, "absent"),
                ("with_modules", false, "absent"),
            ],
            "rank {rank}"
        );
        assert!(!r
            .result
            .limitations
            .iter()
            .any(|l| l.starts_with("record_shapes off")));
        assert_eq!(r.kernels.len(), ops, "rank {rank}");
        let (n, d, first) = kernel_shapes(r);
        assert_eq!((n, d), (with, distinct), "rank {rank}");
        // The first device op with shapes is the HtoD copy of the dense input (aten::copy_ of
        // a 16 × 13 batch).
        assert_eq!(first, "[[16, 13], [16, 13], []]", "rank {rank}");
    }
}

const B200: &str = "AMD-AGI__TraceLens/tests/traces/b200/eager_trace.json.gz";
const VLLM: &str = "AMD-AGI__TraceLens/tests/traces/inference/vllm_decode_full/capture_traces/graph_capture_rank_0.1773709742341309550.pt.trace.json.gz";

#[test]
fn b200_vllm_and_deepseek_capabilities_come_from_their_events() {
    // B200 eager: top-level record_shapes 1, with_stack 1; Concrete Inputs / Input Dims on
    // 4,805 cpu_ops, 15,230 python_function events. 927 of 929 device ops have shapes (30
    // distinct); the first is the HtoD copy of a [1, 512] tensor.
    let r = analyse_file(B200);
    assert_eq!(
        caps(&r),
        [
            ("record_shapes", true, "trace"),
            ("with_stack", true, "trace"),
            ("profile_memory", false, "absent"),
            ("with_flops", false, "absent"),
            ("with_modules", false, "absent"),
        ]
    );
    assert_eq!(
        kernel_shapes(&r),
        (927, 30, "[[1, 512], [1, 512], []]".into())
    );
    // vLLM graph capture: record_shapes, with_stack, profile_memory on (1,184 `[memory]`
    // events); all 10 device ops have shapes (7 distinct).
    let r = analyse_file(VLLM);
    assert_eq!(
        caps(&r),
        [
            ("record_shapes", true, "trace"),
            ("with_stack", true, "trace"),
            ("profile_memory", true, "trace"),
            ("with_flops", false, "absent"),
            ("with_modules", false, "absent"),
        ]
    );
    assert_eq!(kernel_shapes(&r), (10, 7, "[[1024], [1024], []]".into()));
    // DeepSeek's H800 trace: no option member, no shape, stack or memory output.
    let r = analyse_file("deepseek-ai__profile-data/train.json");
    assert!(caps(&r).iter().all(|&(_, on, src)| !on && src == "absent"));
    assert_eq!(kernel_shapes(&r).0, 0);
}

#[test]
fn torch_npu_ranks_with_record_shapes_off_still_carry_cann_shapes() {
    // run148 / run358: profiler_info says every option false; kernel_details.csv has CANN's
    // Input Shapes on every row (4 and 41 rows), which VARIABLE_SHAPE_SAME_TEMPLATE compares.
    for (dir, rows) in [
        (RUN148, 4),
        (
            "wio1997__Inference-Foundry/evidence/20260927_loop075_bound/run358/profile",
            41,
        ),
    ] {
        let ranks = analyse(dir);
        assert_eq!(ranks.len(), 1);
        let r = &ranks[0];
        assert_eq!(
            caps(r),
            [
                ("record_shapes", true, "kernels"),
                ("with_stack", false, "profiler_info"),
                ("profile_memory", false, "profiler_info"),
                ("with_flops", false, "profiler_info"),
                ("with_modules", false, "profiler_info"),
            ],
            "{dir}"
        );
        assert_eq!(kernel_shapes(r).0, rows, "{dir}");
    }
}

// ---------------------------------------------------------------------------------------
// §3.1.1 step annotations without ProfilerStep.
// ---------------------------------------------------------------------------------------

fn note<'a>(r: &'a RankAnalysis, prefix: &str) -> Option<&'a str> {
    r.result
        .limitations
        .iter()
        .find(|l| l.starts_with(prefix))
        .map(String::as_str)
}

/// B200 eager (vLLM, no ProfilerStep): one top-level user annotation,
/// `execute_context_1(888_788544)_generation_0(0)`, holds every device op (the
/// `## Call CompiledFxGraph` and `nccl:_all_gather_base` annotations lie inside it on its
/// thread): one engine step, so not a step marker (≥ 2 needed; `real_world_check.py
/// annotations`: one family, n = 1, cover 1.0). Kernel repetition is then the last resort and
/// finds the model's 36 layers, not iterations: 14 kernel names occur exactly 36 times (one
/// per layer: `rotary_embedding_kernel`, `reshape_and_cache_flash_kernel`, …).
#[test]
fn b200_single_engine_step_is_not_a_step_marker_and_macro_steps_say_they_are_the_last_resort() {
    let r = analyse_file(B200);
    assert_eq!(r.result.step_detection_method(), "macro");
    assert_eq!(r.result.steps.len(), 36);
    assert_eq!(
        note(&r, "no top-level user annotation").unwrap(),
        "no top-level user annotation is a step marker (§3.1.1): `execute_context_…` occurs once (≥ 2 needed), holds 100.0 % of the device busy time"
    );
    assert_eq!(
        note(&r, "no step markers, no Step Id").unwrap(),
        "no step markers, no Step Id column and no step annotation: 36 macro-steps from kernel repetition, the last resort (§3.6): a repeated unit may be a layer or a pass rather than an iteration"
    );
}

/// vLLM decode graph capture: one top-level `capture_32_FULL` annotation (the 24
/// `## Call CompiledFxGraph` annotations are inside it) over all 10 device ops: no step
/// marker, one pseudo-step.
#[test]
fn vllm_graph_capture_is_one_pseudo_step_and_says_why() {
    let r = analyse_file(VLLM);
    assert_eq!(r.result.step_detection_method(), "pseudo");
    assert_eq!(r.result.steps.len(), 1);
    assert_eq!(r.result.steps[0].inventory.total_kernel_count, 10);
    assert_eq!(
        note(&r, "no top-level user annotation").unwrap(),
        "no top-level user annotation is a step marker (§3.1.1): `capture_…` occurs once (≥ 2 needed), holds 100.0 % of the device busy time"
    );
}
