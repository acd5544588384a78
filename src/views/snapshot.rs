//! The snapshot tab's payloads (torch-snapshot.md §6.3, §7): pure functions of a
//! decoded snapshot ([`Snapshot`]) and its device analyses ([`DeviceAnalysis`]), labelled by
//! [`crate::analysis::snapshot::labels`] — the labels the JSON and Markdown exports use — so the
//! page reads exactly as the exports without building the JSON document. The state (the held
//! run, its settings, re-analysis, exports) is `engine::session::snapshot_view::SnapshotView`,
//! which lends its parts as a [`SnapshotData`] to answer each query.
//!
//! * [`SnapshotData::summary`]: files, features, devices, peak list, warnings — the numbers of
//!   the report's device objects (`tests/snapshot_summary_json.rs` compares them on every
//!   real fixture).
//! * [`SnapshotData::curve`]: allocated / active / reserved / reserved − active per device,
//!   min/max per pixel column ([`crate::views::snapshot_axis`]), over entry index or time, with
//!   the reported points as marks.
//! * [`SnapshotData::live_at`], [`SnapshotData::stack`]: the live set after **any** entry
//!   (§7.6), contributors, tensors and the icicle (§7.7); one record's stack — see [`live`].
//! * [`SnapshotData::segments`]: end-state segments and their fragmentation (§7.10 metrics,
//!   the rule of [`crate::analysis::snapshot::allocator::fragmentation`]).
//! * [`SnapshotData::bands`]: the Active Memory Timeline with site labels — see [`bands`].
//! * [`SnapshotData::allocator`]: the segment map after **any** entry, its fragmentation
//!   classes and the OOM explanation — see [`allocator`].

pub mod allocator;
pub mod bands;
pub mod live;

use std::sync::OnceLock;

use crate::analysis::snapshot::allocator::fragmentation::{of_end_segment, Fragmentation};
use crate::analysis::snapshot::allocator::AllocatorHistory;
use crate::analysis::snapshot::device::{AnalysisOptions, DeviceAnalysis, PointKind};
use crate::analysis::snapshot::labels::{
    feature_names, point_kind_name, top_level_name, Labeler, INVISIBLE_MEMORY_NOTE,
};
use crate::analysis::snapshot::links::LinkOptions;
use crate::analysis::snapshot::reference::segments_summary;
use crate::base::format::bytes_exact;
use crate::model::snapshot::{DeviceTrace, Snapshot, NO_TIME};
use crate::protocol::snapshot::{
    SnapAxis, SnapCurveDto, SnapCurveQuery, SnapDeviceDto, SnapLevelDto, SnapMarkDto, SnapNoteDto,
    SnapPointDto, SnapSegmentDto, SnapSegmentsDto, SnapSeriesDto, SnapshotSettingsDto,
    SnapshotSummaryDto,
};
use crate::views::snapshot_axis::{min_max_levels, raw_time_origin, time_axis_ms, Axis, Levels};

/// What the snapshot tab's queries read: one analysed snapshot, the options it was analysed
/// with, and the per-device series computed once when the view was made.
#[derive(Clone, Copy)]
pub struct SnapshotData<'a> {
    /// Target index (in `InventoryDto::snapshots`).
    pub target: u32,
    /// Input file (relative path).
    pub file: &'a str,
    /// Input size in bytes.
    pub bytes: u64,
    /// The decoded snapshot.
    pub snap: &'a Snapshot,
    /// One analysis per device slot (traced devices first, then segments-only ones).
    pub devices: &'a [DeviceAnalysis],
    /// The analysis options (site rule, frame depth, peak curve).
    pub analysis: &'a AnalysisOptions,
    /// Links and display paths (§7.8).
    pub links: &'a LinkOptions,
    /// Contributors listed per point (`--top-contributors` of the report).
    pub top: usize,
    /// The settings, echoed in the summary.
    pub settings: &'a SnapshotSettingsDto,
    /// Per device slot: [`times_ms`].
    pub times: &'a [Option<DeviceTimes>],
    /// Per device slot: [`allocator::histories`], built by the first [`Self::allocator`] call
    /// (most views never need them).
    pub allocs: &'a OnceLock<Vec<Option<AllocatorHistory>>>,
}

