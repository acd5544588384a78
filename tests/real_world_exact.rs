//! Exact values of `proflens analyze` on the real-world GPU traces of
//! `../shared/fixtures/real_world/` (SOURCES.md there says where each comes from), each checked
//! against a tool that shares no code with proflens:
//!
//! * **stdlib**: `python3 tests/reference/real_world_check.py gpu TRACE…` (json, gzip, decimal:
//!   exact ns; device-op counts, gpu-traces.md §2 kernel categories, busy union, anomaly.md
//!   §5.5 gaps, ProfilerStep markers, §3.2 device-side windows, `[memory]` peaks);
//! * **HTA**: `VENV/bin/python tests/reference/real_world_hta.py TRACE|FOLDER` with
//!   HolisticTraceAnalysis 0.5.0 (temporal and idle-time breakdowns, kernel-type breakdown).
//!
//! Run once by hand; the numbers are copied here. Where proflens and HTA disagree the test
//! holds the value this file argues is right, and says so (`DISAGREEMENT`).
mod real_world_common;

use real_world_common::*;
use serde_json::json;

// ---------------------------------------------------------------------------------------
// MI300X ResNet with activation checkpointing (ROCm 6.4, RCCL, ProfilerStep#15–#17).
// ---------------------------------------------------------------------------------------

