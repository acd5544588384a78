//! The streamed reads of a Kineto trace: [`read`] (one pass through the splitter into a
//! [`KinetoBuilder`]), [`read_located`] (the lines of the first damaged strings, a second
//! read), and [`push_problems`].

use std::io::Read;
use std::ops::ControlFlow;
use std::sync::Arc;

use super::{codes, KinetoBuilder, KinetoInfo, RankKey, Traces};
use crate::base::arith::Tally;
use crate::base::{Position, Problem, Problems, Severity};
use crate::ingest::gzip::maybe_gunzip;
use crate::ingest::{ChunkReader, Opener, Progress};
use crate::model::gpu::GpuTrace;
use crate::parse::trace_json::diag::{self};
use crate::parse::trace_json::splitter::for_each_member_and_indexed_event;
use crate::parse::trace_json::splitter::TraceScan;
use crate::parse::ParseError;

/// Reads one Kineto trace from `src` (plain or gzip, sniffed). `file` names it in problems;
/// `total` is its size on disk (compressed when gzip). Progress reports **compressed** bytes
/// for gzip files.
///
/// Errors: those of the splitter before any event (empty, not a trace, UTF-16, first read),
/// and an error that stopped the read before any event ([`KinetoInfo::unusable`]).
pub fn read<'a>(
    src: Box<dyn Read + 'a>,
    file: &str,
    total: Option<u64>,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Result<(GpuTrace, KinetoInfo), ParseError> {
    let (builder, scan, compressed) = pass(src, file, total, false, on_progress)?;
    let (t, info) = builder.finish(scan);
    done(info, compressed).map(|info| (t, info))
}

/// [`read`] that splits a merged multi-rank trace into its ranks in the same pass
/// (gpu-traces.md §6): [`Traces::Ranks`] when it is one, else [`Traces::One`].
///
/// Errors: [`read`]'s.
pub fn read_traces<'a>(
    src: Box<dyn Read + 'a>,
    file: &str,
    total: Option<u64>,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Result<(Traces, KinetoInfo), ParseError> {
    let (builder, scan, compressed) = pass(src, file, total, true, on_progress)?;
    let (t, info) = builder.finish_traces(scan);
    done(info, compressed).map(|info| (t, info))
}

/// The compressed size noted, or the error that made the read unusable.
pub(super) fn done(
    mut info: KinetoInfo,
    compressed: Option<u64>,
) -> Result<KinetoInfo, ParseError> {
    info.compressed_bytes = compressed;
    match info.unusable() {
        Some(e) => Err(e.clone()),
        None => Ok(info),
    }
}

/// The one streamed pass of [`read`] and [`read_traces`]: the builder (recording row origins
/// when `split`), the splitter's report and the compressed bytes read.
fn pass<'a>(
    src: Box<dyn Read + 'a>,
    file: &str,
    total: Option<u64>,
    split: bool,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Result<(KinetoBuilder, TraceScan, Option<u64>), ParseError> {
    let file_arc: Arc<str> = Arc::from(file);
    let inflated = maybe_gunzip(src, total).map_err(|e| {
        ParseError::new(
            Position::file(file_arc.clone()).at_byte(0),
            crate::parse::ParseErrorKind::Read(e.to_string()),
        )
    })?;
    let compressed = inflated.compressed.clone();
    let mut reader = ChunkReader::new(
        inflated.reader,
        if compressed.is_some() { None } else { total },
    );
    let mut b = match (&compressed, total) {
        (None, Some(plain)) => KinetoBuilder::sized_for(plain),
        _ => KinetoBuilder::new(),
    };
    if split {
        b = b.splitting();
    }
    // Both callbacks feed the one builder, never at the same time.
    let builder = std::cell::RefCell::new(b);
    let res = for_each_member_and_indexed_event(
        &mut reader,
        &file_arc,
        &mut |p| {
            let p = match &compressed {
                Some(c) => Progress {
                    bytes_done: c.get(),
                    bytes_total: total,
                },
                None => p,
            };
            on_progress(p)
        },
        &mut |key, value, at| builder.borrow_mut().member(key, value, at),
        &mut |ev, at| builder.borrow_mut().indexed_event(ev, at),
    );
    let scan = res?;
    Ok((builder.into_inner(), scan, compressed.map(|c| c.get())))
}

/// [`read_traces`] of `path` through `opener` (a merged trace split into its ranks), then the problems of the pass with the raw-backslash
/// strings located by line and column (a second streamed read up to the last of the first
/// [`MAX_LOCATED`](super::MAX_LOCATED) of them, only when there are any).
///
/// Errors: the file cannot be opened, or [`read`]'s errors.
pub fn read_located(
    opener: &dyn Opener,
    path: &str,
    size: Option<u64>,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
    problems: &mut Problems,
) -> Result<(Traces, KinetoInfo), ParseError> {
    let open = |p: &str| {
        opener.open(p).map_err(|e| {
            ParseError::new(
                Position::file(p),
                crate::parse::ParseErrorKind::Read(format!("cannot open: {e}")),
            )
        })
    };
    let (t, info) = read_traces(open(path)?, path, size, on_progress)?;
    Ok(locate(opener, path, size, (t, info), problems))
}

