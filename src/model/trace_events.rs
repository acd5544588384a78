//! What the anomaly analysis keeps from `trace_view.json` (anomaly.md §1.3):
//! host events with a duration, step-marker candidates, flow end points and
//! device-lane events (for the Level0 stream join, §1.2.4, and as a kernel
//! source when `kernel_details.csv` is absent). Times are `i64` ns.

use rustc_hash::FxHashMap as HashMap;

/// Which kind of process an event was on (§1.3: process names from `ph:"M"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lane {
    /// `Python` (and any process not listed as device): framework ops, python functions.
    Python,
    /// `CANN`: `AscendCL@…`, `Runtime@…`, `Node@…`.
    Cann,
    /// `HCCL` device lane: its `X` events are "comm stream markers" (§5.7.1).
    HcclDevice,
    /// Any other host process (not a listed device process).
    OtherHost,
}

/// Interned string id into a [`HostEventTable`]'s pool.
pub type TextId = u32;

/// One host event with a duration (`X` with `dur > 0`, or a matched `B`/`E` pair).
///
/// Its category, thread and lane are one id of the owning table's (`kind`; few distinct
/// triples, so 24 bytes an event instead of 32): [`HostEventTable::cat_of`],
/// [`HostEventTable::thread_of`], [`HostEventTable::lane_of`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostEvent {
    /// Start in ns.
    pub start_ns: i64,
    /// Duration in ns (> 0).
    pub dur_ns: i64,
    /// Event name id.
    pub name: TextId,
    /// Id of the `(category, thread, lane)` of the event in its table.
    kind: u32,
}

/// A host event's category id (empty string when the event has no `cat`), interned
/// `(pid, tid)` thread key and the lane of its process.
type Kind = (TextId, u32, Lane);

impl HostEvent {
    /// End in ns.
    pub fn end_ns(&self) -> i64 {
        self.start_ns + self.dur_ns
    }
}

/// A step-marker candidate: an event whose name may delimit a step (§3.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkerEvent {
    /// The event name as written (`ProfilerStep#50`, `Iteration 1`, …).
    pub name: String,
    /// Start in ns.
    pub ts_ns: i64,
    /// Duration in ns (0 for instants).
    pub dur_ns: i64,
}

/// A device-lane `X` event of `Ascend Hardware` or an op-level `HCCL` event (§1.2.4, §1.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceEvent {
    /// Event name id (pool of the owning [`HostEventTable`]).
    pub name: TextId,
    /// Start in ns.
    pub ts_ns: i64,
    /// Duration in ns.
    pub dur_ns: i64,
    /// Stream key id: the `tid` text (== `Physic Stream Id` / `Stream Id`) on `Ascend Hardware`.
    pub stream: TextId,
    /// True on the `HCCL` process (op-level events only), false on `Ascend Hardware`.
    pub hccl_lane: bool,
}

/// A flow of `trace_view.json` that links a host op to a device task (formats.md §5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TraceFlowKind {
    /// `async_npu` / `torch_to_npu`: framework op (Python process) → device task.
    TorchToNpu,
    /// `HostToDevice`: CANN node launch → device task.
    HostToDevice,
}

impl TraceFlowKind {
    /// The flow's `cat` as written (`async_npu`, `HostToDevice`).
    pub fn as_str(self) -> &'static str {
        match self {
            TraceFlowKind::TorchToNpu => "async_npu",
            TraceFlowKind::HostToDevice => "HostToDevice",
        }
    }
}

/// One end of a launch flow as read (`ph` `s` or `f`), before pairing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowPoint {
    /// Flow category.
    pub kind: TraceFlowKind,
    /// The `id` (a decimal id as its value — `HostToDevice` ids reach 20 digits — any other
    /// text hashed).
    pub id: u128,
    /// True for the `s` end.
    pub start: bool,
    /// Interned `(pid, tid)` thread key of the end.
    pub thread: u32,
    /// `ts` in ns.
    pub ts_ns: i64,
}

