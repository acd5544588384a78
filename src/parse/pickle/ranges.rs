//! Range checks where pickle integers enter the snapshot model ("Arithmetic on input
//! values"; helper: [`crate::base::arith`]).
//!
//! Python integers are unbounded; the model keeps sizes as `u64`, times and streams as `i64`,
//! and the analysis sums sizes into `i64` curves, live sets and totals. Rather than checking
//! every sum downstream, each value is checked **once, here**:
//!
//! * **Sizes** (entry `size`, segment and block sizes): all the sizes one snapshot keeps add up
//!   to at most [`MAX_TOTAL_BYTES`] = 2^60 bytes (1 EiB). Every analysis quantity (a curve
//!   level, a live set, a prominence, a fragmentation figure) is a signed sum of kept sizes, each
//!   counted at most twice, so it stays below 2^61 and no analysis sum can leave `i64`. Real
//!   snapshots stay many orders of magnitude below (1.5 M entries × 100 MB ≈ 2^47). A trace
//!   entry whose size would take the total past the bound is skipped as a bad entry; a segment
//!   (with its blocks) likewise.
//! * **Times** (`time_us`): within ±[`MAX_TIME_US`] = 2^61 µs (73,000 years around 1970), so a
//!   difference of two times fits in `i64`. A time outside is dropped (the entry is kept without
//!   a time) and counted.
//! * **Streams**: a handle in `[2^63, 2^64)` is a C pointer or `-1` written as unsigned (a 9-byte
//!   `LONG1`); it is kept as its 64-bit pattern (2^64 − 1 → −1), distinct from stream 0, and
//!   counted. A stream that is not a 64-bit integer becomes stream 0, counted.
//!
//! Every dropped or altered value ends in one located problem (`SNAP-RANGE`).

use crate::base::arith::{self, Tally};

/// Bound of the sum of all sizes one snapshot keeps (bytes): 2^60.
pub const MAX_TOTAL_BYTES: i64 = 1 << 60;
/// Bound of `|time_us|` (µs since the Unix epoch): 2^61.
pub const MAX_TIME_US: i64 = 1 << 61;

/// A `stream` value as it enters the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stream {
    /// A signed 64-bit handle (the usual case; also the default 0 of old eras).
    Ok(i64),
    /// An unsigned handle ≥ 2^63, kept as its bit pattern.
    Unsigned(u64),
    /// Not a 64-bit integer.
    Unusable,
}

impl Stream {
    /// Classifies an integer field value (`None`: not an integer or wider than 16 bytes).
    pub fn of(v: Option<i128>) -> Stream {
        match v {
            Some(i) => match (i64::try_from(i), u64::try_from(i)) {
                (Ok(s), _) => Stream::Ok(s),
                (_, Ok(u)) => Stream::Unsigned(u),
                _ => Stream::Unusable,
            },
            None => Stream::Unusable,
        }
    }
    /// The handle kept in the model.
    pub fn handle(self) -> i64 {
        match self {
            Stream::Ok(s) => s,
            Stream::Unsigned(u) => u as i64,
            Stream::Unusable => 0,
        }
    }
}

/// The running checks of one file: the byte budget and the tallies of altered values.
#[derive(Debug, Default)]
pub(super) struct Ranges {
    kept_bytes: i64,
    /// Times outside ±2^61 µs or not integers (byte offsets), the first value.
    pub times: (Tally, Option<i128>),
    /// Unsigned stream handles (byte offsets), the first value.
    pub unsigned_streams: (Tally, u64),
    /// Streams that are not 64-bit integers (byte offsets).
    pub unusable_streams: Tally,
}

impl Ranges {
    /// Admits sizes that are kept together (one entry, one segment with its blocks): `Err` names
    /// the size that does not fit and nothing is added.
    pub fn admit(&mut self, sizes: &[u64]) -> Result<(), String> {
        let mut total = self.kept_bytes;
        for &s in sizes {
            let fits = i64::try_from(s)
                .ok()
                .and_then(|s| arith::add(total, s).ok())
                .filter(|t| *t <= MAX_TOTAL_BYTES);
            match fits {
                Some(t) => total = t,
                None => {
                    return Err(format!(
                        "size {s} would take the bytes kept from this file past 2^60 \
                         (1 EiB, far beyond any device): not a real size"
                    ))
                }
            }
        }
        self.kept_bytes = total;
        Ok(())
    }

