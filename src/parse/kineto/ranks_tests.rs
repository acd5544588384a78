//! Merged multi-rank traces (gpu-traces.md §6): told apart by `args.rank` or the device ops'
//! `pid` / 10^8, reported once; one rank with large pids is never flagged.

use std::ops::ControlFlow;

use super::*;
use crate::base::Problems;

fn parse(text: &[u8]) -> (GpuTrace, KinetoInfo) {
    read(
        Box::new(text),
        "t.json",
        Some(text.len() as u64),
        &mut |_| ControlFlow::Continue(()),
    )
    .unwrap()
}

/// A merged trace of `ranks` (TraceLens' trace fusion, gpu-traces.md §6): per rank a
/// launch and its kernel, `pid` = rank × 10^8 + pid, with or without `args.rank`.
fn merged_trace(ranks: &[i64], args_rank: bool) -> String {
    let mut evs = Vec::new();
    for &r in ranks {
        let arg = |rest: &str| {
            if args_rank {
                format!(r#"{{{rest}"rank": {r}}}"#)
            } else {
                format!(r#"{{{}}}"#, rest.trim_end_matches(", "))
            }
        };
        let host = r * 100_000_000 + 4242;
        let dev = r * 100_000_000 + r;
        evs.push(format!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": {host}, "tid": 7, "ts": {}, "dur": 2, "args": {}}}"#,
            100 + r,
            arg(&format!(r#""correlation": {}, "#, 10 + r))
        ));
        evs.push(format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "gemm", "pid": {dev}, "tid": 7, "ts": {}, "dur": 10, "args": {}}}"#,
            110 + r,
            arg(&format!(r#""device": {r}, "stream": 7, "correlation": {}, "#, 10 + r))
        ));
    }
    format!(r#"{{"traceEvents": [{}]}}"#, evs.join(",\n"))
}

fn merged_codes(info: &KinetoInfo) -> Vec<&'static str> {
    let mut p = Problems::new();
    push_problems("t.json", info, &[], &mut p);
    p.kept().iter().map(|p| p.code).collect()
}

/// Three ranks with `args.rank`: told apart by it, all events kept as one rank, one warning
/// at the first event of the second rank.
#[test]
fn merged_trace_by_args_rank() {
    let text = merged_trace(&[0, 1, 2], true);
    let (t, info) = parse(text.as_bytes());
    assert_eq!(t.device_ops.len(), 3);
    let m = info.merged.clone().unwrap();
    assert_eq!(m.ranks, vec![0, 1, 2]);
    assert_eq!(m.key, RankKey::ArgsRank);
    let second = text
        .find(r#"{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100004242"#);
    assert_eq!(Some(m.second_at as usize), second);
    assert_eq!(merged_codes(&info), vec![codes::MERGED_RANKS]);
    let mut p = Problems::new();
    push_problems("t.json", &info, &[], &mut p);
    let msg = &p.kept()[0].message;
    assert!(msg.contains("3 ranks (0, 1, 2)"), "{msg}");
    assert!(msg.contains("args.rank"), "{msg}");
}

/// Two ranks without `args.rank`: told apart by the device ops' `pid` / 10^8.
#[test]
fn merged_trace_by_pid_prefix() {
    let text = merged_trace(&[0, 1], false);
    let (_, info) = parse(text.as_bytes());
    let m = info.merged.clone().unwrap();
    assert_eq!((m.ranks, m.key), (vec![0, 1], RankKey::PidPrefix));
    assert_eq!(merged_codes(&info), vec![codes::MERGED_RANKS]);
}

/// One rank is never flagged: a large host pid (≥ 10^8) beside small device pids, one rank's
/// fused pids (all of prefix 3), one `args.rank` throughout.
#[test]
fn one_rank_with_large_pids_is_not_merged() {
    let large_host = r#"{"traceEvents": [
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 123456789, "tid": 7, "ts": 1, "dur": 2, "args": {"correlation": 1}},
      {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 5, "dur": 10, "args": {"device": 0, "stream": 7, "correlation": 1}},
      {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 1, "tid": 7, "ts": 5, "dur": 10, "args": {"device": 1, "stream": 7, "correlation": 2}}]}"#;
    for text in [
        large_host.to_string(),
        merged_trace(&[3], false),
        merged_trace(&[3], true),
    ] {
        let (t, info) = parse(text.as_bytes());
        assert!(t.has_device_ops());
        assert_eq!(info.merged, None, "{text}");
        assert!(merged_codes(&info).is_empty(), "{text}");
    }
}

