use std::sync::Arc;

use super::*;
use crate::base::Problems;
use crate::ingest::gzip::gzip_bytes;
use crate::ingest::MemOpener;
use crate::ingest::{ChunkReader, Progress};
use crate::model::gpu::{DeviceOpKind, FlowKind};
use crate::parse::trace_json::diag;

fn go() -> impl FnMut(Progress) -> ControlFlow<()> {
    |_| ControlFlow::Continue(())
}

fn parse(text: &[u8]) -> (GpuTrace, KinetoInfo) {
    read(Box::new(text), "t.json", Some(text.len() as u64), &mut go()).unwrap()
}

/// 2023+ categories, members before and after the events, string pids, float ts with ns
/// fractions, flows in both orders, a `[memory]` sample, steps as user_annotation and cpu_op.
const MODERN: &str = r#"{
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA L20", "totalGlobalMem": 47677177856, "computeMajor": 8, "computeMinor": 9, "numSms": 92}],
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
  "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 10, "tid": 10, "ts": 4541015316353.111, "dur": 100.5},
    {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#7", "pid": 10, "tid": 10, "ts": 4541015316353.111, "dur": 100.5},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 4541015316360.0005, "dur": 2, "args": {"correlation": 42, "External id": 9}},
    {"ph": "s", "id": 42, "pid": 10, "tid": 10, "ts": 4541015316360.0005, "cat": "ac2g", "name": "ac2g"},
    {"ph": "f", "id": 42, "pid": 0, "tid": 7, "ts": 4541015316370, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "f", "id": 43, "pid": 0, "tid": 7, "ts": 4541015316380, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "s", "id": 43, "pid": 10, "tid": 10, "ts": 4541015316365, "cat": "ac2g", "name": "ac2g"},
    {"ph": "f", "id": 44, "pid": 10, "tid": 10, "ts": 4541015316390, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "X", "cat": "kernel", "name": "void gemm<[1]>(float*)", "pid": 0, "tid": 7, "ts": 4541015316370, "dur": 10.25, "args": {"device": 0, "stream": 7, "correlation": 42, "External id": 9}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 20, "ts": 4541015316380, "dur": 1, "args": {"device": 0, "stream": 20, "correlation": 43}},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 4541015316390, "dur": 0.5, "args": {"device": 0, "stream": 7}},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "fwd", "pid": 0, "tid": 7, "ts": 4541015316370, "dur": 30, "args": {"device": 0, "stream": 7}},
    {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 4541015316395, "dur": 3},
    {"ph": "X", "cat": "python_function", "name": "train.py(12): step", "pid": "CPU functions", "tid": "thread 1", "ts": 4541015316350, "dur": 200},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10, "tid": 10, "ts": 4541015316361, "args": {"Total Reserved": 2097152, "Total Allocated": 512, "Bytes": 512, "Addr": 139, "Device Id": 0, "Device Type": 1}},
    {"name": "process_name", "ph": "M", "pid": 10, "tid": 0, "args": {"name": "python"}},
    {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 4541015316500}
  ],
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1767189312000000000,
  "traceName": "/tmp/x.json"
}"#;