/// Time in ms between the device's first `time_us` and `t_us`.
pub(crate) fn rel_ms(first_us: Option<i64>, t_us: Option<i64>) -> Option<f64> {
    Some((t_us? - first_us?) as f64 / 1000.0)
}

/// The device trace behind an analysis (None for a segments-only device, §3.2 end state only).
pub fn trace<'a>(snap: &'a Snapshot, d: &DeviceAnalysis) -> Option<&'a DeviceTrace> {
    snap.devices
        .get(d.device as usize)
        .filter(|t| t.device == d.device && !t.entries.is_empty())
}

/// A device's time axis as kept beside its analysis ([`times_ms`]).
#[derive(Clone, Debug, PartialEq)]
pub enum DeviceTimes {
    /// The trace's own `time_us` column is the axis ([`Axis::TimeUs`]): nothing kept per entry.
    Raw {
        /// The first entry's `time_us`.
        t0: i64,
    },
    /// ms since the first `time_us`, per entry ([`time_axis_ms`]): the column misses times or
    /// goes back somewhere.
    Ms(Vec<f64>),
}

/// Per device slot: the time axis in ms since the first `time_us` (`time_us` made
/// non-decreasing), when the trace records times; the trace's own column when it is already
/// that axis.
pub fn times_ms(snap: &Snapshot, devices: &[DeviceAnalysis]) -> Vec<Option<DeviceTimes>> {
    devices
        .iter()
        .map(|d| {
            let t = trace(snap, d)?;
            if !t.entries.has_time() {
                return None;
            }
            let col = t.entries.time_us_column();
            match raw_time_origin(col, NO_TIME).filter(|_| col.len() == t.entries.len()) {
                Some(t0) => Some(DeviceTimes::Raw { t0 }),
                None => time_axis_ms((0..t.entries.len()).map(|i| t.entries.time_us(i)))
                    .map(DeviceTimes::Ms),
            }
        })
        .collect()
}

/// The asked x range when it is a finite, non-empty one, else the whole axis `full`.
fn window(full: (f64, f64), asked: Option<(f64, f64)>) -> (f64, f64) {
    match asked {
        Some((a, b)) if b > a && a.is_finite() && b.is_finite() => (a, b),
        _ => full,
    }
}

