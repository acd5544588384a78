//! `proflens cluster-ranks SUMMARY.json[.gz] [--format csv|arrow] [--out FILE]`: the per-rank
//! table of a cluster summary that `proflens reduce` wrote (docs/cluster-summary.md;
//! docs/frames.md §3.6), one line per rank, from `engine::export::cluster::ranks_table`.

use std::io::{Read, Write};
use std::path::PathBuf;

use super::anomaly::TableFormat;
use crate::engine::export::cluster::ranks_table;
use crate::protocol::cluster::ClusterSummary;

/// Arguments of `proflens cluster-ranks`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The cluster summary (`proflens reduce --out`; gzip-compressed or not).
    pub input: PathBuf,
    /// CSV (default) or one Arrow IPC stream (typed columns).
    #[arg(long, value_enum)]
    pub format: Option<TableFormat>,
    /// Write here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Options of every command (`--strict`).
    #[command(flatten)]
    pub common: super::CommonArgs,
}

fn read(path: &std::path::Path) -> Result<ClusterSummary, String> {
    let raw = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(raw.as_slice())
            .read_to_end(&mut out)
            .map_err(|e| format!("{}: not a readable gzip file: {e}", path.display()))?;
        out
    } else {
        raw
    };
    ClusterSummary::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs the subcommand; returns the exit code.
pub fn run(args: Args) -> i32 {
    let summary = match read(&args.input) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("proflens cluster-ranks: {e}");
            return super::EXIT_NOTHING;
        }
    };
    let mut w: Box<dyn Write> = match &args.out {
        Some(p) => match std::fs::File::create(p) {
            Ok(f) => Box::new(std::io::BufWriter::new(f)),
            Err(e) => {
                eprintln!("proflens cluster-ranks: cannot create {}: {e}", p.display());
                return super::EXIT_NOTHING;
            }
        },
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let wrote = match args.format.unwrap_or(TableFormat::Csv) {
        TableFormat::Csv => ranks_table::write_ranks(&summary, &mut w).map_err(|e| e.to_string()),
        TableFormat::Arrow => {
            super::arrow::write_stream(&ranks_table::ranks_frame(&summary), &mut w)
        }
    }
    .and_then(|_| w.flush().map_err(|e| e.to_string()));
    if let Err(e) = wrote {
        eprintln!("proflens cluster-ranks: cannot write the table: {e}");
        return super::EXIT_NOTHING;
    }
    let problems = summary.problems_total.errors + summary.problems_total.warnings;
    super::exit_code(!summary.ranks.is_empty(), problems, args.common.strict)
}
