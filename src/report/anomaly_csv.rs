//! CSV exports of the anomaly analysis (cSV of steps and bubbles): one line per
//! step of every rank ([`write_steps`]; the `steps[]` metrics of anomaly.md §6.3 under their
//! spec names) and one line per emitted bubble window ([`write_bubbles`]; §6.4 fields).
//! Formatting only. Floats are Python `repr` ([`super::float`]), nulls empty cells, lists
//! joined by `;`. Quoting by the `csv` crate (minimal), line terminator `\n`.

use std::io::{self, Write};

use std::borrow::Cow;

use super::frame::{Cell, Frame, Kind};
use super::table_csv::{frame_of, write_csv, write_lines};
use crate::analysis::anomaly::{AnomalyResult, BubbleResult, StepResult};
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

/// The frame types of [`STEP_COLUMNS`], in order.
pub const STEP_KINDS: &[Kind] = &[
    Kind::I64,
    Kind::Text,
    Kind::Text,
    Kind::Text,
    Kind::TimeNs,
    Kind::TimeNs,
    Kind::F64,
    Kind::F64,
    Kind::F64,
    Kind::F64,
    Kind::F64,
    Kind::F64,
    Kind::F64,
    Kind::F64,
    Kind::I64,
    Kind::I64,
    Kind::I64,
    Kind::I64,
    Kind::I64,
    Kind::I64,
    Kind::F64,
    Kind::F64,
    Kind::I64,
    Kind::Text,
    Kind::F64,
    Kind::F64,
    Kind::F64,
    Kind::F64,
    Kind::I64,
    Kind::Text,
    Kind::Bool,
    Kind::TextList,
    Kind::TextList,
];

/// The frame types of [`BUBBLE_COLUMNS`], in order.
pub const BUBBLE_KINDS: &[Kind] = &[
    Kind::I64,
    Kind::Text,
    Kind::Text,
    Kind::Text,
    Kind::Text,
    Kind::Text,
    Kind::TimeNs,
    Kind::TimeNs,
    Kind::F64,
    Kind::F64,
    Kind::F64,
    Kind::F64,
    Kind::TextList,
    Kind::Bool,
    Kind::Text,
    Kind::Bool,
    Kind::TextList,
    Kind::Text,
    Kind::Text,
];

fn opt(x: Option<f64>) -> Cell<'static> {
    x.map(Cell::F64).unwrap_or(Cell::Null)
}

fn text<'a>(s: &'a str) -> Cell<'a> {
    Cell::Str(Cow::Borrowed(s))
}

fn count(n: usize) -> Cell<'static> {
    Cell::I64(n as i64)
}

fn ms(ns: i64) -> Cell<'static> {
    Cell::F64(ns_to_ms(ns))
}

/// The cells of one step line ([`STEP_COLUMNS`], types [`STEP_KINDS`]).
pub fn step_cells<'a>(rk: &CsvRank<'a>, s: &'a StepResult) -> Vec<Cell<'a>> {
    let m = &s.metrics;
    let inv = &s.inventory;
    let p = &s.perspectives;
    vec![
        rk.rank_id.map(Cell::I64).unwrap_or(Cell::Null),
        text(rk.rank_dir),
        text(&s.step_id),
        text(&s.group_id),
        Cell::Exact(s.window.start_ns, 3),
        Cell::Exact(s.window.end_ns, 3),
        ms(m.service_ns),
        ms(m.busy_ns),
        ms(m.underfeed_ns),
        Cell::F64(m.underfeed_ratio),
        ms(m.prelaunch_ns),
        ms(m.tail_ns),
        ms(m.internal_total_ns()),
        ms(m.largest_internal_ns()),
        count(m.bubble_count()),
        count(inv.total_kernel_count),
        count(inv.ai_core_count),
        count(inv.ai_cpu_count),
        count(inv.hccl_count),
        count(inv.other_count),
        ms(inv.kernel_duration_sum_ns),
        ms(inv.kernel_wait_sum_ns),
        count(inv.distinct_streams.len()),
        s.main_stream.as_deref().map(text).unwrap_or(Cell::Null),
        ms(p.wall_ns),
        ms(p.busy_ns),
        ms(p.kernel_sum_ns),
        ms(p.total_cost_ns),
        count(s.small_ops.count),
        Cell::Str(Cow::Owned(s.small_ops.verdict.to_string())),
        Cell::Bool(s.truncated),
        Cell::List(s.tags.iter().map(|t| Cow::Borrowed(t.as_str())).collect()),
        Cell::List(s.labels.iter().map(|l| Cow::Borrowed(l.as_str())).collect()),
    ]
}

