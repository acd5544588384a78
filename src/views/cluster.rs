//! The cluster view's payload from a cluster summary (`docs/cluster-summary.md`):
//! [`view`] joins each rank's summary with its cross-rank row into one table row, flattens the
//! service-time and underfeed matrices for the heatmap, and counts the dominant idle patterns.
//! Pure; the worker calls it once per summary file, the page renders the result.
//!
//! No number is recomputed: every value is the summary's (the Rust core's cross-rank rule
//! computed `robust_z` and `slow`); `null` and NaN in the file are "no value" here.

use std::collections::BTreeMap;

use crate::base::{Position, Problem, Problems, Severity};
use crate::protocol::cluster::{
    ClusterSummary, ProblemSeverity, RankStatus, RankSummary, TargetKind,
};
use crate::protocol::cluster_view::{
    ClusterRankRow, ClusterViewDto, HeatmapDto, OutlierDto, PatternCount,
};

/// Outliers sent to the page at most (the file keeps up to 1,000; the view lists the largest).
pub const MAX_OUTLIERS_SHOWN: usize = 200;

/// The pattern of a rank without an anomaly result.
pub const NO_PATTERN: &str = "no steps analysed";

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

fn status(s: RankStatus) -> &'static str {
    match s {
        RankStatus::Ok => "ok",
        RankStatus::Partial => "partial",
        RankStatus::Failed => "failed",
    }
}

fn kind(k: TargetKind) -> &'static str {
    match k {
        TargetKind::Ascend => "ascend",
        TargetKind::Kineto => "kineto",
        TargetKind::Snapshot => "snapshot",
    }
}

/// The largest peak the rank's summary knows, bytes: the Ascend allocator peak (MiB in the
/// file), else the largest snapshot device peak.
fn peak_bytes(r: &RankSummary) -> Option<u64> {
    if let Some(m) = r.memory.as_ref().and_then(|m| finite(m.peak_allocated_mb)) {
        return Some((m * 1024.0 * 1024.0).round().max(0.0) as u64);
    }
    r.snapshots.iter().map(|s| s.peak_bytes.max(0) as u64).max()
}

fn row(index: usize, r: &RankSummary) -> ClusterRankRow {
    let a = r.anomaly.as_ref();
    let first_problem = r
        .problems
        .first()
        .map(|p| format!("{}: {}", p.code, p.message));
    let kept = |sev| r.problems.iter().filter(|p| p.severity == sev).count() as u64;
    ClusterRankRow {
        index: index as u32,
        rank_id: r.rank_id,
        role: r.role.clone().unwrap_or_default(),
        rank_dir: r.rank_dir.clone(),
        kind: kind(r.kind).into(),
        status: status(r.status).into(),
        steps: a
            .map_or(r.steps.len() as u64, |a| a.step_count)
            .min(u32::MAX as u64) as u32,
        service_ms_avg: a.and_then(|a| finite(a.service_ms_avg)),
        busy_union_ms_avg: a.and_then(|a| finite(a.busy_union_ms_avg)),
        underfeed_ratio_avg: a.and_then(|a| finite(a.underfeed_ratio_avg)),
        comm_wait_ratio: a.and_then(|a| a.comm_wait_ratio_weighted.and_then(finite)),
        bubble_count_avg: a.and_then(|a| finite(a.bubble_count_avg)),
        robust_z: None,
        slow: false,
        idle_pattern: a.map(|a| a.dominant_idle_pattern.clone()),
        tags: a
            .map(|a| a.dominant_anomaly_tags.join(", "))
            .unwrap_or_default(),
        peak_bytes: peak_bytes(r),
        // the exact counts when the file has them, else the kept list's
        errors: r
            .problem_counts
            .errors
            .max(kept(ProblemSeverity::Error))
            .min(u32::MAX as u64) as u32,
        warnings: r
            .problem_counts
            .warnings
            .max(kept(ProblemSeverity::Warning))
            .min(u32::MAX as u64) as u32,
        problems_dropped: r.problems_dropped.min(u32::MAX as u64) as u32,
        first_problem,
    }
}

