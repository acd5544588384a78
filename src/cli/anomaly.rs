//! `proflens anomaly <folder> [--out FILE] [--report-dir DIR] [--script-compatible]
//! [--table steps|bubbles|kernels|gpu-time|gpu-idle|gpu-kernel-types|gpu-steps|structures
//! [--format csv|arrow]]`:
//! steps, device bubbles and anomalies per rank (anomaly.md). Writes the JSON (an
//! array over ranks) to `--out` or stdout and, with `--report-dir`, the
//! human-readable anomaly report and the model-architecture report per rank.

use std::io::IsTerminal;
use std::path::PathBuf;

use super::fs_opener::FsOpener;
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::base::{Position, Problem, Severity};
use crate::engine::export::{self, anomaly::write_json};
use crate::engine::read::RankAnalysis;
use crate::engine::{Plan, Store};
use crate::ingest::inventory::Inventory;

/// Arguments of `proflens anomaly`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A profiling folder (holding `*_ascend_pt` rank folders) or one rank folder.
    pub input: PathBuf,
    /// Write the JSON array here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write `anomaly_report_<dir>[[_<role>]_rank<N>].md` and `model_architecture_report_<dir>[[_<role>]_rank<N>].md` here
    /// (and, for GPU ranks, the kernel table `kernels_<dir>[[_<role>]_rank<N>].csv`).
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
    /// Reproduce the original analysis script exactly where its behaviour differs from the
    /// documented rules (a few tag and label rules, no host-event filtering); for comparisons.
    #[arg(long)]
    pub script_compatible: bool,
    /// Write this table of every rank instead of the JSON (docs/frames.md §3.2).
    #[arg(long, value_enum)]
    pub table: Option<Table>,
    /// Format of `--table`: CSV (default) or one Arrow IPC stream (typed columns).
    #[arg(long, value_enum, requires = "table")]
    pub format: Option<TableFormat>,
    /// Threads (default: every core): ranks run side by side, and a large GPU trace is read
    /// on the spare ones (formats.md §8.2); the output does not depend on it.
    #[arg(long, value_name = "N", value_parser = super::threads_arg)]
    pub threads: Option<usize>,
    /// Options of every command (`--strict`).
    #[command(flatten)]
    pub common: super::CommonArgs,
}

/// A table of `--table`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// One line per step of every rank (anomaly.md §6.3 metrics).
    Steps,
    /// One line per emitted bubble window of every rank (§6.4).
    Bubbles,
    /// One line per (kernel name, category) of every GPU rank (the `kernels_*.csv` table of
    /// `--report-dir`, with the rank; docs/frames.md §3.3).
    Kernels,
    /// HTA's temporal breakdown, one line per GPU rank (docs/frames.md §3.7).
    GpuTime,
    /// HTA's idle time breakdown, one line per (GPU rank, stream).
    GpuIdle,
    /// Kernel types over the whole capture, one line per (GPU rank, category).
    GpuKernelTypes,
    /// Kernel types per step, one line per (GPU rank, step).
    GpuSteps,
    /// The structure breakdown, one line per structure of every step of every rank (the
    /// JSON's `structures[]`; docs/frames.md §3.8).
    Structures,
}

/// The format of `--table`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableFormat {
    /// CSV with a header line.
    Csv,
    /// One Arrow IPC stream.
    Arrow,
}

/// Writes `table` of `ranks` as `format` to `out`.
fn write_table(
    ranks: &[&RankAnalysis],
    table: Table,
    format: TableFormat,
    out: &mut dyn std::io::Write,
) -> Result<(), String> {
    use crate::report::anomaly_csv as csv;
    match table {
        Table::Kernels => return write_kernels(ranks, format, out),
        Table::GpuTime | Table::GpuIdle | Table::GpuKernelTypes | Table::GpuSteps => {
            return write_gpu(ranks, table, format, out)
        }
        Table::Structures => return write_structures(ranks, format, out),
        Table::Steps | Table::Bubbles => {}
    }
    let rows: Vec<csv::CsvRank<'_>> = ranks
        .iter()
        .map(|r| csv::CsvRank {
            rank_id: r.meta.rank_id,
            rank_dir: &r.meta.rank_dir,
            result: &r.result,
            kernels: &r.kernels,
        })
        .collect();
    let wrote = match (table, format) {
        (Table::Steps, TableFormat::Csv) => csv::write_steps(&rows, out),
        (Table::Bubbles, TableFormat::Csv) => csv::write_bubbles(&rows, out),
        (Table::Steps, TableFormat::Arrow) => {
            return super::arrow::write_stream(&csv::steps_frame(&rows), out)
        }
        (Table::Bubbles, TableFormat::Arrow) => {
            return super::arrow::write_stream(&csv::bubbles_frame(&rows), out)
        }
        _ => return Ok(()),
    };
    wrote.map_err(|e| e.to_string())
}

