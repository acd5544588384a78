//! Downsampling of step series for canvas charts (level of detail; the same
//! min/max-per-column idea as torch-snapshot.md §7.3).
//!
//! A step series is a list of samples `(t, v)` sorted by `t`; the value `v` holds from `t`
//! until the next sample. For a chart `width` pixel columns wide over the window `[x0, x1)`,
//! [`step_min_max`] returns, per column, the minimum and maximum value the series takes
//! inside that column. Drawing a vertical line from min to max per column shows every spike,
//! whatever the number of samples, in O(samples in window + width) time.

/// Per-column minimum and maximum of one series; `NaN` where the series has no value yet.
#[derive(Clone, Debug, PartialEq)]
pub struct MinMax {
    /// Per column minimum.
    pub min: Vec<f64>,
    /// Per column maximum.
    pub max: Vec<f64>,
}

/// Downsamples the step series `(ts[i], vs[i])` to `width` columns over `[x0, x1)`.
///
/// Preconditions (not checked beyond debug asserts): `ts` sorted ascending, `ts.len() == vs.len()`.
/// Samples whose value is `NaN` are treated as "no change". A window with `x1 <= x0` or a
/// zero width gives empty vectors. Column `i` covers `[x0 + i·w, x0 + (i+1)·w)` with
/// `w = (x1 − x0) / width` (the last column also includes `x1`). The value holding at the
/// column start counts unless a sample sits exactly at the start; every sample inside counts.
pub fn step_min_max(ts: &[f64], vs: &[f64], x0: f64, x1: f64, width: usize) -> MinMax {
    debug_assert_eq!(ts.len(), vs.len());
    let n = ts.len().min(vs.len());
    let mut out = MinMax {
        min: vec![f64::NAN; width],
        max: vec![f64::NAN; width],
    };
    if width == 0 || !(x1 > x0) {
        return MinMax {
            min: Vec::new(),
            max: Vec::new(),
        };
    }
    let w = (x1 - x0) / width as f64;
    // First sample at or after x0; the value holding at x0 is the last one before it.
    let mut idx = ts[..n].partition_point(|&t| t < x0);
    let mut current = f64::NAN;
    for v in vs[..idx].iter().rev() {
        if !v.is_nan() {
            current = *v;
            break;
        }
    }
    for col in 0..width {
        let start = x0 + col as f64 * w;
        let last = col + 1 == width;
        let end = if last { x1 } else { x0 + (col + 1) as f64 * w };
        // The carried value counts only if no sample sits exactly at the column start;
        // every sample inside the column counts, so spikes are never lost.
        let carried = !(idx < n && ts[idx] <= start);
        let (mut lo, mut hi) = if carried {
            (current, current)
        } else {
            (f64::NAN, f64::NAN)
        };
        // The last column includes its end, so a sample at exactly x1 is drawn.
        while idx < n && (ts[idx] < end || (last && ts[idx] <= end)) {
            let v = vs[idx];
            if !v.is_nan() {
                current = v;
                lo = if lo.is_nan() { v } else { lo.min(v) };
                hi = if hi.is_nan() { v } else { hi.max(v) };
            }
            idx += 1;
        }
        if lo.is_nan() {
            // Only NaN samples at the start: the carried value still holds.
            lo = current;
            hi = current;
        }
        out.min[col] = lo;
        out.max[col] = hi;
    }
    out
}

/// The value of the step series at `t` (the last sample with `ts ≤ t`), or `None` before
/// the first sample. Same preconditions as [`step_min_max`].
pub fn value_at(ts: &[f64], vs: &[f64], t: f64) -> Option<f64> {
    let n = ts.len().min(vs.len());
    let idx = ts[..n].partition_point(|&x| x <= t);
    vs[..idx].iter().rev().find(|v| !v.is_nan()).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(ts: &[f64], vs: &[f64], x0: f64, x1: f64, width: usize, min: &[f64], max: &[f64]) {
        let got = step_min_max(ts, vs, x0, x1, width);
        let fmt = |v: &[f64]| format!("{v:?}");
        assert_eq!(fmt(&got.min), fmt(min), "min");
        assert_eq!(fmt(&got.max), fmt(max), "max");
    }

    #[test]
    fn holds_values_between_samples_and_keeps_spikes() {
        // Samples at 0 (1), 1 (5), 1.5 (2), 3 (4). Columns of width 1 over [0, 4).
        let ts = [0.0, 1.0, 1.5, 3.0];
        let vs = [1.0, 5.0, 2.0, 4.0];
        check(
            &ts,
            &vs,
            0.0,
            4.0,
            4,
            &[1.0, 2.0, 2.0, 4.0],
            &[1.0, 5.0, 2.0, 4.0],
        );
    }

    #[test]
    fn columns_before_the_first_sample_are_nan_and_window_can_start_late() {
        let ts = [2.0, 3.0];
        let vs = [7.0, 3.0];
        check(&ts, &vs, 0.0, 4.0, 2, &[f64::NAN, 3.0], &[f64::NAN, 7.0]);
        // Window after all samples: the last value holds.
        check(&ts, &vs, 10.0, 12.0, 2, &[3.0, 3.0], &[3.0, 3.0]);
    }

    #[test]
    fn a_million_samples_reduce_to_width_columns_with_the_true_extremes() {
        let n: usize = 1_000_000;
        let ts: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let vs: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64).collect();
        let got = step_min_max(&ts, &vs, 0.0, n as f64, 1000);
        assert_eq!(got.min.len(), 1000);
        // Each column spans 1000 samples whose values are a permutation of 0..1000.
        assert!(got.min.iter().all(|&v| v == 0.0));
        assert!(got.max.iter().all(|&v| v == 999.0));
    }

    #[test]
    fn nan_samples_do_not_change_the_value() {
        let ts = [0.0, 1.0, 2.0];
        let vs = [1.0, f64::NAN, 3.0];
        check(&ts, &vs, 0.0, 3.0, 3, &[1.0, 1.0, 3.0], &[1.0, 1.0, 3.0]);
        assert_eq!(value_at(&ts, &vs, 1.5), Some(1.0));
        assert_eq!(value_at(&ts, &vs, -1.0), None);
        assert_eq!(value_at(&ts, &vs, 2.0), Some(3.0));
    }

    #[test]
    fn empty_window_or_width_gives_nothing() {
        let got = step_min_max(&[0.0], &[1.0], 1.0, 1.0, 10);
        assert!(got.min.is_empty());
        let got = step_min_max(&[0.0], &[1.0], 0.0, 1.0, 0);
        assert!(got.max.is_empty());
    }
}
