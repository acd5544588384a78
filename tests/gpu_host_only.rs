//! What a GPU trace without device events says about why (formats.md §8.1): device records
//! lost although the host launched device work, or no event recorded at all; each against a
//! small trace shaped like a real one, and a real host-only trace that keeps the capture advice.

mod engine_support;

use engine_support::anomaly_of_folder as analyse;
use proflens::engine::read::RankAnalysis;

/// What rank `r`'s limitations say about its missing device events.
fn no_device_why(r: &RankAnalysis) -> &str {
    proflens::analysis::gpu_rank::no_device_events(&r.result.limitations)
        .unwrap()
        .1
}

const RLI: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/rl_insight/data/recipe/torch_data/torch_profile"
);

/// A trace whose host side launched kernels (CUPTI's own `cudaLaunchKernel` records, with
/// their `ac2g` flow starts) but that holds no device record lost those records: the CUDA
/// activities were on, so "profiled without CUDA/ROCm activities" would send the user to the
/// wrong fix (formats.md §8.1). A real A100 trace shaped so (236 `cudaLaunchKernel`, 24
/// `cuLaunchKernel`, 8 `cudaMemcpyAsync`, no kernel) was said to be profiled without CUDA.
#[test]
fn host_only_trace_with_launches_says_the_device_records_are_lost() {
    let dir = std::env::temp_dir().join(format!("proflens_lost_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let launch = |name: &str, cat: &str, ts: u32, c: u32| {
        format!(
            r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":7,"tid":7,"ts":{ts},"dur":4,"args":{{"External id":{c},"correlation":{c}}}}},
{{"ph":"s","id":{c},"pid":7,"tid":7,"ts":{ts},"cat":"ac2g","name":"ac2g"}},"#
        )
    };
    let trace = format!(
        r#"{{"schemaVersion":1,"deviceProperties":[{{"id":0,"name":"NVIDIA A100 80GB PCIe"}}],"traceEvents":[
{{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":7,"tid":7,"ts":100,"dur":60,"args":{{"External id":1}}}},
{}{}{}{}
{{"ph":"X","cat":"cuda_runtime","name":"cudaStreamIsCapturing","pid":7,"tid":7,"ts":150,"dur":1,"args":{{"correlation":9}}}}
]}}"#,
        launch("cudaLaunchKernel", "cuda_runtime", 110, 2),
        launch("cudaLaunchKernel", "cuda_runtime", 120, 3),
        launch("cuLaunchKernel", "cuda_driver", 130, 4),
        launch("cudaMemcpyAsync", "cuda_runtime", 140, 5),
    );
    std::fs::write(dir.join("worker.pt.trace.json"), trace).unwrap();
    let ranks = analyse(dir.to_str().unwrap());
    let r = &ranks[0];
    let why = no_device_why(r);
    assert!(proflens::analysis::gpu_rank::device_records_lost(why));
    assert_eq!(
        why,
        "host-only trace, device records lost: no device events (kernel, gpu_memcpy, \
         gpu_memset), yet 4 runtime calls that enqueue device work were recorded \
         (cudaLaunchKernel ×2, cuLaunchKernel ×1, cudaMemcpyAsync ×1) — the CUDA/ROCm \
         activities were on (the tracer writes those calls itself), but the records of the \
         device side are missing: the tracer lost or never delivered them (another profiler \
         such as Nsight Systems attached, a CUPTI/roctracer error in the run's log, or the \
         profile stopped before the GPU finished); 6 host events and 0 steps read, no busy \
         union and no bubbles"
    );
    assert!(r.problems.kept().iter().any(|p| p.code == "GPU-RUN-001"));
    // A trace without such calls keeps the capture advice.
    let plain = analyse(&format!("{RLI}/actor_update"));
    let why = no_device_why(&plain[0]);
    assert!(
        !proflens::analysis::gpu_rank::device_records_lost(why),
        "{why}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A trace that holds its metadata and no event at all (a real 832-byte `*.pt.trace.json`
/// written by `tensorboard_trace_handler`: two thread names and "Record Window End") was said
/// to be "profiled without CUDA/ROCm activities" with "0 host events": the profiler recorded
/// nothing, host side included.
#[test]
fn trace_without_any_event_says_nothing_was_recorded() {
    let dir = std::env::temp_dir().join(format!("proflens_noevent_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("host_93917.1736417948403527000.pt.trace.json"),
        r#"{"schemaVersion": 1, "traceEvents": [
{"name": "thread_name", "ph": "M", "ts": 0, "pid": 93917, "tid": 3961819, "args": {"name": "thread 3961819 ()"}},
{"name": "thread_sort_index", "ph": "M", "ts": 0, "pid": 93917, "tid": 3961819, "args": {"sort_index": 3961819}},
{"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 1736417948403182}
], "traceName": "./log/host_93917.1736417948403527000.pt.trace.json"}"#,
    )
    .unwrap();
    let ranks = analyse(dir.to_str().unwrap());
    let why = no_device_why(&ranks[0]);
    assert_eq!(
        why,
        "host-only trace, no event recorded: the trace holds no event at all (no host op, no \
         device op, no step; only its metadata) — the profiler recorded nothing in its window: \
         with a schedule, the trace was written outside its active steps (prof.step() not \
         called each step, or the profile ended during wait or warmup); nothing to analyse"
    );
    assert!(!proflens::analysis::gpu_rank::device_records_lost(why));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A host-only trace whose `[memory]` samples lie on a GPU (device type 1; a real PyTorch 1.12
/// trace on Windows: `aten::cudnn_convolution` ops and 22 CUDA `[memory]` samples, no kernel and
/// no runtime call) was said to be "profiled without CUDA/ROCm activities or on a process that
/// launched no GPU work": the process did use the GPU, so only the first cause remains.
#[test]
fn host_only_trace_with_gpu_memory_samples_says_the_gpu_was_used() {
    let dir = std::env::temp_dir().join(format!("proflens_gpumem_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sample = |ts: u32, bytes: i64, total: i64| {
        format!(
            r#"{{"ph":"i","s":"t","name":"[memory]","pid":15616,"tid":22320,"ts":{ts},"args":{{"Device Type":1,"Device Id":0,"Addr":30113730048,"Bytes":{bytes},"Total Allocated":{total},"Total Reserved":4194304}}}}"#
        )
    };
    std::fs::write(
        dir.join("trace.json"),
        format!(
            r#"{{"schemaVersion":1,"traceEvents":[
{},
{},
{{"ph":"X","cat":"cpu_op","name":"aten::cudnn_convolution","pid":15616,"tid":22320,"ts":100,"dur":172,"args":{{"External id":208}}}}
]}}"#,
            sample(110, 345600, 1761280),
            sample(200, -345600, 1415680)
        ),
    )
    .unwrap();
    let ranks = analyse(dir.to_str().unwrap());
    let why = no_device_why(&ranks[0]);
    assert_eq!(
        why,
        "host-only trace: no device events (kernel, gpu_memcpy, gpu_memset) among its 1 host \
         events and 0 steps, yet 2 `[memory]` samples on a device show the process used the \
         GPU — profiled without the CUDA/ROCm activities (ProfilerActivity.CUDA), or by a \
         PyTorch whose profiler could not record them; steps and host events only, no busy \
         union and no bubbles"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
