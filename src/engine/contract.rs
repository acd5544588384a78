//! Floor 0 of the engine, **contract**: what every floor may name. The one contract every
//! analysis follows: what is run on which target, one
//! progress type, one cancel path and one error model.
//!
//! * **Kind and target.** An analysis is named by [`AnalysisKind`] and runs on a
//!   [`Target`]: a rank folder (memory, anomaly) or a snapshot file (snapshot), both by
//!   their index in the [`crate::ingest::inventory::Inventory`], which every worker
//!   computes identically from the same file list.
//! * **Run.** [`super::store::Store::run_target`] (through [`super::read::run_target`]) (a rank folder or a snapshot file) reads
//!   each input file of the target once and feed every planned analysis from that read
//!   ([`super::read::rank`]); results stay in the store.
//! * **Progress and cancel.** One callback type, [`OnProgress`]: it is told the target, the
//!   file and the bytes read after every chunk; returning `Break` cancels the target, whose
//!   entries then come back [`Status::Cancelled`] (nothing half-done is kept as a result).
//! * **Errors.** Problems are data: every result carries its [`Problems`] beside it
//!   ([`Analysis::problems`]); a [`crate::parse::ParseError`] stops one file, never the
//!   run; a target that cannot be analysed at all is [`Status::Failed`] with the reason in
//!   words, its problems still listed.
//! * **Summary, query, export.** [`Analysis::summary_line`] is the one-line outcome the CLI
//!   prints; queries read the stored result (`Store::memory`, `Store::anomaly`,
//!   `Store::snapshot`, the types of `analysis::*`, so views are pure functions of them);
//!   exports ([`super::export::Export`]) are written from the store, never from the files.

use std::ops::ControlFlow;

use crate::base::Problems;

/// The analyses of proflens and what they run on (one definition each, for the engine and
/// the protocol: the wire vocabulary is the layer every other layer may name).
pub use crate::protocol::{AnalysisKind, Target};

/// Lower-case name of `kind` (`memory`, `anomaly`, `snapshot`), as the CLI subcommands.
pub fn kind_name(kind: AnalysisKind) -> &'static str {
    match kind {
        AnalysisKind::Memory => "memory",
        AnalysisKind::Anomaly => "anomaly",
        AnalysisKind::Snapshot => "snapshot",
        AnalysisKind::Cluster => "cluster",
        AnalysisKind::Comm => "comm",
    }
}

/// Progress of a run: after every chunk read, which target, which file, how far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress<'a> {
    /// The target being read.
    pub target: Target,
    /// Its label: the rank folder path or the snapshot file path (relative to the drop).
    pub label: &'a str,
    /// The file being read (relative path).
    pub file: &'a str,
    /// Bytes read of it so far, and its size when known.
    pub bytes: crate::ingest::Progress,
}

/// The one progress / cancel callback: `Break` cancels the target being read.
pub type OnProgress<'a> = dyn FnMut(&Progress<'_>) -> ControlFlow<()> + 'a;

/// A callback that never cancels and ignores progress.
pub fn no_progress(_: &Progress<'_>) -> ControlFlow<()> {
    ControlFlow::Continue(())
}

/// An analysis was cancelled through the progress callback ([`OnProgress`] returned `Break`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancelled;

/// How one analysis of one target ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// A result was produced (possibly with problems).
    Done,
    /// Nothing usable; the reason in words (the problems say more).
    Failed(String),
    /// Stopped on request (a progress callback returned `Break`).
    Cancelled,
}

/// What every analysis result offers the contract, whatever its own shape.
pub trait Analysis {
    /// Which analysis this is.
    const KIND: AnalysisKind;
    /// How it ended.
    fn status(&self) -> Status;
    /// Its problems, beside the result (also when it failed).
    fn problems(&self) -> &Problems;
    /// One line for a person: what was found (counts), as the CLI prints it on stderr.
    fn summary_line(&self) -> String;
}
