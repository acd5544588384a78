//! Kernel categories of a GPU rank (kernel categories, gpu-traces.md): compute,
//! communication (NCCL / RCCL) and memory (memcpy / memset) time, per step and per kernel
//! name, and the communication/computation overlap of each step.
//!
//! * **Category** of a device op: `memory` when it is a `gpu_memcpy` / `gpu_memset` event or
//!   HTA calls it memory by name ([`KernelClass::Memory`]); `communication` when HTA calls it
//!   communication (`nccl…Kernel`: NCCL and RCCL alike); else `compute` (HTA's `other`,
//!   e.g. `…Sync` kernels, is compute here: it occupies the SMs).
//! * **Time** per category and name is Σ duration (ns); **busy** per category is the length of
//!   the union of its intervals (overlapping kernels on several streams count once).
//! * **Steps**: the caller's step windows (`[S, E)`, from `analysis::steps`, device-side when
//!   the device lags, anomaly.md §3.2); a device op belongs to the window its start lies in.
//! * **Overlap** of a step: length of (communication union ∩ compute union) inside the
//!   window; `exposed_comm_ns` = communication union − overlap (communication nothing hides).
//! * **Kernel table** ([`name_table`], the `kernels_*.csv` export): per (name, category) the
//!   streams it ran on, count, Σ and largest duration, over the whole capture, with the
//!   capture's device span (first device-op start → last device-op end) for the share.

use rustc_hash::FxHashMap as HashMap;

use super::gpu_kernel_class::{ClassOfName, KernelClass};
use super::intervals::{clip_segments, merge, total_len, Interval};
use crate::model::gpu::{DeviceOpKind, GpuTrace};

/// proflens's kernel category of a device op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// Computation kernels (and HTA's `other`).
    Compute,
    /// NCCL / RCCL collectives and point-to-point kernels.
    Communication,
    /// Memcpy / memset.
    Memory,
}

impl Category {
    /// `compute`, `communication`, `memory`.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Compute => "compute",
            Category::Communication => "communication",
            Category::Memory => "memory",
        }
    }

    /// The category of a device op of `kind` named `name`.
    pub fn of(kind: DeviceOpKind, name: &str) -> Category {
        Category::of_class(kind, || KernelClass::of(name))
    }

    /// [`of`](Self::of) with the name's HTA class given by `class` (asked for kernels only).
    pub fn of_class(kind: DeviceOpKind, class: impl FnOnce() -> KernelClass) -> Category {
        if kind != DeviceOpKind::Kernel {
            return Category::Memory;
        }
        match class() {
            KernelClass::Communication => Category::Communication,
            KernelClass::Memory => Category::Memory,
            KernelClass::Computation | KernelClass::Other => Category::Compute,
        }
    }

    const ALL: [Category; 3] = [Category::Compute, Category::Communication, Category::Memory];
}

/// Σ duration and busy union per category, ns (indexed by `Category as usize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CategoryTimes {
    /// Σ duration per category.
    pub sum_ns: [i64; 3],
    /// Union length per category.
    pub busy_ns: [i64; 3],
    /// Device ops counted per category.
    pub count: [u64; 3],
}

/// Time of one kernel name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameTime {
    /// The device op's name.
    pub name: String,
    /// Its category.
    pub category: Category,
    /// Occurrences.
    pub count: u64,
    /// Σ duration, ns.
    pub total_ns: i64,
}

/// Kernel categories and overlap of one step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepKernels {
    /// The step id (`ProfilerStep#N`).
    pub step_id: String,
    /// Its window.
    pub window: Interval,
    /// Per category (ops starting in the window; unions clipped to it).
    pub times: CategoryTimes,
    /// Communication union ∩ compute union in the window, ns.
    pub overlap_ns: i64,
    /// Communication union − overlap, ns.
    pub exposed_comm_ns: i64,
}

/// The kernel summary of one rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSummary {
    /// Whole capture, per category.
    pub times: CategoryTimes,
    /// Per name, Σ duration descending (ties by name).
    pub by_name: Vec<NameTime>,
    /// Per step, in the order given.
    pub steps: Vec<StepKernels>,
}

fn unions(t: &GpuTrace, cats: &[Category], ops: &[usize]) -> [Vec<Interval>; 3] {
    let mut v: [Vec<Interval>; 3] = Default::default();
    for &i in ops {
        let d = &t.device_ops[i];
        v[cats[i] as usize].push(Interval::new(d.start_ns, d.end_ns));
    }
    v.map(merge)
}

fn times(
    t: &GpuTrace,
    cats: &[Category],
    ops: &[usize],
    segs: &[Vec<Interval>; 3],
) -> CategoryTimes {
    let mut c = CategoryTimes::default();
    for &i in ops {
        let k = cats[i] as usize;
        c.sum_ns[k] += t.device_ops[i].dur_ns();
        c.count[k] += 1;
    }
    for k in Category::ALL {
        c.busy_ns[k as usize] = total_len(&segs[k as usize]);
    }
    c
}

