//! `PYTORCH_API` + `PYTORCH_CALLCHAINS` → the host ops with call stacks the memory match reads
//! ([`HostOpTable`], as the trace's `cpu_op` events give them) and the timeline's host events
//! and step markers ([`HostEventTable`]) (ascend-db.md §4, §6). One scan of `PYTORCH_API`
//! feeds both.

use std::ops::ControlFlow;

use rustc_hash::FxHashMap as HashMap;

use super::schema::{int, text, Select};
use super::{scan, us_f64, DbFile};
use crate::base::Problems;
use crate::model::host_events::{HostOp, HostOpTable};
use crate::model::stacks::{StackId, StackPool};
use crate::model::strings::StringPool;
use crate::model::trace_events::{HostEventTable, Lane, MarkerEvent};
use crate::parse::trace_json::timeline::is_marker_name;

const API: &str = "PYTORCH_API";
const CHAINS: &str = "PYTORCH_CALLCHAINS";
/// torch_npu's fixed `ApiType` of an op row when `ENUM_API_TYPE` is absent.
const OP_TYPE: i64 = 50001;

/// The memory side: host ops with their stacks.
pub struct HostOps<'p> {
    /// The rank's string pool (op names).
    pub strings: &'p mut StringPool,
    /// The rank's stack pool.
    pub stacks: &'p mut StackPool,
    /// The ops read.
    pub host: HostOpTable,
    /// Parity mode keeps only ops with a call stack (as the trace reader does).
    pub parity: bool,
    /// Op rows seen.
    pub cpu_ops: u64,
    /// Op rows with a call stack.
    pub with_stack: u64,
    chains: HashMap<i64, StackId>,
}

impl<'p> HostOps<'p> {
    /// An empty sink over the rank's pools.
    pub fn new(strings: &'p mut StringPool, stacks: &'p mut StackPool, parity: bool) -> Self {
        HostOps {
            strings,
            stacks,
            host: HostOpTable::new(),
            parity,
            cpu_ops: 0,
            with_stack: 0,
            chains: HashMap::default(),
        }
    }
}

/// The anomaly side: host events and step markers.
pub struct Timeline {
    /// The table built.
    pub table: HostEventTable,
    custom_prefix: String,
    cat: u32,
}

impl Timeline {
    /// An empty timeline; `custom_prefix` is the user step-marker prefix (may be empty).
    pub fn new(custom_prefix: &str) -> Self {
        let mut table = HostEventTable::new();
        let cat = table.intern("cpu_op");
        Timeline {
            table,
            custom_prefix: custom_prefix.to_string(),
            cat,
        }
    }
}

/// What [`read`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostStats {
    /// `PYTORCH_API` and its required columns exist.
    pub present: bool,
    /// Stopped by `tick`.
    pub stopped: bool,
}

