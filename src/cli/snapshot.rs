//! `proflens snapshot <file> [--json FILE] [--report FILE] [--table peaks|curves [--format
//! csv|arrow] [--out FILE]] [options]` (torch-snapshot.md §7.9; docs/frames.md §3.4).
//!
//! Wires the engine to files: reads one snapshot pickle, writes the JSON and the
//! Markdown report, prints a short summary and the problems on stderr.

use std::ops::ControlFlow;
use std::path::PathBuf;

use crate::engine::read::snapshot::{run as run_snapshot, SnapshotOptions};
use crate::protocol::snapshot::SnapshotSettingsDto;
use crate::report::snapshot_md;

use super::fs_opener::FsOpener;

/// Arguments of `proflens snapshot`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The snapshot pickle (`torch.cuda.memory._dump_snapshot()` output), or the same data as JSON.
    pub input: PathBuf,
    /// Write the JSON result here (`-` for stdout).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the Markdown report to this file, or into this folder as `MEM_PEAK_ANALYSIS_<name>.md`
    /// (no report is written without this option).
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Number of peaks to report (besides global max, OOM and end state).
    #[arg(long, default_value_t = 6)]
    pub top_n: usize,
    /// Contributors listed per peak.
    #[arg(long, default_value_t = 15)]
    pub top_contributors: usize,
    /// Two peaks whose heights differ by less than this percentage and share most of their live set are one.
    #[arg(long, default_value_t = 3.0)]
    pub dedup_pct: f64,
    /// Minimum separation between peaks, in ms (needs time_us).
    #[arg(long, default_value_t = 0.0)]
    pub min_sep_ms: f64,
    /// Minimum prominence of a peak, percent of the global maximum.
    #[arg(long, default_value_t = 1.0)]
    pub min_prominence_pct: f64,
    /// Curve the peaks are found on: allocated | active | reserved.
    #[arg(long, default_value = "active")]
    pub curve: String,
    /// Group contributors by the first K project frames instead of the site.
    #[arg(long, default_value_t = 0)]
    pub frame_depth: usize,
    /// Project root: frames under it count as project code; paths are shown relative to it.
    #[arg(long)]
    pub project_root: Option<String>,
    /// Project prefix that counts as project code even under site-packages / torch / stdlib (repeatable).
    #[arg(long)]
    pub include_prefix: Vec<String>,
    /// Extra library prefix: frames under it never count as project code (repeatable).
    #[arg(long)]
    pub exclude_prefix: Vec<String>,
    /// Link style: vscode | cursor | github | file | none.
    #[arg(long, default_value = "vscode")]
    pub link_style: String,
    /// Repository URL for github links.
    #[arg(long)]
    pub repo_url: Option<String>,
    /// Commit (or branch) for github links.
    #[arg(long)]
    pub commit: Option<String>,
    /// Path-prefix mapping RECORDED=LOCAL (repeatable), e.g. /workspace/=/home/me/proj/.
    #[arg(long = "map")]
    pub map: Vec<String>,
    /// Write this table instead of the summary (docs/frames.md §3.4): `peaks` (one line per
    /// reported point) or `curves` (the three levels after every entry).
    #[arg(long, value_enum)]
    pub table: Option<Table>,
    /// Format of `--table`: CSV (default) or one Arrow IPC stream (typed columns).
    #[arg(long, value_enum, requires = "table")]
    pub format: Option<super::anomaly::TableFormat>,
    /// Write `--table` here instead of stdout.
    #[arg(long, requires = "table")]
    pub out: Option<PathBuf>,
    /// The trace entry of `--table live|contributors` (the live set after it).
    #[arg(long, requires = "table")]
    pub entry: Option<usize>,
    /// The device of `--table live|contributors` (default: the first analysed device).
    #[arg(long, requires = "table")]
    pub device: Option<u32>,
    /// Options of every command (`--strict`).
    #[command(flatten)]
    pub common: super::CommonArgs,
}

/// A table of `--table`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// One line per reported point (global peak, peaks, OOMs, end state) of every device.
    Peaks,
    /// Allocated / active / reserved bytes after every trace entry of every analysed device.
    Curves,
    /// Every tensor live after `--entry` (active semantics), largest first.
    Live,
    /// Every site of the tensors live after `--entry`, largest first.
    Contributors,
}

