//! The anomaly pipeline for one rank and across ranks (anomaly.md §2): finds the
//! rank's inputs in the inventory, parses them through an [`Opener`] (kernel
//! table, trace tables, communication ops, step-trace rows), applies the Level0
//! stream join and the time-base check, runs [`analysis::anomaly::analyse`],
//! and returns plain data for the CLI, the worker and the tests.

use std::ops::ControlFlow;

use crate::analysis::anomaly::{self as analysis, joins, AnomalyResult, CaptureInfo, RankInput};
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::base::{Position, Problem, Problems, Severity};
use crate::ingest::inventory::{FileKind, RankFile, RankFolder};
use crate::ingest::{Opener, Progress};
use crate::model::kernels::{KernelTable, KernelTableBuilder};
use crate::model::side_tables::{CommOp, StepTraceRow};
use crate::model::trace_events::HostEventTable;
use crate::parse::csv::{kernel_details, step_trace_time};
use crate::parse::trace_json::diag;
use crate::parse::trace_json::timeline::{TimelineBuilder, TimelineInfo};
use crate::parse::{communication, ParseError};
use crate::report::anomaly_json::RankMeta;

/// Problem codes of the pipeline itself.
pub mod codes {
    pub use crate::analysis::anomaly::joins::codes::{CROSS_CHECK, STREAM_JOIN, TIME_BASE};
    /// A file could not be parsed at all.
    pub const FILE: &str = "ANOM-FILE-001";
    /// No kernel source at all.
    pub const NO_KERNELS: &str = "ANOM-FILE-002";
    /// Kernels with aggregate columns only: no intervals (info, formats.md §11.1).
    pub const AGGREGATE_ONLY: &str = "ANOM-FILE-003";
}

/// What a rank without device kernels lacks and how to capture it (problem `ANOM-FILE-002`,
/// the steps tab's empty state and `proflens anomaly`'s stderr say the same).
pub const NO_KERNELS_HOW: &str = "no device kernels (kernel_details.csv, op_summary*.csv or device events in trace_view.json): steps and bubbles cannot be computed. Capture with torch_npu.profiler with activities including ProfilerActivity.NPU, profiler_level Level0 or higher and export_type text, so that ASCEND_PROFILER_OUTPUT/kernel_details.csv is written";

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
    /// The whole GPU trace of a GPU rank (`engine::read::gpu`; `None` on Ascend ranks): device ops
    /// with correlation ids, launches, flows, memory counters, for the GPU views.
    pub gpu: Option<std::sync::Arc<crate::model::gpu::GpuTrace>>,
    /// The GPU analyses of `gpu` over the steps of `result` (`analysis::gpu_rank`), computed
    /// at their first use and kept: the JSON's `gpu` block, the report's GPU section and the
    /// page's GPU panel all read them (`engine::export::gpu_report::rank_summary`).
    pub gpu_summary: std::sync::OnceLock<crate::analysis::gpu_rank::GpuSummary>,
    /// The other ranks of a merged multi-rank trace split in the same read (gpu-traces.md §6;
    /// this one is its first rank); empty otherwise. [`crate::engine::Store::anomaly_ranks`]
    /// lists them after this one.
    pub parts: Vec<RankAnalysis>,
}

