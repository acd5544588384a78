//! The bubble list and the bubble panel: the rank's emitted bubble windows
//! (anomaly.md §5.6, in §6.1 output order) sorted, filtered by label / scope / step and paged,
//! and one window in full — ratios (§5.7.2), labels with the §5.8 rule that gave each, the
//! `evidence_ops` strings and the kernels just before and after (all streams and main stream).

use std::cmp::Ordering;

use super::anomaly::kernel;
use super::table::{cmp_f64, order_rows, page};
use crate::analysis::anomaly::{AnomalyResult, BubbleResult};
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::analysis::host_evidence::{Label, INPUT_OVERLAP_MIN};
use crate::analysis::launch_timing::Timing;
use crate::base::units::{ns_to_ms, ns_to_us};
use crate::model::kernels::KernelTable;
use crate::protocol::anomaly::{
    BubbleColumn, BubbleDetailDto, BubblePage, BubbleQuery, BubbleRowDto,
};

/// One window as a list row.
pub fn row(r: &AnomalyResult, index: usize) -> Option<BubbleRowDto> {
    let b = r.bubbles.get(index)?;
    let w = &b.window;
    Some(BubbleRowDto {
        index: index as u32,
        bubble_id: w.bubble_id.clone(),
        scope: w.scope.as_str().into(),
        step_id: w
            .step
            .and_then(|s| r.steps.get(s))
            .map(|s| s.step_id.clone())
            .unwrap_or_else(|| "global".into()),
        step: w.step.map(|s| s as u32),
        start_us: ns_to_us(w.interval.start_ns),
        end_us: ns_to_us(w.interval.end_ns),
        duration_ms: ns_to_ms(w.interval.len_ns()),
        host_ratio: b.evidence.host,
        sync_ratio: b.evidence.sync,
        comm_ratio: b.evidence.comm,
        labels: b.labels.iter().map(|l| l.as_str().to_string()).collect(),
        significant: w.significant,
        structure_id: b.structure_id.clone(),
        between_structures: b.between_structures,
        tags: b.tags.iter().map(|t| t.as_str().to_string()).collect(),
    })
}

fn key(b: &BubbleResult, col: BubbleColumn) -> f64 {
    let ratio = |x: Option<f64>| x.unwrap_or(-1.0);
    match col {
        BubbleColumn::Order => 0.0,
        BubbleColumn::Start => b.window.interval.start_ns as f64,
        BubbleColumn::Duration => b.window.interval.len_ns() as f64,
        BubbleColumn::Scope => b.window.scope as u8 as f64,
        BubbleColumn::Host => ratio(b.evidence.host),
        BubbleColumn::Sync => ratio(b.evidence.sync),
        BubbleColumn::Comm => ratio(b.evidence.comm),
    }
}

/// A page of the bubble list. Sorting is stable (ties keep output order); `label` keeps
/// windows whose `candidate_labels` contain it, `scope` windows of that scope, `step` windows
/// of that step.
pub fn bubble_page(r: &AnomalyResult, q: &BubbleQuery) -> BubblePage {
    let keep = |i: u32| {
        let b = &r.bubbles[i as usize];
        (q.label.is_empty() || b.labels.iter().any(|l| l.as_str() == q.label))
            && (q.scope.is_empty() || b.window.scope.as_str() == q.scope)
            && q.step.is_none_or(|s| b.window.step == Some(s as usize))
    };
    let col = q.sort;
    let cmp = move |a: u32, b: u32| -> Ordering {
        cmp_f64(
            key(&r.bubbles[a as usize], col),
            key(&r.bubbles[b as usize], col),
        )
    };
    let sorter: Option<&dyn Fn(u32, u32) -> Ordering> = match col {
        BubbleColumn::Order => None,
        _ => Some(&cmp),
    };
    let order = order_rows(r.bubbles.len(), keep, sorter, q.descending);
    let rows = page(&order, q.offset, q.limit)
        .iter()
        .filter_map(|&i| row(r, i as usize))
        .collect();
    BubblePage {
        rank: q.rank,
        total: r.bubbles.len() as u32,
        matching: order.len() as u32,
        offset: q.offset.min(order.len() as u32),
        rows,
    }
}

fn fmt_ratio(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.3}"))
        .unwrap_or_else(|| "null (counts as 0)".into())
}

