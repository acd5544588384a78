//! Launch → device links of the steps/bubbles timeline ("flow arrows on
//! selection"): for one selected item, the links to draw as arrows from a host lane to a
//! device lane and to name in the detail panel.
//!
//! * **GPU ranks (Kineto)**: a kernel's launch is the runtime call with the same
//!   `correlation` ([`GpuTrace::launch_of`], the link `analysis::launch_timing` uses); when the
//!   trace also has the `ac2g` / `async_cpu_to_gpu` flow of that id, the arrow runs from the
//!   flow's `s` to its `f` time and the link says `ac2g`, else from the call's start to the
//!   kernel's start (`correlation`).
//! * **Ascend ranks**: the `async_npu` (`torch_to_npu`) and `HostToDevice` flows of
//!   `trace_view.json` ([`HostEventTable::flows`]); the host end is the innermost host event
//!   on the `s` thread holding the `s` time (Perfetto's "enclosing slice" binding), the device
//!   end the kernel starting at the `f` time (on the `f` stream when several start then).
//!
//! Selecting a kernel gives its launch; selecting a host event gives the kernels launched from
//! inside it (its own runtime call, or the calls and flows nested in it on its thread), in
//! time order, the first `limit` in full and all counted. Nothing here runs per frame: the
//! index is built on the first question about a rank and each answer costs binary searches
//! plus the items inside the selected host event.

use rustc_hash::FxHashMap as HashMap;

use super::timeline::{Items, TimelineIndex, TimelineSource};
use crate::base::sort::sort_by_i64_pair;
use crate::model::gpu::{FlowKind, GpuTrace, LaunchIndex};
use crate::model::trace_events::{Lane as HostLane, TraceFlow};
use crate::protocol::{FlowDto, TimelineFlowsDto};

/// Most items walked back from an instant to find the host event holding it.
const MAX_WALK: usize = 100_000;

/// Per-rank lookup tables of the links (see the module doc). Holds no borrow.
#[derive(Clone, Debug, Default)]
pub struct FlowIndex {
    /// GPU: kernel index of each device op (`u32::MAX` = none), the inverse of the kernel
    /// table's `row − 1` (`analysis::gpu_tables::kernel_table`).
    kernel_of_op: Vec<u32>,
    /// GPU: `(correlation, device op index)`, sorted.
    op_by_corr: Vec<(i64, u32)>,
    /// GPU: runtime calls by correlation.
    launches: LaunchIndex,
    /// GPU: `(flow id, flow index)` of the trace's launch flows, sorted.
    flow_by_id: Vec<(i64, u32)>,
    /// Ascend: flow indices ([`crate::model::trace_events::HostEventTable::flows`]) by end time.
    by_end: Vec<u32>,
    /// Ascend: thread id → the text after its `/` (the `tid`: the stream of a device lane).
    tid_text: HashMap<u32, String>,
}

/// One link found, before it becomes a [`FlowDto`].
struct Link {
    kind: &'static str,
    id: String,
    from_ns: i64,
    to_ns: i64,
    host: (u32, u32),   // (lane, host event index)
    device: (u32, u32), // (lane, kernel index)
}

impl FlowIndex {
    /// Builds the tables of one rank: `gpu` is the rank's Kineto trace (GPU ranks), `None` on
    /// Ascend ranks (the flows of `src.trace` are used). O(n log n) in kernels and flows.
    pub fn new(src: TimelineSource<'_>, gpu: Option<&GpuTrace>) -> Self {
        let mut ix = FlowIndex::default();
        if let Some(g) = gpu {
            ix.kernel_of_op = vec![u32::MAX; g.device_ops.len()];
            for (k, row) in src.kernels.rows().enumerate() {
                if let Some(slot) = (row as usize)
                    .checked_sub(1)
                    .and_then(|i| ix.kernel_of_op.get_mut(i))
                {
                    *slot = k as u32;
                }
            }
            ix.op_by_corr = g
                .device_ops
                .iter()
                .enumerate()
                .filter(|(_, d)| d.correlation >= 0)
                .map(|(i, d)| (d.correlation, i as u32))
                .collect();
            ix.op_by_corr.sort_unstable();
            ix.launches = g.launch_index();
            ix.flow_by_id = g
                .flows
                .iter()
                .enumerate()
                .map(|(i, f)| (f.id, i as u32))
                .collect();
            ix.flow_by_id.sort_unstable();
        } else if let Some(t) = src.trace {
            let flows = t.flows();
            ix.by_end = (0..flows.len() as u32).collect();
            sort_by_i64_pair(&mut ix.by_end, |i| {
                (flows[i as usize].end_ns, flows[i as usize].start_ns)
            });
            for f in flows {
                ix.tid_text.entry(f.end_thread).or_insert_with(|| {
                    let key = t.thread_text(f.end_thread);
                    key.rsplit_once('/').map_or(key, |(_, tid)| tid).to_string()
                });
            }
        }
        ix
    }

