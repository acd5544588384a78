//! The JSON and Markdown of `proflens diff A.pickle B.pickle` (snapshots).
//!
//! Per device (matched by ordinal; a device on one side only is compared with nothing): the
//! global peak and the end state of each side on the peak curve (`--curve`, default active,
//! torch-snapshot.md §7.3–7.4) and their delta; the live bytes per site at each side's global
//! peak and at the end ([`crate::analysis::compare::keyed::by_key`]), sites written as in the
//! snapshot report (`function @ file:line`, [`Labeler::site`]) so both sides share keys. A
//! site's bytes are the requested bytes of its live tensors (as in the report's contributor
//! tables), so they sum to the live bytes, not to the curve height.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::compare::keyed::{by_key, pair_delta, Delta};
use crate::analysis::compare::snapshot::{match_peaks, PeakAt};
use crate::analysis::snapshot::device::{DeviceAnalysis, PointKind, PointReport};
use crate::analysis::snapshot::labels::Labeler;
use crate::base::format::bytes_i;
use crate::model::snapshot::Snapshot;
use crate::report::snapshot_json::ReportOptions;
use crate::report::snapshot_md::md_link;

/// The whole diff document.
#[derive(Serialize, Debug)]
pub struct DiffJson {
    /// `"snapshot"`.
    pub kind: &'static str,
    /// Side A: file name and size.
    pub a: SideJson,
    /// Side B.
    pub b: SideJson,
    /// Peak curve the points are taken on (`allocated` | `active` | `reserved`).
    pub curve: &'static str,
    /// One object per device of either side, by ordinal.
    pub devices: Vec<DeviceDiffJson>,
}

/// One input.
#[derive(Serialize, Debug)]
pub struct SideJson {
    /// File name as given.
    pub file: String,
    /// Size in bytes.
    pub bytes: u64,
}

/// One device on both sides.
#[derive(Serialize, Debug)]
pub struct DeviceDiffJson {
    /// Device ordinal (of side A when the sides compare different devices).
    pub device: u32,
    /// Side B's device ordinal when it is not `device` (`--a-device 0 --b-device 1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b_device: Option<u32>,
    /// The device has a trace on side A / side B.
    pub in_a: bool,
    /// See `in_a`.
    pub in_b: bool,
    /// Global peak height (bytes) of each side.
    pub peak: PairJson,
    /// Entry index of each side's global peak.
    pub peak_index: (Option<usize>, Option<usize>),
    /// End-state height (bytes) of each side.
    pub end: PairJson,
    /// Live bytes per site at each side's global peak.
    pub sites_at_peak: Vec<SiteDeltaJson>,
    /// Live bytes per site at the end of each side.
    pub sites_at_end: Vec<SiteDeltaJson>,
    /// The distinct peaks of each side, matched by annotation, then by order
    /// ([`crate::analysis::compare::snapshot::match_peaks`]).
    pub matched_peaks: Vec<PeakPairJson>,
    /// Both sides' allocated and reserved curves on one axis, only when asked
    /// (`proflens diff --overlay COLUMNS`, [`super::snapshot_overlay`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlay: Option<super::snapshot_overlay::OverlayJson>,
}

/// One matched pair of peaks (or a peak of one side only).
#[derive(Serialize, Debug, PartialEq, Eq)]
pub struct PeakPairJson {
    /// A's entry index (`null`: no peak of A in this row).
    pub a_index: Option<usize>,
    /// B's entry index.
    pub b_index: Option<usize>,
    /// The innermost annotation open at the peak(s), when the snapshot has annotations.
    pub annotation: Option<String>,
    /// `annotation`, `order` or `unmatched`.
    pub matched_by: &'static str,
    /// A's height on the peak curve (0 when absent).
    pub a_bytes: u64,
    /// B's height.
    pub b_bytes: u64,
    /// `b_bytes − a_bytes`.
    pub delta_bytes: i64,
    /// `new` (B only), `gone` (A only), `changed`, `same`.
    pub change: &'static str,
}

/// A quantity on both sides.
#[derive(Serialize, Debug, PartialEq, Eq)]
pub struct PairJson {
    /// Bytes on side A (0 when absent).
    pub a_bytes: u64,
    /// Bytes on side B.
    pub b_bytes: u64,
    /// `b_bytes − a_bytes`.
    pub delta_bytes: i64,
}

/// One site on both sides.
#[derive(Serialize, Debug)]
pub struct SiteDeltaJson {
    /// `function @ file:line` as in the snapshot report (with its origin note).
    pub site: String,
    /// Source link (from side B, else A), when the link style gives one.
    pub link: Option<String>,
    /// Bytes on side A.
    pub a_bytes: u64,
    /// Bytes on side B.
    pub b_bytes: u64,
    /// `b_bytes − a_bytes`.
    pub delta_bytes: i64,
    /// `new` (B only), `gone` (A only), `changed`, `same`.
    pub change: &'static str,
}

