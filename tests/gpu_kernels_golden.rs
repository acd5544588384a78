//! Kernel categories, per-step communication/computation overlap, memory counters and the
//! straggler view on real Kineto fixtures. Expected values come from an independent reading of the same files
//! (Python `json` + `decimal`, the rules of `analysis::gpu_kernels` / `gpu_straggler`).

use std::ops::ControlFlow;

use proflens::analysis::gpu_kernels::{summarise, Category};
use proflens::analysis::gpu_memory::{per_device, AllocatedSource};
use proflens::analysis::gpu_straggler::{stragglers, RankDelay};
use proflens::analysis::intervals::Interval;
use proflens::model::gpu::GpuTrace;
use proflens::parse::kineto;

const HTA: &str = "../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data";

fn load(rel: &str) -> GpuTrace {
    let path = format!("{HTA}/{rel}");
    let f = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    kineto::read(Box::new(f), &path, None, &mut |_| ControlFlow::Continue(()))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .0
}

/// Marker windows (anomaly.md §3.2): to the next marker's start; the last one to the end of
/// the last device op starting in it.
fn marker_windows(t: &GpuTrace) -> Vec<(String, Interval)> {
    let n = t.steps.len();
    (0..n)
        .map(|i| {
            let s = t.steps[i].start_ns;
            let e = match t.steps.get(i + 1) {
                Some(next) => next.start_ns,
                None => t
                    .device_ops
                    .iter()
                    .filter(|d| d.start_ns >= s)
                    .map(|d| d.end_ns)
                    .max()
                    .unwrap_or(s),
            };
            (t.text(t.steps[i].name).to_string(), Interval::new(s, e))
        })
        .collect()
}

#[test]
fn nccl_trace_categories_and_overlap_per_step() {
    let t = load("nccl_parser_config/nccl_data.json.gz");
    let k = summarise(&t, &marker_windows(&t));
    assert_eq!(k.times.sum_ns, [115_655_847, 46_876_493, 2_653_498]);
    assert_eq!(k.times.count, [2679, 21, 1074]);
    assert_eq!(k.times.busy_ns, [115_655_847, 46_876_493, 2_653_498]);
    let rows: Vec<(&str, i64, i64, [i64; 3], i64, i64)> = k
        .steps
        .iter()
        .map(|s| {
            (
                s.step_id.as_str(),
                s.window.start_ns,
                s.window.end_ns,
                s.times.sum_ns,
                s.overlap_ns,
                s.exposed_comm_ns,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (
                "ProfilerStep#4",
                4458676416788066,
                4458676639291351,
                [38506406, 11989021, 885588],
                1825259,
                10163762
            ),
            (
                "ProfilerStep#5",
                4458676639291351,
                4458676859077781,
                [38429422, 12300029, 867415],
                1760420,
                10539609
            ),
            (
                "ProfilerStep#6",
                4458676859077781,
                4458677083431186,
                [38720019, 22587443, 900495],
                3731346,
                18856097
            ),
        ]
    );
    // The names table sums to the category totals.
    for c in [Category::Compute, Category::Communication, Category::Memory] {
        let s: i64 = k
            .by_name
            .iter()
            .filter(|n| n.category == c)
            .map(|n| n.total_ns)
            .sum();
        assert_eq!(s, k.times.sum_ns[c as usize], "{}", c.as_str());
    }
    assert!(k.by_name.windows(2).all(|w| w[0].total_ns >= w[1].total_ns));
}

#[test]
fn straggler_view_of_the_two_sampled_ranks() {
    let a = load("trace_filter/sampled_rank-0.json.gz");
    let b = load("trace_filter/sampled_rank-1.json.gz");
    let s = stragglers(&[(0, &a), (1, &b)]);
    assert_eq!(s.matched, 10);
    assert_eq!(s.per_rank_collectives, [10, 10]);
    assert_eq!(
        s.ranks,
        [
            RankDelay {
                rank: 0,
                last_count: 2,
                mean_delay_ns: 13_216_600,
                max_delay_ns: 92_521_000
            },
            RankDelay {
                rank: 1,
                last_count: 8,
                mean_delay_ns: 38_132_900,
                max_delay_ns: 164_191_000
            },
        ]
    );
    assert_eq!(s.straggler, Some(1));
    // One rank alone has no straggler.
    assert_eq!(stragglers(&[(0, &a)]).straggler, None);
}

#[test]
fn memory_counters_of_the_2021_sample_without_totals() {
    // The tb_plugin ResNet50 sample's `[memory]` events carry only `Bytes`: allocated is the
    // running sum per device; no reserved.
    let path = "../shared/fixtures/ascend/xiaobingling93-pixel__Ascend-mstt/plugins/tensorboard-plugins/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz";
    let f = std::fs::File::open(path).unwrap();
    let t = kineto::read(Box::new(f), path, None, &mut |_| ControlFlow::Continue(()))
        .unwrap()
        .0;
    let m = per_device(&t);
    let rows: Vec<_> = m
        .iter()
        .map(|d| {
            (
                d.device_type,
                d.device_id,
                d.curve.len(),
                d.allocated_source,
                d.peak_allocated,
                d.peak_reserved,
                d.curve.last().map(|c| c.1),
            )
        })
        .collect();
    let src = AllocatedSource::BytesSinceCaptureStart;
    assert_eq!(
        rows,
        [
            (
                0,
                -1,
                4618,
                src,
                (57_803_264, 1_623_142_623_704_921_000),
                None,
                Some(19_267_840)
            ),
            (
                1,
                0,
                8220,
                src,
                (2_791_636_480, 1_623_142_623_582_083_000),
                None,
                Some(0)
            ),
        ]
    );
}

/// One name that is both a kernel and a memory op with the same total time: two rows of the
/// per-name table, in the category order (compute, then memory) — the sort's last key, so the
/// order never depends on a hash map's iteration order. Values by hand.
#[test]
fn a_name_in_two_categories_is_two_rows_in_category_order() {
    let trace = br#"{"traceEvents": [
 {"ph": "X", "cat": "gpu_memcpy", "name": "copy_or_kernel", "pid": 0, "tid": 7, "ts": 100, "dur": 5},
 {"ph": "X", "cat": "kernel", "name": "copy_or_kernel", "pid": 0, "tid": 7, "ts": 200, "dur": 5},
 {"ph": "X", "cat": "kernel", "name": "longer", "pid": 0, "tid": 7, "ts": 300, "dur": 9}
]}"#;
    let t = kineto::read(Box::new(&trace[..]), "t.json", None, &mut |_| {
        ControlFlow::Continue(())
    })
    .unwrap()
    .0;
    let k = summarise(&t, &[]);
    let rows: Vec<(&str, Category, u64, i64)> = k
        .by_name
        .iter()
        .map(|r| (r.name.as_str(), r.category, r.count, r.total_ns))
        .collect();
    assert_eq!(
        rows,
        [
            ("longer", Category::Compute, 1, 9_000),
            ("copy_or_kernel", Category::Compute, 1, 5_000),
            ("copy_or_kernel", Category::Memory, 1, 5_000),
        ]
    );
}
