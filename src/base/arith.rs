//! Checked arithmetic for values that come from input files: times in `i64` nanoseconds and
//! sizes in bytes ("Arithmetic on input values").
//!
//! Input can hold any number up to the parser's limits (`i64::MAX` ns, 16-byte pickle ints), so
//! `start + dur`, `end − start`, sums of sizes and unit conversions can leave the `i64` range.
//! Plain operators panic there in debug builds and wrap in release (a step whose start is after
//! its end, `peak_bytes` 9223372036854776319). Every such computation on input-derived values goes
//! through this module: it returns [`OutOfRange`] instead, and the caller turns that into one
//! located [`Problem`](super::Problem) and drops or keeps the value as its spec says. [`Tally`]
//! counts the values one file lost this way, so nothing is dropped silently.
//!
//! Values computed from already-checked values (a length inside a window that was checked) may
//! use plain operators; the rule is: a value that came from the input is checked once, where it
//! enters the model.

use std::fmt;

/// Rows the rest of a file holds at the density seen so far: `rows × bytes_left / bytes_read`
/// (0 when nothing was read), in 128-bit arithmetic, saturating at `usize::MAX`. For sizing
/// tables once instead of growing them by doubling; callers add their margin and reserve with
/// `try_reserve`, so an estimate the allocator refuses is skipped, never fatal.
pub fn rows_for_rest(rows: usize, bytes_read: u64, bytes_left: u64) -> usize {
    if bytes_read == 0 {
        return 0;
    }
    let n = rows as u128 * bytes_left as u128 / bytes_read as u128;
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// An input-derived computation left the `i64` range (or produced a negative duration/size
/// where none can exist).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfRange;

impl fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("value outside the representable range (±9.22e18)")
    }
}

impl std::error::Error for OutOfRange {}

/// The largest magnitude of a time the model holds, ns: `2^62 − 1` (about ±146 years around
/// the epoch; today's epoch ns are ~1.7e18 < 4.6e18).
///
/// Every time that enters a model table lies in `[−TIME_LIMIT_NS, TIME_LIMIT_NS]`
/// ([`time_ns`], [`interval_ns`]), so the difference of any two model times fits in `i64`
/// (at most `2^63 − 2`): gaps, spans, offsets and the total length of disjoint segments can
/// then use plain operators. Sums of many input durations (overlapping intervals) still go
/// through [`sum`] / [`Total`].
pub const TIME_LIMIT_NS: i64 = (1 << 62) - 1;

/// A time that may enter the model: `Err` outside `±TIME_LIMIT_NS` (see [`TIME_LIMIT_NS`]).
pub fn time_ns(t_ns: i64) -> Result<i64, OutOfRange> {
    if (-TIME_LIMIT_NS..=TIME_LIMIT_NS).contains(&t_ns) {
        Ok(t_ns)
    } else {
        Err(OutOfRange)
    }
}

/// An interval that may enter the model: `start` and `start + dur` both within
/// `±TIME_LIMIT_NS`, `dur ≥ 0`. Returns the end, ns.
pub fn interval_ns(start_ns: i64, dur_ns: i64) -> Result<i64, OutOfRange> {
    time_ns(start_ns)?;
    time_ns(end_ns(start_ns, dur_ns)?)
}

/// `start + dur` (ns): the end of an interval. `dur` must be ≥ 0.
pub fn end_ns(start_ns: i64, dur_ns: i64) -> Result<i64, OutOfRange> {
    if dur_ns < 0 {
        return Err(OutOfRange);
    }
    start_ns.checked_add(dur_ns).ok_or(OutOfRange)
}

/// `end − start` (ns): the length of an interval; `Err` when it does not fit or is negative.
pub fn span_ns(start_ns: i64, end_ns: i64) -> Result<i64, OutOfRange> {
    match end_ns.checked_sub(start_ns) {
        Some(d) if d >= 0 => Ok(d),
        _ => Err(OutOfRange),
    }
}

/// `a + b` for input-derived values (times, signed size deltas).
pub fn add(a: i64, b: i64) -> Result<i64, OutOfRange> {
    a.checked_add(b).ok_or(OutOfRange)
}

/// `a − b` for input-derived values (signed: an offset between two times may be negative).
pub fn sub(a: i64, b: i64) -> Result<i64, OutOfRange> {
    a.checked_sub(b).ok_or(OutOfRange)
}

/// `a × b` for input-derived values (unit scaling, counts × sizes).
pub fn mul(a: i64, b: i64) -> Result<i64, OutOfRange> {
    a.checked_mul(b).ok_or(OutOfRange)
}

/// Sum of input-derived values (e.g. bytes of a live set); `Err` on the first overflow.
pub fn sum<I: IntoIterator<Item = i64>>(values: I) -> Result<i64, OutOfRange> {
    values.into_iter().try_fold(0i64, add)
}

