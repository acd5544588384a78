//! A GPU (PyTorch profiler / Kineto) trace as the tables the anomaly rules read (anomaly.md on
//! GPU streams; gpu-traces.md): every device op becomes a kernel row on its stream, host events
//! become the trace tables, `ProfilerStep#N` the step markers. Pure functions of
//! [`GpuTrace`]; the engine's GPU read calls them once per rank.

use std::fmt::Write as _;

use rustc_hash::FxHashMap;

use crate::model::gpu::{DeviceOpKind, GpuTrace, HostKind};
use crate::model::kernels::{KernelRow, KernelTable, KernelTableBuilder, NameId, RowTexts};
use crate::model::strings::StrId;
use crate::model::trace_events::{HostEventTable, Lane, MarkerEvent, TextId};

/// The collectives' names with an underscore that PyTorch's symmetric-memory kernels use
/// (`multimem_all_reduce_kernel`, `one_shot_all_reduce_kernel`, NVSHMEM's
/// `all_to_all_vdev`), beside §1.2.2's pattern (gpu-traces.md §1).
const UNDERSCORED_COLLECTIVES: [&str; 3] = ["all_reduce", "all_gather", "all_to_all"];

/// True for a kernel name of a collective: NCCL / RCCL, §1.2.2's pattern, or a
/// symmetric-memory collective ([`UNDERSCORED_COLLECTIVES`]).
fn is_collective(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("nccl")
        || lower.contains("rccl")
        || UNDERSCORED_COLLECTIVES.iter().any(|p| lower.contains(p))
        || {
            let (c, _) = crate::model::kernels::TaskClass::classify("", name);
            c == crate::model::kernels::TaskClass::Hccl
        }
}

/// The kernel table of a GPU trace: one row per device op, `row` = its index in
/// `t.device_ops` + 1 (so a kernel finds its op again), `launch_ns` = the start of the runtime
/// call with the same `correlation` (device-side steps §3.2, launch timing of bubbles),
/// `shapes` = the `Input Dims` of the op that launched it ([`launch_shapes`]), when the trace
/// was recorded with `record_shapes` (anomaly.md §1.1.1; `VARIABLE_SHAPE_SAME_TEMPLATE` reads
/// them).
pub fn kernel_table(t: &GpuTrace) -> KernelTable {
    let several_devices = t
        .device_ops
        .iter()
        .any(|d| d.device != t.device_ops[0].device);
    let launches = t.launch_index();
    let op_shapes = launch_shapes(t);
    let mut shape_ids: FxHashMap<StrId, NameId> = FxHashMap::default();
    let mut b = KernelTableBuilder::with_capacity(t.device_ops.len());
    let mut row = KernelRow::default();
    // Each distinct text is interned once, in the order of its first row (the pool a
    // `push` per row would build): names by their id in the trace's pool, stream keys by
    // `(device, stream)`, the core texts by kind.
    let mut names: Vec<Option<NameId>> = vec![None; t.pool.len()];
    let mut streams: FxHashMap<(i64, i64), NameId> = FxHashMap::default();
    let mut cores: FxHashMap<(DeviceOpKind, bool), NameId> = FxHashMap::default();
    // `is_collective` of each distinct name, once (by the name's id in the trace's pool).
    let mut collective: Vec<Option<bool>> = vec![None; t.pool.len()];
    let mut empty = None;
    let mut text = String::new();
    for (i, d) in t.device_ops.iter().enumerate() {
        row.launch_ns = t.launch_of(d, &launches).map(|h| h.start_ns);
        let name = t.text(d.name);
        let stream = *streams.entry((d.device, d.stream)).or_insert_with(|| {
            text.clear();
            if several_devices {
                let _ = write!(text, "{}:{}", d.device, d.stream);
            } else {
                let _ = write!(text, "{}", d.stream);
            }
            b.text_id(&text)
        });
        let name_id = match names.get_mut(d.name.index()) {
            Some(slot) => *slot.get_or_insert_with(|| b.text_id(name)),
            None => b.text_id(name),
        };
        let empty = *empty.get_or_insert_with(|| b.text_id(""));
        let c = d.kind == DeviceOpKind::Kernel
            && match collective.get_mut(d.name.index()) {
                Some(slot) => *slot.get_or_insert_with(|| is_collective(name)),
                None => is_collective(name),
            };
        let core = *cores.entry((d.kind, c)).or_insert_with(|| match d.kind {
            DeviceOpKind::Kernel => b.text_id(if c { "NCCL" } else { "KERNEL" }),
            k => b.text_id(&k.as_str().to_ascii_uppercase()),
        });
        let shapes = match op_shapes.get(&d.correlation) {
            Some(&s) if d.correlation >= 0 => {
                *shape_ids.entry(s).or_insert_with(|| b.text_id(t.text(s)))
            }
            _ => empty,
        };
        row.start_ns = d.start_ns;
        row.dur_ns = d.dur_ns();
        row.row = i as u64 + 1;
        let texts = RowTexts {
            name: name_id,
            op_type: empty,
            core_raw: core,
            shapes,
            stream: Some(stream),
        };
        b.push_texts(&row, texts);
    }
    // Not alive beside the table `finish` builds from the rows.
    drop((launches, op_shapes, shape_ids, names, collective));
    b.finish()
}

