//! The snapshot tab's session state (torch-snapshot.md §6.3, §7): one analysed
//! snapshot ([`SnapshotRun`]) kept in the worker with its settings and the per-device series
//! computed once (time axes, reserved − active, allocator histories). It lives in the session,
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

use crate::analysis::snapshot::allocator::AllocatorHistory;
use crate::engine::read::snapshot::{SnapshotOptions, SnapshotRun};
use crate::protocol::snapshot::{
    SnapBandsDto, SnapBandsQuery, SnapCurveDto, SnapCurveQuery, SnapExportKind, SnapLiveDto,
    SnapLiveQuery, SnapSegmentsDto, SnapStackDto, SnapshotSettingsDto, SnapshotSummaryDto,
};
use crate::protocol::snapshot_allocator::{SnapAllocatorDto, SnapAllocatorQuery};
use crate::report::snapshot_md;
use crate::views::snapshot::{allocator, fragmentation_series, times_ms, SnapshotData};

/// One analysed snapshot file and what the view needs beside it.
pub struct SnapshotView {
    target: u32,
    run: SnapshotRun,
    settings: SnapshotSettingsDto,
    opts: SnapshotOptions,
    /// Per device slot (parallel to `run.devices`): ms since the first `time_us`, when recorded.
    times: Vec<Option<Vec<f64>>>,
    /// Per device slot: the allocator history (checkpoints of the backward walk), for devices
    /// with a trace ([`allocator`]).
    allocs: Vec<Option<AllocatorHistory>>,
    /// Per device slot: `reserved − active` after each entry and before the first (§7.3
    /// fragmentation), the curve's fourth series.
    frag: Vec<(Vec<i64>, i64)>,
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
        let times = times_ms(&run.snapshot, &run.devices);
        let allocs = allocator::histories(&run.snapshot, &run.devices);
        let frag = fragmentation_series(&run.devices);
        SnapshotView {
            target,
            run,
            settings,
            opts,
            times,
            allocs,
            frag,
        }
    }

    /// The analysed run.
    pub fn run(&self) -> &SnapshotRun {
        &self.run
    }

    /// The current settings.
    pub fn settings(&self) -> &SnapshotSettingsDto {
        &self.settings
    }

    /// The engine options of the current settings.
    pub fn options(&self) -> &SnapshotOptions {
        &self.opts
    }

    /// Re-analyses with `settings` (project root, links, peak options); the decoded snapshot
    /// is reused. Returns the new summary.
    ///
    /// # Errors
    ///
    /// Invalid settings; the previous analysis is kept.
    pub fn set_settings(
        &mut self,
        settings: SnapshotSettingsDto,
    ) -> Result<SnapshotSummaryDto, String> {
        let opts = SnapshotOptions::from_settings(&settings)?;
        self.run.reanalyse(&opts);
        self.opts = opts;
        self.settings = settings;
        Ok(self.summary())
    }

    /// The run's parts as the views read them.
    pub fn data(&self) -> SnapshotData<'_> {
        SnapshotData {
            target: self.target,
            file: &self.run.file.path,
            bytes: self.run.file.size,
            snap: &self.run.snapshot,
            devices: &self.run.devices,
            analysis: &self.opts.analysis,
            links: &self.opts.report.links,
            top: self.opts.report.top_contributors,
            settings: &self.settings,
            times: &self.times,
            frag: &self.frag,
            allocs: &self.allocs,
        }
    }

    /// The summary ([`SnapshotData::summary`]).
    pub fn summary(&self) -> SnapshotSummaryDto {
        self.data().summary()
    }

    /// Downsampled curves of one device ([`SnapshotData::curve`]).
    ///
    /// # Errors
    ///
    /// Unknown device slot.
    pub fn curve(&self, q: &SnapCurveQuery) -> Result<SnapCurveDto, String> {
        self.data().curve(q)
    }

    /// The live set after any entry ([`SnapshotData::live_at`]).
    ///
    /// # Errors
    ///
    /// Unknown device slot, or a device without trace entries.
    pub fn live_at(&self, q: &SnapLiveQuery) -> Result<SnapLiveDto, String> {
        self.data().live_at(q)
    }

    /// One record's stack ([`SnapshotData::stack`]).
    ///
    /// # Errors
    ///
    /// Unknown device slot or record.
    pub fn stack(&self, slot: u32, record: u32) -> Result<SnapStackDto, String> {
        self.data().stack(slot, record)
    }

    /// End-state segments and fragmentation ([`SnapshotData::segments`]).
    ///
    /// # Errors
    ///
    /// Unknown device slot.
    pub fn segments(&self, slot: u32, limit: u32) -> Result<SnapSegmentsDto, String> {
        self.data().segments(slot, limit)
    }

    /// The Active Memory Timeline ([`SnapshotData::bands`]).
    ///
    /// # Errors
    ///
    /// Unknown device slot.
    pub fn bands(&self, q: &SnapBandsQuery) -> Result<SnapBandsDto, String> {
        self.data().bands(q)
    }

    /// The allocator state after any entry ([`SnapshotData::allocator`]).
    ///
    /// # Errors
    ///
    /// Unknown device slot.
    pub fn allocator(&self, q: &SnapAllocatorQuery) -> Result<SnapAllocatorDto, String> {
        self.data().allocator(q)
    }

    /// An export: `(file name, MIME type, bytes)`, byte-identical to `proflens snapshot
    /// --report` / `--json` with the same settings.
    ///
    /// # Errors
    ///
    /// JSON encoding failed (not expected for our own document).
    pub fn export(&self, what: SnapExportKind) -> Result<(String, &'static str, Vec<u8>), String> {
        match what {
            SnapExportKind::ReportMd => Ok((
                snapshot_md::file_name(&self.run.file.path),
                "text/markdown",
                self.run.markdown(&self.opts.report).into_bytes(),
            )),
            SnapExportKind::Json => {
                let text = self.run.json_text(&self.opts.report)?;
                Ok((
                    json_file_name(&self.run.file.path),
                    "application/json",
                    text.into_bytes(),
                ))
            }
        }
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
