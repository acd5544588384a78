//! Capture options read from what the data holds (anomaly.md §1.1.1), on small Kineto traces
//! and Ascend rank folders written here: the Kineto argument names (`Input Dims`, `Input type`,
//! `Input Strides`, `Call stack`, `flops`, `Module Hierarchy`, `[memory]` events), the trace's
//! own top-level members (`"record_shapes": 1`), `profiler_info` on Ascend, and the order
//! between them; and the shapes a GPU kernel takes from the op that launched it.

mod anomaly_support;
mod engine_support;

use std::ops::ControlFlow;

use anomaly_support::*;
use proflens::analysis::anomaly::tags::Tag;
use proflens::analysis::anomaly::Capabilities;
use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::engine::read::RankAnalysis;

/// A Kineto trace (one GPU) with `top` extra top-level members (`"k": v,` each) and `events`.
fn kineto(top: &str, events: &[String]) -> String {
    format!(
        r#"{{"schemaVersion":1,{top}"deviceProperties":[{{"id":0,"name":"NVIDIA L20"}}],"traceEvents":[
{}
]}}"#,
        events.join(",\n")
    )
}

/// One `ProfilerStep#n` at `ts` µs (90 µs), a cpu_op `op` inside it with `args` (raw JSON
/// members), the op's launch and its kernel (correlation `n`) on stream 7.
fn step(n: u32, ts: f64, op: &str, args: &str) -> Vec<String> {
    vec![
        format!(
            r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{n}","pid":1,"tid":1,"ts":{ts},"dur":90}}"#
        ),
        format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"{op}","pid":1,"tid":1,"ts":{},"dur":20,"args":{{"External id":{n}{args}}}}}"#,
            ts + 1.0
        ),
        format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":5,"args":{{"External id":{n},"correlation":{}}}}}"#,
            ts + 2.0,
            1000 + n
        ),
        format!(
            r#"{{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":{},"dur":40,"args":{{"device":0,"stream":7,"correlation":{},"External id":{n}}}}}"#,
            ts + 10.0,
            1000 + n
        ),
    ]
}

fn gpu(top: &str, events: &[String]) -> RankAnalysis {
    let mut v = run_files(
        &[("run/rank0.pt.trace.json", kineto(top, events))],
        &AnomalyConfig::spec_defaults(),
    );
    assert_eq!(v.len(), 1);
    v.remove(0)
}

/// `(option, on, source)` of the five options.
fn caps(c: &Capabilities) -> [(&'static str, bool, &'static str); 5] {
    [
        ("record_shapes", c.record_shapes, c.record_shapes_source),
        ("with_stack", c.with_stack, c.with_stack_source),
        ("profile_memory", c.profile_memory, c.profile_memory_source),
        ("with_flops", c.with_flops, c.with_flops_source),
        ("with_modules", c.with_modules, c.with_modules_source),
    ]
}

const SHAPES: &str = r#","Input Dims":[[64, 128], [128, 32]],"Input type":["float", "float"],"Input Strides":[[128, 1], [32, 1]]"#;

#[test]
fn kineto_shapes_arguments_mean_record_shapes_on() {
    // The issue: every trace recorded with record_shapes=True read as "record_shapes off".
    let r = gpu("", &step(1, 0.0, "aten::mm", SHAPES));
    let c = &r.result.capabilities;
    assert_eq!(caps(c)[0], ("record_shapes", true, "trace"));
    assert!(!r
        .result
        .limitations
        .iter()
        .any(|l| l.starts_with("record_shapes off")));
    // Each of the shape arguments alone is enough.
    for arg in [
        r#","Input Dims":[[]]"#,
        r#","Input type":["float"]"#,
        r#","Input Strides":[[1]]"#,
        r#","Concrete Inputs":["1"]"#,
    ] {
        let r = gpu("", &step(1, 0.0, "aten::add", arg));
        assert_eq!(
            caps(&r.result.capabilities)[0],
            ("record_shapes", true, "trace"),
            "{arg}"
        );
    }
}