impl<'a> SnapshotData<'a> {
    /// The analysis of device slot `slot`.
    fn device(&self, slot: u32) -> Result<&'a DeviceAnalysis, String> {
        self.devices.get(slot as usize).ok_or_else(|| {
            format!(
                "{}: no device slot {slot} (the snapshot has {})",
                self.file,
                self.devices.len()
            )
        })
    }

    /// The analysis of device slot `slot` and its x axis: time when asked and recorded,
    /// else entry index (the axis given back says which).
    fn device_on(
        &self,
        slot: u32,
        asked: SnapAxis,
    ) -> Result<(&'a DeviceAnalysis, Axis<'a>, SnapAxis), String> {
        let d = self.device(slot)?;
        let times = self.times.get(slot as usize).and_then(|t| t.as_ref());
        Ok(match (asked, times, trace(self.snap, d)) {
            (SnapAxis::Time, Some(DeviceTimes::Ms(ms)), _) => {
                (d, Axis::Time { ms }, SnapAxis::Time)
            }
            (SnapAxis::Time, Some(&DeviceTimes::Raw { t0 }), Some(t)) => {
                let us = t.entries.time_us_column();
                (d, Axis::TimeUs { us, t0 }, SnapAxis::Time)
            }
            _ => (d, Axis::Index { n: d.n_entries }, SnapAxis::Index),
        })
    }

    /// The labeler of the current link options.
    pub fn labeler(&self) -> Labeler<'a> {
        Labeler {
            snap: self.snap,
            links: self.links,
        }
    }

    /// The summary: format, settings, segments, and per device the levels, the peak list,
    /// leaks, delayed frees and warnings (the report's numbers and labels).
    pub fn summary(&self) -> SnapshotSummaryDto {
        let snap = self.snap;
        let seg = segments_summary(snap);
        let mut fr = live::Frames::new(self);
        let devices = self
            .devices
            .iter()
            .enumerate()
            .map(|(slot, d)| {
                let mut dto = self.device_dto(slot as u32, d);
                dto.leaks = d
                    .leaks
                    .iter()
                    .take(self.top)
                    .map(|c| fr.contributor(c, 0))
                    .collect();
                dto
            })
            .collect();
        SnapshotSummaryDto {
            target: self.target,
            file: self.file.to_string(),
            bytes: self.bytes,
            protocol: snap.features.protocol,
            encoding: match snap.features.encoding {
                crate::model::snapshot::Encoding::Json => "JSON".to_string(),
                crate::model::snapshot::Encoding::Pickle => {
                    format!("pickle protocol {}", snap.features.protocol)
                }
            },
            top_level: top_level_name(snap.features.top_level).to_string(),
            features: feature_names(snap)
                .into_iter()
                .map(str::to_string)
                .collect(),
            allocator_settings: snap
                .settings
                .as_ref()
                .map(|s| s.iter().map(|(k, v)| (k.clone(), v.to_string())).collect()),
            segments: (
                seg.count as u64,
                seg.total_size_sum,
                seg.allocated_size_sum,
                seg.expandable as u64,
                seg.private_pools as u64,
            ),
            block_states: seg.block_states.into_iter().collect(),
            devices,
            settings: self.settings.clone(),
            note: INVISIBLE_MEMORY_NOTE.to_string(),
        }
    }

    /// One device of the summary (leaks left empty: they need the page's contributor form).
    /// Its trace is looked up as the report's device object looks it up (by device index).
    fn device_dto(&self, slot: u32, d: &DeviceAnalysis) -> SnapDeviceDto {
        let l = self.labeler();
        let dev = self.snap.devices.get(d.device as usize);
        let time = |i: usize| dev.and_then(|t| t.entries.time_us(i));
        let first = dev.and_then(|t| t.entries.first_time_us());
        let level = |(bytes, index): (i64, Option<usize>)| SnapLevelDto {
            bytes,
            index: index.map(|i| i as u32),
            time_ms: rel_ms(first, index.and_then(time)),
        };
        let last = d
            .points
            .iter()
            .filter(|p| p.kind == PointKind::End)
            .find_map(|p| p.time_us);
        let mut actions = dev.map(|t| t.action_counts()).unwrap_or_default();
        crate::base::sort::sort(&mut actions);
        SnapDeviceDto {
            slot,
            device: d.device,
            entries: d.n_entries as u64,
            has_time: first.is_some(),
            duration_ms: rel_ms(first, last),
            actions,
            streams: dev.map_or(0, |t| t.entries.stream_values().len()) as u64,
            baseline_bytes: (
                d.curves.baseline_allocated,
                d.curves.baseline_active,
                d.curves.baseline_reserved,
            ),
            max_allocated: level(d.max[0]),
            max_active: level(d.max[1]),
            max_reserved: level(d.max[2]),
            records: d.lifetimes.len() as u64,
            pre_records: d.lifetimes.pre_count() as u64,
            unmatched_free_completed: d.lifetimes.unmatched_free_completed,
            points: d
                .points
                .iter()
                .map(|p| SnapPointDto {
                    kind: point_kind_name(p.kind).to_string(),
                    index: p.index as u32,
                    time_ms: rel_ms(first, p.time_us),
                    height_bytes: p.height,
                    allocated_bytes: p.allocated,
                    active_bytes: p.active,
                    reserved_bytes: p.reserved,
                    prominence_bytes: p.prominence,
                    recurring: p.recurring.as_ref().map(|r| r.count as u32),
                    annotations: p.annotations.clone(),
                    live_bytes: p.live_bytes,
                    live_tensors: p.live_tensors,
                    top_site: p.contributors.iter().take(self.top).next().map(|c| l.site(c)),
                    oom_requested_bytes: p.oom.map(|o| o.0),
                })
                .collect(),
            leaks: Vec::new(),
            delayed_frees: d
                .delayed
                .by_site
                .iter()
                .take(self.top)
                .map(|(c, gap, us)| SnapNoteDto {
                    code: l.site(c),
                    message: format!(
                        "{} in {} tensor(s), longest free_requested → free_completed gap {gap} entries{}",
                        bytes_exact(c.bytes as i64),
                        c.tensors,
                        us.map(|us| format!(" ({:.3} ms)", us as f64 / 1000.0))
                            .unwrap_or_default()
                    ),
                })
                .collect(),
            warnings: d
                .notes
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
                        bytes_exact(d.in_window_replay.peak_bytes as i64),
                        d.in_window_replay.peak_event_index
                    ),
                ),
                (
                    "memoryviz_like max".into(),
                    bytes_exact(d.memoryviz_like.max_bytes as i64),
                ),
                (
                    "memoryviz_like baseline".into(),
                    bytes_exact(d.memoryviz_like.baseline_bytes as i64),
                ),
            ],
        }
    }

    /// Downsampled curves of one device (§7.3), `q.width_px` columns over `q.range`.
    ///
    /// # Errors
    ///
    /// Unknown device slot.
    pub fn curve(&self, q: &SnapCurveQuery) -> Result<SnapCurveDto, String> {
        let (d, axis, kind) = self.device_on(q.slot, q.axis)?;
        let full = axis.full();
        let (x0, x1) = window(full, q.range);
        let c = &d.curves;
        let curves = [
            (Levels::Values(&c.allocated), c.baseline_allocated),
            (Levels::Values(&c.active), c.baseline_active),
            (Levels::Values(&c.reserved), c.baseline_reserved),
            c.fragmentation(),
        ];
        let width = q.width_px.clamp(1, 8192) as usize;
        let cols = min_max_levels(&axis, &curves, x0, x1, width);
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
            .filter(|p| d.n_entries > 0 || p.kind != PointKind::End)
            .map(|p| SnapMarkDto {
                kind: point_kind_name(p.kind).to_string(),
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
    /// fragmentation metrics of §7.10 at the end state
    /// ([`crate::analysis::snapshot::allocator::fragmentation::of_end_segment`]).
    ///
    /// # Errors
    ///
    /// Unknown device slot.
    pub fn segments(&self, slot: u32, limit: u32) -> Result<SnapSegmentsDto, String> {
        let d = self.device(slot)?;
        let snap = self.snap;
        let mut rows = Vec::new();
        let mut all = Fragmentation::default();
        let mut allocated = 0;
        for s in snap.segments.iter().filter(|s| s.device == d.device as i64) {
            let blocks = snap.blocks_of(s);
            let f = of_end_segment(s, blocks);
            all.merge(&f);
            allocated += s.allocated_size;
            rows.push(SnapSegmentDto {
                address: format!("0x{:x}", s.address),
                total_bytes: s.total_size,
                allocated_bytes: s.allocated_size,
                active_bytes: s.active_size,
                inactive_bytes: f.inactive,
                largest_inactive_bytes: f.largest_inactive,
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
            reserved_bytes: all.reserved,
            allocated_bytes: allocated,
            inactive_bytes: all.inactive,
            largest_inactive_bytes: all.largest_inactive,
            external_fragmentation: all.external_ratio,
            internal_waste_bytes: all.internal_waste,
        })
    }
}
