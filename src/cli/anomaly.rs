//! `proflens anomaly <folder> [--out FILE] [--report-dir DIR] [--script-compatible]`:
//! steps, device bubbles and anomalies per rank (anomaly.md). Writes the JSON (an
//! array over ranks) to `--out` or stdout and, with `--report-dir`, the
//! human-readable anomaly report and the model-architecture report per rank.

use std::io::Write;
use std::ops::ControlFlow;
use std::path::PathBuf;

use super::fs_opener::FsOpener;
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::engine::anomaly::{analyse_all, RankAnalysis};
use crate::ingest::inventory::Inventory;
use crate::report::{anomaly_json, anomaly_md, arch_md};

/// Arguments of `proflens anomaly`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A profiling folder (holding `*_ascend_pt` rank folders) or one rank folder.
    pub input: PathBuf,
    /// Write the JSON array here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write `anomaly_report_<dir>[_rank<N>].md` and `model_architecture_report_<dir>[_rank<N>].md` here.
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
    /// Follow the skill's reference script where it differs from the rulebook (anomaly.md §0.3).
    #[arg(long)]
    pub script_compatible: bool,
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
    let mut inv = Inventory::from_paths(&files);
    crate::parse::metadata::read_side_files(&mut inv, &opener);
    let cfg = if args.script_compatible {
        AnomalyConfig::script_compatible()
    } else {
        AnomalyConfig::spec_defaults()
    };
    let (ranks, cross) = match analyse_all(&inv, &opener, &cfg, &mut |_| ControlFlow::Continue(()))
    {
        Ok(x) => x,
        Err(_) => return super::EXIT_NOTHING,
    };
    if ranks.is_empty() {
        eprintln!("proflens anomaly: no rank folder with kernel_details.csv, op_summary*.csv or trace_view.json under {}", args.input.display());
        for n in &inv.notes {
            eprintln!("  {}: {}", n.file, n.message);
        }
        return super::EXIT_NOTHING;
    }
    let json: Vec<_> = ranks
        .iter()
        .map(|r| anomaly_json::build(&r.kernels, &r.result, &r.meta, &cfg))
        .collect();
    // Streamed to the destination: the JSON of a 1M-kernel rank is hundreds of MB.
    let wrote = match &args.out {
        Some(p) => std::fs::File::create(p)
            .map_err(|e| format!("{}: {e}", p.display()))
            .and_then(|f| write_json(std::io::BufWriter::new(f), &json)),
        None => write_json(std::io::BufWriter::new(std::io::stdout().lock()), &json),
    };
    if let Err(e) = wrote {
        eprintln!("proflens anomaly: cannot write JSON: {e}");
        return super::EXIT_NOTHING;
    }
    if let Some(dir) = &args.report_dir {
        if let Err(e) = write_reports(dir, &inv, &ranks, &cross, &cfg) {
            eprintln!("proflens anomaly: cannot write reports: {e}");
            return super::EXIT_NOTHING;
        }
    }
    let mut n_problems = 0;
    for r in &ranks {
        for p in r.problems.kept() {
            if p.severity >= crate::base::Severity::Warning {
                eprintln!("{} [{}] {}", p.at, p.code, p.message);
                n_problems += 1;
            }
        }
    }
    if n_problems > 0 {
        super::EXIT_PROBLEMS
    } else {
        super::EXIT_CLEAN
    }
}

fn write_json<W: Write>(mut w: W, json: &[anomaly_json::wire::RankJson]) -> Result<(), String> {
    serde_json::to_writer_pretty(&mut w, json).map_err(|e| e.to_string())?;
    w.write_all(b"\n").map_err(|e| e.to_string())?;
    w.flush().map_err(|e| e.to_string())
}

fn write_reports(
    dir: &std::path::Path,
    inv: &Inventory,
    ranks: &[RankAnalysis],
    cross: &[crate::analysis::anomaly::cross_rank::RankRow],
    cfg: &AnomalyConfig,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let root = inv.root_label();
    let multi = ranks.len() > 1;
    for (i, r) in ranks.iter().enumerate() {
        let base = if root == "the dropped files" || root.is_empty() {
            r.dir_name.clone()
        } else {
            root.clone()
        };
        let suffix = if multi {
            format!("_rank{}", r.meta.rank_id.unwrap_or(i as i64))
        } else {
            String::new()
        };
        let md = anomaly_md::render(&r.kernels, &r.result, &r.meta, &r.cross_check, cross, cfg);
        let facts = crate::analysis::architecture::analyse(&r.kernels, cfg);
        let arch = arch_md::render(&r.kernels, &facts, &r.result, &r.meta, &r.comm_ops, &base);
        let a = dir.join(format!("anomaly_report_{base}{suffix}.md"));
        let m = dir.join(format!("model_architecture_report_{base}{suffix}.md"));
        std::fs::write(&a, md)?;
        std::fs::write(&m, arch)?;
        eprintln!("wrote {} and {}", a.display(), m.display());
    }
    Ok(())
}
