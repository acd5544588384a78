//! One rank's device kernels as a columnar table (anomaly.md §1.2).
//!
//! Built by [`KernelTableBuilder`] from `kernel_details.csv`, `op_summary*.csv`
//! or the device lanes of `trace_view.json`; [`KernelTableBuilder::finish`]
//! sorts rows by start (ties: stream key, then source row, §1.2.1) and sets the
//! invariants. Times are `i64` nanoseconds parsed exactly from the decimal µs text.

use rustc_hash::FxHashMap as HashMap;

use crate::base::arith::{self, OutOfRange, Tally};

/// Normalised execution unit of a kernel (anomaly.md §1.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TaskClass {
    /// The AI_CORE family: `AI_CORE`, `AI_VECTOR_CORE`, `MIX_AI*`, `FFTS_PLUS`, …
    AiCore,
    /// `AI_CPU`.
    AiCpu,
    /// Communication: `HCCL`, `COMMUNICATION`.
    Hccl,
    /// Everything else (`DSA_SQE`, `DVPP`, `PCIE_DMA_SQE`, …).
    Other,
}

impl TaskClass {
    /// The spec spelling: `AI_CORE`, `AI_CPU`, `HCCL`, `OTHER`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskClass::AiCore => "AI_CORE",
            TaskClass::AiCpu => "AI_CPU",
            TaskClass::Hccl => "HCCL",
            TaskClass::Other => "OTHER",
        }
    }

    /// Class from the raw `Accelerator Core` / `Task Type` text and the kernel name
    /// (§1.2.2). Returns the class and whether it was inferred from the name
    /// (empty or `N/A` core).
    pub fn classify(core_raw: &str, name: &str) -> (TaskClass, bool) {
        // The core text compared upper-cased, without allocating (the names are ASCII).
        let core = core_raw.trim();
        let is = |names: &[&str]| names.iter().any(|n| core.eq_ignore_ascii_case(n));
        if is(&[
            "AI_CORE",
            "AI_VECTOR_CORE",
            "MIX_AIC",
            "MIX_AIV",
            "MIXED_AIC",
            "MIXED_AIV",
            "FFTS_PLUS",
            "AICORE",
            "AIVECTOR",
            "MIXAIC",
            // GPU compute kernels (issue 10, `engine::read::gpu`): the compute class.
            "KERNEL",
        ]) {
            (TaskClass::AiCore, false)
        } else if is(&["AI_CPU", "AICPU"]) {
            (TaskClass::AiCpu, false)
        } else if is(&["HCCL", "COMMUNICATION", "NCCL"]) {
            // `NCCL`: GPU collectives (`engine::read::gpu`).
            (TaskClass::Hccl, false)
        } else if is(&["", "N/A"]) {
            let lower = name.to_ascii_lowercase();
            if is_hccl_name(&lower) {
                (TaskClass::Hccl, true)
            } else if lower.contains("aicpu") {
                (TaskClass::AiCpu, true)
            } else {
                (TaskClass::AiCore, true)
            }
        } else {
            (TaskClass::Other, false)
        }
    }
}

/// HCCL name pattern of §1.2.2 (Decision): `^(hcom|hccl)|allreduce|allgather|
/// reducescatter|reduce_scatter|alltoall|broadcast|batchsendrecv`, on a lower-cased name.
///
/// Refinement (our Decision): names starting with `aclnn` are single-operator compute
/// kernels (`aclnnEqTensor_BroadcastToAiCore_BroadcastTo` on `level0/rank0`) and never
/// match; this keeps §1.2.4's "all 187 non-communication rows" of the Level0 fixtures true.
fn is_hccl_name(lower: &str) -> bool {
    if lower.starts_with("aclnn") {
        return false;
    }
    lower.starts_with("hcom")
        || lower.starts_with("hccl")
        || [
            "allreduce",
            "allgather",
            "reducescatter",
            "reduce_scatter",
            "alltoall",
            "broadcast",
            "batchsendrecv",
        ]
        .iter()
        .any(|p| lower.contains(p))
}

