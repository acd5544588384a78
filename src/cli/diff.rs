//! `proflens diff A B [--json FILE] [--md FILE] [--table ops|steps|sites [--format csv|arrow]]`:
//! * two snapshot pickles (or two devices of one file) compared per device — global peak, end
//!   state and the live bytes per site at each — as JSON
//!   ([`crate::report::snapshot_diff::DiffJson`]) and Markdown; each side is read and analysed
//!   once, exactly as `proflens snapshot` does; with the matched peaks, and with `--overlay`
//!   both sides' curves on one axis ([`crate::report::snapshot_overlay`]);
//! * anything else (two GPU traces, two rank folders, two runs): [`super::diff_runs`].

use std::ops::ControlFlow;
use std::path::PathBuf;

use crate::engine::export::compare::{snapshot_diff, snapshot_side};
use crate::engine::read::snapshot::{run as run_snapshot, SnapshotOptions, SnapshotRun};
use crate::protocol::snapshot::SnapshotSettingsDto;
use crate::report::snapshot_diff::render_md;
use crate::report::snapshot_overlay::{add_overlays, OverlayOptions};

use super::anomaly::TableFormat;
use super::fs_opener::FsOpener;

/// Arguments of `proflens diff`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Side A: a snapshot pickle, a GPU trace (`*.json[.gz]`), a rank folder or a run folder.
    pub a: PathBuf,
    /// Side B: the same kind of input as A.
    pub b: PathBuf,
    /// Write the JSON comparison here (`-` for stdout).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the Markdown comparison here (`-` for stdout).
    #[arg(long)]
    pub md: Option<PathBuf>,
    /// Curve the peak and end are read on: allocated | active | reserved.
    #[arg(long, default_value = "active")]
    pub curve: String,
    /// Group live bytes by the first K project frames instead of the site.
    #[arg(long, default_value_t = 0)]
    pub frame_depth: usize,
    /// Project root: frames under it count as project code; paths are shown relative to it.
    #[arg(long)]
    pub project_root: Option<String>,
    /// Link style of the Markdown: vscode | cursor | github | file | none.
    #[arg(long, default_value = "vscode")]
    pub link_style: String,
    /// Compare only this device of side A (with `--b-device`: two devices, e.g. of one file).
    #[arg(long)]
    pub a_device: Option<u32>,
    /// Compare only this device of side B.
    #[arg(long)]
    pub b_device: Option<u32>,
    /// Snapshots: add both sides' allocated and reserved curves on one axis to the JSON
    /// (`devices[].overlay`), downsampled to this many columns (min/max per column).
    #[arg(long, value_name = "COLUMNS")]
    pub overlay: Option<usize>,
    /// Snapshots, with `--overlay`: the axis, `index` (entry index) or `time` (ms since each
    /// side's first time_us).
    #[arg(long, default_value = "index")]
    pub overlay_axis: String,
    /// Snapshots, with `--overlay`: align both sides at the first start of this annotation
    /// (default: at their first entries).
    #[arg(long, value_name = "ANNOTATION")]
    pub align: Option<String>,
    /// Rows listed per table in the Markdown (the JSON has all of them).
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Traces and runs: compare the ops of the N-th step of each side (1 = the first, the
    /// default, as HTA's TraceDiff).
    #[arg(long, value_name = "N")]
    pub step: Option<usize>,
    /// Traces and runs: compare the ops of the whole captures instead of one step.
    #[arg(long)]
    pub all_steps: bool,
    /// Runs: compare rank N of each side in the ops and steps tables (default: the first rank).
    #[arg(long, value_name = "N")]
    pub rank: Option<i64>,
    /// Write this delta table of the `--json` document to stdout (docs/frames.md §3.9): `ops`
    /// or `steps` (traces, rank folders, runs), `sites` (snapshots).
    #[arg(long, value_enum)]
    pub table: Option<DiffTable>,
    /// Format of `--table`: CSV (default) or one Arrow IPC stream (typed columns).
    #[arg(long, value_enum, requires = "table")]
    pub format: Option<TableFormat>,
    /// Options of every command (`--strict`).
    #[command(flatten)]
    pub common: super::CommonArgs,
}

/// A table of `--table`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffTable {
    /// One line per op or kernel name of either side (`ops[]`).
    Ops,
    /// One line per step pair (`steps[]`).
    Steps,
    /// One line per site at each device's peak and end (`sites_at_peak`, `sites_at_end`).
    Sites,
}