fn parse_traces(text: &[u8]) -> (Traces, KinetoInfo) {
    read_traces(
        Box::new(text),
        "t.json",
        Some(text.len() as u64),
        &mut |_| ControlFlow::Continue(()),
    )
    .unwrap()
}

fn ranks_of(t: Traces) -> Vec<(i64, usize, usize)> {
    match t {
        Traces::Ranks(s) => s
            .ranks
            .iter()
            .map(|(r, t)| (*r, t.device_ops.len(), t.host_ops.len()))
            .collect(),
        Traces::One(_) => panic!("not split"),
    }
}

/// A splitting read deals each rank's rows to its own trace, by `args.rank` and by the pid
/// prefix alike, and says so in the warning.
#[test]
fn merged_traces_are_split_into_their_ranks() {
    for (text, ranks) in [
        (merged_trace(&[0, 1, 2], true), vec![0, 1, 2]),
        (merged_trace(&[0, 5], false), vec![0, 5]),
    ] {
        let (t, info) = parse_traces(text.as_bytes());
        assert_eq!(info.split_ranks, ranks);
        assert_eq!(info.unplaced, 0);
        let got = ranks_of(t);
        assert_eq!(got, ranks.iter().map(|&r| (r, 1, 1)).collect::<Vec<_>>());
        let mut p = Problems::new();
        push_problems("t.json", &info, &[], &mut p);
        let msg = &p.kept()[0].message;
        assert!(
            msg.contains(&format!("split into its {} ranks", ranks.len())),
            "{msg}"
        );
    }
    // Each rank's trace keeps its own kernel, at its own time.
    let (t, _) = parse_traces(merged_trace(&[0, 1], true).as_bytes());
    let Traces::Ranks(s) = t else { panic!() };
    assert_eq!(s.ranks[1].1.device_ops[0].start_ns, 111_000);
    assert_eq!(s.ranks[1].1.host_ops[0].start_ns, 101_000);
}

/// An event without `args.rank` takes the rank its `pid` carries elsewhere; one whose `pid`
/// is seen with no rank is left out and counted, never guessed.
#[test]
fn events_without_a_rank_key_follow_their_pid_or_are_counted() {
    let mut text = merged_trace(&[0, 1], true);
    let extra = r#",
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100004242, "tid": 7, "ts": 150, "dur": 3},
      {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 99, "tid": 7, "ts": 160, "dur": 3}]}"#;
    text.truncate(text.len() - 2);
    text.push_str(extra);
    let (t, info) = parse_traces(text.as_bytes());
    assert_eq!(ranks_of(t), vec![(0, 1, 1), (1, 1, 2)]);
    assert_eq!(info.unplaced, 1);
    let mut p = Problems::new();
    push_problems("t.json", &info, &[], &mut p);
    assert!(p.kept()[0].message.contains("1 events carry no rank key"));
}

/// A trace of one rank read by a splitting reader is one trace with every row.
#[test]
fn one_rank_is_never_split() {
    let text = merged_trace(&[3], true);
    let (t, info) = parse_traces(text.as_bytes());
    assert!(info.split_ranks.is_empty());
    match t {
        Traces::One(t) => assert_eq!((t.device_ops.len(), t.host_ops.len()), (1, 1)),
        Traces::Ranks(_) => panic!("split"),
    }
}
