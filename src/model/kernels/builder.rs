//! [`KernelTableBuilder`]: parsers push normalised rows ([`KernelRow`]); [`KernelTableBuilder::finish`]
//! sorts them by start (ties: stream key, then source row, §1.2.1), joins streams and sets the
//! invariants of the [`KernelTable`].

use rustc_hash::FxHashMap as HashMap;

use super::{is_comm_kernel, Filled, KernelTable, NameId, TaskClass, NO_LAUNCH};
use crate::base::arith::{self, OutOfRange, Tally};

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
#[derive(Debug, Default)]
pub struct KernelTableBuilder {
    pool: Vec<String>,
    index: HashMap<String, NameId>,
    rows: Vec<RawRow>,
    rejected: Tally,
    /// Σ (duration + wait) of the rows kept, ns: bounded by `i64::MAX`, so every sum of
    /// durations, waits or both over any subset of the table fits (§3.4 sums, op totals, cost).
    cost_sum: i64,
}

#[derive(Clone, Copy, Debug)]
struct RawRow {
    start_ns: i64,
    dur_ns: i64,
    wait_ns: i64,
    stream: Option<NameId>,
    class: TaskClass,
    inferred: bool,
    comm: bool,
    name: NameId,
    op_type: NameId,
    core_raw: NameId,
    shapes: NameId,
    step_tag: Option<i64>,
    launch_ns: Option<i64>,
    row: u64,
    pmu: [Option<f32>; 3],
}

impl KernelTableBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty builder with room for `rows` kernels (sources that know their row count: no
    /// regrowth copies, which in wasm are a `memcpy` of the whole table each time).
    pub fn with_capacity(rows: usize) -> Self {
        let mut b = Self::default();
        b.rows.reserve_exact(rows);
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
        self.rows.len()
    }

    /// True when no row was pushed.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
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
        let raw = RawRow {
            start_ns: k.start_ns,
            dur_ns: dur,
            wait_ns: wait,
            stream: texts.stream,
            class,
            inferred,
            comm,
            name: texts.name,
            op_type: texts.op_type,
            core_raw: texts.core_raw,
            shapes: texts.shapes,
            step_tag: k.step_tag,
            // A launch time outside the model's time range is dropped, never kept.
            launch_ns: k.launch_ns.filter(|&l| arith::time_ns(l).is_ok()),
            row: k.row,
            pmu: [k.pmu_mac_ratio, k.pmu_mte2_ratio, k.pmu_memory_bound],
        };
        self.rows.push(raw);
        Ok(())
    }

    /// Smallest start pushed so far, ns.
    pub fn min_start_ns(&self) -> Option<i64> {
        self.rows.iter().map(|r| r.start_ns).min()
    }

    /// Number of non-comm rows still without a stream key.
    pub fn missing_streams(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r.stream.is_none() && !r.comm)
            .count()
    }

    /// Fills missing stream keys of non-comm rows from `lookup(name, start_ns)` (the Level0
    /// join with trace device lanes, §1.2.4). Returns how many rows were joined.
    pub fn join_streams(&mut self, mut lookup: impl FnMut(&str, i64) -> Option<String>) -> usize {
        let mut n = 0;
        for r in 0..self.rows.len() {
            let row = self.rows[r];
            if row.stream.is_some() || row.comm {
                continue;
            }
            let name = self.pool[row.name as usize].clone();
            if let Some(s) = lookup(&name, row.start_ns) {
                let id = self.intern(&s);
                self.rows[r].stream = Some(id);
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
        let pool = self.pool;
        let key = |r: &RawRow| r.stream.unwrap_or(if r.comm { hccl } else { unknown });
        let rows = &self.rows;
        let n = rows.len();
        // The order of the rows, sorted (stable, like a sort of the rows themselves) as indices:
        // no copy of the rows, whose sort buffer would be half of them.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (&rows[a], &rows[b]);
            a.start_ns
                .cmp(&b.start_ns)
                .then_with(|| pool[key(a) as usize].cmp(&pool[key(b) as usize]))
                .then(a.row.cmp(&b.row))
        });
        let sorted = || order.iter().map(|&i| &rows[i]);
        let has_pmu = rows.iter().any(|r| r.pmu.iter().any(Option::is_some));
        let has_launch = rows.iter().any(|r| r.launch_ns.is_some());
        // Source rows that are the kernel's index + 1 are not stored when at most a quarter
        // are not (`row_of`): those are listed, at twice the room of a row each.
        let moved = sorted()
            .enumerate()
            .filter(|&(i, r)| r.row != i as u64 + 1)
            .count();
        let counted_rows = moved <= n / 4;
        // The columns that are often one value for the whole table (`Filled`).
        let wait_ns = Filled::collect(sorted().map(|r| r.wait_ns));
        let op_type = Filled::collect(sorted().map(|r| r.op_type));
        let step_tag = Filled::collect(sorted().map(|r| r.step_tag));
        let shapes = Filled::collect(sorted().map(|r| r.shapes));
        let mut t = KernelTable {
            pool,
            start_ns: Vec::with_capacity(n),
            dur_ns: Vec::with_capacity(n),
            wait_ns,
            stream: Vec::with_capacity(n),
            class: Vec::with_capacity(n),
            inferred: Vec::with_capacity(n),
            comm: Vec::with_capacity(n),
            name: Vec::with_capacity(n),
            op_type,
            core_raw: Vec::with_capacity(n),
            shapes,
            step_tag,
            launch_ns: Vec::new(),
            row: Vec::new(),
            row_moved: Vec::new(),
            pmu: Vec::new(),
            busy_end: Vec::new(),
            overruns: Vec::new(),
        };
        if has_pmu {
            t.pmu.reserve_exact(n);
        }
        if has_launch {
            t.launch_ns.reserve_exact(n);
        }
        if counted_rows {
            t.row_moved.reserve_exact(moved);
        } else {
            t.row.reserve_exact(n);
        }
        for (i, r) in sorted().enumerate() {
            t.start_ns.push(r.start_ns);
            t.dur_ns.push(r.dur_ns);
            t.stream.push(key(r));
            t.class.push(r.class);
            t.inferred.push(r.inferred);
            t.comm.push(r.comm);
            t.name.push(r.name);
            t.core_raw.push(r.core_raw);
            if !counted_rows {
                t.row.push(r.row);
            } else if r.row != i as u64 + 1 {
                t.row_moved.push((i, r.row));
            }
            if has_pmu {
                t.pmu.push(r.pmu);
            }
            if has_launch {
                t.launch_ns.push(r.launch_ns.unwrap_or(NO_LAUNCH));
            }
        }
        drop(order);
        drop(self.rows);
        t.clip_stream_overruns();
        t
    }
}