/// Writes `lines` under `columns` as `--format` to stdout.
pub fn write_table(
    args: &Args,
    columns: &[(&str, crate::report::frame::Kind)],
    lines: Vec<Vec<crate::report::frame::Cell<'_>>>,
) -> Result<(), String> {
    use std::io::Write;
    let mut w = std::io::BufWriter::new(std::io::stdout().lock());
    let format = args.format.unwrap_or(TableFormat::Csv);
    super::anomaly::write_lines(columns, lines, format, &mut w)?;
    w.flush()
        .map_err(|e| format!("cannot write the table: {e}"))
}

/// The two sides of `proflens diff`, resolved once before either is read: each path made
/// absolute (as given when it cannot be resolved), whether both are one file (read once then),
/// and, when the two files or folders have the same name, each side's name as the documents
/// name it ([`crate::base::side_labels::side_labels`]) for the line before its problems.
pub struct Sides {
    /// Side A's full path.
    pub a: String,
    /// Side B's full path.
    pub b: String,
    /// Both paths resolve to one file.
    pub same_file: bool,
    names: Option<(String, String)>,
}

impl Sides {
    /// The sides `a` and `b` as given on the command line.
    pub fn of(a: &std::path::Path, b: &std::path::Path) -> Sides {
        let (ca, cb) = (a.canonicalize().ok(), b.canonicalize().ok());
        let same_file = matches!((&ca, &cb), (Some(x), Some(y)) if x == y);
        let full = |c: Option<PathBuf>, p: &std::path::Path| {
            c.unwrap_or_else(|| p.to_path_buf()).display().to_string()
        };
        let (pa, pb) = (full(ca, a), full(cb, b));
        let name = |p: &std::path::Path| {
            p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        };
        let (na, nb) = (name(a), name(b));
        let names = (na == nb && pa != pb)
            .then(|| crate::base::side_labels::side_labels(&na, &pa, &nb, &pb));
        Sides {
            a: pa,
            b: pb,
            same_file,
            names,
        }
    }

    /// Before side A's (`side_a`) or B's problems: `A: run1/trace.json`, when both files have
    /// the same name; nothing when the names differ.
    pub fn heading(&self, side_a: bool) {
        match &self.names {
            Some((la, _)) if side_a => eprintln!("A: {la}"),
            Some((_, lb)) => eprintln!("B: {lb}"),
            None => {}
        }
    }
}

