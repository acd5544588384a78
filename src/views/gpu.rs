//! The GPU panel of the steps / bubbles tab: [`panel`] turns one GPU rank's
//! [`GpuSummary`] (HTA breakdowns, kernel categories and names, `[memory]` curves;
//! `analysis::gpu_rank`) into the page's [`GpuPanelDto`]; [`collectives`] and
//! [`straggler_view`] give the straggler view across GPU ranks that live in different
//! workers, through the one rule of `analysis::gpu_straggler`. Unit conversions are
//! `base::units`' (the `gpu` block of `proflens anomaly` uses the same ones), so the panel
//! shows the JSON's numbers.

use rustc_hash::FxHashMap as HashMap;

use crate::analysis::gpu_breakdown::HtaWindow;
use crate::analysis::gpu_kernels::Category;
use crate::analysis::gpu_memory::DeviceMemory;
use crate::analysis::gpu_rank::GpuSummary;
use crate::analysis::gpu_straggler::{self, stragglers_by_role};
use crate::base::units::ns_to_ms;
use crate::model::gpu::GpuTrace;
use crate::protocol::gpu::{
    CollectivesDto, GpuMemoryDto, GpuPanelDto, GpuStepDto, GpuTimeDto, KernelCategoryDto,
    KernelNameDto, StragglerRowDto, StragglerViewDto, StreamIdleDto,
};
use crate::protocol::{CurveDto, SeriesDto};
use crate::views::curve::step_min_max;

const MIB: f64 = 1024.0 * 1024.0;
const NS_PER_S: i64 = 1_000_000_000;

/// The facts of a rank card in the Inventory, `(label, value)` in display order (`None` is
/// shown as "—"). The platform's own fields only: a GPU rank (PyTorch profiler trace) never
/// lists the Ascend fields (`level`, `export`, `torch_npu`, `CANN`) and an Ascend rank never
/// lists the GPU ones (`GPU`, `GPU runtime`), so neither card shows a row that cannot be filled.
/// `read`: the rank's anomaly summary once its run is done; a GPU row the inventory's head could
/// not fill (`deviceProperties` after the events) takes what the whole trace names.
pub fn rank_card_facts(
    rank: &crate::protocol::RankFolderDto,
    read: Option<&crate::protocol::anomaly::AnomalySummaryDto>,
) -> Vec<(&'static str, Option<String>)> {
    let (n_other, other_bytes) = rank.other_files;
    let ascend_only = ["level", "export", "torch_npu", "CANN"];
    let gpu_only = ["GPU", "GPU runtime"];
    [
        ("folder", Some(rank.dir.clone())),
        ("rank from", Some(rank.rank_source.clone())),
        (
            "other files",
            (n_other > 0).then(|| {
                format!(
                    "{n_other} ({}), not read",
                    crate::base::format::bytes(other_bytes as f64)
                )
            }),
        ),
        ("level", rank.level.clone()),
        ("export", rank.export_type.clone()),
        ("torch_npu", rank.torch_npu_version.clone()),
        ("CANN", rank.cann_version.clone()),
        (
            "GPU",
            (rank.gpu_device.clone()).or_else(|| read.and_then(|s| s.gpu_device.clone())),
        ),
        (
            "GPU runtime",
            (rank.gpu_runtime.clone()).or_else(|| read.and_then(|s| s.gpu_runtime.clone())),
        ),
    ]
    .into_iter()
    .filter(|(k, _)| {
        if rank.kineto {
            !ascend_only.contains(k)
        } else {
            !gpu_only.contains(k)
        }
    })
    .collect()
}

