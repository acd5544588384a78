//! The communication analysis across the ranks of a store (docs/rules/communication.md): the
//! stored per-rank tables ([`crate::engine::read::comm`]) through `analysis::comm`, then the
//! document and CSV tables of `report::comm`. One writer for `proflens comm` and the
//! `comm.json` of `analyze --out-dir`.

use crate::analysis::comm::{self, CommOptions, CommReport};
use crate::base::Problems;
use crate::engine::contract::Cancelled;
use crate::engine::store::Store;
use crate::model::comm::{NcclKernel, RankComm};

/// The cross-rank report of `store` (every rank with communication files) and every problem
/// (the ranks' read problems first, then the analysis' data checks); `kernels`: the NCCL
/// kernels of GPU ranks, when read.
pub fn report(
    store: &Store,
    kernels: &[NcclKernel],
    opts: &CommOptions,
) -> Result<(CommReport, Problems), Cancelled> {
    let reads = store.comm_ranks()?;
    let mut problems = Problems::new();
    for r in &reads {
        for p in r.problems.kept() {
            problems.push(p.clone());
        }
    }
    let ranks: Vec<&RankComm> = reads
        .iter()
        .filter(|r| r.tables.has_time || r.tables.has_matrix)
        .map(|r| &r.tables)
        .collect();
    let rep = comm::analyze(&ranks, kernels, opts);
    for p in &rep.problems {
        problems.push(p.clone());
    }
    Ok((rep, problems))
}

/// The JSON document of `rep` (`comm.json`).
pub fn json(rep: &CommReport, opts: &CommOptions) -> String {
    crate::report::comm::to_json(rep, opts.parity)
}