/// One analysed snapshot: what the diff reads of it.
pub struct DiffSide<'a> {
    /// File name as shown.
    pub file: &'a str,
    /// File size in bytes.
    pub bytes: u64,
    /// The decoded snapshot (frame pools for the site labels).
    pub snapshot: &'a Snapshot,
    /// Its device analyses.
    pub devices: &'a [DeviceAnalysis],
    /// Compare this device only (`--a-device` / `--b-device`); `None`: every device, matched
    /// by ordinal.
    pub device: Option<u32>,
}

fn point(d: &DeviceAnalysis, kind: PointKind) -> Option<&PointReport> {
    d.points.iter().find(|p| p.kind == kind)
}

/// `(label, bytes)` of every contributor of `p`, and the label → link map entries.
fn at(d: Option<&DeviceAnalysis>, kind: PointKind) -> Option<&PointReport> {
    d.and_then(|d| point(d, kind))
}

fn sites(
    run: &DiffSide<'_>,
    p: Option<&PointReport>,
    opts: &ReportOptions,
    links: &mut BTreeMap<String, String>,
) -> Vec<(String, u64)> {
    let l = Labeler {
        snap: run.snapshot,
        links: &opts.links,
    };
    let Some(p) = p else { return Vec::new() };
    p.contributors
        .iter()
        .map(|c| {
            let label = l.site(c);
            if let Some(u) = l.link(c) {
                links.insert(label.clone(), u);
            }
            (label, c.bytes)
        })
        .collect()
}

fn site_rows(d: Vec<Delta<String>>, links: &BTreeMap<String, String>) -> Vec<SiteDeltaJson> {
    d.into_iter()
        .map(|x| SiteDeltaJson {
            link: links.get(&x.key).cloned(),
            a_bytes: x.a,
            b_bytes: x.b,
            delta_bytes: x.delta_bytes(),
            change: x.change().name(),
            site: x.key,
        })
        .collect()
}

/// The distinct peaks of a device (global peak and prominent peaks), in entry order.
fn peaks_of(d: Option<&DeviceAnalysis>) -> Vec<PeakAt> {
    let mut v: Vec<PeakAt> = d
        .map(|d| &d.points[..])
        .unwrap_or(&[])
        .iter()
        .filter(|p| matches!(p.kind, PointKind::GlobalPeak | PointKind::Peak))
        .map(|p| PeakAt {
            index: p.index,
            bytes: u64::try_from(p.height).unwrap_or(0),
            annotation: p.annotations.last().cloned(),
        })
        .collect();
    crate::base::sort::sort_by_key(&mut v, |p| p.index);
    v
}

fn peak_rows(a: Option<&DeviceAnalysis>, b: Option<&DeviceAnalysis>) -> Vec<PeakPairJson> {
    match_peaks(&peaks_of(a), &peaks_of(b))
        .into_iter()
        .map(|m| {
            let (ab, bb) = (m.a.map_or(0, |x| x.1), m.b.map_or(0, |x| x.1));
            PeakPairJson {
                a_index: m.a.map(|x| x.0),
                b_index: m.b.map(|x| x.0),
                matched_by: m.matched_by.name(),
                a_bytes: ab,
                b_bytes: bb,
                delta_bytes: pair_delta(ab, bb),
                change: m.change().name(),
                annotation: m.annotation,
            }
        })
        .collect()
}

fn pair(a: Option<&PointReport>, b: Option<&PointReport>) -> PairJson {
    let h = |p: Option<&PointReport>| p.map_or(0, |p| u64::try_from(p.height).unwrap_or(0));
    let (a, b) = (h(a), h(b));
    PairJson {
        a_bytes: a,
        b_bytes: b,
        delta_bytes: pair_delta(a, b),
    }
}

/// Builds the diff of two analysed snapshots (both analysed with the same options).
pub fn build(
    a: &DiffSide<'_>,
    b: &DiffSide<'_>,
    curve: &'static str,
    opts: &ReportOptions,
) -> DiffJson {
    // (A ordinal, B ordinal) pairs: the chosen devices, else every ordinal of either side.
    let pairs: Vec<(u32, u32)> = match (a.device, b.device) {
        (None, None) => {
            let mut o: Vec<u32> = a
                .devices
                .iter()
                .chain(b.devices)
                .map(|d| d.device)
                .collect();
            o.sort_unstable();
            o.dedup();
            o.into_iter().map(|d| (d, d)).collect()
        }
        (da, db) => {
            let only = |s: &DiffSide<'_>| s.devices.first().map_or(0, |d| d.device);
            vec![(da.unwrap_or_else(|| only(a)), db.unwrap_or_else(|| only(b)))]
        }
    };
    let devices = pairs
        .into_iter()
        .map(|(dev, dev_b)| {
            let da = a.devices.iter().find(|d| d.device == dev);
            let db = b.devices.iter().find(|d| d.device == dev_b);
            let (pa, pb) = (at(da, PointKind::GlobalPeak), at(db, PointKind::GlobalPeak));
            let (ea, eb) = (at(da, PointKind::End), at(db, PointKind::End));
            // Links of side A first, then B: B's link replaces A's for a site on both sides.
            let mut links = BTreeMap::new();
            let peak_a = sites(a, pa, opts, &mut links);
            let end_a = sites(a, ea, opts, &mut links);
            let peak_b = sites(b, pb, opts, &mut links);
            let end_b = sites(b, eb, opts, &mut links);
            DeviceDiffJson {
                device: dev,
                b_device: (dev_b != dev).then_some(dev_b),
                in_a: da.is_some(),
                in_b: db.is_some(),
                peak: pair(pa, pb),
                peak_index: (pa.map(|p| p.index), pb.map(|p| p.index)),
                end: pair(ea, eb),
                sites_at_peak: site_rows(by_key(peak_a, peak_b), &links),
                sites_at_end: site_rows(by_key(end_a, end_b), &links),
                matched_peaks: peak_rows(da, db),
                overlay: None,
            }
        })
        .collect();
    DiffJson {
        kind: "snapshot",
        a: SideJson {
            file: a.file.to_string(),
            bytes: a.bytes,
        },
        b: SideJson {
            file: b.file.to_string(),
            bytes: b.bytes,
        },
        curve,
        devices,
    }
}

