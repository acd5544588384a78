//! The `gpu` blocks of `proflens anomaly --out`: for each GPU rank, the GPU
//! analyses over its trace (`analysis::gpu_rank`, with the anomaly steps' windows, device-side
//! when the device lags) and its row of the straggler view across the GPU ranks
//! (`analysis::gpu_straggler`, one view per role when the run holds several), formatted by
//! `report::anomaly_json::gpu` and, for the Markdown report, `report::gpu_md`. Ascend ranks get
//! `None`. Computed at the first export from the stored trace (about 0.1 s per 100k kernels)
//! and kept in `RankAnalysis::gpu_summary` for the next ones.

use std::borrow::Borrow;

use crate::analysis::gpu_rank::{self, GpuSummary};
use crate::analysis::gpu_straggler::{collectives, stragglers_by_role, RoleStragglers};
use crate::analysis::intervals::Interval;
use crate::engine::read::RankAnalysis;
use crate::model::gpu::GpuTrace;
use crate::report::anomaly_json::gpu::{self, GpuJson, StragglerRow};
use crate::report::gpu_md::GpuReportInput;

/// The step windows the GPU analyses of `r` use: the anomaly steps' windows (device-side
/// when the device lags), `(step id, window)` in time order.
pub fn step_windows(r: &RankAnalysis) -> Vec<(String, Interval)> {
    gpu_rank::step_windows(&r.result.steps)
}

/// The GPU analyses of `r` (`analysis::gpu_rank`) with its trace; `None` for an Ascend rank.
/// Computed once per rank and kept in `r.gpu_summary`.
pub fn rank_summary(r: &RankAnalysis) -> Option<(&GpuTrace, &GpuSummary)> {
    let t = r.gpu.as_deref()?;
    let s = r
        .gpu_summary
        .get_or_init(|| gpu_rank::summarise(t, &step_windows(r)));
    Some((t, s))
}

/// Computes the GPU summary of every GPU rank of `ranks` not yet computed, on up to `threads`
/// threads natively (`base::par`): the exports then find them ready instead of computing them
/// one rank after the other. The same values either way.
pub fn warm_summaries(ranks: &[&RankAnalysis], threads: usize) {
    let todo: Vec<&RankAnalysis> = ranks
        .iter()
        .copied()
        .filter(|r| r.gpu.is_some() && r.gpu_summary.get().is_none())
        .collect();
    crate::base::par::map(threads, &todo, |r| rank_summary(r).is_some());
}

/// The straggler views over the GPU ranks of `ranks`, one per role when they hold more than
/// one role (`analysis::gpu_straggler::stragglers_by_role`); `at` is indexed by the position in
/// `ranks` (`None` for Ascend ranks and ranks alone in their role).
pub fn straggler_views<R: Borrow<RankAnalysis>>(ranks: &[R]) -> RoleStragglers {
    let gpus: Vec<(usize, i64, String, &GpuTrace)> = ranks
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let r = r.borrow();
            let t = r.gpu.as_deref()?;
            let role = r.meta.role.clone().unwrap_or_default();
            Some((i, r.meta.rank_id.unwrap_or(i as i64), role, t))
        })
        .collect();
    let ids: Vec<i64> = gpus.iter().map(|g| g.1).collect();
    let roles: Vec<&str> = gpus.iter().map(|g| g.2.as_str()).collect();
    let colls: Vec<Vec<(i64, &str)>> = gpus.iter().map(|g| collectives(g.3)).collect();
    let grouped = stragglers_by_role(&ids, &roles, &colls);
    let mut at = vec![None; ranks.len()];
    for (k, g) in gpus.iter().enumerate() {
        at[g.0] = grouped.at[k];
    }
    RoleStragglers {
        views: grouped.views,
        at,
    }
}

/// One `gpu` block per rank of `ranks` (in their order); `None` for ranks without a GPU trace.
pub fn gpu_blocks<R: Borrow<RankAnalysis>>(ranks: &[R]) -> Vec<Option<GpuJson>> {
    let views = straggler_views(ranks);
    (0..ranks.len())
        .map(|i| gpu_block(ranks[i].borrow(), straggler_row(&views, i)))
        .collect()
}

/// Rank `i`'s row of the straggler views as the `gpu` block takes it
/// (`None` when it is in no view).
pub fn straggler_row(v: &RoleStragglers, i: usize) -> Option<StragglerRow<'_>> {
    let (role, view, k) = v.of(i)?;
    Some(StragglerRow {
        role,
        matched: view.matched,
        row: view.ranks.get(k)?,
        is_straggler: view.straggler_index == Some(k),
    })
}

/// The GPU analyses and straggler views of the report's GPU section
/// (`report::gpu_md`): `(summary, view, row)` of rank `r` at position `i`; `None` for an
/// Ascend rank.
pub fn report_input<'v>(
    r: &'v RankAnalysis,
    views: &'v RoleStragglers,
    i: usize,
) -> Option<GpuReportInput<'v>> {
    let (_, summary) = rank_summary(r)?;
    Some(GpuReportInput {
        summary,
        straggler: views.of(i),
    })
}

/// The `gpu` block of rank `r` with its row of the straggler view (`None` when it is in no
/// view); `None` for an Ascend rank. The one builder for [`gpu_blocks`] and the gathered
/// export (`engine::export::gather`), where the views come from every worker's collectives.
pub fn gpu_block(r: &RankAnalysis, row: Option<StragglerRow<'_>>) -> Option<GpuJson> {
    let (t, summary) = rank_summary(r)?;
    let origin = t.memory.first().map_or(0, |m| m.ts_ns);
    Some(gpu::build(summary, origin, row))
}
