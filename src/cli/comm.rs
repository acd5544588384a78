//! `proflens comm <folder|files…> [--json FILE] [--csv-dir DIR] [--parity] [--step N]`:
//! communication across ranks (docs/rules/communication.md): the time and bandwidth summaries
//! per step, group and rank, the cross-rank link matrix, dropped links, slow links and slow
//! ranks. Writes the JSON document to `--json` (or stdout, `-`), one CSV per table to
//! `--csv-dir`, and a short summary on stderr. `--table NAME [--format csv|arrow] [--out FILE]`
//! writes one table instead (docs/frames.md §3.10): the same cells as the CSV of `--csv-dir`.

use std::path::PathBuf;

use super::analyze::{run_store, MultiOpener};
use crate::analysis::comm::CommOptions;
use crate::base::Severity;
use crate::engine::export::comm as export;
use crate::engine::Plan;
use crate::ingest::inventory::Inventory;
use crate::ingest::rank::CaptureKind;
use crate::parse::metadata::read_side_files_keeping_heads;

/// Arguments of `proflens comm`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A run root, rank folders, or files of rank folders (several allowed).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Write the JSON document here (`-`: stdout; default: stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one CSV per table here (created when missing).
    #[arg(long, value_name = "DIR")]
    pub csv_dir: Option<PathBuf>,
    /// Reproduce msprof-analyze: links whose end has no self link are dropped (and listed in
    /// `dropped_links`) instead of being mapped from `parallel_group_info`.
    #[arg(long)]
    pub parity: bool,
    /// Only this step (`13` or `step13`).
    #[arg(long, value_name = "N")]
    pub step: Option<String>,
    /// Write this table instead of the JSON document (docs/frames.md §3.10).
    #[arg(long, value_enum)]
    pub table: Option<Table>,
    /// Format of `--table`: CSV (default) or one Arrow IPC stream (typed columns).
    #[arg(long, value_enum, requires = "table")]
    pub format: Option<super::anomaly::TableFormat>,
    /// Write `--table` here instead of stdout.
    #[arg(long, requires = "table")]
    pub out: Option<PathBuf>,
    /// Options of every command (`--strict`).
    #[command(flatten)]
    pub common: super::CommonArgs,
}

/// A table of `--table`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// `time_summary`: one line per (step, group, rank).
    Time,
    /// `bandwidth_summary`: one line per (step, group, rank, transport).
    Bandwidth,
    /// `matrix`: the `Total Op Info` links across ranks, in global ranks.
    Matrix,
    /// `matrix_by_kind`: the links per op kind.
    MatrixByKind,
    /// `dropped_links`: the links that could not be mapped to global ranks.
    Dropped,
    /// `slow_links`: the slow-link groups.
    SlowLinks,
    /// `slow_ranks`: the slow-rank votes.
    SlowRanks,
    /// `msi_slow_ranks`: MindStudio Insight's slow rank list.
    MsiSlowRanks,
    /// `partial_ops`: ops some ranks of their group do not have.
    PartialOps,
    /// `collectives`: the GPU (NCCL) collectives.
    Collectives,
}

impl Table {
    /// The document key of the table.
    pub fn key(self) -> &'static str {
        match self {
            Table::Time => "time_summary",
            Table::Bandwidth => "bandwidth_summary",
            Table::Matrix => "matrix",
            Table::MatrixByKind => "matrix_by_kind",
            Table::Dropped => "dropped_links",
            Table::SlowLinks => "slow_links",
            Table::SlowRanks => "slow_ranks",
            Table::MsiSlowRanks => "msi_slow_ranks",
            Table::PartialOps => "partial_ops",
            Table::Collectives => "collectives",
        }
    }
}

