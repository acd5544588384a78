//! Two snapshots' peaks and curves side by side (snapshots): the matched
//! peaks and the overlaid curves. Pure functions over what each side's analysis already
//! computed ([`crate::analysis::snapshot::device::DeviceAnalysis`]); the per-site deltas are
//! [`super::keyed::by_key`].
//!
//! * [`match_peaks`]: the distinct peaks of each side (the global peak and the prominent peaks
//!   the analysis reported, torch-snapshot.md §7.4) in entry order, matched first by
//!   annotation (when both sides have annotated peaks: the k-th peak inside annotation X on A
//!   with the k-th inside X on B, X = the innermost annotation open at the peak), then the
//!   rest by order (the k-th remaining peak of A with the k-th of B); a peak left over is
//!   matched with nothing (`gone` on A, `new` on B).
//! * [`overlay`]: both sides' curves on one axis (entry index or ms), aligned at each side's
//!   first entry or at the start of a chosen annotation, min/max per column as the single
//!   view's curves ([`crate::analysis::snapshot::axis::min_max`]); a column outside a side's
//!   entries is `None`.

use std::collections::BTreeMap;

use super::keyed::Change;
use crate::analysis::snapshot::axis::{min_max, Axis};

/// One distinct peak of one side, as the matching reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeakAt {
    /// Entry index.
    pub index: usize,
    /// Height on the peak curve (bytes).
    pub bytes: u64,
    /// The innermost annotation open at the peak, if any.
    pub annotation: Option<String>,
}

/// How a pair of peaks was matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchedBy {
    /// Same innermost annotation, same occurrence inside it.
    Annotation,
    /// Same rank among the peaks not matched by annotation.
    Order,
    /// A peak of one side only.
    Unmatched,
}

impl MatchedBy {
    /// `annotation` | `order` | `unmatched`.
    pub fn name(self) -> &'static str {
        match self {
            MatchedBy::Annotation => "annotation",
            MatchedBy::Order => "order",
            MatchedBy::Unmatched => "unmatched",
        }
    }
}

/// A peak of A, of B, or of both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeakPair {
    /// A's peak (entry index, bytes), if any.
    pub a: Option<(usize, u64)>,
    /// B's peak, if any.
    pub b: Option<(usize, u64)>,
    /// The annotation the pair shares (matched by annotation), else A's (or B's) own.
    pub annotation: Option<String>,
    /// How it was matched.
    pub matched_by: MatchedBy,
}

impl PeakPair {
    /// `new` (B only), `gone` (A only), `changed` or `same`.
    pub fn change(&self) -> Change {
        match (self.a, self.b) {
            (None, _) => Change::New,
            (_, None) => Change::Gone,
            (Some(a), Some(b)) if a.1 == b.1 => Change::Same,
            _ => Change::Changed,
        }
    }
}