/// Writes `lines` under `columns` as `format` (`report::table_csv`).
pub(super) fn write_lines(
    columns: &[(&str, crate::report::frame::Kind)],
    lines: Vec<Vec<crate::report::frame::Cell<'_>>>,
    format: TableFormat,
    out: &mut dyn std::io::Write,
) -> Result<(), String> {
    use crate::report::table_csv as t;
    match format {
        TableFormat::Csv => {
            t::write_csv(&t::names(columns), lines.into_iter(), out).map_err(|e| e.to_string())
        }
        TableFormat::Arrow => {
            super::arrow::write_stream(&t::frame_of(columns, lines.into_iter()), out)
        }
    }
}

/// Writes one of HTA's breakdown tables of every GPU rank (the `gpu` blocks of the JSON;
/// Ascend ranks have none) as `format`.
fn write_gpu(
    ranks: &[&RankAnalysis],
    table: Table,
    format: TableFormat,
    out: &mut dyn std::io::Write,
) -> Result<(), String> {
    use crate::report::gpu_breakdown_csv as g;
    let blocks = export::gpu_report::gpu_blocks(ranks);
    let rows: Vec<g::GpuRank<'_>> = ranks
        .iter()
        .zip(&blocks)
        .filter_map(|(r, b)| {
            Some(g::GpuRank {
                rank_id: r.meta.rank_id,
                rank_dir: &r.meta.rank_dir,
                gpu: b.as_ref()?,
            })
        })
        .collect();
    let (columns, lines) = match table {
        Table::GpuTime => (g::TEMPORAL_COLUMNS, g::temporal_lines(&rows)),
        Table::GpuIdle => (g::IDLE_COLUMNS, g::idle_lines(&rows)),
        Table::GpuKernelTypes => (g::KERNEL_TYPE_COLUMNS, g::kernel_type_lines(&rows)),
        _ => (g::STEP_COLUMNS, g::step_lines(&rows)),
    };
    write_lines(columns, lines, format, out)
}

/// Writes the structure breakdown of every rank (`report::structure_csv`) as `format`.
fn write_structures(
    ranks: &[&RankAnalysis],
    format: TableFormat,
    out: &mut dyn std::io::Write,
) -> Result<(), String> {
    use crate::report::structure_csv as s;
    let all: Vec<_> = ranks
        .iter()
        .map(|r| crate::report::anomaly_json::structures(&r.kernels, &r.result))
        .collect();
    let rows: Vec<s::StructureRank<'_>> = ranks
        .iter()
        .zip(&all)
        .map(|(r, x)| s::StructureRank {
            rank_id: r.meta.rank_id,
            rank_dir: &r.meta.rank_dir,
            structures: x,
        })
        .collect();
    let cols = s::columns();
    let cols: Vec<(&str, crate::report::frame::Kind)> =
        cols.iter().map(|(n, k)| (n.as_str(), *k)).collect();
    write_lines(&cols, s::lines(&rows), format, out)
}

/// Writes the kernel table per name of every GPU rank (Ascend ranks have none) as `format`.
fn write_kernels(
    ranks: &[&RankAnalysis],
    format: TableFormat,
    out: &mut dyn std::io::Write,
) -> Result<(), String> {
    use crate::report::gpu_kernels_csv as k;
    let tables: Vec<(&RankAnalysis, crate::analysis::gpu_kernels::NameTable)> = ranks
        .iter()
        .filter_map(|r| {
            let t = r.gpu.as_deref()?;
            Some((*r, crate::analysis::gpu_kernels::name_table(t)))
        })
        .collect();
    let rows: Vec<k::KernelRank<'_>> = tables
        .iter()
        .map(|(r, t)| k::KernelRank {
            rank_id: r.meta.rank_id,
            rank_dir: &r.meta.rank_dir,
            table: t,
        })
        .collect();
    match format {
        TableFormat::Csv => k::write_kernel_table(&rows, out).map_err(|e| e.to_string()),
        TableFormat::Arrow => super::arrow::write_stream(&k::kernels_frame(&rows), out),
    }
}