/// Reads and analyses one side; prints its problems. `Err` is the message for stderr.
fn side(path: &PathBuf, opts: &SnapshotOptions, problems: &mut u64) -> Result<SnapshotRun, String> {
    let (opener, files) =
        FsOpener::walk(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    *problems += super::print_walk_problems(&opener);
    let file = match files.as_slice() {
        [f] if path.is_file() => f.clone(),
        _ => {
            return Err(format!(
                "{} is a folder ({} files), not a snapshot file: compare it with another folder \
                 or trace",
                path.display(),
                files.len()
            ))
        }
    };
    let run = run_snapshot(&opener, &file, opts, &mut |_| ControlFlow::Continue(()))
        .map_err(|e| e.to_string())?;
    *problems += super::print_problems(&run.problems);
    Ok(run)
}

/// Writes the comparison `j` as pretty JSON to `--json` and as Markdown (`render`) to `--md`,
/// when given; `Err` is the message for stderr.
pub fn write_documents<T: serde::Serialize>(
    args: &Args,
    j: &T,
    render: impl FnOnce(&T) -> String,
) -> Result<(), String> {
    if let Some(p) = &args.json {
        let text =
            serde_json::to_string_pretty(j).map_err(|e| format!("JSON encoding failed: {e}"))?;
        super::write_out(p, &text)?;
    }
    if let Some(p) = &args.md {
        super::write_out(p, &render(j))?;
    }
    Ok(())
}

/// Runs the subcommand; returns the exit code.
pub fn run(args: Args) -> i32 {
    let fail = |e: String| {
        eprintln!("proflens diff: {e}");
        super::EXIT_NOTHING
    };
    match (
        super::diff_runs::is_snapshot(&args.a),
        super::diff_runs::is_snapshot(&args.b),
    ) {
        (false, false) => {
            let snapshot_only = [
                ("--a-device", args.a_device.is_some()),
                ("--b-device", args.b_device.is_some()),
                ("--curve", args.curve != "active"),
                ("--frame-depth", args.frame_depth != 0),
                ("--overlay", args.overlay.is_some()),
                ("--align", args.align.is_some()),
                ("--table sites", args.table == Some(DiffTable::Sites)),
            ];
            if let Some((name, _)) = snapshot_only.iter().find(|o| o.1) {
                return fail(format!(
                    "{name} applies to snapshot files; {} and {} are traces, rank folders or runs",
                    args.a.display(),
                    args.b.display()
                ));
            }
            return super::diff_runs::run(&args);
        }
        (true, false) | (false, true) => {
            return fail(format!(
                "{} and {} are not the same kind of input: compare two snapshot files, or two \
                 traces, rank folders or runs",
                args.a.display(),
                args.b.display()
            ))
        }
        (true, true) => {
            let trace_only = [
                ("--step", args.step.is_some()),
                ("--all-steps", args.all_steps),
                ("--rank", args.rank.is_some()),
                (
                    "--table ops / steps",
                    matches!(args.table, Some(DiffTable::Ops | DiffTable::Steps)),
                ),
            ];
            if let Some((name, _)) = trace_only.iter().find(|o| o.1) {
                return fail(format!(
                    "{name} applies to traces, rank folders and runs, not to snapshot files \
                     (use --a-device / --b-device to choose devices)"
                ));
            }
        }
    }
    let curve: &'static str = match args.curve.as_str() {
        "allocated" => "allocated",
        "active" => "active",
        "reserved" => "reserved",
        c => {
            return fail(format!(
                "--curve: expected allocated, active or reserved, got {c:?}"
            ))
        }
    };
    let opts = match SnapshotOptions::from_settings(&SnapshotSettingsDto {
        curve: curve.to_string(),
        frame_depth: args.frame_depth as u32,
        project_root: args.project_root.clone(),
        link_style: args.link_style.clone(),
        ..Default::default()
    }) {
        Ok(o) => o,
        Err(e) => return fail(e),
    };
    let overlay = match (args.overlay, args.overlay_axis.as_str()) {
        (_, x) if x != "index" && x != "time" => {
            return fail(format!("--overlay-axis: expected index or time, got {x:?}"))
        }
        (Some(0), _) => return fail("--overlay counts columns: give at least 1".into()),
        (None, _) if args.align.is_some() || args.overlay_axis != "index" => {
            return fail("--align and --overlay-axis apply with --overlay COLUMNS".into())
        }
        (cols, x) => cols.map(|columns| OverlayOptions {
            columns,
            time_axis: x == "time",
            align: args.align.clone(),
            range: None,
        }),
    };
    let mut problems = 0;
    let sides = Sides::of(&args.a, &args.b);
    sides.heading(true);
    let a = match side(&args.a, &opts, &mut problems) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    // The same file on both sides (two of its devices) is read and analysed once.
    let b_run;
    let b = if sides.same_file {
        &a
    } else {
        sides.heading(false);
        b_run = match side(&args.b, &opts, &mut problems) {
            Ok(r) => r,
            Err(e) => return fail(e),
        };
        &b_run
    };
    for (dev, r, name) in [(args.a_device, &a, "A"), (args.b_device, b, "B")] {
        if let Some(d) = dev.filter(|d| !r.devices.iter().any(|x| x.device == *d)) {
            let have: Vec<String> = r.devices.iter().map(|x| x.device.to_string()).collect();
            return fail(format!(
                "side {name} has no device {d} (devices: {})",
                if have.is_empty() {
                    "none".into()
                } else {
                    have.join(", ")
                }
            ));
        }
    }
    let (va, vb) = (
        snapshot_side(&a, args.a_device),
        snapshot_side(b, args.b_device),
    );
    let mut j = snapshot_diff(
        &a,
        b,
        (&sides.a, &sides.b),
        (args.a_device, args.b_device),
        curve,
        &opts.report,
    );
    if let Some(o) = &overlay {
        if let Err(e) = add_overlays(&mut j, &va, &vb, o) {
            return fail(e);
        }
    }
    if let Err(e) = write_documents(&args, &j, |j| render_md(j, args.top)) {
        return fail(e);
    }
    if args.table.is_some() {
        use crate::report::diff_tables as t;
        if let Err(e) = write_table(&args, t::SITE_COLUMNS, t::site_lines(&j)) {
            return fail(e);
        }
    }
    let h = |n: u64| crate::base::format::bytes_i(n as i64);
    for d in &j.devices {
        let moved = d
            .sites_at_peak
            .iter()
            .filter(|s| s.change != "same")
            .count();
        eprintln!(
            "device {}: global peak {} → {} ({:+} bytes), end {} → {} ({:+} bytes); {} of {} sites at the peak changed",
            d.device,
            h(d.peak.a_bytes),
            h(d.peak.b_bytes),
            d.peak.delta_bytes,
            h(d.end.a_bytes),
            h(d.end.b_bytes),
            d.end.delta_bytes,
            moved,
            d.sites_at_peak.len()
        );
    }
    if args.json.is_none() && args.md.is_none() && args.table.is_none() {
        eprintln!("(write the full comparison with --json FILE and/or --md FILE)");
    }
    super::exit_code(true, problems, args.common.strict)
}
