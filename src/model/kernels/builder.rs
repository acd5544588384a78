//! [`KernelTableBuilder`]: parsers push normalised rows ([`KernelRow`]); [`KernelTableBuilder::finish`]
//! sorts them by start (ties: stream key, then source row, §1.2.1), joins streams and sets the
//! invariants of the [`KernelTable`].

use rustc_hash::FxHashMap as HashMap;

use super::{is_comm_kernel, Filled, KernelTable, NameId, TaskClass, NO_LAUNCH};
use crate::base::arith::{self, OutOfRange, Tally};
use crate::base::sort::place;

/// One kernel as a parser hands it to the builder (§1.2.1 normalised record).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelRow {
    /// `Name` / `Op Name`.
    pub name: String,
    /// `Type` / `OP Type` (may be `N/A`).
    pub op_type: String,
    /// `Accelerator Core` / `Task Type`, as written.
    pub core_raw: String,
    /// Start in ns (exact from the µs text).
    pub start_ns: i64,
    /// Duration in ns (> 0; parsers reject the rest as problems).
    pub dur_ns: i64,
    /// Wait in ns (`N/A`/empty → 0).
    pub wait_ns: i64,
    /// Stream key: the integer `Stream ID` as text, `hccl`, or `unknown` (§1.2.4); empty = not yet known.
    pub stream: String,
    /// `Step Id`, when the column exists and is an integer.
    pub step_tag: Option<i64>,
    /// Start (ns) of the host op that launched the kernel, when known (GPU: the
    /// `cuda_runtime` launch with the same `correlation`; Ascend: a launch flow).
    /// Device-side step windows (anomaly.md §3.2 device lag) read it.
    pub launch_ns: Option<i64>,
    /// `Input Shapes` raw text (literal quotes kept); empty when absent.
    pub input_shapes: String,
    /// 1-based physical line of the record (0 for trace-derived kernels).
    pub row: u64,
    /// PMU `aic_mac_ratio`, when present.
    pub pmu_mac_ratio: Option<f32>,
    /// PMU `aic_mte2_ratio`, when present.
    pub pmu_mte2_ratio: Option<f32>,
    /// PMU `memory_bound`, when present.
    pub pmu_memory_bound: Option<f32>,
}

/// The texts of one kernel row as ids of a [`KernelTableBuilder`]'s pool
/// ([`KernelTableBuilder::text_id`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowTexts {
    /// [`KernelRow::name`].
    pub name: NameId,
    /// [`KernelRow::op_type`].
    pub op_type: NameId,
    /// [`KernelRow::core_raw`].
    pub core_raw: NameId,
    /// [`KernelRow::input_shapes`].
    pub shapes: NameId,
    /// [`KernelRow::stream`]; `None` = empty (not yet known).
    pub stream: Option<NameId>,
}

/// Accumulates [`KernelRow`]s; [`finish`](Self::finish) sorts and freezes them.
///
/// The rows are kept as the table's columns (no row struct): `finish` sorts an order of them
/// and moves one column at a time into that order, so the rows are never held twice.
#[derive(Debug)]
pub struct KernelTableBuilder {
    pool: Vec<String>,
    index: HashMap<String, NameId>,
    /// Room reserved for each column ([`with_capacity`](Self::with_capacity)), also when a
    /// column kept as one value starts to hold one value per row.
    capacity: usize,
    start_ns: Vec<i64>,
    dur_ns: Vec<i64>,
    wait_ns: Filled<i64>,
    /// [`NO_STREAM`] = not yet known.
    stream: Vec<NameId>,
    class: Vec<TaskClass>,
    inferred: Vec<bool>,
    comm: Vec<bool>,
    name: Vec<NameId>,
    op_type: Filled<NameId>,
    core_raw: Vec<NameId>,
    shapes: Filled<NameId>,
    step_tag: Filled<Option<i64>>,
    /// Kept as one value ([`NO_LAUNCH`]) until a kernel has a launch time.
    launch_ns: Filled<i64>,
    /// Source rows; empty while every row pushed is its index + 1 (a GPU trace's device ops).
    row: Vec<u64>,
    /// Kept as one value (no PMU) until a kernel has one.
    pmu: Filled<[Option<f32>; 3]>,
    rejected: Tally,
    /// Σ (duration + wait) of the rows kept, ns: bounded by `i64::MAX`, so every sum of
    /// durations, waits or both over any subset of the table fits (§3.4 sums, op totals, cost).
    cost_sum: i64,
}

