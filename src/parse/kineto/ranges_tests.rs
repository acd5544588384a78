//! Any cut of a trace into byte ranges gives what one reader gives (formats.md §8.2): the
//! tables, the strings in their order, the report and the findings with their byte offsets.

use std::io::Read;
use std::ops::ControlFlow;

use super::ranges::{find_start, read_cut, REREADS};
use super::{read_traces, KinetoInfo, Traces};
use crate::ingest::MemOpener;
use crate::model::gpu::GpuTrace;
use crate::model::strings::StrId;
use crate::parse::trace_json::ranges_tests::{check_cuts_with, starts, Rng};
use crate::parse::trace_json::splitter::After;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures");

fn dump_trace(t: &GpuTrace) -> String {
    let pool: Vec<&str> = (0..t.pool.len())
        .map(|i| t.pool.get(StrId::from_index(i as u32)))
        .collect();
    format!(
        "{pool:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        t.device_ops,
        t.host_ops,
        t.gpu_annotations,
        t.steps,
        t.flows,
        t.memory,
        t.facts,
        t.evidence,
        t.nccl
    )
}

fn dump(r: &Result<(Traces, KinetoInfo), crate::parse::ParseError>) -> String {
    match r {
        Err(e) => format!("error {e}"),
        Ok((Traces::One(t), info)) => format!("one\n{}\n{info:?}", dump_trace(t)),
        Ok((Traces::Ranks(s), info)) => {
            let mut out = format!("split unplaced {}\n{info:?}", s.unplaced);
            for (r, t) in &s.ranks {
                out += &format!("\nrank {r}\n{}", dump_trace(t));
            }
            out
        }
    }
}

fn one_reader(bytes: &[u8]) -> String {
    let r = read_traces(
        Box::new(bytes),
        "t.json",
        Some(bytes.len() as u64),
        &mut |_| ControlFlow::Continue(()),
    );
    dump(&r)
}

/// The read with ranges starting at `cuts` (sorted, deduplicated, 0 added); `None` when the
/// cut read hands the file to one reader.
fn cut_read(bytes: &[u8], cuts: &[usize]) -> Option<String> {
    let starts = starts(cuts);
    let mut m = MemOpener::new();
    m.add("t.json", bytes.to_vec());
    let r = read_cut(&m, "t.json", bytes.len() as u64, &starts, &mut |_| {
        ControlFlow::Continue(())
    })?;
    Some(dump(&r))
}

/// [`check_cuts_with`] of the Kineto read.
fn check_cuts(name: &str, bytes: &[u8], tries: usize, seed: u64) -> usize {
    check_cuts_with(name, bytes, tries, seed, &one_reader(bytes), &cut_read)
}

fn synth(kernels: u64) -> Vec<u8> {
    let mut v = Vec::new();
    let spec = crate::engine::synth::KinetoSpec {
        kernels,
        steps: 4,
        rank: 3,
    };
    crate::engine::synth::write_kineto_trace(&mut v, &spec).unwrap();
    v
}

/// The synthetic trace with some events given a nested `args` member (arrays of objects,
/// which a pretty-printed file starts on lines of their own) and a Windows path.
fn nested(bytes: &[u8]) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(bytes).unwrap();
    let evs = v["traceEvents"].as_array_mut().unwrap();
    for (i, e) in evs.iter_mut().enumerate() {
        if i % 7 == 0 {
            if let Some(a) = e.get_mut("args").and_then(|a| a.as_object_mut()) {
                a.insert(
                    "extra".into(),
                    serde_json::json!([{"a": 1, "b": [{"c": "x,\n{"}]}, {"d": {}}]),
                );
            }
        }
    }
    v
}

