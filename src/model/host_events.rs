//! Host operator events (`cpu_op`) and `fwdbwd` flow points of one rank's
//! `trace_view.json`, and the [`CallStackIndex`] built over them
//! (ascend-memory.md §5.1–5.2, used by §6).
//!
//! Rows are in file order. `ts_ns` is exact (from the decimal text);
//! `ts_us` is Python `float()` of the same text, for parity ordering.

use rustc_hash::FxHashMap as HashMap;

use super::stacks::StackId;
use super::strings::{StrId, StringPool};
use crate::base::sort::{f64_key, sort_by_i64_key, sort_by_i64_pair};

const NONE_U32: u32 = u32::MAX;
const NONE_I64: i64 = i64::MIN;

/// One `cpu_op` event as read.
#[derive(Clone, Debug, PartialEq)]
pub struct HostOp {
    /// `name`, interned in the rank's string pool.
    pub name: StrId,
    /// `ts`, exact ns.
    pub ts_ns: i64,
    /// `float(ts)`, µs (parity).
    pub ts_us: f64,
    /// `dur` in ns (0 when absent).
    pub dur_ns: i64,
    /// Opaque `(pid, tid)` key from [`HostOpTable::thread_key`].
    pub thread: u32,
    /// `args."Sequence number"`.
    pub seq: Option<i64>,
    /// `args."Fwd thread id"`.
    pub fwd_tid: Option<i64>,
    /// `args."Call stack"` (present even if empty), `None` when the key is absent.
    pub stack: Option<StackId>,
}

/// One end of a `fwdbwd` flow (`ph` `s` on the forward thread, `f` on the backward thread).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowPoint {
    /// Flow `id`, interned as text.
    pub id: StrId,
    /// `true` for `ph:"s"`, `false` for `ph:"f"`.
    pub is_start: bool,
    /// `ts`, ns.
    pub ts_ns: i64,
    /// `(pid, tid)` key.
    pub thread: u32,
}

/// `cpu_op` events in file order, one column per field.
///
/// Invariant: all op columns have `len()` entries.
#[derive(Clone, Debug, Default)]
pub struct HostOpTable {
    name: Vec<StrId>,
    ts_ns: Vec<i64>,
    ts_us: Vec<f64>,
    dur_ns: Vec<i64>,
    thread: Vec<u32>,
    seq: Vec<i64>,
    fwd_tid: Vec<i64>,
    stack: Vec<u32>,
    flows: Vec<FlowPoint>,
    threads: StringPool,
    rejected: u64,
}

