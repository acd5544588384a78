//! The snapshot tab's session state (issue 4 UI, torch-snapshot.md §6.3, §7): one analysed
//! snapshot ([`SnapshotRun`]) kept in the worker with its settings, and every query of the
//! snapshot tab answered from it. It lives in the session, not in `views`, because it holds
//! an engine run, re-analyses it and writes the exports; its payloads use the report's
//! labels and numbers (the JSON document, [`crate::report::snapshot_json::Labeler`]), so the
//! page reads exactly as the exports. The pure axis math is [`crate::views::snapshot_axis`].
//!
//! * [`SnapshotView::summary`]: files, features, devices, peak list, warnings (from the same
//!   JSON document the CLI writes, so the numbers agree with the report).
//! * [`SnapshotView::curve`]: allocated / active / reserved per device, min/max per pixel
//!   column ([`crate::views::snapshot_axis`]), over entry index or time, with the reported points as marks.
//! * [`SnapshotView::live_at`]: the live set after **any** entry (§7.6) — one pass over the
//!   lifetime table with [`crate::analysis::snapshot::live::live_sets`], the same machinery as
//!   the peak report, so the live set at a peak equals the report's; plus contributors with
//!   links and call chains, the largest tensors and the icicle (§7.7) — see [`live`].
//! * [`SnapshotView::stack`], [`SnapshotView::segments`]: one record's stack; end-state
//!   segments and fragmentation (§7.10 metrics).
//! * [`SnapshotView::allocator`]: the segment map after **any** entry, its fragmentation
//!   classes and the OOM explanation — see [`allocator`].
//! * [`SnapshotView::set_settings`]: a new project root / path map / link style / peak options
//!   re-runs the analysis on the decoded snapshot (no second decode).
//! * [`SnapshotView::export`]: the Markdown report and the JSON, the bytes `proflens snapshot`
//!   writes with the same settings.

pub mod allocator;
pub mod bands;
pub mod live;

use crate::analysis::snapshot::device::DeviceAnalysis;
use crate::engine::snapshot::{SnapshotOptions, SnapshotRun};
use crate::model::snapshot::{BlockState, DeviceTrace};
use crate::protocol::snapshot::{
    SnapAxis, SnapCurveDto, SnapCurveQuery, SnapDeviceDto, SnapExportKind, SnapLevelDto,
    SnapMarkDto, SnapNoteDto, SnapPointDto, SnapSegmentDto, SnapSegmentsDto, SnapSeriesDto,
    SnapshotSettingsDto, SnapshotSummaryDto,
};
use crate::report::snapshot_json::{DeviceJson, LevelJson};
use crate::report::snapshot_md;

use crate::views::snapshot_axis::{min_max, time_axis_ms, Axis};

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
    allocs: Vec<Option<crate::analysis::snapshot::allocator::AllocatorHistory>>,
    /// Per device slot: `reserved − active` after each entry and before the first (§7.3
    /// fragmentation), the curve's fourth series.
    frag: Vec<(Vec<i64>, i64)>,
}

