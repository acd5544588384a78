//! X axes of the snapshot curves and their min/max-per-pixel-column downsampling
//! (torch-snapshot.md §7.3 "Downsampling for display": per-pixel min/max buckets, never
//! plain decimation, so every peak stays visible).
//!
//! A curve is a step function over entries: `values[i]` is the level after entry `i`,
//! `baseline` the level before entry 0. Entry `i` sits at position `pos(i)` on the axis:
//! its index (`Index` axis) or its time in ms since the device's first `time_us`
//! (`Time` axis; positions must be non-decreasing, see [`Axis::time`]).

/// Positions of the entries of one device on one axis.
#[derive(Clone, Debug, PartialEq)]
pub enum Axis<'a> {
    /// Entry `i` at `i`.
    Index {
        /// Number of entries.
        n: usize,
    },
    /// Entry `i` at `ms[i]` (non-decreasing).
    Time {
        /// ms since the first `time_us`, one per entry.
        ms: &'a [f64],
    },
    /// Entry `i` at `(us[i] − t0) / 1000` ms: the same axis as [`Axis::Time`], read from a
    /// trace's own `time_us` column when every entry has a time and they never go back (the
    /// common case), so the axis costs no memory per entry ([`raw_time_origin`]).
    TimeUs {
        /// `time_us` of each entry, non-decreasing.
        us: &'a [i64],
        /// The first entry's `time_us`.
        t0: i64,
    },
}

/// The origin of a [`Axis::TimeUs`] over `us`: its first value, when `us` is not empty, holds
/// no missing time (`missing`) and never goes back; `None` otherwise ([`time_axis_ms`] then
/// makes the axis).
pub fn raw_time_origin(us: &[i64], missing: i64) -> Option<i64> {
    let ok = us.iter().all(|&t| t != missing) && us.windows(2).all(|w| w[0] <= w[1]);
    us.first().copied().filter(|_| ok)
}

/// ms between `t0` and `t` µs, as [`time_axis_ms`] computes them.
fn us_to_ms(t: i64, t0: i64) -> f64 {
    (t - t0) as f64 / 1000.0
}

impl Axis<'_> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        match self {
            Axis::Index { n } => *n,
            Axis::Time { ms } => ms.len(),
            Axis::TimeUs { us, .. } => us.len(),
        }
    }
    /// True when there is no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Position of entry `i`.
    pub fn pos(&self, i: usize) -> f64 {
        match self {
            Axis::Index { .. } => i as f64,
            Axis::Time { ms } => ms.get(i).copied().unwrap_or(0.0),
            Axis::TimeUs { us, t0 } => us.get(i).map_or(0.0, |&t| us_to_ms(t, *t0)),
        }
    }
    /// Number of entries whose position is `< x`.
    pub fn count_before(&self, x: f64) -> usize {
        match self {
            Axis::Index { n } => {
                if x.is_nan() || x <= 0.0 {
                    0
                } else {
                    (x.ceil() as usize).min(*n)
                }
            }
            Axis::Time { ms } => ms.partition_point(|&t| t < x),
            Axis::TimeUs { us, t0 } => us.partition_point(|&t| us_to_ms(t, *t0) < x),
        }
    }
    /// The entry the user means at position `x`: the last entry at or before `x`
    /// (the first entry when `x` is before every entry); `None` when there is no entry.
    pub fn entry_at(&self, x: f64) -> Option<usize> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        let at_or_before = match self {
            Axis::Index { .. } => {
                if x.is_nan() || x < 0.0 {
                    0
                } else {
                    (x.floor() as usize).saturating_add(1).min(n)
                }
            }
            Axis::Time { ms } => ms.partition_point(|&t| t <= x),
            Axis::TimeUs { us, t0 } => us.partition_point(|&t| us_to_ms(t, *t0) <= x),
        };
        Some(at_or_before.saturating_sub(1))
    }
    /// The whole range `[x0, x1)`: every entry inside, the last one included.
    pub fn full(&self) -> (f64, f64) {
        match self {
            Axis::Index { n } => (0.0, (*n).max(1) as f64),
            Axis::Time { .. } | Axis::TimeUs { .. } => {
                let last = self.pos(self.len().saturating_sub(1)).max(0.0);
                (0.0, last + (last * 1e-6).max(1e-3))
            }
        }
    }
}

