//! The anomaly pipeline for one rank and across ranks (anomaly.md §2): finds the
//! rank's inputs in the inventory, parses them through an [`Opener`] (kernel
//! table, trace tables, communication ops, step-trace rows), applies the Level0
//! stream join and the time-base check, runs [`analysis::anomaly::analyse`],
//! and returns plain data for the CLI, the worker and the tests.

use std::collections::HashMap;
use std::ops::ControlFlow;

use crate::analysis::anomaly::cross_rank::{self, RankRow};
use crate::analysis::anomaly::{self as analysis, AnomalyResult, CaptureInfo, RankInput};
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::base::{Position, Problem, Problems, Severity};
use crate::ingest::inventory::{FileKind, Inventory, RankFile, RankFolder};
use crate::ingest::{Opener, Progress};
use crate::model::kernels::{KernelRow, KernelTable, KernelTableBuilder};
use crate::model::side_tables::{CommOp, StepTraceRow};
use crate::model::trace_events::HostEventTable;
use crate::parse::csv::{kernel_details, step_trace_time};
use crate::parse::trace_json::timeline;
use crate::parse::{communication, ParseError};
use crate::report::anomaly_json::RankMeta;

/// Problem codes of the pipeline itself.
pub mod codes {
    /// Timestamps of the kernel table and the trace are in different bases: trace not combined.
    pub const TIME_BASE: &str = "ANOM-TB-001";
    /// A file could not be parsed at all.
    pub const FILE: &str = "ANOM-FILE-001";
    /// No kernel source at all.
    pub const NO_KERNELS: &str = "ANOM-FILE-002";
    /// Level0 stream join result.
    pub const STREAM_JOIN: &str = "ANOM-KD-010";
    /// `step_trace_time.csv` cross-check disagreement.
    pub const CROSS_CHECK: &str = "ANOM-ST-002";
}

/// Progress of one rank's analysis: which file, how far.
#[derive(Clone, Debug, PartialEq)]
pub struct AnomalyProgress {
    /// Rank folder.
    pub rank_dir: String,
    /// File being read.
    pub file: String,
    /// Bytes read of it.
    pub progress: Progress,
}

/// The analysis was cancelled through the progress callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancelled;

/// Everything produced for one rank.
pub struct RankAnalysis {
    /// Identity, inputs and formatted problems for the JSON.
    pub meta: RankMeta,
    /// Folder name (for report file names).
    pub dir_name: String,
    /// Kernels (the timeline's device lanes).
    pub kernels: KernelTable,
    /// Trace tables, when read and on the kernel clock.
    pub trace: Option<HostEventTable>,
    /// Communication ops.
    pub comm_ops: Vec<CommOp>,
    /// Step-trace rows.
    pub step_trace: Vec<StepTraceRow>,
    /// The result.
    pub result: AnomalyResult,
    /// Every problem of this rank.
    pub problems: Problems,
    /// `step_trace_time.csv` cross-check lines (§13.1).
    pub cross_check: Vec<String>,
}

fn file_problem(problems: &mut Problems, e: &ParseError) {
    problems.push(Problem::new(
        Severity::Error,
        codes::FILE,
        e.position().clone(),
        format!("{:?}: file not used", e.kind()),
    ));
}

fn open_err(path: &str, e: std::io::Error) -> Problem {
    Problem::new(
        Severity::Error,
        codes::FILE,
        Position::file(path),
        format!("cannot open: {e}"),
    )
}

