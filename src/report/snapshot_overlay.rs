//! The overlaid curves of a snapshot comparison (`proflens diff A B --overlay COLUMNS`, the
//! Compare tab's chart): per compared device, both sides' allocated and reserved curves on
//! one axis (entry index or ms since the first `time_us`), aligned at each side's first entry
//! or at the first start of a chosen annotation, min/max per column
//! ([`crate::analysis::compare::snapshot::overlay`]).

use serde::Serialize;

use super::snapshot_diff::{DiffJson, DiffSide};
use crate::analysis::compare::snapshot::{offset_of, overlay, OverlaySide};
use crate::analysis::snapshot::axis::{time_axis_ms, Axis};
use crate::analysis::snapshot::device::{annotation_spans, DeviceAnalysis};
use crate::model::snapshot::DeviceTrace;

/// What the overlay is asked with.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OverlayOptions {
    /// Columns (1..=8192).
    pub columns: usize,
    /// Time axis (ms since each side's first `time_us`) instead of entry index.
    pub time_axis: bool,
    /// Align at the first start of this annotation instead of the first entry.
    pub align: Option<String>,
    /// Window in aligned coordinates (`None`: both sides whole).
    pub range: Option<(f64, f64)>,
}

/// One curve of one side.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct OverlaySeriesJson {
    /// `allocated` | `reserved`.
    pub curve: &'static str,
    /// Per column minimum (bytes); `null` outside the side's entries.
    pub min: Vec<Option<i64>>,
    /// Per column maximum (bytes).
    pub max: Vec<Option<i64>>,
}

/// Both sides' curves of one device on one axis.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct OverlayJson {
    /// `index` (entry index) or `time_ms` (ms since the side's first `time_us`).
    pub axis: &'static str,
    /// The annotation both sides are aligned at; `null`: their first entries.
    pub align: Option<String>,
    /// Position of A's alignment point on A's own axis (`null`: A lacks the device).
    pub a_offset: Option<f64>,
    /// The same for B.
    pub b_offset: Option<f64>,
    /// Window start in aligned coordinates (0 = the alignment point of both sides).
    pub x0: f64,
    /// Window end (exclusive).
    pub x1: f64,
    /// Number of columns.
    pub columns: usize,
    /// A's curves (empty when A lacks the device).
    pub a: Vec<OverlaySeriesJson>,
    /// B's curves.
    pub b: Vec<OverlaySeriesJson>,
}

const CURVES: [&str; 2] = ["allocated", "reserved"];

/// One side's device on the asked axis, with its alignment offset.
fn side<'a>(
    s: &DiffSide<'a>,
    name: &str,
    d: &'a DeviceAnalysis,
    times: &'a Option<Vec<f64>>,
    o: &OverlayOptions,
) -> Result<OverlaySide<'a>, String> {
    let trace: Option<&DeviceTrace> = s.snapshot.devices.iter().find(|t| t.device == d.device);
    let times_us = |t: &'a DeviceTrace| (0..t.entries.len()).map(move |i| t.entries.time_us(i));
    let axis = match (o.time_axis, times) {
        (false, _) => Axis::Index { n: d.n_entries },
        (true, Some(ms)) => Axis::Time { ms },
        (true, None) => {
            return Err(format!(
                "side {name} ({}) device {} has no time_us: use the index axis",
                s.file, d.device
            ))
        }
    };
    let offset = match (&o.align, trace) {
        (None, _) => 0.0,
        (Some(want), t) => {
            let start = annotation_spans(s.snapshot, d.device)
                .into_iter()
                .find(|(n, _, _)| s.snapshot.pools.strings.get(*n) == want.as_str())
                .map(|(_, start, _)| start);
            let first = t.and_then(|t| times_us(t).flatten().next());
            start
                .and_then(|st| offset_of(t.into_iter().flat_map(times_us), st, first, o.time_axis))
                .ok_or_else(|| {
                    format!(
                        "side {name} ({}) device {} has no entry inside annotation {want:?}",
                        s.file, d.device
                    )
                })?
        }
    };
    let c = &d.curves;
    Ok(OverlaySide {
        axis,
        offset,
        curves: vec![
            (&c.allocated, c.baseline_allocated),
            (&c.reserved, c.baseline_reserved),
        ],
    })
}

/// The time axis (ms) of device `d` of side `s`, when its entries have `time_us`.
fn times_of(s: &DiffSide<'_>, d: &DeviceAnalysis) -> Option<Vec<f64>> {
    let t = s.snapshot.devices.iter().find(|t| t.device == d.device)?;
    time_axis_ms((0..t.entries.len()).map(|i| t.entries.time_us(i)))
}

/// The overlay of device pair `(dev_a, dev_b)` (`None` where a side lacks it).
///
/// # Errors
///
/// A side without `time_us` on the time axis, or without an entry inside the annotation
/// (message names the side, file and device).
pub fn device_overlay(
    a: &DiffSide<'_>,
    b: &DiffSide<'_>,
    dev_a: Option<&DeviceAnalysis>,
    dev_b: Option<&DeviceAnalysis>,
    o: &OverlayOptions,
) -> Result<OverlayJson, String> {
    let ta = dev_a.and_then(|d| times_of(a, d).filter(|_| o.time_axis));
    let tb = dev_b.and_then(|d| times_of(b, d).filter(|_| o.time_axis));
    let sa = dev_a.map(|d| side(a, "A", d, &ta, o)).transpose()?;
    let sb = dev_b.map(|d| side(b, "B", d, &tb, o)).transpose()?;
    let offsets = (sa.as_ref().map(|s| s.offset), sb.as_ref().map(|s| s.offset));
    let sides: Vec<OverlaySide<'_>> = sa.into_iter().chain(sb).collect();
    let columns = o.columns.clamp(1, 8192);
    let ov = overlay(&sides, o.range, columns);
    let mut per_side = ov.sides.into_iter().map(|curves| {
        curves
            .into_iter()
            .zip(CURVES)
            .map(|((min, max), curve)| OverlaySeriesJson { curve, min, max })
            .collect::<Vec<_>>()
    });
    let mut next = |present: bool| {
        present
            .then(|| per_side.next())
            .flatten()
            .unwrap_or_default()
    };
    let (sa_series, sb_series) = (next(offsets.0.is_some()), next(offsets.1.is_some()));
    Ok(OverlayJson {
        axis: if o.time_axis { "time_ms" } else { "index" },
        align: o.align.clone(),
        a_offset: offsets.0,
        b_offset: offsets.1,
        x0: ov.x0,
        x1: ov.x1,
        columns,
        a: sa_series,
        b: sb_series,
    })
}

/// Adds the overlay to every device of `j` (built by [`super::snapshot_diff::build`] from
/// the same sides).
///
/// # Errors
///
/// As [`device_overlay`].
pub fn add_overlays(
    j: &mut DiffJson,
    a: &DiffSide<'_>,
    b: &DiffSide<'_>,
    o: &OverlayOptions,
) -> Result<(), String> {
    for d in &mut j.devices {
        let dev_b = d.b_device.unwrap_or(d.device);
        let da = a.devices.iter().find(|x| x.device == d.device);
        let db = b.devices.iter().find(|x| x.device == dev_b);
        d.overlay = Some(device_overlay(a, b, da, db, o)?);
    }
    Ok(())
}
