//! "Compare with…" (issue 13): side B's files go to the worker that holds side A's results,
//! which reads B once and compares ([`crate::protocol::Request::Compare`]); the worker is
//! remembered for the comparison's exports.

use std::collections::BTreeMap;

use js_sys::Array;
use leptos::prelude::*;
use web_sys::File;

use super::EngineClient;
use crate::protocol::compare::CompareRequest;
use crate::protocol::{AnalysisKind, FileMeta, Reply, Request, Response};
use crate::ui::state::CompareStatus;

impl EngineClient {
    /// "Compare with…": sends side B's `files` to the worker that holds side A's results (the
    /// selected snapshot's worker, or the one worker holding every rank folder), which reads
    /// B once and compares; the comparison lands in [`AppState::compare`].
    pub async fn compare_with(&self, files: Vec<(String, File)>, overlay_columns: u32) {
        let state = self.state();
        let set = |c: CompareStatus| state.compare.set(c);
        if files.is_empty() {
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
        let snapshots = !inv.snapshots.is_empty() && inv.ranks.is_empty();
        let a_snapshot = state.selected_snapshot.get_untracked().unwrap_or(0);
        let slot = if snapshots {
            self.inner
                .borrow()
                .owner
                .get(&(AnalysisKind::Snapshot, a_snapshot))
                .copied()
        } else {
            self.sole_holder(AnalysisKind::Anomaly).and_then(|t| {
                self.inner
                    .borrow()
                    .owner
                    .get(&(AnalysisKind::Anomaly, t))
                    .copied()
            })
        };
        let Some(slot) = slot else {
            set(CompareStatus::Failed(if snapshots {
                "The snapshot of side A is not analysed (yet).".into()
            } else {
                "Side A's rank folders were analysed by several workers; comparing needs them \
                 in one worker (not built yet: open a run of one rank per side, or fewer ranks)."
                    .into()
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
        let mut files: Vec<(FileMeta, File)> = files
            .into_iter()
            .map(|(path, f)| {
                (
                    FileMeta {
                        path,
                        size: f.size() as u64,
                    },
                    f,
                )
            })
            .collect();
        files.sort_by(|a, b| a.0.path.cmp(&b.0.path));
        let b_paths: Vec<String> = files.iter().map(|(m, _)| m.path.clone()).collect();
        let (a_name, b_name) = (side_name(&a_names), side_name(&b_paths));
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
                "unexpected reply to Compare: {other:?}"
            ))),
            Err(_) => set(CompareStatus::Failed(
                "the worker stopped (cancelled or reloaded)".into(),
            )),
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