/// The builder's stream of a row whose stream key is not yet known.
const NO_STREAM: NameId = NameId::MAX;

impl Default for KernelTableBuilder {
    fn default() -> Self {
        KernelTableBuilder {
            pool: Vec::new(),
            index: HashMap::default(),
            capacity: 0,
            start_ns: Vec::new(),
            dur_ns: Vec::new(),
            wait_ns: Filled::default(),
            stream: Vec::new(),
            class: Vec::new(),
            inferred: Vec::new(),
            comm: Vec::new(),
            name: Vec::new(),
            op_type: Filled::default(),
            core_raw: Vec::new(),
            shapes: Filled::default(),
            step_tag: Filled::default(),
            launch_ns: Filled::of(NO_LAUNCH),
            row: Vec::new(),
            pmu: Filled::of([None; 3]),
            rejected: Tally::default(),
            cost_sum: 0,
        }
    }
}

impl KernelTableBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty builder with room for `rows` kernels (sources that know their row count: no
    /// regrowth copies, which in wasm are a `memcpy` of the whole table each time).
    pub fn with_capacity(rows: usize) -> Self {
        let mut b = Self {
            capacity: rows,
            ..Self::default()
        };
        b.start_ns.reserve_exact(rows);
        b.dur_ns.reserve_exact(rows);
        b.stream.reserve_exact(rows);
        b.class.reserve_exact(rows);
        b.inferred.reserve_exact(rows);
        b.comm.reserve_exact(rows);
        b.name.reserve_exact(rows);
        b.core_raw.reserve_exact(rows);
        b
    }

    fn intern(&mut self, s: &str) -> NameId {
        if let Some(&id) = self.index.get(s) {
            return id;
        }
        let id = self.pool.len() as NameId;
        self.pool.push(s.to_string());
        self.index.insert(s.to_string(), id);
        id
    }

    /// Number of rows pushed so far.
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    /// True when no row was pushed.
    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }

    /// Adds one kernel; its task class is derived from `core_raw` and `name` (§1.2.2).
    /// An empty `stream` becomes `hccl` for comm kernels and `unknown` otherwise (§1.2.4).
    ///
    /// A kernel whose start or end lies outside the model's time range
    /// (`base::arith::interval_ns`), or whose duration + wait would make the table's total
    /// exceed `i64::MAX` ns, is not added: it is counted in
    /// [`rejected`](Self::rejected) (by source row) for the caller's problem. Parsers that can
    /// locate the bad cell better use [`try_push`](Self::try_push).
    pub fn push(&mut self, k: &KernelRow) {
        if self.try_push(k).is_err() {
            self.rejected.record(k.row);
        }
    }

    /// Kernels [`push`](Self::push) refused (time out of range), with their source rows.
    pub fn rejected(&self) -> &Tally {
        &self.rejected
    }

    /// Like [`push`](Self::push), but a kernel out of the time range is returned as `Err`
    /// (and not counted): the caller reports it where it knows the line and column.
    pub fn try_push(&mut self, k: &KernelRow) -> Result<(), OutOfRange> {
        // Interned in this order (the pool's order is the table's).
        let stream = (!k.stream.is_empty()).then(|| self.text_id(&k.stream));
        let texts = RowTexts {
            name: self.text_id(&k.name),
            op_type: self.text_id(&k.op_type),
            core_raw: self.text_id(&k.core_raw),
            shapes: self.text_id(&k.input_shapes),
            stream,
        };
        self.try_push_texts(k, texts)
    }

    /// [`push`](Self::push) of a row whose texts are ids ([`try_push_texts`](Self::try_push_texts)).
    pub fn push_texts(&mut self, k: &KernelRow, texts: RowTexts) {
        if self.try_push_texts(k, texts).is_err() {
            self.rejected.record(k.row);
        }
    }

    /// The id of text `s` in this builder's pool (interned on first use), for
    /// [`try_push_texts`](Self::try_push_texts).
    pub fn text_id(&mut self, s: &str) -> NameId {
        self.intern(s)
    }

    /// [`try_push`](Self::try_push) of a row whose texts are already ids of this builder's
    /// pool ([`text_id`](Self::text_id)): `k`'s `name`, `op_type`, `core_raw`,
    /// `input_shapes` and `stream` are not read, `texts` stand for them. For sources with
    /// few distinct texts, each interned once instead of once per row.
    pub fn try_push_texts(&mut self, k: &KernelRow, texts: RowTexts) -> Result<(), OutOfRange> {
        let (dur, wait) = (k.dur_ns.max(0), k.wait_ns.max(0));
        arith::interval_ns(k.start_ns, dur)?;
        self.cost_sum = arith::add(self.cost_sum, arith::add(dur, wait)?)?;
        let name = &self.pool[texts.name as usize];
        let (class, inferred) = TaskClass::classify(&self.pool[texts.core_raw as usize], name);
        let comm = is_comm_kernel(class, name);
        let (i, cap) = (self.start_ns.len(), self.capacity);
        self.start_ns.push(k.start_ns);
        self.dur_ns.push(dur);
        self.wait_ns.push(i, wait, true, cap);
        self.stream.push(texts.stream.unwrap_or(NO_STREAM));
        self.class.push(class);
        self.inferred.push(inferred);
        self.comm.push(comm);
        self.name.push(texts.name);
        self.op_type.push(i, texts.op_type, true, cap);
        self.core_raw.push(texts.core_raw);
        self.shapes.push(i, texts.shapes, true, cap);
        self.step_tag.push(i, k.step_tag, true, cap);
        // A launch time outside the model's time range is dropped, never kept.
        let launch = k.launch_ns.filter(|&l| arith::time_ns(l).is_ok());
        self.launch_ns
            .push(i, launch.unwrap_or(NO_LAUNCH), false, cap);
        if !self.row.is_empty() || k.row != i as u64 + 1 {
            if self.row.is_empty() {
                self.row.reserve_exact(cap.max(i + 1));
                self.row.extend(1..=i as u64);
            }
            self.row.push(k.row);
        }
        let pmu = [k.pmu_mac_ratio, k.pmu_mte2_ratio, k.pmu_memory_bound];
        self.pmu.push(i, pmu, false, cap);
        Ok(())
    }

    /// Smallest start pushed so far, ns.
    pub fn min_start_ns(&self) -> Option<i64> {
        self.start_ns.iter().copied().min()
    }

    /// Number of non-comm rows still without a stream key.
    pub fn missing_streams(&self) -> usize {
        self.stream
            .iter()
            .zip(&self.comm)
            .filter(|&(&s, &comm)| s == NO_STREAM && !comm)
            .count()
    }

    /// Fills missing stream keys of non-comm rows from `lookup(name, start_ns)` (the Level0
    /// join with trace device lanes, §1.2.4). Returns how many rows were joined.
    pub fn join_streams(&mut self, mut lookup: impl FnMut(&str, i64) -> Option<String>) -> usize {
        let mut n = 0;
        for r in 0..self.start_ns.len() {
            if self.stream[r] != NO_STREAM || self.comm[r] {
                continue;
            }
            let name = self.pool[self.name[r] as usize].clone();
            if let Some(s) = lookup(&name, self.start_ns[r]) {
                self.stream[r] = self.intern(&s);
                n += 1;
            }
        }
        n
    }

    /// Sorts by `(start, stream key, row)` (§1.2.1) and builds the table. Rows still
    /// without a stream get `hccl` (comm kernels) or `unknown` (§1.2.4).
    pub fn finish(mut self) -> KernelTable {
        let hccl = self.intern("hccl");
        let unknown = self.intern("unknown");
        for (s, &comm) in self.stream.iter_mut().zip(&self.comm) {
            if *s == NO_STREAM {
                *s = if comm { hccl } else { unknown };
            }
        }
        let n = self.start_ns.len();
        // The order of the rows, sorted (stable, like a sort of the rows themselves) as indices.
        let mut order: Vec<usize> = (0..n).collect();
        {
            let (pool, start, stream, row) = (&self.pool, &self.start_ns, &self.stream, &self.row);
            let row_at = |i: usize| row.get(i).copied().unwrap_or(i as u64 + 1);
            order.sort_by(|&a, &b| {
                start[a]
                    .cmp(&start[b])
                    .then_with(|| pool[stream[a] as usize].cmp(&pool[stream[b] as usize]))
                    .then_with(|| row_at(a).cmp(&row_at(b)))
            });
        }
        // Source rows that are the kernel's index + 1 are not stored when at most a quarter
        // are not (`row_of`): those are listed, at twice the room of a row each.
        let row_at = |i: usize| self.row.get(i).copied().unwrap_or(i as u64 + 1);
        let moved = order
            .iter()
            .enumerate()
            .filter(|&(k, &i)| row_at(i) != k as u64 + 1)
            .count();
        let counted_rows = moved <= n / 4;
        let (mut row, mut row_moved) = (Vec::new(), Vec::new());
        if counted_rows {
            row_moved.reserve_exact(moved);
            for (k, &i) in order.iter().enumerate() {
                if row_at(i) != k as u64 + 1 {
                    row_moved.push((k, row_at(i)));
                }
            }
        } else {
            row.reserve_exact(n);
            row.extend(order.iter().map(|&i| row_at(i)));
        }
        drop(self.row);
        // Columns kept at their length (builders sized from a file's size reserved more), before
        // they move: a move holds one copy of its column.
        self.start_ns.shrink_to_fit();
        self.dur_ns.shrink_to_fit();
        self.wait_ns.rows.shrink_to_fit();
        self.stream.shrink_to_fit();
        self.class.shrink_to_fit();
        self.inferred.shrink_to_fit();
        self.comm.shrink_to_fit();
        self.name.shrink_to_fit();
        self.op_type.rows.shrink_to_fit();
        self.core_raw.shrink_to_fit();
        self.shapes.rows.shrink_to_fit();
        self.step_tag.rows.shrink_to_fit();
        self.launch_ns.rows.shrink_to_fit();
        self.pmu.rows.shrink_to_fit();
        // Each column moved into the order in turn (nothing to move when the rows came sorted).
        if order.iter().enumerate().any(|(k, &i)| k != i) {
            place(&mut self.start_ns, order.iter().copied());
            place(&mut self.dur_ns, order.iter().copied());
            self.wait_ns.permute(&order);
            place(&mut self.stream, order.iter().copied());
            place(&mut self.class, order.iter().copied());
            place(&mut self.inferred, order.iter().copied());
            place(&mut self.comm, order.iter().copied());
            place(&mut self.name, order.iter().copied());
            self.op_type.permute(&order);
            place(&mut self.core_raw, order.iter().copied());
            self.shapes.permute(&order);
            self.step_tag.permute(&order);
            self.launch_ns.permute(&order);
            self.pmu.permute(&order);
        }
        drop(order);
        // The columns as the table keeps them (launch times and PMU: empty when none has one).
        let mut t = KernelTable {
            pool: self.pool,
            start_ns: self.start_ns,
            dur_ns: self.dur_ns,
            wait_ns: self.wait_ns,
            stream: self.stream,
            class: self.class,
            inferred: self.inferred,
            comm: self.comm,
            name: self.name,
            op_type: self.op_type,
            core_raw: self.core_raw,
            shapes: self.shapes,
            step_tag: self.step_tag,
            launch_ns: self.launch_ns.rows,
            row,
            row_moved,
            pmu: self.pmu.rows,
            busy_end: Vec::new(),
            overruns: Vec::new(),
        };
        t.clip_stream_overruns();
        t
    }
}
