//! Layout of the Active Memory Timeline (torch-snapshot.md §6.1 "Active Memory Timeline",
//! §6.3 ★ "no polygon cap, level of detail instead"): the stacked per-allocation chart of
//! MemoryViz, computed for one window at the screen's resolution.
//!
//! Rules (one place):
//! * **Columns.** Column `c` covers `[x0 + c·w, x0 + (c+1)·w)` of the axis, as the curves
//!   ([`crate::views::snapshot_axis::min_max`]). It shows the live set (active semantics, a
//!   block lives until `free_completed`) after its **representative entry**: the entry, among
//!   the level carried into the column and the entries inside it, where the active curve is
//!   highest (the first one on ties). So the top of the stack equals the active curve's column
//!   maximum, exactly: no peak disappears when zoomed out.
//! * **Stacking.** Bottom to top in allocation order: records alive before the window (PRE,
//!   §7.2) first, then by alloc entry; the record id breaks ties. A band's bottom edge moves
//!   down when something below it is freed (MemoryViz slides bands down the same way).
//! * **Level of detail.** A record live in at least one column is drawn as its own band when it
//!   is at least `min_band_px` pixels tall at the window's scale (largest column total ↦
//!   `height_px`), largest first up to `max_bands`; every other live record goes into the
//!   **summarised band**, drawn on top of the bands (MemoryViz lumps all but the 15,000
//!   largest elements the same way). Its height per column is the column total minus the
//!   drawn bands.
//!
//! Cost per window: O(records) to find the records in view, O(entries in window) for the
//! representatives, O(k log k) for the k candidates, and O(columns × bands live per column)
//! for the offsets — never proportional to the trace when zoomed in, and bounded by
//! `max_bands` per column when zoomed out.

use std::collections::BTreeMap;

use crate::analysis::snapshot::lifetimes::{Lifetimes, Semantics};
use crate::base::sort::{sort_by_i64_key, sort_by_i64_pair};
use crate::protocol::snapshot::{SnapAxis, SnapBandDto, SnapBandsDto};
use crate::views::snapshot_axis::Axis;

/// At most this many allocations are drawn one by one per window.
pub const MAX_BANDS: usize = 1500;
/// An allocation shorter than this many pixels at the window's scale is summarised (a quarter
/// pixel: neighbouring thin bands still alternate colours row by row, as in MemoryViz).
pub const MIN_BAND_PX: f64 = 0.25;

/// What to lay out: the window, the plot size and the level of detail.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BandParams {
    /// Window start, axis units.
    pub x0: f64,
    /// Window end, axis units (`> x0`).
    pub x1: f64,
    /// Columns (pixels).
    pub width: usize,
    /// Plot height, pixels.
    pub height_px: f64,
    /// At most this many bands drawn one by one.
    pub max_bands: usize,
    /// Minimum band height, pixels.
    pub min_band_px: f64,
}

/// Per column, the representative entry (−1: before the first entry) and the active level
/// there, bytes. `active` is the active curve (level after each entry), `baseline` the level
/// before entry 0.
pub fn representatives(
    axis: &Axis<'_>,
    active: &[i64],
    baseline: i64,
    p: &BandParams,
) -> (Vec<i64>, Vec<i64>) {
    let (mut reps, mut totals) = (Vec::with_capacity(p.width), Vec::with_capacity(p.width));
    if p.width == 0 || !(p.x1 > p.x0) {
        return (reps, totals);
    }
    let level = |i: i64| {
        if i < 0 {
            baseline
        } else {
            active.get(i as usize).copied().unwrap_or(baseline)
        }
    };
    let n = axis.len();
    let w = (p.x1 - p.x0) / p.width as f64;
    let mut a = axis.count_before(p.x0);
    for c in 0..p.width {
        let end = if c + 1 == p.width {
            p.x1
        } else {
            p.x0 + (c + 1) as f64 * w
        };
        let b = axis.count_before(end).max(a).min(n);
        let (mut rep, mut best) = (a as i64 - 1, level(a as i64 - 1));
        for i in a..b {
            let v = level(i as i64);
            if v > best {
                (rep, best) = (i as i64, v);
            }
        }
        reps.push(rep);
        totals.push(best);
        a = b;
    }
    (reps, totals)
}

