//! Any cut of a `trace_view.json` into byte ranges gives the call-stack index one reader gives
//! (formats.md §8.2), in both modes: the rows and flows in their order, the string and stack
//! pools in their order, the counters, the problems with their byte offsets, and the parity
//! mode's stop at the first kept event without a numeric `ts`.

use std::ops::ControlFlow;
use std::path::Path;

use super::{read_host_ops, HostOpsReader, TraceMode};
use crate::base::Problems;
use crate::ingest::{ChunkReader, MemOpener};
use crate::model::host_events::HostOpTable;
use crate::model::stacks::{StackId, StackPool};
use crate::model::strings::{StrId, StringPool};
use crate::parse::trace_json::ranges;
use crate::parse::trace_json::ranges_tests::{check_cuts_with, starts, Rng};
use crate::parse::ParseError;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures");
const FILE: &str = "r/trace_view.json";

fn dump(
    strings: &StringPool,
    stacks: &StackPool,
    problems: &Problems,
    res: &Result<(HostOpTable, super::TraceStats), ParseError>,
) -> String {
    let pool: Vec<&str> = (0..strings.len() as u32)
        .map(|i| strings.get(StrId::from_index(i)))
        .collect();
    let stack: Vec<(&str, Vec<&str>)> = (0..stacks.len() as u32)
        .map(StackId::from_index)
        .map(|s| (stacks.text(s), stacks.frames(s).collect()))
        .collect();
    let table = match res {
        Err(e) => format!("error {e:?}"),
        Ok((h, stats)) => {
            let col =
                |f: &dyn Fn(usize) -> String| -> Vec<String> { (0..h.len()).map(f).collect() };
            format!(
                "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{stats:?}",
                h.name(),
                h.ts_ns(),
                col(&|i| format!("{:?}", h.ts_us()[i].to_bits())),
                h.dur_ns(),
                h.thread(),
                col(&|i| format!("{:?}/{:?}", h.seq(i), h.fwd_tid(i))),
                col(&|i| format!("{:?}", h.stack(i))),
                h.flows(),
                h.rejected(),
                h.with_stack_count(),
            )
        }
    };
    format!(
        "{pool:?}\n{stack:?}\n{:?}\n{:?}\n{table}",
        problems.kept(),
        problems.total()
    )
}

fn one_reader(bytes: &[u8], mode: TraceMode) -> String {
    let (mut strings, mut stacks, mut problems) = Default::default();
    let mut rdr = ChunkReader::new(bytes, Some(bytes.len() as u64));
    let res = read_host_ops(
        &mut rdr,
        FILE,
        mode,
        &mut strings,
        &mut stacks,
        &mut problems,
        &mut |_| ControlFlow::Continue(()),
    );
    dump(&strings, &stacks, &problems, &res)
}

/// The read with ranges starting at `cuts` (0 added), merged into the rank's pools; `None`
/// when handed to one reader.
fn cut_read(bytes: &[u8], cuts: &[usize], mode: TraceMode) -> Option<String> {
    let starts = starts(cuts);
    let mut m = MemOpener::new();
    m.add(FILE, bytes.to_vec());
    let size = bytes.len() as u64;
    let make = |_: Option<u64>, _: u64| HostOpsReader::range(FILE, mode);
    let (parts, scan) = ranges::read_cut(&m, FILE, size, &starts, &make, &mut |_| {
        ControlFlow::Continue(())
    })?;
    let (mut strings, mut stacks, mut problems) = Default::default();
    let mut r = HostOpsReader::new(FILE, mode, &mut strings, &mut stacks, &mut problems);
    for p in parts {
        r.absorb(p);
    }
    let res = r.finish(Ok(scan));
    Some(dump(&strings, &stacks, &problems, &res))
}

/// [`check_cuts_with`] of the index read in both modes; how many cut sets were read by
/// ranges.
fn check_cuts(name: &str, bytes: &[u8], tries: usize, seed: u64) -> usize {
    let mut by_ranges = 0;
    for mode in [TraceMode::Default, TraceMode::Parity] {
        let want = one_reader(bytes, mode);
        let read = |b: &[u8], c: &[usize]| cut_read(b, c, mode);
        by_ranges += check_cuts_with(
            &format!("{name} {mode:?}"),
            bytes,
            tries,
            seed,
            &want,
            &read,
        );
    }
    by_ranges
}

fn synth_memory(target_bytes: u64) -> Vec<u8> {
    use crate::engine::synth::ascend::{memory_rng, write_memory_trace, MemoryTraceSpec};
    let (mut tv, mut ops) = (Vec::new(), Vec::new());
    let spec = MemoryTraceSpec {
        target_bytes,
        rank: 0,
    };
    write_memory_trace(&mut tv, &spec, &mut memory_rng(3), &mut ops).unwrap();
    tv
}