/// True when the kernel is a communication kernel: class HCCL or name `^(hcom|hccl)` (§1.2.2).
pub fn is_comm_kernel(class: TaskClass, name: &str) -> bool {
    if class == TaskClass::Hccl {
        return true;
    }
    let b = name.as_bytes();
    b.len() >= 4 && (b[..4].eq_ignore_ascii_case(b"hcom") || b[..4].eq_ignore_ascii_case(b"hccl"))
}

/// Interned string id into a [`KernelTable`]'s pool.
pub type NameId = u32;

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
        self.rows.sort_by(|a, b| {
            a.start_ns
                .cmp(&b.start_ns)
                .then_with(|| pool[key(a) as usize].cmp(&pool[key(b) as usize]))
                .then(a.row.cmp(&b.row))
        });
        let n = self.rows.len();
        let mut t = KernelTable {
            pool,
            start_ns: Vec::with_capacity(n),
            dur_ns: Vec::with_capacity(n),
            wait_ns: Vec::with_capacity(n),
            stream: Vec::with_capacity(n),
            class: Vec::with_capacity(n),
            inferred: Vec::with_capacity(n),
            comm: Vec::with_capacity(n),
            name: Vec::with_capacity(n),
            op_type: Vec::with_capacity(n),
            core_raw: Vec::with_capacity(n),
            shapes: Vec::with_capacity(n),
            step_tag: Vec::with_capacity(n),
            launch_ns: Vec::new(),
            row: Vec::with_capacity(n),
            pmu: Vec::new(),
            busy_end: Vec::new(),
            overruns: Vec::new(),
        };
        let has_pmu = self.rows.iter().any(|r| r.pmu.iter().any(Option::is_some));
        let has_launch = self.rows.iter().any(|r| r.launch_ns.is_some());
        for r in &self.rows {
            t.start_ns.push(r.start_ns);
            t.dur_ns.push(r.dur_ns);
            t.wait_ns.push(r.wait_ns);
            t.stream.push(key(r));
            t.class.push(r.class);
            t.inferred.push(r.inferred);
            t.comm.push(r.comm);
            t.name.push(r.name);
            t.op_type.push(r.op_type);
            t.core_raw.push(r.core_raw);
            t.shapes.push(r.shapes);
            t.step_tag.push(r.step_tag);
            t.row.push(r.row);
            if has_pmu {
                t.pmu.push(r.pmu);
            }
            if has_launch {
                t.launch_ns.push(r.launch_ns);
            }
        }
        t.clip_stream_overruns();
        t
    }
}

/// A test on kernel names asked once per distinct name: the answer for the name's text is
/// remembered by its [`NameId`] (the rule itself stays with the caller).
pub struct NameTest<'a, F: Fn(&str) -> bool> {
    k: &'a KernelTable,
    test: F,
    memo: Vec<Option<bool>>,
}

impl<'a, F: Fn(&str) -> bool> NameTest<'a, F> {
    /// `test` over the names of `k`.
    pub fn new(k: &'a KernelTable, test: F) -> Self {
        NameTest {
            k,
            test,
            memo: vec![None; k.pool.len()],
        }
    }

    /// `test` of the name of kernel `i`.
    pub fn of(&mut self, i: usize) -> bool {
        let (k, id) = (self.k, self.k.name[i]);
        let test = &self.test;
        match self.memo.get_mut(id as usize) {
            Some(slot) => *slot.get_or_insert_with(|| test(k.text(id))),
            None => test(k.text(id)),
        }
    }
}

