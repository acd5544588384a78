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

use crate::analysis::memory_match::{match_rows, MatchOptions};
use crate::analysis::memory_result::{RankInfo, RankMemory, RankStatus, TraceFacts};
use crate::analysis::user_frame::UserFrameRule;
use crate::base::{Position, Problem, Problems, Severity};
use crate::ingest::inventory::{FileKind, Inventory, RankFile, RankFolder};
use crate::ingest::select::Selection;
use crate::ingest::{Opener, Progress};
use crate::model::host_events::{CallStackIndex, HostOpTable};
use crate::model::memory_events::MemoryEventTable;
use crate::model::stacks::StackPool;
use crate::model::strings::StringPool;
use crate::parse::csv::operator_memory::{self, CsvMode};
use crate::parse::trace_json::call_stack_index::{HostOpsReader, TraceMode, TraceStats};

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

fn info_of(rank: &RankFolder) -> RankInfo {
    RankInfo {
        role: rank.role.clone(),
        rank_id: rank.rank_id.unwrap_or(-1),
        source_index: rank.source_index,
        source_dir: rank.dir.clone(),
    }
}

/// The memory analysis of one rank folder in the phases of the rank pass: [`MemoryPass::start`]
/// (checks that need no reading), the `trace_view.json` events through
/// [`MemoryPass::trace_reader`] and [`MemoryPass::after_trace`], then
/// [`MemoryPass::finish`] (reads `operator_memory.csv`, matches, compacts).
pub struct MemoryPass<'o> {
    opts: &'o MemoryOptions,
    info: RankInfo,
    label: String,
    csv: RankFile,
    problems: Problems,
    strings: StringPool,
    stacks: StackPool,
    host: HostOpTable,
    trace: TraceFacts,
}

impl<'o> MemoryPass<'o> {
    /// Starts the rank: inventory notes, rank id and `operator_memory.csv` presence.
    /// `Err` is the finished (failed) rank when nothing can be read.
    pub fn start(rank: &RankFolder, opts: &'o MemoryOptions) -> Result<Self, RankMemory> {
        Self::start_from(
            rank,
            opts,
            rank.file(FileKind::OperatorMemory),
            "operator_memory.csv",
        )
    }

    /// [`MemoryPass::start`] of a rank read from its DB export (ascend-db.md §3): the memory
    /// events come from the DB ([`MemoryPass::after_db_host`], [`MemoryPass::finish_db`]).
    pub fn start_db(rank: &RankFolder, opts: &'o MemoryOptions) -> Result<Self, RankMemory> {
        Self::start_from(
            rank,
            opts,
            rank.ascend_db(),
            "ascend_pytorch_profiler_<rank>.db",
        )
    }

    fn start_from(
        rank: &RankFolder,
        opts: &'o MemoryOptions,
        source: Option<&RankFile>,
        what: &str,
    ) -> Result<Self, RankMemory> {
        let info = info_of(rank);
        let mut problems = Problems::new();
        for n in &rank.notes {
            problems.push(n.to_problem());
        }
        let label = rank.label().to_string();
        if rank.rank_id.is_none() {
            let why = format!("Cannot determine rank id for {label}; skipped");
            return Err(RankMemory::empty(info, RankStatus::Failed(why), problems));
        }
        let Some(csv) = source else {
            problems.push(Problem::new(
                Severity::Error,
                "MEM-FILE-001",
                Position::file(label.as_str()),
                format!("{what} not found in {label}"),
            ));
            let why = format!("{what} not found");
            return Err(RankMemory::empty(info, RankStatus::Failed(why), problems));
        };
        Ok(MemoryPass {
            opts,
            info,
            label,
            csv: csv.clone(),
            problems,
            strings: StringPool::new(),
            stacks: StackPool::new(),
            host: HostOpTable::new(),
            trace: TraceFacts::default(),
        })
    }

    /// The rank's pools and problem list, for the DB reader to fill.
    pub fn db_parts(&mut self) -> (&mut StringPool, &mut StackPool, &mut Problems, bool) {
        let parity = self.parity();
        (
            &mut self.strings,
            &mut self.stacks,
            &mut self.problems,
            parity,
        )
    }

