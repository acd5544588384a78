//! Exact values of `proflens analyze` on the torch_npu rank run358 and the three real-world
//! memory snapshots of `../shared/fixtures/real_world/`, checked against readings that share no
//! code with proflens (run once by hand, numbers copied here):
//!
//! * run358: `python3 tests/reference/real_world_check.py ascend RANK_DIR` (csv, json, exact
//!   decimal µs);
//! * snapshots: `python3 tests/reference/real_world_check.py snapshot PICKLE` (CPython's
//!   `pickle.load`, then the replay of torch-snapshot.md §3.6 / §7.2 / §7.3 in plain Python).

mod real_world_common;

use real_world_common::*;
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------
// run358: torch_npu 2.10 / CANN 9.1, ACL-graph replay, a step_trace_time row with an empty
// Step and a negative Preparing.
// ---------------------------------------------------------------------------------------

const RUN358: &str = "wio1997__Inference-Foundry/evidence/20260927_loop075_bound/run358/profile";

/// 41 `GroupedMatmul` rows in kernel_details.csv, 2 ProfilerStep markers in trace_view.json.
/// stdlib (`ascend`): markers at …601425.600 µs (dur 223.97) and …601695.590 µs; kernels
/// from …601178.638 to …604738.029 µs, none overlapping (41 groups, Σ 3,441.168 µs = the
/// union); 3 kernels start before the first marker (global analysis only), 4 in window 1,
/// 34 in window 2.
///
/// step_trace_time.csv has one row, `Step` empty, `Preparing` −246.75 µs: it names no marker
/// step, so the §13.1 cross-check has nothing to compare (the report has no cross-check
/// section). Its `Preparing` matches the first kernel start − first marker start,
/// 601178.638 − 601425.600 = −246.962 µs, within msprof's 0.25 µs rounding and the 1 µs
/// tolerance.
#[test]
fn run358_marker_windows_kernels_and_gaps() {
    let ranks = analyze("run358", &std::path::Path::new(RW).join(RUN358));
    assert_eq!(ranks.len(), 1);
    let r = &ranks[0];
    assert_eq!(r["anomaly_discovery"]["step_detection_method"], "marker");
    // stdlib `window`: [H_1, H_2) and [H_2, last end of a kernel starting in it); kernels by
    // start, their Σ Duration, the union of all kernels clipped to the window. The epoch µs
    // (≥ 2^53 ns) are written as their nearest f64 (…425.600 → …425.5, …695.590 → …695.5,
    // …738.029 → …738.0); the durations are exact: service 269.990 / 3,042.439 µs.
    assert_eq!(
        steps(r),
        [
            st(
                "ProfilerStep#1",
                1790467809601425.5,
                1790467809601695.5,
                4,
                0.333807,
                0.25949
            ),
            st(
                "ProfilerStep#2",
                1790467809601695.5,
                1790467809604738.0,
                34,
                2.861436,
                2.940156
            ),
        ]
    );
    let s = &r["steps"];
    assert_eq!(f(&s[0]["service_ms"]), 0.26999);
    assert_eq!(f(&s[1]["service_ms"]), 3.042439);
    // No prelaunch or tail gap (a kernel started before each marker runs into its window):
    // the idle time is internal, service − busy = 10.5 and 102.283 µs.
    for (i, internal) in [(0, 0.0105), (1, 0.102283)] {
        assert_eq!(f(&s[i]["prelaunch_gap_ms"]), 0.0);
        assert_eq!(f(&s[i]["tail_gap_ms"]), 0.0);
        assert_eq!(f(&s[i]["internal_bubble_total_ms"]), internal);
    }
    // stdlib: span 3,559.391 µs, union 3,441.168, gaps 118.223 µs in 40 gaps, the largest
    // 5.820 µs.
    assert_eq!(global(r), (3.559391, 3.441168, 0.118223, 0.00582, 40));
}

// ---------------------------------------------------------------------------------------
// Memory snapshots (CPython's pickle.load).
// ---------------------------------------------------------------------------------------

/// `(bytes, index, time_us)` of a device's `max_allocated`, `max_active`, `max_reserved`.
fn maxima(d: &Value) -> Vec<Value> {
    ["max_allocated", "max_active", "max_reserved"]
        .iter()
        .map(|k| json!([d[k]["bytes"], d[k]["index"], d[k]["time_us"]]))
        .collect()
}

fn baselines(d: &Value) -> [Value; 3] {
    [
        d["baseline_allocated_bytes"].clone(),
        d["baseline_active_bytes"].clone(),
        d["baseline_reserved_bytes"].clone(),
    ]
}

