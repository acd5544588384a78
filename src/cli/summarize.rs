//! `proflens summarize PATH... [--root ROOT] [--out FILE]`: one rank summary per target found
//! under the paths, as JSON Lines (`docs/cluster-summary.md` §2). The analyses run through the
//! store on every core (`engine::parallel`, one read per file, as `proflens analyze`); the
//! values are taken from the analysis results by `engine::export::cluster::summary`. This edge only
//! walks, times each target, counts the bytes read and writes the lines.

use std::collections::HashMap;
use std::io::Write;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use crate::engine::contract::{Progress, Target};
use crate::engine::export::cluster::summary::{bound, inventory_targets, rank_summary, Ident};
use crate::engine::parallel;
use crate::engine::{Plan, Store};
use crate::protocol::cluster::RankStatus;

/// Arguments of `proflens summarize`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Rank folders, traces, pickles, or folders holding them (several allowed).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// The run root the paths were listed under (`proflens targets ROOT`): rank id and role
    /// are decided with its folders, so they equal the targets' (every PATH must be inside it).
    #[arg(long, value_name = "ROOT")]
    pub root: Option<PathBuf>,
    /// Write the lines here instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Threads to run targets on (default: every core).
    #[arg(long, value_name = "N", value_parser = super::threads_arg)]
    pub threads: Option<usize>,
    /// Options of every command (`--strict`).
    #[command(flatten)]
    pub common: super::CommonArgs,
}

/// Runs the subcommand; returns the exit code.
pub fn run(args: Args) -> i32 {
    let (opener, inv, heads) =
        match super::targets::walk_inventory(&args.inputs, args.root.as_deref()) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("proflens summarize: {e}");
                return super::EXIT_NOTHING;
            }
        };
    let mut plan = Plan::defaults();
    if !inv.ranks.iter().any(|r| r.has_memory_events()) {
        plan.memory = None;
    }
    plan.memory_where_present = true;
    if inv.ranks.iter().any(crate::engine::read::comm::usable) {
        plan.comm = Some(Default::default());
    }
    let store_plan = plan.clone();
    let mut store = Store::new(store_plan);
    let read: Mutex<HashMap<(Target, String), u64>> = Mutex::new(HashMap::new());
    let times: Mutex<HashMap<Target, (Instant, f64)>> = Mutex::new(HashMap::new());
    let on_progress = |p: &Progress<'_>| {
        if let Ok(mut m) = read.lock() {
            let e = m.entry((p.target, p.file.to_string())).or_insert(0);
            *e = (*e).max(p.bytes.bytes_done);
        }
        ControlFlow::Continue(())
    };
    let on_target = |t: Target, start: bool| {
        if let Ok(mut m) = times.lock() {
            let now = Instant::now();
            let e = m.entry(t).or_insert((now, 0.0));
            if start {
                e.0 = now;
            } else {
                e.1 = now.duration_since(e.0).as_secs_f64();
            }
        }
    };
    let threads = args.threads.unwrap_or_else(parallel::default_threads);
    let resume = crate::ingest::replay::Resume::new(&heads, &opener);
    parallel::run_inventory_with(&mut store, &inv, &resume, threads, &on_progress, &on_target);
    let read = read.into_inner().unwrap_or_else(|p| p.into_inner());
    let times = times.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut bytes: HashMap<Target, u64> = HashMap::new();
    for ((t, _), n) in read {
        *bytes.entry(t).or_insert(0) += n;
    }
    let mut out: Box<dyn Write> = match &args.out {
        Some(p) => match std::fs::File::create(p) {
            Ok(f) => Box::new(std::io::BufWriter::new(f)),
            Err(e) => {
                eprintln!("proflens summarize: cannot create {}: {e}", p.display());
                return super::EXIT_NOTHING;
            }
        },
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let mut analysed = false;
    let mut n_problems = opener.walk_problems;
    for t in inventory_targets(&inv) {
        let (target, _) = super::targets::disk_ids(&opener, &inv, &t);
        let id = Ident {
            rank_dir: target.clone(),
            target,
            bytes_read: bytes.get(&t.target).copied().unwrap_or(0),
            analysis_s: times.get(&t.target).map_or(0.0, |x| x.1),
        };
        let mut s = rank_summary(&inv, &store, &t, id);
        bound(&mut s);
        analysed |= s.status != RankStatus::Failed;
        n_problems += s.problem_counts.errors + s.problem_counts.warnings;
        for p in &s.problems {
            eprintln!(
                "{} {}: {}{}: {}",
                match p.severity {
                    crate::protocol::cluster::ProblemSeverity::Error => "error",
                    crate::protocol::cluster::ProblemSeverity::Warning => "warning",
                },
                p.code,
                p.file,
                if p.location.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", p.location)
                },
                p.message
            );
        }
        let line = match serde_json::to_string(&s) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("proflens summarize: {e}");
                return super::EXIT_NOTHING;
            }
        };
        if let Err(e) = writeln!(out, "{line}") {
            eprintln!("proflens summarize: cannot write: {e}");
            return super::EXIT_NOTHING;
        }
    }
    if let Err(e) = out.flush() {
        eprintln!("proflens summarize: cannot write: {e}");
        return super::EXIT_NOTHING;
    }
    super::exit_code(analysed, n_problems, args.common.strict)
}