    /// The links of item `index` on lane `lane` (a kernel or a host event, as
    /// [`TimelineIndex::item_at`] names them): at most `limit` in full, all counted. An
    /// unknown lane or item gives no links.
    #[allow(clippy::too_many_arguments)]
    pub fn flows(
        &self,
        tl: &TimelineIndex,
        src: TimelineSource<'_>,
        gpu: Option<&GpuTrace>,
        rank: u32,
        lane: u32,
        index: u32,
        limit: usize,
    ) -> TimelineFlowsDto {
        let mut links = Vec::new();
        let mut total = 0u64;
        match tl.lane(lane).map(|l| l.0) {
            Some(Items::Kernels) if (index as usize) < src.kernels.len() => {
                let found = match gpu {
                    Some(g) => self.gpu_launch(tl, src, g, index),
                    None => self.ascend_launches(tl, src, index),
                };
                total = found.len() as u64;
                links = found;
                links.truncate(limit);
            }
            Some(Items::Host) => {
                let ev = src.trace.and_then(|t| t.events().get(index as usize));
                if let Some(ev) = ev.copied() {
                    let mut push = |l: Link| {
                        total += 1;
                        if links.len() < limit {
                            links.push(l);
                        }
                    };
                    match gpu {
                        Some(g) => self.gpu_launched(tl, src, g, lane, ev, &mut push),
                        None => self.ascend_launched(tl, src, ev, &mut push),
                    }
                }
            }
            _ => {}
        }
        let flows = links
            .into_iter()
            .map(|l| FlowDto {
                kind: l.kind.to_string(),
                id: l.id,
                from_ms: tl.rel_ms(l.from_ns),
                to_ms: tl.rel_ms(l.to_ns),
                host: tl.item_dto(src, l.host.0, Items::Host, l.host.1),
                device: tl.item_dto(src, l.device.0, Items::Kernels, l.device.1),
            })
            .collect();
        TimelineFlowsDto {
            rank,
            lane,
            index,
            total,
            flows,
        }
    }

    /// The device lane and index of kernel `k`.
    fn kernel_lane(tl: &TimelineIndex, src: TimelineSource<'_>, k: u32) -> Option<(u32, u32)> {
        let s = *src.kernels.stream().get(k as usize)?;
        Some((tl.lane_of(Items::Kernels, s)?, k))
    }

    /// GPU, kernel selected: the runtime call with its correlation, as a host event.
    fn gpu_launch(
        &self,
        tl: &TimelineIndex,
        src: TimelineSource<'_>,
        g: &GpuTrace,
        k: u32,
    ) -> Vec<Link> {
        let row = src.kernels.row_of(k as usize) as usize;
        let Some(op) = row.checked_sub(1).and_then(|i| g.device_ops.get(i)) else {
            return Vec::new();
        };
        let (Some(h), Some(trace), Some(device)) = (
            g.launch_of(op, &self.launches),
            src.trace,
            Self::kernel_lane(tl, src, k),
        ) else {
            return Vec::new();
        };
        // The host table keys threads as "<pid>/<tid>" (analysis::gpu_tables::host_table).
        let key = format!("{}/{}", g.text(h.pid), g.text(h.tid));
        let Some(lane) = trace
            .thread_id(&key)
            .and_then(|th| tl.lane_of(Items::Host, th))
        else {
            return Vec::new();
        };
        let Some((_, spans, items)) = tl.lane(lane) else {
            return Vec::new();
        };
        let name = g.text(h.name);
        let host = spans
            .starting_in(h.start_ns, h.start_ns + 1)
            .map(|p| items[p])
            .find(|&e| {
                trace.events().get(e as usize).is_some_and(|ev| {
                    ev.dur_ns == h.dur_ns
                        && trace.lane_of(ev) == HostLane::Cann
                        && trace.text(ev.name) == name
                })
            });
        let Some(host) = host else {
            return Vec::new();
        };
        vec![self.gpu_link(
            g,
            op.correlation,
            (h.start_ns, op.start_ns),
            (lane, host),
            device,
        )]
    }

    /// A GPU link of correlation `corr`: `ac2g` times when the trace has that flow.
    fn gpu_link(
        &self,
        g: &GpuTrace,
        corr: i64,
        times: (i64, i64),
        host: (u32, u32),
        device: (u32, u32),
    ) -> Link {
        let a = self.flow_by_id.partition_point(|&(id, _)| id < corr);
        let flow = self
            .flow_by_id
            .get(a)
            .filter(|&&(id, _)| id == corr)
            .and_then(|&(_, i)| g.flows.get(i as usize));
        let (kind, (from_ns, to_ns)) = match flow {
            Some(f) => (
                match f.kind {
                    FlowKind::Ac2g => "ac2g",
                    FlowKind::AsyncCpuToGpu => "async_cpu_to_gpu",
                },
                (f.launch_ns, f.arrive_ns),
            ),
            None => ("correlation", times),
        };
        Link {
            kind,
            id: corr.to_string(),
            from_ns,
            to_ns,
            host,
            device,
        }
    }