/// The `ENUM_API_TYPE` id named `op` (torch_npu's 50001 when the table is absent).
fn op_type(f: &DbFile<'_>) -> i64 {
    if !f.schema.has("ENUM_API_TYPE", "name") {
        return OP_TYPE;
    }
    f.db.conn()
        .query_row("SELECT id FROM ENUM_API_TYPE WHERE name = 'op'", [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap_or(OP_TYPE)
}

/// Every call chain as one stack text (frames in `stackDepth` order joined with `";\r\n"`,
/// the text export's `Call stack`), interned in `stacks`.
fn read_chains(
    f: &DbFile<'_>,
    ops: &mut HostOps<'_>,
    problems: &mut Problems,
    tick: &mut dyn FnMut() -> ControlFlow<()>,
) -> ControlFlow<()> {
    if let Some(what) = f.schema.lacks(CHAINS, &["id", "stack", "stackDepth"]) {
        problems.push(f.missing(&what, "the call stacks of the host ops"));
        return ControlFlow::Continue(());
    }
    // torch_npu writes each chain's frames together, by depth: read in rowid order (no sort,
    // nothing held but the stacks); only a file that is not so ordered is read sorted.
    match chains_pass(f, ops, problems, tick, false) {
        Some(c) => c,
        None => {
            ops.chains.clear();
            chains_pass(f, ops, problems, tick, true).unwrap_or(ControlFlow::Continue(()))
        }
    }
}

/// One pass over `PYTORCH_CALLCHAINS`; `None` when `sorted` is false and the rows are not
/// grouped by chain in depth order.
fn chains_pass(
    f: &DbFile<'_>,
    ops: &mut HostOps<'_>,
    problems: &mut Problems,
    tick: &mut dyn FnMut() -> ControlFlow<()>,
    sorted: bool,
) -> Option<ControlFlow<()>> {
    let mut q = Select::new(&f.schema, CHAINS);
    let id = q.col("id");
    let depth = q.col("stackDepth");
    let frame = q.string("stack");
    let sql = q.sql(if sorted {
        "ORDER BY t.id, t.stackDepth, t.rowid"
    } else {
        "ORDER BY t.rowid"
    });
    // (chain id, last depth, stack text)
    let mut cur: Option<(i64, i64, String)> = None;
    let mut unordered = false;
    let HostOps { stacks, chains, .. } = ops;
    let mut flush = |c: Option<(i64, i64, String)>, unordered: &mut bool| {
        if let Some((k, _, s)) = c {
            if chains.insert(k, stacks.intern(&s)).is_some() {
                *unordered = true;
            }
        }
    };
    let c = scan(f, CHAINS, &sql, problems, tick, &mut |_, r| {
        if unordered {
            return;
        }
        let Some(k) = int(r, id) else { return };
        let d = int(r, depth).unwrap_or(0);
        let fr = text(r, frame);
        match &mut cur {
            Some((ck, cd, s)) if *ck == k => {
                if d < *cd && !sorted {
                    unordered = true;
                    return;
                }
                *cd = d;
                s.push_str(";\r\n");
                s.push_str(&fr);
            }
            _ => flush(cur.replace((k, d, fr)), &mut unordered),
        }
    });
    flush(cur.take(), &mut unordered);
    (sorted || !unordered).then_some(c)
}

/// Reads `PYTORCH_API` once (in `rowid` order, the order torch_npu wrote it) into `ops`
/// (the `op` rows, §4) and `timeline` (the op rows with a duration as `cpu_op` host events
/// on the Python lane, and every row named like a step marker, §6).
pub fn read(
    f: &DbFile<'_>,
    mut ops: Option<&mut HostOps<'_>>,
    mut timeline: Option<&mut Timeline>,
    problems: &mut Problems,
    tick: &mut dyn FnMut() -> ControlFlow<()>,
) -> HostStats {
    let mut stats = HostStats::default();
    if let Some(what) = f
        .schema
        .lacks(API, &["startNs", "endNs", "globalTid", "name", "type"])
    {
        problems.push(f.missing(&what, "the host ops (call stacks, step markers)"));
        return stats;
    }
    stats.present = true;
    if let Some(o) = ops.as_deref_mut() {
        if read_chains(f, o, problems, tick).is_break() {
            stats.stopped = true;
            return stats;
        }
    }
    let op = op_type(f);
    let mut q = Select::new(&f.schema, API);
    let start = q.col("startNs");
    let end = q.col("endNs");
    let gtid = q.col("globalTid");
    let name = q.string("name");
    let seq = q.col("sequenceNumber");
    let fwd = q.col("fwdThreadId");
    let chain = q.col("callchainId");
    let ty = q.col("type");
    let shapes = q.first_of(&["inputShapes", "inputDtypes"]);
    let sql = q.sql("ORDER BY t.rowid");
    let mut bad = Vec::new();
    let mut threads: HashMap<i64, (u32, u32)> = HashMap::default();
    let c = scan(f, API, &sql, problems, tick, &mut |id, r| {
        let is_op = int(r, ty) == Some(op);
        let n = text(r, name);
        let marker = timeline
            .as_ref()
            .is_some_and(|t| is_marker_name(&n, &t.custom_prefix));
        if !is_op && !marker {
            return;
        }
        let (Some(s), Some(e)) = (int(r, start), int(r, end)) else {
            bad.push((id, "startNs or endNs is not an integer"));
            return;
        };
        let (Ok(s), Some(d)) = (crate::base::arith::time_ns(s), e.checked_sub(s)) else {
            bad.push((id, "a time outside the representable range"));
            return;
        };
        if crate::base::arith::interval_ns(s, d.max(0)).is_err() {
            bad.push((id, "a time outside the representable range"));
            return;
        }
        let g = int(r, gtid).unwrap_or(0);
        let (pid, tid) = ((g >> 32) & 0xFFFF_FFFF, g & 0xFFFF_FFFF);
        let entry = threads.entry(g).or_insert((u32::MAX, u32::MAX));
        if let Some(t) = timeline.as_deref_mut() {
            if marker {
                t.table.markers.push(MarkerEvent {
                    name: n.clone(),
                    ts_ns: s,
                    dur_ns: d,
                });
            }
            if is_op && d > 0 {
                if entry.1 == u32::MAX {
                    entry.1 = t.table.thread_key(&format!("{pid}/{tid}"));
                }
                let nm = t.table.intern(&n);
                t.table.push_ids(nm, t.cat, entry.1, Lane::Python, s, d);
                if !t.table.evidence.shapes && int(r, shapes).is_some() {
                    t.table.evidence.shapes = true;
                }
                if !t.table.evidence.stack && int(r, chain).is_some() {
                    t.table.evidence.stack = true;
                }
            }
        }
        let Some(o) = ops.as_deref_mut() else { return };
        if !is_op {
            return;
        }
        let stack = int(r, chain).and_then(|k| o.chains.get(&k).copied());
        if stack.is_none() && o.parity {
            return;
        }
        o.cpu_ops += 1;
        if stack.is_some() {
            o.with_stack += 1;
        }
        if entry.0 == u32::MAX {
            entry.0 = o.host.thread_key(&pid.to_string(), &tid.to_string());
        }
        let op = HostOp {
            name: o.strings.intern(&n),
            ts_ns: s,
            ts_us: us_f64(s),
            dur_ns: d,
            thread: entry.0,
            seq: int(r, seq),
            fwd_tid: int(r, fwd),
            stack,
        };
        if o.host.try_push(op).is_err() {
            bad.push((id, "a time outside the representable range"));
        }
    });
    for (id, why) in bad {
        problems.push(f.bad_row(API, id, why));
    }
    if let Some(t) = timeline {
        t.table.finish();
    }
    stats.stopped = c.is_break();
    stats
}