/// Length of the intersection of two sorted disjoint segment lists, ns.
fn intersection_ns(a: &[Interval], b: &[Interval]) -> i64 {
    let (mut i, mut j, mut n) = (0, 0, 0i64);
    while i < a.len() && j < b.len() {
        let s = a[i].start_ns.max(b[j].start_ns);
        let e = a[i].end_ns.min(b[j].end_ns);
        n += (e - s).max(0);
        if a[i].end_ns < b[j].end_ns {
            i += 1;
        } else {
            j += 1;
        }
    }
    n
}

/// Categories, names and per-step overlap of `t`'s device ops; `steps` are `(step id,
/// window)` in time order (empty: no per-step rows).
pub fn summarise(t: &GpuTrace, steps: &[(String, Interval)]) -> KernelSummary {
    let all: Vec<usize> = (0..t.device_ops.len()).collect();
    // The category of each device op, its name classified once per distinct name.
    let mut class = ClassOfName::new(t);
    let cats: Vec<Category> = t
        .device_ops
        .iter()
        .map(|d| Category::of_class(d.kind, || class.of(d.name)))
        .collect();
    let segs = unions(t, &cats, &all);
    let mut names: HashMap<(u32, Category), (u64, i64)> = HashMap::default();
    for (d, &cat) in t.device_ops.iter().zip(&cats) {
        let e = names.entry((d.name.index() as u32, cat)).or_default();
        e.0 += 1;
        e.1 += d.dur_ns();
    }
    let mut by_name: Vec<NameTime> = names
        .into_iter()
        .map(|((n, category), (count, total_ns))| NameTime {
            name: t
                .pool
                .get(crate::model::strings::StrId::from_index(n))
                .to_string(),
            category,
            count,
            total_ns,
        })
        .collect();
    // Total time, then name, then category (one name can be a kernel and a memory op): a
    // total order, so the map's iteration order never shows.
    crate::base::sort::sort_by(&mut by_name, |a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| (a.category as usize).cmp(&(b.category as usize)))
    });
    let starts: Vec<i64> = t.device_ops.iter().map(|d| d.start_ns).collect();
    let steps = steps
        .iter()
        .map(|(id, w)| {
            let from = starts.partition_point(|&s| s < w.start_ns);
            let to = starts.partition_point(|&s| s < w.end_ns);
            let ops: Vec<usize> = (from..to).collect();
            let clipped = unions(t, &cats, &ops).map(|s| clip_segments(&s, *w));
            let mut times = times(t, &cats, &ops, &clipped);
            for k in Category::ALL {
                times.busy_ns[k as usize] = total_len(&clipped[k as usize]);
            }
            let comm = &clipped[Category::Communication as usize];
            let overlap_ns = intersection_ns(comm, &clipped[Category::Compute as usize]);
            StepKernels {
                step_id: id.clone(),
                window: *w,
                times,
                overlap_ns,
                exposed_comm_ns: total_len(comm) - overlap_ns,
            }
        })
        .collect();
    KernelSummary {
        times: times(t, &cats, &all, &segs),
        by_name,
        steps,
    }
}

/// One kernel name of the kernel table ([`name_table`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameRow {
    /// The device op's name.
    pub name: String,
    /// Its category.
    pub category: Category,
    /// `(device, stream)` pairs it ran on, ascending.
    pub streams: Vec<(i64, i64)>,
    /// Occurrences.
    pub count: u64,
    /// Σ duration, ns.
    pub total_ns: i64,
    /// Largest duration, ns.
    pub max_ns: i64,
}

/// The per-name kernel table of a rank: rows by Σ duration descending (ties by name, then
/// category), and the device span they are measured against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameTable {
    /// One row per (name, category).
    pub rows: Vec<NameRow>,
    /// First device-op start → last device-op end, ns (0 without device ops).
    pub span_ns: i64,
    /// True when the device ops ran on more than one device (streams then need the device).
    pub several_devices: bool,
}

/// The kernel table of `t` over the whole capture (every device op: kernels, memcpy, memset).
pub fn name_table(t: &GpuTrace) -> NameTable {
    let mut class = ClassOfName::new(t);
    let mut rows: HashMap<(u32, Category), NameRow> = HashMap::default();
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    for d in &t.device_ops {
        let cat = Category::of_class(d.kind, || class.of(d.name));
        first = first.min(d.start_ns);
        last = last.max(d.end_ns);
        let r = rows
            .entry((d.name.index() as u32, cat))
            .or_insert_with(|| NameRow {
                name: t.text(d.name).to_string(),
                category: cat,
                streams: Vec::new(),
                count: 0,
                total_ns: 0,
                max_ns: 0,
            });
        let dur = d.dur_ns();
        r.count += 1;
        r.total_ns = r.total_ns.saturating_add(dur);
        r.max_ns = r.max_ns.max(dur);
        if let Err(at) = r.streams.binary_search(&(d.device, d.stream)) {
            r.streams.insert(at, (d.device, d.stream));
        }
    }
    let mut rows: Vec<NameRow> = rows.into_values().collect();
    crate::base::sort::sort_by(&mut rows, |a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| (a.category as u8).cmp(&(b.category as u8)))
    });
    let several_devices = t
        .device_ops
        .first()
        .is_some_and(|f| t.device_ops.iter().any(|d| d.device != f.device));
    NameTable {
        rows,
        span_ns: if last >= first {
            last.saturating_sub(first)
        } else {
            0
        },
        several_devices,
    }
}
