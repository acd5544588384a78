//! `proflens reduce PARTS... --out SUMMARY.json [--gzip] [--run-mode M --tasks K --wall-s S]
//! [--root ROOT]...`: rank summary lines (JSON Lines files, `-` = stdin) into one cluster
//! summary (`docs/cluster-summary.md` §3–5). Reads line by line (a line is capped, so memory
//! grows with the ranks kept, not with the files); a bad line is a located problem
//! (`CLUSTER-PART-001`, file and line) and the rest is read. Every cross-rank value is
//! computed by `engine::export::cluster::reduce`.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use crate::engine::export::cluster::reduce::{codes, Reducer};
use crate::protocol::cluster::{
    ProblemSeverity, RankStatus, RankSummary, RunInfo, MAX_RANK_SUMMARY_BYTES,
};

/// A part line longer than this is not read (16 × the bound of a rank summary).
pub const MAX_LINE_BYTES: usize = 16 * MAX_RANK_SUMMARY_BYTES;

/// Arguments of `proflens reduce`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// JSON Lines files of `proflens summarize` (`-`: stdin).
    #[arg(required = true)]
    pub parts: Vec<String>,
    /// The summary file to write.
    #[arg(long, value_name = "SUMMARY.json")]
    pub out: PathBuf,
    /// Compress the summary with gzip.
    #[arg(long)]
    pub gzip: bool,
    /// How the map ran (`ray`, `local` or `cli`), for `run.mode`.
    #[arg(long, default_value = "cli")]
    pub run_mode: String,
    /// Tasks the map ran, for `run.tasks` (default: the number of parts).
    #[arg(long)]
    pub tasks: Option<u64>,
    /// Wall time of the run, s, for `run.wall_s`.
    #[arg(long)]
    pub wall_s: Option<f64>,
    /// The run roots, for `roots` (repeatable).
    #[arg(long = "root", value_name = "ROOT")]
    pub roots: Vec<String>,
    /// Options of every command (`--strict`).
    #[command(flatten)]
    pub common: super::CommonArgs,
}

/// Reads one part: each line a [`RankSummary`] into `red`; bad lines and read failures become
/// located problems of `red`.
pub fn read_part(red: &mut Reducer, name: &str, r: &mut dyn BufRead) {
    let mut line: Vec<u8> = Vec::new();
    let mut n: u64 = 0;
    loop {
        line.clear();
        n += 1;
        let mut too_long = false;
        // One line, at most MAX_LINE_BYTES kept; the rest of an overlong line is skipped.
        let ended = loop {
            let buf = match r.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    red.problem(
                        ProblemSeverity::Error,
                        codes::UNREADABLE,
                        name,
                        &format!("line {n}"),
                        format!("cannot read further ({e}): the lines after this one are not used"),
                    );
                    return;
                }
            };
            if buf.is_empty() {
                break line.is_empty() && !too_long;
            }
            let (chunk, done) = match memchr::memchr(b'\n', buf) {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            if line.len() + chunk.len() > MAX_LINE_BYTES {
                too_long = true;
            } else if !too_long {
                line.extend_from_slice(chunk);
            }
            let used = done.unwrap_or(buf.len());
            r.consume(used);
            if done.is_some() {
                break false;
            }
        };
        if ended {
            return;
        }
        let at = format!("line {n}");
        if too_long {
            red.problem(
                ProblemSeverity::Error,
                codes::BAD_LINE,
                name,
                &at,
                format!("line longer than {MAX_LINE_BYTES} bytes: not a rank summary, skipped"),
            );
            continue;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<RankSummary>(&line) {
            Ok(s) => red.push(s, name, &at),
            Err(e) => red.problem(
                ProblemSeverity::Error,
                codes::BAD_LINE,
                name,
                &at,
                format!("not a rank summary ({e}): line skipped"),
            ),
        }
    }
}

/// Runs the subcommand; returns the exit code.
pub fn run(args: Args) -> i32 {
    let mut red = Reducer::new();
    for p in &args.parts {
        if p == "-" {
            let stdin = std::io::stdin();
            read_part(&mut red, "-", &mut stdin.lock());
            continue;
        }
        match std::fs::File::open(p) {
            Ok(f) => read_part(
                &mut red,
                p,
                &mut std::io::BufReader::with_capacity(1 << 20, f),
            ),
            Err(e) => red.problem(
                ProblemSeverity::Error,
                codes::UNREADABLE,
                p,
                "",
                format!("cannot open this part ({e}): its ranks are missing"),
            ),
        }
    }
    if red.is_empty() {
        eprintln!(
            "proflens reduce: no rank summary in {}",
            args.parts.join(", ")
        );
    }
    let run = RunInfo {
        mode: args.run_mode.clone(),
        tasks: args.tasks.unwrap_or(args.parts.len() as u64),
        wall_s: args.wall_s,
    };
    let s = red.finish(args.roots.clone(), run);
    for p in &s.problems {
        eprintln!(
            "error {}: {} ({}): {}",
            p.code, p.file, p.location, p.message
        );
    }
    if let Err(e) = write_summary(&args.out, args.gzip, &s) {
        eprintln!("proflens reduce: cannot write {}: {e}", args.out.display());
        return super::EXIT_NOTHING;
    }
    let analysed = s.ranks.iter().any(|r| r.status != RankStatus::Failed);
    let t = s.problems_total;
    eprintln!(
        "proflens reduce: {} ranks ({} failed), slow ranks {:?}, {} errors, {} warnings: wrote {}",
        s.rank_count,
        s.ranks
            .iter()
            .filter(|r| r.status == RankStatus::Failed)
            .count(),
        s.slow_ranks,
        t.errors,
        t.warnings,
        args.out.display()
    );
    super::exit_code(analysed, t.errors + t.warnings, args.common.strict)
}

fn write_summary(
    path: &std::path::Path,
    gzip: bool,
    s: &crate::protocol::cluster::ClusterSummary,
) -> std::io::Result<()> {
    let f = std::fs::File::create(path)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    if gzip {
        let mut z = flate2::write::GzEncoder::new(&mut w, flate2::Compression::default());
        serde_json::to_writer(&mut z, s).map_err(std::io::Error::other)?;
        z.finish()?;
    } else {
        serde_json::to_writer(&mut w, s).map_err(std::io::Error::other)?;
    }
    w.flush()
}