impl HostOpTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }
    /// The opaque key of `(pid, tid)` given as their JSON texts (numbers or strings alike).
    pub fn thread_key(&mut self, pid: &str, tid: &str) -> u32 {
        let mut k = String::with_capacity(pid.len() + tid.len() + 1);
        k.push_str(pid);
        k.push('\u{1f}');
        k.push_str(tid);
        self.threads.intern(&k).index() as u32
    }
    /// Appends one op (file order). An op whose `ts` or `ts + dur` lies outside the model's
    /// time range (`base::arith::interval_ns`) is not added and is counted in
    /// [`rejected`](Self::rejected); parsers that know the byte offset use
    /// [`try_push`](Self::try_push) and report it themselves.
    pub fn push(&mut self, op: HostOp) {
        if self.try_push(op).is_err() {
            self.rejected += 1;
        }
    }
    /// Ops [`push`](Self::push) refused (time out of range).
    pub fn rejected(&self) -> u64 {
        self.rejected
    }
    /// Like [`push`](Self::push), but an op out of the time range is returned as `Err` (not
    /// counted). Every kept op has `ts_ns` and `ts_ns + dur_ns` within
    /// `±base::arith::TIME_LIMIT_NS`, so lags and ends never overflow.
    pub fn try_push(&mut self, op: HostOp) -> Result<(), crate::base::arith::OutOfRange> {
        crate::base::arith::interval_ns(op.ts_ns, op.dur_ns.max(0))?;
        self.name.push(op.name);
        self.ts_ns.push(op.ts_ns);
        self.ts_us.push(op.ts_us);
        self.dur_ns.push(op.dur_ns.max(0));
        self.thread.push(op.thread);
        self.seq.push(op.seq.unwrap_or(NONE_I64));
        self.fwd_tid.push(op.fwd_tid.unwrap_or(NONE_I64));
        self.stack
            .push(op.stack.map(|s| s.index() as u32).unwrap_or(NONE_U32));
        Ok(())
    }
    /// Appends one flow point.
    pub fn push_flow(&mut self, f: FlowPoint) {
        self.flows.push(f);
    }
    /// Number of ops.
    pub fn len(&self) -> usize {
        self.name.len()
    }
    /// True when there are no ops.
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }
    /// Op names.
    pub fn name(&self) -> &[StrId] {
        &self.name
    }
    /// Exact start times, ns.
    pub fn ts_ns(&self) -> &[i64] {
        &self.ts_ns
    }
    /// Parity start times, µs.
    pub fn ts_us(&self) -> &[f64] {
        &self.ts_us
    }
    /// Durations, ns (≥ 0).
    pub fn dur_ns(&self) -> &[i64] {
        &self.dur_ns
    }
    /// Thread keys.
    pub fn thread(&self) -> &[u32] {
        &self.thread
    }
    /// `Sequence number` of op `i`.
    pub fn seq(&self, i: usize) -> Option<i64> {
        self.seq.get(i).copied().filter(|v| *v != NONE_I64)
    }
    /// `Fwd thread id` of op `i`.
    pub fn fwd_tid(&self, i: usize) -> Option<i64> {
        self.fwd_tid.get(i).copied().filter(|v| *v != NONE_I64)
    }
    /// `Call stack` of op `i` (`None` when the key is absent).
    pub fn stack(&self, i: usize) -> Option<StackId> {
        self.stack
            .get(i)
            .copied()
            .filter(|v| *v != NONE_U32)
            .map(StackId::from_index)
    }
    /// Flow points in file order.
    pub fn flows(&self) -> &[FlowPoint] {
        &self.flows
    }
    /// Number of ops that carry a `Call stack` key.
    pub fn with_stack_count(&self) -> usize {
        self.stack.iter().filter(|s| **s != NONE_U32).count()
    }
    /// Appends `next`, the table of the part of the file that follows this one's (a byte
    /// range read on its own), as if one table had read both: its thread keys re-interned in
    /// the order they first appear, its names and flow ids through `names` (its string id →
    /// this table's pool's) and its stacks through `stacks` (its stack id → this one's).
    pub fn append(&mut self, next: &HostOpTable, names: &[StrId], stacks: &[StackId]) {
        let threads: Vec<u32> = (0..next.threads.len() as u32)
            .map(|i| {
                let text = next.threads.get(StrId::from_index(i));
                self.threads.intern(text).index() as u32
            })
            .collect();
        self.name.extend(next.name.iter().map(|n| names[n.index()]));
        self.ts_ns.extend_from_slice(&next.ts_ns);
        self.ts_us.extend_from_slice(&next.ts_us);
        self.dur_ns.extend_from_slice(&next.dur_ns);
        self.thread
            .extend(next.thread.iter().map(|t| threads[*t as usize]));
        self.seq.extend_from_slice(&next.seq);
        self.fwd_tid.extend_from_slice(&next.fwd_tid);
        self.stack.extend(next.stack.iter().map(|&s| match s {
            NONE_U32 => NONE_U32,
            s => stacks[s as usize].index() as u32,
        }));
        self.flows.extend(next.flows.iter().map(|f| FlowPoint {
            id: names[f.id.index()],
            thread: threads[f.thread as usize],
            ..*f
        }));
        self.rejected += next.rejected;
    }
}

/// Op indices grouped by name, each group in a fixed order (compressed rows).
#[derive(Clone, Debug, Default)]
struct ByName {
    slot: HashMap<StrId, (u32, u32)>,
    order: Vec<u32>,
}