#[test]
fn find_start_takes_an_element_start_after_a_line_break() {
    let t = b"{\"traceEvents\": [\n{\"a\": 1},\n  {\"b\": \"{\"},\n{\"c\": 3}]}";
    let s = find_start(t, 0, 20, true).unwrap();
    assert_eq!(s.at, 30);
    assert_eq!(s.after, After::Comma(26));
    // Not inside a string, not without a line break in a file of lines.
    let s = find_start(t, 0, 31, true).unwrap();
    assert_eq!(&t[s.at as usize..s.at as usize + 6], b"{\"c\": ");
    // One line: `,{"` patterns.
    let one = b"[{\"a\":1},{\"b\":2}, {\"c\":3}]";
    let s = find_start(one, 0, 2, false).unwrap();
    assert_eq!((s.at, s.after), (9, After::Comma(8)));
    assert!(find_start(one, 0, 20, false).is_none());
}

#[test]
fn equal_cuts_of_a_generated_trace_need_no_second_read() {
    let bytes = synth(1500);
    let want = one_reader(&bytes);
    for n in 2..6 {
        let cuts: Vec<usize> = (1..n).map(|k| bytes.len() / n * k).collect();
        REREADS.with(|r| r.set(0));
        assert_eq!(
            cut_read(&bytes, &cuts).as_deref(),
            Some(want.as_str()),
            "{n}"
        );
        assert_eq!(REREADS.with(|r| r.get()), 0, "{n} ranges");
    }
}

#[test]
fn any_cut_of_a_generated_trace_reads_the_same() {
    let bytes = synth(1500);
    let n = check_cuts("synth", &bytes, 40, 7);
    assert_eq!(n, 40, "every cut of a valid file is read by ranges");
    // Cuts in the head (before the array), in the tail (after it), both, one byte apart.
    let want = one_reader(&bytes);
    let head = memchr::memmem::find(&bytes, b"traceEvents").unwrap();
    let tail = memchr::memmem::rfind(&bytes, b"baseTimeNanoseconds").unwrap();
    let l = bytes.len();
    for cuts in [
        vec![5, 40, head],
        vec![head + 14, head + 15, head + 16],
        vec![tail - 3, tail + 5, l - 2],
        vec![3, l / 2, l / 2 + 1, tail, l - 1],
    ] {
        assert_eq!(
            cut_read(&bytes, &cuts).as_deref(),
            Some(want.as_str()),
            "{cuts:?}"
        );
    }
}

#[test]
fn any_cut_of_a_pretty_or_single_line_trace_reads_the_same() {
    let v = nested(&synth(600));
    let pretty = serde_json::to_vec_pretty(&v).unwrap();
    let line = serde_json::to_vec(&v).unwrap();
    assert!(!line.contains(&b'\n'));
    REREADS.with(|r| r.set(0));
    assert_eq!(check_cuts("pretty", &pretty, 25, 11), 25);
    // Lines of nested objects start with `{` too: some guesses are wrong and read again.
    assert!(REREADS.with(|r| r.get()) > 0);
    assert_eq!(check_cuts("one line", &line, 25, 13), 25);
    // A bare array, one event per line.
    let mut bare = b"[\n".to_vec();
    for (i, e) in v["traceEvents"].as_array().unwrap().iter().enumerate() {
        if i > 0 {
            bare.extend_from_slice(b",\n");
        }
        bare.extend_from_slice(&serde_json::to_vec(e).unwrap());
    }
    bare.extend_from_slice(b"\n]\n");
    assert_eq!(check_cuts("bare", &bare, 20, 17), 20);
}

#[test]
fn damaged_traces_read_the_same_or_go_to_one_reader() {
    let bytes = synth(400);
    let mut rng = Rng(99);
    // Cut short anywhere.
    for _ in 0..12 {
        let end = 1 + rng.below(bytes.len() - 1);
        check_cuts("truncated", &bytes[..end], 4, end as u64);
    }
    // Doubled, missing and trailing commas, a non-object element, a bad ts, a duplicate key,
    // a Windows path, bytes after the end.
    let text = String::from_utf8(bytes).unwrap();
    let damaged = text
        .replacen("},\n{\"ph\":\"s\"", "},,\n{\"ph\":\"s\"", 3)
        .replacen("},\n{\"ph\":\"f\"", "}\n{\"ph\":\"f\"", 5)
        .replacen(
            ",\n{\"ph\":\"X\",\"cat\":\"kernel\"",
            ",\n17,\n{\"ph\":\"X\",\"cat\":\"kernel\"",
            4,
        )
        .replacen("\"ts\":", "\"ts\":\"x\",\"tz\":", 6)
        .replacen(
            "\"name\":\"cudaLaunchKernel\"",
            "\"name\":\"cudaLaunchKernel\",\"name\":\"D:\\work\\a.py\"",
            9,
        )
        .replacen("\n  ],", ",\n  ],", 1)
        + "\n[]";
    check_cuts("damaged", damaged.as_bytes(), 30, 5);
    let no_trailing = damaged.trim_end_matches("\n[]");
    assert_eq!(check_cuts("damaged", no_trailing.as_bytes(), 30, 6), 30);
}

