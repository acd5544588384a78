//! The anomaly analysis inside a [`super::Session`] (issue 3): one rank folder through
//! [`crate::engine::anomaly::analyse_rank`] (cancel-safe: a `Break` from the progress callback
//! ends it with "cancelled"), the whole [`RankAnalysis`] kept per rank for the view queries
//! ([`AnomalyQuery`], answered by `views::anomaly*`) and for the timeline, and the exports,
//! which re-run [`analyse_all`] over the inventory exactly as `proflens anomaly` does, so the
//! JSON and the Markdown reports are the CLI's bytes.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::ops::ControlFlow;

use crate::analysis::anomaly_config::AnomalyConfig;
use crate::base::Problems;
use crate::engine::anomaly::{analyse_all, analyse_rank, rank_reports, write_json, RankAnalysis};
use crate::ingest::inventory::{Inventory, RankFolder};
use crate::ingest::Opener;
use crate::protocol::{Response, Summary};

use super::Sink;
use crate::protocol::anomaly::{AnomalyExportKind, AnomalyQuery, AnomalyReply, AnomalySummaryDto};
use crate::report::anomaly_csv::{write_bubbles, write_steps, CsvRank};
use crate::views::anomaly::{ops, steps, summary, RankIdentity};
use crate::views::anomaly_bubbles::{bubble_detail, bubble_page};
use crate::views::anomaly_structure::structure_tree;

/// The anomaly results of the rank folders this worker analysed, by rank folder index: the
/// engine's full result (the timeline reads `kernels`, `trace` and `result` of
/// [`RankAnalysis`]) and the summary sent to the UI.
#[derive(Default)]
pub struct AnomalyStore {
    /// Results by rank folder index.
    pub ranks: BTreeMap<u32, RankAnalysis>,
    /// Summaries by rank folder index.
    pub summaries: BTreeMap<u32, AnomalySummaryDto>,
}

/// One analysed rank folder: the engine's result and its summary.
pub struct AnomalyRank {
    /// Everything the engine produced for the rank.
    pub analysis: RankAnalysis,
    /// The summary sent to the UI.
    pub summary: AnomalySummaryDto,
}

/// The result of one rank folder: the rank, or why it failed; and its problems.
pub struct RankOutcome {
    /// The analysed rank.
    pub rank: Result<AnomalyRank, String>,
    /// The rank's problems (empty when cancelled).
    pub problems: Problems,
}

/// The configuration the page uses: the CLI's default (`rulebook`, anomaly.md §0.3).
pub fn config() -> AnomalyConfig {
    AnomalyConfig::spec_defaults()
}

/// Analyses rank folder `index`; `on_progress` returning `Break` cancels (→ `Err("cancelled")`).
pub fn run_rank(
    index: u32,
    folder: &RankFolder,
    opener: &dyn Opener,
    on_progress: &mut crate::engine::contract::OnProgress<'_>,
) -> RankOutcome {
    let cfg = config();
    match analyse_rank(folder, opener, &cfg, on_progress) {
        Err(_) => RankOutcome {
            rank: Err("cancelled".into()),
            problems: Problems::new(),
        },
        Ok(a) => {
            let id = RankIdentity {
                index,
                rank_id: a.meta.rank_id,
                role: folder.role.clone(),
                dir: folder.label().to_string(),
            };
            let summary = summary(&id, &a.kernels, &a.result);
            let problems = a.problems.clone();
            RankOutcome {
                rank: Ok(AnomalyRank {
                    analysis: a,
                    summary,
                }),
                problems,
            }
        }
    }
}

impl AnomalyStore {
    /// Analyses rank folder `rank`, keeps the result and sends [`Response::Done`] for
    /// `seq`; its problems go to `problems`. `Err` = the rank failed (message for the UI).
    pub fn run_rank(
        &mut self,
        seq: u32,
        rank: u32,
        folder: &RankFolder,
        opener: &dyn Opener,
        out: &mut dyn Sink,
        problems: &mut Problems,
    ) -> Result<(), String> {
        let o = run_rank(rank, folder, opener, &mut |_| ControlFlow::Continue(()));
        problems.extend(o.problems);
        let r = o.rank?;
        out.send(
            seq,
            Response::Done {
                target: rank,
                summary: Summary::Anomaly(r.summary.clone()),
            },
        );
        self.insert(rank, r);
        Ok(())
    }

    /// Keeps an analysed rank.
    pub fn insert(&mut self, rank: u32, r: AnomalyRank) {
        self.ranks.insert(rank, r.analysis);
        self.summaries.insert(rank, r.summary);
    }

    /// Answers one query; `Err` names what is missing (rank not here, no such step/bubble).
    pub fn query(&self, q: &AnomalyQuery) -> Result<AnomalyReply, String> {
        let rank = q.rank();
        let r = self
            .ranks
            .get(&rank)
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
            AnomalyQuery::Timeline { .. }
            | AnomalyQuery::KernelAt { .. }
            | AnomalyQuery::Search { .. } => {
                return Err("timeline queries are answered by the session's timeline cache".into())
            }
        })
    }
}

/// Re-analyses every rank folder of `inv` as `proflens anomaly` does and writes export
/// `what` to `w`; `rank` (an inventory index) picks the rank of the per-rank Markdown reports.
/// Returns `(file name, MIME type)`.
///
/// Errors: a per-rank report for a rank without an analysis, cancellation, and `w`'s errors.
pub fn export(
    what: AnomalyExportKind,
    rank: Option<u32>,
    inv: &Inventory,
    opener: &dyn Opener,
    w: &mut dyn Write,
) -> io::Result<(String, String)> {
    let cfg = config();
    let (ranks, cross) = analyse_all(inv, opener, &cfg, &mut |_| ControlFlow::Continue(()))
        .map_err(|_| io::Error::other("cancelled"))?;
    let root = inv.root_label();
    let stem = if root == "the dropped files" || root.is_empty() {
        "proflens".to_string()
    } else {
        root
    };
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
        AnomalyExportKind::ReportMd | AnomalyExportKind::ArchitectureMd => {
            let dir = rank
                .and_then(|i| inv.ranks.get(i as usize))
                .map(|f| f.dir.clone())
                .ok_or_else(|| io::Error::other("no rank folder chosen for the report"))?;
            let i = ranks
                .iter()
                .position(|r| r.meta.rank_dir == dir)
                .ok_or_else(|| io::Error::other(format!("{dir}: no anomaly analysis")))?;
            let (a_name, md, m_name, arch) = rank_reports(inv, &ranks, &cross, &cfg, i)
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