/// A running total of sizes or times that reports overflow once instead of wrapping.
///
/// Shape: `total` (same unit as the values added), `overflowed` once any add failed; after an
/// overflow the total stays at the last representable value and further adds are ignored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Total {
    total: i64,
    overflowed: bool,
}

impl Total {
    /// Adds `v`; returns `Err` (and marks the total) when the sum leaves the `i64` range.
    pub fn add(&mut self, v: i64) -> Result<(), OutOfRange> {
        if self.overflowed {
            return Err(OutOfRange);
        }
        match self.total.checked_add(v) {
            Some(t) => {
                self.total = t;
                Ok(())
            }
            None => {
                self.overflowed = true;
                Err(OutOfRange)
            }
        }
    }
    /// The total, or `Err` if any add overflowed.
    pub fn get(&self) -> Result<i64, OutOfRange> {
        if self.overflowed {
            Err(OutOfRange)
        } else {
            Ok(self.total)
        }
    }
}

/// Counts the values of one input that were out of range, keeping where the first few were
/// (byte offset or line, as the caller's positions go), so the caller can write one problem:
/// "N values out of range, first at …".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// How many values were out of range.
    pub count: u64,
    /// Positions (byte offsets or line numbers) of the first [`Tally::KEEP`] of them.
    pub first_at: Vec<u64>,
}

impl Tally {
    /// How many positions are kept.
    pub const KEEP: usize = 5;
    /// Records one out-of-range value at `at`.
    pub fn record(&mut self, at: u64) {
        self.count += 1;
        if self.first_at.len() < Self::KEEP {
            self.first_at.push(at);
        }
    }
    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// One problem (severity error: the values were dropped) for everything recorded, or
    /// `None` when nothing was: `at` is where the first one is (the caller adds the byte or
    /// line of `first_at[0]`), the message `"<what>: 3 (first at 120, 4096, 9000)"`.
    pub fn problem(
        &self,
        code: &'static str,
        at: super::Position,
        what: &str,
    ) -> Option<super::Problem> {
        (!self.is_empty()).then(|| {
            super::Problem::new(
                super::Severity::Error,
                code,
                at,
                format!("{what}: {}", self.describe()),
            )
        })
    }

    /// The time range of the model in µs, for messages: `"±4611686018427387.903 µs"`.
    pub fn time_limit_text() -> String {
        format!("±{}.{:03} µs", TIME_LIMIT_NS / 1000, TIME_LIMIT_NS % 1000)
    }

