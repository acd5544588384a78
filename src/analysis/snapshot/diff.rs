//! Comparing two snapshots (issue 13 "Compare", snapshots): the same quantity on side A and
//! side B, keyed by a label both sides share (a site written as the snapshot report writes it,
//! `function @ file:line`), summed per key, with the delta.
//!
//! Pure: the caller (the diff report) turns each side's contributors into `(key, bytes)`
//! pairs; this module only matches them. Keys present on one side only are `new` (B only) or
//! `gone` (A only). Sizes are bytes; every input size is below 2^60 (the decoder's range check,
//! torch-snapshot.md SNAP-RANGE), so deltas fit in `i64`.

use std::collections::BTreeMap;

/// One key on both sides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delta<K> {
    /// The shared label.
    pub key: K,
    /// Bytes on side A (0 when absent).
    pub a_bytes: u64,
    /// Bytes on side B (0 when absent).
    pub b_bytes: u64,
    /// Present on side A.
    pub in_a: bool,
    /// Present on side B.
    pub in_b: bool,
}

/// How a key changed from A to B.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Only on side B.
    New,
    /// Only on side A.
    Gone,
    /// On both sides, other bytes.
    Changed,
    /// On both sides, the same bytes.
    Same,
}

impl Change {
    /// Snake-case name (JSON `change`).
    pub fn name(self) -> &'static str {
        match self {
            Change::New => "new",
            Change::Gone => "gone",
            Change::Changed => "changed",
            Change::Same => "same",
        }
    }
}

impl<K> Delta<K> {
    /// `b_bytes − a_bytes`.
    pub fn delta_bytes(&self) -> i64 {
        pair_delta(self.a_bytes, self.b_bytes)
    }
    /// How the key changed.
    pub fn change(&self) -> Change {
        match (self.in_a, self.in_b) {
            (false, true) => Change::New,
            (true, false) => Change::Gone,
            _ if self.a_bytes == self.b_bytes => Change::Same,
            _ => Change::Changed,
        }
    }
}

/// `b − a` of two byte counts (each below 2^63; saturates otherwise).
pub fn pair_delta(a: u64, b: u64) -> i64 {
    let d = i128::from(b) - i128::from(a);
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

/// Sums `a` and `b` per key and matches them: one [`Delta`] per key of either side, sorted by
/// the size of the change (|delta| descending), then by the larger side, then by key, so the
/// order never depends on the input order.
pub fn by_key<K: Ord + Clone>(
    a: impl IntoIterator<Item = (K, u64)>,
    b: impl IntoIterator<Item = (K, u64)>,
) -> Vec<Delta<K>> {
    let mut m: BTreeMap<K, Delta<K>> = BTreeMap::new();
    for (side, items) in [
        (0, a.into_iter().collect::<Vec<_>>()),
        (1, b.into_iter().collect()),
    ] {
        for (k, bytes) in items {
            let d = m.entry(k.clone()).or_insert(Delta {
                key: k,
                a_bytes: 0,
                b_bytes: 0,
                in_a: false,
                in_b: false,
            });
            if side == 0 {
                d.a_bytes = d.a_bytes.saturating_add(bytes);
                d.in_a = true;
            } else {
                d.b_bytes = d.b_bytes.saturating_add(bytes);
                d.in_b = true;
            }
        }
    }
    let mut out: Vec<Delta<K>> = m.into_values().collect();
    out.sort_by(|x, y| {
        y.delta_bytes()
            .unsigned_abs()
            .cmp(&x.delta_bytes().unsigned_abs())
            .then(y.a_bytes.max(y.b_bytes).cmp(&x.a_bytes.max(x.b_bytes)))
            .then(x.key.cmp(&y.key))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_summed_matched_and_ordered_by_change() {
        let a = [("f", 10), ("g", 5), ("f", 2), ("gone", 7), ("same", 3)];
        let b = [("f", 20), ("g", 5), ("new", 1), ("same", 3)];
        let d = by_key(a, b);
        let got: Vec<_> = d
            .iter()
            .map(|x| {
                (
                    x.key,
                    x.a_bytes,
                    x.b_bytes,
                    x.delta_bytes(),
                    x.change().name(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("f", 12, 20, 8, "changed"),
                ("gone", 7, 0, -7, "gone"),
                ("new", 0, 1, 1, "new"),
                ("g", 5, 5, 0, "same"),
                ("same", 3, 3, 0, "same"),
            ]
        );
    }

    #[test]
    fn deltas_saturate_instead_of_wrapping() {
        assert_eq!(pair_delta(0, u64::MAX), i64::MAX);
        assert_eq!(pair_delta(u64::MAX, 0), i64::MIN);
        assert_eq!(pair_delta(5, 3), -2);
    }
}
