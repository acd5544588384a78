//! `proflens analyze <folder|files...> --out-dir DIR`: every analysis the inputs allow, from
//! one read per input file, on every core.
//!
//! Writes, from the engine's store ([`crate::engine::store::Store`]), never re-reading a file:
//! * `DIR/memory.csv` — the bytes of `proflens memory --format csv` (when a rank folder has
//!   `operator_memory.csv`);
//! * `DIR/anomaly.json` — the bytes of `proflens anomaly --out`, and `DIR/reports/` the files
//!   of its `--report-dir` (when a rank folder has a kernel source or a trace);
//! * `DIR/snapshots/<file name>.json` and `.md` per snapshot pickle — the bytes of
//!   `proflens snapshot --json` / `--report` with default options (a repeated file name gets
//!   `_2`, `_3`… before the extension).
//!
//! The single commands run the same store ([`run_store`]), so the bytes agree by construction.

use std::collections::HashMap;
use std::io::{self, IsTerminal, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use super::fs_opener::FsOpener;
use crate::base::{par, Severity};
use crate::engine::contract::Progress;
use crate::engine::export::{self, Export};
use crate::engine::parallel;
use crate::engine::{Plan, Store};
use crate::ingest::inventory::Inventory;
use crate::ingest::replay::Resume;
use crate::ingest::{InputFile, Opener};
use crate::parse::metadata::read_side_files_keeping_heads;
use crate::report::memory_rows::Columns;

/// Arguments of `proflens analyze`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Dropped folders or files: a run root, rank folders, snapshot pickles (several allowed).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Folder the results are written to (created when missing).
    #[arg(long, value_name = "DIR")]
    pub out_dir: PathBuf,
    /// Threads to run targets on (default: every core); a large GPU trace is read on the
    /// spare ones (formats.md §8.2). The output does not depend on it.
    #[arg(long, value_name = "N", value_parser = super::threads_arg)]
    pub threads: Option<usize>,
    /// Do not print progress and the written files on stderr.
    #[arg(long)]
    pub quiet: bool,
    /// Options of every command (`--strict`).
    #[command(flatten)]
    pub common: super::CommonArgs,
}

/// Several dropped roots as one [`Opener`]: each file path is looked up in the root it was
/// listed from (the first root wins for a path listed twice).
pub struct MultiOpener {
    roots: Vec<FsOpener>,
    by_path: HashMap<String, usize>,
    /// Walk problems printed (unreadable folders, broken links…), all warnings.
    pub walk_problems: u64,
}

impl MultiOpener {
    /// Walks every input (see [`FsOpener::walk`]; its walk problems are printed on stderr);
    /// returns the opener and the files, sorted by path, without duplicates.
    ///
    /// Errors: an input is unreadable (the message names it).
    pub fn walk(inputs: &[PathBuf]) -> Result<(MultiOpener, Vec<InputFile>), String> {
        MultiOpener::walk_under(inputs, None)
    }

    /// [`MultiOpener::walk`] with every input's paths relative to `base` (see
    /// [`FsOpener::walk_under`]; `None`: each input's parent).
    ///
    /// Errors: an input is unreadable or not inside `base` (the message names it).
    pub fn walk_under(
        inputs: &[PathBuf],
        base: Option<&Path>,
    ) -> Result<(MultiOpener, Vec<InputFile>), String> {
        // Several inputs are listed relative to the folder holding all of them, so two inputs
        // whose own names agree (two ranks' ASCEND_PROFILER_OUTPUT) never share a path.
        let common = match (base, inputs.len()) {
            (None, 2..) => {
                let bases: Vec<PathBuf> = inputs
                    .iter()
                    .filter_map(|p| p.canonicalize().ok())
                    .map(|p| super::fs_opener::default_base(&p, true))
                    .collect();
                super::fs_opener::common_ancestor(&bases)
            }
            _ => None,
        };
        let base = base.or(common.as_deref());
        let mut roots = Vec::new();
        let mut by_path = HashMap::new();
        let mut files = Vec::new();
        let mut walk_problems = 0;
        for p in inputs {
            let (o, fs) = FsOpener::walk_under(p, base)
                .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            walk_problems += super::print_walk_problems(&o);
            for f in fs {
                if !by_path.contains_key(&f.path) {
                    by_path.insert(f.path.clone(), roots.len());
                    files.push(f);
                }
            }
            roots.push(o);
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let o = MultiOpener {
            roots,
            by_path,
            walk_problems,
        };
        Ok((o, files))
    }
}

impl MultiOpener {
    /// The walk (root and opener) that listed inventory path `rel`, if any.
    pub fn root_of(&self, rel: &str) -> Option<&FsOpener> {
        self.by_path.get(rel).map(|&k| &self.roots[k])
    }
}

impl Opener for MultiOpener {
    fn open(&self, path: &str) -> io::Result<Box<dyn io::Read + '_>> {
        match self.by_path.get(path) {
            Some(&k) => self.roots[k].open(path),
            None => Err(not_listed(path)),
        }
    }

