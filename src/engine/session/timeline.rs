//! The timeline queries of the steps/bubbles view inside a worker session:
//! `AnomalyQuery::Timeline`, `KernelAt`, `Search` and `Flows`, answered from the anomaly results the
//! session holds ([`Store::anomaly`]) through a per-rank
//! [`TimelineIndex`] built on the first query and kept.

use std::collections::BTreeMap;

use crate::engine::read::RankAnalysis;
use crate::engine::store::Store;
use crate::protocol::{AnomalyQuery, AnomalyReply};
use crate::views::timeline::{TimelineIndex, TimelineQuery, TimelineSource};
use crate::views::timeline_flows::FlowIndex;

/// Timeline indices by rank folder index (built lazily, dropped with the session's inputs).
#[derive(Default)]
pub struct TimelineCache {
    by_rank: BTreeMap<u32, TimelineIndex>,
    /// Link tables, built on a rank's first `Flows` query (never per frame).
    flows: BTreeMap<u32, FlowIndex>,
}

/// What the timeline of an analysed rank is drawn from: its kernels, trace tables and
/// result, and the name of its runtime host lanes (`"CANN"` on Ascend, `"runtime"` on GPU).
pub fn source(r: &RankAnalysis) -> TimelineSource<'_> {
    TimelineSource {
        kernels: &r.kernels,
        trace: r.trace.as_ref(),
        result: &r.result,
        runtime: if r.gpu.is_some() { "runtime" } else { "CANN" },
    }
}

impl TimelineCache {
    /// Answers a `Timeline` or `KernelAt` query; `None` when the rank was not analysed here
    /// (or the query is of another kind).
    pub fn handle(&mut self, store: &Store, q: &AnomalyQuery) -> Option<AnomalyReply> {
        let rank = q.rank();
        let r = store.anomaly(rank)?;
        let src = source(r);
        let ix = self
            .by_rank
            .entry(rank)
            .or_insert_with(|| TimelineIndex::new(src));
        match *q {
            AnomalyQuery::Timeline {
                x_range_ms,
                width_px,
                ..
            } => Some(AnomalyReply::Timeline(ix.build(
                src,
                rank,
                &TimelineQuery {
                    x_range_ms,
                    width_px,
                },
            ))),
            AnomalyQuery::KernelAt {
                t_ms,
                lane,
                slop_ms,
                ..
            } => Some(AnomalyReply::KernelAt(ix.item_at(src, lane, t_ms, slop_ms))),
            AnomalyQuery::Flows {
                lane, index, limit, ..
            } => {
                let gpu = r.gpu.as_deref();
                let fx = self
                    .flows
                    .entry(rank)
                    .or_insert_with(|| FlowIndex::new(src, gpu));
                Some(AnomalyReply::Flows(fx.flows(
                    ix,
                    src,
                    gpu,
                    rank,
                    lane,
                    index,
                    limit.min(10_000) as usize,
                )))
            }
            AnomalyQuery::Search {
                ref text, limit, ..
            } => Some(AnomalyReply::Search(ix.search(
                src,
                rank,
                text,
                limit.min(10_000) as usize,
            ))),
            _ => None,
        }
    }
}