/// The notes of a rank card in the Inventory (`CODE: message`): the inventory's
/// (`rank.notes`), with the run's check of the rank number (`read`: the rank's anomaly summary
/// once its run is done, [`AnomalySummaryDto::rank_check`]) in place of the note it replaces —
/// the rank guessed from the order of the traces (`GPU-DISC-001`) gives way to what the
/// trace's own `distributedInfo` says (`GPU-DISC-005`, formats.md §8). The check leads when
/// there was no such note (a rank numbered by its file name). The Problems tab keeps both.
///
/// [`AnomalySummaryDto::rank_check`]: crate::protocol::anomaly::AnomalySummaryDto::rank_check
pub fn rank_card_notes(
    rank: &crate::protocol::RankFolderDto,
    read: Option<&crate::protocol::anomaly::AnomalySummaryDto>,
) -> Vec<String> {
    let Some((replaces, check)) = read.and_then(|s| s.rank_check.as_ref()) else {
        return rank.notes.clone();
    };
    let prefix = format!("{replaces}: ");
    let mut out: Vec<String> = Vec::with_capacity(rank.notes.len() + 1);
    let mut placed = false;
    for n in &rank.notes {
        if !n.starts_with(&prefix) {
            out.push(n.clone());
        } else if !placed {
            out.push(check.clone());
            placed = true;
        }
    }
    if !placed {
        out.insert(0, check.clone());
    }
    out
}

/// The window HTA's breakdowns used, in words (gpu-traces.md §1).
pub fn window_note(w: &HtaWindow) -> String {
    match w.last_step_start_us {
        Some(_) => format!(
            "HTA parity window: {} ProfilerSteps; as HTA 0.5.0 does, the GPU events launched at or after the last step's start are left out ({} kept, {} left out).",
            w.profiler_steps, w.gpu_kept, w.gpu_dropped
        ),
        None => format!(
            "Whole capture (fewer than 2 ProfilerSteps, so HTA's parity window does not apply): {} GPU events.",
            w.gpu_kept
        ),
    }
}

/// What the kernel categories, the per-step table and the kernel table cover, in words: the
/// whole capture, unlike HTA's figures above them when its parity window left the last step
/// out (a newcomer otherwise reads two different "compute" figures on one panel).
pub fn categories_note(w: &HtaWindow, device_ops: u64) -> String {
    match w.last_step_start_us {
        Some(_) => format!(
            "Whole capture: all {device_ops} device ops (kernels, memcpy, memset) of the {} ProfilerSteps, the last one included; the HTA figures above leave out the {} launched in the last step.",
            w.profiler_steps, w.gpu_dropped
        ),
        None => format!("Whole capture: all {device_ops} device ops (kernels, memcpy, memset)."),
    }
}

/// `GPU 0`, `CPU`, or the raw type and id.
fn device_label(device_type: i64, device_id: i64) -> String {
    match device_type {
        0 => "CPU".to_string(),
        1 => format!("GPU {device_id}"),
        t => format!("device type {t} id {device_id}"),
    }
}

/// One device's curves (allocated, reserved; MiB over ms from `origin_ns`), `width_px`
/// columns over the whole capture of the counters.
fn memory_curve(
    rank: u32,
    t: &GpuTrace,
    d: &DeviceMemory,
    origin_ns: i64,
    width_px: u32,
) -> CurveDto {
    let ms_of = |i: usize| ns_to_ms(t.memory[i].ts_ns.saturating_sub(origin_ns));
    let ts: Vec<f64> = d.curve.iter().map(|&(i, _, _)| ms_of(i)).collect();
    let alloc: Vec<f64> = d.curve.iter().map(|&(_, a, _)| a as f64 / MIB).collect();
    let reserved: Vec<f64> = d
        .curve
        .iter()
        .map(|&(_, _, r)| r.map_or(f64::NAN, |r| r as f64 / MIB))
        .collect();
    let (x0, mut x1) = match (ts.first(), ts.last()) {
        (Some(&a), Some(&b)) => (a, b),
        _ => (0.0, 1.0),
    };
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let w = width_px.clamp(1, 8192) as usize;
    let mk = |name: &str, vs: &[f64]| {
        let mm = step_min_max(&ts, vs, x0, x1, w);
        SeriesDto {
            name: name.to_string(),
            min: mm.min,
            max: mm.max,
        }
    };
    let mut series = vec![mk("allocated", &alloc)];
    if d.peak_reserved.is_some() {
        series.push(mk("reserved", &reserved));
    }
    let y_max_mb = series
        .iter()
        .flat_map(|s| s.max.iter())
        .copied()
        .filter(|v| !v.is_nan())
        .fold(0.0, f64::max);
    let (peak_bytes, peak_ns) = d.peak_allocated;
    CurveDto {
        rank,
        x0_ms: x0,
        x1_ms: x1,
        full_range_ms: (x0, x1),
        series,
        y_max_mb,
        peak: (!d.curve.is_empty()).then(|| {
            (
                ns_to_ms(peak_ns.saturating_sub(origin_ns)),
                peak_bytes as f64 / MIB,
            )
        }),
        samples: d.curve.len() as u64,
        pool: Some(device_label(d.device_type, d.device_id)),
    }
}