/// Writes `table` of `rep` as `format` to `--out` or stdout.
fn write_table(
    rep: &crate::analysis::comm::CommReport,
    table: Table,
    format: super::anomaly::TableFormat,
    out: Option<&std::path::Path>,
) -> Result<(), String> {
    use std::io::Write;
    let t = crate::report::comm::table(rep, table.key()).ok_or("no such table")?;
    let mut w: Box<dyn Write> = match out {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    match format {
        super::anomaly::TableFormat::Csv => w
            .write_all(crate::report::comm::to_csv(&t).as_bytes())
            .map_err(|e| e.to_string())?,
        super::anomaly::TableFormat::Arrow => super::arrow::write_stream(&t.frame(), &mut w)?,
    }
    w.flush().map_err(|e| e.to_string())
}

/// Why `comm` has nothing to report (communication.md §6): GPU traces were read but hold no
/// collective kernel (§4.1), or no communication file could be read.
fn nothing_to_report(store: &crate::engine::Store) -> String {
    let traces = store
        .anomaly_ranks()
        .map_or(0, |r| r.iter().filter(|r| r.gpu.is_some()).count());
    if traces == 0 {
        return "no communication file could be read".into();
    }
    format!(
        "nothing to report: the {traces} PyTorch profiler trace(s) read hold no collective kernel (a kernel whose name carries nccl, rccl or cross_device_reduce; communication.md §4.1), and no rank folder has communication.json or communication_matrix.json"
    )
}

/// Runs the subcommand; returns the exit code.
pub fn run(args: Args) -> i32 {
    let (opener, files) = match MultiOpener::walk(&args.inputs) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("proflens comm: {e}");
            return super::EXIT_NOTHING;
        }
    };
    let mut inv = Inventory::from_paths(&files);
    let heads = read_side_files_keeping_heads(&mut inv, &opener);
    let opts = CommOptions {
        parity: args.parity,
        step: args.step.clone(),
    };
    let gpu = inv.ranks.iter().any(|r| r.kind == CaptureKind::Kineto);
    if !gpu && !inv.ranks.iter().any(crate::engine::read::comm::usable) {
        eprintln!(
            "proflens comm: no rank folder with communication.json or communication_matrix.json and no PyTorch profiler trace among the {} file(s) found:",
            files.len()
        );
        super::print_indented(&super::why_nothing(&inv));
        return super::EXIT_NOTHING;
    }
    // GPU ranks: their NCCL kernels come from the one read of the trace (the GPU rank pass).
    let plan = Plan {
        comm: Some(opts.clone()),
        anomaly: gpu.then(crate::analysis::anomaly_config::AnomalyConfig::spec_defaults),
        ..Plan::none()
    };
    let resume = crate::ingest::replay::Resume::new(&heads, &opener);
    let store = run_store(&inv, &resume, plan, None, false);
    let kernels = export::gpu_kernels(&store);
    let Ok((rep, problems)) = export::report(&store, &kernels, &opts) else {
        return super::EXIT_NOTHING;
    };
    let mut n_problems = opener.walk_problems + super::print_problems(&problems);
    for p in inv.notes.iter().map(|n| n.to_problem()) {
        if p.severity >= Severity::Warning {
            n_problems += 1;
            super::print_problem(&p);
        }
    }
    if rep.ranks.is_empty() && rep.collectives.is_empty() && kernels.is_empty() {
        eprintln!("proflens comm: {}", nothing_to_report(&store));
        return super::EXIT_NOTHING;
    }
    if let Some(table) = args.table {
        let format = args.format.unwrap_or(super::anomaly::TableFormat::Csv);
        if let Err(e) = write_table(&rep, table, format, args.out.as_deref()) {
            eprintln!("proflens comm: cannot write the {table:?} table: {e}");
            return super::EXIT_NOTHING;
        }
    }
    if args.table.is_none() || args.json.is_some() {
        let doc = export::json(&rep, &opts);
        let out = args.json.clone().unwrap_or_else(|| PathBuf::from("-"));
        // The document ends with one newline on stdout and in a file alike (the page's bytes).
        let text = match out.as_os_str() == "-" {
            true => doc.trim_end(),
            false => doc.as_str(),
        };
        if let Err(e) = super::write_out(&out, text) {
            eprintln!("proflens comm: {e}");
            return super::EXIT_NOTHING;
        }
    }
    if let Some(dir) = &args.csv_dir {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("proflens comm: cannot create {}: {e}", dir.display());
            return super::EXIT_NOTHING;
        }
        for t in crate::report::comm::tables(&rep) {
            let p = dir.join(format!("{}.csv", t.name));
            if let Err(e) = std::fs::write(&p, crate::report::comm::to_csv(&t)) {
                eprintln!("proflens comm: cannot write {}: {e}", p.display());
                return super::EXIT_NOTHING;
            }
        }
    }
    eprintln!(
        "comm: {} rank(s), {} group(s), {} time rows, {} matrix links, {} dropped link(s), {} slow link group(s), {} slow rank vote(s) over {} op(s) tested, {} GPU collective(s)",
        rep.ranks.len(),
        rep.groups.len(),
        rep.time_summary.len(),
        rep.matrix.len(),
        rep.dropped_links.len(),
        rep.slow_links.len(),
        rep.slow_ranks.len(),
        rep.slow_rank_ops_tested,
        rep.collectives.len()
    );
    super::exit_code(true, n_problems, args.common.strict)
}