/// A launch flow with both ends (the `s` on a host thread, the `f` on a device lane).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceFlow {
    /// Flow category.
    pub kind: TraceFlowKind,
    /// The `id` as [`FlowPoint::id`].
    pub id: u128,
    /// Thread of the `s` end.
    pub start_thread: u32,
    /// `ts` of the `s` end, ns.
    pub start_ns: i64,
    /// Thread of the `f` end (`<Ascend Hardware pid>/<stream>`, or the HCCL process).
    pub end_thread: u32,
    /// `ts` of the `f` end, ns (the device task's start).
    pub end_ns: i64,
}

/// What a trace's events show was recorded, option by option (anomaly.md §1.1.1): each flag is
/// set by an event carrying that profiler option's own output, whatever the capture's
/// configuration says. Kineto traces and `trace_view.json` write the same argument names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceEvidence {
    /// `record_shapes`: an `Input Dims`, `Input type`, `Input Strides` or `Concrete Inputs`
    /// argument.
    pub shapes: bool,
    /// `with_stack`: a `python_function` event or a `Call stack` argument.
    pub stack: bool,
    /// `profile_memory`: a `[memory]` instant event.
    pub memory: bool,
    /// `with_flops`: a `flops` argument.
    pub flops: bool,
    /// `with_modules`: a `Module Hierarchy` argument.
    pub modules: bool,
}

impl TraceEvidence {
    /// The `args` keys `record_shapes` writes.
    pub const SHAPE_KEYS: [&'static str; 4] = [
        "Input Dims",
        "Input type",
        "Input Strides",
        "Concrete Inputs",
    ];

    /// True when every flag is set (nothing left to look for).
    pub fn complete(&self) -> bool {
        self.shapes && self.stack && self.memory && self.flops && self.modules
    }

    /// Notes one event's `args`: `has(key)` tells whether they hold member `key`.
    pub fn note_args(&mut self, mut has: impl FnMut(&str) -> bool) {
        self.shapes = self.shapes || Self::SHAPE_KEYS.iter().any(|k| has(k));
        self.stack = self.stack || has("Call stack");
        self.flops = self.flops || has("flops");
        self.modules = self.modules || has("Module Hierarchy");
    }
}

/// Everything kept from one `trace_view.json`.
#[derive(Clone, Debug, Default)]
pub struct HostEventTable {
    pool: Vec<String>,
    index: HashMap<String, TextId>,
    threads: Vec<String>,
    thread_index: HashMap<String, u32>,
    events: Vec<HostEvent>,
    /// The `(category, thread, lane)` of [`HostEvent`]'s `kind` ids.
    kinds: Vec<Kind>,
    kind_index: HashMap<Kind, u32>,
    /// Step-marker candidates, in file order.
    pub markers: Vec<MarkerEvent>,
    /// `ts` (ns) of the points `h2d_flow_count` counts (§5.6): on Ascend the flow end points
    /// (`ph:"f"`) of `HostToDevice` / `async_npu` flows; on GPU ranks the launch starts of the
    /// device ops (`analysis::gpu_tables::launch_points`).
    pub h2d_flow_ends_ns: Vec<i64>,
    /// Launch flow ends (`async_npu`, `HostToDevice`) as read; [`finish`](Self::finish) pairs
    /// them into [`flows`](Self::flows) and empties this list.
    pub flow_points: Vec<FlowPoint>,
    flows: Vec<TraceFlow>,
    /// Device-lane events (Ascend Hardware + HCCL `X`).
    pub device_events: Vec<DeviceEvent>,
    /// What the trace's events show was recorded (anomaly.md §1.1.1).
    pub evidence: TraceEvidence,
    rejected: u64,
}