    /// "3 (first at 120, 4096, 9000)" — for problem messages.
    pub fn describe(&self) -> String {
        let at: Vec<String> = self.first_at.iter().map(|a| a.to_string()).collect();
        let more = if self.count as usize > self.first_at.len() {
            ", …"
        } else {
            ""
        };
        format!("{} (first at {}{more})", self.count, at.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The density extrapolation: exact where it fits, 0 with nothing read, saturating past
    /// `usize`.
    #[test]
    fn rows_for_rest_extrapolates_the_density_seen() {
        assert_eq!(rows_for_rest(100, 4 << 20, 36 << 20), 900);
        assert_eq!(rows_for_rest(3, 10, 5), 1);
        assert_eq!(rows_for_rest(100, 0, 1 << 30), 0);
        assert_eq!(rows_for_rest(usize::MAX, 1, u64::MAX), usize::MAX);
    }

    /// Property: every helper agrees with exact `i128` arithmetic on values drawn
    /// around the interesting points (0, ±1, the time limit, the i64 limits) and at random,
    /// returning `Ok` exactly when the exact result is representable (and, for times, within
    /// `±TIME_LIMIT_NS`). Deterministic xorshift: a failure prints the pair.
    #[test]
    fn every_helper_agrees_with_exact_arithmetic() {
        let edges = [
            0,
            1,
            -1,
            2,
            TIME_LIMIT_NS,
            TIME_LIMIT_NS + 1,
            -TIME_LIMIT_NS,
            -TIME_LIMIT_NS - 1,
            i64::MAX,
            i64::MAX - 1,
            i64::MIN,
            i64::MIN + 1,
            1 << 31,
            -(1 << 31),
            3_037_000_499, // ⌊√(2^63)⌋: products around it
            3_037_000_500,
        ];
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Mix magnitudes: full range, 40-bit and 20-bit values.
            match seed % 3 {
                0 => seed as i64,
                1 => (seed as i64) >> 24,
                _ => (seed as i64) >> 44,
            }
        };
        let mut values: Vec<i64> = edges.to_vec();
        values.extend((0..400).map(|_| rnd()));
        let fits = |x: i128| i64::try_from(x).ok();
        let time = |x: i128| fits(x).filter(|t| (-TIME_LIMIT_NS..=TIME_LIMIT_NS).contains(t));
        for &a in &values {
            assert_eq!(time_ns(a).ok(), time(a as i128), "time_ns({a})");
            for &b in &values {
                let (x, y) = (a as i128, b as i128);
                assert_eq!(add(a, b).ok(), fits(x + y), "add({a}, {b})");
                assert_eq!(sub(a, b).ok(), fits(x - y), "sub({a}, {b})");
                assert_eq!(mul(a, b).ok(), fits(x * y), "mul({a}, {b})");
                let end = if b < 0 { None } else { fits(x + y) };
                assert_eq!(end_ns(a, b).ok(), end, "end_ns({a}, {b})");
                let span = fits(y - x).filter(|d| *d >= 0);
                assert_eq!(span_ns(a, b).ok(), span, "span_ns({a}, {b})");
                let interval = if b < 0 || time(x).is_none() {
                    None
                } else {
                    time(x + y)
                };
                assert_eq!(interval_ns(a, b).ok(), interval, "interval_ns({a}, {b})");
                let three = fits(x + y).and_then(|s| fits(s as i128 + x));
                assert_eq!(sum([a, b, a]).ok(), three, "sum([{a}, {b}, {a}])");
                let mut t = Total::default();
                let ok = t.add(a).is_ok() & t.add(b).is_ok();
                assert_eq!(ok, fits(x + y).is_some(), "Total {a} + {b}");
                assert_eq!(t.get().ok(), fits(x + y), "Total::get {a} + {b}");
            }
        }
    }

    #[test]
    fn intervals_at_the_limits() {
        assert_eq!(end_ns(1, 2), Ok(3));
        assert_eq!(end_ns(i64::MAX - 1, 1), Ok(i64::MAX));
        assert_eq!(end_ns(i64::MAX, 1), Err(OutOfRange));
        assert_eq!(end_ns(0, -1), Err(OutOfRange));
        assert_eq!(span_ns(5, 7), Ok(2));
        assert_eq!(span_ns(7, 5), Err(OutOfRange));
        assert_eq!(span_ns(i64::MIN, i64::MAX), Err(OutOfRange));
        assert_eq!(span_ns(-1, i64::MAX), Err(OutOfRange));
        assert_eq!(span_ns(0, i64::MAX), Ok(i64::MAX));
    }

    #[test]
    fn model_times_stay_inside_the_limit() {
        assert_eq!(time_ns(TIME_LIMIT_NS), Ok(TIME_LIMIT_NS));
        assert_eq!(time_ns(-TIME_LIMIT_NS), Ok(-TIME_LIMIT_NS));
        assert_eq!(time_ns(TIME_LIMIT_NS + 1), Err(OutOfRange));
        assert_eq!(time_ns(i64::MIN), Err(OutOfRange));
        assert_eq!(
            interval_ns(1_700_000_000_000_000_000, 5),
            Ok(1_700_000_000_000_000_005)
        );
        assert_eq!(interval_ns(TIME_LIMIT_NS - 1, 2), Err(OutOfRange));
        assert_eq!(interval_ns(-TIME_LIMIT_NS - 1, 2), Err(OutOfRange));
        assert_eq!(interval_ns(0, -1), Err(OutOfRange));
        // Any two model times differ by a representable amount.
        assert_eq!(span_ns(-TIME_LIMIT_NS, TIME_LIMIT_NS), Ok(i64::MAX - 1));
    }

    #[test]
    fn sums_and_totals() {
        assert_eq!(sum([1, 2, 3]), Ok(6));
        assert_eq!(sum([i64::MAX, 1]), Err(OutOfRange));
        assert_eq!(
            sum([i64::MAX, 1, -5]),
            Err(OutOfRange),
            "no wrap-around and back"
        );
        let mut t = Total::default();
        t.add(i64::MAX).unwrap();
        assert_eq!(t.add(1), Err(OutOfRange));
        assert_eq!(t.add(-1), Err(OutOfRange), "sticky after an overflow");
        assert_eq!(t.get(), Err(OutOfRange));
        assert_eq!(mul(i64::MAX / 2, 3), Err(OutOfRange));
        assert_eq!(sub(i64::MIN, 1), Err(OutOfRange));
        assert_eq!(add(-3, 1), Ok(-2));
    }

    #[test]
    fn tally_keeps_the_first_positions() {
        let mut t = Tally::default();
        assert!(t.is_empty());
        for at in [10, 20, 30, 40, 50, 60] {
            t.record(at);
        }
        assert_eq!(t.count, 6);
        assert_eq!(t.describe(), "6 (first at 10, 20, 30, 40, 50, …)");
    }
}
