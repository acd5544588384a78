//! CSV exports of the anomaly analysis (cSV of steps and bubbles): one line per
//! step of every rank ([`write_steps`]; the `steps[]` metrics of anomaly.md §6.3 under their
//! spec names) and one line per emitted bubble window ([`write_bubbles`]; §6.4 fields).
//! Formatting only. Floats are Python `repr` ([`super::float`]), nulls empty cells, lists
//! joined by `;`. Quoting by the `csv` crate (minimal), line terminator `\n`.

use std::io::{self, Write};

use super::float::{exact_number_text, py_repr};
use crate::analysis::anomaly::AnomalyResult;
use crate::base::units::ns_to_ms;
use crate::model::kernels::KernelTable;

/// One rank to export: rank id (empty cell when unknown), rank folder, result.
pub struct CsvRank<'a> {
    /// Rank id.
    pub rank_id: Option<i64>,
    /// Rank folder path.
    pub rank_dir: &'a str,
    /// The analysis result.
    pub result: &'a AnomalyResult,
    /// Its kernels (for the `before_kernel` / `after_kernel` texts).
    pub kernels: &'a KernelTable,
}

/// Header of [`write_steps`].
pub const STEP_COLUMNS: &[&str] = &[
    "rank_id",
    "rank_dir",
    "step_id",
    "group_id",
    "start_us",
    "end_us",
    "service_ms",
    "device_busy_union_ms",
    "underfeed_ms",
    "underfeed_ratio",
    "prelaunch_gap_ms",
    "tail_gap_ms",
    "internal_bubble_total_ms",
    "largest_internal_bubble_ms",
    "bubble_count",
    "total_kernel_count",
    "ai_core_count",
    "ai_cpu_count",
    "hccl_count",
    "other_count",
    "kernel_duration_sum_ms",
    "kernel_wait_sum_ms",
    "stream_count",
    "main_stream",
    "wall_ms",
    "busy_union_ms",
    "kernel_sum_ms",
    "total_cost_ms",
    "small_op_count",
    "small_op_verdict",
    "truncated",
    "tags",
    "labels",
];

/// Header of [`write_bubbles`].
pub const BUBBLE_COLUMNS: &[&str] = &[
    "rank_id",
    "rank_dir",
    "bubble_id",
    "scope",
    "step_id",
    "group_id",
    "start_us",
    "end_us",
    "duration_ms",
    "host_visible_coverage_ratio",
    "sync_marker_overlap_ratio",
    "comm_marker_overlap_ratio",
    "candidate_labels",
    "significant",
    "structure_id",
    "between_structures",
    "tags",
    "before_kernel",
    "after_kernel",
];

fn opt(x: Option<f64>) -> String {
    x.map(py_repr).unwrap_or_default()
}

fn csv_err(e: csv::Error) -> io::Error {
    io::Error::other(e.to_string())
}

fn writer(out: &mut dyn Write) -> csv::Writer<&mut dyn Write> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(out)
}

/// Writes the header line `columns` ([`STEP_COLUMNS`] or [`BUBBLE_COLUMNS`]).
///
/// Errors: only those of `out`.
pub fn write_header(columns: &[&str], out: &mut dyn Write) -> io::Result<()> {
    let mut w = writer(out);
    w.write_record(columns).map_err(csv_err)?;
    w.flush()
}