    /// Takes the host ops read from the DB's `PYTORCH_API` (ascend-db.md §4): `present` is
    /// false when the table is missing (then as a rank without `trace_view.json`).
    pub fn after_db_host(
        mut self,
        present: bool,
        host: HostOpTable,
        cpu_ops: u64,
        with_stack: u64,
    ) -> Result<Self, RankMemory> {
        if !present {
            return self.no_trace();
        }
        self.trace = TraceFacts {
            present: true,
            cpu_ops,
            with_stack,
        };
        self.host = host;
        if !self.parity() && with_stack == 0 {
            let r = self.info.rank_id;
            let at = Position::file(self.csv.path.as_str());
            self.problems.push(Problem::new(Severity::Warning, "MEM-FILE-002", at,
                format!("No call stacks for rank {r}: the database has no PYTORCH_CALLCHAINS rows (recorded with with_stack=false)")));
        }
        Ok(self)
    }

    /// Ends a DB rank with the memory events read from `OP_MEMORY`: matches and compacts as
    /// [`MemoryPass::finish`] does.
    pub fn finish_db(self, events: MemoryEventTable) -> RankMemory {
        self.conclude(events)
    }

    fn parity(&self) -> bool {
        self.opts.mode == Mode::Parity
    }

    fn fail(self, why: String) -> RankMemory {
        RankMemory::empty(self.info, RankStatus::Failed(why), self.problems)
    }

    /// The rank has no `trace_view.json`: parity drops it (`Err`, finished), default goes on
    /// without call stacks (`MEM-FILE-002`).
    pub fn no_trace(mut self) -> Result<Self, RankMemory> {
        let r = self.info.rank_id;
        let at = Position::file(self.label.as_str());
        if self.parity() {
            self.problems.push(Problem::new(
                Severity::Warning,
                "MEM-FILE-002",
                at,
                format!(
                    "Rank {r}: trace_view.json not found at {}/ASCEND_PROFILER_OUTPUT",
                    self.label
                ),
            ));
            return Err(
                self.fail("trace_view.json not found (the parity export needs the call stacks it holds, so this rank is left out)".into())
            );
        }
        self.problems.push(Problem::new(Severity::Warning, "MEM-FILE-002", at,
            format!("No call stacks for rank {r}: trace_view.json missing or recorded with with_stack=false")));
        Ok(self)
    }

    /// The mode of the call-stack index ([`MemoryPass::trace_reader`]; the byte ranges'
    /// readers, [`HostOpsReader::range`], take it too).
    pub fn trace_mode(&self) -> TraceMode {
        if self.parity() {
            TraceMode::Parity
        } else {
            TraceMode::Default
        }
    }