/// verl (Megatron + vLLM RL): the allocator state alone, no trace entry, 9 blocks
/// `active_pending_free`.
#[test]
fn verl_snapshot_segments_baselines_and_peaks() {
    let v = analyze_snapshot("verl", "volcengine__verl/mem.pickle");
    // stdlib `snapshot`: 127 segments, Σ total_size 26,189,234,176, Σ allocated_size
    // 24,916,034,560, 68 with a private pool id; blocks 534 / 9 / 95.
    let g = &v["segments"];
    assert_eq!(g["count"], 127);
    assert_eq!(g["total_size_sum"], 26_189_234_176_i64);
    assert_eq!(g["allocated_size_sum"], 24_916_034_560_i64);
    assert_eq!(g["private_pools"], 68);
    assert_eq!(
        g["block_states"],
        json!({"active_allocated": 534, "active_pending_free": 9, "inactive": 95})
    );
    // stdlib: with no entry every curve is its baseline. Allocated = Σ requested_size of the
    // 534 active_allocated blocks; active adds the 9 pending-free blocks (596,836,352 bytes
    // requested); reserved = Σ total_size. The maxima are the baselines (no entry index).
    assert_eq!(v["devices"], json!([]));
    let d = &v["end_state_only"][0];
    assert_eq!(
        baselines(d),
        [
            json!(24_886_778_000_i64),
            json!(25_483_614_352_i64),
            json!(26_189_234_176_i64)
        ]
    );
    assert_eq!(
        maxima(d),
        [
            json!([24_886_778_000_i64, null, null]),
            json!([25_483_614_352_i64, null, null]),
            json!([26_189_234_176_i64, null, null])
        ]
    );
}

/// select_n: 10,327 entries on device 0 (empty_cache churn), no `time_us`.
#[test]
fn select_n_snapshot_segments_baselines_and_peaks() {
    let v = analyze_snapshot("select_n", "Maphsge4__select_n/snapshot.pickle");
    // stdlib `snapshot`: 136 segments (119 large, 17 small), Σ total_size 18,566,086,656,
    // Σ allocated_size 16,199,101,440; blocks 200 active_allocated, 4 inactive.
    let g = &v["segments"];
    assert_eq!(g["count"], 136);
    assert_eq!(g["total_size_sum"], 18_566_086_656_i64);
    assert_eq!(g["allocated_size_sum"], 16_199_101_440_i64);
    assert_eq!(
        g["block_states"],
        json!({"active_allocated": 200, "inactive": 4})
    );
    let d = &v["devices"][0];
    assert_eq!(d["entries"], 10_327);
    assert_eq!(
        d["actions"],
        json!({"alloc": 3058, "free_requested": 3053, "free_completed": 3053,
               "segment_alloc": 584, "segment_free": 579})
    );
    // stdlib replay: baseline (blocks alive before the first entry) allocated = active
    // 14,034,685,952; reserved = Σ total_size − net segment change 14,036,238,336. Maxima:
    // allocated and active 20,802,383,104 first at entry 5,317; reserved 22,519,218,176 first
    // at entry 5,553.
    assert_eq!(
        baselines(d),
        [
            json!(14_034_685_952_i64),
            json!(14_034_685_952_i64),
            json!(14_036_238_336_i64)
        ]
    );
    assert_eq!(
        maxima(d),
        [
            json!([20_802_383_104_i64, 5317, null]),
            json!([20_802_383_104_i64, 5317, null]),
            json!([22_519_218_176_i64, 5553, null])
        ]
    );
}

/// EoR_NN: 5,803 entries with `time_us`, 9 `snapshot` markers, 134 MB reserved.
#[test]
fn eor_nn_snapshot_segments_baselines_and_peaks() {
    let v = analyze_snapshot("eor_nn", "JasperSolt__EoR_NN/snapshot.pickle");
    // stdlib `snapshot`: 10 segments (6 large, 4 small), Σ total_size 134,217,728, Σ
    // allocated_size 48,760,832; blocks 40 active_allocated, 14 inactive.
    let g = &v["segments"];
    assert_eq!(g["count"], 10);
    assert_eq!(g["total_size_sum"], 134_217_728);
    assert_eq!(g["allocated_size_sum"], 48_760_832);
    assert_eq!(
        g["block_states"],
        json!({"active_allocated": 40, "inactive": 14})
    );
    let d = &v["devices"][0];
    assert_eq!(d["entries"], 5803);
    assert_eq!(
        d["actions"],
        json!({"alloc": 1935, "free_requested": 1926, "free_completed": 1926,
               "segment_alloc": 7, "snapshot": 9})
    );
    // stdlib replay: baselines 8,771,952 / 8,771,952 / 25,165,824; allocated and active peak
    // 108,258,676 at entry 759 (time_us 1738780410457169), reserved 134,217,728 (every
    // segment) at entry 757 (time_us 1738780410457141).
    assert_eq!(
        baselines(d),
        [json!(8_771_952), json!(8_771_952), json!(25_165_824)]
    );
    assert_eq!(
        maxima(d),
        [
            json!([108_258_676, 759, 1_738_780_410_457_169_i64]),
            json!([108_258_676, 759, 1_738_780_410_457_169_i64]),
            json!([134_217_728, 757, 1_738_780_410_457_141_i64])
        ]
    );
}