    /// GPU, host event selected: the kernels launched by the runtime calls that start inside
    /// it on its lane (itself included).
    fn gpu_launched(
        &self,
        tl: &TimelineIndex,
        src: TimelineSource<'_>,
        g: &GpuTrace,
        lane: u32,
        ev: crate::model::trace_events::HostEvent,
        push: &mut dyn FnMut(Link),
    ) {
        let (Some(trace), Some((_, spans, items))) = (src.trace, tl.lane(lane)) else {
            return;
        };
        for p in spans.starting_in(ev.start_ns, ev.end_ns()) {
            let e = items[p];
            let Some(call) = trace.events().get(e as usize) else {
                continue;
            };
            if trace.lane_of(call) != HostLane::Cann || call.end_ns() > ev.end_ns() {
                continue;
            }
            // The host op of this event: same start, duration and name.
            let name = trace.text(call.name);
            let from = g.host_ops.partition_point(|h| h.start_ns < call.start_ns);
            let corr = g.host_ops[from..]
                .iter()
                .take_while(|h| h.start_ns == call.start_ns)
                .find(|h| {
                    h.kind.is_runtime()
                        && h.correlation >= 0
                        && h.dur_ns == call.dur_ns
                        && g.text(h.name) == name
                })
                .map(|h| h.correlation);
            let Some(corr) = corr else { continue };
            let a = self.op_by_corr.partition_point(|&(c, _)| c < corr);
            for &(_, op) in self.op_by_corr[a..].iter().take_while(|&&(c, _)| c == corr) {
                let k = self.kernel_of_op[op as usize];
                let Some(device) = (k != u32::MAX)
                    .then(|| Self::kernel_lane(tl, src, k))
                    .flatten()
                else {
                    continue;
                };
                let start = g.device_ops[op as usize].start_ns;
                push(self.gpu_link(g, corr, (call.start_ns, start), (lane, e), device));
            }
        }
    }

    /// Ascend: the kernel a flow ends on (the one starting at the `f` time, on the `f`
    /// stream when several start then).
    fn flow_kernel(&self, src: TimelineSource<'_>, f: &TraceFlow) -> Option<u32> {
        let k = src.kernels;
        let r = k.starting_in(f.end_ns, f.end_ns + 1);
        let tid = self.tid_text.get(&f.end_thread).map(String::as_str);
        r.clone()
            .find(|&i| Some(k.stream_of(i)) == tid)
            .or(r.start.lt(&r.end).then_some(r.start))
            .map(|i| i as u32)
    }

    /// Ascend: the host lane and innermost host event holding a flow's `s` end.
    fn flow_host(tl: &TimelineIndex, f: &TraceFlow) -> Option<(u32, u32)> {
        let lane = tl.lane_of(Items::Host, f.start_thread)?;
        let (_, spans, items) = tl.lane(lane)?;
        let p = spans.innermost_at(f.start_ns, MAX_WALK)?;
        Some((lane, items[p]))
    }

    fn ascend_link(f: &TraceFlow, host: (u32, u32), device: (u32, u32)) -> Link {
        Link {
            kind: f.kind.as_str(),
            id: f.id.to_string(),
            from_ns: f.start_ns,
            to_ns: f.end_ns,
            host,
            device,
        }
    }

    /// Ascend, kernel selected: the flows ending on it.
    fn ascend_launches(&self, tl: &TimelineIndex, src: TimelineSource<'_>, k: u32) -> Vec<Link> {
        let (Some(t), Some(device)) = (src.trace, Self::kernel_lane(tl, src, k)) else {
            return Vec::new();
        };
        let flows = t.flows();
        let s = src.kernels.start_ns()[k as usize];
        let a = self
            .by_end
            .partition_point(|&i| flows[i as usize].end_ns < s);
        self.by_end[a..]
            .iter()
            .map(|&i| &flows[i as usize])
            .take_while(|f| f.end_ns == s)
            .filter(|f| self.flow_kernel(src, f) == Some(k))
            .filter_map(|f| Some(Self::ascend_link(f, Self::flow_host(tl, f)?, device)))
            .collect()
    }

    /// Ascend, host event selected: the flows starting inside it on its thread.
    fn ascend_launched(
        &self,
        tl: &TimelineIndex,
        src: TimelineSource<'_>,
        ev: crate::model::trace_events::HostEvent,
        push: &mut dyn FnMut(Link),
    ) {
        let Some(t) = src.trace else { return };
        let flows = t.flows();
        let a = flows.partition_point(|f| f.start_ns < ev.start_ns);
        for f in flows[a..].iter().take_while(|f| f.start_ns < ev.end_ns()) {
            if f.start_thread != t.thread_of(&ev) {
                continue;
            }
            let device = self
                .flow_kernel(src, f)
                .and_then(|k| Self::kernel_lane(tl, src, k));
            let host = Self::flow_host(tl, f);
            if let (Some(device), Some(host)) = (device, host) {
                push(Self::ascend_link(f, host, device));
            }
        }
    }
}