/// Turns raw `time_us` values (with `None` gaps) into non-decreasing ms since the first
/// recorded time: gaps take the previous time, a step backwards is held at the maximum so far
/// (clock adjustments never make the axis go back). `None` when no entry has a time.
pub fn time_axis_ms(times_us: impl Iterator<Item = Option<i64>>) -> Option<Vec<f64>> {
    let times: Vec<Option<i64>> = times_us.collect();
    let t0 = times.iter().flatten().next().copied()?;
    let mut last = t0;
    Some(
        times
            .into_iter()
            .map(|t| {
                last = last.max(t.unwrap_or(last));
                us_to_ms(last, t0)
            })
            .collect(),
    )
}

/// Per-column minimum and maximum of several step curves over one window.
#[derive(Clone, Debug, PartialEq)]
pub struct Columns {
    /// Per curve: (min, max) per column, bytes.
    pub curves: Vec<(Vec<f64>, Vec<f64>)>,
    /// Entries whose position lies inside the window.
    pub entries: u64,
}

/// Downsamples `curves` (each `(values, baseline)`, values parallel to the axis entries) to
/// `width` columns over `[x0, x1)`. Column `c` covers `[x0 + c·w, x0 + (c+1)·w)`; its range
/// is the level holding at its start (the level after the last earlier entry, or the
/// baseline) plus every level inside it. O(entries in window + width) per curve.
/// An empty window (`x1 ≤ x0`) or zero width gives empty columns.
pub fn min_max(
    axis: &Axis<'_>,
    curves: &[(&[i64], i64)],
    x0: f64,
    x1: f64,
    width: usize,
) -> Columns {
    let levels: Vec<(Levels<'_>, i64)> = curves
        .iter()
        .map(|&(v, base)| (Levels::Values(v), base))
        .collect();
    min_max_levels(axis, &levels, x0, x1, width)
}

/// The levels of one step curve after each entry: stored, or the difference of two stored
/// curves computed as it is read (the fragmentation curve, reserved − active, §7.3), so a
/// derived curve costs no memory per entry.
#[derive(Clone, Copy, Debug)]
pub enum Levels<'a> {
    /// `values[i]`.
    Values(&'a [i64]),
    /// `minuend[i] − subtrahend[i]` (a missing value counts 0).
    Difference(&'a [i64], &'a [i64]),
}

impl Levels<'_> {
    /// Number of levels.
    pub fn len(&self) -> usize {
        match *self {
            Levels::Values(v) => v.len(),
            Levels::Difference(a, b) => a.len().max(b.len()),
        }
    }
    /// True when there is no level.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The level after entry `i` (`None` past the end).
    pub fn get(&self, i: usize) -> Option<i64> {
        match *self {
            Levels::Values(v) => v.get(i).copied(),
            Levels::Difference(a, b) => (i < self.len())
                .then(|| a.get(i).copied().unwrap_or(0) - b.get(i).copied().unwrap_or(0)),
        }
    }
    /// `(min, max)` of `lo`, `hi` and the levels of entries `a..b` (clamped to the levels).
    fn fold(&self, a: usize, b: usize, (mut lo, mut hi): (i64, i64)) -> (i64, i64) {
        let b = b.min(self.len());
        match *self {
            Levels::Values(v) => {
                for &x in v.get(a..b).unwrap_or(&[]) {
                    lo = lo.min(x);
                    hi = hi.max(x);
                }
            }
            // Both curves cover the window (always, for the stored curves): one pass over
            // the two slices, no per-entry lookup.
            Levels::Difference(m, s) if a <= b && b <= m.len() && b <= s.len() => {
                for (&x, &y) in m[a..b].iter().zip(&s[a..b]) {
                    lo = lo.min(x - y);
                    hi = hi.max(x - y);
                }
            }
            Levels::Difference(..) => {
                for x in (a..b).filter_map(|i| self.get(i)) {
                    lo = lo.min(x);
                    hi = hi.max(x);
                }
            }
        }
        (lo, hi)
    }
}