/// The GPU panel of rank folder `rank` from its trace and its GPU summary; memory curves
/// `width_px` columns wide.
pub fn panel(rank: u32, t: &GpuTrace, s: &GpuSummary, width_px: u32) -> GpuPanelDto {
    let cat = |c: &crate::analysis::gpu_kernels::CategoryTimes| {
        [Category::Compute, Category::Communication, Category::Memory]
            .iter()
            .map(|&k| KernelCategoryDto {
                category: k.as_str().to_string(),
                count: c.count[k as usize],
                sum_ms: ns_to_ms(c.sum_ns[k as usize]),
                busy_ms: ns_to_ms(c.busy_ns[k as usize]),
            })
            .collect::<Vec<_>>()
    };
    let all_ns = s
        .kernels
        .times
        .sum_ns
        .iter()
        .fold(0i64, |a, &b| a.saturating_add(b));
    let origin_ns = t.memory.first().map_or(0, |m| m.ts_ns);
    GpuPanelDto {
        rank,
        window_note: window_note(&s.hta.window),
        categories_note: categories_note(
            &s.hta.window,
            s.kernels
                .times
                .count
                .iter()
                .fold(0u64, |a, &b| a.saturating_add(b)),
        ),
        time: s.hta.time.map(|b| GpuTimeDto {
            span_us: b.span_us,
            idle_us: b.idle_us,
            compute_us: b.compute_us,
            non_compute_us: b.non_compute_us,
        }),
        idle_by_stream: s
            .hta
            .idle_by_stream
            .iter()
            .map(|i| StreamIdleDto {
                stream: i.stream,
                host_wait_us: i.host_wait_us,
                kernel_wait_us: i.kernel_wait_us,
                other_us: i.other_us,
                idle_us: i
                    .host_wait_us
                    .unwrap_or(0)
                    .saturating_add(i.kernel_wait_us.unwrap_or(0))
                    .saturating_add(i.other_us),
            })
            .collect(),
        categories: cat(&s.kernels.times),
        steps: s
            .kernels
            .steps
            .iter()
            .map(|k| GpuStepDto {
                step_id: k.step_id.clone(),
                busy_ms: [0, 1, 2].map(|j| ns_to_ms(k.times.busy_ns[j])),
                comm_compute_overlap_ms: ns_to_ms(k.overlap_ns),
                exposed_comm_ms: ns_to_ms(k.exposed_comm_ns),
            })
            .collect(),
        kernels: s
            .kernels
            .by_name
            .iter()
            .take(GpuPanelDto::KERNELS)
            .map(|n| KernelNameDto {
                name: n.name.clone(),
                category: n.category.as_str().to_string(),
                count: n.count,
                total_ms: ns_to_ms(n.total_ns),
                mean_us: if n.count > 0 {
                    n.total_ns as f64 / n.count as f64 / 1000.0
                } else {
                    0.0
                },
                share_ratio: if all_ns > 0 {
                    n.total_ns as f64 / all_ns as f64
                } else {
                    0.0
                },
            })
            .collect(),
        kernel_names: s.kernels.by_name.len() as u64,
        memory: s
            .memory
            .iter()
            .map(|d| GpuMemoryDto {
                device: device_label(d.device_type, d.device_id),
                allocated_source: d.allocated_source.as_str().to_string(),
                samples: d.curve.len() as u64,
                peak_allocated_bytes: d.peak_allocated.0,
                peak_allocated_at_ms: ns_to_ms(d.peak_allocated.1.saturating_sub(origin_ns)),
                peak_reserved_bytes: d.peak_reserved.map(|p| p.0),
                curve: memory_curve(rank, t, d, origin_ns, width_px),
            })
            .collect(),
    }
}

