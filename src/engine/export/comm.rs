//! The communication analysis across the ranks of a store (docs/rules/communication.md): the
//! stored per-rank tables ([`crate::engine::read::comm`]) through `analysis::comm`, then the
//! document and CSV tables of `report::comm`. One writer for `proflens comm` and the
//! `comm.json` of `analyze --out-dir`.

use std::sync::Arc;

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
/// analysis), each with its rank id (a rank without one: its position among the GPU ranks),
/// scope and trace ([`scoped_kernels`]).
pub fn gpu_kernels(store: &Store) -> Vec<NcclKernel> {
    let Ok(ranks) = store.anomaly_ranks() else {
        return Vec::new();
    };
    let held: Vec<GpuRankKernels<'_>> = ranks
        .iter()
        .filter_map(|r| Some((r, r.gpu.as_deref()?)))
        .enumerate()
        .map(|(k, (r, g))| GpuRankKernels {
            rank: r.meta.rank_id.unwrap_or(k as i64),
            role: r.meta.role.as_deref().unwrap_or(""),
            dir_name: &r.dir_name,
            trace: r.meta.inputs.first().map_or("", String::as_str),
            kernels: &g.nccl,
        })
        .collect();
    scoped_kernels(&held)
}

/// One analysed GPU rank's NCCL kernels and what names it.
pub struct GpuRankKernels<'a> {
    /// Its rank id (else its position among the GPU ranks).
    pub rank: i64,
    /// Its role (`""`: none).
    pub role: &'a str,
    /// Its trace's name, as in its report file names (`engine::export::anomaly::report_stem`).
    pub dir_name: &'a str,
    /// Its trace file, relative to the drop.
    pub trace: &'a str,
    /// Its kernels, as read.
    pub kernels: &'a [NcclKernel],
}

/// The kernels of `ranks` (in the store's GPU rank order) with their rank, trace and scope
/// (communication.md §4.2): the scope is the parts of the rank's report suffix that are not
/// its rank id, as `cross_rank::scopes` decides them for the report names too: the role when
/// the ranks hold several, and the trace's name when another rank of its role has the same id
/// (two traces of one rank, `GPU-DISC-002`), joined by `_`. So two traces of one rank
/// each keep their own collectives. The CLI and the gathered page export both use it.
pub fn scoped_kernels(ranks: &[GpuRankKernels<'_>]) -> Vec<NcclKernel> {
    let keys: Vec<(&str, i64)> = ranks.iter().map(|r| (r.role, r.rank)).collect();
    let scopes = crate::analysis::anomaly::cross_rank::scopes(&keys);
    let mut out = Vec::new();
    for (r, s) in ranks.iter().zip(scopes) {
        let mut parts: Vec<&str> = Vec::new();
        if s.role {
            parts.push(r.role);
        }
        if s.trace {
            parts.push(r.dir_name);
        }
        let scope: Arc<str> = parts.join("_").into();
        let trace: Arc<str> = r.trace.into();
        out.extend(r.kernels.iter().map(|k| NcclKernel {
            rank: r.rank,
            scope: Arc::clone(&scope),
            trace: Arc::clone(&trace),
            ..k.clone()
        }));
    }
    out
}

/// The JSON document of `rep` (`comm.json`).
pub fn json(rep: &CommReport, opts: &CommOptions) -> String {
    crate::report::comm::to_json(rep, opts.parity)
}
