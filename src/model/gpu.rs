//! One PyTorch profiler (Kineto) trace of one rank, as plain tables (formats.md §8,
//! gpu-traces.md §1): device ops (kernels, memcpy, memset) with their stream, host events with
//! their thread, `ProfilerStep#N` markers, launch→kernel flows, `[memory]` counter samples and
//! the trace's top-level facts.
//!
//! Times are `i64` nanoseconds on the **file's clock**: the `ts` µs text parsed exactly
//! (`"4541015316353.111"` → `4_541_015_316_353_111`). When the file has `baseTimeNanoseconds`
//! the `ts` are relative to it (formats.md §8) and [`GpuTrace::base_time_ns`] holds it; the
//! epoch time of a file time `t` is then `base + t` ([`GpuTrace::epoch_ns`]). The base often
//! comes after the events in the file, so it is applied on read-out, never while parsing.
//!
//! Names are interned in one [`StringPool`] ([`GpuTrace::text`]). Tables are in file order
//! until [`GpuTraceBuilder::finish`], which sorts device ops by `(start, stream)`, host events
//! by `(start, longer first)`, steps by start and memory samples by time.

use crate::model::strings::{StrId, StringPool};
use crate::model::trace_events::TraceEvidence;

/// What a device op is (its `cat`; 2021 traces say `Kernel`, `Memcpy`, `Memset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeviceOpKind {
    /// `kernel` / `Kernel`.
    Kernel,
    /// `gpu_memcpy` / `Memcpy`.
    Memcpy,
    /// `gpu_memset` / `Memset`.
    Memset,
}

impl DeviceOpKind {
    /// The 2023+ category name (`kernel`, `gpu_memcpy`, `gpu_memset`).
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceOpKind::Kernel => "kernel",
            DeviceOpKind::Memcpy => "gpu_memcpy",
            DeviceOpKind::Memset => "gpu_memset",
        }
    }
}

/// One op that ran on a GPU stream (an `X` event of a device category).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceOp {
    /// Kernel, memcpy or memset.
    pub kind: DeviceOpKind,
    /// Event name (kernel symbol, `Memcpy HtoD (Host -> Device)`, …).
    pub name: StrId,
    /// `args.device` (else the event's numeric `pid`); -1 when neither is a number.
    pub device: i64,
    /// `args.stream` (else the numeric `tid`); -1 when neither is a number.
    pub stream: i64,
    /// Start, ns on the file clock.
    pub start_ns: i64,
    /// End (start + `dur`), ns on the file clock; `end_ns >= start_ns`.
    pub end_ns: i64,
    /// `args.correlation`: the id shared with the runtime call that launched it; -1 = none.
    pub correlation: i64,
    /// `args["External id"]`: the id shared with the CPU op around the launch; -1 = none.
    pub external_id: i64,
}

impl DeviceOp {
    /// Duration in ns.
    pub fn dur_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }
}

/// What a host event is (its `cat`; 2021 traces say `Operator`, `Runtime`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HostKind {
    /// `cpu_op` / `Operator`: an ATen or framework operator.
    CpuOp,
    /// `cuda_runtime` / `Runtime` whose name does not start with `hip`: a CUDA runtime call
    /// (`cudaLaunchKernel`, `cudaMemcpyAsync`, `cudaStreamSynchronize`…).
    CudaRuntime,
    /// `cuda_runtime` / `Runtime` named `hip…`: a ROCm runtime call (`hipLaunchKernel`…).
    HipRuntime,
    /// `cuda_driver`: a CUDA driver call (`cuLaunchKernel`…).
    CudaDriver,
    /// `user_annotation`: `record_function` ranges, `ProfilerStep#N` in 2023+ traces.
    UserAnnotation,
    /// `gpu_user_annotation`: the device-side span of a user annotation (has a stream, but is
    /// not a device op: it never counts as busy time).
    GpuUserAnnotation,
    /// `python_function`: a Python frame (with_stack=True).
    PythonFunction,
    /// `cuda_sync`: a synchronisation the profiler recorded (stream/event/device sync).
    CudaSync,
    /// Any other category (`Trace`, `cuda_profiler_range`, `fwdbwd` X events, none…).
    Other,
}

impl HostKind {
    /// True for runtime or driver API calls (the launch side of `correlation`).
    pub fn is_runtime(self) -> bool {
        matches!(
            self,
            HostKind::CudaRuntime | HostKind::HipRuntime | HostKind::CudaDriver
        )
    }
}