/// One rank's kernels, one column per field.
///
/// Invariants (set by [`KernelTableBuilder::finish`]): all columns have the same
/// length; rows are sorted by `start_ns`, ties by stream key then source row;
/// `dur_ns ≥ 0`, `wait_ns ≥ 0`; `start_ns` and `start_ns + dur_ns` within
/// `±base::arith::TIME_LIMIT_NS`; Σ (`dur_ns` + `wait_ns`) over the table ≤ `i64::MAX`. Every `NameId` indexes [`KernelTable::text`].
#[derive(Clone, Debug, Default)]
pub struct KernelTable {
    pool: Vec<String>,
    start_ns: Vec<i64>,
    dur_ns: Vec<i64>,
    wait_ns: Vec<i64>,
    stream: Vec<NameId>,
    class: Vec<TaskClass>,
    inferred: Vec<bool>,
    comm: Vec<bool>,
    name: Vec<NameId>,
    op_type: Vec<NameId>,
    core_raw: Vec<NameId>,
    shapes: Vec<NameId>,
    step_tag: Vec<Option<i64>>,
    /// Launch time per kernel (empty when no kernel has one).
    launch_ns: Vec<Option<i64>>,
    row: Vec<u64>,
    pmu: Vec<[Option<f32>; 3]>,
    /// Busy end per kernel (empty when no kernel overruns: then it is `end_ns`).
    busy_end: Vec<i64>,
    overruns: Vec<Overrun>,
}

/// A kernel that runs past the start of the next kernel on the same known stream (a stall
/// artefact: kernels of one stream run one after another). Issue 11 Decision: its busy end
/// is clipped at that start ([`KernelTable::busy_end_ns`]); the raw end stays `end_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overrun {
    /// Index of the overrunning kernel.
    pub kernel: usize,
    /// Index of the next kernel on its stream (the clip point is its start).
    pub next: usize,
    /// Raw end − clip point, ns (> 0).
    pub overrun_ns: i64,
}

impl KernelTable {
    /// Sets the busy ends: on a numeric stream (the `Stream ID` column, or a Level0 join), a
    /// kernel ending after the next later-starting kernel of the same stream ends there.
    /// `hccl` / `unknown` streams are never clipped (kernels of different streams share
    /// those keys and may overlap legitimately). O(n).
    fn clip_stream_overruns(&mut self) {
        let known: Vec<bool> = self.pool.iter().map(|s| s.parse::<i64>().is_ok()).collect();
        // Per stream: (last kernel seen going backwards, first kernel starting after it).
        let mut later: Vec<Option<(usize, Option<usize>)>> = vec![None; self.pool.len()];
        let mut overruns = Vec::new();
        for i in (0..self.len()).rev() {
            let sid = self.stream[i] as usize;
            if !known[sid] {
                continue;
            }
            let next = match later[sid] {
                Some((j, _)) if self.start_ns[j] > self.start_ns[i] => Some(j),
                Some((_, n)) => n,
                None => None,
            };
            if let Some(j) = next {
                let over = self.end_ns(i) - self.start_ns[j];
                if over > 0 {
                    overruns.push(Overrun {
                        kernel: i,
                        next: j,
                        overrun_ns: over,
                    });
                }
            }
            later[sid] = Some((i, next));
        }
        if overruns.is_empty() {
            return;
        }
        overruns.reverse();
        self.busy_end = (0..self.len()).map(|i| self.end_ns(i)).collect();
        for o in &overruns {
            self.busy_end[o.kernel] = self.start_ns[o.next];
        }
        self.overruns = overruns;
    }

    /// End of kernel `i` for busy unions and walls, ns: `end_ns(i)`, except for an
    /// [`Overrun`], which ends at the next kernel's start on its stream (issue 11 Decision).
    #[inline]
    pub fn busy_end_ns(&self, i: usize) -> i64 {
        match self.busy_end.get(i) {
            Some(&e) => e,
            None => self.end_ns(i),
        }
    }

    /// The kernels whose busy end was clipped, in table order.
    pub fn overruns(&self) -> &[Overrun] {
        &self.overruns
    }

