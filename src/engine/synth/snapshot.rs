//! Synthetic memory-snapshot pickles (torch-snapshot.md §8.4), as `examples/snapshot_gen`
//! writes them.

use rustc_hash::FxHashMap as HashMap;
use std::io::{self, Write};

use super::XorShift;
use crate::parse::pickle::writer::PickleWriter;

/// Shape of a synthetic snapshot ([`write_snapshot`]).
#[derive(Clone, Copy, Debug)]
pub struct SnapshotSpec {
    /// Trace entries to write (about 80 bytes each once the shared frames are written).
    pub events: u64,
    /// Seed of the xorshift generator (0 gives a degenerate but valid trace).
    pub seed: u64,
}

/// The default seed of `examples/snapshot_gen`.
pub const SNAPSHOT_SEED: u64 = 0x9e37_79b9_7f4a_7c15;

type Pw<'a> = PickleWriter<&'a mut dyn Write>;

/// Memo indices of strings written once.
#[derive(Default)]
struct Strings {
    memo: HashMap<String, u32>,
}

impl Strings {
    fn put(&mut self, w: &mut Pw<'_>, s: &str) -> io::Result<()> {
        match self.memo.get(s) {
            Some(&i) => w.get(i),
            None => {
                w.str(s)?;
                let i = w.memoize()?;
                self.memo.insert(s.to_string(), i);
                Ok(())
            }
        }
    }
}

struct Frames {
    /// (filename, line, name) of each distinct frame.
    frames: Vec<(String, u32, String)>,
    /// Frame ids of each distinct stack, innermost first.
    stacks: Vec<Vec<usize>>,
    frame_memo: Vec<Option<u32>>,
    stack_memo: Vec<Option<u32>>,
}

impl Frames {
    fn new(rng: &mut XorShift) -> Self {
        let mut frames = Vec::new();
        for i in 0..120 {
            frames.push(("??".to_string(), 0, format!("c10::impl::BoxedKernelWrapper<at::Tensor (at::Tensor const&)>::call_{i}(c10::OperatorHandle const&)")));
        }
        frames.push(("??".into(), 0, "torch::unwind::unwind()".into()));
        frames.push((
            "??".into(),
            0,
            "torch::CapturedTraceback::gather(bool, bool, bool)".into(),
        ));
        for i in 0..300 {
            frames.push((
                format!(
                    "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/mod_{}.py",
                    i % 40
                ),
                100 + i,
                format!("_call_impl_{i}"),
            ));
        }
        for i in 0..180 {
            frames.push((
                format!("/home/user/project/model/layer_{}.py", i % 30),
                10 + i,
                format!("forward_{i}"),
            ));
        }
        let n = frames.len();
        let mut stacks = Vec::new();
        for _ in 0..200 {
            let depth = 20 + rng.below(41) as usize;
            let mut s: Vec<usize> = (0..depth).map(|_| rng.below(n as u64) as usize).collect();
            s[0] = 120; // unwind
            s[1] = 121;
            stacks.push(s);
        }
        Frames {
            frame_memo: vec![None; n],
            stack_memo: vec![None; stacks.len()],
            frames,
            stacks,
        }
    }

    fn put_stack(&mut self, w: &mut Pw<'_>, k: &mut Strings, s: usize) -> io::Result<()> {
        if let Some(i) = self.stack_memo[s] {
            return w.get(i);
        }
        let idx = w.list()?;
        self.stack_memo[s] = Some(idx);
        w.mark()?;
        for j in 0..self.stacks[s].len() {
            let f = self.stacks[s][j];
            if let Some(i) = self.frame_memo[f] {
                w.get(i)?;
                continue;
            }
            let fi = w.dict()?;
            self.frame_memo[f] = Some(fi);
            w.mark()?;
            let (file, line, name) = self.frames[f].clone();
            k.put(w, "name")?;
            w.str(&name)?;
            w.memoize()?;
            k.put(w, "filename")?;
            k.put(w, &file)?;
            k.put(w, "line")?;
            w.int(line as i128)?;
            w.setitems()?;
        }
        w.appends()
    }
}