    fn open_from(&self, path: &str, offset: u64) -> io::Result<Box<dyn io::Read + '_>> {
        match self.by_path.get(path) {
            Some(&k) => self.roots[k].open_from(path, offset),
            None => Err(not_listed(path)),
        }
    }
}

fn not_listed(path: &str) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("no input file {path}"))
}

/// Runs `plan` over `inv` on `threads` threads (default: every core) and returns the store;
/// with `show_progress`, big files' progress goes to stderr. The one run of every
/// subcommand.
pub fn run_store(
    inv: &Inventory,
    opener: &(dyn Opener + Sync),
    plan: Plan,
    threads: Option<usize>,
    show_progress: bool,
) -> Store {
    let mut store = Store::new(plan);
    // Progress rewrites one line (`\r`): only for a person at a terminal, never into a log.
    let show_progress = show_progress && io::stderr().is_terminal();
    let progress = |p: &Progress<'_>| {
        if show_progress {
            if let Some(t) = p.bytes.bytes_total.filter(|t| *t > 64 << 20) {
                eprint!(
                    "\r{}: {} / {} MB   ",
                    p.file,
                    p.bytes.bytes_done >> 20,
                    t >> 20
                );
            }
        }
        ControlFlow::Continue(())
    };
    let threads = threads.unwrap_or_else(parallel::default_threads);
    parallel::run_inventory_ranges(
        &mut store,
        inv,
        opener,
        threads,
        min_range_bytes(),
        &progress,
    );
    if show_progress {
        eprint!("\r");
    }
    store
}

