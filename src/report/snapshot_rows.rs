//! The tables of a snapshot analysis (torch-snapshot.md §7; docs/frames.md §3.4), as lines of
//! [`Cell`]s rendered by [`super::table_csv`] (CSV) and as a [`Frame`]:
//!
//! - peaks: one line per reported point of every device (global peak, peaks, OOMs, end state),
//!   the scalar fields `proflens snapshot --json` writes for it ([`PointJson`]), taken from the
//!   JSON document itself so the two agree by construction;
//! - curves: one line per trace entry of every analysed device, the allocated / active /
//!   reserved levels after the entry (§7.3) in bytes, and the entry's `time_us` when recorded.
//!
//! Formatting only.

use std::borrow::Cow;
use std::io::{self, Write};

use super::frame::{Cell, Frame, Kind};
use super::snapshot_json::{DeviceJson, PointJson, SnapshotJson};
use super::table_csv::{frame_of, names, write_csv};
use crate::analysis::snapshot::device::DeviceAnalysis;
use crate::model::snapshot::Snapshot;

/// The columns of the peaks table, with their frame types.
pub const PEAK_COLUMNS: &[(&str, Kind)] = &[
    ("device", Kind::I64),
    ("kind", Kind::Text),
    ("index", Kind::I64),
    ("time_us", Kind::I64),
    ("height_bytes", Kind::I64),
    ("allocated_bytes", Kind::I64),
    ("active_bytes", Kind::I64),
    ("reserved_bytes", Kind::I64),
    ("fragmentation_bytes", Kind::I64),
    ("prominence_bytes", Kind::I64),
    ("recurring_count", Kind::I64),
    ("recurring_min_bytes", Kind::I64),
    ("recurring_median_bytes", Kind::I64),
    ("recurring_max_bytes", Kind::I64),
    ("annotations", Kind::TextList),
    ("compile_context", Kind::Text),
    ("user_metadata", Kind::Text),
    ("live_bytes", Kind::I64),
    ("live_tensors", Kind::I64),
    ("top_site", Kind::Text),
    ("top_site_bytes", Kind::I64),
    ("more_sites", Kind::I64),
    ("more_sites_bytes", Kind::I64),
    ("largest_inactive_block_bytes", Kind::I64),
    ("oom_requested_bytes", Kind::I64),
    ("oom_device_free_bytes", Kind::I64),
    ("oom_cause", Kind::Text),
];

/// The columns of the curves table, with their frame types.
pub const CURVE_COLUMNS: &[(&str, Kind)] = &[
    ("device", Kind::I64),
    ("entry", Kind::I64),
    ("time_us", Kind::I64),
    ("allocated_bytes", Kind::I64),
    ("active_bytes", Kind::I64),
    ("reserved_bytes", Kind::I64),
];

fn int(x: impl TryInto<i64>) -> Cell<'static> {
    x.try_into().map(Cell::I64).unwrap_or(Cell::Null)
}

fn opt_int<T: TryInto<i64>>(x: Option<T>) -> Cell<'static> {
    x.map(int).unwrap_or(Cell::Null)
}

fn opt_text(x: Option<&str>) -> Cell<'_> {
    x.map(|s| Cell::Str(Cow::Borrowed(s))).unwrap_or(Cell::Null)
}

/// The cells of point `p` of device `d` ([`PEAK_COLUMNS`]): `top_site` is the first
/// contributor the JSON lists (largest by bytes), null without one.
pub fn peak_cells<'a>(d: &'a DeviceJson, p: &'a PointJson) -> Vec<Cell<'a>> {
    let rec = p.recurring.as_ref();
    let top = p.contributors.first();
    vec![
        int(d.device),
        Cell::Str(Cow::Borrowed(p.kind)),
        int(p.index),
        opt_int(p.time_us),
        int(p.height_bytes),
        int(p.allocated_bytes),
        int(p.active_bytes),
        int(p.reserved_bytes),
        int(p.fragmentation_bytes),
        opt_int(p.prominence_bytes),
        opt_int(rec.map(|r| r.count)),
        opt_int(rec.map(|r| r.min_bytes)),
        opt_int(rec.map(|r| r.median_bytes)),
        opt_int(rec.map(|r| r.max_bytes)),
        Cell::List(
            p.annotations
                .iter()
                .map(|a| Cow::Borrowed(a.as_str()))
                .collect(),
        ),
        opt_text(p.compile_context.as_deref()),
        opt_text(p.user_metadata.as_deref()),
        int(p.live_bytes),
        int(p.live_tensors),
        opt_text(top.map(|c| c.site.as_str())),
        opt_int(top.map(|c| c.bytes)),
        int(p.more_sites),
        int(p.more_sites_bytes),
        opt_int(p.largest_inactive_block_bytes),
        opt_int(p.oom_requested_bytes),
        opt_int(p.oom_device_free_bytes),
        opt_text(p.oom_explanation.as_ref().map(|o| o.cause)),
    ]
}

fn peak_lines(j: &SnapshotJson) -> impl Iterator<Item = Vec<Cell<'_>>> {
    j.devices
        .iter()
        .chain(&j.end_state_only)
        .flat_map(|d| d.points.iter().map(move |p| peak_cells(d, p)))
}

/// Writes the peaks of `j` as CSV ([`PEAK_COLUMNS`]).
///
/// Errors: only those of `out`.
pub fn write_peaks(j: &SnapshotJson, out: &mut dyn Write) -> io::Result<()> {
    write_csv(&names(PEAK_COLUMNS), peak_lines(j), out)
}

/// The peaks of `j` as a typed [`Frame`].
pub fn peaks_frame(j: &SnapshotJson) -> Frame {
    frame_of(PEAK_COLUMNS, peak_lines(j))
}

fn curve_lines<'a>(
    snap: &'a Snapshot,
    devices: &'a [DeviceAnalysis],
) -> impl Iterator<Item = Vec<Cell<'a>>> + 'a {
    devices.iter().flat_map(move |d| {
        let trace = snap.devices.get(d.device as usize);
        let c = &d.curves;
        (0..c.active.len()).map(move |i| {
            vec![
                int(d.device),
                int(i),
                opt_int(trace.and_then(|t| t.entries.time_us(i))),
                opt_int(c.allocated.get(i).copied()),
                opt_int(c.active.get(i).copied()),
                opt_int(c.reserved.get(i).copied()),
            ]
        })
    })
}

/// Writes the curves of `devices` as CSV ([`CURVE_COLUMNS`]), device by device.
///
/// Errors: only those of `out`.
pub fn write_curves(
    snap: &Snapshot,
    devices: &[DeviceAnalysis],
    out: &mut dyn Write,
) -> io::Result<()> {
    write_csv(&names(CURVE_COLUMNS), curve_lines(snap, devices), out)
}

/// The curves of `devices` as a typed [`Frame`].
pub fn curves_frame(snap: &Snapshot, devices: &[DeviceAnalysis]) -> Frame {
    frame_of(CURVE_COLUMNS, curve_lines(snap, devices))
}