/// The collectives of rank folder `rank` (rank id `rank_id`, role `role`) for [`straggler_view`].
pub fn collectives(rank: u32, rank_id: i64, role: &str, t: &GpuTrace) -> CollectivesDto {
    let mut ix: HashMap<&str, u32> = HashMap::default();
    let mut names: Vec<String> = Vec::new();
    let mut starts_ns = Vec::new();
    let mut name_ix = Vec::new();
    let all = gpu_straggler::collectives(t);
    let base_s = all.first().map_or(0, |c| c.0.div_euclid(NS_PER_S));
    for (start, name) in all {
        let next = names.len() as u32;
        let j = *ix.entry(name).or_insert_with(|| {
            names.push(name.to_string());
            next
        });
        starts_ns.push(start.saturating_sub(base_s.saturating_mul(NS_PER_S)));
        name_ix.push(j);
    }
    CollectivesDto {
        rank,
        rank_id,
        role: role.to_string(),
        base_s,
        starts_ns,
        name_ix,
        names,
    }
}

/// The straggler view over the GPU ranks whose collectives are `ranks` (any worker), in
/// their order: the rule of `analysis::gpu_straggler::stragglers_by_role` (one view per role
/// when the ranks hold several, as `proflens anomaly`).
pub fn straggler_view(ranks: &[CollectivesDto]) -> StragglerViewDto {
    let colls: Vec<Vec<(i64, &str)>> = ranks
        .iter()
        .map(|c| {
            c.starts_ns
                .iter()
                .zip(&c.name_ix)
                .map(|(&s, &j)| {
                    let epoch_ns = c.base_s.saturating_mul(NS_PER_S).saturating_add(s);
                    (epoch_ns, c.names.get(j as usize).map_or("", String::as_str))
                })
                .collect()
        })
        .collect();
    let ids: Vec<i64> = ranks.iter().map(|c| c.rank_id).collect();
    let roles: Vec<&str> = ranks.iter().map(|c| c.role.as_str()).collect();
    let g = stragglers_by_role(&ids, &roles, &colls);
    StragglerViewDto {
        matched: g.views.first().map_or(0, |v| v.1.matched as u64),
        grouped: g.views.iter().any(|v| v.0.is_some()),
        rows: ranks
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let (role, v, k) = g.of(i)?;
                let r = v.ranks.get(k)?;
                Some(StragglerRowDto {
                    rank: c.rank,
                    rank_id: r.rank,
                    collectives: c.starts_ns.len() as u64,
                    started_last: r.last_count,
                    mean_start_delay_ms: ns_to_ms(r.mean_delay_ns),
                    max_start_delay_ms: ns_to_ms(r.max_delay_ns),
                    is_straggler: v.straggler_index == Some(k),
                    group: role.map(str::to_string),
                    matched: v.matched as u64,
                })
            })
            .collect(),
    }
}

/// A column of the kernel table to sort by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelSort {
    /// Σ duration (the default), descending.
    Total,
    /// Occurrences, descending.
    Count,
    /// Mean duration, descending.
    Mean,
    /// Name, ascending.
    Name,
}

impl KernelSort {
    /// The URL spelling (`gpu.sort=count`): `total`, `count`, `mean`, `name`.
    pub fn as_str(self) -> &'static str {
        match self {
            KernelSort::Total => "total",
            KernelSort::Count => "count",
            KernelSort::Mean => "mean",
            KernelSort::Name => "name",
        }
    }
}

/// In the URL hash as [`KernelSort::as_str`]; the default (`total`) is not written.
impl super::view_state::HashValue for KernelSort {
    fn to_hash(&self) -> Option<String> {
        (*self != KernelSort::Total).then(|| self.as_str().to_string())
    }
    fn from_hash(s: &str) -> Option<Self> {
        [
            KernelSort::Total,
            KernelSort::Count,
            KernelSort::Mean,
            KernelSort::Name,
        ]
        .into_iter()
        .find(|k| k.as_str() == s.trim())
    }
}