fn file_problem(problems: &mut Problems, e: &ParseError) {
    problems.push(Problem::new(
        Severity::Error,
        codes::FILE,
        e.position().clone(),
        format!("{}; file not used", e.kind()),
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

/// True when rank folder `rank` has an input the anomaly analysis can start from
/// (`kernel_details.csv`, `op_summary*.csv`, `trace_view.json`, or a GPU rank's trace).
pub fn usable(rank: &RankFolder) -> bool {
    [
        FileKind::AscendDb,
        FileKind::KernelDetails,
        FileKind::OpSummary,
        FileKind::TraceView,
        FileKind::KinetoTrace,
    ]
    .iter()
    .any(|k| rank.file(*k).is_some())
}

/// The anomaly analysis of one rank folder in the phases of the rank pass:
/// [`AnomalyPass::read_kernels`], the `trace_view.json` events through a
/// [`TimelineBuilder`] ([`AnomalyPass::trace_builder`], [`AnomalyPass::after_trace`]),
/// then [`AnomalyPass::finish`] (side files, joins, the analysis).
pub struct AnomalyPass<'a> {
    rank: &'a RankFolder,
    cfg: &'a AnomalyConfig,
    problems: Problems,
    inputs: Vec<String>,
    builder: KernelTableBuilder,
    info: CaptureInfo,
    has_stream_col: bool,
    aggregate_only: bool,
    kernel_files: Vec<RankFile>,
    trace: Option<HostEventTable>,
    db: Option<DbSide>,
    comm_read: Option<Result<Vec<CommOp>, ParseError>>,
    op_bytes: Option<std::collections::BTreeMap<String, u64>>,
}

/// What a rank read from its DB export brings beside the kernels and the trace tables
/// (ascend-db.md §6): `analysis.db`'s communication ops and step-trace rows.
#[derive(Default)]
pub struct DbSide {
    /// `CommAnalyzerTime` ops (`None`: no `analysis.db` or no such table).
    pub comm_ops: Option<Vec<CommOp>>,
    /// `StepTraceTime` rows.
    pub step_trace: Option<Vec<StepTraceRow>>,
}

impl<'a> AnomalyPass<'a> {
    /// Starts the rank: inventory notes, capture facts, which kernel source (§1.2, §1.2.3).
    pub fn new(rank: &'a RankFolder, cfg: &'a AnomalyConfig) -> Self {
        let mut problems = Problems::new();
        for n in &rank.notes {
            problems.push(n.to_problem());
        }
        let mut info = CaptureInfo {
            record_shapes: rank.side.record_shapes,
            with_stack: rank.side.with_stack,
            profile_memory: rank.side.profile_memory,
            with_flops: rank.side.with_flops,
            with_modules: rank.side.with_modules,
            memory_files: rank.has_memory_events() || rank.file(FileKind::MemoryRecord).is_some(),
            profiler_level: rank.side.profiler_level.clone(),
            ..Default::default()
        };
        let kernel_files: Vec<RankFile> = match rank.file(FileKind::KernelDetails) {
            Some(f) => vec![f.clone()],
            None => {
                let mut v: Vec<RankFile> = rank.files_of(FileKind::OpSummary).cloned().collect();
                crate::base::sort::sort_by_key(&mut v, |f| slice_index(&f.rel));
                info.op_summary_only = !v.is_empty();
                v
            }
        };
        AnomalyPass {
            rank,
            cfg,
            problems,
            inputs: Vec::new(),
            builder: KernelTableBuilder::new(),
            info,
            has_stream_col: false,
            aggregate_only: false,
            kernel_files,
            trace: None,
            db: None,
            comm_read: None,
            op_bytes: None,
        }
    }

    /// The pass of a rank read from its DB export (ascend-db.md §5, §6): the kernels and the
    /// trace tables were read from the DB (the file `db_path`), `side` holds what
    /// `analysis.db` gave, `problems` what reading them found. No text file is read.
    pub fn from_db(
        rank: &'a RankFolder,
        cfg: &'a AnomalyConfig,
        inputs: Vec<String>,
        builder: KernelTableBuilder,
        trace: Option<HostEventTable>,
        side: DbSide,
        problems: Problems,
    ) -> Self {
        let mut p = AnomalyPass::new(rank, cfg);
        p.problems.extend(problems);
        p.kernel_files.clear();
        p.info.op_summary_only = false;
        p.inputs = inputs;
        p.builder = builder;
        p.has_stream_col = true;
        p.trace = trace;
        p.db = Some(side);
        p
    }

    /// Reads the kernel source files (each once). `on_progress` gets each file's bytes;
    /// `Break` cancels (then `Break` is returned).
    pub fn read_kernels(
        &mut self,
        opener: &dyn Opener,
        on_progress: &mut dyn FnMut(&str, Progress) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let mut cancelled = false;
        for f in &self.kernel_files {
            match opener.open(&f.path) {
                Err(e) => self.problems.push(open_err(&f.path, e)),
                Ok(r) => {
                    self.inputs.push(f.path.clone());
                    let res = kernel_details::read(
                        r,
                        &f.path,
                        Some(f.size),
                        &mut self.builder,
                        &mut self.problems,
                        &mut |p| {
                            let c = on_progress(&f.path, p);
                            cancelled |= c.is_break();
                            c
                        },
                    );
                    match res {
                        Ok(i) => {
                            self.has_stream_col |= i.has_stream;
                            self.aggregate_only |= i.aggregate_only;
                        }
                        Err(e) => file_problem(&mut self.problems, &e),
                    }
                }
            }
            if cancelled {
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }

    /// The trace-table consumer of the rank's `trace_view.json` pass.
    pub fn trace_builder(&self) -> TimelineBuilder {
        TimelineBuilder::new(&self.cfg.custom_step_prefix)
    }

    /// The user step-marker prefix the trace builders take.
    pub fn custom_prefix(&self) -> &str {
        &self.cfg.custom_step_prefix
    }

    /// Takes the result of the trace pass over `f`: `None` when the file could not be opened
    /// (`Err` inside: the pass failed, the trace is not used).
    pub fn after_trace(
        &mut self,
        f: &RankFile,
        res: Result<Result<(HostEventTable, TimelineInfo), &ParseError>, std::io::Error>,
    ) {
        match res {
            Err(e) => self.problems.push(open_err(&f.path, e)),
            Ok(res) => {
                self.inputs.push(f.path.clone());
                match res {
                    Ok((_, ti)) if ti.unusable().is_some() => {
                        if let Some(e) = ti.unusable() {
                            file_problem(&mut self.problems, e);
                        }
                    }
                    Ok((t, ti)) => {
                        diag::push_problems(&f.path, &ti.scan, &diag::ANOMALY, &mut self.problems);
                        let at = Position::file(f.path.as_str());
                        let first = ti.out_of_range.first_at.first().copied().unwrap_or(0);
                        let what = format!("events dropped: ts or ts + dur outside the representable time range ({}); count and byte offsets", crate::base::arith::Tally::time_limit_text());
                        self.problems.push_some(ti.out_of_range.problem(
                            "ANOM-TV-010",
                            at.at_byte(first),
                            &what,
                        ));
                        self.trace = Some(t);
                    }
                    Err(e) => file_problem(&mut self.problems, e),
                }
            }
        }
    }

    /// Hands over `communication.json` as already read by the communication pass of the same
    /// rank read (so the file is read once); [`AnomalyPass::finish`] then does not open it.
    pub fn use_comm_read(&mut self, read: Result<Vec<CommOp>, ParseError>) {
        self.comm_read = Some(read);
    }

    /// The data size of each HCCL op by name, read in the same rank pass (`trace_view.json`'s
    /// op events or the DB's `COMMUNICATION_OP`): [`AnomalyPass::finish`] gives each comm op
    /// its size (`CommOp::data_size`) for the cross-rank slow links.
    pub fn use_op_sizes(&mut self, bytes: std::collections::BTreeMap<String, u64>) {
        self.op_bytes = Some(bytes);
    }

    /// Reads the side files (`communication.json`, `step_trace_time.csv`, each once), joins
    /// and checks the tables and runs the analysis.
    pub fn finish(self, opener: &dyn Opener) -> RankAnalysis {
        let AnomalyPass {
            rank,
            cfg,
            mut problems,
            mut inputs,
            mut builder,
            mut info,
            has_stream_col,
            aggregate_only,
            kernel_files,
            mut trace,
            db,
            comm_read,
            op_bytes,
        } = self;
        // Kernels from the trace's device lanes when no kernel CSV exists.
        if db.is_some() {
            // The DB's TASK table is the kernel source (ascend-db.md §5).
        } else if kernel_files.is_empty() {
            if let Some(t) = &trace {
                info.kernels_from_trace = true;
                joins::kernels_from_trace(t, &mut builder);
            } else {
                problems.push(Problem::new(
                    Severity::Error,
                    codes::NO_KERNELS,
                    Position::file(rank.label()),
                    NO_KERNELS_HOW,
                ));
            }
        }
        let what = format!("kernels dropped: start or end outside the representable time range ({}); count and source rows", crate::base::arith::Tally::time_limit_text());
        problems.push_some(builder.rejected().problem(
            "ANOM-KD-011",
            Position::file(rank.label()),
            &what,
        ));
        // Time bases (epoch vs monotonic): refuse to combine.
        if let Some(t) = &trace {
            let at = rank
                .file(FileKind::TraceView)
                .map_or("", |f| f.path.as_str());
            if let Some(p) = joins::time_base_conflict(&builder, t, at) {
                problems.push(p);
                trace = None;
            }
        }
        // Level0 stream join (§1.2.4).
        if !has_stream_col && !kernel_files.is_empty() {
            if let Some(t) = &trace {
                problems.push(joins::join_streams(&mut builder, t, &kernel_files[0].path));
            }
        }
        // Side inputs.
        let mut comm_ops = Vec::new();
        let mut step_trace = Vec::new();
        let text_side = db.is_none();
        if let Some(side) = db {
            if let Some(c) = side.comm_ops {
                info.comm_file = true;
                comm_ops = c;
            }
            step_trace = side.step_trace.unwrap_or_default();
        }
        if let Some(f) = rank.file(FileKind::Communication).filter(|_| text_side) {
            let read = match comm_read {
                Some(r) => Ok(r),
                None => opener
                    .open(&f.path)
                    .map(|r| communication::read(r, &f.path)),
            };
            match read {
                Err(e) => problems.push(open_err(&f.path, e)),
                Ok(r) => match r {
                    Ok(v) => {
                        inputs.push(f.path.clone());
                        info.comm_file = true;
                        comm_ops = v;
                    }
                    Err(e) => file_problem(&mut problems, &e),
                },
            }
        }
        if let Some(bytes) = &op_bytes {
            for o in &mut comm_ops {
                o.data_size = bytes.get(&o.collective_name).copied();
            }
        }
        if let Some(f) = rank.file(FileKind::StepTraceTime).filter(|_| text_side) {
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
        overrun_problems(&kernels, &kernel_files, rank, &mut problems);
        if kernels.is_empty() && !aggregate_only && problems.count(codes::NO_KERNELS) == 0 {
            // A trace with host events only (e.g. a memory-only capture): say what is missing
            // and how to capture it, instead of steps of zero length.
            let at = kernel_files
                .first()
                .map(|f| f.path.as_str())
                .or_else(|| rank.file(FileKind::TraceView).map(|f| f.path.as_str()))
                .unwrap_or(rank.label());
            problems.push(Problem::new(
                Severity::Error,
                codes::NO_KERNELS,
                Position::file(at),
                NO_KERNELS_HOW,
            ));
        }
        let input = RankInput {
            kernels: &kernels,
            trace: trace.as_ref(),
            comm_ops: &comm_ops,
            step_trace: &step_trace,
            info,
        };
        let mut result = analysis::analyse(&input, cfg);
        if aggregate_only {
            // A capture without kernel intervals says so beside the result, not only inside
            // it (formats.md §11.1).
            let why = "op_summary has aggregate columns only: op-level statistics only, bubble analysis unavailable";
            let at = kernel_files
                .first()
                .map_or(rank.label(), |f| f.path.as_str());
            let name = at.rsplit('/').next().unwrap_or(at);
            problems.push(Problem::new(
                Severity::Info,
                codes::AGGREGATE_ONLY,
                Position::file(at),
                format!("{name} has aggregate columns only (Count, Total …), no kernel start and end times: op-level statistics only, no steps and no bubbles"),
            ));
            result.limitations.push(why.into());
        }
        let cross_check = joins::cross_check(&result, &kernels, &step_trace, &mut problems);
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
        RankAnalysis {
            meta,
            dir_name,
            kernels,
            trace,
            comm_ops,
            step_trace,
            result,
            problems,
            cross_check,
            gpu: None,
            gpu_summary: std::sync::OnceLock::new(),
            parts: Vec::new(),
        }
    }
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

/// One warning per kernel clipped at the next kernel of its stream (Decision),
/// at its line in the kernel table (trace-derived kernels: the trace file).
fn overrun_problems(
    k: &KernelTable,
    kernel_files: &[RankFile],
    rank: &RankFolder,
    problems: &mut Problems,
) {
    for o in k.overruns() {
        let row = k.row_of(o.kernel);
        let at = match kernel_files.first() {
            Some(f) if row > 0 => Position::file(f.path.as_str()).at_line(row),
            _ => Position::file(
                rank.file(FileKind::TraceView)
                    .map(|f| f.path.as_str())
                    .unwrap_or(rank.label()),
            ),
        };
        let next_row = k.row_of(o.next);
        problems.push(Problem::new(
            Severity::Warning,
            "ANOM-KD-012",
            at,
            format!(
                "kernel `{}` ({}, stream {}) runs {} µs past the start of the next kernel on its stream (`{}`{}): kernels of one stream run one after another, so the busy union counts it only up to that start (raw end {} µs)",
                k.name_of(o.kernel),
                k.core_of(o.kernel),
                k.stream_of(o.kernel),
                crate::report::float::ns_to_us_text(o.overrun_ns),
                k.name_of(o.next),
                if next_row > 0 { format!(", line {next_row}") } else { String::new() },
                crate::report::float::ns_to_us_text(k.end_ns(o.kernel)),
            ),
        ));
    }
}