impl ByName {
    fn build(t: &HostOpTable, keep: impl Fn(usize) -> bool, sort: impl Fn(&mut [u32])) -> ByName {
        let mut groups: HashMap<StrId, Vec<u32>> = HashMap::default();
        for i in 0..t.len() {
            if keep(i) {
                groups.entry(t.name[i]).or_default().push(i as u32);
            }
        }
        let mut names: Vec<StrId> = groups.keys().copied().collect();
        crate::base::sort::sort(&mut names);
        let mut out = ByName::default();
        for n in names {
            let mut g = groups.remove(&n).unwrap_or_default();
            sort(&mut g);
            let start = out.order.len() as u32;
            out.order.extend_from_slice(&g);
            out.slot.insert(n, (start, out.order.len() as u32));
        }
        out
    }
    fn get(&self, name: StrId) -> &[u32] {
        match self.slot.get(&name) {
            Some(&(a, b)) => &self.order[a as usize..b as usize],
            None => &[],
        }
    }
}

/// Lookup structures over a [`HostOpTable`] for matching (ascend-memory.md §5.1, §6).
///
/// * parity groups: ops **with** a `Call stack` key, by exact name, stable-sorted by `ts_us`;
/// * exact groups: the same ops stable-sorted by `ts_ns`;
/// * all groups: every op by name, sorted by `ts_ns` (for `via_forward`), with the longest `dur` per name;
/// * `parent`: the nearest enclosing op on the same `(pid, tid)` by time containment;
/// * forward op per `Sequence number`: the op with a stack and the smallest `ts`.
#[derive(Clone, Debug, Default)]
pub struct CallStackIndex {
    parity: ByName,
    exact: ByName,
    all: ByName,
    max_dur_by_name: HashMap<StrId, i64>,
    max_dur_with_stack: HashMap<StrId, i64>,
    parent: Vec<u32>,
    forward_by_seq: HashMap<i64, u32>,
    flow_start_by_id: HashMap<StrId, usize>,
    flow_finish_by_thread: HashMap<u32, Vec<usize>>,
    enclosing_by_thread: HashMap<u32, Vec<u32>>,
}

impl CallStackIndex {
    /// Builds every lookup in O(n log n).
    pub fn build(t: &HostOpTable) -> CallStackIndex {
        let has_stack = |i: usize| t.stack[i] != NONE_U32;
        let parity = ByName::build(t, has_stack, |g| {
            sort_by_i64_key(g, |i| f64_key(t.ts_us[i as usize]))
        });
        // One sorter for both (one instantiation of the standard sort in the wasm).
        let by_ts = |g: &mut [u32]| sort_by_i64_key(g, |i| t.ts_ns[i as usize]);
        let exact = ByName::build(t, has_stack, by_ts);
        let all = ByName::build(t, |_| true, by_ts);
        let mut max_dur_by_name: HashMap<StrId, i64> = HashMap::default();
        let mut max_dur_with_stack: HashMap<StrId, i64> = HashMap::default();
        for i in 0..t.len() {
            let e = max_dur_by_name.entry(t.name[i]).or_insert(0);
            *e = (*e).max(t.dur_ns[i]);
            if has_stack(i) {
                let e = max_dur_with_stack.entry(t.name[i]).or_insert(0);
                *e = (*e).max(t.dur_ns[i]);
            }
        }
        // nesting per thread: sort by (ts asc, dur desc, file order), keep a stack of open ops
        let mut by_thread: HashMap<u32, Vec<u32>> = HashMap::default();
        for i in 0..t.len() {
            by_thread.entry(t.thread[i]).or_default().push(i as u32);
        }
        let mut parent = vec![NONE_U32; t.len()];
        for ops in by_thread.values_mut() {
            // `ops` is in file order, so ties on (ts, dur) keep it; `!dur` orders as dur desc.
            sort_by_i64_pair(ops, |i| (t.ts_ns[i as usize], !t.dur_ns[i as usize]));
            let mut open: Vec<u32> = Vec::new();
            for &i in ops.iter() {
                let end = t.ts_ns[i as usize].saturating_add(t.dur_ns[i as usize]);
                while let Some(&top) = open.last() {
                    let top_end = t.ts_ns[top as usize].saturating_add(t.dur_ns[top as usize]);
                    if top_end < end {
                        open.pop();
                    } else {
                        break;
                    }
                }
                if let Some(&top) = open.last() {
                    parent[i as usize] = top;
                }
                open.push(i);
            }
        }
        let mut forward_by_seq: HashMap<i64, u32> = HashMap::default();
        for i in 0..t.len() {
            if let (Some(s), true) = (t.seq(i), has_stack(i)) {
                if s < 0 {
                    continue;
                }
                let e = forward_by_seq.entry(s).or_insert(i as u32);
                if t.ts_ns[i] < t.ts_ns[*e as usize] {
                    *e = i as u32;
                }
            }
        }
        let mut flow_start_by_id = HashMap::default();
        let mut flow_finish_by_thread: HashMap<u32, Vec<usize>> = HashMap::default();
        for (k, f) in t.flows.iter().enumerate() {
            if f.is_start {
                flow_start_by_id.entry(f.id).or_insert(k);
            } else {
                flow_finish_by_thread.entry(f.thread).or_default().push(k);
            }
        }
        for v in flow_finish_by_thread.values_mut() {
            sort_by_i64_key(v, |k| t.flows[k].ts_ns);
        }
        CallStackIndex {
            parity,
            exact,
            all,
            max_dur_by_name,
            max_dur_with_stack,
            parent,
            forward_by_seq,
            flow_start_by_id,
            flow_finish_by_thread,
            enclosing_by_thread: by_thread,
        }
    }

