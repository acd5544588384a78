//! The anomaly analysis inside a [`super::Session`]: the [`RankAnalysis`] of each
//! rank folder is kept in the session's [`Store`] (from its one read of the rank), the view
//! queries ([`AnomalyQuery`], answered by `views::anomaly*`) and the timeline read it there,
//! and the exports are written from it exactly as `proflens anomaly` writes them, so the
//! JSON, the CSVs and the Markdown reports are the CLI's bytes.

use std::io::{self, Write};

use crate::engine::export::anomaly::{rank_reports, write_json};
use crate::engine::export::gpu_report::rank_summary;
use crate::engine::read::RankAnalysis;
use crate::engine::store::cross_rows;
use crate::engine::store::Store;
use crate::ingest::inventory::{Inventory, RankFolder};
use crate::ingest::kineto::{device_names, runtime_text};

use crate::protocol::anomaly::{AnomalyExportKind, AnomalyQuery, AnomalyReply, AnomalySummaryDto};
use crate::report::anomaly_csv::{write_bubbles, write_steps, CsvRank};
use crate::views::anomaly::{ops, steps, summary, RankIdentity};
use crate::views::anomaly_bubbles::{bubble_detail, bubble_page};
use crate::views::anomaly_structure::structure_tree;
use crate::views::gpu;

pub use crate::engine::export::anomaly::{config, export_stem};

/// The summary the UI shows for stored rank folder `index` ([`Store::anomaly`]).
pub fn summary_of(index: u32, folder: &RankFolder, a: &RankAnalysis) -> AnomalySummaryDto {
    let id = RankIdentity {
        index,
        rank_id: a.meta.rank_id,
        role: folder.role.clone(),
        dir: folder.label().to_string(),
        gpu: a.gpu.is_some(),
    };
    let mut s = summary(&id, &a.kernels, &a.result);
    // What the whole trace names, for a rank card whose head had not reached it.
    if let Some(t) = &a.gpu {
        let devices = device_names(t.facts.devices.iter().map(|d| d.name.as_str()));
        s.gpu_runtime = runtime_text(&devices, t.facts.cuda_runtime_version, false, false);
        s.gpu_device = (!devices.is_empty()).then(|| devices.join(", "));
    }
    // The run's check of a rank number the inventory took from the order of the traces or
    // the file name: the more precise note, in place of the inventory's guess on the card.
    s.rank_check = a
        .problems
        .kept()
        .iter()
        .find(|p| p.code == crate::engine::read::gpu::codes::LATE_RANK)
        .map(|p| {
            (
                crate::ingest::inventory::RANK_FROM_ORDER.to_string(),
                format!("{}: {}", p.code, p.message),
            )
        });
    s
}

/// Answers one query about the ranks held in `store`; `Err` names what is missing (rank not
/// here, no such step/bubble). Timeline queries go to [`super::timeline::TimelineCache`].
pub fn query(store: &Store, q: &AnomalyQuery) -> Result<AnomalyReply, String> {
    let rank = q.rank();
    let r = store
        .anomaly(rank)
        .ok_or_else(|| format!("rank folder {rank} has no anomaly analysis here"))?;
    let (k, res) = (&r.kernels, &r.result);
    Ok(match q {
        AnomalyQuery::Steps { .. } => AnomalyReply::Steps {
            rank,
            steps: steps(res),
        },
        AnomalyQuery::Bubbles(b) => AnomalyReply::Bubbles(bubble_page(res, b)),
        AnomalyQuery::Bubble { index, .. } => AnomalyReply::Bubble(
            bubble_detail(rank, k, res, *index as usize, &config())
                .ok_or_else(|| format!("rank folder {rank} has no bubble {index}"))?,
        ),
        AnomalyQuery::Structure { step, .. } => AnomalyReply::Structure(
            structure_tree(rank, k, res, *step as usize)
                .ok_or_else(|| format!("rank folder {rank} has no step {step}"))?,
        ),
        AnomalyQuery::Ops { .. } => AnomalyReply::Ops(ops(rank, res)),
        AnomalyQuery::Gpu { width_px, .. } => {
            let (t, s) =
                rank_summary(r).ok_or_else(|| format!("rank folder {rank} is not a GPU rank"))?;
            AnomalyReply::Gpu(Box::new(gpu::panel(rank, t, s, *width_px)))
        }
        AnomalyQuery::Collectives { .. } => {
            let t = r
                .gpu
                .as_deref()
                .ok_or_else(|| format!("rank folder {rank} is not a GPU rank"))?;
            let rank_id = r.meta.rank_id.unwrap_or(rank as i64);
            let role = r.meta.role.as_deref().unwrap_or("");
            AnomalyReply::Collectives(gpu::collectives(rank, rank_id, role, t))
        }
        AnomalyQuery::Timeline { .. }
        | AnomalyQuery::KernelAt { .. }
        | AnomalyQuery::Search { .. }
        | AnomalyQuery::Flows { .. } => {
            return Err("timeline queries are answered by the session's timeline cache".into())
        }
    })
}

