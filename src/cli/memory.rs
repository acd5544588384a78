//! `proflens memory <folder> [--format csv|json|md|arrow] [--out FILE] [--parity]
//! [--table events|curves] [--threads N]`: the memory events of every rank folder under `<folder>`
//! (ascend-memory.md), the same bytes as the page's export, or the allocator curves per pool.
//! Problems go to stderr; exit codes follow [`super::exit_code`].

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use super::fs_opener::FsOpener;
use crate::analysis::memory_match::MatchStrategy;
use crate::base::Severity;
use crate::engine::read::memory::{MemoryOptions, Mode};
use crate::engine::read::Plan;
use crate::ingest::inventory::Inventory;
use crate::ingest::select::Selection;
use crate::parse::metadata::read_side_files;
use crate::report::memory_rows::{write_csv, write_json, Columns};

/// Output format.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// CSV with a header line.
    Csv,
    /// A JSON array of row objects.
    Json,
    /// The per-rank summary as Markdown.
    Md,
    /// The rows as one Arrow IPC stream (typed columns: docs/frames.md §3.1).
    Arrow,
}

/// The table written.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// The memory events (one row per `operator_memory.csv` row).
    Events,
    /// The allocator curves per pool of every rank (ascend-memory.md §9.5; docs/frames.md §3.5):
    /// `--format csv` or `arrow`.
    Curves,
}

/// Matching strategy (ascend-memory.md §6.4).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Largest ts ≤ allocation time (same selection as RL-Insight).
    NearestBefore,
    /// The innermost same-name op enclosing the allocation, else nearest-before.
    EnclosingFirst,
}

/// Arguments of `proflens memory`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Dropped folder (run root, one rank folder, ASCEND_PROFILER_OUTPUT) or a single file.
    pub input: PathBuf,
    /// Output format (default: csv; on a terminal without --format or --out, a short summary).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// The table to write: the events (default) or the allocator curves per pool.
    #[arg(long, value_enum, default_value = "events")]
    pub table: Table,
    /// Write to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// RL-Insight parity: upstream parsing and failures, only the 12 MemoryEventRow columns.
    #[arg(long)]
    pub parity: bool,
    /// Default-mode matching strategy.
    #[arg(long, value_enum, default_value = "nearest-before")]
    pub strategy: Strategy,
    /// Discard default-mode matches whose lag exceeds this many µs.
    #[arg(long, value_name = "US")]
    pub max_match_lag_us: Option<f64>,
    /// Rank ids to analyse: `all` (default), or e.g. `0,2,4-7` (with --parity only `all`).
    #[arg(long, value_name = "LIST", default_value = "all")]
    pub ranks: String,
    /// Roles to analyse, comma-separated exact names or `*` globs (default: all).
    #[arg(long, value_name = "LIST")]
    pub roles: Option<String>,
    /// Source indices to analyse per (role, rank), comma-separated (default: all).
    #[arg(long, value_name = "LIST")]
    pub sources: Option<String>,
    /// Threads to run ranks on (default: every core); a large `trace_view.json` is read on
    /// the spare ones (formats.md §8.2). The output does not depend on it.
    #[arg(long, value_name = "N", value_parser = super::threads_arg)]
    pub threads: Option<usize>,
    /// Do not print the progress line on stderr.
    #[arg(long)]
    pub quiet: bool,
    /// Options of every command (`--strict`).
    #[command(flatten)]
    pub common: super::CommonArgs,
}