#[test]
fn modern_trace_every_table_exact() {
    let (t, info) = parse(MODERN.as_bytes());
    assert_eq!(info.scan.events, 17);
    assert!(info.scan.error.is_none() && info.scan.truncated_at.is_none());
    // facts, including the base that comes after the events
    assert_eq!(t.facts.base_time_ns, Some(1_767_189_312_000_000_000));
    assert_eq!(t.facts.display_time_unit.as_deref(), Some("ms"));
    assert_eq!(t.facts.distributed.as_ref().and_then(|d| d.rank), Some(3));
    assert_eq!(t.facts.devices[0].name, "NVIDIA L20");
    assert_eq!(t.facts.devices[0].compute, Some((8, 9)));
    assert_eq!(t.facts.trace_name.as_deref(), Some("/tmp/x.json"));
    // device ops: exact ns, sorted by (start, stream)
    let ops: Vec<(DeviceOpKind, i64, i64, i64, i64)> = t
        .device_ops
        .iter()
        .map(|d| (d.kind, d.stream, d.start_ns, d.end_ns, d.correlation))
        .collect();
    assert_eq!(
        ops,
        vec![
            (
                DeviceOpKind::Kernel,
                7,
                4_541_015_316_370_000,
                4_541_015_316_380_250,
                42
            ),
            (
                DeviceOpKind::Memcpy,
                20,
                4_541_015_316_380_000,
                4_541_015_316_381_000,
                43
            ),
            (
                DeviceOpKind::Memset,
                7,
                4_541_015_316_390_000,
                4_541_015_316_390_500,
                -1
            ),
        ]
    );
    assert_eq!(t.text(t.device_ops[0].name), "void gemm<[1]>(float*)");
    assert_eq!(
        t.epoch_ns(t.device_ops[0].start_ns),
        Some(1_771_730_327_316_370_000)
    );
    // host ops: the runtime call keeps its ns fraction (…360.0005 µs → …360_000.5 ns → half-even)
    let rt = t
        .host_ops
        .iter()
        .find(|h| h.kind == HostKind::CudaRuntime)
        .unwrap();
    assert_eq!(rt.start_ns, 4_541_015_316_360_000);
    assert_eq!((rt.correlation, rt.external_id), (42, 9));
    let idx = t.launch_index();
    assert_eq!(
        t.launch_of(&t.device_ops[0], &idx).map(|h| h.start_ns),
        Some(rt.start_ns)
    );
    let py = t
        .host_ops
        .iter()
        .find(|h| h.kind == HostKind::PythonFunction)
        .unwrap();
    assert_eq!(
        (t.text(py.pid), t.text(py.tid)),
        ("CPU functions", "thread 1")
    );
    assert_eq!(
        t.host_ops
            .iter()
            .filter(|h| h.kind == HostKind::CudaSync)
            .count(),
        1
    );
    assert_eq!(t.host_ops.len(), 5); // 2 step ranges, runtime, sync, python
    assert_eq!(t.gpu_annotations.len(), 1);
    // the step found twice (user_annotation and cpu_op) is kept once
    assert_eq!(t.steps.len(), 1);
    assert_eq!((t.steps[0].number, t.steps[0].dur_ns), (7, 100_500));
    assert_eq!(t.steps[0].from, HostKind::UserAnnotation);
    // flows paired in either order; the lone `f` counted
    let flows: Vec<(FlowKind, i64, i64, i64)> = t
        .flows
        .iter()
        .map(|f| (f.kind, f.id, f.launch_ns, f.arrive_ns))
        .collect();
    assert_eq!(
        flows,
        vec![
            (
                FlowKind::Ac2g,
                42,
                4_541_015_316_360_000,
                4_541_015_316_370_000
            ),
            (
                FlowKind::Ac2g,
                43,
                4_541_015_316_365_000,
                4_541_015_316_380_000
            ),
        ]
    );
    assert_eq!(info.unpaired_flows, 1);
    assert_eq!(t.memory.len(), 1);
    assert_eq!(
        (
            t.memory[0].device_id,
            t.memory[0].bytes,
            t.memory[0].total_reserved
        ),
        (0, 512, 2_097_152)
    );
    assert_eq!(
        info.not_kept,
        vec![("M".to_string(), 1), ("i".to_string(), 1)]
    );
}