/// Writes the steps of `ranks`, rank by rank, steps in time order.
///
/// Errors: only those of `out`.
pub fn write_steps(ranks: &[CsvRank<'_>], out: &mut dyn Write) -> io::Result<()> {
    write_header(STEP_COLUMNS, out)?;
    for rk in ranks {
        write_rank_steps(rk, out)?;
    }
    Ok(())
}

/// Writes the step lines of one rank (no header): [`write_steps`] is the header and these
/// lines rank by rank (the page's gathered export joins them from several workers).
///
/// Errors: only those of `out`.
pub fn write_rank_steps(rk: &CsvRank<'_>, out: &mut dyn Write) -> io::Result<()> {
    let mut w = writer(out);
    {
        let rid = rk.rank_id.map(|x| x.to_string()).unwrap_or_default();
        for s in &rk.result.steps {
            let m = &s.metrics;
            let inv = &s.inventory;
            let p = &s.perspectives;
            let rec = [
                rid.clone(),
                rk.rank_dir.to_string(),
                s.step_id.clone(),
                s.group_id.clone(),
                exact_number_text(s.window.start_ns, 3),
                exact_number_text(s.window.end_ns, 3),
                py_repr(ns_to_ms(m.service_ns)),
                py_repr(ns_to_ms(m.busy_ns)),
                py_repr(ns_to_ms(m.underfeed_ns)),
                py_repr(m.underfeed_ratio),
                py_repr(ns_to_ms(m.prelaunch_ns)),
                py_repr(ns_to_ms(m.tail_ns)),
                py_repr(ns_to_ms(m.internal_total_ns())),
                py_repr(ns_to_ms(m.largest_internal_ns())),
                m.bubbles.len().to_string(),
                inv.total_kernel_count.to_string(),
                inv.ai_core_count.to_string(),
                inv.ai_cpu_count.to_string(),
                inv.hccl_count.to_string(),
                inv.other_count.to_string(),
                py_repr(ns_to_ms(inv.kernel_duration_sum_ns)),
                py_repr(ns_to_ms(inv.kernel_wait_sum_ns)),
                inv.distinct_streams.len().to_string(),
                s.main_stream.clone().unwrap_or_default(),
                py_repr(ns_to_ms(p.wall_ns)),
                py_repr(ns_to_ms(p.busy_ns)),
                py_repr(ns_to_ms(p.kernel_sum_ns)),
                py_repr(ns_to_ms(p.total_cost_ns)),
                s.small_ops.count.to_string(),
                s.small_ops.verdict.to_string(),
                s.truncated.to_string(),
                s.tags
                    .iter()
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join(";"),
                s.labels
                    .iter()
                    .map(|l| l.as_str())
                    .collect::<Vec<_>>()
                    .join(";"),
            ];
            w.write_record(&rec).map_err(csv_err)?;
        }
    }
    w.flush()
}

/// Writes the emitted bubble windows of `ranks` in output order (§6.1).
///
/// Errors: only those of `out`.
pub fn write_bubbles(ranks: &[CsvRank<'_>], out: &mut dyn Write) -> io::Result<()> {
    write_header(BUBBLE_COLUMNS, out)?;
    for rk in ranks {
        write_rank_bubbles(rk, out)?;
    }
    Ok(())
}

/// Writes the bubble lines of one rank (no header), as [`write_rank_steps`] for steps.
///
/// Errors: only those of `out`.
pub fn write_rank_bubbles(rk: &CsvRank<'_>, out: &mut dyn Write) -> io::Result<()> {
    let mut w = writer(out);
    {
        let (r, k) = (rk.result, rk.kernels);
        let rid = rk.rank_id.map(|x| x.to_string()).unwrap_or_default();
        let kt = |i: Option<usize>| {
            i.filter(|&i| i < k.len())
                .map(|i| k.evidence_text(i))
                .unwrap_or_default()
        };
        for b in &r.bubbles {
            let win = &b.window;
            let step = win.step.and_then(|s| r.steps.get(s));
            let rec = [
                rid.clone(),
                rk.rank_dir.to_string(),
                win.bubble_id.clone(),
                win.scope.as_str().to_string(),
                step.map(|s| s.step_id.clone())
                    .unwrap_or_else(|| "global".into()),
                step.map(|s| s.group_id.clone()).unwrap_or_default(),
                exact_number_text(win.interval.start_ns, 3),
                exact_number_text(win.interval.end_ns, 3),
                py_repr(ns_to_ms(win.interval.len_ns())),
                opt(b.evidence.host),
                opt(b.evidence.sync),
                opt(b.evidence.comm),
                b.labels
                    .iter()
                    .map(|l| l.as_str())
                    .collect::<Vec<_>>()
                    .join(";"),
                win.significant.to_string(),
                b.structure_id.clone().unwrap_or_default(),
                b.between_structures.to_string(),
                b.tags
                    .iter()
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join(";"),
                kt(win.before),
                kt(win.after),
            ];
            w.write_record(&rec).map_err(csv_err)?;
        }
    }
    w.flush()
}