/// The cells of one bubble line ([`BUBBLE_COLUMNS`], types [`BUBBLE_KINDS`]).
pub fn bubble_cells<'a>(rk: &CsvRank<'a>, b: &'a BubbleResult) -> Vec<Cell<'a>> {
    let (r, k) = (rk.result, rk.kernels);
    let kt = |i: Option<usize>| {
        Cell::Str(Cow::Owned(
            i.filter(|&i| i < k.len())
                .map(|i| k.evidence_text(i))
                .unwrap_or_default(),
        ))
    };
    let win = &b.window;
    let step = win.step.and_then(|s| r.steps.get(s));
    vec![
        rk.rank_id.map(Cell::I64).unwrap_or(Cell::Null),
        text(rk.rank_dir),
        text(&win.bubble_id),
        text(win.scope.as_str()),
        step.map(|s| text(&s.step_id)).unwrap_or(text("global")),
        step.map(|s| text(&s.group_id)).unwrap_or(Cell::Null),
        Cell::Exact(win.interval.start_ns, 3),
        Cell::Exact(win.interval.end_ns, 3),
        ms(win.interval.len_ns()),
        opt(b.evidence.host),
        opt(b.evidence.sync),
        opt(b.evidence.comm),
        Cell::List(b.labels.iter().map(|l| Cow::Borrowed(l.as_str())).collect()),
        Cell::Bool(win.significant),
        b.structure_id.as_deref().map(text).unwrap_or(Cell::Null),
        Cell::Bool(b.between_structures),
        Cell::List(b.tags.iter().map(|t| Cow::Borrowed(t.as_str())).collect()),
        kt(win.before),
        kt(win.after),
    ]
}

/// Writes the header line `columns` ([`STEP_COLUMNS`] or [`BUBBLE_COLUMNS`]).
///
/// Errors: only those of `out`.
pub fn write_header(columns: &[&str], out: &mut dyn Write) -> io::Result<()> {
    write_csv(columns, std::iter::empty(), out)
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
    write_lines(rk.result.steps.iter().map(|s| step_cells(rk, s)), out)
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
    write_lines(rk.result.bubbles.iter().map(|b| bubble_cells(rk, b)), out)
}

/// `columns` with their frame types `kinds` (the two lists of one table, in the same order).
fn typed<'c>(columns: &[&'c str], kinds: &[Kind]) -> Vec<(&'c str, Kind)> {
    columns.iter().copied().zip(kinds.iter().copied()).collect()
}

/// The steps of `ranks` as a typed [`Frame`] (the lines of [`write_steps`]; docs/frames.md
/// §3.2): `start_ns` / `end_ns` integer ns, `tags` / `labels` lists.
pub fn steps_frame(ranks: &[CsvRank<'_>]) -> Frame {
    let lines = ranks
        .iter()
        .flat_map(|rk| rk.result.steps.iter().map(move |s| step_cells(rk, s)));
    frame_of(&typed(STEP_COLUMNS, STEP_KINDS), lines)
}

/// The bubbles of `ranks` as a typed [`Frame`] (the lines of [`write_bubbles`]).
pub fn bubbles_frame(ranks: &[CsvRank<'_>]) -> Frame {
    let lines = ranks
        .iter()
        .flat_map(|rk| rk.result.bubbles.iter().map(move |b| bubble_cells(rk, b)));
    frame_of(&typed(BUBBLE_COLUMNS, BUBBLE_KINDS), lines)
}