/// The 2021 names (tb_plugin sample): `Operator`, `Runtime`, `Kernel`, `Memcpy`, `Memset`.
#[test]
fn old_category_names() {
    let text = br#"[
      {"ph": "X", "cat": "Operator", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 100, "dur": 50},
      {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 101, "dur": 1, "args": {"correlation": 5}},
      {"ph": "X", "cat": "Runtime", "name": "hipLaunchKernel", "pid": 1, "tid": 1, "ts": 102, "dur": 1, "args": {"correlation": 6}},
      {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": "stream 7", "ts": 110, "dur": 4, "args": {"device": 0, "stream": 7, "correlation": 5}},
      {"ph": "X", "cat": "Memcpy", "name": "Memcpy DtoH", "pid": 0, "tid": 3, "ts": 120, "dur": 2},
      {"ph": "X", "cat": "Memset", "name": "Memset", "pid": 0, "tid": 3, "ts": 125, "dur": 1},
      {"ph": "s", "id": 5, "pid": 1, "tid": 1, "ts": 101, "cat": "async", "name": "launch"},
      {"ph": "f", "id": 5, "pid": 0, "tid": 7, "ts": 110, "cat": "async", "name": "launch", "bp": "e"}
    ]"#;
    let (t, info) = parse(text);
    assert_eq!(t.kind_counts(), [1, 1, 1]);
    // no args.stream: the numeric tid; no args.device: the pid
    assert_eq!((t.device_ops[1].device, t.device_ops[1].stream), (0, 3));
    assert_eq!(t.steps.len(), 1);
    assert_eq!(t.steps[0].from, HostKind::CpuOp);
    let kinds: Vec<HostKind> = t.host_ops.iter().map(|h| h.kind).collect();
    assert_eq!(
        kinds,
        vec![HostKind::CpuOp, HostKind::CudaRuntime, HostKind::HipRuntime]
    );
    assert_eq!(t.flows.len(), 1);
    assert_eq!(t.flows[0].kind, FlowKind::AsyncCpuToGpu);
    assert_eq!(info.unpaired_flows, 0);
}

/// Windows paths with raw backslashes are kept verbatim and located by line, column, byte;
/// `[`/`]` inside strings do not disturb the event split.
#[test]
fn raw_backslashes_are_kept_verbatim_and_located() {
    let text = "{\"traceEvents\": [\n  {\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"D:\\work\\new\\train.py(12): forward\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"dur\": 1},\n  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a[0]] ]}[{\", \"pid\": 1, \"tid\": 1, \"ts\": 6, \"dur\": 1},\n  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ok\\\\path\", \"pid\": 1, \"tid\": 1, \"ts\": 7, \"dur\": 1}\n]}";
    let bytes = text.as_bytes().to_vec();
    let mut opener = MemOpener::new();
    opener.add("run/[rank 0]/w.pt.trace.json", bytes.clone());
    let mut problems = Problems::new();
    let (t, info) = read_located(
        &opener,
        "run/[rank 0]/w.pt.trace.json",
        Some(bytes.len() as u64),
        &mut go(),
        &mut problems,
    )
    .unwrap();
    let t = t.into_one().unwrap();
    let names: Vec<&str> = t.host_ops.iter().map(|h| t.text(h.name)).collect();
    // verbatim: `\n` of `\new` is NOT decoded (the string is a path, not JSON text)
    assert_eq!(
        names,
        vec![
            "D:\\work\\new\\train.py(12): forward",
            "a[0]] ]}[{",
            "ok\\path"
        ]
    );
    assert_eq!(info.raw_backslash, 1);
    let byte = text.find("D:\\work").unwrap() as u64 + 2;
    assert_eq!(info.raw_backslash_at, vec![(byte, "name")]);
    let col = byte - text.find("\n  {").unwrap() as u64 - 1 + 1;
    let p: Vec<_> = problems
        .kept()
        .iter()
        .filter(|p| p.code == codes::RAW_BACKSLASH)
        .collect();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].at.line, Some(2));
    assert_eq!(p[0].at.byte, Some(byte));
    assert!(
        p[0].message
            .contains(&format!("at line 2, column {col}, byte {byte}")),
        "{}",
        p[0].message
    );
    assert_eq!(col, 52); // 2 spaces + `{"ph": "X", ` + `"cat": "python_function", ` + `"name": "D:` = 51 bytes
                         // the same through gzip: the location is in the inflated text
    let gz = gzip_bytes(&bytes);
    opener.add("w.json.gz", gz.clone());
    let mut problems = Problems::new();
    let (t2, _) = read_located(
        &opener,
        "w.json.gz",
        Some(gz.len() as u64),
        &mut go(),
        &mut problems,
    )
    .unwrap();
    assert_eq!(t2.into_one().unwrap().host_ops.len(), 3);
    assert!(problems
        .kept()
        .iter()
        .any(|p| p.code == codes::RAW_BACKSLASH && p.at.line == Some(2)));
}