/// Writes `table` of `run` (its JSON document `json`) as `format` to `--out` or stdout.
fn write_table(
    args: &Args,
    table: Table,
    run: &crate::engine::read::snapshot::SnapshotRun,
    json: &crate::report::snapshot_json::SnapshotJson,
) -> Result<(), String> {
    use super::anomaly::TableFormat;
    use crate::report::snapshot_rows as rows;
    use std::io::Write;
    let mut w: Box<dyn Write> = match &args.out {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let (snap, devs) = (&run.snapshot, &run.devices);
    let format = args.format.unwrap_or(TableFormat::Csv);
    if matches!(table, Table::Live | Table::Contributors) {
        use crate::engine::export::snapshot_live as live;
        let entry = args
            .entry
            .ok_or("--table live and contributors need --entry N")?;
        let settings = settings(args)?;
        let opts = SnapshotOptions::from_settings(&settings)?;
        let (dev, l) = live::live_at(run, &opts, &settings, args.device, entry)?;
        match (table, format) {
            (Table::Live, TableFormat::Csv) => live::write_live(dev, &l, &mut w),
            (_, TableFormat::Csv) => live::write_contributors(dev, &l, &mut w),
            (Table::Live, TableFormat::Arrow) => {
                super::arrow::write_stream(&live::live_frame(dev, &l), &mut w)
                    .map_err(std::io::Error::other)
            }
            (_, TableFormat::Arrow) => {
                super::arrow::write_stream(&live::contributors_frame(dev, &l), &mut w)
                    .map_err(std::io::Error::other)
            }
        }
        .map_err(|e| e.to_string())?;
        return w.flush().map_err(|e| e.to_string());
    }
    match (table, format) {
        (Table::Peaks, TableFormat::Csv) => {
            rows::write_peaks(json, &mut w).map_err(|e| e.to_string())
        }
        (Table::Curves, TableFormat::Csv) => {
            rows::write_curves(snap, devs, &mut w).map_err(|e| e.to_string())
        }
        (Table::Peaks, TableFormat::Arrow) => {
            super::arrow::write_stream(&rows::peaks_frame(json), &mut w)
        }
        (Table::Curves, TableFormat::Arrow) => {
            super::arrow::write_stream(&rows::curves_frame(snap, devs), &mut w)
        }
        (Table::Live | Table::Contributors, _) => Ok(()),
    }?;
    w.flush().map_err(|e| e.to_string())
}

fn options(a: &Args) -> Result<SnapshotOptions, String> {
    SnapshotOptions::from_settings(&settings(a)?)
}

fn settings(a: &Args) -> Result<SnapshotSettingsDto, String> {
    let mut path_map = Vec::new();
    for m in &a.map {
        let (from, to) = m
            .split_once('=')
            .ok_or_else(|| format!("--map: expected RECORDED=LOCAL, got {m:?}"))?;
        path_map.push((from.to_string(), to.to_string()));
    }
    Ok(SnapshotSettingsDto {
        top_n: a.top_n as u32,
        top_contributors: a.top_contributors as u32,
        dedup_pct: a.dedup_pct,
        min_sep_ms: a.min_sep_ms,
        min_prominence_pct: a.min_prominence_pct,
        curve: a.curve.clone(),
        frame_depth: a.frame_depth as u32,
        project_root: a.project_root.clone(),
        include_prefix: a.include_prefix.clone(),
        exclude_prefix: a.exclude_prefix.clone(),
        link_style: a.link_style.clone(),
        repo_url: a.repo_url.clone(),
        commit: a.commit.clone(),
        path_map,
    })
}

/// Runs the subcommand; returns the exit code.
pub fn run(args: Args) -> i32 {
    let opts = match options(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("proflens snapshot: {e}");
            return super::EXIT_NOTHING;
        }
    };
    let (opener, files) = match FsOpener::walk(&args.input) {
        Ok(x) => x,
        Err(e) => {
            eprintln!(
                "proflens snapshot: cannot read {}: {e}",
                args.input.display()
            );
            return super::EXIT_NOTHING;
        }
    };
    let mut n_problems = super::print_walk_problems(&opener);
    let Some(file) = files.first().filter(|_| files.len() == 1) else {
        eprintln!(
            "proflens snapshot: expected one snapshot file, got {} files under {}",
            files.len(),
            args.input.display()
        );
        return super::EXIT_NOTHING;
    };
    let result = run_snapshot(&opener, file, &opts, &mut |_| ControlFlow::Continue(()));
    let run = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("proflens snapshot: {e}");
            return super::EXIT_NOTHING;
        }
    };
    let json = run.json(&opts.report);
    if let Some(p) = &args.json {
        let text = match run.json_text(&opts.report) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("proflens snapshot: {e}");
                return super::EXIT_NOTHING;
            }
        };
        if let Err(e) = super::write_out(p, &text) {
            eprintln!("proflens snapshot: {e}");
            return super::EXIT_NOTHING;
        }
    }
    if let Some(p) = &args.report {
        let p = if p.is_dir() {
            p.join(snapshot_md::file_name(&file.path))
        } else {
            p.clone()
        };
        if let Err(e) = super::write_out(&p, &snapshot_md::render(&json)) {
            eprintln!("proflens snapshot: {e}");
            return super::EXIT_NOTHING;
        }
    }
    if let Some(table) = args.table {
        if let Err(e) = write_table(&args, table, &run, &json) {
            eprintln!("proflens snapshot: cannot write the {table:?} table: {e}");
            return super::EXIT_NOTHING;
        }
    }
    for d in &json.devices {
        let g = d.points.first();
        eprintln!(
            "device {}: {} entries, peak active {} at entry {}, {} peaks reported",
            d.device,
            d.entries,
            snapshot_md::exact(d.max_active.bytes),
            d.max_active.index.map_or("—".into(), |i| i.to_string()),
            d.points.iter().filter(|p| p.kind.ends_with("peak")).count()
        );
        let _ = g;
    }
    n_problems += super::print_problems(&run.problems);
    super::exit_code(true, n_problems, args.common.strict)
}