    /// Number of kernels.
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }
    /// True when there are no kernels.
    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }
    /// Starts in ns, ascending.
    #[inline]
    pub fn start_ns(&self) -> &[i64] {
        &self.start_ns
    }
    /// Durations in ns.
    #[inline]
    pub fn dur_ns(&self) -> &[i64] {
        &self.dur_ns
    }
    /// Waits in ns.
    pub fn wait_ns(&self) -> &[i64] {
        &self.wait_ns
    }
    /// End (start + dur) of kernel `i` in ns.
    #[inline]
    pub fn end_ns(&self, i: usize) -> i64 {
        self.start_ns[i] + self.dur_ns[i]
    }
    /// Stream key ids.
    pub fn stream(&self) -> &[NameId] {
        &self.stream
    }
    /// Task classes.
    pub fn class(&self) -> &[TaskClass] {
        &self.class
    }
    /// Whether each class was inferred from the name (Level0 `N/A` core).
    pub fn class_inferred(&self) -> &[bool] {
        &self.inferred
    }
    /// Whether each kernel is a communication kernel (§1.2.2).
    pub fn comm(&self) -> &[bool] {
        &self.comm
    }
    /// Name ids.
    pub fn name(&self) -> &[NameId] {
        &self.name
    }
    /// `Type` ids.
    pub fn op_type(&self) -> &[NameId] {
        &self.op_type
    }
    /// Raw core text ids.
    pub fn core_raw(&self) -> &[NameId] {
        &self.core_raw
    }
    /// `Input Shapes` ids (empty string when absent).
    pub fn shapes(&self) -> &[NameId] {
        &self.shapes
    }
    /// `Step Id` per kernel.
    pub fn step_tag(&self) -> &[Option<i64>] {
        &self.step_tag
    }
    /// Start (ns) of the host op that launched kernel `i`, when known.
    pub fn launch_ns(&self, i: usize) -> Option<i64> {
        self.launch_ns.get(i).copied().flatten()
    }

    /// True when at least one kernel knows its launch time.
    pub fn has_launch_times(&self) -> bool {
        !self.launch_ns.is_empty()
    }

    /// Source line per kernel (0 for trace-derived kernels).
    pub fn row(&self) -> &[u64] {
        &self.row
    }
    /// PMU `[aic_mac_ratio, aic_mte2_ratio, memory_bound]` per kernel; empty when no PMU column exists.
    pub fn pmu(&self) -> &[[Option<f32>; 3]] {
        &self.pmu
    }
    /// The interned text of `id` (`""` for an unknown id).
    #[inline]
    pub fn text(&self, id: NameId) -> &str {
        self.pool.get(id as usize).map(String::as_str).unwrap_or("")
    }
    /// True when `test` holds for the name of any kernel; each distinct name is tested once
    /// (a scan of the id column, then one test per name id in use).
    pub fn any_name(&self, test: impl Fn(&str) -> bool) -> bool {
        let mut used = vec![false; self.pool.len()];
        for &id in &self.name {
            if let Some(u) = used.get_mut(id as usize) {
                *u = true;
            }
        }
        used.iter()
            .enumerate()
            .any(|(id, &u)| u && test(self.text(id as NameId)))
    }
    /// Name of kernel `i`.
    #[inline]
    pub fn name_of(&self, i: usize) -> &str {
        self.text(self.name[i])
    }
    /// Stream key of kernel `i`.
    #[inline]
    pub fn stream_of(&self, i: usize) -> &str {
        self.text(self.stream[i])
    }
    /// Raw core text of kernel `i`.
    pub fn core_of(&self, i: usize) -> &str {
        self.text(self.core_raw[i])
    }
    /// The `task_class` text of kernel `i` in the JSON: the §1.2.2 spelling
    /// ([`TaskClass::as_str`]), except that a GPU collective (core `NCCL`, set only by
    /// `engine::read::gpu` for NCCL/RCCL kernels) says `communication`, the GPU vocabulary of
    /// gpu-traces.md §2 (HTA's `get_kernel_type`); Ascend rows never carry core `NCCL`.
    pub fn task_class_label(&self, i: usize) -> &'static str {
        match self.class[i] {
            TaskClass::Hccl if self.core_of(i) == "NCCL" => "communication",
            c => c.as_str(),
        }
    }
    /// `"<name> (<core_raw>, <dur>us, stream <s>)"`: the §5.6 `evidence_ops` text of kernel `i`
    /// (duration in µs, shortest round-trip decimal).
    pub fn evidence_text(&self, i: usize) -> String {
        format!(
            "{} ({}, {}us, stream {})",
            self.name_of(i),
            self.core_of(i),
            crate::base::units::ns_to_us(self.dur_ns[i]),
            self.stream_of(i)
        )
    }
    /// Index range of kernels whose start lies in `[from_ns, to_ns)` (binary search).
    pub fn starting_in(&self, from_ns: i64, to_ns: i64) -> std::ops::Range<usize> {
        let a = self.start_ns.partition_point(|&s| s < from_ns);
        let b = self.start_ns.partition_point(|&s| s < to_ns).max(a);
        a..b
    }
    /// True when any kernel has a non-empty `Input Shapes` cell.
    pub fn has_shapes(&self) -> bool {
        self.shapes
            .iter()
            .any(|&s| !matches!(self.text(s).trim(), "" | "N/A"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, core: &str, start: i64, stream: &str, line: u64) -> KernelRow {
        KernelRow {
            name: name.into(),
            core_raw: core.into(),
            start_ns: start,
            dur_ns: 10,
            stream: stream.into(),
            row: line,
            ..Default::default()
        }
    }

    #[test]
    fn any_name_tests_kernel_names_only_each_once() {
        let mut b = KernelTableBuilder::with_capacity(3);
        // The stream and core texts are in the pool too, but they are not names.
        b.push(&row(
            "MatMul",
            "AI_CORE",
            0,
            "FusedInferAttentionScore_stream",
            1,
        ));
        b.push(&row("Add", "AI_CORE", 10, "7", 2));
        b.push(&row("MatMul", "AI_CORE", 20, "7", 3));
        let t = b.finish();
        let calls = std::cell::Cell::new(0);
        let count = |n: &str, want: &str| {
            calls.set(calls.get() + 1);
            n == want
        };
        assert!(!t.any_name(|n| count(n, "FusedInferAttentionScore_stream")));
        assert_eq!(calls.get(), 2, "two distinct names, each tested once");
        assert!(t.any_name(|n| n == "Add"));
        assert!(!t.any_name(|n| n == "AI_CORE"));
        assert!(!KernelTableBuilder::new().finish().any_name(|_| true));
    }

    #[test]
    fn classifies_cores_and_level0_names() {
        assert_eq!(
            TaskClass::classify("AI_VECTOR_CORE", "x"),
            (TaskClass::AiCore, false)
        );
        assert_eq!(
            TaskClass::classify(" mix_aiv ", "x"),
            (TaskClass::AiCore, false)
        );
        assert_eq!(
            TaskClass::classify("COMMUNICATION", "x"),
            (TaskClass::Hccl, false)
        );
        assert_eq!(
            TaskClass::classify("DSA_SQE", "x"),
            (TaskClass::Other, false)
        );
        assert_eq!(
            TaskClass::classify("N/A", "hcom_allReduce__586_0_1"),
            (TaskClass::Hccl, true)
        );
        assert_eq!(
            TaskClass::classify("", "some_aicpu_op"),
            (TaskClass::AiCpu, true)
        );
        assert_eq!(
            TaskClass::classify("N/A", "trans_TransData_0"),
            (TaskClass::AiCore, true)
        );
        assert_eq!(
            TaskClass::classify("N/A", "aclnnEqTensor_BroadcastToAiCore_BroadcastTo"),
            (TaskClass::AiCore, true)
        );
        assert_eq!(
            TaskClass::classify("N/A", "HcomBroadcast_1"),
            (TaskClass::Hccl, true)
        );
        assert!(is_comm_kernel(TaskClass::Other, "HcomSend"));
        assert!(!is_comm_kernel(TaskClass::AiCore, "MatMul"));
    }

    #[test]
    fn kernels_outside_the_time_range_are_refused_and_counted() {
        let mut b = KernelTableBuilder::new();
        b.push(&row("ok", "AI_CORE", 1_700_000_000_000_000_000, "2", 2));
        let mut big = row("late", "AI_CORE", i64::MAX - 5, "2", 3);
        b.push(&big);
        big.start_ns = i64::MIN;
        big.row = 4;
        b.push(&big);
        assert_eq!(
            b.try_push(&row("x", "AI_CORE", i64::MAX, "2", 5)),
            Err(OutOfRange)
        );
        let mut long = row("long", "AI_CORE", 0, "2", 6);
        long.dur_ns = 4_000_000_000_000_000_000;
        b.push(&long);
        long.row = 7;
        b.push(&long);
        long.row = 8;
        b.push(&long);
        assert_eq!(
            b.rejected().count,
            3,
            "the third long one overflows the total"
        );
        assert_eq!(b.rejected().first_at, vec![3, 4, 8]);
        let t = b.finish();
        assert_eq!(t.len(), 3);
        assert_eq!(t.end_ns(2), 1_700_000_000_000_000_010);
    }

    #[test]
    fn an_overrunning_kernel_is_clipped_at_the_next_start_on_its_stream_only() {
        let mut b = KernelTableBuilder::new();
        let mut stall = row("stall", "AI_CORE", 100, "2", 2);
        stall.dur_ns = 1_000_000; // runs over both later kernels of stream 2
        b.push(&stall);
        b.push(&row("same_start", "AI_CORE", 100, "2", 3)); // equal start: not the clip point
        b.push(&row("next", "AI_CORE", 150, "2", 4));
        b.push(&row("other", "AI_CORE", 120, "3", 5)); // another stream: not a clip point
        let mut l0 = row("level0", "AI_CORE", 100, "", 6); // unknown stream: never clipped
        l0.dur_ns = 1_000_000;
        b.push(&l0);
        b.push(&row("l0_next", "AI_CORE", 200, "", 7));
        let t = b.finish();
        let at = |n: &str| (0..t.len()).find(|&i| t.name_of(i) == n).unwrap();
        assert_eq!(t.busy_end_ns(at("stall")), 150);
        assert_eq!(t.end_ns(at("stall")), 1_000_100);
        assert_eq!(t.busy_end_ns(at("same_start")), 110);
        assert_eq!(t.busy_end_ns(at("level0")), 1_000_100);
        assert_eq!(
            t.overruns(),
            [Overrun {
                kernel: at("stall"),
                next: at("next"),
                overrun_ns: 999_950
            }]
        );
    }

    #[test]
    fn finish_sorts_by_start_then_stream_then_row_and_fills_stream_keys() {
        let mut b = KernelTableBuilder::new();
        b.push(&row("b", "AI_CORE", 20, "2", 3));
        b.push(&row("a", "AI_CORE", 10, "3", 4));
        b.push(&row("c", "AI_CORE", 10, "2", 5));
        b.push(&row("hcom_x", "HCCL", 10, "", 2));
        b.push(&row("d", "AI_CORE", 5, "", 6));
        let t = b.finish();
        let names: Vec<_> = (0..t.len()).map(|i| t.name_of(i)).collect();
        assert_eq!(names, ["d", "c", "a", "hcom_x", "b"]);
        assert_eq!(t.stream_of(0), "unknown");
        assert_eq!(t.stream_of(3), "hccl");
        assert_eq!(t.starting_in(10, 20), 1..4);
    }
}