/// One matrix flattened row-major to `rows × cols` (ragged rows padded with `None` or cut;
/// `bad` counts the rows that were).
fn flatten(
    metric: &str,
    m: &[Vec<Option<f64>>],
    rows: usize,
    cols: usize,
    bad: &mut u64,
) -> HeatmapDto {
    let mut values = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        let line = m.get(r).map(Vec::as_slice).unwrap_or(&[]);
        if line.len() != cols {
            *bad += 1;
        }
        values.extend((0..cols).map(|c| line.get(c).copied().flatten().and_then(finite)));
    }
    HeatmapDto {
        metric: metric.into(),
        rows: rows as u32,
        cols: cols as u32,
        values,
    }
}

/// The cluster view of summary `s` read from `file`; what does not fit the format's shape (a
/// cross-rank row naming no rank, a matrix row of the wrong length) is a warning in `problems`.
pub fn view(s: &ClusterSummary, file: &str, problems: &mut Problems) -> ClusterViewDto {
    let mut ranks: Vec<ClusterRankRow> =
        s.ranks.iter().enumerate().map(|(i, r)| row(i, r)).collect();
    let mut unmatched = 0u64;
    for c in &s.cross_rank {
        match ranks.get_mut(c.rank_index as usize) {
            Some(r) => {
                r.robust_z = c.robust_z.and_then(finite);
                r.slow = c.slow;
            }
            None => unmatched += 1,
        }
    }
    let (rows, cols) = (s.ranks.len(), s.matrices.step_ids.len());
    let mut bad = 0;
    let service_ms = flatten("service_ms", &s.matrices.service_ms, rows, cols, &mut bad);
    let underfeed_ratio = flatten(
        "underfeed_ratio",
        &s.matrices.underfeed_ratio,
        rows,
        cols,
        &mut bad,
    );
    let warn = |problems: &mut Problems, what: String| {
        problems.push(Problem::new(
            Severity::Warning,
            "CLU-003",
            Position::file(file),
            what,
        ));
    };
    if unmatched > 0 {
        warn(problems, format!("{unmatched} cross_rank row(s) name a rank_index outside the {rows} ranks; they are not shown"));
    }
    if bad > 0 {
        warn(problems, format!("{bad} matrix row(s) do not have one value per step of step_ids ({cols}); missing cells are shown empty, extra ones are not shown"));
    }
    let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
    for r in &ranks {
        *counts
            .entry(r.idle_pattern.as_deref().unwrap_or(NO_PATTERN))
            .or_default() += 1;
    }
    let mut patterns: Vec<PatternCount> = counts
        .into_iter()
        .map(|(p, n)| PatternCount {
            pattern: p.into(),
            ranks: n,
        })
        .collect();
    crate::base::sort::sort_by(&mut patterns, |a, b| {
        b.ranks.cmp(&a.ranks).then(a.pattern.cmp(&b.pattern))
    });
    let outliers = s
        .outliers
        .iter()
        .take(MAX_OUTLIERS_SHOWN)
        .map(|o| OutlierDto {
            metric: o.metric.clone(),
            rank_id: o.rank_id,
            role: o.role.clone().unwrap_or_default(),
            step_id: o.step_id.clone(),
            value: o.value,
            median: o.median,
            robust_z: o.robust_z,
        })
        .collect();
    for r in &mut ranks {
        r.rank_dir = r.rank_dir.trim_end_matches('/').to_string();
    }
    let wall = s
        .run
        .wall_s
        .map(|w| format!(", {}", crate::base::format::duration_ms(w * 1000.0)));
    ClusterViewDto {
        file: file.into(),
        version: s.version,
        generator: s.generator.clone(),
        roots: s.roots.clone(),
        run: format!(
            "{} ({} tasks{})",
            s.run.mode,
            s.run.tasks,
            wall.unwrap_or_default()
        ),
        ranks,
        step_ids: s.matrices.step_ids.clone(),
        service_ms,
        underfeed_ratio,
        slow_ranks: s.slow_ranks.clone(),
        patterns,
        outliers,
        outliers_total: s.outliers.len() as u64 + s.outliers_dropped,
        problems_errors: s.problems_total.errors,
        problems_warnings: s.problems_total.warnings,
    }
}