/// The kernel table's rows whose name contains `filter` (ASCII case-insensitive; empty: all),
/// sorted by `by` (ties by name).
pub fn kernel_rows(rows: &[KernelNameDto], filter: &str, by: KernelSort) -> Vec<KernelNameDto> {
    let f = filter.trim().to_ascii_lowercase();
    let mut out: Vec<KernelNameDto> = rows
        .iter()
        .filter(|r| f.is_empty() || r.name.to_ascii_lowercase().contains(&f))
        .cloned()
        .collect();
    crate::base::sort::sort_by(&mut out, |a, b| {
        let o = match by {
            KernelSort::Total => b.total_ms.total_cmp(&a.total_ms),
            KernelSort::Count => b.count.cmp(&a.count),
            KernelSort::Mean => b.mean_us.total_cmp(&a.mean_us),
            KernelSort::Name => std::cmp::Ordering::Equal,
        };
        o.then_with(|| a.name.cmp(&b.name))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_sort_round_trips_through_the_url() {
        use crate::views::view_state::HashValue;
        for k in [KernelSort::Count, KernelSort::Mean, KernelSort::Name] {
            assert_eq!(KernelSort::from_hash(&k.to_hash().unwrap()), Some(k));
        }
        assert_eq!(KernelSort::Total.to_hash(), None);
        assert_eq!(KernelSort::from_hash(" total"), Some(KernelSort::Total));
        assert_eq!(KernelSort::from_hash("bogus"), None);
    }

    fn coll(rank: u32, starts: &[i64]) -> CollectivesDto {
        CollectivesDto {
            rank,
            rank_id: rank as i64,
            role: String::new(),
            base_s: 1_682_725_898,
            starts_ns: starts.to_vec(),
            name_ix: vec![0; starts.len()],
            names: vec!["ncclAllReduce".into()],
        }
    }

    #[test]
    fn straggler_is_the_rank_that_starts_last_most_often() {
        // Rank 1 starts collectives 0 and 2 last (by 2 ms and 4 ms), rank 0 collective 1.
        let v = straggler_view(&[
            coll(0, &[0, 3_000_000, 10_000_000]),
            coll(1, &[2_000_000, 2_000_000, 14_000_000]),
        ]);
        assert_eq!(v.matched, 3);
        assert!(v.rows[1].is_straggler && !v.rows[0].is_straggler);
        assert_eq!(v.rows[1].started_last, 2);
        assert_eq!(v.rows[0].started_last, 1);
        assert_eq!(v.rows[1].max_start_delay_ms, 4.0);
        assert_eq!(v.rows[1].mean_start_delay_ms, 2.0);
        assert_eq!(v.rows[0].mean_start_delay_ms, 0.333333); // 1 ms / 3 in whole ns
    }

    #[test]
    fn kernel_rows_filter_and_sort() {
        let k = |name: &str, count: u64, total_ms: f64| KernelNameDto {
            name: name.into(),
            category: "compute".into(),
            count,
            total_ms,
            mean_us: total_ms * 1000.0 / count as f64,
            share_ratio: 0.0,
        };
        let rows = [
            k("gemm_a", 10, 5.0),
            k("ncclAllReduce", 2, 8.0),
            k("Gemm_b", 40, 5.0),
        ];
        let names = |v: Vec<KernelNameDto>| v.into_iter().map(|r| r.name).collect::<Vec<_>>();
        assert_eq!(
            names(kernel_rows(&rows, "", KernelSort::Total)),
            ["ncclAllReduce", "Gemm_b", "gemm_a"]
        );
        assert_eq!(
            names(kernel_rows(&rows, "GEMM", KernelSort::Count)),
            ["Gemm_b", "gemm_a"]
        );
        assert_eq!(
            names(kernel_rows(&rows, "", KernelSort::Mean)),
            ["ncclAllReduce", "gemm_a", "Gemm_b"]
        );
        assert_eq!(
            names(kernel_rows(&rows, " ", KernelSort::Name)),
            ["Gemm_b", "gemm_a", "ncclAllReduce"]
        );
    }

    #[test]
    fn matching_stops_where_names_diverge() {
        let mut b = coll(1, &[5, 6, 7]);
        b.names.push("ncclBroadcast".into());
        b.name_ix[1] = 1;
        let v = straggler_view(&[coll(0, &[0, 1, 2]), b]);
        assert_eq!(v.matched, 1);
        assert_eq!(v.rows[1].collectives, 3);
    }
}
