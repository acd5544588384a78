//! The snapshot analysis inside a worker session: decodes and analyses each dropped snapshot
//! pickle ([`crate::engine::read::snapshot::run`], the CLI's pipeline, with the settings
//! panel's default settings) into the session's store, keeps its [`ViewState`] (settings and
//! per-device series) beside it, and answers the snapshot tab's queries from the two. Progress
//! is posted by the worker's reader while the core reads; Cancel terminates the worker (it
//! cannot receive messages during a synchronous read).

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use super::sink::{send_export, Sink};
use super::snapshot_view::ViewState;
use crate::base::Problems;
use crate::engine::contract::Target;
use crate::engine::read::snapshot::{run, SnapshotOptions, SnapshotRun};
use crate::engine::read::TargetEntry;
use crate::engine::store::Store;
use crate::ingest::{InputFile, Opener};
use crate::protocol::{
    Failure, Response, SnapExportKind, SnapQuery, SnapReply, SnapshotSettingsDto, Summary,
};

/// The snapshot tab's state of each snapshot file this worker analysed, by snapshot index;
/// the runs themselves are in the session's [`Store`].
#[derive(Default)]
pub struct SnapshotViews {
    /// View state by snapshot index ([`crate::protocol::InventoryDto::snapshots`]).
    pub files: BTreeMap<u32, ViewState>,
}

fn fail(message: String) -> Response {
    Response::Failed(Failure { message })
}

fn not_here(target: u32) -> String {
    format!("snapshot {target} has not been analysed by this worker")
}

impl SnapshotViews {
    /// Analyses snapshot `index` (one read of the file), keeps the run in `store` and its view
    /// state here; its problems go to `problems`. Returns the summary for the run's
    /// [`Response::Done`].
    ///
    /// # Errors
    ///
    /// The file failed to decode (the §5.4 message, with the byte offset).
    pub fn run_file(
        &mut self,
        store: &mut Store,
        index: u32,
        file: &InputFile,
        opener: &dyn Opener,
        problems: &mut Problems,
    ) -> Result<Summary, String> {
        let settings = SnapshotSettingsDto::default();
        let opts = SnapshotOptions::from_settings(&settings)?;
        let r = run(opener, file, &opts, &mut |_| ControlFlow::Continue(()))
            .map_err(|e| e.to_string())?;
        problems.extend(r.problems.clone());
        let state = ViewState::new(index, &r, settings, opts);
        let summary = Summary::Snapshot(state.summary(&r));
        store.insert(Target::Snapshot(index), TargetEntry::Snapshot(Ok(r)));
        self.files.insert(index, state);
        Ok(summary)
    }

    /// The run and view state of snapshot `target`, when this worker analysed it.
    pub fn get<'a>(
        &'a self,
        store: &'a Store,
        target: u32,
    ) -> Option<(&'a SnapshotRun, &'a ViewState)> {
        let state = self.files.get(&target)?;
        match store.snapshot(target)? {
            Ok(r) => Some((r, state)),
            Err(_) => None,
        }
    }

    /// Answers one snapshot query from the run in `store` and its view state.
    ///
    /// # Errors
    ///
    /// The snapshot was not analysed here, or the query names no such device / record.
    pub fn query(&mut self, store: &mut Store, q: SnapQuery) -> Result<SnapReply, String> {
        let target = q.target();
        let state = self
            .files
            .get_mut(&target)
            .ok_or_else(|| not_here(target))?;
        let run = store.snapshot_mut(target).ok_or_else(|| not_here(target))?;
        state.query(run, q)
    }

    /// Writes export `what` of snapshot `target` for `seq`: chunks then `ExportDone`, or
    /// `Failed`.
    pub fn export(
        &self,
        store: &Store,
        seq: u32,
        target: u32,
        what: SnapExportKind,
        out: &mut dyn Sink,
    ) {
        let Some((run, state)) = self.get(store, target) else {
            out.send(seq, fail(not_here(target)));
            return;
        };
        match state.export(run, what) {
            Ok((file_name, mime, bytes)) => send_export(seq, file_name, mime, &bytes, out),
            Err(e) => out.send(seq, fail(format!("export failed: {e}"))),
        }
    }
}
