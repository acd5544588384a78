//! Any cut of a `trace_view.json` into byte ranges gives the anomaly trace tables one reader
//! gives (formats.md §8.2): the rows, markers, flows and device events in their order, the
//! strings and threads in their order, the report and the findings with their byte offsets.

use std::ops::ControlFlow;
use std::sync::Arc;

use super::hccl_sizes::HcclSizes;
use super::timeline::{read_cut, TimelineBuilder};
use crate::ingest::{ChunkReader, MemOpener};
use crate::model::trace_events::HostEventTable;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures");

/// A fixed-seed xorshift generator for the cut sets (shared with the Kineto cut tests).
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    /// A value in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// The range starts of cut set `cuts`: 0 added, sorted, deduplicated.
pub(crate) fn starts(cuts: &[usize]) -> Vec<u64> {
    let mut starts: Vec<u64> = cuts.iter().map(|&c| c as u64).collect();
    starts.push(0);
    starts.sort_unstable();
    starts.dedup();
    starts
}

/// Checks `tries` random cut sets of 1–7 cuts of `bytes` (positions drawn from anywhere, and
/// from the bytes `{`, `}`, `"`, `,`, line breaks and the byte after each): every set that
/// `cut_read` reads by ranges (`Some`) gives `want`, one reader's result. Returns how many
/// were read by ranges (not handed to one reader).
pub(crate) fn check_cuts_with(
    name: &str,
    bytes: &[u8],
    tries: usize,
    seed: u64,
    want: &str,
    cut_read: &dyn Fn(&[u8], &[usize]) -> Option<String>,
) -> usize {
    let mut rng = Rng(seed | 1);
    let marks: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| matches!(b, b'{' | b'}' | b'"' | b',' | b'\n'))
        .map(|(i, _)| i)
        .collect();
    let mut by_ranges = 0;
    for t in 0..tries {
        let k = 1 + rng.below(7);
        let cuts: Vec<usize> = (0..k)
            .map(|_| match rng.below(3) {
                0 => 1 + rng.below(bytes.len() - 1),
                _ if marks.is_empty() => 1 + rng.below(bytes.len() - 1),
                _ => (marks[rng.below(marks.len())] + rng.below(2)).clamp(1, bytes.len() - 1),
            })
            .collect();
        if let Some(got) = cut_read(bytes, &cuts) {
            by_ranges += 1;
            assert!(
                got == want,
                "{name}: try {t}, cuts {cuts:?}: differs from one reader"
            );
        }
    }
    by_ranges
}

fn dump(t: &HostEventTable, info: &super::timeline::TimelineInfo) -> String {
    let pool: Vec<&str> = (0..t.text_count() as u32).map(|i| t.text(i)).collect();
    let threads: Vec<&str> = (0..)
        .map(|i| t.thread_text(i))
        .take_while(|s| !s.is_empty())
        .collect();
    format!(
        "{pool:?}\n{threads:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{info:?}",
        t.events(),
        t.markers,
        t.h2d_flow_ends_ns,
        t.flows(),
        t.flow_points,
        t.device_events,
        t.evidence,
        t.rejected(),
    )
}

const PREFIX: &str = "Iter";

fn one_reader(bytes: &[u8]) -> String {
    let mut b = TimelineBuilder::new(PREFIX);
    let mut sizes = HcclSizes::default();
    let file: Arc<str> = Arc::from("tv.json");
    let mut reader = ChunkReader::new(bytes, Some(bytes.len() as u64));
    let scan = super::for_each_indexed_event(
        &mut reader,
        &file,
        &mut |_| ControlFlow::Continue(()),
        &mut |ev, at| {
            let _ = sizes.indexed_event(ev, at);
            b.indexed_event(ev, at)
        },
    );
    match scan {
        Err(e) => format!("error {e}"),
        Ok(scan) => {
            let (t, info) = b.finish(scan);
            format!("{}\n{:?}", dump(&t, &info), sizes.bytes)
        }
    }
}

/// The read with ranges starting at `cuts` (0 added); `None` when handed to one reader.
fn cut_read(bytes: &[u8], cuts: &[usize]) -> Option<String> {
    let starts = starts(cuts);
    let mut m = MemOpener::new();
    m.add("tv.json", bytes.to_vec());
    let size = bytes.len() as u64;
    let (b, sizes, scan) = read_cut(&m, "tv.json", size, &starts, PREFIX, true, &mut |_| {
        ControlFlow::Continue(())
    })?;
    let (t, info) = b.finish(scan);
    Some(format!("{}\n{:?}", dump(&t, &info), sizes?.bytes))
}

/// [`check_cuts_with`] of the timeline read.
fn check_cuts(name: &str, bytes: &[u8], tries: usize, seed: u64) -> usize {
    check_cuts_with(name, bytes, tries, seed, &one_reader(bytes), &cut_read)
}

