//! The `gpu` blocks of `proflens anomaly --out` (issue 10): for each GPU rank, the GPU
//! analyses over its trace (`analysis::gpu_rank`, with the anomaly steps' windows, device-side
//! when the device lags) and its row of the straggler view across the GPU ranks
//! (`analysis::gpu_straggler`), formatted by `report::anomaly_json::gpu`. Ascend ranks get
//! `None`. Computed at export time from the stored trace (about 0.1 s per 100k kernels).

use std::borrow::Borrow;

use super::anomaly::RankAnalysis;
use crate::analysis::gpu_rank::{self, GpuSummary};
use crate::analysis::gpu_straggler::{stragglers, RankDelay, Stragglers};
use crate::analysis::intervals::Interval;
use crate::model::gpu::GpuTrace;
use crate::report::anomaly_json::gpu::{self, GpuJson};

/// The step windows the GPU analyses of `r` use: the anomaly steps' windows (device-side
/// when the device lags), `(step id, window)` in time order.
pub fn step_windows(r: &RankAnalysis) -> Vec<(String, Interval)> {
    r.result
        .steps
        .iter()
        .map(|s| (s.step_id.clone(), s.window))
        .collect()
}

/// The GPU analyses of `r` (`analysis::gpu_rank`) with its trace; `None` for an Ascend rank.
pub fn rank_summary(r: &RankAnalysis) -> Option<(&GpuTrace, GpuSummary)> {
    let t = r.gpu.as_deref()?;
    Some((t, gpu_rank::summarise(t, &step_windows(r))))
}

/// One `gpu` block per rank of `ranks` (in their order); `None` for ranks without a GPU trace.
pub fn gpu_blocks<R: Borrow<RankAnalysis>>(ranks: &[R]) -> Vec<Option<GpuJson>> {
    let gpus: Vec<(usize, i64, &GpuTrace)> = ranks
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let r = r.borrow();
            let t = r.gpu.as_deref()?;
            Some((i, r.meta.rank_id.unwrap_or(i as i64), t))
        })
        .collect();
    let pairs: Vec<(i64, &GpuTrace)> = gpus.iter().map(|&(_, rank, t)| (rank, t)).collect();
    let view = (pairs.len() >= 2).then(|| stragglers(&pairs));
    let mut out: Vec<Option<GpuJson>> = (0..ranks.len()).map(|_| None).collect();
    for (k, &(i, _, _)) in gpus.iter().enumerate() {
        let row = view.as_ref().and_then(|v| straggler_row(v, k));
        out[i] = gpu_block(ranks[i].borrow(), row);
    }
    out
}

/// Row `k` of the straggler view as the `gpu` block takes it: `(matched, row, is straggler)`
/// (`None` past the last row).
pub fn straggler_row(v: &Stragglers, k: usize) -> Option<(usize, &RankDelay, bool)> {
    let row = v.ranks.get(k)?;
    Some((v.matched, row, v.straggler_index == Some(k)))
}

/// The `gpu` block of rank `r` with its row of the straggler view (`None` with fewer than two
/// GPU ranks); `None` for an Ascend rank. The one builder for [`gpu_blocks`] and the gathered
/// export (`engine::gather`), where the view comes from every worker's collectives.
pub fn gpu_block(r: &RankAnalysis, row: Option<(usize, &RankDelay, bool)>) -> Option<GpuJson> {
    let t = r.gpu.as_deref()?;
    let summary = gpu_rank::summarise(t, &step_windows(r));
    let origin = t.memory.first().map_or(0, |m| m.ts_ns);
    Some(gpu::build(&summary, origin, row))
}
