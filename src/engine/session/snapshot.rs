//! The snapshot analysis inside a worker session (issue 4): decodes and analyses each
//! dropped snapshot pickle and keeps the result for the curve, live-set and report queries.

use std::collections::BTreeMap;

use super::Sink;
use crate::base::Problems;
use crate::engine::snapshot::SnapshotRun;
use crate::ingest::{InputFile, Opener};

/// The snapshot results of the files this worker analysed, by snapshot index.
#[derive(Default)]
pub struct SnapshotStore {
    /// Results by snapshot index ([`crate::protocol::InventoryDto::snapshots`]).
    pub files: BTreeMap<u32, SnapshotRun>,
}

impl SnapshotStore {
    /// Analyses snapshot `index`, keeps the result and sends its "done" reply for `seq`;
    /// problems go to `problems`. `Err` = the file failed (message for the UI).
    pub fn run_file(
        &mut self,
        _seq: u32,
        _index: u32,
        file: &InputFile,
        _opener: &dyn Opener,
        _out: &mut dyn Sink,
        _problems: &mut Problems,
    ) -> Result<(), String> {
        Err(format!(
            "{}: the snapshot view is not wired into the worker yet",
            file.path
        ))
    }
}