/// One trace entry: `(action index, addr, size, stream, stack)`.
type Op = (u8, u64, u64, u64, usize);

/// Writes `key: value` for each pair, inside an open dict (between its MARK and SETITEMS).
fn ints(w: &mut Pw<'_>, k: &mut Strings, pairs: &[(&str, u64)]) -> io::Result<()> {
    for &(key, v) in pairs {
        k.put(w, key)?;
        w.int(v as i128)?;
    }
    Ok(())
}

fn entry(w: &mut Pw<'_>, k: &mut Strings, fr: &mut Frames, op: Op, t: u64) -> io::Result<()> {
    let (action, addr, size, stream, stack) = op;
    let action = ["alloc", "free_requested", "free_completed", "segment_alloc"][action as usize];
    w.dict()?;
    w.mark()?;
    k.put(w, "action")?;
    k.put(w, action)?;
    ints(
        w,
        k,
        &[
            ("addr", addr),
            ("size", size),
            ("stream", stream),
            ("time_us", t),
        ],
    )?;
    k.put(w, "frames")?;
    fr.put_stack(w, k, stack)?;
    k.put(w, "compile_context")?;
    k.put(w, "N/A")?;
    k.put(w, "user_metadata")?;
    k.put(w, "")?;
    w.setitems()
}