    /// A `time_us` value entering the model (`None`: not an integer): `None` (and counted at
    /// byte `at`) when outside ±[`MAX_TIME_US`] or not an integer.
    pub fn time(&mut self, v: Option<i128>, at: u64) -> Option<i64> {
        if let Some(t) = v.filter(|t| t.unsigned_abs() <= MAX_TIME_US as u128) {
            return Some(t as i64);
        }
        if self.times.0.is_empty() {
            self.times.1 = v;
        }
        self.times.0.record(at);
        None
    }

    /// A `stream` value entering the model (counted at byte `at` when altered).
    pub fn stream(&mut self, s: Stream, at: u64) -> i64 {
        match s {
            Stream::Ok(_) => {}
            Stream::Unsigned(u) => {
                if self.unsigned_streams.0.is_empty() {
                    self.unsigned_streams.1 = u;
                }
                self.unsigned_streams.0.record(at);
            }
            Stream::Unusable => self.unusable_streams.record(at),
        }
        s.handle()
    }

    /// The problem messages of the altered values (empty when nothing was altered).
    pub fn messages(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.times.0.is_empty() {
            let first = self
                .times
                .1
                .map_or("not an integer".to_string(), |v| v.to_string());
            out.push(format!(
                "{} `time_us` values lie outside ±2^61 µs or are not integers (first value {first}); \
                 those entries are kept without a time — byte offsets: {}",
                self.times.0.count,
                self.times.0.describe()
            ));
        }
        if !self.unsigned_streams.0.is_empty() {
            let u = self.unsigned_streams.1;
            out.push(format!(
                "{} `stream` values are 2^63 or more (first value {u}, a handle written as unsigned); \
                 each is kept as its 64-bit pattern (shown as stream {}), distinct from stream 0 — \
                 byte offsets: {}",
                self.unsigned_streams.0.count,
                u as i64,
                self.unsigned_streams.0.describe()
            ));
        }
        if !self.unusable_streams.is_empty() {
            out.push(format!(
                "{} `stream` values are not 64-bit integers; those entries are counted on stream 0 \
                 — byte offsets: {}",
                self.unusable_streams.count,
                self.unusable_streams.describe()
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_budget_admits_all_or_nothing() {
        let mut r = Ranges::default();
        assert!(r.admit(&[1 << 59, 1 << 58]).is_ok());
        let e = r.admit(&[1 << 57, 1 << 58]).unwrap_err();
        assert!(e.contains("size 288230376151711744"), "{e}");
        assert!(
            r.admit(&[1 << 57]).is_ok(),
            "the failed admit added nothing"
        );
        assert!(r.admit(&[u64::MAX]).is_err());
        assert!(r.admit(&[(1 << 57) + 1]).is_err());
        assert!(r.admit(&[1 << 57]).is_ok(), "exactly 2^60 fits");
    }

    #[test]
    fn streams_keep_unsigned_handles_distinct() {
        let mut r = Ranges::default();
        assert_eq!(r.stream(Stream::of(Some(7)), 1), 7);
        let h = r.stream(Stream::of(Some(u64::MAX as i128)), 40);
        assert_eq!(h, -1);
        assert_ne!(h, 0);
        assert_eq!(r.stream(Stream::of(Some(1i128 << 64)), 50), 0);
        assert_eq!(r.stream(Stream::of(None), 60), 0);
        let m = r.messages();
        assert_eq!(m.len(), 2);
        assert!(
            m[0].starts_with(
                "1 `stream` values are 2^63 or more (first value 18446744073709551615"
            ),
            "{}",
            m[0]
        );
        assert!(m[0].contains("shown as stream -1"), "{}", m[0]);
        assert!(m[1].contains("2 (first at 50, 60)"), "{}", m[1]);
    }

    #[test]
    fn times_beyond_2_61_us_are_dropped_and_counted() {
        let mut r = Ranges::default();
        let t = 1_700_000_000_000_000;
        assert_eq!(r.time(Some(t), 1), Some(t as i64));
        assert_eq!(r.time(Some(-(1 << 61)), 2), Some(-(1 << 61)));
        assert_eq!(r.time(Some(i64::MAX as i128), 3), None);
        assert_eq!(r.time(Some(i64::MIN as i128), 4), None);
        assert_eq!(r.time(None, 5), None);
        let m = r.messages();
        assert_eq!(
            m,
            [
                "3 `time_us` values lie outside ±2^61 µs or are not integers (first value \
              9223372036854775807); those entries are kept without a time — byte offsets: 3 \
              (first at 3, 4, 5)"
            ]
        );
    }
}