/// Runs the subcommand; returns the exit code.
pub fn run(args: Args) -> i32 {
    let (opener, files) = match FsOpener::walk(&args.input) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("proflens memory: cannot read {}: {e}", args.input.display());
            return super::EXIT_NOTHING;
        }
    };
    let mut n_problems = super::print_walk_problems(&opener);
    let mut inv = Inventory::from_paths(&files);
    read_side_files(&mut inv, &opener);
    if !inv
        .ranks
        .iter()
        .any(|r| r.kind != crate::ingest::rank::CaptureKind::Kineto)
    {
        eprintln!(
            "proflens memory: {} holds no Ascend rank folder (a *_ascend_pt folder with ASCEND_PROFILER_OUTPUT/operator_memory.csv); a CUDA memory snapshot (.pickle) is read by `proflens snapshot`, a PyTorch profiler trace by `proflens anomaly`",
            args.input.display()
        );
    }
    let mut opts = MemoryOptions::default();
    if args.parity {
        opts.mode = Mode::Parity;
    }
    opts.matching.strategy = match args.strategy {
        Strategy::NearestBefore => MatchStrategy::NearestBefore,
        Strategy::EnclosingFirst => MatchStrategy::EnclosingFirst,
    };
    opts.matching.max_match_lag_us = args.max_match_lag_us;
    opts.selection.ranks = match Selection::parse_ranks(&args.ranks) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("proflens memory: --ranks: {e}");
            return super::EXIT_NOTHING;
        }
    };
    let list = |s: &Option<String>| -> Vec<String> {
        s.as_deref()
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(String::from)
            .collect()
    };
    opts.selection.roles = list(&args.roles);
    opts.selection.sources = list(&args.sources)
        .iter()
        .filter_map(|x| x.parse().ok())
        .collect();
    let plan = Plan {
        memory: Some(opts),
        ..Plan::none()
    };
    let store = super::analyze::run_store(&inv, &opener, plan, args.threads, !args.quiet);
    let (run, drop_problems) = store.memory_run(&inv).unwrap_or_default();
    let mut hidden_total = 0;
    let mut count = |p: &crate::base::Problem| {
        if p.severity >= Severity::Warning {
            n_problems += 1;
        }
        super::print_problem(p);
    };
    for p in drop_problems.kept() {
        count(p);
    }
    for r in &run.ranks {
        for p in r.problems.kept() {
            count(p);
        }
        let hidden = r.problems.total() - r.problems.kept().len() as u64;
        if hidden > 0 {
            eprintln!("… {hidden} more problems in {}", r.info.source_dir);
            // Not printed, still counted for --strict (severity unknown here: counted as warnings).
            hidden_total += hidden;
        }
    }
    n_problems += hidden_total;
    let cols = if args.parity {
        Columns::Parity
    } else {
        Columns::Full
    };
    let format = args.format.unwrap_or(Format::Csv);
    if args.table == Table::Curves && !matches!(format, Format::Csv | Format::Arrow) {
        eprintln!("proflens memory: --table curves is written as --format csv or arrow");
        return super::EXIT_NOTHING;
    }
    // On a terminal, without --format or --out: a short summary, not thousands of CSV lines.
    if args.table == Table::Events
        && args.out.is_none()
        && args.format.is_none()
        && std::io::stdout().is_terminal()
    {
        let mut out = std::io::stdout().lock();
        let res = crate::report::memory_md::write_brief(&run, &mut out).and_then(|_| {
            writeln!(
                out,
                "Full output: --format csv|json|md with --out FILE, or redirect stdout (proflens memory {} > events.csv).",
                args.input.display()
            )
        });
        if let Err(e) = res {
            eprintln!("proflens memory: write failed: {e}");
            return super::EXIT_NOTHING;
        }
        let analysed = run.ranks.iter().filter(|r| !r.is_empty()).count();
        return super::exit_code(analysed > 0, n_problems, args.common.strict);
    }
    // Nothing collected from any rank (`MEM-RUN-001`): no table, not an empty one
    // (ascend-memory.md §9.0), so no `--out` file holding only a header.
    if run.ranks.iter().all(|r| r.is_empty()) {
        eprintln!("proflens memory: nothing written: no rank folder gave memory rows");
        return super::exit_code(false, n_problems, args.common.strict);
    }
    let mut buf: Box<dyn Write> = match &args.out {
        Some(p) => match std::fs::File::create(p) {
            Ok(f) => Box::new(std::io::BufWriter::with_capacity(1 << 20, f)),
            Err(e) => {
                eprintln!("proflens memory: cannot create {}: {e}", p.display());
                return super::EXIT_NOTHING;
            }
        },
        None => Box::new(std::io::BufWriter::with_capacity(
            1 << 20,
            std::io::stdout().lock(),
        )),
    };
    use crate::report::memory_curves;
    let res = match format {
        Format::Csv if args.table == Table::Curves => memory_curves::write_curves(&run, &mut buf),
        Format::Arrow if args.table == Table::Curves => {
            let frame = memory_curves::curves_frame(&run);
            super::arrow::write_stream(&frame, &mut buf).map_err(std::io::Error::other)
        }
        Format::Csv => write_csv(&run, cols, &mut buf),
        Format::Json => write_json(&run, cols, &mut buf),
        Format::Md => crate::report::memory_md::write_summary(&run, &mut buf),
        Format::Arrow => {
            let frame = crate::report::memory_rows::frame(&run, cols);
            super::arrow::write_stream(&frame, &mut buf).map_err(std::io::Error::other)
        }
    }
    .and_then(|_| buf.flush());
    if let Err(e) = res {
        eprintln!("proflens memory: write failed: {e}");
        return super::EXIT_NOTHING;
    }
    let analysed = run.ranks.iter().filter(|r| !r.is_empty()).count();
    eprintln!(
        "proflens memory: {} rows from {analysed} of {} rank folder(s)",
        run.len(),
        inv.ranks
            .iter()
            .filter(|r| r.kind != crate::ingest::rank::CaptureKind::Kineto)
            .count()
    );
    if n_problems > 0 {
        eprintln!("proflens memory: {n_problems} problem(s) listed above");
    }
    super::exit_code(analysed > 0, n_problems, args.common.strict)
}