/// A `_dump_snapshot()` pickle as CPython's pickler writes it at protocol 4 (without FRAME
/// opcodes, which are optional): containers memoized right after creation, `MARK …
/// SETITEMS`/`APPENDS` batches of ≤ 1000, and heavy sharing like real files — dict keys and
/// action strings written once, ~600 distinct frame dicts and 200 distinct frame lists (20–60
/// frames each, C++ and Python frames like `stacks="all"`) referenced with `BINGET`s. The
/// trace simulates training steps (forward allocations, backward frees, optimizer updates)
/// with `time_us`, `compile_context` and `user_metadata` on every entry, record-stream delays
/// on a second stream, segment events, and an end state whose active blocks are the
/// allocations still live. Returns the trace entries written (`spec.events`).
///
/// Errors: those of `out`.
#[allow(clippy::too_many_lines)]
pub fn write_snapshot(out: &mut dyn Write, spec: &SnapshotSpec) -> io::Result<u64> {
    let events = spec.events;
    let mut rng = XorShift(spec.seed);
    let mut fr = Frames::new(&mut rng);
    let mut k = Strings::default();
    let mut w: Pw<'_> = PickleWriter::new(out, 4)?;
    let seg_base: u64 = 0x7f00_0000_0000;
    let mut t: u64 = 1_730_000_000_000_000;
    // The end state is written before the trace (`segments` comes first in the dict), so the
    // steps are simulated first, then replayed for what is live at the end.
    let mut next_addr = seg_base;
    // The one segment is reserved first (its size, the run's extent, is known at the end).
    let mut ops: Vec<Op> = vec![(3, seg_base, 0, 0, 0)];
    ops.reserve(events as usize);
    // Weights: allocated once, live to the end.
    for i in 0..2000u64 {
        let size = 4096 * (1 + rng.below(2048));
        ops.push((0, next_addr, size, 0, (i % 40) as usize));
        next_addr += size.next_multiple_of(512);
    }
    while (ops.len() as u64) < events {
        // One step: forward allocations, backward frees (some on stream 1 with delayed completion).
        let n = 200 + rng.below(200);
        let start = next_addr;
        let mut acts = Vec::new();
        for _ in 0..n {
            let size = 512 * (1 + rng.below(8192));
            let stack = 40 + rng.below(120) as usize;
            ops.push((0, next_addr, size, 0, stack));
            acts.push((next_addr, size, stack));
            next_addr += size.next_multiple_of(512);
        }
        for (a, s, st) in acts.into_iter().rev() {
            let stream = if rng.below(10) == 0 { 1 } else { 0 };
            ops.push((1, a, s, stream, st));
            ops.push((2, a, s, stream, st));
        }
        // Optimizer step.
        for j in 0..20 {
            let size = 1 << 20;
            ops.push((0, next_addr, size, 0, 160 + j % 40));
            ops.push((1, next_addr, size, 0, 160 + j % 40));
            ops.push((2, next_addr, size, 0, 160 + j % 40));
        }
        next_addr = start;
    }
    ops.truncate(events.max(1) as usize);
    // A free requested but not completed at the cut would leave a block pending: the cut
    // ends on whole frees, and small live allocations after the run's extent fill the count.
    let mut live: std::collections::BTreeMap<u64, (u64, usize)> = Default::default();
    let mut end = seg_base;
    for &(action, a, size, _, st) in &ops {
        match action {
            0 => {
                live.insert(a, (size, st));
                end = end.max(a + size.next_multiple_of(512));
            }
            2 => {
                live.remove(&a);
            }
            _ => {}
        }
    }
    if matches!(ops.last(), Some(&(1, ..))) {
        ops.pop();
    }
    while (ops.len() as u64) < events {
        ops.push((0, end, 512, 0, 0));
        live.insert(end, (512, 0));
        end += 512;
    }
    let seg_total = end - seg_base;
    ops[0].2 = seg_total;
    w.dict()?;
    w.mark()?;
    // segments: one segment, its live blocks and the inactive gaps between them.
    k.put(&mut w, "segments")?;
    w.list()?;
    w.dict()?;
    w.mark()?;
    let live_bytes: u64 = live.values().map(|l| l.0.next_multiple_of(512)).sum();
    let requested: u64 = live.values().map(|l| l.0).sum();
    ints(
        &mut w,
        &mut k,
        &[
            ("device", 0),
            ("address", seg_base),
            ("total_size", seg_total),
            ("allocated_size", live_bytes),
            ("active_size", live_bytes),
            ("requested_size", requested),
        ],
    )?;
    k.put(&mut w, "stream")?;
    w.int(0)?;
    k.put(&mut w, "segment_type")?;
    k.put(&mut w, "large")?;
    k.put(&mut w, "blocks")?;
    w.list()?;
    w.mark()?;
    let mut at = seg_base;
    // One block: its address, size, requested size, and the stack of an active one.
    let block = |w: &mut Pw<'_>,
                 k: &mut Strings,
                 fr: &mut Frames,
                 (a, size, req): (u64, u64, u64),
                 st: Option<usize>|
     -> io::Result<()> {
        w.dict()?;
        w.mark()?;
        ints(
            w,
            k,
            &[("address", a), ("size", size), ("requested_size", req)],
        )?;
        k.put(w, "state")?;
        k.put(
            w,
            if st.is_some() {
                "active_allocated"
            } else {
                "inactive"
            },
        )?;
        k.put(w, "frames")?;
        match st {
            Some(st) => fr.put_stack(w, k, st)?,
            None => {
                w.list()?;
            }
        }
        w.setitems()
    };
    for (&a, &(size, st)) in &live {
        if a > at {
            block(&mut w, &mut k, &mut fr, (at, a - at, 0), None)?;
        }
        block(
            &mut w,
            &mut k,
            &mut fr,
            (a, size.next_multiple_of(512), size),
            Some(st),
        )?;
        at = a + size.next_multiple_of(512);
    }
    if at < seg_base + seg_total {
        block(
            &mut w,
            &mut k,
            &mut fr,
            (at, seg_base + seg_total - at, 0),
            None,
        )?;
    }
    w.appends()?;
    w.setitems()?;
    w.append()?;
    // device_traces: one device, entries in batches of 1000.
    k.put(&mut w, "device_traces")?;
    w.list()?;
    w.list()?;
    for chunk in ops.chunks(1000) {
        w.mark()?;
        for &op in chunk {
            t += rng.below(40);
            entry(&mut w, &mut k, &mut fr, op, t)?;
        }
        w.appends()?;
    }
    w.append()?;
    k.put(&mut w, "allocator_settings")?;
    w.dict()?;
    w.mark()?;
    k.put(&mut w, "expandable_segments")?;
    w.bool(false)?;
    k.put(&mut w, "garbage_collection_threshold")?;
    w.float(0.0)?;
    w.setitems()?;
    w.setitems()?;
    w.stop()?;
    Ok(ops.len() as u64)
}