/// One host event with a duration (`X`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostOp {
    /// Its category class.
    pub kind: HostKind,
    /// Event name.
    pub name: StrId,
    /// The raw `cat` text (`""` when absent).
    pub cat: StrId,
    /// The `pid` as text: a number (`"369418"`) or a string (`"CPU functions"`, `"Spans"`).
    pub pid: StrId,
    /// The `tid` as text (numbers and strings alike).
    pub tid: StrId,
    /// Start, ns on the file clock.
    pub start_ns: i64,
    /// Duration in ns (≥ 0).
    pub dur_ns: i64,
    /// `args.correlation` of runtime calls; -1 = none.
    pub correlation: i64,
    /// `args["External id"]`; -1 = none.
    pub external_id: i64,
    /// `args.stream` when it is an integer (`cuda_sync` events name the stream they wait
    /// on; HTA's temporal breakdown counts every event with a stream), else -1.
    pub stream: i64,
    /// `args["Input Dims"]` of a `cpu_op` as written (raw JSON, `[[2048, 4096], [4096]]`;
    /// `record_shapes=True`), [`StrId::EMPTY`] when absent.
    pub shapes: StrId,
}

impl HostOp {
    /// End in ns.
    pub fn end_ns(&self) -> i64 {
        self.start_ns + self.dur_ns
    }
}

/// A `ProfilerStep#N` range (anomaly.md §3.1 priority 1 on GPUs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepMarker {
    /// `N` of `ProfilerStep#N` (-1 when the suffix is not a number).
    pub number: i64,
    /// The event name as written.
    pub name: StrId,
    /// Where it was found: [`HostKind::UserAnnotation`] (2023+) or [`HostKind::CpuOp`] (older).
    pub from: HostKind,
    /// Start, ns on the file clock.
    pub start_ns: i64,
    /// `dur` in ns.
    pub dur_ns: i64,
}

/// Which flow category linked a host call to a device op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowKind {
    /// `ac2g` (2023+).
    Ac2g,
    /// `async_cpu_to_gpu` (HTA's `trace_diff` traces), `async` (2021).
    AsyncCpuToGpu,
}

/// A launch → device-op flow: the `s` end (on the runtime call) and the `f` end (on the
/// device op), paired by `id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flow {
    /// Category.
    pub kind: FlowKind,
    /// The flow `id` (equals the `correlation` of both ends in Kineto traces).
    pub id: i64,
    /// `ts` of the `s` event, ns on the file clock.
    pub launch_ns: i64,
    /// `ts` of the `f` event, ns on the file clock.
    pub arrive_ns: i64,
}

/// One `[memory]` instant event (`profile_memory=True`): an allocation (`bytes > 0`) or a free
/// (`bytes < 0`) with the allocator totals after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemorySample {
    /// Time, ns on the file clock.
    pub ts_ns: i64,
    /// `args["Device Type"]` (0 = CPU, 1 = CUDA, …; -1 when absent).
    pub device_type: i64,
    /// `args["Device Id"]` (-1 for the CPU / when absent).
    pub device_id: i64,
    /// `args.Bytes`: size of this allocation (negative for a free).
    pub bytes: i64,
    /// `args["Total Allocated"]` after the event, bytes.
    pub total_allocated: i64,
    /// `args["Total Reserved"]` after the event, bytes.
    pub total_reserved: i64,
}

/// One entry of `deviceProperties`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceProperties {
    /// `id`.
    pub id: i64,
    /// `name` (`NVIDIA L20`, `AMD Radeon Graphics`…).
    pub name: String,
    /// `totalGlobalMem`, bytes.
    pub total_global_mem: Option<i64>,
    /// `computeMajor`.`computeMinor`.
    pub compute: Option<(i64, i64)>,
    /// `numSms` (streaming multiprocessors / compute units).
    pub num_sms: Option<i64>,
}

/// `distributedInfo`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DistributedInfo {
    /// `rank`.
    pub rank: Option<i64>,
    /// `world_size`.
    pub world_size: Option<i64>,
    /// `backend` (`nccl`, `cpu:gloo,cuda:nccl`…).
    pub backend: Option<String>,
}

/// The capture options a trace states at its top level (newer PyTorch writes
/// `"record_shapes": 1`, `"with_stack": 1`, … for the options that were on; anomaly.md §1.1.1).
/// `None`: the trace does not say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaptureFlags {
    /// `record_shapes`.
    pub record_shapes: Option<bool>,
    /// `with_stack`.
    pub with_stack: Option<bool>,
    /// `profile_memory`.
    pub profile_memory: Option<bool>,
    /// `with_flops`.
    pub with_flops: Option<bool>,
    /// `with_modules`.
    pub with_modules: Option<bool>,
}