    /// Ops with a stack named `name`, stable-sorted by parity `ts_us` (§5.1 step 4).
    pub fn parity_group(&self, name: StrId) -> &[u32] {
        self.parity.get(name)
    }
    /// Ops with a stack named `name`, stable-sorted by exact `ts_ns` (§5.2).
    pub fn exact_group(&self, name: StrId) -> &[u32] {
        self.exact.get(name)
    }
    /// Every op named `name`, sorted by `ts_ns` (§6.4 `via_forward` step 2).
    pub fn all_group(&self, name: StrId) -> &[u32] {
        self.all.get(name)
    }
    /// Longest `dur` (ns) among all ops named `name`.
    pub fn max_dur(&self, name: StrId) -> i64 {
        self.max_dur_by_name.get(&name).copied().unwrap_or(0)
    }
    /// Longest `dur` (ns) among the ops with a stack named `name`.
    pub fn max_dur_with_stack(&self, name: StrId) -> i64 {
        self.max_dur_with_stack.get(&name).copied().unwrap_or(0)
    }
    /// Nearest enclosing op of `op` on its thread.
    pub fn parent(&self, op: usize) -> Option<usize> {
        self.parent
            .get(op)
            .copied()
            .filter(|p| *p != NONE_U32)
            .map(|p| p as usize)
    }
    /// The forward op (with a stack, smallest `ts`) of `Sequence number` `seq`.
    pub fn forward_of_seq(&self, seq: i64) -> Option<usize> {
        self.forward_by_seq.get(&seq).map(|i| *i as usize)
    }
    /// Index of the `ph:"s"` point of flow `id`.
    pub fn flow_start(&self, id: StrId) -> Option<usize> {
        self.flow_start_by_id.get(&id).copied()
    }
    /// Indices of the `ph:"f"` points on `thread`, sorted by `ts`.
    pub fn flow_finishes_on(&self, thread: u32) -> &[usize] {
        self.flow_finish_by_thread
            .get(&thread)
            .map(|v| v.as_slice())
            .unwrap_or(&[])
    }
    /// Ops of `thread` sorted by (`ts` asc, `dur` desc).
    pub fn thread_ops(&self, thread: u32) -> &[u32] {
        self.enclosing_by_thread
            .get(&thread)
            .map(|v| v.as_slice())
            .unwrap_or(&[])
    }
}
