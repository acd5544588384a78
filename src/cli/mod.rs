//! Native edge: argument parsing (clap), the `std::fs` opener, writing files,
//! exit codes. One submodule per subcommand; each only wires the engine to files.

use clap::{Parser, Subcommand};

pub mod analyze;
pub mod anomaly;
mod arrow;
pub mod cluster_ranks;
pub mod comm;
pub mod diff;
pub mod diff_runs;
pub mod fs_opener;
pub mod memory;
pub mod reduce;
pub mod snapshot;
pub mod summarize;
pub mod targets;

/// Exit code: something was analysed (warnings included, unless `--strict`).
pub const EXIT_CLEAN: i32 = 0;
/// Exit code with `--strict` only: results written, but with warnings or errors (on stderr).
pub const EXIT_PROBLEMS: i32 = 1;
/// Exit code: nothing could be analysed, or bad usage.
pub const EXIT_NOTHING: i32 = 2;

/// The exit-code contract of every command, shown at the end of each `--help`.
pub const EXIT_CODES_HELP: &str = "Exit codes (every command):
  0  something was analysed; warnings and errors about parts of the input are on stderr
  1  only with --strict: something was analysed, but with at least one warning or error
  2  nothing could be analysed (no usable input, unreadable input, bad usage, write failure)";

/// Options every command has.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct CommonArgs {
    /// Exit with 1 when anything was analysed with warnings or errors (default: 0).
    #[arg(long)]
    pub strict: bool,
}

/// The one exit-code contract ([`EXIT_CODES_HELP`]): [`EXIT_NOTHING`] when nothing was
/// analysed; else [`EXIT_PROBLEMS`] when `strict` and at least one problem of severity
/// warning or error was reported; else [`EXIT_CLEAN`].
pub fn exit_code(analysed: bool, warnings: u64, strict: bool) -> i32 {
    if !analysed {
        EXIT_NOTHING
    } else if strict && warnings > 0 {
        EXIT_PROBLEMS
    } else {
        EXIT_CLEAN
    }
}

/// Prints the walk's problems (unreadable folders, broken links, …) to stderr in the
/// commands' problem format; returns how many there were (all are warnings).
pub fn print_walk_problems(opener: &fs_opener::FsOpener) -> u64 {
    for p in opener.walk_problems() {
        print_problem(p);
    }
    opener.walk_problems().len() as u64
}

/// Prints every kept problem of `problems` to stderr; returns how many count against
/// `--strict`: kept warnings and errors, plus every problem beyond the kept ones.
pub fn print_problems(problems: &crate::base::Problems) -> u64 {
    let mut n = 0;
    for p in problems.kept() {
        print_problem(p);
        if p.severity >= crate::base::Severity::Warning {
            n += 1;
        }
    }
    n + problems.total() - problems.kept().len() as u64
}

/// Prints `problems` indented under a command's "nothing to analyse" line, one a line:
/// `  <file>: <message>`, or the message alone when it names no file.
pub fn print_indented(problems: &[crate::base::Problem]) {
    for p in problems {
        match p.at.to_string() {
            at if at.is_empty() => eprintln!("  {}", p.message),
            at => eprintln!("  {at}: {}", p.message),
        }
    }
}

/// Why a command found nothing to read in `inv`: the inventory's notes and every file it did
/// not use with the reason (formats.md §11.1: a Chrome trace that is not a PyTorch profiler
/// trace, a file of no known kind…), as [`print_indented`] prints them.
pub fn why_nothing(inv: &crate::ingest::inventory::Inventory) -> Vec<crate::base::Problem> {
    let mut out: Vec<crate::base::Problem> = inv.notes.iter().map(|n| n.to_problem()).collect();
    out.extend(inv.not_used().iter().map(|n| n.to_problem()));
    out
}

/// `--threads N`: a whole number of at least 1 (0 threads would run nothing).
pub fn threads_arg(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("at least 1 thread is needed (leave --threads out to use every core)".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("expected a whole number of threads, got {s:?}")),
    }
}

