//! The snapshot tab's session state (torch-snapshot.md §6.3, §7): one analysed
//! snapshot ([`SnapshotRun`]) kept in the worker with its settings and the per-device series
//! computed once (time axes; the allocator histories at the first allocator
//! query, since most drops never ask for one). It lives in the session,
//! not in `views`, because it holds an engine run, re-analyses it and writes the exports; every
//! payload is built by the pure functions of [`crate::views::snapshot`] from the run's analysis
//! types, lent as a [`SnapshotData`] (labels from [`crate::analysis::snapshot::labels`], the
//! exports' own, so the page reads exactly as the exports).
//!
//! * [`SnapshotView::summary`], [`SnapshotView::curve`], [`SnapshotView::live_at`],
//!   [`SnapshotView::stack`], [`SnapshotView::segments`], [`SnapshotView::bands`],
//!   [`SnapshotView::allocator`]: see [`crate::views::snapshot`].
//! * [`SnapshotView::set_settings`]: a new project root / path map / link style / peak options
//!   re-runs the analysis on the decoded snapshot (no second decode).
//! * [`SnapshotView::export`]: the Markdown report and the JSON, the bytes `proflens snapshot`
//!   writes with the same settings.

use std::sync::OnceLock;

use crate::analysis::snapshot::allocator::AllocatorHistory;
use crate::engine::read::snapshot::{SnapshotOptions, SnapshotRun};
use crate::protocol::snapshot::{
    SnapExportKind, SnapQuery, SnapReply, SnapshotSettingsDto, SnapshotSummaryDto,
};
use crate::report::snapshot_md;
use crate::views::snapshot::{times_ms, DeviceTimes, SnapshotData};

/// What the snapshot tab keeps beside one analysed snapshot (the run itself stays in the
/// session's store): its settings and the per-device series computed once. Every query takes
/// the run it was made for.
pub struct ViewState {
    target: u32,
    settings: SnapshotSettingsDto,
    opts: SnapshotOptions,
    /// Per device slot (parallel to `run.devices`): ms since the first `time_us`, when recorded.
    times: Vec<Option<DeviceTimes>>,
    /// Per device slot: the allocator history (checkpoints of the backward walk), for devices
    /// with a trace ([`crate::views::snapshot::allocator`]); built at the first allocator query (about a tenth of the
    /// drop's time, and memory of its own, for a view many never open).
    allocs: OnceLock<Vec<Option<AllocatorHistory>>>,
}

impl ViewState {
    /// The state of `run` (target `target`, analysed with `opts`, made from `settings`).
    pub fn new(
        target: u32,
        run: &SnapshotRun,
        settings: SnapshotSettingsDto,
        opts: SnapshotOptions,
    ) -> Self {
        ViewState {
            target,
            times: times_ms(&run.snapshot, &run.devices),
            allocs: OnceLock::new(),
            settings,
            opts,
        }
    }

    /// The current settings.
    pub fn settings(&self) -> &SnapshotSettingsDto {
        &self.settings
    }

    /// The engine options of the current settings.
    pub fn options(&self) -> &SnapshotOptions {
        &self.opts
    }

    /// Re-analyses `run` with `settings` (project root, links, peak options); the decoded
    /// snapshot is reused. Returns the new summary.
    ///
    /// # Errors
    ///
    /// Invalid settings; the previous analysis is kept.
    pub fn set_settings(
        &mut self,
        run: &mut SnapshotRun,
        settings: SnapshotSettingsDto,
    ) -> Result<SnapshotSummaryDto, String> {
        let opts = SnapshotOptions::from_settings(&settings)?;
        run.reanalyse(&opts);
        self.opts = opts;
        self.settings = settings;
        Ok(self.summary(run))
    }

    /// `run`'s parts as the views read them.
    pub fn data<'a>(&'a self, run: &'a SnapshotRun) -> SnapshotData<'a> {
        SnapshotData {
            target: self.target,
            file: &run.file.path,
            bytes: run.file.size,
            snap: &run.snapshot,
            devices: &run.devices,
            analysis: &self.opts.analysis,
            links: &self.opts.report.links,
            top: self.opts.report.top_contributors,
            settings: &self.settings,
            times: &self.times,
            allocs: &self.allocs,
        }
    }

    /// The summary ([`SnapshotData::summary`]).
    pub fn summary(&self, run: &SnapshotRun) -> SnapshotSummaryDto {
        self.data(run).summary()
    }