/// `+1.50 MiB` / `−512 B` / `0 B`.
fn signed(d: i64) -> String {
    match d.signum() {
        1 => format!("+{}", bytes_i(d)),
        -1 => format!("−{}", bytes_i(d.unsigned_abs().min(i64::MAX as u64) as i64)),
        _ => "0 B".to_string(),
    }
}

fn table(out: &mut String, title: &str, rows: &[SiteDeltaJson], top: usize) {
    out.push_str(&format!("\n#### {title}\n\n"));
    if rows.is_empty() {
        out.push_str("No live tensors on either side.\n");
        return;
    }
    out.push_str("| site | A | B | Δ | change |\n|---|--:|--:|--:|---|\n");
    for r in rows.iter().take(top) {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            md_link(&r.site, r.link.as_deref()),
            bytes_i(r.a_bytes as i64),
            bytes_i(r.b_bytes as i64),
            signed(r.delta_bytes),
            r.change
        ));
    }
    if rows.len() > top {
        let rest: i64 = rows[top..].iter().map(|r| r.delta_bytes).sum();
        out.push_str(&format!(
            "\n{} more sites (together {}) in the JSON.\n",
            rows.len() - top,
            signed(rest)
        ));
    }
}

/// The Markdown report: one section per device, the peak/end table, then the sites that
/// changed most at the peak and at the end (`top` rows each).
pub fn render_md(j: &DiffJson, top: usize) -> String {
    let mut out = format!(
        "# Snapshot comparison\n\nA: {} ({})  \nB: {} ({})  \nCurve: {}\n",
        md_link(&j.a.file, None),
        bytes_i(j.a.bytes as i64),
        md_link(&j.b.file, None),
        bytes_i(j.b.bytes as i64),
        j.curve
    );
    for d in &j.devices {
        match d.b_device {
            Some(b) => out.push_str(&format!(
                "\n## Device {} (A) and device {b} (B)\n\n",
                d.device
            )),
            None => out.push_str(&format!("\n## Device {}\n\n", d.device)),
        }
        if !(d.in_a && d.in_b) {
            out.push_str(&format!(
                "Only side {} has this device: the other side counts as empty.\n\n",
                if d.in_a { "A" } else { "B" }
            ));
        }
        out.push_str("| | A | B | Δ |\n|---|--:|--:|--:|\n");
        for (name, p) in [("global peak", &d.peak), ("end", &d.end)] {
            out.push_str(&format!(
                "| {name} | {} | {} | {} |\n",
                bytes_i(p.a_bytes as i64),
                bytes_i(p.b_bytes as i64),
                signed(p.delta_bytes)
            ));
        }
        table(
            &mut out,
            "Live at the global peak, by site",
            &d.sites_at_peak,
            top,
        );
        table(&mut out, "Live at the end, by site", &d.sites_at_end, top);
        peak_table(&mut out, &d.matched_peaks);
    }
    out
}

fn peak_table(out: &mut String, rows: &[PeakPairJson]) {
    out.push_str("\n#### Matched peaks\n\n");
    if rows.is_empty() {
        out.push_str("No peak on either side.\n");
        return;
    }
    out.push_str(
        "| A entry | B entry | annotation | matched by | A | B | Δ | change |\n\
         |--:|--:|---|---|--:|--:|--:|---|\n",
    );
    let idx = |i: Option<usize>| i.map_or("–".to_string(), |i| i.to_string());
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            idx(r.a_index),
            idx(r.b_index),
            r.annotation
                .as_deref()
                .map_or("–".to_string(), |a| md_link(a, None)),
            r.matched_by,
            bytes_i(r.a_bytes as i64),
            bytes_i(r.b_bytes as i64),
            signed(r.delta_bytes),
            r.change
        ));
    }
}