/// The `Input Dims` of the op that launched each device op, by the launch's `correlation`:
/// the innermost `cpu_op` of the launching runtime call's thread whose `[start, end)` holds the
/// call's start (anomaly.md §1.1.1). Containment rather than `External id`: 2024+ traces give
/// the kernel its op's `External id`, but older ones give it the correlation's number, which
/// may equal an unrelated op's id. Launches whose innermost op has no `Input Dims` are left out.
pub fn launch_shapes(t: &GpuTrace) -> FxHashMap<i64, StrId> {
    let mut out = FxHashMap::default();
    // Per thread, the open cpu_ops (end, shapes), innermost last; host ops come sorted by
    // (start, longer first), so an op precedes what it holds.
    let mut open: FxHashMap<(StrId, StrId), Vec<(i64, StrId)>> = FxHashMap::default();
    for h in &t.host_ops {
        let is_op = h.kind == HostKind::CpuOp;
        let is_launch = h.kind.is_runtime() && h.correlation >= 0;
        if !is_op && !is_launch {
            continue;
        }
        let stack = open.entry((h.pid, h.tid)).or_default();
        while stack.last().is_some_and(|&(end, _)| end <= h.start_ns) {
            stack.pop();
        }
        if is_op {
            stack.push((h.end_ns(), h.shapes));
        } else if let Some(&(_, shapes)) = stack.last() {
            if shapes != StrId::EMPTY {
                out.insert(h.correlation, shapes);
            }
        }
    }
    out
}

/// The points `h2d_flow_count` counts on a GPU rank (anomaly.md §5.6 extension field; the GPU
/// rule is a Decision recorded in ARCHITECTURE.md, "GPU analyses on Kineto traces"): the
/// **launch** of every device op (kernel, memcpy, memset) that has one — the start of the
/// runtime call with the op's `correlation` ([`KernelTable::launch_ns`], the link Kineto draws
/// as the `ac2g` flow and the one `launch_timing` reads). A window's count is then the number of
/// device ops the host launched while the device was idle there (`start ≤ launch < end`).
///
/// Why not the flows' `f` ends as on Ascend: a Kineto `f` end sits on the start of the device op
/// it points at, and device ops are busy time, so no launch flow's `f` end falls inside a
/// bubble (0 of 3,774 on the HTA nccl trace, 0 of 6,095 on ns_resolution); the `f` ends that do
/// are lone ends on host runtime calls that launch nothing (`cudaEventRecord`,
/// `cudaStreamIsCapturing`…, `GPU-TV-017`) or, on traces with `cuda_sync`, synchronisations
/// (already the sync ratio). On Ascend the ends inside bubbles are copy tasks the kernel table
/// leaves out (`MEMCPY_ASYNC`); on a GPU every copy is busy time, and the host side of the link
/// is what a bubble can hold. By correlation rather than by flow events, so traces whose flow
/// events were stripped (HTA's `trace_filter` samples) still count.
pub fn launch_points(kernels: &KernelTable) -> impl Iterator<Item = i64> + '_ {
    (0..kernels.len()).filter_map(|i| kernels.launch_ns(i))
}

/// The trace tables of a GPU trace (host events, step markers) and, as `h2d_flow_ends_ns`, the
/// [`launch_points`] of its kernel table `kernels` (built by [`kernel_table`] from `t`).
pub fn host_table(t: &GpuTrace, kernels: &KernelTable) -> HostEventTable {
    let mut h = HostEventTable::new();
    // Sized once for the events it keeps (those with a duration) and the launch points.
    h.reserve_events(t.host_ops.iter().filter(|e| e.dur_ns > 0).count());
    let launches = (0..kernels.len()).filter(|&i| kernels.launch_ns(i).is_some());
    let _ = h.h2d_flow_ends_ns.try_reserve_exact(launches.count());
    // The table's ids of the trace's threads and texts, each looked up once (the same ids, in
    // the same order, as interning every event's key, name and cat).
    let mut threads: FxHashMap<(StrId, StrId), u32> = FxHashMap::default();
    let mut texts: Vec<Option<TextId>> = vec![None; t.pool.len()];
    let mut text_id = |h: &mut HostEventTable, id: StrId| match texts.get_mut(id.index()) {
        Some(slot) => *slot.get_or_insert_with(|| h.intern(t.text(id))),
        None => h.intern(t.text(id)),
    };
    for e in &t.host_ops {
        let lane = match e.kind {
            HostKind::CpuOp | HostKind::PythonFunction | HostKind::UserAnnotation => Lane::Python,
            HostKind::CudaRuntime
            | HostKind::HipRuntime
            | HostKind::CudaDriver
            | HostKind::CudaSync => Lane::Cann,
            _ => Lane::OtherHost,
        };
        let thread = *threads
            .entry((e.pid, e.tid))
            .or_insert_with(|| h.thread_key(&format!("{}/{}", t.text(e.pid), t.text(e.tid))));
        // `HostEventTable::push`: durations ≤ 0 are ignored before anything is interned.
        if e.dur_ns > 0 {
            let name = text_id(&mut h, e.name);
            let cat = text_id(&mut h, e.cat);
            h.push_ids(name, cat, thread, lane, e.start_ns, e.dur_ns);
        }
    }
    h.evidence = t.evidence;
    for m in &t.steps {
        h.markers.push(MarkerEvent {
            name: t.text(m.name).to_string(),
            ts_ns: m.start_ns,
            dur_ns: m.dur_ns,
        });
    }
    h.h2d_flow_ends_ns.extend(launch_points(kernels));
    h.finish();
    h
}
