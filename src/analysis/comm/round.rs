//! msprof-analyze's two number rules (communication.md §2.1): Python's `round(x, 4)` and
//! `compute_ratio`.

/// Python's `round(x, 4)`: half-to-even on the exact binary value. Rust's `{:.4}` formats the
/// exact value with ties to even, so format and parse back (never `(x·1e4).round()/1e4`).
pub fn round4(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    format!("{x:.4}").parse().unwrap_or(x)
}

/// `compute_ratio(a, b)`: 0 when `|b| < 1e-15`, else `round(a / b, 4)`.
pub fn compute_ratio(a: f64, b: f64) -> f64 {
    if b.abs() < 1e-15 {
        0.0
    } else {
        round4(a / b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round4_is_pythons_round_at_binary_ties() {
        // 0.03125 = 2⁻⁵ is an exact tie at 4 decimals: Python gives 0.0312 (to even).
        assert_eq!(round4(0.03125), 0.0312);
        assert_eq!(round4(0.09375), 0.0938);
        // Decided by the exact binary value, not the decimal text: 2.00005 is just below the
        // tie (Python: 2.0), 1.00005 just above (Python: 1.0001).
        assert_eq!(round4(2.00005), 2.0);
        assert_eq!(round4(1.00005), 1.0001);
        assert_eq!(round4(0.00015), 0.0001);
        assert_eq!(round4(-0.00004), -0.0);
        assert_eq!(compute_ratio(1.0, 0.0), 0.0);
        assert_eq!(compute_ratio(1.0, 3.0), 0.3333);
        assert_eq!(compute_ratio(3.99188, 3.99188), 1.0);
    }
}