fn synth(kernels: u64) -> Vec<u8> {
    let (mut kd, mut tv) = (Vec::new(), Vec::new());
    let spec = crate::engine::synth::ascend::AnomalySpec { kernels, steps: 3 };
    crate::engine::synth::ascend::write_anomaly_rank(&mut kd, &mut tv, &spec).unwrap();
    tv
}

/// `B`/`E` pairs nested and spread over threads, so that an `E` is often in a later range than
/// its `B`; user markers (`Iter…`) closed by `E`s; `B`s never closed; metadata named twice;
/// flows of both kinds; bad `ts`, `dur` and strings; times out of range.
fn begin_end() -> Vec<u8> {
    let mut s = String::from("{\"traceEvents\":[\n");
    let mut rng = Rng(77);
    let mut open: Vec<Vec<u32>> = vec![Vec::new(); 4];
    for i in 0..1500u32 {
        let tid = rng.below(4);
        let ts = 1000 + u64::from(i) * 3;
        let ev = match rng.below(12) {
            0..=3 => {
                open[tid].push(i);
                let name = if i % 5 == 0 { format!("Iter{i}") } else { format!("b{}", i % 17) };
                format!("{{\"ph\":\"B\",\"name\":\"{name}\",\"cat\":\"c{}\",\"pid\":1,\"tid\":{tid},\"ts\":{ts}}}", i % 3)
            }
            4..=6 => {
                open[tid].pop();
                format!("{{\"ph\":\"E\",\"pid\":1,\"tid\":{tid},\"ts\":{}}}", ts + rng.below(3) as u64)
            }
            7 => format!("{{\"ph\":\"X\",\"name\":\"k{}\",\"pid\":{},\"tid\":\"{tid}\",\"ts\":\"{ts}.5\",\"dur\":2}}", i % 7, 2 + i % 2),
            8 => format!("{{\"ph\":\"{}\",\"name\":\"torch_to_npu\",\"cat\":\"async_npu\",\"id\":{},\"pid\":1,\"tid\":{tid},\"ts\":{ts}}}", if i % 2 == 0 { "s" } else { "f" }, i / 4),
            9 => format!("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":\"{}\"}}}}", 2 + i % 2, ["Ascend Hardware", "HCCL", "Python", "CANN"][rng.below(4)]),
            10 => format!("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":3,\"tid\":\"{tid}\",\"args\":{{\"name\":\"{}\"}}}}", if i % 2 == 0 { "Plane 0" } else { "Stream" }),
            _ => match i % 4 {
                0 => format!("{{\"ph\":\"X\",\"name\":\"bad\\q\u{1}#FF#\",\"pid\":1,\"tid\":9,\"ts\":{ts},\"dur\":1}}"),
                1 => "{\"ph\":\"X\",\"name\":\"nots\",\"pid\":1,\"tid\":9,\"ts\":\"x\"}".to_string(),
                2 => format!("{{\"ph\":\"X\",\"name\":\"far\",\"pid\":1,\"tid\":9,\"ts\":1e30,\"dur\":1,\"name\":\"dup\"}}"),
                _ => format!("{{\"ph\":\"X\",\"name\":\"nodur\",\"cat\":\"python_function\",\"pid\":1,\"tid\":9,\"ts\":{ts},\"dur\":\"q\"}}"),
            },
        };
        s += &ev;
        s += if i == 1499 { "\n" } else { ",\n" };
    }
    s += "]}\n";
    s.replace("#FF#", "\u{7f}")
        .into_bytes()
        .into_iter()
        .map(|b| if b == 0x7f { 0xff } else { b })
        .collect()
}

#[test]
fn cuts_of_a_generated_rank_read_what_one_reader_reads() {
    let tv = synth(600);
    assert!(check_cuts("synth", &tv, 60, 3) > 40);
}

#[test]
fn begin_end_pairs_across_ranges_read_what_one_reader_reads() {
    let tv = begin_end();
    assert!(check_cuts("begin/end", &tv, 120, 5) > 80);
    // A one-line copy and a cut-short copy.
    let one: Vec<u8> = tv.iter().copied().filter(|&b| b != b'\n').collect();
    check_cuts("one line", &one, 60, 7);
    let short = &tv[..tv.len() * 2 / 3];
    check_cuts("cut short", short, 60, 9);
}

#[test]
fn cuts_of_real_ranks_read_what_one_reader_reads() {
    let files = [
        "ascend/Ascend__msinsight/test/data/pytorch/text/level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        "ascend/Ascend__msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        "ascend/Ascend__msinsight/test/data/pytorch/text/level2/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        "ascend/a550580874__rl-insight/data/mstx_data/mstx_profile/actor_update/xxx_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
    ];
    let mut read = 0;
    for f in files {
        let Ok(bytes) = std::fs::read(format!("{FIX}/{f}")) else {
            continue;
        };
        read += 1;
        check_cuts(f, &bytes, 12, 11);
    }
    assert!(read > 0, "no fixture found");
}