/// Why each label was given: the §5.8 rule with the window's numbers and the thresholds.
pub fn label_reasons(b: &BubbleResult, cfg: &AnomalyConfig) -> Vec<String> {
    let e = &b.evidence;
    let boundary = b.window.capture_boundary;
    let launch = b.next_launch.map(|n| {
        let ms = |ns: i64| format!("{:.3} ms", ns_to_ms(ns));
        match n.timing {
            Timing::LateHostBound => format!(
                "next kernel launched {} after the device went idle: late launch (host-bound)",
                ms(n.lead_ns)
            ),
            Timing::EarlyQueueOrDependency => format!(
                "next kernel launched {} before the device went idle: early launch (queued; waiting on a dependency, another stream or the launch queue)",
                ms(-n.lead_ns)
            ),
        }
    });
    let mut out: Vec<String> = b.labels
        .iter()
        .map(|l| match l {
            Label::SyncOrH2d => format!(
                "{}: sync/copy marker overlap {} ≥ {}",
                l.as_str(),
                fmt_ratio(e.sync),
                cfg.sync_overlap_min
            ),
            Label::CommWait => format!(
                "{}: comm marker overlap {} ≥ {}",
                l.as_str(),
                fmt_ratio(e.comm),
                cfg.comm_overlap_min
            ),
            Label::UntracedHostBlocking => format!(
                "{}: host coverage {} < {}",
                l.as_str(),
                fmt_ratio(e.host),
                cfg.host_untraced_max
            ),
            Label::HostLaunchLag => format!(
                "{}: no direct evidence and host coverage {} ≥ {}",
                l.as_str(),
                fmt_ratio(e.host),
                cfg.host_launch_lag_min
            ),
            Label::PythonSerializationOrLock => format!(
                "{}: host coverage {} in [{}, {}) and host parallelism {} < {}",
                l.as_str(),
                fmt_ratio(e.host),
                cfg.host_untraced_max,
                cfg.host_launch_lag_min,
                fmt_ratio(e.hint),
                cfg.host_parallelism_max
            ),
            Label::InsufficientEvidence if boundary => format!(
                "{}: the window touches the capture boundary, host-side labels are not given there (the host events before the capture are unknown)",
                l.as_str()
            ),
            Label::InsufficientEvidence => format!(
                "{}: host coverage {} in [{}, {}) and no host parallelism below {}",
                l.as_str(),
                fmt_ratio(e.host),
                cfg.host_untraced_max,
                cfg.host_launch_lag_min,
                cfg.host_parallelism_max
            ),
        })
        .collect();
    // The input class's finding beside the labels (§5.7.1): not a label of its own.
    if e.input.is_some_and(|x| x >= INPUT_OVERLAP_MIN) {
        out.push(format!(
            "input pipeline: the DataLoader's next() (enumerate(DataLoader)#…) covers {} of the window (≥ {INPUT_OVERLAP_MIN}): the step waited for its next batch",
            fmt_ratio(e.input)
        ));
    }
    out.extend(launch);
    out
}

/// Window `index` in full, `None` when there is no such window.
pub fn bubble_detail(
    rank: u32,
    k: &KernelTable,
    r: &AnomalyResult,
    index: usize,
    cfg: &AnomalyConfig,
) -> Option<BubbleDetailDto> {
    let b = r.bubbles.get(index)?;
    let w = &b.window;
    let kern = |i: Option<usize>| i.filter(|&i| i < k.len()).map(|i| kernel(k, i));
    let text = |i: usize| k.evidence_text(i);
    let mut evidence_ops = Vec::new();
    if let Some(i) = w.before.filter(|&i| i < k.len()) {
        evidence_ops.push(format!("before: {}", text(i)));
    }
    if let Some(i) = w.after.filter(|&i| i < k.len()) {
        evidence_ops.push(format!("after: {}", text(i)));
    }
    Some(BubbleDetailDto {
        rank,
        bubble: row(r, index)?,
        step_window_us: w
            .step
            .and_then(|s| r.steps.get(s))
            .map(|s| (ns_to_us(s.window.start_ns), ns_to_us(s.window.end_ns))),
        before: kern(w.before),
        after: kern(w.after),
        before_main: kern(w.before_main),
        after_main: kern(w.after_main),
        evidence_ops,
        host_parallelism_hint: b.evidence.hint,
        h2d_flow_count: b.evidence.h2d_flow_count as u64,
        reasons: label_reasons(b, cfg),
    })
}