/// Lays out the stacked chart of `lt` (one device's lifetime table) over one window; the
/// session adds the site labels (`SnapBandDto::site` is left empty here). `active` and
/// `baseline` are that device's active curve (`curves::build`, the same table).
pub fn layout(
    lt: &Lifetimes,
    axis: &Axis<'_>,
    active: &[i64],
    baseline: i64,
    p: &BandParams,
) -> SnapBandsDto {
    let (reps, totals) = representatives(axis, active, baseline, p);
    let y_max = totals.iter().copied().max().unwrap_or(0).max(0);
    let n = axis.len();
    let entries = (axis.count_before(p.x1) as u64).saturating_sub(axis.count_before(p.x0) as u64);
    let entries = entries.min(n as u64);
    // Records live after at least one representative entry: the first rep ≥ start is < end.
    let live_in_view = |r: usize| {
        let (s, e) = (lt.start(r), lt.end(r, Semantics::Active));
        let k = reps.partition_point(|&x| x < s);
        k < reps.len() && reps[k] < e
    };
    let in_view: Vec<u32> = (0..lt.len())
        .filter(|&r| live_in_view(r))
        .map(|r| r as u32)
        .collect();
    let min_bytes = if p.height_px > 0.0 {
        (y_max as f64 * p.min_band_px / p.height_px).ceil().max(1.0) as u64
    } else {
        u64::MAX
    };
    let mut drawn: Vec<u32> = in_view
        .iter()
        .copied()
        .filter(|&r| lt.size[r as usize] >= min_bytes)
        .collect();
    let by_size = |a: &u32, b: &u32| {
        lt.size[*b as usize]
            .cmp(&lt.size[*a as usize])
            .then(a.cmp(b))
    };
    if drawn.len() > p.max_bands {
        if p.max_bands == 0 {
            drawn.clear();
        } else {
            drawn.select_nth_unstable_by(p.max_bands - 1, by_size);
            drawn.truncate(p.max_bands);
        }
    }
    let key = |r: u32| (lt.start(r as usize), r);
    sort_by_i64_pair(&mut drawn, |r| (lt.start(r as usize), r as i64));
    let mut bands: Vec<SnapBandDto> = drawn
        .iter()
        .map(|&r| {
            let ru = r as usize;
            SnapBandDto {
                record: r,
                bytes: lt.size[ru],
                addr: format!("0x{:x}", lt.addr[ru]),
                memoryviz_name: format!("b'{:x}_{}'", lt.addr[ru], lt.version[ru]),
                alloc_index: (!lt.is_pre(ru)).then_some(lt.alloc_idx[ru]),
                site: String::new(),
                first_col: 0,
                runs: Vec::new(),
            }
        })
        .collect();
    // Sweep the columns: add bands whose start ≤ rep, drop those whose end ≤ rep.
    let mut by_start: Vec<usize> = (0..drawn.len()).collect();
    sort_by_i64_key(&mut by_start, |b| lt.start(drawn[b] as usize));
    let mut by_end: Vec<usize> = (0..drawn.len()).collect();
    sort_by_i64_key(&mut by_end, |b| {
        lt.end(drawn[b] as usize, Semantics::Active)
    });
    let (mut si, mut ei) = (0, 0);
    let mut live: BTreeMap<(i64, u32), usize> = BTreeMap::new();
    let mut summarised = Vec::with_capacity(reps.len());
    for (c, (&rep, &total)) in reps.iter().zip(&totals).enumerate() {
        while si < by_start.len() && lt.start(drawn[by_start[si]] as usize) <= rep {
            let b = by_start[si];
            live.insert(key(drawn[b]), b);
            si += 1;
        }
        while ei < by_end.len() && lt.end(drawn[by_end[ei]] as usize, Semantics::Active) <= rep {
            live.remove(&key(drawn[by_end[ei]]));
            ei += 1;
        }
        let mut offset = 0u64;
        for &b in live.values() {
            let band = &mut bands[b];
            match band.runs.last_mut() {
                Some((cols, off)) if *off == offset => *cols += 1,
                Some(_) => band.runs.push((1, offset)),
                None => {
                    band.first_col = c as u32;
                    band.runs.push((1, offset));
                }
            }
            offset += band.bytes;
        }
        summarised.push((total.max(0) as u64).saturating_sub(offset));
    }
    let summarised_records = (in_view.len() - drawn.len()) as u64;
    SnapBandsDto {
        target: 0,
        slot: 0,
        axis: match axis {
            Axis::Index { .. } => SnapAxis::Index,
            Axis::Time { .. } | Axis::TimeUs { .. } => SnapAxis::Time,
        },
        x0: p.x0,
        x1: p.x1,
        full: axis.full(),
        reps,
        y_max: y_max as f64,
        bands,
        summarised,
        records_in_view: in_view.len() as u64,
        summarised_records,
        min_band_bytes: min_bytes,
        entries_in_window: entries,
    }
}

#[cfg(test)]
#[path = "snapshot_bands_tests.rs"]
mod tests;
