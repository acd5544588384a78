//! The anomaly pipeline for one GPU rank (anomaly.md on GPU streams): one streamed
//! read of the rank's PyTorch profiler trace ([`crate::parse::kineto::read_located`]), then
//! the same tables and the same [`analysis::analyse`] as an Ascend rank:
//!
//! * every device op (kernel, gpu_memcpy, gpu_memset) becomes a kernel row on its stream
//!   (`"7"`, or `"<device>:<stream>"` when the rank's ops run on several devices), so the
//!   busy union, underfeed, prelaunch, tail and internal bubbles are over **all GPU streams of
//!   the rank**; NCCL/RCCL kernels (names matching §1.2.2's communication pattern or `nccl`)
//!   are communication kernels (core `NCCL`, class HCCL; the JSON's `task_class` says
//!   `communication`: `KernelTable::task_class_label`), memcpy/memset are class `OTHER`
//!   (core `GPU_MEMCPY` / `GPU_MEMSET`), the rest compute (core `KERNEL`, class AI_CORE);
//! * host events become the trace tables: `cpu_op`, `python_function`, `user_annotation` on
//!   the Python lane, runtime/driver calls and `cuda_sync` on the runtime lane (the lane the
//!   Ascend rules call CANN), each thread by `pid/tid`; `ProfilerStep#N` are the step markers;
//! * Ascend-only rules are not applied and the result says so (`limitations`).
//!
//! A trace without any device op is a host-only trace: steps and host events, no bubbles, an
//! info problem with the reason — never an error.

use std::ops::ControlFlow;
use std::sync::Arc;

use super::anomaly::RankAnalysis;
use crate::analysis::anomaly::{self as analysis, CaptureInfo, RankInput};
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::analysis::{gpu_rank, gpu_tables};
use crate::base::{Position, Problem, Problems, Severity};
use crate::engine::contract::Cancelled;
use crate::ingest::inventory::{FileKind, RankFile, RankFolder, RANK_FROM_ORDER};
use crate::ingest::rank::RankSource;
use crate::ingest::{Opener, Progress};
use crate::model::gpu::GpuTrace;
use crate::model::kernels::KernelTable;
use crate::model::trace_events::HostEventTable;
use crate::parse::kineto::{self, Traces};
use crate::report::anomaly_json::RankMeta;

/// Problem codes of the GPU pipeline.
pub mod codes {
    /// The trace has no device op: a host-only trace (info).
    pub const HOST_ONLY: &str = "GPU-RUN-001";
    /// The trace could not be read at all.
    pub const FILE: &str = "GPU-FILE-001";
    /// A file the inventory kept undecided holds no PyTorch profiler mark (formats.md §8.1).
    pub const NOT_A_TRACE: &str = crate::ingest::kineto::NOT_A_TRACE;
    /// `distributedInfo` found by the run after the trace events, past the head the inventory
    /// read: the rank it was numbered by agrees (info) or not (warning) (formats.md §8).
    pub const LATE_RANK: &str = "GPU-DISC-005";
}

/// Analyses GPU rank `rank` (a `CaptureKind::Kineto` inventory entry). `on_progress` gets the
/// trace's compressed bytes; `Break` cancels.
///
/// A merged multi-rank trace (gpu-traces.md §6) is split in the same read: the result is its
/// first rank, with the others in [`RankAnalysis::parts`] (each its own rank: rank id from the
/// split, its own steps, bubbles and GPU views). The file's problems go with the first rank.
pub fn read_rank(
    rank: &RankFolder,
    opener: &dyn Opener,
    cfg: &AnomalyConfig,
    on_progress: &mut dyn FnMut(&str, Progress) -> ControlFlow<()>,
) -> Result<RankAnalysis, Cancelled> {
    read_rank_with(rank, cfg, 1, on_progress, &mut |f, prog, problems| {
        kineto::read_located(opener, &f.path, Some(f.size), prog, problems)
    })
}

/// [`read_rank`] with the trace cut into byte ranges read on `ranges.threads` threads
/// (formats.md §8.2; a plain file large enough), and HTA's breakdowns computed beside the
/// anomaly analysis (kept in `RankAnalysis::gpu_summary`): the same result.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_rank_ranges(
    rank: &RankFolder,
    opener: &(dyn Opener + Sync),
    ranges: kineto::ranges::Ranges,
    cfg: &AnomalyConfig,
    on_progress: &mut dyn FnMut(&str, Progress) -> ControlFlow<()>,
) -> Result<RankAnalysis, Cancelled> {
    read_rank_with(
        rank,
        cfg,
        ranges.threads,
        on_progress,
        &mut |f, prog, problems| {
            kineto::read_located_ranges(opener, &f.path, f.size, ranges, prog, problems)
        },
    )
}