/// Analyses one rank folder. `on_progress` returning `Break` cancels.
pub fn analyse_rank(
    rank: &RankFolder,
    opener: &dyn Opener,
    cfg: &AnomalyConfig,
    on_progress: &mut dyn FnMut(&AnomalyProgress) -> ControlFlow<()>,
) -> Result<RankAnalysis, Cancelled> {
    let mut problems = Problems::new();
    for n in &rank.notes {
        problems.push(n.to_problem());
    }
    let mut inputs = Vec::new();
    let mut cancelled = false;
    let mut prog = |f: &RankFile, p: Progress| {
        let r = on_progress(&AnomalyProgress {
            rank_dir: rank.dir.clone(),
            file: f.path.clone(),
            progress: p,
        });
        r
    };
    // Kernel source (§1.2, §1.2.3).
    let mut builder = KernelTableBuilder::new();
    let mut info = CaptureInfo {
        record_shapes: rank.side.record_shapes,
        with_stack: rank.side.with_stack,
        profiler_level: rank.side.profiler_level.clone(),
        ..Default::default()
    };
    let mut has_stream_col = false;
    let mut aggregate_only = false;
    let kernel_files: Vec<RankFile> = match rank.file(FileKind::KernelDetails) {
        Some(f) => vec![f.clone()],
        None => {
            let mut v: Vec<RankFile> = rank.files_of(FileKind::OpSummary).cloned().collect();
            v.sort_by_key(|f| slice_index(&f.rel));
            info.op_summary_only = !v.is_empty();
            v
        }
    };
    for f in &kernel_files {
        match opener.open(&f.path) {
            Err(e) => problems.push(open_err(&f.path, e)),
            Ok(r) => {
                inputs.push(f.path.clone());
                let res = kernel_details::read(
                    r,
                    &f.path,
                    Some(f.size),
                    &mut builder,
                    &mut problems,
                    &mut |p| {
                        let c = prog(f, p);
                        cancelled |= c.is_break();
                        c
                    },
                );
                match res {
                    Ok(i) => {
                        has_stream_col |= i.has_stream;
                        aggregate_only |= i.aggregate_only;
                    }
                    Err(e) => file_problem(&mut problems, &e),
                }
            }
        }
        if cancelled {
            return Err(Cancelled);
        }
    }
    // Trace (§1.3).
    let mut trace = None;
    if let Some(f) = rank.file(FileKind::TraceView) {
        match opener.open(&f.path) {
            Err(e) => problems.push(open_err(&f.path, e)),
            Ok(r) => {
                inputs.push(f.path.clone());
                let res = timeline::read(
                    r,
                    &f.path,
                    Some(f.size),
                    &cfg.custom_step_prefix,
                    &mut |p| {
                        let c = prog(f, p);
                        cancelled |= c.is_break();
                        c
                    },
                );
                match res {
                    Ok((t, ti)) => {
                        if let Some(at) = ti.scan.truncated_at {
                            problems.push(Problem::new(
                                Severity::Warning,
                                "ANOM-TV-001",
                                Position::file(f.path.as_str()).at_byte(at),
                                format!("trace ends inside the event array (truncated export): {} events used", ti.scan.events),
                            ));
                        }
                        let at = Position::file(f.path.as_str());
                        let first = ti.out_of_range.first_at.first().copied().unwrap_or(0);
                        let what = format!("events dropped: ts or ts + dur outside the representable time range ({}); count and byte offsets", crate::base::arith::Tally::time_limit_text());
                        problems.push_some(ti.out_of_range.problem(
                            "ANOM-TV-010",
                            at.at_byte(first),
                            &what,
                        ));
                        trace = Some(t);
                    }
                    Err(e) => file_problem(&mut problems, &e),
                }
            }
        }
        if cancelled {
            return Err(Cancelled);
        }
    }
    // Kernels from the trace's device lanes when no kernel CSV exists.
    if kernel_files.is_empty() {
        if let Some(t) = &trace {
            info.kernels_from_trace = true;
            let mut row = KernelRow::default();
            for d in &t.device_events {
                row.name = t.text(d.name).to_string();
                row.core_raw = if d.hccl_lane {
                    "HCCL".into()
                } else {
                    String::new()
                };
                row.start_ns = d.ts_ns;
                row.dur_ns = d.dur_ns;
                row.stream = if d.hccl_lane {
                    String::new()
                } else {
                    t.text(d.stream).to_string()
                };
                builder.push(&row);
            }
        } else {
            problems.push(Problem::new(
                Severity::Error,
                codes::NO_KERNELS,
                Position::file(rank.label()),
                "no kernel_details.csv, no op_summary*.csv and no trace_view.json device lanes: bubble analysis unavailable",
            ));
        }
    }
    let what = format!("kernels dropped: start or end outside the representable time range ({}); count and source rows", crate::base::arith::Tally::time_limit_text());
    problems.push_some(builder.rejected().problem(
        "ANOM-KD-011",
        Position::file(rank.label()),
        &what,
    ));
    // Time bases (Bad input: epoch vs monotonic) — refuse to combine clearly.
    if let Some(t) = &trace {
        if let (Some(k0), Some(t0)) = (builder_min_start(&builder, t), trace_min(t)) {
            if (k0 - t0).abs() > 86_400 * 1_000_000_000 {
                problems.push(Problem::new(
                    Severity::Error,
                    codes::TIME_BASE,
                    Position::file(rank.file(FileKind::TraceView).map(|f| f.path.as_str()).unwrap_or("")),
                    format!(
                        "timestamps in different bases: kernels start at {} µs, trace events at {} µs (more than a day apart: epoch vs monotonic clock); trace_view.json is not combined (no markers, no host evidence)",
                        k0 / 1000,
                        t0 / 1000
                    ),
                ));
                trace = None;
            }
        }
    }
    // Level0 stream join (§1.2.4).
    if !has_stream_col && !kernel_files.is_empty() {
        let missing = builder.missing_streams();
        if let Some(t) = &trace {
            let mut map: HashMap<(u32, i64), u32> = HashMap::new();
            for d in t.device_events.iter().filter(|d| !d.hccl_lane) {
                map.insert((d.name, d.ts_ns), d.stream);
            }
            let mut by_name: HashMap<&str, u32> = HashMap::new();
            for id in 0..t.text_count() as u32 {
                by_name.insert(t.text(id), id);
            }
            let joined = builder.join_streams(|name, ts| {
                let id = by_name.get(name)?;
                map.get(&(*id, ts)).map(|s| t.text(*s).to_string())
            });
            problems.push(Problem::new(
                Severity::Info,
                codes::STREAM_JOIN,
                Position::file(kernel_files[0].path.as_str()),
                format!("no Stream ID column: {joined} of {missing} non-communication rows joined to trace device lanes by (name, ts)"),
            ));
        }
    }
    // Side inputs.
    let mut comm_ops = Vec::new();
    if let Some(f) = rank.file(FileKind::Communication) {
        match opener.open(&f.path) {
            Err(e) => problems.push(open_err(&f.path, e)),
            Ok(r) => match communication::read(r, &f.path) {
                Ok(v) => {
                    inputs.push(f.path.clone());
                    info.comm_file = true;
                    comm_ops = v;
                }
                Err(e) => file_problem(&mut problems, &e),
            },
        }
    }
    let mut step_trace = Vec::new();
    if let Some(f) = rank.file(FileKind::StepTraceTime) {
        match opener.open(&f.path) {
            Err(e) => problems.push(open_err(&f.path, e)),
            Ok(r) => match step_trace_time::read(r, &f.path, &mut problems) {
                Ok(v) => {
                    inputs.push(f.path.clone());
                    step_trace = v;
                }
                Err(e) => file_problem(&mut problems, &e),
            },
        }
    }
    let kernels = if aggregate_only {
        KernelTableBuilder::new().finish()
    } else {
        builder.finish()
    };
    let input = RankInput {
        kernels: &kernels,
        trace: trace.as_ref(),
        comm_ops: &comm_ops,
        step_trace: &step_trace,
        info,
    };
    let mut result = analysis::analyse(&input, cfg);
    if aggregate_only {
        result.limitations.push("op_summary has aggregate columns only: op-level statistics only, bubble analysis unavailable".into());
    }
    let cross_check = cross_check(&result, &kernels, &step_trace, &mut problems);
    let dir_name = rank.dir.rsplit('/').next().unwrap_or("").to_string();
    let meta = RankMeta {
        rank_id: rank.rank_id,
        role: Some(rank.role.clone()).filter(|r| !r.is_empty()),
        rank_dir: rank.dir.clone(),
        inputs,
        problems: problems
            .kept()
            .iter()
            .map(|p| format!("{} [{}] {}", p.at, p.code, p.message))
            .collect(),
    };
    Ok(RankAnalysis {
        meta,
        dir_name,
        kernels,
        trace,
        comm_ops,
        step_trace,
        result,
        problems,
        cross_check,
    })
}