/// Time in ms between the device's first `time_us` and `t_us`.
fn rel_ms(first_us: Option<i64>, t_us: Option<i64>) -> Option<f64> {
    Some((t_us? - first_us?) as f64 / 1000.0)
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
        let times = run
            .devices
            .iter()
            .map(|d| {
                let t = trace(&run, d)?;
                if !t.entries.has_time() {
                    return None;
                }
                time_axis_ms((0..t.entries.len()).map(|i| t.entries.time_us(i)))
            })
            .collect();
        let allocs = allocator::histories(&run);
        let frag = run
            .devices
            .iter()
            .map(|d| {
                let c = &d.curves;
                let v = (0..c.reserved.len()).map(|i| c.fragmentation(i)).collect();
                (v, c.baseline_reserved - c.baseline_active)
            })
            .collect();
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

    fn device(&self, slot: u32) -> Result<(&DeviceAnalysis, Axis<'_>, Option<&[f64]>), String> {
        let d = self.run.devices.get(slot as usize).ok_or_else(|| {
            format!(
                "{}: no device slot {slot} (the snapshot has {})",
                self.run.file.path,
                self.run.devices.len()
            )
        })?;
        let times = self.times.get(slot as usize).and_then(|t| t.as_deref());
        Ok((d, Axis::Index { n: d.n_entries }, times))
    }

    /// The summary: format, settings, segments, and per device the levels, the peak list,
    /// leaks, delayed frees and warnings.
    pub fn summary(&self) -> SnapshotSummaryDto {
        let j = self.run.json(&self.opts.report);
        let f = &j.format;
        let mut features = Vec::new();
        for (on, name) in [
            (f.has_time_us, "time_us"),
            (f.has_history, "legacy history"),
            (f.has_annotations, "annotations"),
            (f.has_compile_context, "compile_context"),
            (f.has_user_metadata, "user_metadata"),
            (f.has_fx_frames, "FX frames"),
        ] {
            if on {
                features.push(name.to_string());
            }
        }
        let mut fr = live::Frames::new(self);
        let top = self.opts.report.top_contributors;
        let devices = j
            .devices
            .iter()
            .chain(&j.end_state_only)
            .zip(&self.run.devices)
            .enumerate()
            .map(|(slot, (d, a))| {
                let mut dto = device_dto(slot as u32, d);
                dto.leaks = a
                    .leaks
                    .iter()
                    .take(top)
                    .map(|c| fr.contributor(c, 0))
                    .collect();
                dto
            })
            .collect();
        SnapshotSummaryDto {
            target: self.target,
            file: j.file.clone(),
            bytes: j.bytes,
            protocol: f.protocol,
            top_level: f.top_level.to_string(),
            features,
            allocator_settings: j.allocator_settings.clone(),
            segments: (
                j.segments.count as u64,
                j.segments.total_size_sum,
                j.segments.allocated_size_sum,
                j.segments.expandable as u64,
                j.segments.private_pools as u64,
            ),
            block_states: j.segments.block_states.clone().into_iter().collect(),
            devices,
            settings: self.settings.clone(),
            note: j.note.to_string(),
        }
    }

    /// Downsampled curves of one device (§7.3), `q.width_px` columns over `q.range`.
    ///
    /// # Errors
    ///
    /// Unknown device slot.
    pub fn curve(&self, q: &SnapCurveQuery) -> Result<SnapCurveDto, String> {
        let (d, index_axis, times) = self.device(q.slot)?;
        let (axis, kind) = match (q.axis, times) {
            (SnapAxis::Time, Some(ms)) => (Axis::Time { ms }, SnapAxis::Time),
            _ => (index_axis, SnapAxis::Index),
        };
        let full = axis.full();
        let (x0, x1) = match q.range {
            Some((a, b)) if b > a && a.is_finite() && b.is_finite() => (a, b),
            _ => full,
        };
        let c = &d.curves;
        let frag = &self.frag[q.slot as usize];
        let curves: [(&[i64], i64); 4] = [
            (&c.allocated, c.baseline_allocated),
            (&c.active, c.baseline_active),
            (&c.reserved, c.baseline_reserved),
            (&frag.0, frag.1),
        ];
        let width = q.width_px.clamp(1, 8192) as usize;
        let cols = min_max(&axis, &curves, x0, x1, width);
        let y_max = cols
            .curves
            .iter()
            .flat_map(|(_, hi)| hi.iter().copied())
            .fold(0.0, f64::max);
        let series = ["allocated", "active", "reserved", "reserved_minus_active"]
            .iter()
            .zip(cols.curves)
            .map(|(name, (min, max))| SnapSeriesDto {
                name: name.to_string(),
                min,
                max,
            })
            .collect();
        let marks = d
            .points
            .iter()
            .filter(|p| {
                d.n_entries > 0 || p.kind != crate::analysis::snapshot::device::PointKind::End
            })
            .map(|p| SnapMarkDto {
                kind: crate::report::snapshot_json::point_kind_name(p.kind).to_string(),
                x: axis.pos(p.index),
                bytes: p.height,
                index: p.index as u32,
            })
            .collect();
        Ok(SnapCurveDto {
            target: self.target,
            slot: q.slot,
            axis: kind,
            x0,
            x1,
            full,
            series,
            y_max,
            marks,
            entries_in_window: cols.entries,
        })
    }

    /// End-state segments of one device, largest first (at most `limit`), with the
    /// fragmentation metrics of §7.10 at the end state.
    ///
    /// # Errors
    ///
    /// Unknown device slot.
    pub fn segments(&self, slot: u32, limit: u32) -> Result<SnapSegmentsDto, String> {
        let (d, _, _) = self.device(slot)?;
        let snap = &self.run.snapshot;
        let mut rows = Vec::new();
        let (mut reserved, mut allocated, mut inactive, mut largest, mut waste) = (0, 0, 0, 0, 0);
        for s in snap.segments.iter().filter(|s| s.device == d.device as i64) {
            let blocks = snap.blocks_of(s);
            let inact: Vec<u64> = blocks
                .iter()
                .filter(|b| b.state == BlockState::Inactive)
                .map(|b| b.size)
                .collect();
            let seg_inactive: u64 = inact.iter().sum();
            let seg_largest = inact.iter().copied().max().unwrap_or(0);
            waste += blocks
                .iter()
                .filter(|b| b.state == BlockState::ActiveAllocated)
                .map(|b| b.size.saturating_sub(b.requested_size))
                .sum::<u64>();
            reserved += s.total_size;
            allocated += s.allocated_size;
            inactive += seg_inactive;
            largest = largest.max(seg_largest);
            rows.push(SnapSegmentDto {
                address: format!("0x{:x}", s.address),
                total_bytes: s.total_size,
                allocated_bytes: s.allocated_size,
                active_bytes: s.active_size,
                inactive_bytes: seg_inactive,
                largest_inactive_bytes: seg_largest,
                blocks: blocks.len() as u64,
                stream: s.stream,
                segment_type: snap.pools.strings.get(s.segment_type).to_string(),
                pool: s.pool_id,
                expandable: s.is_expandable,
            });
        }
        let total = rows.len() as u64;
        crate::base::sort::sort_by(&mut rows, |a, b| {
            b.total_bytes
                .cmp(&a.total_bytes)
                .then(a.address.cmp(&b.address))
        });
        rows.truncate(limit as usize);
        Ok(SnapSegmentsDto {
            target: self.target,
            slot,
            segments: rows,
            total_segments: total,
            reserved_bytes: reserved,
            allocated_bytes: allocated,
            inactive_bytes: inactive,
            largest_inactive_bytes: largest,
            external_fragmentation: if inactive > 0 {
                1.0 - largest as f64 / inactive as f64
            } else {
                0.0
            },
            internal_waste_bytes: waste,
        })
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

/// The device trace behind an analysis (None for a segments-only device).
fn trace<'a>(run: &'a SnapshotRun, d: &DeviceAnalysis) -> Option<&'a DeviceTrace> {
    run.snapshot
        .devices
        .get(d.device as usize)
        .filter(|t| t.device == d.device && !t.entries.is_empty())
}