/// The read of one trace file: `(file, on_progress, problems)` → what `read_located` gives.
type ReadTrace<'a> = dyn FnMut(
        &RankFile,
        &mut dyn FnMut(Progress) -> ControlFlow<()>,
        &mut Problems,
    ) -> Result<(Traces, kineto::KinetoInfo), crate::parse::ParseError>
    + 'a;

fn read_rank_with(
    rank: &RankFolder,
    cfg: &AnomalyConfig,
    threads: usize,
    on_progress: &mut dyn FnMut(&str, Progress) -> ControlFlow<()>,
    read_trace: &mut ReadTrace<'_>,
) -> Result<RankAnalysis, Cancelled> {
    let mut problems = Problems::new();
    let file = rank.file(FileKind::KinetoTrace);
    let path = file.map(|f| f.path.as_str()).unwrap_or(rank.label());
    let mut cancelled = false;
    let read = file.map(|f| {
        read_trace(
            f,
            &mut |p| {
                let c = on_progress(&f.path, p);
                cancelled |= c.is_break();
                c
            },
            &mut problems,
        )
    });
    if cancelled {
        return Err(Cancelled);
    }
    let undecided = rank.side.kineto.as_ref().is_some_and(|h| h.undecided);
    let traces: Vec<(Option<i64>, GpuTrace)> = match read {
        Some(Ok((Traces::Ranks(s), _))) if !s.ranks.is_empty() => {
            s.ranks.into_iter().map(|(r, t)| (Some(r), t)).collect()
        }
        // A file the inventory's head could not judge is judged by its whole content
        // (formats.md §8.1): without any PyTorch profiler mark it is not used.
        Some(Ok((Traces::One(t), _))) if undecided && !kineto::has_pytorch_marks(&t) => {
            problems.push(Problem::new(
                Severity::Error,
                codes::NOT_A_TRACE,
                Position::file(path),
                format!("not a trace: no deviceProperties, no distributedInfo and no event of a PyTorch profiler category (cpu_op, python_function, user_annotation, kernel, …) anywhere in the file (a rocprofiler or Nsight export, say, needs its own converter to the Chrome-trace form the PyTorch profiler writes); file not used"),
            ));
            vec![(None, GpuTrace::default())]
        }
        Some(Ok((Traces::One(t), _))) => vec![(None, t)],
        Some(Ok((Traces::Ranks(_), _))) | None => vec![(None, GpuTrace::default())],
        Some(Err(e)) => {
            problems.push(Problem::new(
                Severity::Error,
                codes::FILE,
                e.position().clone(),
                format!("{}; file not used", e.kind()),
            ));
            vec![(None, GpuTrace::default())]
        }
    };
    // The inventory's notes first; a rank id taken from the order of the files does not
    // apply to a split trace, whose ranks carry their own ids.
    let split = traces.first().is_some_and(|(r, _)| r.is_some());
    let late = (!split)
        .then(|| late_rank(rank, path, &traces[0].1))
        .flatten();
    let mut file_problems = Problems::new();
    for n in &rank.notes {
        // The order's note says the trace has no distributedInfo: the late one replaces it.
        if !((split || late.is_some()) && n.code == RANK_FROM_ORDER) {
            file_problems.push(n.to_problem());
        }
    }
    if let Some(p) = late {
        file_problems.push(p);
    }
    file_problems.extend(problems);
    let mut problems = file_problems;
    let mut all = traces.into_iter().enumerate().map(|(k, (rank_id, trace))| {
        // The file's problems go with the first rank only.
        let p = if k == 0 {
            std::mem::take(&mut problems)
        } else {
            Problems::new()
        };
        analyse(rank, path, rank_id, trace, p, cfg, threads)
    });
    let mut first = all.next().unwrap_or_else(|| {
        let none = GpuTrace::default();
        analyse(rank, path, None, none, Problems::new(), cfg, 1)
    });
    first.parts = all.collect();
    Ok(first)
}

