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

/// The NCCL kernels of every GPU rank of `store` (read by the GPU rank pass with the anomaly
/// analysis), each with its rank id (a rank without one: its position among the GPU ranks).
pub fn gpu_kernels(store: &Store) -> Vec<NcclKernel> {
    let Ok(ranks) = store.anomaly_ranks() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, r) in ranks.iter().filter(|r| r.gpu.is_some()).enumerate() {
        let rank = r.meta.rank_id.unwrap_or(k as i64);
        if let Some(g) = &r.gpu {
            out.extend(g.nccl.iter().cloned().map(|mut n| {
                n.rank = rank;
                n
            }));
        }
    }
    out
}

/// The JSON document of `rep` (`comm.json`).
pub fn json(rep: &CommReport, opts: &CommOptions) -> String {
    crate::report::comm::to_json(rep, opts.parity)
}
