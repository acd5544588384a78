//! The naive memory timeline of RL-Insight's `memory_html` (ascend-memory.md §11),
//! reproduced for parity and shown next to the allocator curves of §9.5.
//!
//! Operator rows only, starting at 0: pre-existing memory and the `total_*_mb`
//! columns are ignored. Times are the parity `start_time_ms`/`duration_ms` values.

/// Python `round(x, ndigits)`: correctly rounded, ties to even on the exact binary value.
pub fn py_round(x: f64, ndigits: usize) -> f64 {
    if !x.is_finite() {
        return x;
    }
    // Fast path: `y = x·10ⁿ` is within a few ulps of the exact product, so when its fraction
    // is clearly away from one half, rounding `y` rounds the exact value the same way, and
    // `r / 10ⁿ` (IEEE division, correctly rounded) is the double nearest the decimal `r·10⁻ⁿ`,
    // which is what Python returns. Near a tie, or out of range, decide on the exact decimal.
    if ndigits <= 15 {
        let scale = 10f64.powi(ndigits as i32);
        let y = x * scale;
        if y.abs() < 4.0e15 {
            let f = y - y.floor();
            if (f - 0.5).abs() > (y.abs() + 1.0) * 2e-15 {
                return y.round() / scale;
            }
        }
    }
    py_round_exact(x, ndigits)
}

/// [`py_round`] through the exact decimal expansion (`format!` rounds ties to even on the
/// exact binary value, as Python does).
fn py_round_exact(x: f64, ndigits: usize) -> f64 {
    format!("{x:.ndigits$}").parse().unwrap_or(x)
}

/// One allocation bar of the naive timeline (§11 step 2), times in ms relative to nothing (absolute).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bar {
    /// Row index.
    pub row: u32,
    /// `start_time_ms`.
    pub start_ms: f64,
    /// `end = start + duration` after extending unreleased rows to the last instant.
    pub end_ms: f64,
    /// `size_kb` (> 0).
    pub size_kb: f64,
}

/// The naive curve of one `(role, rank)` group.
#[derive(Clone, Debug, PartialEq)]
pub struct NaiveCurve {
    /// Bars in start order (stable).
    pub bars: Vec<Bar>,
    /// `t_min` = min start, ms.
    pub t_min_ms: f64,
    /// Points `(round(t − t_min, 2) ms, cumulative MB)`, one per distinct rounded time, sorted.
    pub points: Vec<(f64, f64)>,
    /// Maximum of the curve, MB.
    pub peak_mb: f64,
}

/// Builds §11 steps 1–3 from `(row, start_ms, duration_ms, size_kb)` of one group (any order).
pub fn naive_curve(rows: impl Iterator<Item = (u32, f64, f64, f64)>) -> NaiveCurve {
    let mut bars: Vec<(u32, f64, f64, f64)> = rows.filter(|r| r.3 > 0.0).collect();
    crate::base::sort::sort_by_i64_key(&mut bars, |b| crate::base::sort::f64_key(b.1));
    let t_end = bars
        .iter()
        .map(|b| b.1 + b.2)
        .fold(f64::NEG_INFINITY, f64::max);
    let t_min = bars.first().map(|b| b.1).unwrap_or(0.0);
    let bars: Vec<Bar> = bars
        .into_iter()
        .map(|(row, s, d, kb)| {
            let d = if d == 0.0 { t_end - s } else { d };
            Bar {
                row,
                start_ms: s,
                end_ms: s + d,
                size_kb: kb,
            }
        })
        .collect();
    let mut ev: Vec<(f64, f64)> = Vec::with_capacity(bars.len() * 2);
    for b in &bars {
        ev.push((py_round(b.start_ms - t_min, 2), b.size_kb));
        ev.push((py_round(b.end_ms - t_min, 2), -b.size_kb));
    }
    crate::base::sort::sort_by_i64_key(&mut ev, |e| crate::base::sort::f64_key(e.0));
    let mut points: Vec<(f64, f64)> = Vec::new();
    let mut sums: Vec<(f64, f64)> = Vec::new();
    for (t, d) in ev {
        match sums.last_mut() {
            Some(last) if last.0 == t => last.1 += d,
            _ => sums.push((t, d)),
        }
    }
    let mut cum = 0.0;
    let mut peak = f64::NEG_INFINITY;
    for (t, d) in sums {
        cum += d;
        let mb = cum / 1024.0;
        peak = peak.max(mb);
        points.push((t, mb));
    }
    NaiveCurve {
        bars,
        t_min_ms: t_min,
        points,
        peak_mb: if peak.is_finite() { peak } else { 0.0 },
    }
}

/// NumPy `linspace(0, n−1, k).astype(int)`: `k` evenly spaced indices (all when `n ≤ k`).
pub fn linspace_indices(n: usize, k: usize) -> Vec<usize> {
    if n <= k {
        return (0..n).collect();
    }
    if k < 2 {
        return (0..k).collect();
    }
    let stop = (n - 1) as f64;
    let step = stop / (k - 1) as f64;
    let mut v: Vec<usize> = (0..k).map(|i| (i as f64 * step) as usize).collect();
    if let Some(l) = v.last_mut() {
        *l = n - 1;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_rounding() {
        assert_eq!(py_round(0.125, 2), 0.12);
        assert_eq!(py_round(-0.001, 2).to_bits(), (-0.0f64).to_bits());
        // The fast path agrees with the exact decimal rounding everywhere it is taken.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..200_000u32 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mag = 10f64.powi((i % 14) as i32 - 3);
            let x = (state >> 11) as f64 / (1u64 << 53) as f64
                * mag
                * if i % 3 == 0 { -1.0 } else { 1.0 };
            // Also values that sit exactly on two-decimal grid points and halves.
            let g = (state % 100_000) as f64 / 200.0;
            for v in [x, g, -g] {
                for n in [0usize, 1, 2, 3, 6] {
                    assert_eq!(
                        py_round(v, n).to_bits(),
                        py_round_exact(v, n).to_bits(),
                        "{v} {n}"
                    );
                }
            }
        }
        assert_eq!(py_round(0.375, 2), 0.38);
        assert_eq!(py_round(2.675, 2), 2.67);
        assert_eq!(py_round(1.23456, 4), 1.2346);
    }

    #[test]
    fn curve_extends_unreleased_rows_and_sums_equal_times() {
        // (row, start, dur, kb)
        let c = naive_curve(
            [
                (0, 10.0, 5.0, 1024.0),
                (1, 12.0, 0.0, 2048.0),
                (2, 11.0, 4.0, 1024.0),
                (3, 13.0, 1.0, -5.0),
            ]
            .into_iter(),
        );
        assert_eq!(c.bars.len(), 3);
        assert_eq!(c.bars[2].end_ms, 15.0); // extended to t_end = 15
        assert_eq!(
            c.points,
            vec![(0.0, 1.0), (1.0, 2.0), (2.0, 4.0), (5.0, 0.0)]
        );
        assert_eq!(c.peak_mb, 4.0);
    }

    #[test]
    fn linspace() {
        assert_eq!(linspace_indices(3, 5), vec![0, 1, 2]);
        assert_eq!(linspace_indices(10, 4), vec![0, 3, 6, 9]);
        assert_eq!(linspace_indices(0, 4), Vec::<usize>::new());
    }
}
