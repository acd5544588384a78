//! The Kineto reader against an independent Python reading
//! (`tests/reference/kineto_ref.py`: json + gzip, exact decimals) on every real PyTorch
//! profiler trace of the fixtures: counts per kind, step bounds, paired flows, the device busy
//! union (all streams), the base time and the rank. Plus a few exact values checked by hand.

use std::ops::ControlFlow;
use std::path::Path;
use std::process::Command;

use proflens::model::gpu::GpuTrace;
use proflens::parse::kineto::{self, KinetoInfo};
use serde_json::{json, Value};

const HTA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/"
);
const RLI: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/rl_insight/data/recipe/torch_data/torch_profile/"
);

fn parse(path: &str) -> (GpuTrace, KinetoInfo) {
    let p = Path::new(path);
    let name = p.file_name().unwrap().to_str().unwrap();
    let size = std::fs::metadata(p).unwrap().len();
    let src = Box::new(std::fs::File::open(p).unwrap());
    kineto::read(src, name, Some(size), &mut |_| ControlFlow::Continue(())).unwrap()
}

fn busy_union(t: &GpuTrace) -> i64 {
    let mut iv: Vec<(i64, i64)> = t
        .device_ops
        .iter()
        .map(|d| (d.start_ns, d.end_ns))
        .collect();
    iv.sort();
    let mut busy = 0;
    let mut cur: Option<(i64, i64)> = None;
    for (s, e) in iv {
        match &mut cur {
            Some(c) if s <= c.1 => c.1 = c.1.max(e),
            _ => {
                if let Some(c) = cur {
                    busy += c.1 - c.0;
                }
                cur = Some((s, e));
            }
        }
    }
    busy + cur.map_or(0, |c| c.1 - c.0)
}

fn ours(t: &GpuTrace, info: &KinetoInfo) -> Value {
    let [k, c, s] = t.kind_counts();
    let ends = t.device_ops.iter().map(|d| d.end_ns).max();
    json!({
        "kernels": k, "memcpy": c, "memset": s, "host_ops": t.host_ops.len(),
        "steps": t.steps.iter().map(|m| json!([t.text(m.name), m.start_ns, m.dur_ns])).collect::<Vec<_>>(),
        "flows": t.flows.len(), "unpaired_flows": info.unpaired_flows, "memory": t.memory.len(),
        "busy_union_ns": busy_union(t),
        "first_op_ns": t.device_ops.first().map(|d| d.start_ns), "last_end_ns": ends,
        "base": t.facts.base_time_ns, "rank": t.facts.distributed.as_ref().and_then(|d| d.rank),
    })
}

/// The Python reading of one trace (`tests/reference/kineto_ref.py`).
pub fn reference(path: &str) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/reference/kineto_ref.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(path)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "reference failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

const TRACES: [&str; 12] = [
    "ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
    "nccl_parser_config/nccl_data.json.gz",
    "negative_queue_length_values_check/rank0.json.gz",
    "cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz",
    "trace_diff/control/control.json.gz",
    "trace_diff/test/test.json.gz",
    "cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
    "trace_filter/sampled_rank-0.json.gz",
    "trace_filter/sampled_rank-1.json.gz",
    "execution_trace/benchmark_simple_add_trace.json.gz",
];

#[test]
fn every_fixture_trace_equals_the_python_reading() {
    let rl = [
        "actor_update/prof_rank-1_031904.json.gz",
        "agent_loop_rollout_replica_0/huawei_372640.1771730291744166997.pt.trace.json.gz",
    ];
    let paths = TRACES
        .iter()
        .map(|r| format!("{HTA}{r}"))
        .chain(rl.iter().map(|r| format!("{RLI}{r}")));
    for path in paths {
        let rel = path.as_str();
        let t0 = std::time::Instant::now();
        let (t, info) = parse(&path);
        assert!(
            info.scan.error.is_none() && info.scan.truncated_at.is_none(),
            "{rel}"
        );
        assert_eq!(info.raw_backslash, 0, "{rel}");
        eprintln!("{rel}: {:?}", t0.elapsed());
        let mut want = reference(&path);
        want.as_object_mut().unwrap().remove("top_gaps"); // checked by tests/gpu_anomaly.rs
        assert_eq!(ours(&t, &info), want, "{rel}");
    }
}

/// Values read by hand from the files (zcat | python -m json.tool).
#[test]
fn hand_checked_values() {
    let (t, info) = parse(&format!(
        "{HTA}ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
    ));
    assert_eq!(info.scan.events, 68_692);
    assert_eq!(t.facts.display_time_unit.as_deref(), Some("ns"));
    assert_eq!(t.kind_counts(), [4350, 1600, 145]);
    assert_eq!(t.steps.len(), 5);
    assert_eq!(t.text(t.steps[0].name), "ProfilerStep#101");
    assert_eq!(t.steps[0].start_ns, 1_712_195_495_502_094_565);
    assert_eq!(t.device_ops[0].start_ns, 1_712_195_495_505_582_988);
    // ROCm: hip runtime names, base after the events, four MI250 GCDs
    let (t, _) = parse(&format!(
        "{HTA}amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"
    ));
    assert_eq!(t.facts.base_time_ns, Some(1_735_632_360_000_000_000));
    assert_eq!(t.facts.devices.len(), 4);
    assert_eq!(t.facts.devices[0].name, "AMD Radeon Graphics");
    assert!(t
        .host_ops
        .iter()
        .any(|h| h.kind == proflens::model::gpu::HostKind::HipRuntime));
    assert_eq!(t.streams(), vec![(2, 0)]);
    // The L20 RL traces: 4 events, no device op, rank from distributedInfo
    let (t, info) = parse(&format!("{RLI}actor_update/prof_rank-1_031904.json.gz"));
    assert_eq!(info.scan.events, 4);
    assert!(!t.has_device_ops());
    assert_eq!(t.facts.distributed.as_ref().and_then(|d| d.rank), Some(1));
    assert_eq!(t.facts.devices[0].name, "NVIDIA L20");
    assert_eq!(t.facts.cuda_runtime_version, Some(12080));
    assert_eq!(t.host_ops.len(), 1);
    assert_eq!(t.host_ops[0].dur_ns, 10_083_720_552);
}