#[test]
fn every_option_is_read_from_the_events_that_hold_it() {
    let mut ev = step(
        1,
        0.0,
        "aten::mm",
        r#","Input Dims":[[2, 2]],"Call stack":"train.py(3): main","flops":16,"Module Hierarchy":"top.linear""#,
    );
    ev.push(r#"{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":3,"args":{"Device Type":1,"Device Id":0,"Bytes":512,"Total Allocated":512,"Total Reserved":2048}}"#.into());
    let r = gpu("", &ev);
    assert_eq!(
        caps(&r.result.capabilities),
        [
            ("record_shapes", true, "trace"),
            ("with_stack", true, "trace"),
            ("profile_memory", true, "trace"),
            ("with_flops", true, "trace"),
            ("with_modules", true, "trace"),
        ]
    );
    // A python_function event is stack evidence too.
    let mut ev = step(1, 0.0, "aten::add", "");
    ev.push(r#"{"ph":"X","cat":"python_function","name":"train.py(3): main","pid":1,"tid":1,"ts":0.5,"dur":50}"#.into());
    let r = gpu("", &ev);
    assert_eq!(
        caps(&r.result.capabilities)[1],
        ("with_stack", true, "trace")
    );
}

#[test]
fn the_trace_top_level_members_decide_when_the_events_hold_nothing() {
    // Newer PyTorch writes `"with_flops": 1` … for the options that were on; an option can be on
    // with no op that writes its output (no matmul: no `flops`).
    let top = r#""record_shapes":1,"with_stack":true,"profile_memory":"1","with_flops":1,"with_modules":0,"#;
    let r = gpu(top, &step(1, 0.0, "aten::add", ""));
    assert_eq!(
        caps(&r.result.capabilities),
        [
            ("record_shapes", true, "trace_metadata"),
            ("with_stack", true, "trace_metadata"),
            ("profile_memory", true, "trace_metadata"),
            ("with_flops", true, "trace_metadata"),
            ("with_modules", false, "trace_metadata"),
        ]
    );
    // Neither: off, and said so.
    let r = gpu("", &step(1, 0.0, "aten::add", ""));
    assert_eq!(
        caps(&r.result.capabilities),
        [
            ("record_shapes", false, "absent"),
            ("with_stack", false, "absent"),
            ("profile_memory", false, "absent"),
            ("with_flops", false, "absent"),
            ("with_modules", false, "absent"),
        ]
    );
    assert!(r
        .result
        .limitations
        .iter()
        .any(|l| l == "record_shapes off: VARIABLE_SHAPE_SAME_TEMPLATE skipped"));
    // What the events hold wins over a member that says 0.
    let r = gpu(r#""record_shapes":0,"#, &step(1, 0.0, "aten::mm", SHAPES));
    assert_eq!(
        caps(&r.result.capabilities)[0],
        ("record_shapes", true, "trace")
    );
}

/// Two steps of the same kernel template whose launching op ran on other shapes.
fn two_shapes() -> Vec<String> {
    let mut ev = step(
        1,
        0.0,
        "aten::mm",
        r#","Input Dims":[[64, 128], [128, 32]]"#,
    );
    ev.extend(step(
        2,
        100.0,
        "aten::mm",
        r#","Input Dims":[[64, 128], [128, 64]]"#,
    ));
    ev
}

#[test]
fn gpu_kernels_take_the_shapes_of_the_op_that_launched_them() {
    let r = gpu("", &two_shapes());
    let k = &r.kernels;
    let shapes: Vec<&str> = (0..k.len()).map(|i| k.text(k.shapes()[i])).collect();
    assert_eq!(shapes, ["[[64, 128], [128, 32]]", "[[64, 128], [128, 64]]"]);
    // Same template, other shapes: VARIABLE_SHAPE_SAME_TEMPLATE (§5.10.3), which the GPU rank
    // never reached before (record_shapes read as off, kernels without shapes).
    let g = &r.result.groups[0];
    assert_eq!(g.steps, [0, 1]);
    assert!(g.group_tags.contains(&Tag::VariableShapeSameTemplate));
    // Without shape arguments: no shapes, no tag.
    let mut ev = step(1, 0.0, "aten::mm", "");
    ev.extend(step(2, 100.0, "aten::mm", ""));
    let r = gpu("", &ev);
    assert!(r
        .kernels
        .shapes()
        .iter()
        .all(|&s| r.kernels.text(s).is_empty()));
    assert!(!r.result.groups[0]
        .group_tags
        .contains(&Tag::VariableShapeSameTemplate));
}

#[test]
fn a_kernel_takes_the_innermost_op_around_its_launch_not_an_op_sharing_its_id() {
    // Older traces give the kernel the correlation's number as `External id` (here 1001, also
    // the id of an unrelated op): the op is the one whose span holds the launch call.
    let mut ev = step(1, 0.0, "aten::linear", r#","Input Dims":[[8, 8]]"#);
    ev.push(r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1.5,"dur":10,"args":{"External id":7,"Input Dims":[[8, 4]]}}"#.into());
    ev.push(r#"{"ph":"X","cat":"cpu_op","name":"aten::other","pid":1,"tid":1,"ts":60,"dur":5,"args":{"External id":1001,"Input Dims":[[99]]}}"#.into());
    let r = gpu("", &ev);
    assert_eq!(r.kernels.text(r.kernels.shapes()[0]), "[[8, 4]]");
}

/// An Ascend rank folder: `profiler_info_0.json` with `common_config` members `config`,
/// a kernel CSV whose `Input Shapes` cells are `shapes`, a trace with `events`, `extra` files.
fn ascend(config: &str, shapes: &str, events: &[String], extra: &[&str]) -> RankAnalysis {
    let dir = "cap/rank0_ascend_pt";
    let info = format!(
        r#"{{"config":{{"common_config":{{{config}}},"experimental_config":{{"_profiler_level":"Level1"}}}}}}"#
    );
    let k = csv_owned(&[ai("MatMul", 10.0, 40.0)]).replace("\"\"\"1,2\"\"\"", shapes);
    let mut files = vec![
        (format!("{dir}/profiler_info_0.json"), info),
        (
            format!("{dir}/ASCEND_PROFILER_OUTPUT/kernel_details.csv"),
            k,
        ),
        (
            format!("{dir}/ASCEND_PROFILER_OUTPUT/trace_view.json"),
            trace(&[(1, 0.0, 90.0)], events),
        ),
    ];
    for f in extra {
        files.push((
            format!("{dir}/ASCEND_PROFILER_OUTPUT/{f}"),
            "Name,Size(KB)\n".into(),
        ));
    }
    let files: Vec<(&str, String)> = files.iter().map(|(p, b)| (p.as_str(), b.clone())).collect();
    let mut m = proflens::ingest::MemOpener::new();
    for (p, b) in &files {
        m.add(*p, b.clone().into_bytes());
    }
    let mut inv = proflens::ingest::inventory::Inventory::from_paths(&m.list());
    proflens::parse::metadata::read_side_files(&mut inv, &m);
    let cfg = AnomalyConfig::spec_defaults();
    let (mut v, _) =
        engine_support::anomaly_run(&inv, &m, &cfg, &mut |_| ControlFlow::Continue(())).unwrap();
    assert_eq!(v.len(), 1);
    v.remove(0)
}

#[test]
fn ascend_profiler_info_decides_only_what_the_data_does_not_hold() {
    let off = r#""record_shapes":false,"with_stack":false,"profile_memory":false,"with_flops":false,"with_modules":false"#;
    // Nothing held: profiler_info's word.
    let r = ascend(off, "\"\"", &[], &[]);
    assert_eq!(
        caps(&r.result.capabilities),
        [
            ("record_shapes", false, "profiler_info"),
            ("with_stack", false, "profiler_info"),
            ("profile_memory", false, "profiler_info"),
            ("with_flops", false, "profiler_info"),
            ("with_modules", false, "profiler_info"),
        ]
    );
    // The data holds each option's output: on, from where it was found, whatever
    // profiler_info said (trace_view.json uses the Kineto argument names).
    let op = r#"{"ph":"X","name":"aten::mm","cat":"cpu_op","pid":1,"tid":1,"ts":"5.000","dur":30,"args":{"Input Dims":"8,8;\r\n8,4","Call stack":"train.py(3): main","flops":512,"Module Hierarchy":"top"}}"#.to_string();
    let r = ascend(off, "\"\"", &[op], &["operator_memory.csv"]);
    assert_eq!(
        caps(&r.result.capabilities),
        [
            ("record_shapes", true, "trace"),
            ("with_stack", true, "trace"),
            ("profile_memory", true, "memory_files"),
            ("with_flops", true, "trace"),
            ("with_modules", true, "trace"),
        ]
    );
    // CANN's kernel Input Shapes, which VARIABLE_SHAPE_SAME_TEMPLATE compares.
    let r = ascend(off, "\"\"\"8,8;8,4\"\"\"", &[], &[]);
    assert_eq!(
        caps(&r.result.capabilities)[0],
        ("record_shapes", true, "kernels")
    );
    // A `true` with nothing held stays on.
    let on = r#""record_shapes":true,"with_stack":true,"profile_memory":true,"with_flops":true,"with_modules":true"#;
    let r = ascend(on, "\"\"", &[], &[]);
    assert!(caps(&r.result.capabilities)
        .iter()
        .all(|&(_, v, s)| v && s == "profiler_info"));
}

#[test]
fn the_report_says_each_option_and_where_it_was_read() {
    let top = r#""with_flops":1,"#;
    let r = gpu(top, &step(1, 0.0, "aten::mm", SHAPES));
    let cfg = AnomalyConfig::spec_defaults();
    let md =
        proflens::report::anomaly_md::render(&r.kernels, &r.result, &r.meta, &[], &[], None, &cfg);
    assert!(md.contains("- Capture options (anomaly.md §1.1.1; where each was read): `record_shapes` on (trace), `with_stack` off (absent), `profile_memory` off (absent), `with_flops` on (trace_metadata), `with_modules` off (absent).\n"), "{md}");
}