impl HostEventTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Interns `s` and returns its id.
    pub fn intern(&mut self, s: &str) -> TextId {
        if let Some(&id) = self.index.get(s) {
            return id;
        }
        let id = self.pool.len() as TextId;
        self.pool.push(s.to_string());
        self.index.insert(s.to_string(), id);
        id
    }

    /// Interns a thread key (`"<pid>/<tid>"`).
    pub fn thread_key(&mut self, key: &str) -> u32 {
        if let Some(&id) = self.thread_index.get(key) {
            return id;
        }
        let id = self.threads.len() as u32;
        self.threads.push(key.to_string());
        self.thread_index.insert(key.to_string(), id);
        id
    }

    /// Host events [`push`](Self::push) / [`push_ids`](Self::push_ids) refused because their
    /// start or end lies outside the model's time range (`base::arith::interval_ns`; the trace
    /// parser already drops those with their byte offsets, so this stays 0 for parsed traces).
    pub fn rejected(&self) -> u64 {
        self.rejected
    }

    /// Adds one host event (durations ≤ 0 are ignored: no coverage, §1.3; times out of the
    /// model's range are counted in [`rejected`](Self::rejected)).
    pub fn push(
        &mut self,
        name: &str,
        cat: &str,
        thread: u32,
        lane: Lane,
        start_ns: i64,
        dur_ns: i64,
    ) {
        if dur_ns <= 0 {
            return;
        }
        let name = self.intern(name);
        let cat = self.intern(cat);
        self.push_ids(name, cat, thread, lane, start_ns, dur_ns);
    }

    /// Room for `n` more events, reserved exactly when the allocator grants it (a source
    /// that knows how many it will push: no doubling, no old buffer beside the new one).
    pub fn reserve_events(&mut self, n: usize) {
        let _ = self.events.try_reserve_exact(n);
    }

    /// Adds one host event by already-interned ids (durations ≤ 0 are ignored).
    pub fn push_ids(
        &mut self,
        name: TextId,
        cat: TextId,
        thread: u32,
        lane: Lane,
        start_ns: i64,
        dur_ns: i64,
    ) {
        if dur_ns <= 0 {
            return;
        }
        if crate::base::arith::interval_ns(start_ns, dur_ns).is_err() {
            self.rejected += 1;
        } else {
            let key = (cat, thread, lane);
            // Runs of events share a kind (one thread's ops): the last one is checked first.
            let kind = match self.events.last() {
                Some(e) if self.kinds.get(e.kind as usize) == Some(&key) => e.kind,
                _ => *self.kind_index.entry(key).or_insert_with(|| {
                    self.kinds.push(key);
                    (self.kinds.len() - 1) as u32
                }),
            };
            self.events.push(HostEvent {
                start_ns,
                dur_ns,
                name,
                kind,
            });
        }
    }

    /// Interns a thread key given as raw bytes (`pid` and `tid` JSON texts); returns `(id, new)`.
    pub fn thread_key_bytes(&mut self, pid: &[u8], tid: &[u8]) -> (u32, bool) {
        let mut key = String::with_capacity(pid.len() + tid.len() + 1);
        key.push_str(&String::from_utf8_lossy(pid));
        key.push('/');
        key.push_str(&String::from_utf8_lossy(tid));
        let n = self.threads.len();
        let id = self.thread_key(&key);
        (id, id as usize == n)
    }

    /// Sorts events by `(start, longer first)` and flow ends by time; call once after loading.
    pub fn finish(&mut self) {
        self.events
            .sort_by(|a, b| a.start_ns.cmp(&b.start_ns).then(b.dur_ns.cmp(&a.dur_ns)));
        self.h2d_flow_ends_ns.sort_unstable();
        self.flows = pair_flows(std::mem::take(&mut self.flow_points));
    }

    /// Launch flows with both ends, by `(start, id)` (after [`finish`](Self::finish)).
    pub fn flows(&self) -> &[TraceFlow] {
        &self.flows
    }

    /// The id of thread key `"<pid>/<tid>"`, if any event was on it.
    pub fn thread_id(&self, key: &str) -> Option<u32> {
        self.thread_index.get(key).copied()
    }

    /// Host events, sorted by start after [`finish`](Self::finish).
    pub fn events(&self) -> &[HostEvent] {
        &self.events
    }

    /// The (category, thread, lane) triple of `e`. Every event of this table holds the id of one
    /// of its triples; an event of another table (a caller's bug, never an input's) fails a debug
    /// build's check and reads as no category, the first thread, [`Lane::OtherHost`] in a release
    /// build, which keeps a page from stopping on it.
    fn kind_of(&self, e: &HostEvent) -> Kind {
        debug_assert!(
            (e.kind as usize) < self.kinds.len(),
            "host event of kind {} read by a table of {} kinds",
            e.kind,
            self.kinds.len()
        );
        self.kinds
            .get(e.kind as usize)
            .copied()
            .unwrap_or((0, 0, Lane::OtherHost))
    }

    /// Category id of event `e` of this table (empty string when the event has no `cat`).
    #[inline]
    pub fn cat_of(&self, e: &HostEvent) -> TextId {
        self.kind_of(e).0
    }

    /// Interned `(pid, tid)` thread key of event `e` of this table.
    #[inline]
    pub fn thread_of(&self, e: &HostEvent) -> u32 {
        self.kind_of(e).1
    }

    /// Lane of the process of event `e` of this table.
    #[inline]
    pub fn lane_of(&self, e: &HostEvent) -> Lane {
        self.kind_of(e).2
    }

    /// The `"<pid>/<tid>"` key of an interned thread id (`""` when unknown).
    pub fn thread_text(&self, id: u32) -> &str {
        self.threads
            .get(id as usize)
            .map(String::as_str)
            .unwrap_or("")
    }

    /// Text of an interned id (`""` when unknown).
    pub fn text(&self, id: TextId) -> &str {
        self.pool.get(id as usize).map(String::as_str).unwrap_or("")
    }

    /// Number of distinct interned strings (ids are `0..text_count()`).
    pub fn text_count(&self) -> usize {
        self.pool.len()
    }
}

