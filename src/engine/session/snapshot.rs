//! The snapshot analysis inside a worker session: decodes and analyses each
//! dropped snapshot pickle ([`crate::engine::read::snapshot::run`], the CLI's pipeline, with the
//! CLI's default settings), keeps it as a [`SnapshotView`] and answers the snapshot tab's
//! queries from it. Progress is posted by the worker's reader while the core reads; Cancel
//! terminates the worker (it cannot receive messages during a synchronous read).

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use super::sink::{send_export, Sink};
use super::snapshot_view::SnapshotView;
use crate::base::Problems;
use crate::engine::read::snapshot::{run, SnapshotOptions};
use crate::ingest::{InputFile, Opener};
use crate::protocol::{
    Failure, Response, SnapExportKind, SnapQuery, SnapReply, SnapshotSettingsDto, Summary,
};

/// The snapshot results of the files this worker analysed, by snapshot index.
#[derive(Default)]
pub struct SnapshotStore {
    /// Results by snapshot index ([`crate::protocol::InventoryDto::snapshots`]).
    pub files: BTreeMap<u32, SnapshotView>,
}

fn fail(message: String) -> Response {
    Response::Failed(Failure { message })
}

impl SnapshotStore {
    /// Analyses snapshot `index` (one read of the file) and keeps the result; its problems
    /// go to `problems`. Returns the summary for the run's [`Response::Done`].
    ///
    /// # Errors
    ///
    /// The file failed to decode (the §5.4 message, with the byte offset).
    pub fn run_file(
        &mut self,
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
        let view = SnapshotView::from_parts(index, r, settings, opts);
        let summary = Summary::Snapshot(view.summary());
        self.files.insert(index, view);
        Ok(summary)
    }

    /// Answers one snapshot query from the snapshot held here.
    ///
    /// # Errors
    ///
    /// The snapshot was not analysed here, or the query names no such device / record.
    pub fn query(&mut self, q: SnapQuery) -> Result<SnapReply, String> {
        let target = q.target();
        let v = self
            .files
            .get_mut(&target)
            .ok_or_else(|| format!("snapshot {target} has not been analysed by this worker"))?;
        match q {
            SnapQuery::Curve(q) => v.curve(&q).map(SnapReply::Curve),
            SnapQuery::Live(q) => v.live_at(&q).map(SnapReply::Live),
            SnapQuery::Bands(q) => v.bands(&q).map(SnapReply::Bands),
            SnapQuery::Allocator(q) => v.allocator(&q).map(SnapReply::Allocator),
            SnapQuery::Stack { slot, record, .. } => v.stack(slot, record).map(SnapReply::Stack),
            SnapQuery::Segments { slot, limit, .. } => {
                v.segments(slot, limit).map(SnapReply::Segments)
            }
            SnapQuery::Settings { settings, .. } => {
                v.set_settings(settings).map(SnapReply::Summary)
            }
        }
    }

    /// Writes export `what` of snapshot `target` for `seq`: chunks then `ExportDone`, or
    /// `Failed`.
    pub fn export(&mut self, seq: u32, target: u32, what: SnapExportKind, out: &mut dyn Sink) {
        let Some(v) = self.files.get_mut(&target) else {
            out.send(
                seq,
                fail(format!(
                    "snapshot {target} has not been analysed by this worker"
                )),
            );
            return;
        };
        match v.export(what) {
            Ok((file_name, mime, bytes)) => send_export(seq, file_name, mime, &bytes, out),
            Err(e) => out.send(seq, fail(format!("export failed: {e}"))),
        }
    }
}