/// Device lag (anomaly.md §3.2) moves the three steps to device-side windows; every number
/// below is the stdlib reading (`real_world_check.py gpu …/mi300/resnet_act_checkpoint.json.gz`:
/// `device_side`, `categories`, `comm_kernels`, gaps) or HTA's (`real_world_hta.py` on the
/// same file).
#[test]
fn mi300_resnet_steps_kernels_rccl_and_hta_breakdowns() {
    let r = one("mi300", &format!("{TL}mi300/resnet_act_checkpoint.json.gz"));
    let a = &r["anomaly_discovery"];
    assert_eq!(a["step_detection_method"], "marker+device_lag");
    // stdlib `device_side`: launch step by the runtime call's correlation, S_i = max(H_i,
    // E_{i-1}), E_i = last end of the ops launched in step i; ops by start in [S_i, S_{i+1}),
    // their Σ duration and the busy union clipped to the window (ns / 10^3, 10^6).
    assert_eq!(
        steps(&r),
        [
            st(
                "ProfilerStep#15",
                3743411222862.936,
                3743411271924.854,
                1863,
                54.783775,
                46.655715
            ),
            st(
                "ProfilerStep#16",
                3743411271924.854,
                3743411290907.782,
                895,
                22.935406,
                18.90063
            ),
            st(
                "ProfilerStep#17",
                3743411290907.782,
                3743411309462.113,
                895,
                22.510891,
                18.445711
            ),
        ]
    );
    // stdlib `device_side[i].categories`: communication 9 / 4 / 4 (all
    // `ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)`, RCCL's name), compute
    // 1494 / 742 / 742, memory 360 / 149 / 149.
    let per_step: Vec<[u64; 3]> = r["gpu"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let c = s["categories"].as_array().unwrap();
            [0, 1, 2].map(|i| c[i]["count"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(per_step, [[1494, 9, 360], [742, 4, 149], [742, 4, 149]]);
    // stdlib `device_side` (anomaly.md §5.4, all ops clipped to the window): service, the
    // prelaunch (first busy instant − S), tail, internal gaps (their Σ, number, largest), ns.
    assert_eq!(
        idle_parts(&r),
        [
            (49.061918, 0.031469, 0.0, 2.374734, 907, 2.156709),
            (18.982928, 0.000001, 0.0, 0.082297, 418, 0.017121),
            (18.554331, 0.000001, 0.0, 0.108619, 419, 0.017561),
        ]
    );
    // stdlib: communication union ∩ compute union inside each window, and the communication
    // nothing hides (gpu-traces.md §2): 7,953,972 / 32,227,143, 3,953,922 / 11,955,460,
    // 3,983,405 / 11,442,621 ns.
    let overlap: Vec<(f64, f64)> = r["gpu"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (f(&s["comm_compute_overlap_ms"]), f(&s["exposed_comm_ms"])))
        .collect();
    assert_eq!(
        overlap,
        [
            (7.953972, 32.227143),
            (3.953922, 11.95546),
            (3.983405, 11.442621)
        ]
    );
    let hccl: Vec<u64> = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["hccl_count"].as_u64().unwrap())
        .collect();
    assert_eq!(hccl, [9, 4, 4]);
    // stdlib `kinds`: 2,995 kernels + 550 memcpy + 108 memset = 3,653 device ops;
    // `categories` (exact ns): compute 2,978 (Σ 25,739,303 ns, no overlap), the 17 RCCL
    // kernels Σ 71,516,523 ns, memory 658 Σ 2,974,246 ns.
    assert_eq!(
        categories(&r),
        cats([
            (2978, 25.739303, 25.739303),
            (17, 71.516523, 71.516523),
            (658, 2.974246, 2.974246)
        ])
    );
    assert_eq!(
        f(&a["comm_totals"]["comm_total_ms_kernel_details"]),
        71.516523
    );
    let top = &r["gpu"]["top_kernels"][0];
    assert_eq!(
        top["name"],
        "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"
    );
    assert_eq!(
        (top["count"].as_u64(), f(&top["total_ms"])),
        (Some(17), 71.516523)
    );
    // stdlib: first op 3743411222894405 ns, last end 3743411309462113 ns, union 84,002,056 ns,
    // 1,746 gaps, the largest 2,156,709 ns.
    assert_eq!(global(&r), (86.567708, 84.002056, 2.565652, 2.156709, 1746));
    // HTA 0.5.0: three ProfilerStep names, so HTA drops the last step: 2,685 GPU events kept
    // (its kernel-type counts 2,226 + 12 + 447), 968 of the 3,653 dropped; temporal and
    // idle-time breakdowns equal HTA's.
    let g = &r["gpu"];
    assert_eq!(g["hta_window"]["window"], "hta_parity");
    assert_eq!(g["hta_window"]["gpu_events_kept"], 2685);
    assert_eq!(g["hta_window"]["gpu_events_dropped"], 968);
    assert_eq!(g["gpu_time_breakdown"], hta_time(56517, 1541, 17018, 37958));
    assert_eq!(
        g["idle_by_stream"],
        json!([
            idle(0, None, Some(5000), 32982),
            idle(4, None, Some(116), 8906)
        ])
    );
}

// ---------------------------------------------------------------------------------------
// H100 OWLv2 (CUDA 12.4, profile_memory, ProfilerStep#6).
// ---------------------------------------------------------------------------------------

/// The step, categories, HTA breakdowns and the `[memory]` peaks of the H100 trace (counts and
/// the busy union are also in `kineto_by_content.rs`).
#[test]
fn h100_owlv2_step_memory_peaks_and_hta_breakdowns() {
    let r = one(
        "h100",
        &format!("{TL}h100/google_owlv2-large-patch14-ensemble__1016001.json.gz"),
    );
    assert_eq!(r["anomaly_discovery"]["step_detection_method"], "marker");
    // stdlib: ProfilerStep#6 marker starts at 1419116104994671 ns; the last step ends at the
    // last op end 1419117311785504 ns (anomaly.md §3.2, not the marker end …316176923);
    // 5,165 device ops (4,330 kernels, 85 memcpy, 750 memset), union 566,759,477 ns.
    assert_eq!(
        steps(&r),
        [st(
            "ProfilerStep#6",
            1419116104994.671,
            1419117311785.504,
            5165,
            566.759477,
            566.759477
        )]
    );
    // stdlib `device_side`: service 1,206,790,833 ns; the first op starts 128,502,454 ns after
    // the marker; 5,164 internal gaps, Σ 511,528,902, the largest 126,054,327 ns.
    assert_eq!(
        idle_parts(&r),
        [(1206.790833, 128.502454, 0.0, 511.528902, 5164, 126.054327)]
    );
    // stdlib `categories`: no collective; compute 4,330 Σ 551,451,628 ns, memory 835 Σ
    // 15,307,849 ns, none overlapping.
    assert_eq!(
        categories(&r),
        cats([
            (4330, 551.451628, 551.451628),
            (0, 0.0, 0.0),
            (835, 15.307849, 15.307849)
        ])
    );
    // stdlib: first op …233497125, last end …311785504 ns; 5,164 gaps, the largest 126,054,327.
    assert_eq!(
        global(&r),
        (1078.288379, 566.759477, 511.528902, 126.054327, 5164)
    );
    // HTA 0.5.0 (one step: nothing dropped). HTA's own COMPUTATION / MEMORY sums (547,123 /
    // 14,484 µs) are ~1 µs per op below the exact-ns categories above: HTA rounds each op's
    // start up and end down to whole µs (gpu-traces.md §1).
    let g = &r["gpu"];
    assert_eq!(g["hta_window"]["window"], "full_capture");
    assert_eq!(
        g["gpu_time_breakdown"],
        hta_time(1078287, 516680, 547123, 14484)
    );
    assert_eq!(
        g["idle_by_stream"],
        json!([idle(7, Some(504953), Some(11727), 0)])
    );
    // stdlib `memory` (13,474 `[memory]` events, per Device Type / Device Id): CPU (0, -1)
    // 1,204 samples, peak Total Allocated 152,680,988, Total Reserved always 0; GPU (1, 0)
    // 12,270 samples, peak allocated 2,707,847,680 at 1419116237228068 ns, peak reserved
    // 3,600,809,984 at 1419116233434363 ns; times counted from the first sample,
    // 1419116105360746 ns: 131.867322 and 128.073617 ms.
    assert_eq!(
        g["memory"],
        json!([
            {"device_type": 0, "device_id": -1, "samples": 1204, "allocated_source": "total_allocated",
             "peak_allocated_bytes": 152680988_i64, "peak_allocated_at_ms": 1207.557619,
             "peak_reserved_bytes": 0, "peak_reserved_at_ms": 0.0},
            {"device_type": 1, "device_id": 0, "samples": 12270, "allocated_source": "total_allocated",
             "peak_allocated_bytes": 2707847680_i64, "peak_allocated_at_ms": 131.867322,
             "peak_reserved_bytes": 3600809984_i64, "peak_reserved_at_ms": 128.073617}
        ])
    );
}

// ---------------------------------------------------------------------------------------
// B200 eager (symmetric-memory all-reduce), DeepSeek H800 train.json, vLLM graph capture.
// ---------------------------------------------------------------------------------------

/// B200: 768 kernels + 161 memcpy. The 73 `multimem_all_reduce_kernel` launches are not
/// NCCL-named, so the HTA categories count them as computation (HTA's rule); the anomaly
/// rules count them as collectives (gpu-traces.md §1), beside `ncclDevKernel_AllGather_RING_LL`
/// (21,953 ns).
#[test]
fn b200_categories_gaps_and_hta_breakdowns() {
    let r = one("b200", &format!("{TL}b200/eager_trace.json.gz"));
    // stdlib `categories`: compute 767 Σ 10,840,963 ns, union 10,771,685 ns (kernels overlap
    // on several streams); the NCCL all-gather; memory 161 Σ 802,844 ns.
    assert_eq!(
        categories(&r),
        cats([
            (767, 10.840963, 10.771685),
            (1, 0.021953, 0.021953),
            (161, 0.802844, 0.802844)
        ])
    );
    // stdlib: the 74 kernels whose lower-cased name holds nccl, rccl, §1.2.2's words or
    // all_reduce / all_gather / all_to_all: 73 × multimem_all_reduce_kernel + the all-gather,
    // Σ 2,141.501 µs (`real_world_check.py collectives TRACE`).
    assert_eq!(
        f(&r["anomaly_discovery"]["comm_totals"]["comm_total_ms_kernel_details"]),
        2.141501
    );
    // stdlib: first op 1365627865398728, last end 1365627949885906 ns, union 11,596,482 ns,
    // 854 gaps, the largest 2,638,105 ns.
    assert_eq!(global(&r), (84.487178, 11.596482, 72.890696, 2.638105, 854));
    // HTA 0.5.0: no ProfilerStep, nothing dropped; HTA counts 768 COMPUTATION (the 767 plus one
    // host `cpu_op` carrying a `stream` argument), 1 COMMUNICATION, 161 MEMORY.
    let g = &r["gpu"];
    assert_eq!(g["hta_window"]["gpu_events_kept"], 929);
    assert_eq!(g["gpu_time_breakdown"], hta_time(84486, 73669, 10153, 664));
    assert_eq!(
        g["idle_by_stream"],
        json!([idle(7, Some(73166), Some(566), 0)])
    );
}

/// DeepSeek-V3 DualPipe on H800: one ProfilerStep#1, three streams, integral µs.
#[test]
fn deepseek_train_step_gaps_and_hta_breakdowns() {
    let r = one("deepseek", "deepseek-ai__profile-data/train.json");
    // stdlib: marker start 1740461679470813 µs, last op end …600358 µs (marker end …583015);
    // 983 device ops by start in the step, Σ 244,069 µs (963 kernels + 20 memory ops, the
    // kernels of two streams overlapping), union 128,515 µs.
    assert_eq!(
        steps(&r),
        [st(
            "ProfilerStep#1",
            1740461679470813.0,
            1740461679600358.0,
            983,
            244.069,
            128.515
        )]
    );
    assert_eq!(
        categories(&r),
        cats([(963, 244.041, 128.5), (0, 0.0, 0.0), (20, 0.028, 0.028)])
    );
    // stdlib `device_side`: service 129,545 µs, prelaunch 533, internal Σ 497 in 243 gaps,
    // the largest 42 µs.
    assert_eq!(idle_parts(&r), [(129.545, 0.533, 0.0, 0.497, 243, 0.042)]);
    // stdlib: span 129,012 µs, gap 497 µs, largest 42 µs, 243 gaps. The trace has 7
    // zero-length `Memset (Device)` ops; 3 of them lie inside gaps and, counted as segments,
    // would split them (246 gaps, same total): a zero-length op occupies no device time, so
    // anomaly.md §5.5 counts gaps between the ops with a duration (stdlib `gap_count`, and
    // `gap_count_with_zero_length_ops` 246).
    assert_eq!(global(&r), (129.012, 128.515, 0.497, 0.042, 243));
    // HTA 0.5.0 (its COMPUTATION union 128,487 + 13 µs overlapping MEMORY = 128,500).
    let g = &r["gpu"];
    assert_eq!(g["gpu_time_breakdown"], hta_time(129012, 497, 128500, 15));
    assert_eq!(
        g["idle_by_stream"],
        json!([
            idle(7, Some(417), Some(1797), 8130),
            idle(23, Some(82308), Some(13), 4900),
            idle(27, Some(1107), Some(131), 10756)
        ])
    );
}

/// vLLM decode graph capture on ROCm 7: 7 kernels + 3 memcpy in 57.8 ms, 1,184 `[memory]`
/// samples.
#[test]
fn vllm_graph_capture_ops_memory_and_hta_breakdowns() {
    let r = one("vllm", &format!("{TL}inference/vllm_decode_full/capture_traces/graph_capture_rank_0.1773709742341309550.pt.trace.json.gz"));
    // stdlib `categories`: compute 7 Σ 19,633 ns, memory 3 Σ 9,197 ns; union 28,830 ns.
    assert_eq!(
        categories(&r),
        cats([
            (7, 0.019633, 0.019633),
            (0, 0.0, 0.0),
            (3, 0.009197, 0.009197)
        ])
    );
    // stdlib: first op 6520430064783802, last end 6520430122579220 ns; 9 gaps, the largest
    // 56,138,430 ns.
    assert_eq!(global(&r), (57.795418, 0.02883, 57.766588, 56.13843, 9));
    assert_eq!(steps(&r)[0].3, 10);
    // HTA 0.5.0 gives the same breakdowns. Note: HTA's compute 413 µs is not device time (the
    // ops are busy 29 µs): 48 host `cpu_op` events (Inductor's Triton launchers) carry a
    // `stream` argument, and HTA's temporal breakdown takes every event with a stream;
    // proflens reproduces HTA here by design (gpu-traces.md §2, HTA parity).
    let g = &r["gpu"];
    assert_eq!(g["gpu_time_breakdown"], hta_time(57795, 57375, 413, 7));
    assert_eq!(
        g["idle_by_stream"],
        json!([idle(1, Some(57769), Some(6), 0)])
    );
    // stdlib `memory`: Device Type 6 (ROCm's HIP device), id 0, 1,184 samples; peak Total
    // Allocated 191,628,704,768 at 6520430071090153 ns, peak Total Reserved 193,621,655,552 at
    // the first sample 6520430067325149 ns: 3.765004 and 0.0 ms after it.
    assert_eq!(
        g["memory"],
        json!([{"device_type": 6, "device_id": 0, "samples": 1184, "allocated_source": "total_allocated",
                "peak_allocated_bytes": 191628704768_i64, "peak_allocated_at_ms": 3.765004,
                "peak_reserved_bytes": 193621655552_i64, "peak_reserved_at_ms": 0.0}])
    );
}
