//! Exports gathered over workers ("each input byte is read once per drop"): when the
//! rank folders of a drop are spread over the page's worker pool, each worker writes its
//! part of a memory or anomaly export from the results it holds, and one worker joins the
//! parts into the CLI's bytes. No file is read; the rules (§9.0 row order, rank order, the
//! §13.4 cross-rank table, the GPU straggler view) are applied here, once, never in the UI,
//! which only relays the buffers.
//!
//! ```text
//! memory  (1 round)  part(0): per held rank its rows rendered (CSV lines, JSON objects, or
//!                    the Markdown section + §9.7 inputs) and their §9.0 keys
//!         join       ranks in §9.0 rank order, rows k-way merged by (start_time_ms, rank)
//! anomaly (2 rounds) part(0): per held rank its §13.4 row inputs and GPU collectives
//!                    part(1): with every worker's round-0 parts, per held rank its piece
//!                    (JSON element, CSV lines, or the chosen rank's reports)
//!         join       pieces in inventory order, wrapped as the CLI wraps them
//! ```
//!
//! Byte equality with `proflens memory|anomaly` holds by construction: a row, a rank section,
//! a JSON element and a report are rendered by the same `report` / `engine::export::anomaly`
//! functions the CLI calls, and the join reproduces the CLI's order and wrapping
//! (`tests/export_gather.rs` checks it on a two-rank folder split over two sessions).

pub mod anomaly;
pub mod comm;
pub mod memory;

use std::io::{self, Write};

use crate::engine::store::Store;
use crate::ingest::inventory::Inventory;
use crate::protocol::ExportRequest;

/// This session's part of round `round` of export `what` (see the module doc), written from
/// the results `store` holds; `inputs` are every worker's parts of the previous round.
///
/// # Errors
///
/// A round the export does not have, unreadable inputs, a cancelled analysis (in words).
pub fn part(
    what: &ExportRequest,
    round: u32,
    inputs: &[Vec<u8>],
    inv: &Inventory,
    store: &Store,
) -> Result<Vec<u8>, String> {
    match (what, round) {
        (ExportRequest::Memory(kind), 0) => Ok(memory::part(*kind, store)),
        (ExportRequest::Comm(_), 0) => comm::part(store),
        (ExportRequest::Anomaly { .. }, 0) => anomaly::facts(store),
        (ExportRequest::Anomaly { what, rank }, 1) => {
            anomaly::pieces(*what, *rank, inputs, inv, store)
        }
        _ => Err(format!(
            "{what:?} has {} part round(s); round {round} asked",
            what.part_rounds()
        )),
    }
}

/// Joins every worker's parts of the last round of export `what` into the export's bytes,
/// written to `w`. Returns `(file name, MIME type)` as the single-worker export does.
///
/// # Errors
///
/// Unreadable or inconsistent parts (a rank in two parts, a report's rank in none), and
/// those of `w`.
pub fn join(
    what: &ExportRequest,
    parts: &[Vec<u8>],
    inv: &Inventory,
    w: &mut dyn Write,
) -> io::Result<(String, String)> {
    match what {
        ExportRequest::Memory(kind) => memory::join(*kind, parts, w),
        ExportRequest::Anomaly { what, rank } => anomaly::join(*what, *rank, parts, inv, w),
        ExportRequest::Snapshot { .. } | ExportRequest::Compare(_) | ExportRequest::Comm(_) => {
            Err(io::Error::other(
                "a snapshot, comparison or communication export is written by the worker that holds it",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{AnomalyExportKind, MemoryExportKind};

    /// Arbitrary bytes after a part's tag (and cut real-looking prefixes) are refused in
    /// words, never a panic or a huge allocation.
    #[test]
    fn garbage_parts_are_errors_not_panics() {
        let inv = Inventory::from_paths(&[]);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let memory = [
            MemoryExportKind::MemoryCsv,
            MemoryExportKind::MemoryJson,
            MemoryExportKind::MemorySummaryMd,
        ];
        let anomaly = [AnomalyExportKind::Json, AnomalyExportKind::ReportMd];
        for len in 0..200usize {
            for magic in [memory::MAGIC, anomaly::FACTS, anomaly::PIECES] {
                let mut buf = magic.to_vec();
                // Small numbers often (counts and lengths that fit), any byte otherwise.
                buf.extend((0..len).map(|_| match next() % 4 {
                    0 => 0,
                    1 => 1,
                    _ => next() as u8,
                }));
                let parts = [buf];
                for kind in memory {
                    let what = ExportRequest::Memory(kind);
                    let _ = join(&what, &parts, &inv, &mut Vec::new());
                }
                let _ = anomaly::Context::of(&parts);
                for what in anomaly {
                    let req = ExportRequest::Anomaly {
                        what,
                        rank: Some(0),
                    };
                    let _ = join(&req, &parts, &inv, &mut Vec::new());
                }
            }
        }
        let what = ExportRequest::Memory(MemoryExportKind::MemoryCsv);
        let err = join(&what, &[b"nonsense".to_vec()], &inv, &mut Vec::new()).unwrap_err();
        assert_eq!(err.to_string(), "not a PLMEMPART1 buffer");
    }
}
