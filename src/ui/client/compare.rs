//! "Compare with…": side B's files go to the worker that holds side A's results,
//! which reads B once and compares ([`crate::protocol::Request::Compare`]); the worker is
//! remembered for the comparison's exports.

use std::collections::BTreeMap;

use js_sys::Array;
use leptos::prelude::*;
use web_sys::File;

use super::EngineClient;
use crate::protocol::compare::{CompareOptions, CompareRequest};
use crate::protocol::{AnalysisKind, Reply, Request, Response};
use crate::ui::state::{CompareStatus, Phase};
use crate::views::cross_rank::{compare_rank, compared_rank};

impl EngineClient {
    /// "Compare with…": sends side B's `files` to the worker that holds side A's results (the
    /// selected snapshot's worker, or the worker holding A's compared rank, with the figures
    /// of A's ranks held by other workers), which reads B once and compares; the comparison
    /// lands in [`crate::ui::state::AppState::compare`]. `b_is_a`: side B is side A's
    /// snapshot file itself ("compare devices of this file"; `files` empty, nothing read);
    /// `options` are those of `proflens diff` (devices, overlay axis and alignment, step, rank).
    pub async fn compare_with(
        &self,
        files: Vec<(String, File)>,
        overlay_columns: u32,
        b_is_a: bool,
        options: CompareOptions,
    ) {
        let state = self.state();
        let set = |c: CompareStatus| state.compare.set(c);
        if files.is_empty() && !b_is_a {
            set(CompareStatus::Failed(
                "No files were given: the folder is empty.".into(),
            ));
            return;
        }
        let Some(inv) = state.inventory.get_untracked() else {
            set(CompareStatus::Failed(
                "Open a first folder or file before comparing.".into(),
            ));
            return;
        };
        if !matches!(state.phase.get_untracked(), Phase::Done { .. }) {
            set(CompareStatus::Failed(
                "Side A is still being analysed: compare once it is done.".into(),
            ));
            return;
        }
        let snapshots = !inv.snapshots.is_empty() && inv.ranks.is_empty();
        if b_is_a && !snapshots {
            set(CompareStatus::Failed(
                "Two devices of one file: side A is not a snapshot file.".into(),
            ));
            return;
        }
        let a_snapshot = state.selected_snapshot.get_untracked().unwrap_or(0);
        let owner = |a: AnalysisKind, t: u32| self.inner.borrow().owner.get(&(a, t)).copied();
        let mut a_elsewhere = Vec::new();
        let slot = if snapshots {
            owner(AnalysisKind::Snapshot, a_snapshot)
        } else {
            // The worker holding the compared rank (first by id); the other workers' ranks
            // travel as the figures of their summaries.
            let anomaly = state.anomaly.get_untracked();
            let memory = state.summaries.get_untracked();
            let slot =
                compared_rank(anomaly.values()).and_then(|t| owner(AnalysisKind::Anomaly, t));
            for a in anomaly.values() {
                if slot.is_some() && owner(AnalysisKind::Anomaly, a.rank) != slot {
                    a_elsewhere.push(compare_rank(a, memory.get(&a.rank)));
                }
            }
            slot
        };
        let Some(slot) = slot else {
            set(CompareStatus::Failed(if snapshots {
                "The snapshot of side A could not be analysed.".into()
            } else {
                "No rank folder of side A has steps to compare.".into()
            }));
            return;
        };
        let a_names: Vec<String> = self
            .inner
            .borrow()
            .files
            .iter()
            .map(|(m, _)| m.path.clone())
            .collect();
        let files = super::with_meta(files);
        let b_paths: Vec<String> = files.iter().map(|(m, _)| m.path.clone()).collect();
        let a_name = side_name(&a_names);
        let b_name = if b_is_a {
            a_name.clone()
        } else {
            side_name(&b_paths)
        };
        let handles = Array::new();
        for (_, f) in &files {
            handles.push(f);
        }
        state.compare_read.set(BTreeMap::new());
        set(CompareStatus::Loading {
            b_name: b_name.clone(),
            bytes: files.iter().map(|(m, _)| m.size).sum(),
        });
        let req = Request::Compare(CompareRequest {
            files: files.into_iter().map(|(m, _)| m).collect(),
            a_name,
            b_name,
            a_snapshot,
            overlay_columns,
            a_elsewhere,
            b_is_a,
            options,
        });
        let seq = self.post(slot, req, Some(handles));
        {
            let mut inner = self.inner.borrow_mut();
            inner.compare_seq = Some(seq);
            inner.compare_slot = None;
        }
        let reply = self.wait(seq).await;
        self.inner.borrow_mut().compare_seq = None;
        match reply {
            Ok(Response::Reply(Reply::Compare(v))) => {
                self.inner.borrow_mut().compare_slot = Some(slot);
                set(CompareStatus::Ready(std::sync::Arc::new(*v)));
            }
            Ok(Response::Failed(f)) => set(CompareStatus::Failed(f.message)),
            Ok(other) => set(CompareStatus::Failed(format!(
                "unexpected reply to Compare: {}",
                super::reply_name(&other)
            ))),
            Err(_) => set(CompareStatus::Failed(
                "the worker stopped (cancelled or reloaded)".into(),
            )),
        }
    }
}

impl EngineClient {
    /// A control of the Compare tab: the worker holding the comparison computes it again
    /// with `options` from both sides' stored results (nothing is read) and the new view
    /// replaces the shown one. `Err`: the worker's message (the shown comparison stays).
    pub async fn compare_again(&self, options: CompareOptions) -> Result<(), String> {
        let Some(slot) = self.inner.borrow().compare_slot else {
            return Err("nothing is compared: use Compare with… first".into());
        };
        let seq = self.post(slot, Request::CompareAgain(options), None);
        match self.wait(seq).await {
            Ok(Response::Reply(Reply::Compare(v))) => {
                self.state()
                    .compare
                    .set(CompareStatus::Ready(std::sync::Arc::new(*v)));
                Ok(())
            }
            Ok(Response::Failed(f)) => Err(f.message),
            Ok(other) => Err(format!(
                "unexpected reply to CompareAgain: {}",
                super::reply_name(&other)
            )),
            Err(_) => Err("the worker stopped (cancelled or reloaded)".into()),
        }
    }
}

/// A side's name in the comparison documents: the dropped folder's name when every path
/// starts with it (`control/control.json.gz` → `control`), else the first file's name.
pub fn side_name(paths: &[String]) -> String {
    let first = |p: &String| p.split('/').next().unwrap_or("").to_string();
    match paths.first() {
        Some(p) if p.contains('/') && paths.iter().all(|q| first(q) == first(p)) => first(p),
        Some(p) => p.rsplit('/').next().unwrap_or(p).to_string(),
        None => String::new(),
    }
}
