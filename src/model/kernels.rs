//! One rank's device kernels as a columnar table (anomaly.md §1.2).
//!
//! Built by [`KernelTableBuilder`] from `kernel_details.csv`, `op_summary*.csv`
//! or the device lanes of `trace_view.json`; [`KernelTableBuilder::finish`]
//! sorts rows by start (ties: stream key, then source row, §1.2.1) and sets the
//! invariants. Times are `i64` nanoseconds parsed exactly from the decimal µs text.

mod builder;
mod class;

pub use builder::{KernelRow, KernelTableBuilder, RowTexts};
pub use class::{is_comm_kernel, TaskClass};

/// Interned string id into a [`KernelTable`]'s pool.
pub type NameId = u32;

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
/// length (a [`Column`] stored as one value counts as that value on every row, the source
/// rows may be stored as those that are not the index + 1, [`KernelTable::row_of`]); rows are
/// sorted by `start_ns`, ties by stream key then source row; `dur_ns ≥ 0`, `wait_ns ≥ 0`;
/// `start_ns` and `start_ns + dur_ns` within `±base::arith::TIME_LIMIT_NS`; Σ (`dur_ns` +
/// `wait_ns`) over the table ≤ `i64::MAX`. Every `NameId` indexes [`KernelTable::text`].
#[derive(Clone, Debug, Default)]
pub struct KernelTable {
    pool: Vec<String>,
    start_ns: Vec<i64>,
    dur_ns: Vec<i64>,
    wait_ns: Filled<i64>,
    stream: Vec<NameId>,
    class: Vec<TaskClass>,
    inferred: Vec<bool>,
    comm: Vec<bool>,
    name: Vec<NameId>,
    op_type: Filled<NameId>,
    core_raw: Vec<NameId>,
    shapes: Filled<NameId>,
    step_tag: Filled<Option<i64>>,
    /// Launch time per kernel, [`NO_LAUNCH`] for none (empty when no kernel has one).
    launch_ns: Vec<i64>,
    /// Source row per kernel; empty when most kernels' is their index + 1 (a GPU trace's
    /// device ops, in the table's order but for ties): then [`row_moved`](Self::row_moved)
    /// lists the others. See [`row_of`](Self::row_of).
    row: Vec<u64>,
    /// When `row` is empty: `(kernel, source row)` of the kernels whose source row is not their
    /// index + 1, by kernel.
    row_moved: Vec<(usize, u64)>,
    pmu: Vec<[Option<f32>; 3]>,
    /// Busy end per kernel (empty when no kernel overruns: then it is `end_ns`).
    busy_end: Vec<i64>,
    overruns: Vec<Overrun>,
}

/// [`KernelTable`]'s `launch_ns` of a kernel without a launch time (never a time of the model:
/// those lie within `±base::arith::TIME_LIMIT_NS`).
const NO_LAUNCH: i64 = i64::MIN;

/// A column whose rows are often all one value (a GPU trace's waits, op types and step tags):
/// then stored as that value only (`rows` empty), else one value per row. The builder fills it
/// row by row ([`push`](Self::push)) and the table reads it ([`view`](Self::view)).
#[derive(Clone, Debug, Default)]
struct Filled<T> {
    rows: Vec<T>,
    fill: T,
}

impl<T: Copy + PartialEq> Filled<T> {
    /// A column that is `fill` until a row holds another value.
    fn of(fill: T) -> Self {
        Filled {
            rows: Vec::new(),
            fill,
        }
    }

    /// Pushes the value of row `i` (the rows before it were pushed); `first`: the first row's
    /// value becomes the fill. `capacity`: the room of a column that starts to hold rows.
    fn push(&mut self, i: usize, v: T, first: bool, capacity: usize) {
        if self.rows.is_empty() {
            if i == 0 && first {
                self.fill = v;
                return;
            }
            if v == self.fill {
                return;
            }
            self.rows.reserve_exact(capacity.max(i + 1));
            self.rows.resize(i, self.fill);
        }
        self.rows.push(v);
    }

    /// Reorders the rows (row `k` becomes `order[k]`'s; nothing to move while stored as one
    /// value).
    fn permute(&mut self, order: &[usize]) {
        crate::base::sort::place(&mut self.rows, order.iter().copied());
    }
}

impl<T> Filled<T> {
    fn view(&self, len: usize) -> Column<'_, T> {
        Column {
            rows: &self.rows,
            fill: &self.fill,
            len,
        }
    }
}

/// The rows of one [`KernelTable`] column that may be stored as one value
/// ([`KernelTable::wait_ns`], [`KernelTable::op_type`], [`KernelTable::shapes`],
/// [`KernelTable::step_tag`]):
/// indexed like a slice (`col[i]`, panics past the table's end).
#[derive(Clone, Copy, Debug)]
pub struct Column<'a, T> {
    rows: &'a [T],
    fill: &'a T,
    len: usize,
}

impl<'a, T> Column<'a, T> {
    /// Number of rows (the table's).
    pub fn len(&self) -> usize {
        self.len
    }
    /// True for an empty table.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The rows in order.
    pub fn iter(&self) -> impl Iterator<Item = &'a T> + 'a {
        let (rows, fill, len) = (self.rows, self.fill, self.len);
        (0..len).map(move |i| rows.get(i).unwrap_or(fill))
    }
}

impl<T> std::ops::Index<usize> for Column<'_, T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        assert!(i < self.len, "row {i} of a table of {}", self.len);
        self.rows.get(i).unwrap_or(self.fill)
    }
}

/// A kernel that runs past the start of the next kernel on the same known stream (a stall
/// artefact: kernels of one stream run one after another). Decision: its busy end
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
    /// [`Overrun`], which ends at the next kernel's start on its stream (Decision).
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
    pub fn wait_ns(&self) -> Column<'_, i64> {
        self.wait_ns.view(self.len())
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
    pub fn op_type(&self) -> Column<'_, NameId> {
        self.op_type.view(self.len())
    }
    /// Raw core text ids.
    pub fn core_raw(&self) -> &[NameId] {
        &self.core_raw
    }
    /// `Input Shapes` ids (empty string when absent).
    pub fn shapes(&self) -> Column<'_, NameId> {
        self.shapes.view(self.len())
    }
    /// `Step Id` per kernel.
    pub fn step_tag(&self) -> Column<'_, Option<i64>> {
        self.step_tag.view(self.len())
    }
    /// Start (ns) of the host op that launched kernel `i`, when known.
    pub fn launch_ns(&self, i: usize) -> Option<i64> {
        self.launch_ns.get(i).copied().filter(|&l| l != NO_LAUNCH)
    }

    /// True when at least one kernel knows its launch time.
    pub fn has_launch_times(&self) -> bool {
        !self.launch_ns.is_empty()
    }

    /// Source line of kernel `i` (0 for trace-derived kernels; a GPU trace's device op's
    /// index + 1). Panics when `i` is not a row of the table.
    pub fn row_of(&self, i: usize) -> u64 {
        assert!(i < self.len(), "row {i} of a table of {}", self.len());
        if let Some(&r) = self.row.get(i) {
            return r;
        }
        match self.row_moved.binary_search_by_key(&i, |m| m.0) {
            Ok(k) => self.row_moved[k].1,
            Err(_) => i as u64 + 1,
        }
    }

    /// [`row_of`](Self::row_of) of every kernel, in order.
    pub fn rows(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(|i| self.row_of(i))
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
        self.shapes()
            .iter()
            .any(|&s| !matches!(self.text(s).trim(), "" | "N/A"))
    }
}

#[cfg(test)]
mod tests;
