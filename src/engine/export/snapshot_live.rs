//! The live set of a snapshot after one entry as tables (torch-snapshot.md §7.5–7.6;
//! docs/frames.md §3.4): the live tensors and the contributors by site that the page's live
//! view shows ([`crate::views::snapshot`]'s `live_at`, the one rule: active semantics, sites
//! and labels of the exports), every one of them rather than the view's top N. The cells are
//! defined here once and rendered by [`crate::report::table_csv`] as CSV and as a frame.

use std::borrow::Cow;
use std::io::{self, Write};

use crate::engine::read::snapshot::{SnapshotOptions, SnapshotRun};
use crate::protocol::snapshot::{SnapAxis, SnapLiveDto, SnapLiveQuery, SnapshotSettingsDto};
use crate::report::frame::{Cell, Frame, Kind};
use crate::report::table_csv::{frame_of, names, write_csv};
use crate::views::snapshot::SnapshotData;

/// The columns of the live-tensors table, with their frame types.
pub const LIVE_COLUMNS: &[(&str, Kind)] = &[
    ("device", Kind::I64),
    ("entry", Kind::I64),
    ("record", Kind::I64),
    ("bytes", Kind::I64),
    ("addr", Kind::Text),
    ("memoryviz_name", Kind::Text),
    ("alloc_index", Kind::I64),
    ("site", Kind::Text),
    ("link", Kind::Text),
    ("stack_kind", Kind::Text),
];

/// The columns of the contributors table, with their frame types.
pub const CONTRIBUTOR_COLUMNS: &[(&str, Kind)] = &[
    ("device", Kind::I64),
    ("entry", Kind::I64),
    ("site", Kind::Text),
    ("site_kind", Kind::Text),
    ("origin", Kind::Text),
    ("bytes", Kind::I64),
    ("percent", Kind::F64),
    ("tensors", Kind::I64),
    ("first_alloc_index", Kind::I64),
    ("link", Kind::Text),
    ("chain", Kind::TextList),
];

/// The live set after entry `entry` of device `device` (the first analysed device when
/// `None`), with every live tensor and every contributor.
///
/// # Errors
///
/// No such device, or a device without trace entries.
pub fn live_at(
    run: &SnapshotRun,
    opts: &SnapshotOptions,
    settings: &SnapshotSettingsDto,
    device: Option<u32>,
    entry: usize,
) -> Result<(u32, SnapLiveDto), String> {
    let slot = match device {
        None => 0,
        Some(d) => run
            .devices
            .iter()
            .position(|a| a.device == d)
            .ok_or_else(|| format!("the snapshot has no analysed device {d}"))?,
    };
    let dev = run
        .devices
        .get(slot)
        .map(|d| d.device)
        .ok_or("the snapshot has no analysed device")?;
    if let Some(d) = run.devices.get(slot).filter(|d| entry >= d.n_entries) {
        return Err(format!(
            "device {} has {} entries: no entry {entry}",
            d.device, d.n_entries
        ));
    }
    let data = SnapshotData {
        target: 0,
        file: &run.file.path,
        bytes: run.file.size,
        snap: &run.snapshot,
        devices: &run.devices,
        analysis: &opts.analysis,
        links: &opts.report.links,
        top: usize::MAX,
        settings,
        times: &[],
        allocs: &std::sync::OnceLock::new(),
    };
    let q = SnapLiveQuery {
        target: 0,
        slot: slot as u32,
        axis: SnapAxis::Index,
        x: entry as f64,
        limit: u32::MAX,
    };
    Ok((dev, data.live_at(&q)?))
}

fn text(s: &str) -> Cell<'_> {
    Cell::Str(Cow::Borrowed(s))
}

fn opt_int(x: Option<u32>) -> Cell<'static> {
    x.map(|v| Cell::I64(v.into())).unwrap_or(Cell::Null)
}

fn live_lines(device: u32, l: &SnapLiveDto) -> impl Iterator<Item = Vec<Cell<'_>>> {
    l.tensors.iter().map(move |t| {
        vec![
            Cell::I64(device.into()),
            Cell::I64(l.index.into()),
            Cell::I64(t.record.into()),
            Cell::I64(i64::try_from(t.bytes).unwrap_or(i64::MAX)),
            text(&t.addr),
            text(&t.memoryviz_name),
            opt_int(t.alloc_index),
            text(&t.site),
            t.link.as_deref().map(text).unwrap_or(Cell::Null),
            text(&t.stack_kind),
        ]
    })
}

fn contributor_lines(device: u32, l: &SnapLiveDto) -> impl Iterator<Item = Vec<Cell<'_>>> {
    l.contributors.iter().map(move |c| {
        vec![
            Cell::I64(device.into()),
            Cell::I64(l.index.into()),
            text(&c.site),
            text(&c.site_kind),
            text(&c.origin),
            Cell::I64(i64::try_from(c.bytes).unwrap_or(i64::MAX)),
            Cell::F64(c.percent),
            Cell::I64(i64::try_from(c.tensors).unwrap_or(i64::MAX)),
            opt_int(c.first_alloc_index),
            c.link.as_deref().map(text).unwrap_or(Cell::Null),
            Cell::List(
                c.chain
                    .iter()
                    .map(|f| Cow::Borrowed(f.label.as_str()))
                    .collect(),
            ),
        ]
    })
}

/// Writes the live tensors of `l` (device `device`) as CSV ([`LIVE_COLUMNS`]), largest first.
///
/// Errors: only those of `out`.
pub fn write_live(device: u32, l: &SnapLiveDto, out: &mut dyn Write) -> io::Result<()> {
    write_csv(&names(LIVE_COLUMNS), live_lines(device, l), out)
}

/// The live tensors of `l` as a typed [`Frame`].
pub fn live_frame(device: u32, l: &SnapLiveDto) -> Frame {
    frame_of(LIVE_COLUMNS, live_lines(device, l))
}

/// Writes the contributors of `l` as CSV ([`CONTRIBUTOR_COLUMNS`]), largest first.
///
/// Errors: only those of `out`.
pub fn write_contributors(device: u32, l: &SnapLiveDto, out: &mut dyn Write) -> io::Result<()> {
    write_csv(
        &names(CONTRIBUTOR_COLUMNS),
        contributor_lines(device, l),
        out,
    )
}

/// The contributors of `l` as a typed [`Frame`].
pub fn contributors_frame(device: u32, l: &SnapLiveDto) -> Frame {
    frame_of(CONTRIBUTOR_COLUMNS, contributor_lines(device, l))
}