    /// Answers one query of the snapshot tab ([`crate::views::snapshot`]); a `Settings` query
    /// re-analyses `run` ([`ViewState::set_settings`]).
    ///
    /// # Errors
    ///
    /// Unknown device slot or record, a device without trace entries, invalid settings.
    pub fn query(&mut self, run: &mut SnapshotRun, q: SnapQuery) -> Result<SnapReply, String> {
        let d = self.data(run);
        match q {
            SnapQuery::Curve(q) => d.curve(&q).map(SnapReply::Curve),
            SnapQuery::Live(q) => d.live_at(&q).map(SnapReply::Live),
            SnapQuery::Bands(q) => d.bands(&q).map(SnapReply::Bands),
            SnapQuery::Allocator(q) => d.allocator(&q).map(SnapReply::Allocator),
            SnapQuery::Stack { slot, record, .. } => d.stack(slot, record).map(SnapReply::Stack),
            SnapQuery::Segments { slot, limit, .. } => {
                d.segments(slot, limit).map(SnapReply::Segments)
            }
            SnapQuery::Settings { settings, .. } => {
                self.set_settings(run, settings).map(SnapReply::Summary)
            }
        }
    }

    /// An export of `run`: `(file name, MIME type, bytes)`, byte-identical to `proflens
    /// snapshot --report` / `--json` with the same settings.
    ///
    /// # Errors
    ///
    /// JSON encoding failed (not expected for our own document).
    pub fn export(
        &self,
        run: &SnapshotRun,
        what: SnapExportKind,
    ) -> Result<(String, &'static str, Vec<u8>), String> {
        match what {
            SnapExportKind::ReportMd => Ok((
                snapshot_md::file_name(&run.file.path),
                "text/markdown",
                run.markdown(&self.opts.report).into_bytes(),
            )),
            SnapExportKind::Json => {
                let text = run.json_text(&self.opts.report)?;
                Ok((
                    json_file_name(&run.file.path),
                    "application/json",
                    text.into_bytes(),
                ))
            }
        }
    }
}

/// One analysed snapshot that owns its run, with its [`ViewState`]: side B of a comparison,
/// tools and tests. The session keeps its runs in its store and only the state here.
pub struct SnapshotView {
    run: SnapshotRun,
    state: ViewState,
}

impl SnapshotView {
    /// Wraps an analysed run (made with `settings`) as target `target`.
    ///
    /// # Errors
    ///
    /// `settings` are invalid (unknown curve or link style).
    pub fn new(
        target: u32,
        mut run: SnapshotRun,
        settings: SnapshotSettingsDto,
    ) -> Result<Self, String> {
        let opts = SnapshotOptions::from_settings(&settings)?;
        run.reanalyse(&opts);
        Ok(Self::from_parts(target, run, settings, opts))
    }

    /// Wraps a run already analysed with `opts` (made from `settings`).
    pub fn from_parts(
        target: u32,
        run: SnapshotRun,
        settings: SnapshotSettingsDto,
        opts: SnapshotOptions,
    ) -> Self {
        let state = ViewState::new(target, &run, settings, opts);
        SnapshotView { run, state }
    }

    /// The analysed run.
    pub fn run(&self) -> &SnapshotRun {
        &self.run
    }

    /// The current settings.
    pub fn settings(&self) -> &SnapshotSettingsDto {
        self.state.settings()
    }

    /// The engine options of the current settings.
    pub fn options(&self) -> &SnapshotOptions {
        self.state.options()
    }

    /// [`ViewState::set_settings`] of the run.
    ///
    /// # Errors
    ///
    /// Invalid settings; the previous analysis is kept.
    pub fn set_settings(
        &mut self,
        settings: SnapshotSettingsDto,
    ) -> Result<SnapshotSummaryDto, String> {
        self.state.set_settings(&mut self.run, settings)
    }

    /// The run's parts as the views read them ([`ViewState::data`]).
    pub fn data(&self) -> SnapshotData<'_> {
        self.state.data(&self.run)
    }

    /// The summary ([`SnapshotData::summary`]).
    pub fn summary(&self) -> SnapshotSummaryDto {
        self.data().summary()
    }

    /// [`ViewState::query`] of the run.
    ///
    /// # Errors
    ///
    /// Those of [`ViewState::query`].
    pub fn query(&mut self, q: SnapQuery) -> Result<SnapReply, String> {
        self.state.query(&mut self.run, q)
    }

    /// [`ViewState::export`] of the run.
    ///
    /// # Errors
    ///
    /// JSON encoding failed (not expected for our own document).
    pub fn export(&self, what: SnapExportKind) -> Result<(String, &'static str, Vec<u8>), String> {
        self.state.export(&self.run, what)
    }
}

/// `<stem>.proflens.json` for a snapshot file name.
pub fn json_file_name(snapshot_file: &str) -> String {
    let md = snapshot_md::file_name(snapshot_file);
    let stem = md
        .strip_prefix("MEM_PEAK_ANALYSIS_")
        .and_then(|s| s.strip_suffix(".md"))
        .unwrap_or("snapshot");
    format!("{stem}.proflens.json")
}

/// The unit tests name the axis through `super::*`.
#[cfg(test)]
use crate::protocol::snapshot::SnapAxis;
#[cfg(test)]
mod tests;