/// Writes anomaly export `what` of the ranks held in `store` (the caller makes sure it holds
/// every usable rank folder of the drop) exactly as `proflens anomaly` writes it; no file is
/// read. `rank` (an inventory index) picks the rank of the per-rank Markdown reports.
/// Returns `(file name, MIME type)`.
///
/// Errors: a per-rank report for a rank without an analysis, cancellation, and `w`'s errors.
pub fn export(
    what: AnomalyExportKind,
    rank: Option<u32>,
    inv: &Inventory,
    store: &Store,
    w: &mut dyn Write,
) -> io::Result<(String, String)> {
    let cfg = config();
    let ranks = store
        .anomaly_ranks()
        .map_err(|_| io::Error::other("cancelled"))?;
    // The position in `ranks` of the rank the page chose (a rank folder, or a rank of a split
    // merged trace: `store::part_index`).
    let chosen = |what: &str| -> io::Result<usize> {
        let i =
            rank.ok_or_else(|| io::Error::other(format!("no rank folder chosen for the {what}")))?;
        let r = store
            .anomaly(i)
            .ok_or_else(|| io::Error::other(format!("rank folder {i}: no anomaly analysis")))?;
        ranks
            .iter()
            .position(|x| std::ptr::eq(*x, r))
            .ok_or_else(|| io::Error::other(format!("rank folder {i}: no anomaly analysis")))
    };
    let cross = cross_rows(&ranks, &cfg);
    let stem = export_stem(inv);
    let csv_ranks = || -> Vec<CsvRank<'_>> {
        ranks
            .iter()
            .map(|r| CsvRank {
                rank_id: r.meta.rank_id,
                rank_dir: &r.meta.rank_dir,
                result: &r.result,
                kernels: &r.kernels,
            })
            .collect()
    };
    match what {
        AnomalyExportKind::Json => {
            write_json(w, &ranks, &cfg)?;
            Ok((format!("anomaly_{stem}.json"), "application/json".into()))
        }
        AnomalyExportKind::StepsCsv => {
            write_steps(&csv_ranks(), w)?;
            Ok((format!("anomaly_steps_{stem}.csv"), "text/csv".into()))
        }
        AnomalyExportKind::BubblesCsv => {
            write_bubbles(&csv_ranks(), w)?;
            Ok((format!("anomaly_bubbles_{stem}.csv"), "text/csv".into()))
        }
        AnomalyExportKind::KernelsCsv => {
            let i = chosen("kernel table")?;
            let dir = ranks[i].meta.rank_dir.clone();
            let (name, csv) = crate::engine::export::anomaly::kernel_csv_of(
                inv,
                &ranks[i],
                i,
                ranks.len(),
                &cross,
            )
            .ok_or_else(|| io::Error::other(format!("{dir}: not a GPU rank, no kernel table")))?;
            w.write_all(&csv)?;
            w.flush()?;
            Ok((name, "text/csv".into()))
        }
        AnomalyExportKind::ReportMd | AnomalyExportKind::ArchitectureMd => {
            let i = chosen("report")?;
            let views = crate::engine::export::gpu_report::straggler_views(&ranks);
            let (a_name, md, m_name, arch) = rank_reports(inv, &ranks, &cross, &views, &cfg, i)
                .ok_or_else(|| io::Error::other("no report"))?;
            let (name, text) = if what == AnomalyExportKind::ReportMd {
                (a_name, md)
            } else {
                (m_name, arch)
            };
            w.write_all(text.as_bytes())?;
            w.flush()?;
            Ok((name, "text/markdown".into()))
        }
    }
}