/// The check of a rank numbered before the read against the `distributedInfo` the read found
/// (formats.md §8): older PyTorch writes `distributedInfo` after `traceEvents`, past the head
/// the inventory reads, so a rank it numbered by the file name or by the order of the traces
/// is checked here. `None` when the inventory read `distributedInfo` itself or the trace has
/// none; else an info note when the ranks agree and a warning naming both when they do not
/// (the run keeps the inventory's number: every view and export is keyed by it).
fn late_rank(rank: &RankFolder, path: &str, trace: &GpuTrace) -> Option<Problem> {
    if !matches!(rank.rank_source, RankSource::Order | RankSource::FileName) {
        return None;
    }
    let late = trace.facts.distributed.as_ref()?.rank?;
    let given = rank.rank_id?;
    let label = rank.label();
    let from = rank.rank_source.describe();
    let (severity, message) = if late == given {
        (
            Severity::Info,
            format!("Rank {given} of {label} taken from {from}; its distributedInfo, written after the trace events (past the head the inventory reads), says the same rank"),
        )
    } else {
        (
            Severity::Warning,
            format!("{label} says distributedInfo.rank {late} after its trace events (past the head the inventory reads), but it was numbered rank {given} from {from} before the read: this run keeps rank {given}; name the file with rank{late} (rank{late}.pt.trace.json) to number it {late}"),
        )
    };
    Some(Problem::new(
        severity,
        codes::LATE_RANK,
        Position::file(path),
        message,
    ))
}

/// The analysis of one rank's trace `trace` from file `path` of inventory entry `rank`
/// (`rank_id`: the rank of a split merged trace, else the inventory's). With `threads` > 1
/// (natively), HTA's breakdowns — the GPU summary's largest part, and it needs no step — run
/// on a second thread beside the tables and the anomaly analysis, and the GPU summary is kept
/// ready for the exports: the values the exports would compute later.
fn analyse(
    rank: &RankFolder,
    path: &str,
    rank_id: Option<i64>,
    trace: GpuTrace,
    mut problems: Problems,
    cfg: &AnomalyConfig,
    threads: usize,
) -> RankAnalysis {
    let file = rank.file(FileKind::KinetoTrace);
    let (hta, (kernels, host, mut result)) = crate::base::par::beside(
        threads,
        || gpu_rank::hta(&trace),
        || anomaly_tables(&trace, cfg, threads),
    );
    let used = problems.count(codes::NOT_A_TRACE) == 0;
    if used && !trace.has_device_ops() {
        let of = rank_id
            .map(|r| format!(" (rank {r} of a merged trace)"))
            .unwrap_or_default();
        // A file cut (or a read stopped) before the first device event says nothing of how
        // the profile was captured: the cut leads (formats.md §8.1).
        let kineto = crate::parse::trace_json::diag::KINETO;
        let cut = [kineto.truncated, kineto.stopped]
            .into_iter()
            .find(|c| problems.count(c) > 0)
            .map(|c| {
                let at = problems.kept().iter().find(|p| p.code == c);
                let at = at.and_then(|p| p.at.byte).map(|b| format!(" at byte {b}"));
                (c, at.unwrap_or_default())
            });
        let why = match cut {
            Some((code, at)) => format!(
                "{}{of}: the file ends{at} ({code}) before any device event (kernel, gpu_memcpy, gpu_memset) was read — PyTorch's profiler may write its device events after the host events, so the cut can have lost them all, and nothing is known of how it was captured; read the whole file again (a copy or download cut short); {} host events and {} steps read, no busy union and no bubbles",
                gpu_rank::CUT_BEFORE_DEVICE,
                trace.host_ops.len(),
                trace.steps.len()
            ),
            None => no_device_text(&trace, &of),
        };
        problems.push(Problem::new(
            Severity::Info,
            codes::HOST_ONLY,
            Position::file(path),
            why.clone(),
        ));
        result.limitations.push(why);
    }
    let name = rank.files.first().map(|f| f.rel.as_str()).unwrap_or("");
    let dir_name = name
        .trim_end_matches(".gz")
        .trim_end_matches(".json")
        .to_string();
    let meta = RankMeta {
        rank_id: rank_id.or(rank.rank_id),
        role: Some(rank.role.clone()).filter(|r| !r.is_empty()),
        rank_dir: rank.dir.clone(),
        inputs: file.map(|f| vec![f.path.clone()]).unwrap_or_default(),
        problems: problems
            .kept()
            .iter()
            .map(|p| format!("{} [{}] {}", p.at, p.code, p.message))
            .collect(),
    };
    let gpu_summary = std::sync::OnceLock::new();
    if let Some(hta) = hta {
        let steps = gpu_rank::step_windows(&result.steps);
        let _ = gpu_summary.set(gpu_rank::summarise_with(&trace, &steps, hta));
    }
    RankAnalysis {
        meta,
        dir_name,
        kernels,
        trace: Some(host),
        comm_ops: Vec::new(),
        step_trace: Vec::new(),
        result,
        problems,
        cross_check: Vec::new(),
        gpu: Some(Arc::new(trace)),
        gpu_summary,
        parts: Vec::new(),
    }
}

