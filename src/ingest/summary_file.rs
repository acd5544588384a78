//! Cluster summary files in a drop (`docs/cluster-summary.md`): a `*.json` or
//! `*.json.gz` whose top level starts with `"format": "proflens-cluster-summary"`.
//!
//! Step 1 (names only) treats such a file as a JSON candidate like any other (`ingest::kineto`);
//! step 2 reads its first bytes once (`parse::kineto::sniff`, which asks
//! `parse::cluster_summary::head`) and, when the head names the format, the inventory lists it
//! in [`crate::ingest::inventory::Inventory::summaries`] instead of the ranks or the ignored
//! files. The whole file is read only by the cluster view's run, in a worker.

use serde::Serialize;

/// The value of the top-level `format` member that marks a cluster summary.
pub const FORMAT: &str = "proflens-cluster-summary";

/// The newest summary `version` this build reads; a newer one is refused with a clear message.
pub const READS_VERSION: u64 = 1;

/// What the head of a cluster summary says.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SummaryHead {
    /// The top-level `version` (0 when the head has none before its first list).
    pub version: u64,
}

/// One cluster summary file of a drop.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SummaryFile {
    /// Path relative to the dropped root (what the `Opener` takes).
    pub path: String,
    /// Size in bytes (as stored: compressed for `.gz`).
    pub size: u64,
    /// The head read in step 2.
    pub head: SummaryHead,
}

impl SummaryFile {
    /// Why this build cannot read the file, in words (`None` when it can): a `version` newer
    /// than [`READS_VERSION`], or none at all.
    pub fn refusal(&self) -> Option<String> {
        match self.head.version {
            0 => Some(format!(
                "{}: a proflens cluster summary without a \"version\" before its first list; expected \"version\": {READS_VERSION} right after \"format\"",
                self.path
            )),
            v if v > READS_VERSION => Some(format!(
                "{}: a proflens cluster summary of version {v}; this page reads version {READS_VERSION} and older. Open it with a newer proflens page.",
                self.path
            )),
            _ => None,
        }
    }
}