/// [`read_located`] with a plain file of `size` bytes cut into byte ranges read on
/// `ranges.threads` threads ([`super::ranges`]): the same traces, report and problems. A file
/// that is not cut (small, gzip) or whose ranges hold an error is read by one reader.
///
/// Errors: [`read_located`]'s.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_located_ranges(
    opener: &(dyn Opener + Sync),
    path: &str,
    size: u64,
    ranges: super::ranges::Ranges,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
    problems: &mut Problems,
) -> Result<(Traces, KinetoInfo), ParseError> {
    match super::ranges::read_traces_ranges(opener, path, size, ranges, on_progress) {
        Some(read) => Ok(locate(opener, path, Some(size), read?, problems)),
        None => read_located(opener, path, Some(size), on_progress, problems),
    }
}

/// The problems of a read of `path`, with the raw-backslash strings located by line and
/// column (a second streamed read, only when there are any).
fn locate(
    opener: &dyn Opener,
    path: &str,
    size: Option<u64>,
    (t, info): (Traces, KinetoInfo),
    problems: &mut Problems,
) -> (Traces, KinetoInfo) {
    let open = |p: &str| opener.open(p);
    let mut lines = vec![None; info.raw_backslash_at.len()];
    if !info.raw_backslash_at.is_empty() {
        let offsets: Vec<u64> = info.raw_backslash_at.iter().map(|&(b, _)| b).collect();
        if let Ok(src) = open(path) {
            if let Ok(z) = maybe_gunzip(src, size) {
                lines = diag::line_columns(z.reader, &offsets).unwrap_or(lines);
            }
        }
    }
    push_problems(path, &info, &lines, problems);
    (t, info)
}

/// Every finding of one pass as problems (codes [`diag::KINETO`] and [`codes`]); `lines` are
/// the line/column of `info.raw_backslash_at` (same order; `None` = unknown).
pub fn push_problems(
    path: &str,
    info: &KinetoInfo,
    lines: &[Option<(u64, u64)>],
    problems: &mut Problems,
) {
    diag::push_problems(path, &info.scan, &diag::KINETO, problems);
    let name = path.rsplit('/').next().unwrap_or(path);
    for (k, &(byte, key)) in info.raw_backslash_at.iter().enumerate() {
        let mut at = Position::file(path).at_byte(byte).in_column(key);
        let place = match lines.get(k).copied().flatten() {
            Some((line, col)) => {
                at = at.at_line(line);
                format!("line {line}, column {col}, byte {byte}")
            }
            None => format!("byte {byte}"),
        };
        let more = if k + 1 == info.raw_backslash_at.len() && info.raw_backslash > k as u64 + 1 {
            format!(
                " ({} such strings in all; the first {} are located)",
                info.raw_backslash,
                k + 1
            )
        } else {
            String::new()
        };
        problems.push(Problem::new(
            Severity::Warning,
            codes::RAW_BACKSLASH,
            at,
            format!("`{key}` has a backslash that is not a JSON escape at {place} (a Windows path written without doubling its backslashes, e.g. \"D:\\work\\train.py\"): the string is kept verbatim{more}"),
        ));
    }
    if info.unpaired_flows > 0 {
        problems.push(Problem::new(
            Severity::Info,
            codes::UNPAIRED_FLOW,
            Position::file(path),
            format!("{} launch→kernel flow ends without their other end (Kineto writes lone `f` ends on host threads; or a cut capture): not used; kernels are linked to their launch by `correlation`", info.unpaired_flows),
        ));
    }
    for (key, byte) in &info.bad_members {
        problems.push(Problem::new(
            Severity::Warning,
            codes::BAD_MEMBER,
            Position::file(path).at_byte(*byte).in_column(key.as_str()),
            format!("top-level `{key}` at byte {byte} is not of the expected shape; ignored"),
        ));
    }
    if let Some(m) = &info.merged {
        let mut ids: Vec<String> = m.ranks.iter().take(16).map(|r| r.to_string()).collect();
        if m.ranks.len() > 16 {
            ids.push("…".to_string());
        }
        let how = match m.key {
            RankKey::ArgsRank => "their events' `args.rank`",
            RankKey::PidPrefix => "their device events' `pid` / 10^8 (pid = rank × 10^8 + pid)",
        };
        problems.push(Problem::new(
            Severity::Warning,
            codes::MERGED_RANKS,
            Position::file(path).at_byte(m.second_at),
            format!("{name}: a merged trace of {} ranks ({}), told apart by {how}; the first event of a second rank is at byte {}. {}", m.ranks.len(), ids.join(", "), m.second_at, split_text(info)),
        ));
    }
    let first = info.out_of_range.first_at.first().copied().unwrap_or(0);
    let what = format!(
        "events dropped: ts or ts + dur outside the representable time range ({}); count and byte offsets",
        Tally::time_limit_text()
    );
    problems.push_some(info.out_of_range.problem(
        codes::OUT_OF_RANGE,
        Position::file(path).at_byte(first),
        &what,
    ));
}

/// What became of a merged trace (gpu-traces.md §6): split into its ranks, with the rows no
/// key placed, or read as one rank.
fn split_text(info: &KinetoInfo) -> String {
    if info.split_ranks.is_empty() {
        return "It is analysed as ONE rank: steps, the busy union, bubbles and the HTA breakdowns are over all ranks' streams together, not per rank (gpu-traces.md §6)".to_string();
    }
    let left = match info.unplaced {
        0 => String::new(),
        n => format!("; {n} events carry no rank key (no `args.rank`, and a `pid` seen with none or several) and are left out of every rank"),
    };
    format!(
        "It is split into its {} ranks, each analysed as its own rank of one run (gpu-traces.md §6){left}",
        info.split_ranks.len()
    )
}