#[test]
fn line_columns_counts_lines_across_reads() {
    let text = b"ab\ncd\n\nefg";
    let got = diag::line_columns(&text[..], &[0, 1, 3, 6, 9, 50]).unwrap();
    assert_eq!(
        got,
        vec![
            Some((1, 1)),
            Some((1, 2)),
            Some((2, 1)),
            Some((3, 1)),
            Some((4, 3)),
            None
        ]
    );
}

/// A file cut inside an event keeps the events before it; bytes after the end are reported.
#[test]
fn truncated_end_and_events_after_the_end() {
    let cut = br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"stream": 7}}, {"ph": "X", "cat": "ker"#;
    let (t, info) = parse(cut);
    assert_eq!(t.device_ops.len(), 1);
    assert_eq!(info.scan.truncated_at, Some(cut.len() as u64));
    assert_eq!(info.scan.cut_event_at, Some(122)); // the second `{"ph"`
    let mut p = Problems::new();
    push_problems("t.json", &info, &[], &mut p);
    assert!(p
        .kept()
        .iter()
        .any(|p| p.code == "GPU-TV-001" && p.at.byte == Some(cut.len() as u64)));
    let after = br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1}]}
{"ph": "X", "cat": "kernel", "name": "late", "pid": 0, "tid": 7, "ts": 2, "dur": 1}"#;
    let (t, info) = parse(after);
    assert_eq!(t.device_ops.len(), 1);
    assert_eq!(info.scan.diag.trailing_at, Some(100)); // the `{` of the late event, after `]}\n`
    let mut p = Problems::new();
    push_problems("t.json", &info, &[], &mut p);
    assert!(p
        .kept()
        .iter()
        .any(|p| p.code == "GPU-TV-008" && p.at.byte == Some(100)));
}

/// A gzip stream cut mid-way: the events inflated before the cut are kept and the problem says
/// where (compressed bytes) and what.
#[test]
fn gzip_cut_mid_stream_keeps_the_events_before() {
    let mut text = String::from("{\"traceEvents\": [\n");
    for i in 0..20_000 {
        text.push_str(&format!(
            "{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k{}\", \"pid\": 0, \"tid\": 7, \"ts\": {}, \"dur\": 1, \"args\": {{\"stream\": 7, \"correlation\": {i}}}}},\n",
            i % 97,
            i * 3
        ));
    }
    text.push_str("{}]}");
    let gz = gzip_bytes(text.as_bytes());
    let (full, _) = read(
        Box::new(&gz[..]),
        "t.json.gz",
        Some(gz.len() as u64),
        &mut go(),
    )
    .unwrap();
    assert_eq!(full.device_ops.len(), 20_000);
    let cut = &gz[..gz.len() / 2];
    let mut last = 0;
    let (t, info) = read(
        Box::new(cut),
        "t.json.gz",
        Some(cut.len() as u64),
        &mut |p| {
            last = p.bytes_done;
            assert_eq!(p.bytes_total, Some(cut.len() as u64));
            ControlFlow::Continue(())
        },
    )
    .unwrap();
    let n = t.device_ops.len();
    assert!(n > 1000 && n < 20_000, "{n}");
    // the kept events are exactly the first n of the full file
    assert!(t
        .device_ops
        .iter()
        .zip(&full.device_ops)
        .all(|(a, b)| a == b));
    assert!(last <= cut.len() as u64 && last > 0);
    assert_eq!(info.compressed_bytes, Some(cut.len() as u64));
    let mut p = Problems::new();
    push_problems("t.json.gz", &info, &[], &mut p);
    // A cut `.gz` is a cut trace (formats.md §8): the plain file's warning, at the byte where
    // the inflated text ends, with the compressed bytes read; no read error.
    assert_eq!(p.count("GPU-TV-004"), 0);
    let cut = p
        .kept()
        .iter()
        .find(|p| p.code == "GPU-TV-001")
        .expect("a located cut");
    assert_eq!(cut.severity, crate::base::Severity::Warning);
    assert_eq!(cut.at.byte, info.scan.truncated_at);
    let end = cut.at.byte.unwrap();
    assert!(
        cut.message.starts_with(&format!(
            "t.json.gz ends early (at byte {end} of its inflated text, inside the event that starts at byte "
        )),
        "{}",
        cut.message
    );
    assert!(
        cut.message.contains(&format!(
            "): the gzip stream is cut short (the file ends before the compressed data does), after {0} compressed bytes of {0}; events read so far are used ({n} events;",
            gz.len() / 2
        )),
        "{}",
        cut.message
    );
}

