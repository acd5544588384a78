//! Meta's MTIA traces (formats.md §8): device ops in category `mtia_ccp_events` (kernels, and
//! `dma_request` transfers told apart by name, as HTA does) and launches in `mtia_runtime`
//! (`runFunction - job_prep_and_submit_for_execution`, with `correlation`). A small trace in
//! the shape of HTA's `mtia_trace_single_rank` test trace (its events' fields, pids and
//! args) is a GPU rank with device ops, never a host-only trace.

use std::ops::ControlFlow;

use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::analysis::gpu_kernels::{name_table, Category};
use proflens::analysis::gpu_tables::kernel_table;
use proflens::ingest::inventory::Inventory;
use proflens::ingest::MemOpener;

const TRACE: &str = r#"{"schemaVersion": 1, "distributedInfo": {"backend": "mtia:hccl,cpu:gloo", "rank": 0, "world_size": 1},
"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 3100453, "tid": 3100453, "ts": 1000.0, "dur": 900.0},
{"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 3100453, "tid": 3100453, "ts": 1010.0, "dur": 500.0, "args": {"External id": 1}},
{"ph": "X", "cat": "mtia_runtime", "name": "runFunction - job_prep_and_submit_for_execution", "pid": 3100453, "tid": 3100453, "ts": 1020.0, "dur": 300.0, "args": {"correlation": 423}},
{"ph": "X", "cat": "mtia_ccp_events", "name": "customized_fba_mul_const-dtype_Float", "pid": 9, "tid": 4, "ts": 1400.0, "dur": 124.768, "args": {"correlation": 423, "stream": 102, "packet_ptr": 235}},
{"ph": "X", "cat": "mtia_ccp_events", "name": "dma_request", "pid": 9, "tid": 4, "ts": 1600.0, "dur": 48.024, "args": {"stream": 102, "direction": "DEVICE_TO_HOST", "size": 163840, "sqid": 0}},
{"ph": "X", "cat": "mtia_ccp_events", "name": "dma_request", "pid": 9, "tid": 801, "ts": 1700.0, "dur": 8.136, "args": {"direction": "DEVICE_TO_HOST", "size": 16, "sqid": 1}},
{"ph": "s", "id": 423, "pid": 3100453, "tid": 3100453, "ts": 1020.0, "cat": "ac2g", "name": "ac2g"},
{"ph": "f", "id": 423, "pid": 9, "tid": 4, "ts": 1400.0, "cat": "ac2g", "name": "ac2g", "bp": "e"}
]}"#;

#[test]
fn mtia_device_events_are_device_ops_with_their_launch() {
    let mut m = MemOpener::new();
    m.add("run/mtia_rank_0.json", TRACE.as_bytes().to_vec());
    let mut inv = Inventory::from_paths(&m.list());
    proflens::parse::metadata::read_side_files(&mut inv, &m);
    assert_eq!(inv.ranks.len(), 1);
    let plan = proflens::engine::Plan {
        anomaly: Some(AnomalyConfig::spec_defaults()),
        ..proflens::engine::Plan::none()
    };
    let store = proflens::engine::run(&inv, &m, plan, &mut |_| ControlFlow::Continue(()));
    let ranks = store.anomaly_ranks().unwrap();
    let r = ranks[0];
    assert_eq!(
        r.problems.count("GPU-RUN-001"),
        0,
        "{:?}",
        r.problems.kept()
    );
    assert!(proflens::analysis::gpu_rank::no_device_events(&r.result.limitations).is_none());
    let t = r.gpu.as_deref().unwrap();
    assert_eq!(t.device_ops.len(), 3);
    // The kernel is launched by its runFunction (the same correlation): 1020 µs.
    let k = kernel_table(t);
    assert_eq!(k.len(), 3);
    assert_eq!(k.launch_ns(0), Some(1_020_000));
    assert_eq!((k.launch_ns(1), k.launch_ns(2)), (None, None));
    // Kernels and DMA by name (HTA's `^dma` memory pattern); a DMA without `stream` is on
    // its thread (801).
    let names = name_table(t);
    let rows: Vec<(&str, Category, u64, i64)> = names
        .rows
        .iter()
        .map(|r| (r.name.as_str(), r.category, r.count, r.total_ns))
        .collect();
    assert_eq!(
        rows,
        vec![
            (
                "customized_fba_mul_const-dtype_Float",
                Category::Compute,
                1,
                124_768
            ),
            ("dma_request", Category::Memory, 2, 56_160),
        ]
    );
    assert_eq!(names.rows[1].streams, vec![(9, 102), (9, 801)]);
    assert_eq!(r.kernels.len(), 3);
}
