//! The snapshot pipeline: one pickle through an [`Opener`] → decode → per-device analysis
//! → JSON / Markdown (torch-snapshot.md). Used by the CLI and (later) the web worker.

use rustc_hash::FxHashSet as HashSet;
use std::ops::ControlFlow;

use crate::analysis::snapshot::curves::CurveKind;
use crate::analysis::snapshot::device::{analyze, AnalysisOptions, DeviceAnalysis};
use crate::analysis::snapshot::links::LinkStyle;
use crate::base::{Position, Problem, Problems, Severity};
use crate::ingest::{InputFile, Opener, Progress};
use crate::model::snapshot::{DeviceTrace, Snapshot};
use crate::parse::pickle::{opcodes::names_present, read_snapshot, PickleError, PickleErrorKind};
use crate::protocol::snapshot::SnapshotSettingsDto;
use crate::report::snapshot_json::{self, InputInfo, ReportOptions, SnapshotJson};
use crate::report::snapshot_md;

/// Most devices analysed per snapshot (traced ones first). A process sees a few dozen devices at
/// most; every analysis scans the segments list, so a hostile file naming a million devices would
/// otherwise cost devices × segments.
pub const MAX_ANALYSED_DEVICES: usize = 64;

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

    /// The options of `proflens snapshot` flags / the UI settings panel (one conversion for
    /// both, so the page's exports are the CLI's bytes for the same settings).
    ///
    /// # Errors
    ///
    /// An unknown `curve` or `link_style` (message names the flag and the accepted values).
    pub fn from_settings(s: &SnapshotSettingsDto) -> Result<SnapshotOptions, String> {
        let mut o = SnapshotOptions::spec_defaults();
        o.analysis.peaks.top_n = s.top_n as usize;
        o.analysis.peaks.dedup_pct = s.dedup_pct;
        o.analysis.peaks.min_sep_ms = s.min_sep_ms;
        o.analysis.peaks.min_prominence_frac = s.min_prominence_pct / 100.0;
        o.analysis.top_contributors = s.top_contributors as usize;
        o.analysis.frame_depth = s.frame_depth as usize;
        o.analysis.curve = match s.curve.as_str() {
            "allocated" => CurveKind::Allocated,
            "active" => CurveKind::Active,
            "reserved" => CurveKind::Reserved,
            other => {
                return Err(format!(
                    "--curve: expected allocated, active or reserved, got {other:?}"
                ))
            }
        };
        o.report.top_contributors = s.top_contributors as usize;
        o.report.links.style = LinkStyle::parse(&s.link_style).ok_or_else(|| {
            format!(
                "--link-style: expected vscode, cursor, github, file or none, got {:?}",
                s.link_style
            )
        })?;
        let nonempty = |v: &Option<String>| v.clone().filter(|x| !x.trim().is_empty());
        o.report.links.repo_url = nonempty(&s.repo_url);
        o.report.links.commit = nonempty(&s.commit);
        o.report.links.project_root = nonempty(&s.project_root);
        o.report.links.path_map = s.path_map.clone();
        // Frames are project frames when under the root (recorded or mapped into it) and pass the rule.
        o.analysis.project_root = nonempty(&s.project_root);
        o.analysis.rule.include_prefixes = s.include_prefix.clone();
        o.analysis.rule.exclude_prefixes = s.exclude_prefix.clone();
        Ok(o)
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
    /// Decoding problems only (kept so that a re-analysis with other options rebuilds `problems`).
    pub decode_problems: Problems,
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
    /// The JSON document as `proflens snapshot --json FILE` writes it (pretty, no final newline).
    ///
    /// # Errors
    ///
    /// JSON encoding failed.
    pub fn json_text(&self, opts: &ReportOptions) -> Result<String, String> {
        serde_json::to_string_pretty(&self.json(opts))
            .map_err(|e| format!("JSON encoding failed: {e}"))
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
    Ok(analyse(file, decoded.snapshot, decoded.problems, opts))
}

/// Analyses a decoded snapshot: one [`DeviceAnalysis`] per device slot with a trace, then one
/// per device with end-state segments only; `problems` = `decode_problems` + device notes.
pub fn analyse(
    file: &InputFile,
    snapshot: Snapshot,
    decode_problems: Problems,
    opts: &SnapshotOptions,
) -> SnapshotRun {
    let mut run = SnapshotRun {
        file: file.clone(),
        snapshot,
        devices: Vec::new(),
        problems: Problems::new(),
        decode_problems,
    };
    run.reanalyse(opts);
    run
}

impl SnapshotRun {
    /// Recomputes every device analysis (and the problems) with `opts`; the decoded
    /// snapshot is reused, so this costs the analysis only, never a second decode.
    pub fn reanalyse(&mut self, opts: &SnapshotOptions) {
        let snapshot = &self.snapshot;
        let file = &self.file;
        let mut problems = self.decode_problems.clone();
        let mut devices = Vec::new();
        let mut not_analysed: Vec<i64> = Vec::new();
        for dev in snapshot.devices.iter().filter(|d| !d.entries.is_empty()) {
            if devices.len() < MAX_ANALYSED_DEVICES {
                devices.push(analyze(snapshot, dev, &opts.analysis));
            } else {
                not_analysed.push(dev.device as i64);
            }
        }
        // Devices that own end-state segments but have no trace entries.
        let traced: HashSet<i64> = snapshot
            .devices
            .iter()
            .filter(|t| !t.entries.is_empty())
            .map(|t| t.device as i64)
            .collect();
        let mut seg_devs: Vec<i64> = snapshot.segments.iter().map(|s| s.device).collect();
        seg_devs.sort_unstable();
        seg_devs.dedup();
        for d in seg_devs {
            if traced.contains(&d) {
                continue;
            }
            if d < 0 || d > u32::MAX as i64 || devices.len() >= MAX_ANALYSED_DEVICES {
                not_analysed.push(d);
                continue;
            }
            let empty = DeviceTrace {
                device: d as u32,
                ..Default::default()
            };
            devices.push(analyze(snapshot, &empty, &opts.analysis));
        }
        if !not_analysed.is_empty() {
            let first: Vec<String> = not_analysed.iter().take(5).map(|d| d.to_string()).collect();
            let more = if not_analysed.len() > 5 { ", …" } else { "" };
            problems.push(Problem::new(
                Severity::Warning,
                "SNAP-DEVICES",
                Position::file(file.path.as_str()),
                format!(
                    "{} devices are not analysed (devices {}{more}): only devices 0 to {} can be, \
                     and at most {MAX_ANALYSED_DEVICES} per snapshot",
                    not_analysed.len(),
                    first.join(", "),
                    u32::MAX
                ),
            ));
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
        self.devices = devices;
        self.problems = problems;
    }
}