/// Pairs flow ends by `(kind, id)`: the k-th `s` of an id (file order) with its k-th `f`;
/// ends without a partner are dropped. Sorted by `(start, id)`.
fn pair_flows(mut points: Vec<FlowPoint>) -> Vec<TraceFlow> {
    // Stable: file order within an id and end.
    points.sort_by_key(|p| (p.kind, p.id, !p.start));
    let mut out = Vec::new();
    let mut i = 0;
    while i < points.len() {
        let (kind, id) = (points[i].kind, points[i].id);
        let mut j = i;
        while j < points.len() && points[j].kind == kind && points[j].id == id {
            j += 1;
        }
        let group = &points[i..j];
        let starts = group.iter().take_while(|p| p.start);
        let ends = group.iter().skip_while(|p| p.start);
        out.extend(starts.zip(ends).map(|(s, f)| TraceFlow {
            kind,
            id,
            start_thread: s.thread,
            start_ns: s.ts_ns,
            end_thread: f.thread,
            end_ns: f.ts_ns,
        }));
        i = j;
    }
    out.sort_by_key(|f| (f.start_ns, f.id));
    out
}

#[cfg(test)]
mod flow_tests {
    use super::*;

    #[test]
    fn flow_ends_pair_by_kind_and_id_in_file_order() {
        let p = |kind, id, start, thread, ts_ns| FlowPoint {
            kind,
            id,
            start,
            thread,
            ts_ns,
        };
        let (n, h) = (TraceFlowKind::TorchToNpu, TraceFlowKind::HostToDevice);
        let mut t = HostEventTable::new();
        t.flow_points = vec![
            p(h, 7, false, 2, 900), // the f before its s (file order is free)
            p(n, 7, true, 1, 100),
            p(h, 7, true, 3, 150),
            p(n, 7, false, 2, 900),
            p(h, 9, true, 3, 50), // a lone s
            p(h, 8, true, 3, 300),
            p(h, 8, true, 3, 400),
            p(h, 8, false, 2, 1000),
            p(h, 8, false, 2, 1100),
        ];
        t.finish();
        let got: Vec<(TraceFlowKind, u128, i64, i64)> = t
            .flows()
            .iter()
            .map(|f| (f.kind, f.id, f.start_ns, f.end_ns))
            .collect();
        assert_eq!(
            got,
            vec![
                (n, 7, 100, 900),
                (h, 7, 150, 900),
                (h, 8, 300, 1000),
                (h, 8, 400, 1100)
            ]
        );
        assert!(t.flow_points.is_empty());
    }
}
