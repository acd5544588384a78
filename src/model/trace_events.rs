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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostEvent {
    /// Event name id.
    pub name: TextId,
    /// Category id (empty string when the event has no `cat`).
    pub cat: TextId,
    /// Interned `(pid, tid)` thread key.
    pub thread: u32,
    /// Lane of its process.
    pub lane: Lane,
    /// Start in ns.
    pub start_ns: i64,
    /// Duration in ns (> 0).
    pub dur_ns: i64,
}

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

/// Everything kept from one `trace_view.json`.
#[derive(Clone, Debug, Default)]
pub struct HostEventTable {
    pool: Vec<String>,
    index: HashMap<String, TextId>,
    threads: Vec<String>,
    thread_index: HashMap<String, u32>,
    events: Vec<HostEvent>,
    /// Step-marker candidates, in file order.
    pub markers: Vec<MarkerEvent>,
    /// `ts` (ns) of the points `h2d_flow_count` counts (§5.6): on Ascend the flow end points
    /// (`ph:"f"`) of `HostToDevice` / `async_npu` flows; on GPU ranks the launch starts of the
    /// device ops (`engine::gpu::launch_points`).
    pub h2d_flow_ends_ns: Vec<i64>,
    /// Device-lane events (Ascend Hardware + HCCL `X`).
    pub device_events: Vec<DeviceEvent>,
    /// True when any `python_function` event or `Call stack` arg was seen (capability inference, §1.1).
    pub saw_stack: bool,
    /// True when any `Input Dims` arg was seen (capability inference, §1.1).
    pub saw_input_dims: bool,
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
            self.events.push(HostEvent {
                name,
                cat,
                thread,
                lane,
                start_ns,
                dur_ns,
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
    }

    /// Host events, sorted by start after [`finish`](Self::finish).
    pub fn events(&self) -> &[HostEvent] {
        &self.events
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
