//! The snapshot pipeline: one pickle through an [`Opener`] → decode → per-device analysis
//! → JSON / Markdown (torch-snapshot.md). Used by the CLI and (later) the web worker.

use std::ops::ControlFlow;

use crate::analysis::snapshot::device::{analyze, AnalysisOptions, DeviceAnalysis};
use crate::base::{Position, Problem, Problems, Severity};
use crate::ingest::{InputFile, Opener, Progress};
use crate::model::snapshot::{DeviceTrace, Snapshot};
use crate::parse::pickle::{opcodes::names_present, read_snapshot, PickleError, PickleErrorKind};
use crate::report::snapshot_json::{self, InputInfo, ReportOptions, SnapshotJson};
use crate::report::snapshot_md;

/// Options of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct SnapshotOptions {
    /// Analysis options.
    pub analysis: AnalysisOptions,
    /// Report options.
    pub report: ReportOptions,
}

impl SnapshotOptions {
    /// Spec / reference-analyzer defaults.
    pub fn spec_defaults() -> Self {
        SnapshotOptions {
            analysis: AnalysisOptions::spec_defaults(),
            report: ReportOptions::spec_defaults(),
        }
    }
}

/// The result of one snapshot file.
pub struct SnapshotRun {
    /// Input file (relative path) and size.
    pub file: InputFile,
    /// The decoded snapshot.
    pub snapshot: Snapshot,
    /// One analysis per device slot with a trace, then one per device that has only end-state segments.
    pub devices: Vec<DeviceAnalysis>,
    /// Decoding problems and analysis warnings.
    pub problems: Problems,
}

impl SnapshotRun {
    /// The JSON document.
    pub fn json(&self, opts: &ReportOptions) -> SnapshotJson {
        let info = InputInfo {
            file: &self.file.path,
            bytes: self.file.size,
            opcodes: names_present(&self.snapshot.opcode_histogram),
        };
        snapshot_json::build(&info, &self.snapshot, &self.devices, &self.problems, opts)
    }
    /// The Markdown report.
    pub fn markdown(&self, opts: &ReportOptions) -> String {
        snapshot_md::render(&self.json(opts))
    }
}

/// Decodes and analyses `file` read through `opener`.
///
/// Progress goes to `on_progress` (bytes read); `Break` cancels with
/// [`PickleErrorKind::Cancelled`].
///
/// # Errors
///
/// The file cannot be opened or is not a usable snapshot ([`PickleError`], §5.4 messages).
pub fn run(
    opener: &dyn Opener,
    file: &InputFile,
    opts: &SnapshotOptions,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Result<SnapshotRun, PickleError> {
    let mut src = opener.open(&file.path).map_err(|e| {
        PickleError::new(
            &file.path,
            0,
            PickleErrorKind::Io {
                message: e.to_string(),
            },
        )
    })?;
    let decoded = read_snapshot(&file.path, &mut src, Some(file.size), on_progress)?;
    let snapshot = decoded.snapshot;
    let mut problems = decoded.problems;
    let mut devices = Vec::new();
    for dev in snapshot.devices.iter().filter(|d| !d.entries.is_empty()) {
        devices.push(analyze(&snapshot, dev, &opts.analysis));
    }
    // Devices that own end-state segments but have no trace entries.
    let mut seg_devs: Vec<i64> = snapshot.segments.iter().map(|s| s.device).collect();
    seg_devs.sort_unstable();
    seg_devs.dedup();
    for d in seg_devs {
        let traced = snapshot
            .devices
            .iter()
            .any(|t| t.device as i64 == d && !t.entries.is_empty());
        if traced || d < 0 || d > u32::MAX as i64 {
            continue;
        }
        let empty = DeviceTrace {
            device: d as u32,
            ..Default::default()
        };
        devices.push(analyze(&snapshot, &empty, &opts.analysis));
    }
    if devices.is_empty() {
        problems.push(Problem::new(
            Severity::Warning,
            "SNAP-EMPTY",
            Position::file(file.path.as_str()),
            "The snapshot has no trace entries and no end-state segments: there is nothing to analyse.",
        ));
    }
    for d in &devices {
        for n in &d.notes {
            problems.push(Problem::new(
                Severity::Warning,
                n.code,
                Position::file(file.path.as_str()),
                n.message.clone(),
            ));
        }
    }
    Ok(SnapshotRun {
        file: file.clone(),
        snapshot,
        devices,
        problems,
    })
}
