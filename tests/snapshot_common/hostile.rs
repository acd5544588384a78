//! Builders of hostile snapshot pickles: memo bombs, shared trace lists, deep
//! nesting, stack-op bombs, never-finished containers, out-of-range integers, Markdown
//! injection. Used by `tests/snapshot_hostile.rs` (small sizes) and by
//! `examples/snapshot_bombs.rs` (the sizes of the issue, written to /tmp for `/usr/bin/time`).
#![allow(dead_code)]

use proflens::parse::pickle::opcodes as op;
use proflens::parse::pickle::writer::PickleWriter;

type W = PickleWriter<Vec<u8>>;

/// Memoized key strings of a trace entry (`action`, `addr`, `size`, `stream`, `alloc`).
pub struct EntryKeys {
    action: u32,
    addr: u32,
    size: u32,
    stream: u32,
    alloc: u32,
    free: u32,
}

impl EntryKeys {
    /// Writes and memoizes the key strings (pushes nothing).
    pub fn new(w: &mut W) -> EntryKeys {
        let mut key = |s: &str| {
            w.str(s).unwrap();
            let i = w.memoize().unwrap();
            w.raw(&[op::POP]).unwrap();
            i
        };
        EntryKeys {
            action: key("action"),
            addr: key("addr"),
            size: key("size"),
            stream: key("stream"),
            alloc: key("alloc"),
            free: key("free_completed"),
        }
    }
    /// One entry dict `{action, addr, size, stream}` (alloc or free_completed).
    pub fn entry(&self, w: &mut W, alloc: bool, addr: i128, size: i128, stream: i128) {
        w.dict().unwrap();
        w.mark().unwrap();
        w.get(self.action).unwrap();
        w.get(if alloc { self.alloc } else { self.free }).unwrap();
        w.get(self.addr).unwrap();
        w.int(addr).unwrap();
        w.get(self.size).unwrap();
        w.int(size).unwrap();
        w.get(self.stream).unwrap();
        w.int(stream).unwrap();
        w.setitems().unwrap();
    }
}

/// Opens `{"segments": [], "device_traces": ` (the caller pushes the value, then calls
/// [`close_top`]).
pub fn open_top(protocol: u8) -> W {
    let mut w = PickleWriter::new(Vec::new(), protocol).unwrap();
    w.dict().unwrap();
    w.mark().unwrap();
    w.str("segments").unwrap();
    w.list().unwrap();
    w.str("device_traces").unwrap();
    w
}

/// Closes what [`open_top`] opened and ends the pickle.
pub fn close_top(mut w: W) -> Vec<u8> {
    w.setitems().unwrap();
    w.stop().unwrap()
}

/// `LONG_BINPUT` indices that jump by a million at each of `steps` steps, then a valid empty
/// snapshot (protocol 2). 200 steps ≈ 1 KB, 4000 ≈ 20 KB.
pub fn memo_bomb(steps: u32) -> Vec<u8> {
    let mut w = PickleWriter::new(Vec::new(), 2).unwrap();
    w.none().unwrap();
    for k in 1..=steps {
        w.raw(&[op::LONG_BINPUT]).unwrap();
        w.raw(&(k * 1_000_000).to_le_bytes()).unwrap();
    }
    w.raw(&[op::POP]).unwrap();
    w.dict().unwrap();
    w.str("segments").unwrap();
    w.list().unwrap();
    w.setitem().unwrap();
    w.stop().unwrap()
}

/// `device_traces` = one list of `entries` alloc/free pairs, referenced `refs` times (the
/// first occurrence plus `refs − 1` memo `BINGET`s).
pub fn shared_trace(entries: u32, refs: u32) -> Vec<u8> {
    let mut w = open_top(4);
    w.list().unwrap(); // device_traces
    let keys = EntryKeys::new(&mut w);
    w.mark().unwrap();
    let trace = w.list().unwrap();
    let mut batch = 0;
    w.mark().unwrap();
    for i in 0..entries {
        let addr = 0x1000 + (i as i128 / 2) * 512;
        keys.entry(&mut w, i % 2 == 0, addr, 512, 0);
        batch += 1;
        if batch == 1000 {
            w.appends().unwrap();
            w.mark().unwrap();
            batch = 0;
        }
    }
    w.appends().unwrap();
    for _ in 1..refs {
        w.get(trace).unwrap();
    }
    w.appends().unwrap();
    close_top(w)
}

/// `{"x": [[[…]]]}` nested `depth` lists deep (all open at once on the stack).
pub fn nested_lists(depth: u32) -> Vec<u8> {
    let mut w = PickleWriter::new(Vec::new(), 4).unwrap();
    w.raw(&[op::EMPTY_DICT]).unwrap();
    w.str("x").unwrap();
    w.raw(&vec![op::EMPTY_LIST; depth as usize]).unwrap();
    w.raw(&vec![op::APPEND; depth.saturating_sub(1) as usize])
        .unwrap();
    w.setitem().unwrap();
    w.stop().unwrap()
}

