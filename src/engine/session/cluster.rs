//! The worker's read of a cluster summary file: one streamed pass (gzip inflated
//! as a stream by [`maybe_gunzip`], the JSON cut by [`Cutter`]: the top-level object member
//! by member, each list member element by element, every element and other member parsed
//! from its own bytes; never the whole text in memory), then [`views::cluster::view`] builds
//! the page's payload and the summary itself is dropped. Memory: the parsed summary (≈ what
//! its ranks keep) plus the view, and while reading one read chunk plus the largest rank or
//! member (capped at [`MAX_PIECE`]), never the file's text.

use std::io::Read;

use crate::base::{Position, Problem, Problems, Severity};
use crate::ingest::gzip::maybe_gunzip;
use crate::ingest::summary_file::SummaryFile;
use crate::ingest::Opener;
use crate::parse::json_cut::{CutError, CutKind, Cutter, MAX_PIECE};
use crate::protocol::cluster::{ClusterSummary, FORMAT, VERSION};
use crate::protocol::cluster_view::ClusterViewDto;
use crate::views;

mod cut;

/// Reads summary `file` through `opener` into the cluster view; on failure the reason in
/// words (which file, where, what was expected), also pushed to `problems` as `CLU-002`.
pub fn read(
    file: &SummaryFile,
    opener: &dyn Opener,
    problems: &mut Problems,
) -> Result<ClusterViewDto, String> {
    let fail = |problems: &mut Problems, at: Position, why: String| {
        problems.push(Problem::new(Severity::Error, "CLU-002", at, why.clone()));
        Err(why)
    };
    if let Some(why) = file.refusal() {
        return Err(why);
    }
    let src = match opener.open(&file.path) {
        Ok(s) => s,
        Err(e) => {
            return fail(
                problems,
                Position::file(file.path.as_str()),
                format!("{}: cannot be opened: {e}", file.path),
            )
        }
    };
    let z = match maybe_gunzip(src, Some(file.size)) {
        Ok(z) => z,
        Err(e) => {
            return fail(
                problems,
                Position::file(file.path.as_str()),
                format!("{}: cannot be read: {e}", file.path),
            )
        }
    };
    let mut reader: Box<dyn Read + '_> = z.reader;
    let summary: ClusterSummary = match cut::summary(&mut Cutter::new(&mut reader, MAX_PIECE)) {
        Ok(s) => s,
        Err(e) => {
            let mut at = Position::file(file.path.as_str()).at_byte(e.at.byte);
            at.line = Some(e.at.line);
            return fail(problems, at, message(&file.path, &e));
        }
    };
    if summary.format != FORMAT || summary.version > VERSION {
        return fail(problems, Position::file(file.path.as_str()), format!(
            "{}: \"format\": \"{}\", \"version\": {}; this page reads \"{FORMAT}\" version {VERSION} and older",
            file.path, summary.format, summary.version
        ));
    }
    Ok(views::cluster::view(&summary, &file.path, problems))
}

/// The words of a failed read of summary `path`: which file, where, what was expected.
fn message(path: &str, e: &CutError) -> String {
    let (line, column) = (e.at.line, e.at.column);
    match &e.kind {
        CutKind::Io(why) => {
            format!("{path}: the read stopped at line {line}, column {column}: {why}")
        }
        CutKind::Eof => format!(
            "{path}: the file ends early (line {line}, column {column}): a cut or unfinished cluster summary"
        ),
        CutKind::TooLarge { limit } => format!(
            "{path}: the value that starts at byte {} (line {line}, column {column}) is longer than {} MiB, more than one rank or member of a cluster summary may hold",
            e.at.byte,
            limit >> 20
        ),
        CutKind::Syntax(_) => format!(
            "{path}: not a valid cluster summary at line {line}, column {column}: {e} (expected the format of docs/cluster-summary.md, version {VERSION})"
        ),
    }
}
