//! The inventory of dropped paths (src/ingest/inventory.rs, src/ingest/rank.rs): rank
//! folders, roles, rank ids from names, loose files, ignored files, snapshots; and the
//! `--ranks` list parser (src/ingest/select.rs).
//!
//! Input: UTF-8 (lossy) lines; each line is one relative path, its size is its line number.
//! The first line is also parsed as a `--ranks` list. Side files are read as empty files.
//! Checks: every path ends up in a rank folder (as a known or an other file), the snapshots
//! or the ignored list; the inventory serializes (the page gets it as JSON).
#![no_main]

use libfuzzer_sys::fuzz_target;
use proflens::ingest::inventory::{Analysis, Inventory};
use proflens::ingest::select::Selection;
use proflens::ingest::{InputFile, MemOpener};
use proflens::parse::metadata::read_side_files;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let lines: Vec<&str> = text.split('\n').collect();
    let _ = Selection::parse_ranks(lines[0]);
    // A dropped file always has a name: paths without one ("", "/", "./") never reach the
    // inventory from an edge, and from_paths skips them.
    let paths: Vec<&str> = lines
        .into_iter()
        .filter(|p| p.split('/').any(|s| !s.is_empty() && s != "."))
        .collect();
    let files: Vec<InputFile> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| InputFile {
            path: p.to_string(),
            size: i as u64,
        })
        .collect();
    let mut inv = Inventory::from_paths(&files);
    let mut o = MemOpener::new();
    for f in &files {
        o.add(f.path.clone(), Vec::new());
    }
    read_side_files(&mut inv, &o);
    let placed: usize = inv
        .ranks
        .iter()
        .map(|r| r.files.len() + r.other_files as usize)
        .sum::<usize>()
        + inv.snapshots.len()
        + inv.ignored.len();
    assert_eq!(placed, files.len(), "a dropped path is in no list");
    let _ = inv.root_label();
    let _ = inv.problems();
    for r in &inv.ranks {
        let _ = r.label();
        let _ = r.readiness(Analysis::Memory);
        let _ = r.readiness(Analysis::Anomaly);
    }
    let _ = serde_json::to_string(&inv).expect("the inventory serializes");
});