/// [`min_max`] over [`Levels`].
pub fn min_max_levels(
    axis: &Axis<'_>,
    curves: &[(Levels<'_>, i64)],
    x0: f64,
    x1: f64,
    width: usize,
) -> Columns {
    let mut out = Columns {
        curves: curves
            .iter()
            .map(|_| (Vec::with_capacity(width), Vec::with_capacity(width)))
            .collect(),
        entries: 0,
    };
    if width == 0 || !(x1 > x0) {
        return out;
    }
    let w = (x1 - x0) / width as f64;
    let n = axis.len();
    let mut a = axis.count_before(x0);
    out.entries = axis.count_before(x1).saturating_sub(a) as u64;
    for c in 0..width {
        let end = if c + 1 == width {
            x1
        } else {
            x0 + (c + 1) as f64 * w
        };
        let b = axis.count_before(end).max(a).min(n);
        for (k, (values, baseline)) in curves.iter().enumerate() {
            let carried = if a == 0 {
                *baseline
            } else {
                values.get(a - 1).unwrap_or(*baseline)
            };
            let (lo, hi) = values.fold(a, b, (carried, carried));
            out.curves[k].0.push(lo as f64);
            out.curves[k].1.push(hi as f64);
        }
        a = b;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raw_time_column_is_the_same_axis_as_its_ms() {
        let us: Vec<i64> = [5_000, 5_000, 5_250, 7_001, 7_001, 9_999, 12_345]
            .iter()
            .map(|t| t + 1_700_000_000_000_000)
            .collect();
        let t0 = raw_time_origin(&us, i64::MIN).unwrap();
        let ms = time_axis_ms(us.iter().map(|&t| Some(t))).unwrap();
        let (raw, kept) = (Axis::TimeUs { us: &us, t0 }, Axis::Time { ms: &ms });
        assert_eq!(raw.full(), kept.full());
        for i in 0..us.len() {
            assert_eq!(raw.pos(i), kept.pos(i));
        }
        for x in [
            -1.0,
            0.0,
            0.1,
            0.25,
            2.0,
            2.001,
            4.999,
            7.345,
            8.0,
            f64::NAN,
        ] {
            assert_eq!(raw.count_before(x), kept.count_before(x), "{x}");
            assert_eq!(raw.entry_at(x), kept.entry_at(x), "{x}");
        }
        let v: Vec<i64> = (0..us.len() as i64).map(|i| i * i - 3 * i).collect();
        let (f0, f1) = kept.full();
        assert_eq!(
            min_max(&raw, &[(&v, 1)], f0, f1, 5),
            min_max(&kept, &[(&v, 1)], f0, f1, 5)
        );
        // A missing time or a step back: the ms axis is made instead.
        assert_eq!(raw_time_origin(&[3, i64::MIN, 4], i64::MIN), None);
        assert_eq!(raw_time_origin(&[3, 5, 4], i64::MIN), None);
        assert_eq!(raw_time_origin(&[], i64::MIN), None);
    }

    #[test]
    fn a_difference_read_on_the_fly_equals_the_stored_difference() {
        let n = 997usize;
        let a: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 1000 + 500).collect();
        let b: Vec<i64> = (0..n as i64).map(|i| (i * 104_729) % 700).collect();
        let d: Vec<i64> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
        let ms: Vec<f64> = (0..n).map(|i| (i / 3) as f64 * 0.25).collect();
        for axis in [Axis::Index { n }, Axis::Time { ms: &ms }] {
            let (f0, f1) = axis.full();
            for (x0, x1, w) in [
                (f0, f1, 7),
                (f0, f1, 1000),
                (3.0, 40.5, 13),
                (f1 - 1.0, f1, 3),
            ] {
                let stored = min_max(&axis, &[(&d, 42)], x0, x1, w);
                let on_the_fly =
                    min_max_levels(&axis, &[(Levels::Difference(&a, &b), 42)], x0, x1, w);
                assert_eq!(stored, on_the_fly, "{axis:?} {x0}..{x1} / {w}");
            }
        }
    }

    #[test]
    fn index_axis_columns_keep_every_spike_and_carry_levels() {
        // Levels after entries 0..6; baseline 10.
        let v = [20i64, 5, 30, 30, 7, 9];
        let axis = Axis::Index { n: v.len() };
        // 3 columns over [0, 6): entries {0,1}, {2,3}, {4,5}.
        let c = min_max(&axis, &[(&v, 10)], 0.0, 6.0, 3);
        assert_eq!(c.curves[0].0, vec![5.0, 5.0, 7.0]);
        assert_eq!(c.curves[0].1, vec![20.0, 30.0, 30.0]);
        assert_eq!(c.entries, 6);
        // Zoomed in past the entries: 4 columns over [1, 3): half an entry each.
        let c = min_max(&axis, &[(&v, 10)], 1.0, 3.0, 4);
        assert_eq!(c.curves[0].0, vec![5.0, 5.0, 5.0, 30.0]);
        assert_eq!(c.curves[0].1, vec![20.0, 5.0, 30.0, 30.0]);
        assert_eq!(c.entries, 2);
    }

    #[test]
    fn a_million_entries_reduce_to_the_true_extremes_per_column() {
        let n = 1_000_000usize;
        let v: Vec<i64> = (0..n).map(|i| ((i * 7919) % 1000) as i64).collect();
        let axis = Axis::Index { n };
        let c = min_max(&axis, &[(&v, 0)], 0.0, n as f64, 1000);
        // Column k holds entries [1000k, 1000k+1000): a permutation of 0..1000, plus the carried level.
        assert!(c.curves[0].1.iter().all(|&x| x == 999.0));
        assert!(c.curves[0].0.iter().all(|&x| x == 0.0));
        assert_eq!(c.entries, n as u64);
    }

    #[test]
    fn time_axis_holds_gaps_and_never_goes_back() {
        let ms = time_axis_ms(
            [
                None,
                Some(1_000_000),
                Some(1_000_500),
                None,
                Some(1_000_400),
                Some(1_002_000),
            ]
            .into_iter(),
        )
        .unwrap();
        assert_eq!(ms, vec![0.0, 0.0, 0.5, 0.5, 0.5, 2.0]);
        assert_eq!(time_axis_ms([None, None].into_iter()), None);
        let axis = Axis::Time { ms: &ms };
        assert_eq!(axis.entry_at(0.6), Some(4));
        assert_eq!(axis.entry_at(-1.0), Some(0));
        assert_eq!(axis.entry_at(5.0), Some(5));
        assert_eq!(axis.count_before(0.5), 2);
        // Two columns [0,1) and [1,2.002): entries 0..5 then 5.
        let v = [1i64, 2, 3, 4, 5, 6];
        let (x0, x1) = axis.full();
        assert_eq!((x0, x1), (0.0, 2.0 + 1e-3));
        let c = min_max(&axis, &[(&v, 0)], 0.0, 1.0, 1);
        assert_eq!((c.curves[0].0[0], c.curves[0].1[0]), (0.0, 5.0));
        let c = min_max(&axis, &[(&v, 0)], 1.0, x1, 1);
        assert_eq!((c.curves[0].0[0], c.curves[0].1[0]), (5.0, 6.0));
    }

    #[test]
    fn index_entry_at_and_empty_inputs() {
        let axis = Axis::Index { n: 4 };
        assert_eq!(axis.entry_at(2.7), Some(2));
        assert_eq!(axis.entry_at(99.0), Some(3));
        assert_eq!(Axis::Index { n: 0 }.entry_at(1.0), None);
        let c = min_max(&axis, &[(&[1, 2, 3, 4], 0)], 3.0, 3.0, 10);
        assert!(c.curves[0].0.is_empty());
        // No entries at all: the baseline holds everywhere.
        let c = min_max(&Axis::Index { n: 0 }, &[(&[], 42)], 0.0, 1.0, 2);
        assert_eq!(c.curves[0].1, vec![42.0, 42.0]);
    }
}