fn level(l: &LevelJson, first_us: Option<i64>) -> SnapLevelDto {
    SnapLevelDto {
        bytes: l.bytes,
        index: l.index.map(|i| i as u32),
        time_ms: rel_ms(first_us, l.time_us),
    }
}

fn device_dto(slot: u32, d: &DeviceJson) -> SnapDeviceDto {
    let first = d.first_time_us;
    let last = d
        .points
        .iter()
        .filter(|p| p.kind == "end")
        .find_map(|p| p.time_us);
    SnapDeviceDto {
        slot,
        device: d.device,
        entries: d.entries as u64,
        has_time: first.is_some(),
        duration_ms: rel_ms(first, last),
        actions: d.actions.clone().into_iter().collect(),
        streams: d.streams as u64,
        baseline_bytes: (
            d.baseline_allocated_bytes,
            d.baseline_active_bytes,
            d.baseline_reserved_bytes,
        ),
        max_allocated: level(&d.max_allocated, first),
        max_active: level(&d.max_active, first),
        max_reserved: level(&d.max_reserved, first),
        records: d.records as u64,
        pre_records: d.pre_records as u64,
        unmatched_free_completed: d.unmatched_free_completed,
        points: d
            .points
            .iter()
            .map(|p| SnapPointDto {
                kind: p.kind.to_string(),
                index: p.index as u32,
                time_ms: rel_ms(first, p.time_us),
                height_bytes: p.height_bytes,
                allocated_bytes: p.allocated_bytes,
                active_bytes: p.active_bytes,
                reserved_bytes: p.reserved_bytes,
                prominence_bytes: p.prominence_bytes,
                recurring: p.recurring.as_ref().map(|r| r.count as u32),
                annotations: p.annotations.clone(),
                live_bytes: p.live_bytes,
                live_tensors: p.live_tensors,
                top_site: p.contributors.first().map(|c| c.site.clone()),
                oom_requested_bytes: p.oom_requested_bytes,
            })
            .collect(),
        leaks: Vec::new(),
        delayed_frees: d
            .delayed_frees
            .iter()
            .map(|x| SnapNoteDto {
                code: x.site.clone(),
                message: format!(
                    "{} in {} tensor(s), longest free_requested → free_completed gap {} entries{}",
                    snapshot_md::exact(x.bytes as i64),
                    x.tensors,
                    x.max_gap_entries,
                    x.max_gap_us
                        .map(|us| format!(" ({:.3} ms)", us as f64 / 1000.0))
                        .unwrap_or_default()
                ),
            })
            .collect(),
        warnings: d
            .warnings
            .iter()
            .map(|n| SnapNoteDto {
                code: n.code.to_string(),
                message: n.message.clone(),
            })
            .collect(),
        reference: vec![
            (
                "in_window_replay peak".into(),
                format!(
                    "{} @ entry {}",
                    snapshot_md::exact(d.in_window_replay.peak_bytes as i64),
                    d.in_window_replay.peak_event_index
                ),
            ),
            (
                "memoryviz_like max".into(),
                snapshot_md::exact(d.memoryviz_like.max_bytes as i64),
            ),
            (
                "memoryviz_like baseline".into(),
                snapshot_md::exact(d.memoryviz_like.baseline_bytes as i64),
            ),
        ],
    }
}

#[cfg(test)]
mod tests;