/// `{"x": ((((None,),),),), "segments": []}` nested `depth` tuples deep (`TUPLE1` chain:
/// stack depth 1).
pub fn nested_tuples(depth: u32) -> Vec<u8> {
    let mut w = PickleWriter::new(Vec::new(), 4).unwrap();
    w.raw(&[op::EMPTY_DICT]).unwrap();
    w.str("x").unwrap();
    w.none().unwrap();
    w.raw(&vec![op::TUPLE1; depth as usize]).unwrap();
    w.setitem().unwrap();
    w.str("segments").unwrap();
    w.raw(&[op::EMPTY_LIST, op::SETITEM]).unwrap();
    w.stop().unwrap()
}

/// `n` × `op` after `prefix`, then `{"segments": []}` (a stack-op bomb: `DUP` needs a value
/// in `prefix`; `MARK` none).
pub fn repeated(prefix: &[u8], code: u8, n: u64) -> Vec<u8> {
    let mut w = PickleWriter::new(Vec::new(), 4).unwrap();
    w.raw(prefix).unwrap();
    w.raw(&vec![code; n as usize]).unwrap();
    w.raw(&[op::EMPTY_DICT]).unwrap();
    w.str("segments").unwrap();
    w.raw(&[op::EMPTY_LIST, op::SETITEM]).unwrap();
    w.stop().unwrap()
}

/// `n` trace-entry dicts opened inside a device trace and popped unfinished
/// (`EMPTY_DICT POP` × n): containers that are never completed.
pub fn unfinished_entries(n: u32) -> Vec<u8> {
    let mut w = open_top(4);
    w.list().unwrap();
    w.list().unwrap();
    let mut pairs = Vec::with_capacity(2 * n as usize);
    for _ in 0..n {
        pairs.extend_from_slice(&[op::EMPTY_DICT, op::POP]);
    }
    w.raw(&pairs).unwrap();
    w.append().unwrap();
    close_top(w)
}

/// `n` × `EMPTY_TUPLE POP` under an unknown top-level key: empty generic containers.
pub fn empty_tuples(n: u32) -> Vec<u8> {
    let mut w = PickleWriter::new(Vec::new(), 4).unwrap();
    w.raw(&[op::EMPTY_DICT]).unwrap();
    let mut pairs = Vec::with_capacity(2 * n as usize);
    for _ in 0..n {
        pairs.extend_from_slice(&[op::EMPTY_TUPLE, op::POP]);
    }
    w.raw(&pairs).unwrap();
    w.str("segments").unwrap();
    w.raw(&[op::EMPTY_LIST, op::SETITEM]).unwrap();
    w.stop().unwrap()
}

/// `{"segments": [], "device_traces": [[entries…]]}`, entries `(action, addr, size, stream, time_us)`.
pub fn trace(entries: &[(&str, i128, i128, i128, Option<i128>)]) -> Vec<u8> {
    let mut w = open_top(4);
    w.list().unwrap();
    w.list().unwrap();
    w.mark().unwrap();
    for &(action, addr, size, stream, time) in entries {
        w.dict().unwrap();
        w.mark().unwrap();
        for (k, v) in [("addr", addr), ("size", size), ("stream", stream)] {
            w.str(k).unwrap();
            w.int(v).unwrap();
        }
        w.str("action").unwrap();
        w.str(action).unwrap();
        if let Some(t) = time {
            w.str("time_us").unwrap();
            w.int(t).unwrap();
        }
        w.setitems().unwrap();
    }
    w.appends().unwrap();
    w.append().unwrap();
    close_top(w)
}

/// Consumed trace entries whose handles stay deep in the stack (each entry is appended through
/// a second handle into a new trace list pushed above it: ≈ 500 of them, until the device-slot
/// bound makes the lists generic), then `appends` × `NONE APPEND`. The old decoder re-checked
/// every waiting slot after every append (≈ 500 × `appends`).
pub fn stuck_handles(appends: u32) -> Vec<u8> {
    let mut w = open_top(4);
    w.list().unwrap(); // device_traces
    w.mark().unwrap();
    w.list().unwrap(); // trace list 0
    for _ in 0..600 {
        let e = w.dict().unwrap(); // an entry of the list on top
        w.list().unwrap(); // a new trace list above it
        w.get(e).unwrap();
        w.append().unwrap(); // consumed; the first handle stays below
    }
    let mut tail = Vec::with_capacity(2 * appends as usize);
    for _ in 0..appends {
        tail.extend_from_slice(&[op::NONE, op::APPEND]);
    }
    w.raw(&tail).unwrap();
    w.raw(&[op::POP_MARK]).unwrap();
    close_top(w)
}