/// The trace's top-level facts (formats.md §8).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceFacts {
    /// `schemaVersion`.
    pub schema_version: Option<i64>,
    /// `deviceProperties`, in file order.
    pub devices: Vec<DeviceProperties>,
    /// `distributedInfo`, when present.
    pub distributed: Option<DistributedInfo>,
    /// `baseTimeNanoseconds`: the epoch ns that file times are relative to.
    pub base_time_ns: Option<i64>,
    /// `displayTimeUnit` (`ms`, `ns`): a display hint only, `ts` is always µs.
    pub display_time_unit: Option<String>,
    /// `cuda_runtime_version` (e.g. 12080 = CUDA 12.8).
    pub cuda_runtime_version: Option<i64>,
    /// `cuda_driver_version`.
    pub cuda_driver_version: Option<i64>,
    /// `cupti_version`.
    pub cupti_version: Option<i64>,
    /// `roctracer_version` / `hip_version` style keys of ROCm traces, when present.
    pub rocm_version: Option<String>,
    /// `traceName`.
    pub trace_name: Option<String>,
    /// `record_shapes`, `with_stack`, `profile_memory`, `with_flops`, `with_modules`.
    pub flags: CaptureFlags,
}

/// Everything kept from one Kineto trace (see the module doc for units and order).
#[derive(Clone, Debug, Default)]
pub struct GpuTrace {
    /// Interned names, categories, pids and tids.
    pub pool: StringPool,
    /// Device ops, sorted by `(start, stream, file order)`.
    pub device_ops: Vec<DeviceOp>,
    /// Host events with a duration, sorted by `(start, longer first)`.
    pub host_ops: Vec<HostOp>,
    /// `gpu_user_annotation` spans `(stream, start_ns, end_ns, name)`, sorted by start.
    pub gpu_annotations: Vec<(i64, i64, i64, StrId)>,
    /// `ProfilerStep#N` markers, sorted by start; a marker found both as `user_annotation` and
    /// `cpu_op` at the same start is kept once (the user annotation).
    pub steps: Vec<StepMarker>,
    /// Launch → device-op flows with both ends, sorted by launch time.
    pub flows: Vec<Flow>,
    /// `[memory]` counter samples, sorted by time.
    pub memory: Vec<MemorySample>,
    /// Top-level facts.
    pub facts: TraceFacts,
    /// What the events show was recorded (anomaly.md §1.1.1).
    pub evidence: TraceEvidence,
    /// NCCL/RCCL kernels with their collective args (communication.md §4.1), file order; their
    /// `rank` is −1 until the engine gives each the rank of its trace.
    pub nccl: Vec<crate::model::comm::NcclKernel>,
}

impl GpuTrace {
    /// Text of an interned id.
    pub fn text(&self, id: StrId) -> &str {
        self.pool.get(id)
    }

    /// `baseTimeNanoseconds` (or 0 when the file has none: `ts` is then epoch µs already).
    pub fn base_time_ns(&self) -> i64 {
        self.facts.base_time_ns.unwrap_or(0)
    }

    /// Epoch ns of file time `t`, or `None` when it does not fit in `i64`.
    pub fn epoch_ns(&self, t: i64) -> Option<i64> {
        self.base_time_ns().checked_add(t)
    }

    /// True when the trace has at least one device op (else it is a host-only trace).
    pub fn has_device_ops(&self) -> bool {
        !self.device_ops.is_empty()
    }