/// Runs the subcommand; returns the exit code.
pub fn run(args: Args) -> i32 {
    let (opener, files) = match FsOpener::walk(&args.input) {
        Ok(x) => x,
        Err(e) => {
            eprintln!(
                "proflens anomaly: cannot read {}: {e}",
                args.input.display()
            );
            return super::EXIT_NOTHING;
        }
    };
    let mut n_problems = super::print_walk_problems(&opener);
    let mut inv = Inventory::from_paths(&files);
    let heads = crate::parse::metadata::read_side_files_keeping_heads(&mut inv, &opener);
    let cfg = if args.script_compatible {
        AnomalyConfig::script_compatible()
    } else {
        AnomalyConfig::spec_defaults()
    };
    let plan = Plan {
        anomaly: Some(cfg.clone()),
        ..Plan::none()
    };
    let resume = crate::ingest::replay::Resume::new(&heads, &opener);
    let store = super::analyze::run_store(&inv, &resume, plan, args.threads, false);
    let Ok(ranks) = store.anomaly_ranks() else {
        return super::EXIT_NOTHING;
    };
    if ranks.is_empty() {
        eprintln!("proflens anomaly: no rank folder with kernel_details.csv, op_summary*.csv or trace_view.json and no PyTorch profiler trace under {}:", args.input.display());
        super::print_indented(&super::why_nothing(&inv));
        return super::EXIT_NOTHING;
    }
    // Streamed to the destination: the JSON of a 1M-kernel rank is hundreds of MB.
    // On a terminal without --out: each rank's headline instead of the full JSON.
    let terminal = args.out.is_none() && std::io::stdout().is_terminal();
    if let Some(table) = args.table {
        let format = args.format.unwrap_or(TableFormat::Csv);
        let wrote = match &args.out {
            Some(p) => std::fs::File::create(p)
                .map_err(|e| format!("{}: {e}", p.display()))
                .and_then(|f| {
                    let mut w = std::io::BufWriter::new(f);
                    write_table(&ranks, table, format, &mut w)
                        .and_then(|_| std::io::Write::flush(&mut w).map_err(|e| e.to_string()))
                }),
            None => {
                let mut w = std::io::BufWriter::new(std::io::stdout().lock());
                write_table(&ranks, table, format, &mut w)
                    .and_then(|_| std::io::Write::flush(&mut w).map_err(|e| e.to_string()))
            }
        };
        if let Err(e) = wrote {
            eprintln!("proflens anomaly: cannot write the {table:?} table: {e}");
            return super::EXIT_NOTHING;
        }
    } else if terminal {
        let mut text: Vec<String> = ranks
            .iter()
            .map(|r| crate::report::anomaly_md::headline(&r.kernels, &r.result, &r.meta))
            .collect();
        text.push(format!(
            "Full output: --out FILE for the JSON (or redirect stdout: proflens anomaly {} > anomaly.json), --report-dir DIR for the Markdown reports.",
            args.input.display()
        ));
        // A terminal that went away is not a reason to panic; the files below still count.
        let _ = super::write_out(std::path::Path::new("-"), &text.join("\n"));
    }
    let wrote = match &args.out {
        _ if args.table.is_some() => Ok(()),
        None if terminal => Ok(()),
        Some(p) => std::fs::File::create(p)
            .map_err(|e| format!("{}: {e}", p.display()))
            .and_then(|f| {
                write_json(&mut std::io::BufWriter::new(f), &ranks, &cfg).map_err(|e| e.to_string())
            }),
        None => write_json(
            &mut std::io::BufWriter::new(std::io::stdout().lock()),
            &ranks,
            &cfg,
        )
        .map_err(|e| e.to_string()),
    };
    if let Err(e) = wrote {
        eprintln!("proflens anomaly: cannot write JSON: {e}");
        return super::EXIT_NOTHING;
    }
    if let Some(dir) = &args.report_dir {
        if let Err(e) = write_reports(dir, &inv, &store) {
            eprintln!("proflens anomaly: cannot write reports: {e}");
            return super::EXIT_NOTHING;
        }
    }
    for p in inv.notes.iter().map(|n| n.to_problem()) {
        if p.severity >= Severity::Warning {
            n_problems += 1;
        }
        super::print_problem(&p);
    }
    print_unanalysed(&inv, &ranks);
    for r in &ranks {
        for p in r.problems.kept() {
            if p.severity >= Severity::Warning {
                super::print_problem(p);
                n_problems += 1;
            }
        }
    }
    // Every input refused as not a profiler trace: nothing was analysed (exit 2).
    let refused = ranks.iter().all(|r| {
        r.problems
            .count(crate::engine::read::gpu::codes::NOT_A_TRACE)
            > 0
    });
    super::exit_code(!refused, n_problems, args.common.strict)
}

/// Rank folders of the inventory that the analysis skipped (no kernel table, no trace):
/// one info line each, so no rank disappears silently (nothing was dropped: the folder has
/// no input of this analysis; a folder named like a missing file is a walk warning).
fn print_unanalysed(inv: &Inventory, ranks: &[&RankAnalysis]) {
    for r in &inv.ranks {
        if ranks.iter().any(|a| a.meta.rank_dir == r.dir) {
            continue;
        }
        super::print_problem(&Problem::new(
            Severity::Info,
            "ANOM-FILE-003",
            Position::file(r.label()),
            "rank folder not analysed: no kernel_details.csv, op_summary*.csv or trace_view.json in it",
        ));
    }
}

fn write_reports(dir: &std::path::Path, inv: &Inventory, store: &Store) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let reports =
        export::anomaly_reports(store, inv).map_err(|_| std::io::Error::other("cancelled"))?;
    for (a_name, md, m_name, arch) in reports {
        let a = dir.join(a_name);
        let m = dir.join(m_name);
        std::fs::write(&a, md)?;
        std::fs::write(&m, arch)?;
        eprintln!("wrote {} and {}", a.display(), m.display());
    }
    for (name, csv) in
        export::gpu_kernel_tables(store, inv).map_err(|_| std::io::Error::other("cancelled"))?
    {
        let p = dir.join(name);
        std::fs::write(&p, csv)?;
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}
