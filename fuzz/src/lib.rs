//! Helpers shared by the fuzz targets (fuzz_targets/*.rs): how one fuzz input becomes
//! several files, and how results are consumed so that every formatter runs.
//!
//! Multi-file targets (`rank_memory`, `rank_anomaly`) split the input at NUL bytes: part
//! `k` is the content of file slot `k`. A part that is present but empty is an empty file;
//! slots past the last part are absent files. NUL never occurs in the real text formats,
//! and the single-file targets cover NUL inside a file.

use std::ops::ControlFlow;

use proflens::base::Problems;
use proflens::ingest::inventory::Inventory;
use proflens::ingest::{MemOpener, Progress};
use proflens::parse::metadata::read_side_files;

/// Splits `data` at NUL into at most `slots` parts (the last part keeps any further NULs).
/// `out[k]` is `None` when the input has fewer than `k + 1` parts.
pub fn split_files(data: &[u8], slots: usize) -> Vec<Option<&[u8]>> {
    let mut out: Vec<Option<&[u8]>> = data.splitn(slots, |b| *b == 0).map(Some).collect();
    out.resize(slots, None);
    out
}

/// A progress callback that never cancels.
pub fn go_on(_: Progress) -> ControlFlow<()> {
    ControlFlow::Continue(())
}

/// Formats every kept problem the way the CLI prints it (runs each `Display`), returning
/// the total length so the work cannot be optimised away.
pub fn render_problems(p: &Problems) -> usize {
    p.kept()
        .iter()
        .map(|p| format!("{} {}: {}: {}", p.code, p.at, p.message, p.severity as u8).len())
        .sum::<usize>()
        + p.total() as usize
}

/// A chunk size from one fuzzed byte: 1..=64 bytes, or the default 4 MiB for 0, so targets
/// cross every buffer boundary as well as the one-read case.
pub fn chunk_of(b: u8) -> usize {
    match b {
        0 => proflens::ingest::chunk_reader::DEFAULT_CHUNK,
        b => 1 + (b as usize % 64),
    }
}

/// Two rank folders `run/r0_ascend_pt`, `run/r1_ascend_pt` from `data`: part `i` of
/// [`split_files`] is the file `names[i % names.len()]` of rank `i / names.len()` (`{k}` in a
/// name is the rank number). Returns the opener and the inventory after its side files.
pub fn rank_folders(data: &[u8], names: &[&str]) -> (MemOpener, Inventory) {
    let mut o = MemOpener::new();
    for (i, part) in split_files(data, 2 * names.len()).into_iter().enumerate() {
        if let Some(bytes) = part {
            let k = i / names.len();
            let name = names[i % names.len()].replace("{k}", &k.to_string());
            o.add(format!("run/r{k}_ascend_pt/{name}"), bytes);
        }
    }
    let mut inv = Inventory::from_paths(&o.list());
    read_side_files(&mut inv, &o);
    (o, inv)
}
