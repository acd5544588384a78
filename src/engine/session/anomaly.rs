//! The anomaly analysis inside a worker session (issue 3): runs
//! [`crate::engine::anomaly::analyse_rank`] per rank folder and keeps each result for the
//! steps, bubbles, structure and timeline queries.

use std::collections::BTreeMap;

use super::Sink;
use crate::base::Problems;
use crate::engine::anomaly::RankAnalysis;
use crate::ingest::inventory::RankFolder;
use crate::ingest::Opener;

/// The anomaly results of the rank folders this worker analysed, by rank folder index.
#[derive(Default)]
pub struct AnomalyStore {
    /// Results by rank folder index.
    pub ranks: BTreeMap<u32, RankAnalysis>,
}

impl AnomalyStore {
    /// Analyses rank folder `rank`, keeps the result and sends its "done" reply for `seq`;
    /// problems go to `problems`. `Err` = the rank failed (message for the UI).
    pub fn run_rank(
        &mut self,
        _seq: u32,
        _rank: u32,
        folder: &RankFolder,
        _opener: &dyn Opener,
        _out: &mut dyn Sink,
        _problems: &mut Problems,
    ) -> Result<(), String> {
        Err(format!(
            "{}: the steps and bubbles view is not wired into the worker yet",
            folder.label()
        ))
    }
}