/// A Chrome trace without any device op is a host-only trace, not an error.
#[test]
fn host_only_trace_is_not_an_error() {
    let text = br#"{"deviceProperties": [], "traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 1.5, "dur": 2}]}"#;
    let (t, info) = parse(text);
    assert!(!t.has_device_ops());
    assert_eq!(t.host_ops.len(), 1);
    assert!(info.scan.error.is_none());
}

/// Bad members and unreadable `ts` are located, the rest read.
#[test]
fn bad_member_and_bad_ts() {
    let text = br#"{"distributedInfo": [1], "baseTimeNanoseconds": "x", "traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": NaN, "dur": 2},
      {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 3, "dur": 2}]}"#;
    let (t, info) = parse(text);
    assert_eq!(t.host_ops.len(), 1);
    assert_eq!(
        info.bad_members,
        vec![
            ("distributedInfo".to_string(), 20),
            ("baseTimeNanoseconds".to_string(), 48)
        ]
    );
    let mut p = Problems::new();
    push_problems("t.json", &info, &[], &mut p);
    let codes: Vec<&str> = p.kept().iter().map(|p| p.code).collect();
    assert_eq!(codes, vec!["GPU-TV-003", "GPU-TV-018", "GPU-TV-018"]);
}

/// Every text of the `cat` fast path is one `category` names, and reads as the general
/// decoding reads it.
#[test]
fn cat_fast_path_texts_are_categories() {
    for c in CATS {
        assert!(
            !matches!(category(c, ""), Cat::Host(HostKind::Other)),
            "{c}"
        );
        let raw = format!("\"{c}\"");
        assert_eq!(
            cat_text(Some(raw.as_bytes())),
            as_str(raw.as_bytes()).unwrap()
        );
    }
    assert_eq!(cat_text(Some(br#""cpu\u005fop""#)), "cpu_op");
    assert_eq!(cat_text(Some(b"7")), "");
    assert_eq!(cat_text(None), "");
}

/// The row tables are sized once, from the first 4 MiB of events and the file's plain size:
/// before the probe nothing is reserved; after it each table holds room for the rest of the
/// file at the density seen (+5 %); a reservation the allocator refuses is skipped, not fatal.
#[test]
fn tables_are_sized_once_from_the_first_event_bytes() {
    let kernel = br#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 1, "args": {"stream": 7}}"#;
    let op = br#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 1}"#;
    let mut b = KinetoBuilder::sized_for(40 << 20);
    for k in 0..100u64 {
        let _ = b.event(kernel, k * 1000);
        let _ = b.event(op, k * 1000 + 500);
    }
    assert_eq!(b.b.t.device_ops.len(), 100);
    assert!(
        b.b.t.device_ops.capacity() < 1000,
        "nothing reserved before 4 MiB"
    );
    // The first event at or past 4 MiB: 100 rows in 4 MiB, 36 MiB to go → 900 × 1.05 = 945 more.
    let _ = b.event(kernel, 4 << 20);
    assert!(b.sized_for.is_none());
    assert!(
        b.b.t.device_ops.capacity() >= 100 + 945,
        "{}",
        b.b.t.device_ops.capacity()
    );
    assert!(b.b.t.host_ops.capacity() >= 100 + 945);
    assert!(
        b.b.t.flows.capacity() < 1000,
        "no flows seen, none reserved"
    );
    // A size no allocator can give: the reservation is skipped and the read goes on.
    let mut huge = KinetoBuilder::sized_for(u64::MAX);
    let _ = huge.event(kernel, 0);
    let _ = huge.event(kernel, 4 << 20);
    assert_eq!(huge.b.t.device_ops.len(), 2);
    // The tables read are the same with and without sizing.
    let sized = parse(MODERN.as_bytes());
    let mut plain = KinetoBuilder::new();
    let scan = crate::parse::trace_json::splitter::for_each_member_and_indexed_event(
        &mut ChunkReader::new(Box::new(MODERN.as_bytes()), None),
        &Arc::from("t.json"),
        &mut go(),
        &mut |_, _, _| {},
        &mut |ev, at| plain.indexed_event(ev, at),
    )
    .unwrap();
    let (plain_trace, _) = plain.finish(scan);
    assert_eq!(sized.0.device_ops, plain_trace.device_ops);
    assert_eq!(sized.0.host_ops, plain_trace.host_ops);
}

#[test]
fn input_dims_are_kept_in_one_compact_spelling() {
    let mut out = Vec::new();
    for raw in [
        &b"[[1, 512], [1, 512], []]"[..],
        b"[\n  [\n    1,\n    512\n  ],\n  [1,512],\n  []\n]",
        b"[[1,512],[1,512],[]]",
    ] {
        compact_json(raw, &mut out);
        assert_eq!(out, b"[[1, 512], [1, 512], []]");
    }
    // Strings keep their inside as written.
    compact_json(br#"["a ,\" b",  1]"#, &mut out);
    assert_eq!(out, br#"["a ,\" b", 1]"#);
}

/// A raw control byte and invalid UTF-8 in a kept string are located at the offending byte's
/// absolute offset in the file (GPU-TV-005 / GPU-TV-006), however the reads cut the events.
#[test]
fn string_flaws_at_the_offending_byte_across_reads() {
    let mut j = b"{\"schemaVersion\": 1, \"traceEvents\": [\n".to_vec();
    j.extend_from_slice(br#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 5, "dur": 1},"#);
    j.extend_from_slice(b"\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::\x1fadd\", \"pid\": 1, \"tid\": 1, \"ts\": 6, \"dur\": 1},");
    j.extend_from_slice(b"\n{\"ph\": \"X\", \"cat\": \"kernel\", \"pid\": 0, \"tid\": 7, \"ts\": 7, \"dur\": 1, \"name\": \"gemm<\xc3\xa9\xc3>\", \"args\": {\"device\": 0, \"stream\": 7}}\n]}");
    let ctl = j.iter().position(|&b| b == 0x1f).unwrap() as u64;
    let bad = j.windows(2).position(|w| w == b"\xc3>").unwrap() as u64;
    for chunk in [1, 2, 3, 5, 7, 16, 61, 4096] {
        let mut reader = ChunkReader::with_sizes(&j[..], None, chunk, 1 << 20);
        let b = std::cell::RefCell::new(KinetoBuilder::new());
        let file: Arc<str> = Arc::from("t.json");
        let scan = crate::parse::trace_json::for_each_member_and_indexed_event(
            &mut reader,
            &file,
            &mut go(),
            &mut |k, v, at| b.borrow_mut().member(k, v, at),
            &mut |ev, at| b.borrow_mut().indexed_event(ev, at),
        )
        .unwrap();
        let (_, info) = b.into_inner().finish(scan);
        let d = &info.scan.diag;
        assert_eq!(
            d.seen(diag::Issue::InvalidString).first,
            vec![ctl],
            "chunk {chunk}"
        );
        assert_eq!(
            d.seen(diag::Issue::InvalidUtf8).first,
            vec![bad],
            "chunk {chunk}"
        );
        let mut problems = Problems::new();
        diag::push_problems("t.json", &info.scan, &diag::KINETO, &mut problems);
        let at = |code: &str| {
            problems
                .kept()
                .iter()
                .find(|p| p.code == code)
                .and_then(|p| p.at.byte)
        };
        assert_eq!((at("GPU-TV-006"), at("GPU-TV-005")), (Some(ctl), Some(bad)));
    }
}