    /// The call-stack index consumer of the rank's `trace_view.json` pass (`file`: its path),
    /// into the rank's pools: fed the events, or the byte ranges' readers in file order
    /// ([`HostOpsReader::absorb`]).
    pub fn trace_reader(&mut self, file: &str) -> HostOpsReader<'_> {
        let mode = self.trace_mode();
        HostOpsReader::new(
            file,
            mode,
            &mut self.strings,
            &mut self.stacks,
            &mut self.problems,
        )
    }

    /// Takes the result of the trace pass (`Err`: the file could not be opened or parsed, in
    /// words). Parity fails the rank on an error (`Err`, finished); default keeps going
    /// without call stacks (`MEM-TV-004`).
    pub fn after_trace(
        mut self,
        path: &str,
        res: Result<(HostOpTable, TraceStats), (Position, String)>,
    ) -> Result<Self, RankMemory> {
        let parity = self.parity();
        match res {
            Ok((h, stats)) => {
                self.trace = TraceFacts {
                    present: true,
                    cpu_ops: stats.cpu_ops,
                    with_stack: stats.with_stack,
                };
                self.host = h;
            }
            Err((at, msg)) => {
                if parity {
                    let why = format!("trace_view.json unusable: {at}: {msg}");
                    self.problems
                        .push(Problem::new(Severity::Error, "MEM-TV-004", at, msg));
                    return Err(self.fail(why));
                }
                self.problems.push(Problem::new(
                    Severity::Error,
                    "MEM-TV-004",
                    at,
                    format!("{msg}; rows get no call stacks"),
                ));
            }
        }
        if !parity && self.trace.present && self.trace.with_stack == 0 {
            let r = self.info.rank_id;
            self.problems.push(Problem::new(Severity::Warning, "MEM-FILE-002", Position::file(path),
                format!("No call stacks for rank {r}: trace_view.json missing or recorded with with_stack=false")));
        }
        Ok(self)
    }

    /// The rank was cancelled during another file's read.
    pub fn cancelled(self) -> RankMemory {
        RankMemory::empty(self.info, RankStatus::Cancelled, self.problems)
    }

    /// Reads `operator_memory.csv` (once), matches every row to the call-stack index (§6)
    /// and compacts the result; the host-op table is dropped. `on_progress` gets the CSV's
    /// bytes read; `Break` cancels.
    pub fn finish(
        mut self,
        opener: &dyn Opener,
        on_progress: &mut dyn FnMut(&str, Progress) -> ControlFlow<()>,
    ) -> RankMemory {
        let parity = self.parity();
        let mut cancelled = false;
        let mut events = MemoryEventTable::new();
        let csv = self.csv.clone();
        let res = match opener.open(&csv.path) {
            Err(e) => Err(format!("cannot open {}: {e}", csv.path)),
            Ok(mut src) => {
                let mode = if parity {
                    CsvMode::Parity
                } else {
                    CsvMode::Default
                };
                let mut prog = |p: Progress| {
                    let f = on_progress(&csv.path, p);
                    cancelled |= f.is_break();
                    f
                };
                operator_memory::read(
                    &mut src,
                    &csv.path,
                    Some(csv.size),
                    mode,
                    &mut self.strings,
                    &mut events,
                    &mut self.problems,
                    &mut prog,
                )
                .map_err(|e| match e.kind() {
                    ParseErrorKind::Empty => format!("File is empty: {}", csv.path),
                    _ => e.to_string(),
                })
            }
        };
        match res {
            Ok(stats) if stats.stopped || cancelled => return self.cancelled(),
            Ok(_) => {}
            Err(msg) => {
                if self.problems.count("MEM-CSV-001") == 0
                    && !(parity
                        && self
                            .problems
                            .kept()
                            .iter()
                            .any(|p| p.code.starts_with("MEM-CSV")))
                {
                    self.problems.push(Problem::new(
                        Severity::Error,
                        "MEM-FILE-003",
                        Position::file(csv.path.as_str()),
                        msg.clone(),
                    ));
                }
                return self.fail(msg);
            }
        }
        self.conclude(events)
    }

    fn conclude(self, events: MemoryEventTable) -> RankMemory {
        let idx = CallStackIndex::build(&self.host);
        let matches = match_rows(&events, &self.host, &idx, &self.opts.matching);
        drop(idx);
        RankMemory::from_parts(
            self.info,
            self.strings,
            self.stacks,
            events,
            &self.host,
            &matches,
            &self.opts.user_frame,
            self.problems,
            self.trace,
        )
    }
}

/// The text of a trace read failure as memory reports it (`MEM-TV-004`).
pub fn trace_failure(path: &str, e: &crate::parse::ParseError) -> (Position, String) {
    if matches!(e.kind(), ParseErrorKind::Empty) {
        (Position::file(path), format!("File is empty: {path}"))
    } else {
        (e.position().clone(), e.kind().to_string())
    }
}

impl MemoryOptions {
    /// True when rank folder `r` is analysed under these options: the §2.2 filters select it,
    /// and not parity with a rank filter (upstream never implemented rank filtering: nothing
    /// is analysed, `MEM-RUN-002`).
    pub fn selects(&self, r: &RankFolder) -> bool {
        !(self.mode == Mode::Parity && self.selection.restricts_ranks())
            && self.selection.selects(&r.role, r.rank_id, r.source_index)
    }
}

/// The drop-level problems of a memory run over `inv` whose analysed ranks are `ranks`:
/// the inventory's notes (e.g. `MEM-DISC-001`), `MEM-RUN-002` (parity with a rank filter),
/// `MEM-RUN-001` when no rank produced rows.
pub fn run_problems(inv: &Inventory, opts: &MemoryOptions, ranks: &[&RankMemory]) -> Problems {
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
    }
    if ranks.iter().all(|r| r.is_empty()) {
        drop_problems.push(Problem::new(
            Severity::Error,
            "MEM-RUN-001",
            Position::file(""),
            "No valid data collected from any rank",
        ));
    }
    drop_problems
}