/// Matches the peaks of A and B (each in entry order; see the module doc). Rows: the pairs
/// and A-only peaks in A's order, then the B-only peaks in B's order. O((a + b) log).
pub fn match_peaks(a: &[PeakAt], b: &[PeakAt]) -> Vec<PeakPair> {
    let mut b_of_a: Vec<Option<(usize, MatchedBy)>> = vec![None; a.len()];
    let mut b_used = vec![false; b.len()];
    let annotated = |s: &[PeakAt]| s.iter().any(|p| p.annotation.is_some());
    if annotated(a) && annotated(b) {
        // (annotation, occurrence) → position in B.
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        let mut in_b: BTreeMap<(&str, usize), usize> = BTreeMap::new();
        for (j, p) in b.iter().enumerate() {
            if let Some(n) = p.annotation.as_deref() {
                let k = seen.entry(n).or_insert(0);
                in_b.insert((n, *k), j);
                *k += 1;
            }
        }
        seen.clear();
        for (i, p) in a.iter().enumerate() {
            let Some(n) = p.annotation.as_deref() else {
                continue;
            };
            let k = seen.entry(n).or_insert(0);
            if let Some(&j) = in_b.get(&(n, *k)) {
                b_of_a[i] = Some((j, MatchedBy::Annotation));
                b_used[j] = true;
            }
            *k += 1;
        }
    }
    let rest_b: Vec<usize> = (0..b.len()).filter(|&j| !b_used[j]).collect();
    let free_a = b_of_a.iter_mut().filter(|s| s.is_none());
    for (slot, &j) in free_a.zip(&rest_b) {
        *slot = Some((j, MatchedBy::Order));
        b_used[j] = true;
    }
    let mut out: Vec<PeakPair> = a
        .iter()
        .zip(&b_of_a)
        .map(|(p, m)| match *m {
            Some((j, by)) => PeakPair {
                a: Some((p.index, p.bytes)),
                b: Some((b[j].index, b[j].bytes)),
                annotation: p.annotation.clone().or_else(|| b[j].annotation.clone()),
                matched_by: by,
            },
            None => PeakPair {
                a: Some((p.index, p.bytes)),
                b: None,
                annotation: p.annotation.clone(),
                matched_by: MatchedBy::Unmatched,
            },
        })
        .collect();
    out.extend(
        b.iter()
            .zip(&b_used)
            .filter(|(_, used)| !**used)
            .map(|(p, _)| PeakPair {
                a: None,
                b: Some((p.index, p.bytes)),
                annotation: p.annotation.clone(),
                matched_by: MatchedBy::Unmatched,
            }),
    );
    out
}

/// One side of an overlay: its entries on the axis, where it is aligned, and its curves.
pub struct OverlaySide<'a> {
    /// Entry positions (index or ms since the first `time_us`).
    pub axis: Axis<'a>,
    /// Position of the alignment point on `axis` (0 = the first entry; the annotation's start
    /// otherwise); the overlay's 0 is this position.
    pub offset: f64,
    /// `(values, baseline)` per curve, in the caller's order.
    pub curves: Vec<(&'a [i64], i64)>,
}

/// Per-column `(min, max)` of one curve of one side; `None` outside the side's entries.
pub type OverlayColumns = (Vec<Option<i64>>, Vec<Option<i64>>);

/// Both sides downsampled over one aligned window.
#[derive(Clone, Debug, PartialEq)]
pub struct Overlay {
    /// Window start, aligned coordinates (0 = each side's alignment point).
    pub x0: f64,
    /// Window end (exclusive).
    pub x1: f64,
    /// Per side (A, then B when given), per curve: the columns.
    pub sides: Vec<Vec<OverlayColumns>>,
}

/// The aligned extent `[first, last]` of a side's entries (`None` without entries).
fn extent(s: &OverlaySide<'_>) -> Option<(f64, f64)> {
    let n = s.axis.len();
    (n > 0).then(|| (s.axis.pos(0) - s.offset, s.axis.pos(n - 1) - s.offset))
}