/// `cpu_op` events with and without stacks (the same stack spelled two ways, a bad escape,
/// a control byte, invalid UTF-8), on many threads, flows of both kinds, duplicate keys, bad
/// and missing `ts` (the parity stop) and `dur`, times out of range, malformed events.
fn damaged() -> Vec<u8> {
    let mut s = String::from("[\n");
    let mut rng = Rng(91);
    for i in 0..1200u32 {
        let (pid, tid) = (1 + rng.below(2), rng.below(5));
        let ts = 1000 + u64::from(i) * 7;
        let stack = match rng.below(6) {
            0 => String::new(),
            1 => format!(",\"Call stack\":\"m.py({}): f;\\nn.py(2): g\"", i % 13),
            2 => format!(",\"Call stack\":\"m.py({}): f;\\u000an.py(2): g\"", i % 13),
            3 => ",\"Call stack\":\"bad\\q#FF#\u{1}\"".to_string(),
            _ => format!(",\"Call stack\":\"s{}.py(1): h\"", i % 41),
        };
        let ev = match rng.below(14) {
            0..=6 => format!("{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op{}\",\"pid\":{pid},\"tid\":{tid},\"ts\":\"{ts}.25\",\"dur\":{},\"args\":{{\"Sequence number\":{},\"Fwd thread id\":{tid}{stack}}}}}", i % 29, i % 9, i % 50),
            7 => format!("{{\"ph\":\"{}\",\"cat\":\"fwdbwd\",\"name\":\"fwdbwd\",\"id\":{},\"pid\":{pid},\"tid\":{tid},\"ts\":{ts}}}", if i % 2 == 0 { "s" } else { "f" }, i / 4),
            8 => format!("{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"d\",\"name\":\"dup{}\",\"pid\":{pid},\"tid\":{tid},\"ts\":{ts},\"dur\":\"q\"{stack}}}", i % 3),
            9 => format!("{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"far\",\"pid\":{pid},\"tid\":{tid},\"ts\":9e30,\"dur\":1,\"args\":{{\"Call stack\":\"z\"}}}}"),
            10 => format!("{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"big\",\"pid\":{pid},\"tid\":{tid},\"ts\":\"9223372036854775\",\"dur\":1}}"),
            11 => format!("{{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"py#FF#\",\"pid\":{pid},\"tid\":{tid},\"ts\":{ts}}}"),
            12 if i % 3 == 0 => "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"nots\",\"args\":{\"Call stack\":\"late\"}}".to_string(),
            12 => "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"badts\",\"ts\":\"x\",\"args\":{\"Sequence number\":[1,{\"a\":2}]}}".to_string(),
            _ => "{\"ph\":\"X\",\"cat\":\"cpu_op\" \"ts\":1}".to_string(),
        };
        s += &ev;
        s += if i == 1199 { "\n" } else { ",\n" };
    }
    s += "]\n";
    // `#FF#` → the byte 0xFF (invalid UTF-8).
    let mut out = Vec::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"#FF#") {
            out.push(0xff);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

#[test]
fn cuts_of_a_generated_rank_index_what_one_reader_indexes() {
    let tv = synth_memory(400_000);
    assert!(check_cuts("synth memory", &tv, 40, 3) > 60);
    let mut kd = Vec::new();
    let mut an = Vec::new();
    let spec = crate::engine::synth::ascend::AnomalySpec {
        kernels: 600,
        steps: 3,
    };
    crate::engine::synth::ascend::write_anomaly_rank(&mut kd, &mut an, &spec).unwrap();
    check_cuts("synth anomaly", &an, 20, 5);
}

#[test]
fn cuts_of_damaged_traces_index_what_one_reader_indexes() {
    let tv = damaged();
    assert!(check_cuts("damaged", &tv, 40, 7) > 50);
    // The parity stop is met (a kept event without a numeric `ts`), in a later range.
    assert!(one_reader(&tv, TraceMode::Parity).contains("MEM-TV-003"));
    let one: Vec<u8> = tv.iter().copied().filter(|&b| b != b'\n').collect();
    check_cuts("one line", &one, 16, 9);
    check_cuts("cut short", &tv[..tv.len() * 2 / 3], 16, 11);
    let mut wrapped = b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":".to_vec();
    wrapped.extend_from_slice(&tv);
    wrapped.extend_from_slice(b"}\n");
    check_cuts("wrapped", &wrapped, 16, 13);
}

/// Every `trace_view.json` under `dir`.
fn traces(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut es: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    es.sort();
    for p in es {
        if p.is_dir() {
            traces(&p, out);
        } else if p.file_name().is_some_and(|n| n == "trace_view.json") {
            out.push(p);
        }
    }
}

#[test]
fn cuts_of_every_real_trace_view_index_what_one_reader_indexes() {
    let mut files = Vec::new();
    traces(Path::new(FIX), &mut files);
    assert!(!files.is_empty(), "no fixture found");
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        check_cuts(&f.display().to_string(), &bytes, 4, 17);
    }
}
