//! The Communication tab's join: once every rank has run, each worker that holds rank
//! folders sends its per-rank communication tables once (`ExportPart` round 0 of
//! `ExportRequest::Comm`), and the first of them joins every part into the cross-rank report
//! (`Query::Comm(Join)`), keeps it, and answers the tab's heatmap queries and exports. The
//! parts stay `ArrayBuffer`s here; this client applies no rule.

use std::sync::Arc;

use futures::channel::oneshot;
use js_sys::Array;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::EngineClient;
use crate::protocol::comm::{CommExportKind, CommQuery, CommReply};
use crate::protocol::{AnalysisKind, ExportRequest, Query, Reply, Request, Response};
use crate::ui::state::CommStatus;

impl EngineClient {
    /// Starts the join when the drop has something to join (a rank folder with
    /// communication files, or a GPU rank); called when every run is done.
    pub(super) fn start_comm_join(&self) {
        let wanted = self.state().inventory.with_untracked(|i| {
            i.as_ref().is_some_and(|i| {
                i.ranks.iter().any(|r| {
                    r.kineto
                        || r.analyses
                            .iter()
                            .any(|a| a.analysis == AnalysisKind::Comm && a.can_run)
                })
            })
        });
        if !wanted {
            return;
        }
        let c = self.clone();
        spawn_local(async move {
            c.join_comm(false).await;
        });
    }

    /// Joins the ranks' communication tables in msprof-analyze's `parity` mode or the
    /// default one; the overview goes to `state.comm`.
    pub async fn join_comm(&self, parity: bool) {
        let state = self.state();
        state.comm.set(CommStatus::Joining);
        match self.try_join(parity).await {
            Ok(o) => {
                // The cross-rank data checks join the Problems tab once (a join in the other
                // mode repeats most of them).
                let new: Vec<_> = state.problems.with_untracked(|have| {
                    o.problems
                        .iter()
                        .filter(|p| !have.contains(p))
                        .cloned()
                        .collect()
                });
                state.problems_total.update(|t| *t += new.len() as u64);
                state.problems.update(|v| v.extend(new));
                state.comm.set(CommStatus::Ready(Arc::new(o)));
            }
            Err(e) => state.comm.set(CommStatus::Failed(e)),
        }
    }

    async fn try_join(
        &self,
        parity: bool,
    ) -> Result<crate::protocol::comm::CommOverviewDto, String> {
        let holders: Vec<usize> = {
            let inner = self.inner.borrow();
            let mut v: Vec<usize> = inner
                .owner
                .iter()
                .filter(|((a, _), _)| matches!(a, AnalysisKind::Comm | AnalysisKind::Anomaly))
                .map(|(_, &slot)| slot)
                .collect();
            v.sort_unstable();
            v.dedup();
            if v.iter()
                .any(|&k| !inner.slots.get(k).is_some_and(|s| s.alive))
            {
                return Err(
                    "a worker stopped, so its rank folders' tables are gone; drop the folder again"
                        .into(),
                );
            }
            v
        };
        let Some(&joiner) = holders.first() else {
            return Err("no rank folder was analysed".into());
        };
        let kept = self.inner.borrow().comm_parts.clone();
        let parts = match kept {
            Some(p) => p,
            None => {
                let what = ExportRequest::Comm(CommExportKind::Json);
                let waits: Vec<(u32, oneshot::Receiver<Response>)> = holders
                    .iter()
                    .map(|&slot| {
                        let body = Request::ExportPart {
                            what: what.clone(),
                            round: 0,
                        };
                        let seq = self.post(slot, body, None);
                        (seq, self.wait(seq))
                    })
                    .collect();
                let parts = Array::new();
                for (seq, rx) in waits {
                    match rx.await {
                        Ok(Response::ExportPart { .. }) => {
                            let buf = self.inner.borrow_mut().beside.remove(&seq);
                            parts.push(
                                &buf.ok_or("a communication part arrived without its bytes")?,
                            );
                        }
                        Ok(Response::Failed(f)) => return Err(f.message),
                        Ok(other) => {
                            return Err(format!(
                                "unexpected reply to a part: {}",
                                super::reply_name(&other)
                            ))
                        }
                        Err(_) => return Err("the worker stopped (cancelled or reloaded)".into()),
                    }
                }
                self.inner.borrow_mut().comm_parts = Some(parts.clone());
                parts
            }
        };
        // Copied, not moved: a join in the other mode sends them again.
        let body = Request::Query(Query::Comm(CommQuery::Join { parity }));
        let seq = self.post_with(joiner, body, None, Some(parts), false);
        match self.wait(seq).await {
            Ok(Response::Reply(Reply::Comm(CommReply::Overview(o)))) => {
                self.inner.borrow_mut().comm_slot = Some(joiner);
                Ok(*o)
            }
            Ok(Response::Failed(f)) => Err(f.message),
            Ok(other) => Err(format!(
                "unexpected reply to the join: {}",
                super::reply_name(&other)
            )),
            Err(_) => Err("the worker stopped (cancelled or reloaded)".into()),
        }
    }

    /// A query of the Communication tab, to the worker that holds the joined report.
    pub async fn comm_query(&self, q: CommQuery) -> Result<CommReply, String> {
        let Some(slot) = self.inner.borrow().comm_slot else {
            return Err("the communication tables are not joined yet".into());
        };
        let seq = self.post(slot, Request::Query(Query::Comm(q)), None);
        match self.wait(seq).await {
            Ok(Response::Reply(Reply::Comm(r))) => Ok(r),
            Ok(Response::Failed(f)) => Err(f.message),
            Ok(other) => Err(format!(
                "unexpected reply to a query: {}",
                super::reply_name(&other)
            )),
            Err(_) => Err("the worker stopped (cancelled or reloaded)".into()),
        }
    }
}
