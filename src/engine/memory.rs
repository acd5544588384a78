//! The memory-events pipeline (ascend-memory.md §7): one rank folder in, one
//! [`RankMemory`] out, through an [`Opener`]; and the run over an inventory,
//! merged in the §9.0 order. Used by the CLI, the web worker and the tests.
//!
//! Data flow per rank: `trace_view.json` → `parse::trace_json::call_stack_index`
//! → `model::HostOpTable` → `CallStackIndex`; `operator_memory.csv` →
//! `parse::csv::operator_memory` → `MemoryEventTable`; `analysis::memory_match`
//! ties them; `RankMemory::from_parts` compacts the result and drops the host ops.
//!
//! Failure isolation: every problem stays with its rank; one rank failing never
//! stops the others. Parity mode reproduces upstream's per-rank failure (no rows).

use std::ops::ControlFlow;
use std::sync::Arc;

use crate::analysis::memory_match::{match_rows, MatchOptions};
use crate::analysis::memory_result::{MemoryRun, RankInfo, RankMemory, RankStatus, TraceFacts};
use crate::analysis::user_frame::UserFrameRule;
use crate::base::{Position, Problem, Problems, Severity};
use crate::ingest::inventory::{FileKind, Inventory, RankFolder};
use crate::ingest::select::Selection;
use crate::ingest::{ChunkReader, Opener, Progress};
use crate::model::host_events::{CallStackIndex, HostOpTable};
use crate::model::memory_events::MemoryEventTable;
use crate::model::stacks::StackPool;
use crate::model::strings::StringPool;
use crate::parse::csv::operator_memory::{self, CsvMode};
use crate::parse::trace_json::call_stack_index::{read_host_ops, TraceMode};
use crate::parse::ParseErrorKind;

/// Output mode (ascend-memory.md intro table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Lenient parsing, per-row problems, extension columns (the UI).
    #[default]
    Default,
    /// RL-Insight parity: upstream parsing and failure behaviour, 12 columns.
    Parity,
}

/// Settings of a memory analysis.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemoryOptions {
    /// Default or parity.
    pub mode: Mode,
    /// Default-mode matching (§6.4).
    pub matching: MatchOptions,
    /// User-frame overrides (§6.3 rule 6).
    pub user_frame: UserFrameRule,
    /// Rank / role / source filters (§2.2).
    pub selection: Selection,
}

/// Progress callback: `(file path, bytes read)`; `Break` cancels.
pub type OnProgress<'a> = dyn FnMut(&str, Progress) -> ControlFlow<()> + 'a;

fn info_of(rank: &RankFolder) -> RankInfo {
    RankInfo {
        role: rank.role.clone(),
        rank_id: rank.rank_id.unwrap_or(-1),
        source_index: rank.source_index,
        source_dir: rank.dir.clone(),
    }
}

