//! The Communication tab's state in the worker that joined the ranks: the cross-rank report
//! of every worker's per-rank tables (`engine::export::gather::comm`), analysed once by
//! `analysis::comm` exactly as `proflens comm` does, its matrix index for the heatmap
//! (`views::comm`), and the exports (the CLI's `comm.json` and CSV tables, written by
//! `engine::export::comm` / `report::comm`).

use crate::analysis::comm::{self, CommOptions, CommReport};
use crate::engine::export::gather;
use crate::protocol::comm::{CommExportKind, CommMatrixDto, CommMatrixQuery, CommOverviewDto};
use crate::views::comm::{matrix, overview, MatrixIndex};

/// The joined report and what the tab asks of it.
pub struct CommHeld {
    report: CommReport,
    opts: CommOptions,
    index: MatrixIndex,
}

impl CommHeld {
    /// Joins every worker's part (round 0 of `ExportRequest::Comm`) and analyses the ranks.
    ///
    /// # Errors
    ///
    /// An unreadable part (in words).
    pub fn join(parts: &[Vec<u8>], parity: bool) -> Result<CommHeld, String> {
        let (ranks, kernels) = gather::comm::join(parts)?;
        let opts = CommOptions { parity, step: None };
        let refs: Vec<_> = ranks.iter().collect();
        let report = comm::analyze(&refs, &kernels, &opts);
        let index = MatrixIndex::of(&report);
        Ok(CommHeld {
            report,
            opts,
            index,
        })
    }

    /// The page's overview of the report.
    pub fn overview(&self) -> CommOverviewDto {
        let mut o = overview(&self.report, &self.index, self.opts.parity);
        let rep = &self.report;
        o.csv_tables = crate::report::comm::NAMES
            .iter()
            .filter(|&&n| match n {
                "collectives" => !rep.collectives.is_empty(),
                _ => !rep.ranks.is_empty(),
            })
            .map(|n| n.to_string())
            .collect();
        o.problems = self
            .report
            .problems
            .iter()
            .map(super::dto::problem)
            .collect();
        o
    }

    /// One heatmap window.
    pub fn matrix(&self, q: &CommMatrixQuery) -> CommMatrixDto {
        matrix(&self.report, &self.index, q)
    }

    /// The export's bytes, file name and MIME type: `comm.json` as `proflens comm --json`
    /// writes it, or one table as `--csv-dir` writes `<table>.csv`.
    ///
    /// # Errors
    ///
    /// A table the document does not have.
    pub fn export(&self, what: &CommExportKind) -> Result<(Vec<u8>, String, &'static str), String> {
        match what {
            CommExportKind::Json => Ok((
                crate::engine::export::comm::json(&self.report, &self.opts).into_bytes(),
                "comm.json".into(),
                "application/json",
            )),
            CommExportKind::Csv(name) => crate::report::comm::table(&self.report, name)
                .map(|t| {
                    (
                        crate::report::comm::to_csv(&t).into_bytes(),
                        format!("{}.csv", t.name),
                        "text/csv",
                    )
                })
                .ok_or_else(|| format!("the communication document has no table {name}")),
        }
    }
}