/// Writes `text` to `path`, or to stdout when `path` is `-`; `Err` is the message for stderr.
pub fn write_out(path: &std::path::Path, text: &str) -> Result<(), String> {
    if path.as_os_str() == "-" {
        // Never `println!`: a reader that stops early (`| head`) is a write error, not a panic.
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        return out
            .write_all(text.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush())
            .map_err(|e| format!("write failed: {e}"));
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The environment variable that makes every command write its problems to stderr as JSON
/// Lines (`{"severity","code","file","line","byte","column","message"}`) instead of text:
/// the machine interface of the Python package (docs/frames.md §4).
pub const PROBLEMS_ENV: &str = "PROFLENS_PROBLEMS";

/// One problem on stderr: `<severity> <code>: <where>: <message>`, or one JSON line when
/// [`PROBLEMS_ENV`] is `jsonl`.
pub fn print_problem(p: &crate::base::Problem) {
    let sev = match p.severity {
        crate::base::Severity::Error => "error",
        crate::base::Severity::Warning => "warning",
        crate::base::Severity::Info => "info",
    };
    if std::env::var_os(PROBLEMS_ENV).is_some_and(|v| v == "jsonl") {
        let line = serde_json::json!({
            "severity": sev,
            "code": p.code,
            "file": &*p.at.file,
            "line": p.at.line,
            "byte": p.at.byte,
            "column": p.at.column.as_deref(),
            "message": p.message,
        });
        eprintln!("{line}");
        return;
    }
    let at = p.at.to_string();
    match at.is_empty() {
        // A problem of the whole input (no file to name): no empty location.
        true => eprintln!("{sev} {}: {}", p.code, p.message),
        false => eprintln!("{sev} {}: {at}: {}", p.code, p.message),
    }
}

/// proflens: streaming analysis of Ascend profiler folders and PyTorch memory snapshots.
#[derive(Parser, Debug)]
#[command(name = "proflens", version, about, after_help = EXIT_CODES_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Ascend memory events: operator_memory.csv rows (or the DB export's OP_MEMORY) matched to
    /// call stacks (ascend-memory.md, ascend-db.md).
    #[command(after_help = EXIT_CODES_HELP)]
    Memory(memory::Args),
    /// Steps, device bubbles and anomalies (anomaly.md), from the text or the DB export.
    #[command(after_help = EXIT_CODES_HELP)]
    Anomaly(anomaly::Args),
    /// Memory-snapshot peaks from a PyTorch allocator snapshot pickle (torch-snapshot.md).
    #[command(after_help = EXIT_CODES_HELP)]
    Snapshot(snapshot::Args),
    /// Communication across ranks: time and bandwidth per step, group and rank, the link
    /// matrix, slow links and slow ranks (docs/rules/communication.md).
    #[command(after_help = EXIT_CODES_HELP)]
    Comm(comm::Args),
    /// Every analysis the inputs allow, from one read per file, into one folder.
    #[command(after_help = EXIT_CODES_HELP)]
    Analyze(analyze::Args),
    /// Compare two runs: snapshots (peak, end, live bytes per site) or traces, rank folders and
    /// runs (ops per name, steps, bubbles), with deltas.
    #[command(after_help = EXIT_CODES_HELP)]
    Diff(diff::Args),
    /// The analysis targets under run roots, as JSON (docs/cluster-summary.md §1).
    #[command(after_help = EXIT_CODES_HELP)]
    Targets(targets::Args),
    /// One compact rank summary per target, as JSON Lines (docs/cluster-summary.md §2).
    #[command(after_help = EXIT_CODES_HELP)]
    Summarize(summarize::Args),
    /// Rank summary lines into one cluster summary file (docs/cluster-summary.md §3–5).
    #[command(after_help = EXIT_CODES_HELP)]
    Reduce(reduce::Args),
    /// The per-rank table of a cluster summary, as CSV or Arrow (docs/frames.md §3.6).
    #[command(after_help = EXIT_CODES_HELP)]
    ClusterRanks(cluster_ranks::Args),
}

/// Runs the CLI with `args` (without the program name); returns the process exit code
/// ([`EXIT_CLEAN`], [`EXIT_PROBLEMS`] or [`EXIT_NOTHING`], see [`exit_code`]).
pub fn main(args: Vec<String>) -> i32 {
    let cli = match Cli::try_parse_from(std::iter::once("proflens".to_string()).chain(args)) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                EXIT_NOTHING
            } else {
                EXIT_CLEAN
            };
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Command::Memory(a) => memory::run(a),
        Command::Anomaly(a) => anomaly::run(a),
        Command::Snapshot(a) => snapshot::run(a),
        Command::Analyze(a) => analyze::run(a),
        Command::Comm(a) => comm::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Targets(a) => targets::run(a),
        Command::Summarize(a) => summarize::run(a),
        Command::Reduce(a) => reduce::run(a),
        Command::ClusterRanks(a) => cluster_ranks::run(a),
    }
}