/// Downsamples every side to `width` columns over `range` (aligned coordinates; `None`: the
/// union of the sides' aligned full ranges, [`Axis::full`]). A side's column `[c0, c1)` is
/// `min_max` over `[c0 + offset, c1 + offset)` of its own axis, `None` when it lies before its
/// first entry or after its last one. O(entries in window + width) per curve.
pub fn overlay(sides: &[OverlaySide<'_>], range: Option<(f64, f64)>, width: usize) -> Overlay {
    let full = sides
        .iter()
        .filter(|s| !s.axis.is_empty())
        .map(|s| {
            let (a, b) = s.axis.full();
            (a - s.offset, b - s.offset)
        })
        .reduce(|x, y| (x.0.min(y.0), x.1.max(y.1)))
        .unwrap_or((0.0, 1.0));
    let (x0, x1) = match range {
        Some((a, b)) if b > a && a.is_finite() && b.is_finite() => (a, b),
        _ => full,
    };
    let w = (x1 - x0) / width.max(1) as f64;
    let sides = sides
        .iter()
        .map(|s| {
            let cols = min_max(&s.axis, &s.curves, x0 + s.offset, x1 + s.offset, width);
            let ext = extent(s);
            let inside = |c: usize| {
                let (c0, c1) = (x0 + c as f64 * w, x0 + (c + 1) as f64 * w);
                ext.is_some_and(|(first, last)| c1 > first && c0 <= last)
            };
            cols.curves
                .into_iter()
                .map(|(lo, hi)| {
                    let keep = |v: Vec<f64>| -> Vec<Option<i64>> {
                        v.into_iter()
                            .enumerate()
                            .map(|(c, x)| inside(c).then_some(x as i64))
                            .collect()
                    };
                    (keep(lo), keep(hi))
                })
                .collect()
        })
        .collect();
    Overlay { x0, x1, sides }
}

/// Position on `axis` of the first entry at or after `t_us` (`times_us` one per entry;
/// entries without a time never match): the alignment point of an annotation starting at
/// `t_us`. Index axis: that entry's index; time axis: `t_us` itself, as ms since
/// `first_us`. `None` when no entry is at or after `t_us`.
pub fn offset_of(
    times_us: impl Iterator<Item = Option<i64>>,
    t_us: i64,
    first_us: Option<i64>,
    time_axis: bool,
) -> Option<f64> {
    if time_axis {
        return first_us.map(|f| (t_us - f) as f64 / 1000.0);
    }
    times_us
        .enumerate()
        .find(|(_, t)| t.is_some_and(|t| t >= t_us))
        .map(|(i, _)| i as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(index: usize, bytes: u64, ann: Option<&str>) -> PeakAt {
        PeakAt {
            index,
            bytes,
            annotation: ann.map(str::to_string),
        }
    }

    #[test]
    fn annotation_first_then_order_then_leftovers() {
        let a = [p(1, 5, Some("w")), p(3, 3, Some("s")), p(5, 7, None)];
        let b = [
            p(0, 9, None),
            p(2, 6, Some("w")),
            p(4, 3, Some("s")),
            p(6, 1, None),
        ];
        let m = match_peaks(&a, &b);
        let got: Vec<_> = m
            .iter()
            .map(|x| (x.a, x.b, x.matched_by, x.change()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    Some((1, 5)),
                    Some((2, 6)),
                    MatchedBy::Annotation,
                    Change::Changed
                ),
                (
                    Some((3, 3)),
                    Some((4, 3)),
                    MatchedBy::Annotation,
                    Change::Same
                ),
                (
                    Some((5, 7)),
                    Some((0, 9)),
                    MatchedBy::Order,
                    Change::Changed
                ),
                (None, Some((6, 1)), MatchedBy::Unmatched, Change::New),
            ]
        );
    }

    #[test]
    fn without_annotations_on_one_side_peaks_match_by_order() {
        let a = [p(1, 5, Some("w")), p(3, 3, Some("w"))];
        let b = [p(2, 5, None)];
        let m = match_peaks(&a, &b);
        assert_eq!(m[0].matched_by, MatchedBy::Order);
        assert_eq!((m[1].b, m[1].change()), (None, Change::Gone));
    }

    #[test]
    fn overlay_aligns_sides_and_blanks_columns_outside_their_entries() {
        let (va, vb) = ([1i64, 5, 1], [2i64, 2, 8, 2, 2]);
        let sides = [
            OverlaySide {
                axis: Axis::Index { n: 3 },
                offset: 0.0,
                curves: vec![(&va, 0)],
            },
            OverlaySide {
                axis: Axis::Index { n: 5 },
                offset: 2.0,
                curves: vec![(&vb, 0)],
            },
        ];
        let o = overlay(&sides, None, 5);
        assert_eq!((o.x0, o.x1), (-2.0, 3.0));
        let a = &o.sides[0][0];
        assert_eq!(a.0, vec![None, None, Some(0), Some(1), Some(1)]);
        assert_eq!(a.1, vec![None, None, Some(1), Some(5), Some(5)]);
        let b = &o.sides[1][0];
        assert_eq!(b.1, vec![Some(2), Some(2), Some(8), Some(8), Some(2)]);
    }
}
