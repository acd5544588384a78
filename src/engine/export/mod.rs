//! Floor 3 of the engine, **export**: every writer of the CLI's and the page's files, from a
//! [`Store`]: the single-stream exports ([`Export`], [`write`]: memory CSV/JSON/Markdown,
//! anomaly JSON, snapshot JSON/Markdown), the anomaly reports and GPU kernel tables
//! ([`anomaly`], [`gpu_report`]), the page's per-worker export parts and their join
//! ([`gather`]), the diff documents of two stores ([`compare`]) and the cluster summaries
//! ([`cluster`]). Each file has one writer, so the CLI and the page write the same bytes.
//!
//! May import: `engine::contract`, `engine::read`, `engine::store` and the core layers.
//! Never `session`.

pub mod anomaly;
pub mod cluster;
pub mod comm;
pub mod compare;
pub mod gather;
pub mod gpu_report;
pub mod snapshot_live;

use std::io::{self, Write};

use crate::analysis::anomaly_config::AnomalyConfig;
use crate::engine::contract::Cancelled;
use crate::engine::store::{cross_rows, Store};
use crate::ingest::inventory::Inventory;
use crate::report::memory_rows::{self, Columns};

/// A single-stream export from the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Export {
    /// Memory rows of every analysed rank (§9.0 order) as CSV (`proflens memory --format csv`).
    MemoryCsv(Columns),
    /// The same rows as a JSON array (`--format json`).
    MemoryJson(Columns),
    /// The per-rank memory summary as Markdown (`--format md`).
    MemoryMd,
    /// The anomaly JSON array over ranks (`proflens anomaly --out`).
    AnomalyJson,
    /// Snapshot file `i`'s JSON document (`proflens snapshot --json`, no final newline).
    SnapshotJson(u32),
    /// Snapshot file `i`'s Markdown report (`proflens snapshot --report`).
    SnapshotMd(u32),
}

/// The `--report-dir` files of the anomaly analysis: per stored rank `(anomaly report
/// name, text, architecture report name, text)`, as [`anomaly::rank_reports`].
pub fn anomaly_reports(
    store: &Store,
    inv: &Inventory,
) -> Result<Vec<(String, String, String, String)>, Cancelled> {
    let cfg = store
        .plan()
        .anomaly
        .clone()
        .unwrap_or_else(AnomalyConfig::spec_defaults);
    let ranks = store.anomaly_ranks()?;
    let cross = cross_rows(&ranks, &cfg);
    let views = gpu_report::straggler_views(&ranks);
    let comm = anomaly::comm_cross(&ranks);
    Ok((0..ranks.len())
        .filter_map(|i| {
            anomaly::rank_reports_with(inv, &ranks, &cross, &views, comm.as_ref(), &cfg, i)
        })
        .collect())
}

/// The kernel tables of the stored GPU ranks (`kernels_<base>[_rank<N>].csv`, written
/// next to the reports): `(file name, CSV bytes)` per GPU rank, as
/// [`anomaly::kernel_csv_of`]; none for Ascend ranks.
pub fn gpu_kernel_tables(
    store: &Store,
    inv: &Inventory,
) -> Result<Vec<(String, Vec<u8>)>, Cancelled> {
    let cfg = store
        .plan()
        .anomaly
        .clone()
        .unwrap_or_else(AnomalyConfig::spec_defaults);
    let ranks = store.anomaly_ranks()?;
    let cross = cross_rows(&ranks, &cfg);
    Ok(ranks
        .iter()
        .enumerate()
        .filter_map(|(i, r)| anomaly::kernel_csv_of(inv, r, i, ranks.len(), &cross))
        .collect())
}

/// Writes export `what` from the stored results to `w` (the single commands' bytes).
///
/// # Errors
///
/// Those of `w`; `InvalidInput` when the analysis was not planned, a rank was
/// cancelled or the snapshot file has no result (message in words).
pub fn write(store: &Store, inv: &Inventory, what: Export, w: &mut dyn Write) -> io::Result<()> {
    let missing = |why: &str| io::Error::new(io::ErrorKind::InvalidInput, why.to_string());
    match what {
        Export::MemoryCsv(_) | Export::MemoryJson(_) | Export::MemoryMd => {
            let (run, _) = store
                .memory_run(inv)
                .ok_or_else(|| missing("the memory analysis was not run"))?;
            match what {
                Export::MemoryCsv(cols) => memory_rows::write_csv(&run, cols, w),
                Export::MemoryJson(cols) => memory_rows::write_json(&run, cols, w),
                _ => crate::report::memory_md::write_summary(&run, w),
            }
        }
        Export::AnomalyJson => {
            let cfg = store
                .plan()
                .anomaly
                .as_ref()
                .ok_or_else(|| missing("the anomaly analysis was not run"))?;
            let ranks = store
                .anomaly_ranks()
                .map_err(|_| missing("the anomaly analysis was cancelled"))?;
            anomaly::write_json(w, &ranks, cfg)
        }
        Export::SnapshotJson(i) | Export::SnapshotMd(i) => {
            let opts = store
                .plan()
                .snapshot
                .as_ref()
                .ok_or_else(|| missing("the snapshot analysis was not run"))?;
            let run = match store.snapshot(i) {
                Some(Ok(r)) => r,
                Some(Err(e)) => return Err(missing(&e.to_string())),
                None => return Err(missing("this snapshot file was not analysed")),
            };
            let text = if matches!(what, Export::SnapshotJson(_)) {
                run.json_text(&opts.report).map_err(io::Error::other)?
            } else {
                run.markdown(&opts.report)
            };
            w.write_all(text.as_bytes())?;
            w.flush()
        }
    }
}
