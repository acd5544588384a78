//! The one matching rule of every comparison: the same quantity on side A
//! and side B, keyed by a label both sides share (a snapshot site `function @ file:line`, an
//! op or kernel name, a user frame, a bubble label), summed per key, with the delta.
//!
//! Pure: callers turn each side into `(key, quantity)` pairs; this module only sums and matches
//! them. Keys present on one side only are `new` (B only) or `gone` (A only). Rows are ordered
//! by the size of the change (|B − A| descending), then by the larger side, then by key, so the
//! order never depends on the input order.

use std::cmp::Ordering;
use std::collections::BTreeMap;

/// A quantity compared between sides: bytes (`u64`), KiB (`f64`), or an op's
/// `(count, time)` ([`super::ops::OpTotal`]).
pub trait Quantity: Copy + Default + PartialEq {
    /// `self + o` (saturating for integers).
    fn plus(self, o: Self) -> Self;
    /// The size of the change from `a` to `b` (any unit that orders like `|b − a|`).
    fn change_size(a: Self, b: Self) -> Self;
    /// Total order of sizes (larger is `Greater`).
    fn size_cmp(&self, o: &Self) -> Ordering;
}

impl Quantity for u64 {
    fn plus(self, o: Self) -> Self {
        self.saturating_add(o)
    }
    fn change_size(a: Self, b: Self) -> Self {
        a.abs_diff(b)
    }
    fn size_cmp(&self, o: &Self) -> Ordering {
        self.cmp(o)
    }
}

impl Quantity for f64 {
    fn plus(self, o: Self) -> Self {
        self + o
    }
    fn change_size(a: Self, b: Self) -> Self {
        (b - a).abs()
    }
    fn size_cmp(&self, o: &Self) -> Ordering {
        self.total_cmp(o)
    }
}

/// One key on both sides.
#[derive(Clone, Debug, PartialEq)]
pub struct Delta<K, V = u64> {
    /// The shared label.
    pub key: K,
    /// Side A's sum (`V::default()` when absent).
    pub a: V,
    /// Side B's sum.
    pub b: V,
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
    /// On both sides, another quantity.
    Changed,
    /// On both sides, the same quantity.
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

impl<K, V: Quantity> Delta<K, V> {
    /// How the key changed.
    pub fn change(&self) -> Change {
        match (self.in_a, self.in_b) {
            (false, true) => Change::New,
            (true, false) => Change::Gone,
            _ if self.a == self.b => Change::Same,
            _ => Change::Changed,
        }
    }
}

impl<K> Delta<K, u64> {
    /// `b − a` in bytes.
    pub fn delta_bytes(&self) -> i64 {
        pair_delta(self.a, self.b)
    }
}

/// `b − a` of two counts (each below 2^63; saturates otherwise).
pub fn pair_delta(a: u64, b: u64) -> i64 {
    let d = i128::from(b) - i128::from(a);
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

/// Sums `a` and `b` per key and matches them: one [`Delta`] per key of either side, in the
/// order of the module doc.
pub fn by_key<K: Ord + Clone, V: Quantity>(
    a: impl IntoIterator<Item = (K, V)>,
    b: impl IntoIterator<Item = (K, V)>,
) -> Vec<Delta<K, V>> {
    let mut m: BTreeMap<K, Delta<K, V>> = BTreeMap::new();
    let mut add = |k: K, v: V, side_b: bool| {
        let d = m.entry(k.clone()).or_insert(Delta {
            key: k,
            a: V::default(),
            b: V::default(),
            in_a: false,
            in_b: false,
        });
        if side_b {
            d.b = d.b.plus(v);
            d.in_b = true;
        } else {
            d.a = d.a.plus(v);
            d.in_a = true;
        }
    };
    for (k, v) in a {
        add(k, v, false);
    }
    for (k, v) in b {
        add(k, v, true);
    }
    let mut out: Vec<Delta<K, V>> = m.into_values().collect();
    let larger = |d: &Delta<K, V>| {
        if d.a.size_cmp(&d.b) == Ordering::Less {
            d.b
        } else {
            d.a
        }
    };
    crate::base::sort::sort_by(&mut out, |x, y| {
        V::change_size(y.a, y.b)
            .size_cmp(&V::change_size(x.a, x.b))
            .then(larger(y).size_cmp(&larger(x)))
            .then(x.key.cmp(&y.key))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_summed_matched_and_ordered_by_change() {
        let a = [("f", 10u64), ("g", 5), ("f", 2), ("gone", 7), ("same", 3)];
        let b = [("f", 20u64), ("g", 5), ("new", 1), ("same", 3)];
        let d = by_key(a, b);
        let got: Vec<_> = d
            .iter()
            .map(|x| (x.key, x.a, x.b, x.delta_bytes(), x.change().name()))
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
    fn float_quantities_order_by_the_size_of_the_change() {
        let d = by_key([("x", 1.5f64), ("y", 4.0)], [("x", 0.25f64), ("z", 2.0)]);
        let got: Vec<_> = d.iter().map(|x| (x.key, x.a, x.b, x.change())).collect();
        assert_eq!(
            got,
            [
                ("y", 4.0, 0.0, Change::Gone),
                ("z", 0.0, 2.0, Change::New),
                ("x", 1.5, 0.25, Change::Changed),
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
