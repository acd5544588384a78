//! The worker's read of a cluster summary file: one streamed pass (gzip inflated
//! as a stream by [`maybe_gunzip`], JSON by `serde_json::from_reader` over a 1 MiB buffer,
//! never the whole text in memory), then [`views::cluster::view`] builds the page's payload
//! and the summary itself is dropped. Memory: the parsed summary (≈ what its ranks keep)
//! plus the view, never the file's text.

use std::io::{BufReader, Read};

use crate::base::{Position, Problem, Problems, Severity};
use crate::ingest::gzip::maybe_gunzip;
use crate::ingest::summary_file::SummaryFile;
use crate::ingest::Opener;
use crate::protocol::cluster::{ClusterSummary, FORMAT, VERSION};
use crate::protocol::cluster_view::ClusterViewDto;
use crate::views;

/// Read buffer of the JSON parser, bytes.
pub const READ_BUFFER: usize = 1 << 20;

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
    let reader: Box<dyn Read + '_> = z.reader;
    let summary: ClusterSummary = match serde_json::from_reader(BufReader::with_capacity(
        READ_BUFFER,
        reader,
    )) {
        Ok(s) => s,
        Err(e) => {
            let mut at = Position::file(file.path.as_str());
            at.line = Some(e.line() as u64);
            let what = if e.is_io() {
                format!(
                    "{}: the read stopped at line {}, column {}: {e}",
                    file.path,
                    e.line(),
                    e.column()
                )
            } else if e.is_eof() {
                format!("{}: the file ends early (line {}, column {}): a cut or unfinished cluster summary", file.path, e.line(), e.column())
            } else {
                format!("{}: not a valid cluster summary at line {}, column {}: {e} (expected the format of docs/cluster-summary.md, version {VERSION})", file.path, e.line(), e.column())
            };
            return fail(problems, at, what);
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