/// The anomaly pipeline's tables of `trace` (kernels, host events) and its analysis (its
/// steps on up to `threads` threads).
fn anomaly_tables(
    trace: &GpuTrace,
    cfg: &AnomalyConfig,
    threads: usize,
) -> (KernelTable, HostEventTable, analysis::AnomalyResult) {
    let kernels = gpu_tables::kernel_table(trace);
    let host = gpu_tables::host_table(trace, &kernels);
    let input = RankInput {
        kernels: &kernels,
        trace: Some(&host),
        comm_ops: &[],
        step_trace: &[],
        info: CaptureInfo {
            // The options the trace states at its top level (anomaly.md §1.1.1).
            record_shapes: trace.facts.flags.record_shapes,
            with_stack: trace.facts.flags.with_stack,
            profile_memory: trace.facts.flags.profile_memory,
            with_flops: trace.facts.flags.with_flops,
            with_modules: trace.facts.flags.with_modules,
            kernels_from_trace: true,
            gpu_trace: true,
            ..Default::default()
        },
    };
    let result = analysis::analyse_on(&input, cfg, threads);
    (kernels, host, result)
}

/// Why the whole trace `t` (rank suffix `of`) has no device event, when no cut explains it
/// (formats.md §8.1): it holds no event at all; its runtime calls enqueued device work whose
/// records are missing ([`gpu_rank::device_work_calls`]); its `[memory]` samples lie on a GPU;
/// else it was profiled without the device activities or launched no GPU work.
fn no_device_text(t: &GpuTrace, of: &str) -> String {
    let (hosts, steps) = (t.host_ops.len(), t.steps.len());
    // Not one event: the profiler's window recorded nothing.
    if hosts == 0 && steps == 0 {
        return format!(
            "{}{of}: the trace holds no event at all (no host op, no device op, no step; only its metadata) — the profiler recorded nothing in its window: with a schedule, the trace was written outside its active steps (prof.step() not called each step, or the profile ended during wait or warmup); nothing to analyse",
            gpu_rank::NO_EVENT,
        );
    }
    // Launches recorded, their device records not: the activities were on, so the capture
    // advice would mislead.
    let calls = gpu_rank::device_work_calls(t);
    if !calls.is_empty() {
        let n: usize = calls.iter().map(|c| c.1).sum();
        let names: Vec<String> = calls
            .iter()
            .take(3)
            .map(|(name, k)| format!("{name} ×{k}"))
            .collect();
        let more = if calls.len() > 3 { ", …" } else { "" };
        return format!(
            "{}{of}: no device events (kernel, gpu_memcpy, gpu_memset), yet {n} runtime calls that enqueue device work were recorded ({}{more}) — the CUDA/ROCm activities were on (the tracer writes those calls itself), but the records of the device side are missing: the tracer lost or never delivered them (another profiler such as Nsight Systems attached, a CUPTI/roctracer error in the run's log, or the profile stopped before the GPU finished); {hosts} host events and {steps} steps read, no busy union and no bubbles",
            gpu_rank::DEVICE_RECORDS_LOST,
            names.join(", "),
        );
    }
    // `[memory]` samples on a device (device type ≠ 0, the CPU): the process used the GPU, so
    // only the missing activities can explain it.
    match t.memory.iter().filter(|m| m.device_type != 0).count() {
        0 => format!(
            "{}{of}: no device events (kernel, gpu_memcpy, gpu_memset) among its {hosts} host events and {steps} steps — profiled without CUDA/ROCm activities or on a process that launched no GPU work; steps and host events only, no busy union and no bubbles",
            gpu_rank::HOST_ONLY,
        ),
        on_device => format!(
            "{}{of}: no device events (kernel, gpu_memcpy, gpu_memset) among its {hosts} host events and {steps} steps, yet {on_device} `[memory]` samples on a device show the process used the GPU — profiled without the CUDA/ROCm activities (ProfilerActivity.CUDA), or by a PyTorch whose profiler could not record them; steps and host events only, no busy union and no bubbles",
            gpu_rank::HOST_ONLY,
        ),
    }
}