    /// Distinct `(device, stream)` pairs of the device ops, sorted.
    pub fn streams(&self) -> Vec<(i64, i64)> {
        let mut v: Vec<(i64, i64)> = self
            .device_ops
            .iter()
            .map(|d| (d.device, d.stream))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Device ops counted per kind: `[kernels, memcpy, memset]`.
    pub fn kind_counts(&self) -> [usize; 3] {
        let mut c = [0; 3];
        for d in &self.device_ops {
            c[d.kind as usize] += 1;
        }
        c
    }

    /// The runtime call that launched `op` (same `correlation`), if kept: a binary search over
    /// [`GpuTraceBuilder::finish`]'s correlation index.
    pub fn launch_of(&self, op: &DeviceOp, index: &LaunchIndex) -> Option<HostOp> {
        if op.correlation < 0 {
            return None;
        }
        let k = index
            .by_correlation
            .binary_search_by_key(&op.correlation, |&(c, _)| c)
            .ok()?;
        self.host_ops
            .get(index.by_correlation[k].1 as usize)
            .copied()
    }

    /// The index of runtime calls by `correlation` (for [`GpuTrace::launch_of`]).
    pub fn launch_index(&self) -> LaunchIndex {
        let mut by_correlation: Vec<(i64, u32)> = self
            .host_ops
            .iter()
            .enumerate()
            .filter(|(_, h)| h.kind.is_runtime() && h.correlation >= 0)
            .map(|(i, h)| (h.correlation, i as u32))
            .collect();
        by_correlation.sort_unstable();
        by_correlation.dedup_by_key(|&mut (c, _)| c);
        // Grown by doubling while the calls were filtered: keeps only its entries.
        by_correlation.shrink_to_fit();
        LaunchIndex { by_correlation }
    }
}

/// Runtime calls by `correlation` id, sorted (first call of an id wins).
#[derive(Clone, Debug, Default)]
pub struct LaunchIndex {
    by_correlation: Vec<(i64, u32)>,
}

impl LaunchIndex {
    /// Number of runtime calls indexed.
    pub fn len(&self) -> usize {
        self.by_correlation.len()
    }
    /// True when no runtime call has a correlation id.
    pub fn is_empty(&self) -> bool {
        self.by_correlation.is_empty()
    }
}

/// Builds a [`GpuTrace`] in file order; [`GpuTraceBuilder::finish`] sorts.
#[derive(Default)]
pub struct GpuTraceBuilder {
    /// The trace under construction (public so the parser pushes rows directly).
    pub t: GpuTrace,
}

impl GpuTraceBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        GpuTraceBuilder {
            t: GpuTrace::default(),
        }
    }

    /// Interns `s`.
    pub fn intern(&mut self, s: &str) -> StrId {
        self.t.pool.intern(s)
    }

    /// Sorts every table (see [`GpuTrace`]) and drops duplicate step markers.
    pub fn finish(self) -> GpuTrace {
        let mut t = self.t;
        // The tables were reserved for an estimate of the whole file: keep what was read.
        t.device_ops.shrink_to_fit();
        t.host_ops.shrink_to_fit();
        t.flows.shrink_to_fit();
        t.device_ops
            .sort_by(|a, b| (a.start_ns, a.stream).cmp(&(b.start_ns, b.stream)));
        t.host_ops
            .sort_by(|a, b| a.start_ns.cmp(&b.start_ns).then(b.dur_ns.cmp(&a.dur_ns)));
        crate::base::sort::sort_by_key(&mut t.gpu_annotations, |a| (a.1, a.0));
        // A user annotation and a cpu_op of the same step at the same start: keep one
        // (the user annotation sorts first: UserAnnotation > CpuOp in declaration order, so
        // sort it before by putting it first explicitly).
        crate::base::sort::sort_by(&mut t.steps, |a, b| {
            (a.start_ns, a.number, a.from != HostKind::UserAnnotation).cmp(&(
                b.start_ns,
                b.number,
                b.from != HostKind::UserAnnotation,
            ))
        });
        t.steps
            .dedup_by(|b, a| a.start_ns == b.start_ns && a.number == b.number);
        t.flows.sort_by_key(|f| (f.launch_ns, f.id));
        t.memory.sort_by_key(|m| m.ts_ns);
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(start: i64, stream: i64, corr: i64) -> DeviceOp {
        DeviceOp {
            kind: DeviceOpKind::Kernel,
            name: StrId::EMPTY,
            device: 0,
            stream,
            start_ns: start,
            end_ns: start + 10,
            correlation: corr,
            external_id: -1,
        }
    }

    #[test]
    fn finish_sorts_and_dedups_steps_and_links_launches() {
        let mut b = GpuTraceBuilder::new();
        let n = b.intern("cudaLaunchKernel");
        b.t.device_ops.push(op(50, 7, 2));
        b.t.device_ops.push(op(20, 9, 1));
        b.t.device_ops.push(op(20, 7, 3));
        b.t.host_ops.push(HostOp {
            kind: HostKind::CudaRuntime,
            name: n,
            cat: StrId::EMPTY,
            pid: StrId::EMPTY,
            tid: StrId::EMPTY,
            start_ns: 5,
            dur_ns: 3,
            correlation: 2,
            external_id: -1,
            stream: -1,
            shapes: StrId::EMPTY,
        });
        for from in [HostKind::CpuOp, HostKind::UserAnnotation] {
            b.t.steps.push(StepMarker {
                number: 4,
                name: StrId::EMPTY,
                from,
                start_ns: 1,
                dur_ns: 100,
            });
        }
        let t = b.finish();
        let order: Vec<(i64, i64)> = t
            .device_ops
            .iter()
            .map(|d| (d.start_ns, d.stream))
            .collect();
        assert_eq!(order, vec![(20, 7), (20, 9), (50, 7)]);
        assert_eq!(t.steps.len(), 1);
        assert_eq!(t.steps[0].from, HostKind::UserAnnotation);
        assert_eq!(t.streams(), vec![(0, 7), (0, 9)]);
        let idx = t.launch_index();
        assert_eq!(
            t.launch_of(&t.device_ops[2], &idx).map(|h| h.start_ns),
            Some(5)
        );
        assert_eq!(t.launch_of(&t.device_ops[0], &idx), None);
        assert_eq!(t.kind_counts(), [3, 0, 0]);
    }
}