#[test]
fn real_traces_read_the_same_under_any_cut() {
    let files = [
        "real_world/deepseek-ai__profile-data/train.json",
        "real_world/AMD-AGI__TraceLens/tests/traces/b200/eager_trace.json.gz",
        "real_world/AMD-AGI__TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz",
        "ascend/facebookresearch__HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-0.json.gz",
        "ascend/facebookresearch__HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
        "ascend/facebookresearch__HolisticTraceAnalysis/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
    ];
    let mut read = 0;
    for (k, f) in files.iter().enumerate() {
        let Ok(raw) = std::fs::read(format!("{FIX}/{f}")) else {
            continue;
        };
        let mut z = crate::ingest::gzip::maybe_gunzip(Box::new(&raw[..]), None).unwrap();
        let mut plain = Vec::new();
        z.reader.read_to_end(&mut plain).unwrap();
        let n = check_cuts(f, &plain, 6, 31 + k as u64);
        assert_eq!(n, 6, "{f}: every cut read by ranges");
        read += 1;
    }
    assert!(read > 0, "no fixture found under {FIX}");
}

#[test]
fn merged_traces_split_the_same_under_any_cut() {
    // Three ranks by `args.rank` (every third op of another rank; flows carry none), and
    // three by the device ops' `pid` prefix.
    let text = String::from_utf8(synth(900)).unwrap();
    let mut by_arg = String::new();
    for (i, piece) in text.split("\"args\":{\"External id\":").enumerate() {
        if i > 0 {
            by_arg += &format!("\"args\":{{\"rank\":{},\"External id\":", (i / 5) % 3);
        }
        by_arg += piece;
    }
    let one = one_reader(by_arg.as_bytes());
    assert!(one.starts_with("split"), "a merged trace is split");
    assert_eq!(check_cuts("by arg", by_arg.as_bytes(), 25, 41), 25);
    let mut by_pid = String::new();
    for (i, piece) in text.split("\"pid\":0,").enumerate() {
        if i > 0 {
            by_pid += &format!("\"pid\":{},", (i / 7 % 3) * 100_000_000);
        }
        by_pid += piece;
    }
    assert!(one_reader(by_pid.as_bytes()).starts_with("split"));
    assert_eq!(check_cuts("by pid", by_pid.as_bytes(), 25, 43), 25);
}

#[test]
fn progress_sums_the_ranges_and_a_break_stops_them() {
    let bytes = synth(20_000);
    let size = bytes.len() as u64;
    let mut m = MemOpener::new();
    m.add("t.json", bytes);
    let starts = [0, size / 3, size / 3 * 2];
    let mut seen = Vec::new();
    let r = read_cut(&m, "t.json", size, &starts, &mut |p| {
        seen.push(p);
        ControlFlow::Continue(())
    });
    assert!(matches!(r, Some(Ok(_))));
    assert!(seen
        .iter()
        .all(|p| p.bytes_total == Some(size) && p.bytes_done <= size));
    assert!(seen.windows(2).all(|w| w[0].bytes_done <= w[1].bytes_done));
    assert_eq!(seen.last().map(|p| p.bytes_done), Some(size));
    // Cancel at the first report: every range stops at its next read.
    let r = read_cut(&m, "t.json", size, &starts, &mut |_| ControlFlow::Break(()));
    match r {
        Some(Ok((_, info))) => assert!(info.scan.stopped),
        None => {}
        Some(Err(e)) => panic!("{e}"),
    }
}