fn slice_index(rel: &str) -> (u64, String) {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let k = name
        .strip_prefix("op_summary_slice_")
        .and_then(|r| r.split('_').next())
        .and_then(|d| d.parse().ok())
        .unwrap_or(0);
    (k, rel.to_string())
}

fn builder_min_start(b: &KernelTableBuilder, t: &HostEventTable) -> Option<i64> {
    if b.is_empty() {
        return t.device_events.iter().map(|d| d.ts_ns).min();
    }
    b.min_start_ns()
}

fn trace_min(t: &HostEventTable) -> Option<i64> {
    let host = t.events().first().map(|e| e.start_ns);
    let mk = t.markers.iter().map(|m| m.ts_ns).min();
    match (host, mk) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// §13.1 cross-check of marker steps against `step_trace_time.csv` (`Preparing`, `Stage`, `Free`).
fn cross_check(
    r: &AnomalyResult,
    k: &KernelTable,
    rows: &[StepTraceRow],
    problems: &mut Problems,
) -> Vec<String> {
    let mut out = Vec::new();
    for s in &r.steps {
        let num = s.step_id.rsplit('#').next().unwrap_or("");
        let Some(row) = rows.iter().find(|x| x.step.trim() == num) else {
            continue;
        };
        let range = s.kernels.clone();
        if range.is_empty() {
            continue;
        }
        let first = k.start_ns()[range.start];
        let last_end = range.clone().map(|i| k.end_ns(i)).max().unwrap_or(first);
        let us = |ns: i64| ns as f64 / 1000.0;
        if let Some(p) = row.preparing_ns {
            let ours = first - s.window.start_ns;
            out.push(format!(
                "{}: Preparing {} µs vs prelaunch to first kernel {} µs",
                s.step_id,
                us(p),
                us(ours)
            ));
            if (p - ours).abs() > 1_000 {
                problems.push(Problem::new(
                    Severity::Warning,
                    codes::CROSS_CHECK,
                    Position::file("step_trace_time.csv").at_line(row.line),
                    format!(
                        "Preparing {} µs differs from the marker-to-first-kernel gap {} µs",
                        us(p),
                        us(ours)
                    ),
                ));
            }
        }
        if let Some(st) = row.stage_ns {
            out.push(format!(
                "{}: Stage {} µs vs first-to-last kernel {} µs",
                s.step_id,
                us(st),
                us(last_end - first)
            ));
        }
        if let Some(f) = row.free_ns {
            out.push(format!(
                "{}: Free {} µs vs internal bubbles {} µs",
                s.step_id,
                us(f),
                us(s.metrics.internal_total_ns())
            ));
        }
    }
    out
}

/// Analyses every rank of the inventory, in inventory order; ranks that cannot
/// run the anomaly analysis are skipped with their readiness reasons as problems.
/// Returns the ranks and the cross-rank table (§13.4).
pub fn analyse_all(
    inv: &Inventory,
    opener: &dyn Opener,
    cfg: &AnomalyConfig,
    on_progress: &mut dyn FnMut(&AnomalyProgress) -> ControlFlow<()>,
) -> Result<(Vec<RankAnalysis>, Vec<RankRow>), Cancelled> {
    let mut out = Vec::new();
    for rank in &inv.ranks {
        let usable = [
            FileKind::KernelDetails,
            FileKind::OpSummary,
            FileKind::TraceView,
        ]
        .iter()
        .any(|k| rank.file(*k).is_some());
        if !usable {
            continue;
        }
        out.push(analyse_rank(rank, opener, cfg, on_progress)?);
    }
    let pairs: Vec<(i64, &AnomalyResult)> = out
        .iter()
        .enumerate()
        .map(|(i, r)| (r.meta.rank_id.unwrap_or(i as i64), &r.result))
        .collect();
    let rows = cross_rank::compare(&pairs, cfg);
    Ok((out, rows))
}

/// The per-rank report files of `proflens anomaly --report-dir` (§1.6): for rank `i` of
/// `ranks`, `(anomaly report name, anomaly report text, architecture report name,
/// architecture report text)`. `<base>` is the dropped root folder (else the rank folder); the
/// `_rank<N>` suffix is added only when more than one rank was analysed. The CLI and the
/// page's export both call this, so the bytes are identical.
pub fn rank_reports(
    inv: &Inventory,
    ranks: &[RankAnalysis],
    cross: &[RankRow],
    cfg: &AnomalyConfig,
    i: usize,
) -> Option<(String, String, String, String)> {
    let r = ranks.get(i)?;
    let root = inv.root_label();
    let base = if root == "the dropped files" || root.is_empty() {
        r.dir_name.clone()
    } else {
        root
    };
    let suffix = if ranks.len() > 1 {
        format!("_rank{}", r.meta.rank_id.unwrap_or(i as i64))
    } else {
        String::new()
    };
    let md = crate::report::anomaly_md::render(
        &r.kernels,
        &r.result,
        &r.meta,
        &r.cross_check,
        cross,
        cfg,
    );
    let facts = crate::analysis::architecture::analyse(&r.kernels, cfg);
    let arch =
        crate::report::arch_md::render(&r.kernels, &facts, &r.result, &r.meta, &r.comm_ops, &base);
    Some((
        format!("anomaly_report_{base}{suffix}.md"),
        md,
        format!("model_architecture_report_{base}{suffix}.md"),
        arch,
    ))
}

/// Writes the JSON array over `ranks` exactly as `proflens anomaly` prints it (pretty, then
/// one `\n`), streamed to `w`.
///
/// Errors: those of `w`.
pub fn write_json(
    w: &mut dyn std::io::Write,
    ranks: &[RankAnalysis],
    cfg: &AnomalyConfig,
) -> std::io::Result<()> {
    let json: Vec<_> = ranks
        .iter()
        .map(|r| crate::report::anomaly_json::build(&r.kernels, &r.result, &r.meta, cfg))
        .collect();
    serde_json::to_writer_pretty(&mut *w, &json).map_err(std::io::Error::other)?;
    w.write_all(b"\n")?;
    w.flush()
}