/// Analyses ONE rank folder (§7 per-rank orchestration).
///
/// Reads `trace_view.json` (if present) then `operator_memory.csv` through `opener`,
/// reporting bytes read per file to `on_progress` (a `Break` cancels: the rank comes back
/// [`RankStatus::Cancelled`] without rows). Never fails: a rank that cannot be analysed
/// comes back [`RankStatus::Failed`] with its problems (`MEM-FILE-*`, `MEM-CSV-*`,
/// `MEM-TV-*`). The inventory notes of the folder are included in its problems.
pub fn analyse_rank(
    rank: &RankFolder,
    opener: &dyn Opener,
    opts: &MemoryOptions,
    on_progress: &mut OnProgress<'_>,
) -> RankMemory {
    let info = info_of(rank);
    let mut problems = Problems::new();
    for n in &rank.notes {
        problems.push(n.to_problem());
    }
    let label = rank.label().to_string();
    let fail = |info: RankInfo, problems: Problems, why: String| {
        RankMemory::empty(info, RankStatus::Failed(why), problems)
    };
    if rank.rank_id.is_none() {
        return fail(
            info,
            problems,
            format!("Cannot determine rank id for {label}; skipped"),
        );
    }
    let Some(csv) = rank.file(FileKind::OperatorMemory) else {
        problems.push(Problem::new(
            Severity::Error,
            "MEM-FILE-001",
            Position::file(label.as_str()),
            format!("operator_memory.csv not found in {label}"),
        ));
        return fail(info, problems, "operator_memory.csv not found".into());
    };
    let parity = opts.mode == Mode::Parity;
    let r = info.rank_id;
    let mut strings = StringPool::new();
    let mut stacks = StackPool::new();
    let mut cancelled = false;
    // 1. call-stack index
    let mut host = HostOpTable::new();
    let mut trace = TraceFacts::default();
    match rank.file(FileKind::TraceView) {
        None if parity => {
            problems.push(Problem::new(Severity::Warning, "MEM-FILE-002", Position::file(label.as_str()),
                format!("Rank {r}: trace_view.json not found at {label}/ASCEND_PROFILER_OUTPUT")));
            return fail(info, problems, "trace_view.json not found (RL-Insight parity drops the rank)".into());
        }
        None => problems.push(Problem::new(Severity::Warning, "MEM-FILE-002", Position::file(label.as_str()),
            format!("No call stacks for rank {r}: trace_view.json missing or recorded with with_stack=false"))),
        Some(tv) => {
            let path = tv.path.clone();
            let res = opener
                .open(&path)
                .map_err(|e| format!("cannot open {path}: {e}"))
                .and_then(|src| {
                    let mut rdr = ChunkReader::new(src, Some(tv.size));
                    let mode = if parity { TraceMode::Parity } else { TraceMode::Default };
                    let mut prog = |p: Progress| {
                        let f = on_progress(&path, p);
                        cancelled |= f.is_break();
                        f
                    };
                    read_host_ops(&mut rdr, &path, mode, &mut strings, &mut stacks, &mut problems, &mut prog)
                        .map_err(|e| {
                            if matches!(e.kind(), ParseErrorKind::Empty) {
                                format!("File is empty: {path}")
                            } else {
                                e.to_string()
                            }
                        })
                });
            match res {
                Ok((h, stats)) => {
                    trace = TraceFacts { present: true, cpu_ops: stats.cpu_ops, with_stack: stats.with_stack };
                    host = h;
                }
                Err(msg) => {
                    if parity {
                        problems.push(Problem::new(Severity::Error, "MEM-TV-004", Position::file(path.as_str()), msg.clone()));
                        return fail(info, problems, format!("trace_view.json unusable: {msg}"));
                    }
                    problems.push(Problem::new(Severity::Error, "MEM-TV-004", Position::file(path.as_str()),
                        format!("{msg}; rows get no call stacks")));
                }
            }
            if !parity && trace.present && trace.with_stack == 0 {
                problems.push(Problem::new(Severity::Warning, "MEM-FILE-002", Position::file(path.as_str()),
                    format!("No call stacks for rank {r}: trace_view.json missing or recorded with with_stack=false")));
            }
        }
    }
    if cancelled {
        return RankMemory::empty(info, RankStatus::Cancelled, problems);
    }
    // 2. operator_memory.csv
    let mut events = MemoryEventTable::new();
    let csv_path: Arc<str> = csv.path.as_str().into();
    let res = match opener.open(&csv.path) {
        Err(e) => Err(format!("cannot open {}: {e}", csv.path)),
        Ok(mut src) => {
            let mode = if parity {
                CsvMode::Parity
            } else {
                CsvMode::Default
            };
            let mut prog = |p: Progress| {
                let f = on_progress(&csv_path, p);
                cancelled |= f.is_break();
                f
            };
            operator_memory::read(
                &mut src,
                &csv.path,
                Some(csv.size),
                mode,
                &mut strings,
                &mut events,
                &mut problems,
                &mut prog,
            )
            .map_err(|e| match e.kind() {
                ParseErrorKind::Empty => format!("File is empty: {}", csv.path),
                _ => e.to_string(),
            })
        }
    };
    match res {
        Ok(stats) if stats.stopped || cancelled => {
            return RankMemory::empty(info, RankStatus::Cancelled, problems)
        }
        Ok(_) => {}
        Err(msg) => {
            if problems.count("MEM-CSV-001") == 0
                && !(parity
                    && problems
                        .kept()
                        .iter()
                        .any(|p| p.code.starts_with("MEM-CSV")))
            {
                problems.push(Problem::new(
                    Severity::Error,
                    "MEM-FILE-003",
                    Position::file(csv.path.as_str()),
                    msg.clone(),
                ));
            }
            return fail(info, problems, msg);
        }
    }
    // 3. match
    let idx = CallStackIndex::build(&host);
    let matches = match_rows(&events, &host, &idx, &opts.matching);
    drop(idx);
    let r = RankMemory::from_parts(
        info,
        strings,
        stacks,
        events,
        &host,
        &matches,
        &opts.user_frame,
        problems,
        trace,
    );
    drop(host);
    r
}

/// Runs [`analyse_rank`] on every rank folder of `inv` whose memory analysis can start, and
/// merges the results (§9.0). Folders that cannot run come back failed with their reason.
/// Drop-level notes (e.g. `MEM-DISC-001`) are returned beside the run.
pub fn analyse_inventory(
    inv: &Inventory,
    opener: &dyn Opener,
    opts: &MemoryOptions,
    on_progress: &mut OnProgress<'_>,
) -> (MemoryRun, Problems) {
    let mut ranks = Vec::with_capacity(inv.ranks.len());
    let mut drop_problems = Problems::new();
    for n in &inv.notes {
        drop_problems.push(n.to_problem());
    }
    if opts.mode == Mode::Parity && opts.selection.restricts_ranks() {
        // §2.1 step 5 / §2.2 Decision: upstream never implemented rank filtering.
        drop_problems.push(Problem::new(
            Severity::Warning,
            "MEM-RUN-002",
            Position::file(""),
            "RL analysis currently only supports processing all ranks",
        ));
        drop_problems.push(Problem::new(
            Severity::Error,
            "MEM-RUN-001",
            Position::file(""),
            "No valid data collected from any rank",
        ));
        return (MemoryRun::merge(Vec::new()), drop_problems);
    }
    for rank in inv
        .ranks
        .iter()
        .filter(|r| opts.selection.selects(&r.role, r.rank_id, r.source_index))
    {
        let r = analyse_rank(rank, opener, opts, on_progress);
        let stop = r.status == RankStatus::Cancelled;
        ranks.push(r);
        if stop {
            break;
        }
    }
    if parity_nothing(opts, &ranks) {
        drop_problems.push(Problem::new(
            Severity::Error,
            "MEM-RUN-001",
            Position::file(""),
            "No valid data collected from any rank",
        ));
    }
    (MemoryRun::merge(ranks), drop_problems)
}

fn parity_nothing(_opts: &MemoryOptions, ranks: &[RankMemory]) -> bool {
    ranks.iter().all(|r| r.is_empty())
}