/// The smallest byte range of one file read by its own thread: `PROFLENS_MIN_RANGE_BYTES`
/// (for tests that cut small files; formats.md §8.2), else
/// [`crate::parse::kineto::ranges::MIN_RANGE_BYTES`].
fn min_range_bytes() -> u64 {
    std::env::var("PROFLENS_MIN_RANGE_BYTES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|&n: &u64| n > 0)
        .unwrap_or(crate::parse::kineto::ranges::MIN_RANGE_BYTES)
}

fn write_file(path: &Path, f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), String> {
    let file = std::fs::File::create(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let mut w = io::BufWriter::with_capacity(1 << 20, file);
    f(&mut w)
        .and_then(|_| w.flush())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// `DIR/snapshots/` file stems for the pickles of `inv`: the file name, `_2`, `_3`… for repeats.
fn snapshot_names(inv: &Inventory) -> Vec<String> {
    let mut seen: HashMap<String, u32> = HashMap::new();
    inv.snapshots
        .iter()
        .map(|f| {
            let name = f.path.rsplit('/').next().unwrap_or(&f.path).to_string();
            let n = seen.entry(name.clone()).or_insert(0);
            *n += 1;
            if *n == 1 {
                name
            } else {
                format!("{name}_{n}")
            }
        })
        .collect()
}

/// Runs the subcommand; returns the exit code.
pub fn run(args: Args) -> i32 {
    let (opener, files) = match MultiOpener::walk(&args.inputs) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("proflens analyze: {e}");
            return super::EXIT_NOTHING;
        }
    };
    let (files, outputs) = split_outputs(&opener, files, &args.out_dir);
    let mut inv = Inventory::from_paths(&files);
    let heads = read_side_files_keeping_heads(&mut inv, &opener);
    let mut plan = Plan::defaults();
    if !inv.ranks.iter().any(|r| r.has_memory_events()) {
        plan.memory = None;
    }
    // Every analysis the inputs allow: a rank folder without memory events is not a memory
    // failure here, as one without kernels is not an anomaly failure.
    plan.memory_where_present = true;
    if !inv.ranks.iter().any(crate::engine::read::anomaly::usable) {
        plan.anomaly = None;
    }
    if inv.snapshots.is_empty() {
        plan.snapshot = None;
    }
    let gpu = plan.anomaly.is_some()
        && inv
            .ranks
            .iter()
            .any(|r| r.kind == crate::ingest::rank::CaptureKind::Kineto);
    if gpu || inv.ranks.iter().any(crate::engine::read::comm::usable) {
        plan.comm = Some(Default::default());
    }
    let mut unused = not_used(&inv, &plan);
    unused.extend(outputs);
    if plan.memory.is_none()
        && plan.anomaly.is_none()
        && plan.snapshot.is_none()
        && plan.comm.is_none()
    {
        eprintln!(
            "proflens analyze: nothing to analyse: no rank folder with operator_memory.csv, kernel_details.csv, op_summary*.csv, trace_view.json or ascend_pytorch_profiler_<rank>.db, no PyTorch profiler trace and no memory snapshot among the {} file(s) found:",
            files.len()
        );
        super::print_indented(&unused);
        return super::EXIT_NOTHING;
    }
    // Every file or folder not used, and why (formats.md §11.1); the inventory's own notes.
    let mut n_unused = 0;
    for p in &unused {
        if p.severity >= Severity::Warning {
            n_unused += 1;
        }
        eprint!("inventory: ");
        super::print_problem(p);
    }
    // The output folder before the read: a folder that cannot be made fails now, not after
    // the whole input was read.
    if let Err(e) = std::fs::create_dir_all(&args.out_dir) {
        eprintln!(
            "proflens analyze: cannot create {}: {e}",
            args.out_dir.display()
        );
        return super::EXIT_NOTHING;
    }
    // The traces' heads read by the inventory are not read again (`Resume`).
    let store = run_store(
        &inv,
        &Resume::new(&heads, &opener),
        plan,
        args.threads,
        !args.quiet,
    );
    let threads = args.threads.unwrap_or_else(parallel::default_threads);
    match write_outputs(&args.out_dir, &inv, &store, args.quiet, threads) {
        Ok(()) => {}
        Err(e) => {
            eprintln!("proflens analyze: {e}");
            return super::EXIT_NOTHING;
        }
    }
    let (done, n) = print_outcomes(&store);
    super::exit_code(
        done > 0,
        opener.walk_problems + n_unused + n,
        args.common.strict,
    )
}

/// Leaves out the files under the output folder when it lies inside an input folder
/// (`analyze run --out-dir run/out`): they are an earlier run's outputs (`anomaly.json`, the
/// snapshot JSON documents), not profiler outputs, and would otherwise be read as inputs. Returns
/// the files kept and, when some were left out, one `DROP-005` info counting them
/// (formats.md §11.1). An output folder that is an input folder itself, or holds one, leaves
/// nothing out.
pub fn split_outputs(
    opener: &MultiOpener,
    files: Vec<InputFile>,
    out_dir: &Path,
) -> (Vec<InputFile>, Option<crate::base::Problem>) {
    use crate::ingest::inventory::unused_codes::OUTPUT;
    let Ok(out) = out_dir.canonicalize() else {
        return (files, None);
    };
    let mut kept = Vec::with_capacity(files.len());
    let (mut n, mut total, mut first) = (0u64, 0u64, None);
    for f in files {
        let under = opener.root_of(&f.path).is_some_and(|o| {
            o.root() != out && out.starts_with(o.root()) && o.disk_path(&f.path).starts_with(&out)
        });
        if under {
            n += 1;
            total += f.size;
            first.get_or_insert_with(|| f.path.clone());
        } else {
            kept.push(f);
        }
    }
    let note = first.map(|first| {
        crate::base::Problem::new(
            Severity::Info,
            OUTPUT,
            crate::base::Position::file(out_dir.display().to_string()),
            format!(
                "{n} file(s) ({}) under the output folder are not read as inputs: it lies inside the input, so they are outputs of an earlier run (first: {first})",
                crate::base::format::bytes(total as f64)
            ),
        )
    });
    (kept, note)
}

/// What `analyze` does not use, and why (formats.md §11.1): the drop's notes, every rank
/// folder no planned analysis reads (`DROP-002`), every file outside the rank folders
/// (`DROP-001`), the files inside rank folders no analysis reads (`DROP-003`) and the cluster
/// summary files, which `analyze` does not read (`DROP-004`).
pub fn not_used(inv: &Inventory, plan: &Plan) -> Vec<crate::base::Problem> {
    use crate::ingest::inventory::unused_codes::COMMAND;
    let mut out: Vec<crate::base::Problem> = inv.notes.iter().map(|n| n.to_problem()).collect();
    out.extend(plan.ranks_not_run(inv));
    out.extend(inv.not_used().iter().map(|n| n.to_problem()));
    for f in &inv.summaries {
        out.push(crate::base::Problem::new(
            Severity::Info,
            COMMAND,
            crate::base::Position::file(f.path.as_str()),
            "not used: a proflens cluster summary; `proflens analyze` does not read it (open it in the page: Cluster tab)",
        ));
    }
    out
}

/// Prints every target's problems and failures to stderr (`<analysis>: <problem>`); returns
/// `(targets done, problems counting against --strict)`.
pub fn print_outcomes(store: &Store) -> (u64, u64) {
    let mut n_problems = 0;
    let mut done = 0u64;
    for (_, kind, status, problems) in store.outcomes() {
        // A file refused as not a profiler trace is not an analysed target (exit 2 when every
        // target is such a file).
        let refused = problems.count(crate::engine::read::gpu::codes::NOT_A_TRACE) > 0;
        if status == crate::engine::contract::Status::Done && !refused {
            done += 1;
        }
        for p in problems.kept() {
            if p.severity >= Severity::Warning {
                n_problems += 1;
            }
            eprint!("{}: ", crate::engine::contract::kind_name(kind));
            super::print_problem(p);
        }
        if let crate::engine::contract::Status::Failed(why) = status {
            n_problems += 1;
            eprintln!("{}: {why}", crate::engine::contract::kind_name(kind));
        }
    }
    (done, n_problems)
}

/// Writes every output of the store under `dir` (see the module doc).
/// The paths written, in order, and the error that stopped the writing.
type Written = (Vec<PathBuf>, Result<(), String>);

/// Writes the anomaly's files (`anomaly.json`, the reports, the GPU kernel tables) into `dir`;
/// with two threads or more, `anomaly.json` beside the reports (the same files, and the same
/// paths in the same order; when `anomaly.json` cannot be written the reports may have been
/// written too).
fn anomaly_files(dir: &Path, inv: &Inventory, store: &Store, threads: usize) -> Written {
    if store.plan().anomaly.is_none() {
        return (Vec::new(), Ok(()));
    }
    let p = dir.join("anomaly.json");
    let json = || write_file(&p, |w| export::write(store, inv, Export::AnomalyJson, w));
    let mut out = Vec::new();
    let (json, reports) = match threads > 1 {
        true => par::join(json, || reports_into(dir, inv, store, &mut out)),
        false => match json() {
            Ok(()) => (Ok(()), reports_into(dir, inv, store, &mut out)),
            Err(e) => return (Vec::new(), Err(e)),
        },
    };
    if let Err(e) = json {
        return (Vec::new(), Err(e));
    }
    out.insert(0, p);
    (out, reports)
}

/// The anomaly's reports and GPU kernel tables under `dir/reports`, their paths pushed on `out`.
fn reports_into(
    dir: &Path,
    inv: &Inventory,
    store: &Store,
    out: &mut Vec<PathBuf>,
) -> Result<(), String> {
    let reports = dir.join("reports");
    std::fs::create_dir_all(&reports)
        .map_err(|e| format!("cannot create {}: {e}", reports.display()))?;
    let files = export::anomaly_reports(store, inv)
        .map_err(|_| "the anomaly analysis was cancelled".to_string())?;
    for (a_name, md, m_name, arch) in files {
        for (name, text) in [(a_name, md), (m_name, arch)] {
            let p = reports.join(name);
            write_file(&p, |w| w.write_all(text.as_bytes()))?;
            out.push(p);
        }
    }
    let tables = export::gpu_kernel_tables(store, inv)
        .map_err(|_| "the anomaly analysis was cancelled".to_string())?;
    for (name, csv) in tables {
        let p = reports.join(name);
        write_file(&p, |w| w.write_all(&csv))?;
        out.push(p);
    }
    Ok(())
}

fn write_outputs(
    dir: &Path,
    inv: &Inventory,
    store: &Store,
    quiet: bool,
    threads: usize,
) -> Result<(), String> {
    // `dir` was made before the read (`analyze`).
    let say = |p: &Path| {
        if !quiet {
            eprintln!("wrote {}", p.display());
        }
    };
    let plan = store.plan();
    if let Some(opts) = &plan.comm {
        let kernels = crate::engine::export::comm::gpu_kernels(store);
        let (rep, problems) = crate::engine::export::comm::report(store, &kernels, opts)
            .map_err(|_| "the communication analysis was cancelled".to_string())?;
        super::print_problems(&problems);
        // Written when there is something to show: Ascend communication files or GPU collectives.
        if !rep.ranks.is_empty() || !rep.collectives.is_empty() {
            let p = dir.join("comm.json");
            write_file(&p, |w| {
                w.write_all(crate::engine::export::comm::json(&rep, opts).as_bytes())
            })?;
            say(&p);
        }
    }
    let memory = || -> Written {
        if plan.memory.is_none() {
            return (Vec::new(), Ok(()));
        }
        let p = dir.join("memory.csv");
        let r = write_file(&p, |w| {
            export::write(store, inv, Export::MemoryCsv(Columns::Full), w)
        });
        (if r.is_ok() { vec![p] } else { Vec::new() }, r)
    };
    // With two threads or more, memory.csv is written beside the anomaly's files: the same
    // files and `wrote` lines in the same order (when memory.csv cannot be written, the
    // anomaly's files may have been written too, unannounced).
    if let Ok(ranks) = store.anomaly_ranks() {
        export::gpu_report::warm_summaries(&ranks, threads);
    }
    let (mem, anomaly) = match threads > 1 && plan.anomaly.is_some() {
        true => par::join(memory, || anomaly_files(dir, inv, store, threads)),
        false => match memory() {
            (m, Err(e)) => ((m, Err(e)), (Vec::new(), Ok(()))),
            m => (m, anomaly_files(dir, inv, store, threads)),
        },
    };
    for (written, r) in [mem, anomaly] {
        written.iter().for_each(|p| say(p));
        r?;
    }
    if plan.snapshot.is_some() {
        let snaps = dir.join("snapshots");
        std::fs::create_dir_all(&snaps)
            .map_err(|e| format!("cannot create {}: {e}", snaps.display()))?;
        for (i, name) in snapshot_names(inv).into_iter().enumerate() {
            match store.snapshot(i as u32) {
                Some(Ok(_)) => {
                    for (ext, what) in [
                        ("json", Export::SnapshotJson(i as u32)),
                        ("md", Export::SnapshotMd(i as u32)),
                    ] {
                        let p = snaps.join(format!("{name}.{ext}"));
                        write_file(&p, |w| export::write(store, inv, what, w))?;
                        say(&p);
                    }
                }
                // A failed snapshot is said once, with the other failures (`print_outcomes`).
                Some(Err(_)) | None => {}
            }
        }
    }
    Ok(())
}
