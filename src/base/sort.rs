//! One stable sort shared by the crate's many small sorts (the wasm size).
//!
//! Every `slice::sort_by` / `sort_by_key` / `sort` call site instantiates the standard
//! library's stable sort (driftsort: quicksort, merge and small-sort networks, 3–10 KB of wasm
//! each) for its own element type *and* comparator closure: 107 of them were 0.70 MB of the
//! 2.8 MB worker. The functions here sort a permutation of indices with the comparator behind
//! `dyn`, so all of their callers share one instantiation; the elements are then moved into
//! place by a cycle walk of swaps (a few dozen bytes per element type).
//!
//! The result is exactly `slice::sort_by`'s: a stable sort (elements equal under the
//! comparator keep their order; anomaly.md §0.4 relies on it). The price is an indirect call
//! per comparison and `size_of::<usize>()` bytes of scratch per element, so everything sorted
//! once per step, group, rank or report uses these. A hot sort (events, kernels, blocks) by one
//! or two integers (or an `f64` through [`f64_key`]) uses [`sort_by_i64_key`] /
//! [`sort_by_i64_pair`]: no indirect call, and all of them share two instantiations of the
//! standard sort; the other hot sorts keep the standard library's sort.

use std::cmp::Ordering;

/// Sorts `v` stably by `cmp` — the same order as `v.sort_by(cmp)`.
pub fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let perm = stable_order(v.len(), &mut |a, b| cmp(&v[a], &v[b]));
    permute(perm, &mut |a, b| v.swap(a, b));
}

/// Sorts `v` stably by the key `key` gives each element — the same order as
/// `v.sort_by_key(key)` (the key is computed for each comparison, as there).
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `v` stably in ascending order — the same order as `v.sort()`.
pub fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// Sorts `v` stably by an `i64` key computed once per element — the same order as
/// `v.sort_by_key(|&x| key(x))`. The keys and positions are sorted as `(key, position)` pairs,
/// all call sites sharing the one instantiation of the standard sort of `(i64, u32)`; the
/// position breaks ties, which is what makes it stable. For the hot sorts of `Copy` items
/// (indices, mostly) by a number: no indirect call per comparison, the key read once per item
/// (not twice per comparison), 16 bytes of scratch per item. `f64` keys go through [`f64_key`].
pub fn sort_by_i64_key<T: Copy>(v: &mut [T], mut key: impl FnMut(T) -> i64) {
    if v.len() < 2 {
        return;
    }
    if u32::try_from(v.len()).is_err() {
        return sort_by_key(v, |&x| key(x));
    }
    let mut keyed: Vec<(i64, u32)> = v
        .iter()
        .enumerate()
        .map(|(i, &x)| (key(x), i as u32))
        .collect();
    sort_i64_pairs(&mut keyed);
    place(v, keyed.iter().map(|k| k.1 as usize));
}

/// [`sort_by_i64_key`] with a key of two `i64` (compared first by the first): the same order as
/// `v.sort_by_key(|&x| key(x))`, through the one sort of `(i64, i64, u32)`.
pub fn sort_by_i64_pair<T: Copy>(v: &mut [T], mut key: impl FnMut(T) -> (i64, i64)) {
    if v.len() < 2 {
        return;
    }
    if u32::try_from(v.len()).is_err() {
        return sort_by_key(v, |&x| key(x));
    }
    let mut keyed: Vec<(i64, i64, u32)> = v
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let (a, b) = key(x);
            (a, b, i as u32)
        })
        .collect();
    sort_i64_triples(&mut keyed);
    place(v, keyed.iter().map(|k| k.2 as usize));
}

/// Puts the item that was at position `from[i]` at position `i`, for the first
/// `min(v.len(), from's length)` positions (the keyed sorts' last step, a table's columns moved
/// into a sorted order). Holds one copy of `v` while it moves; `from` must name positions of `v`
/// (an out-of-range position panics: a caller's bug, never an input's).
pub fn place<T: Copy>(v: &mut [T], from: impl Iterator<Item = usize>) {
    if v.is_empty() {
        return;
    }
    let old = v.to_vec();
    for (d, p) in v.iter_mut().zip(from) {
        *d = old[p];
    }
}

/// An `i64` whose order is `f64::total_cmp`'s: `f64_key(a).cmp(&f64_key(b)) ==
/// a.total_cmp(&b)` for every `a`, `b` (the transform `total_cmp` itself applies).
pub fn f64_key(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    b ^ (((b >> 63) as u64) >> 1) as i64
}

/// An `i64` whose order is `u64`'s: `u64_key(a).cmp(&u64_key(b)) == a.cmp(&b)` (the top bit
/// flipped); `!u64_key(x)` orders largest first.
pub fn u64_key(x: u64) -> i64 {
    (x ^ (1 << 63)) as i64
}

/// The one instantiation of the standard sort behind [`sort_by_i64_key`] (items distinct:
/// the unstable sort gives the one order).
#[inline(never)]
fn sort_i64_pairs(v: &mut [(i64, u32)]) {
    v.sort_unstable();
}

/// The one instantiation behind [`sort_by_i64_pair`].
#[inline(never)]
fn sort_i64_triples(v: &mut [(i64, i64, u32)]) {
    v.sort_unstable();
}

/// The stable order of `n` items under `cmp` (which compares items by index): `order[i]` is the
/// index of the item that goes to position `i`. The one instantiation of the standard sort.
#[inline(never)]
fn stable_order(n: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

/// Applies `order` (from `stable_order`) through `swap`: position `i` receives the item that
/// was at `order[i]`. Each cycle of the permutation is walked once (`order[j] = j` marks a
/// position done), so at most `n − 1` swaps.
#[inline(never)]
fn permute(mut order: Vec<usize>, swap: &mut dyn FnMut(usize, usize)) {
    for i in 0..order.len() {
        if order[i] == i {
            continue;
        }
        let mut j = i;
        loop {
            let k = order[j];
            order[j] = j;
            if k == i {
                break;
            }
            swap(j, k);
            j = k;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{f64_key, sort, sort_by, sort_by_i64_key, sort_by_i64_pair, sort_by_key, u64_key};

    /// Xorshift: deterministic inputs with many ties (so stability is exercised).
    fn inputs() -> Vec<Vec<(u8, u32)>> {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut out = vec![
            vec![],
            vec![(1, 0)],
            vec![(2, 0), (1, 1)],
            vec![(1, 0), (1, 1)],
        ];
        for len in [3usize, 7, 20, 21, 64, 333, 1000, 4097] {
            for keys in [2u64, 17, 1 << 20] {
                out.push(
                    (0..len)
                        .map(|i| ((next() % keys) as u8, i as u32))
                        .collect(),
                );
            }
        }
        // Already sorted, reversed, all equal.
        out.push((0..500).map(|i| ((i / 3) as u8, i)).collect());
        out.push((0..500).rev().map(|i| ((i / 3) as u8, i)).collect());
        out.push((0..500).map(|i| (7, i)).collect());
        out
    }

    #[test]
    fn equals_the_standard_stable_sort_on_every_input() {
        let by_key_desc = |a: &(u8, u32), b: &(u8, u32)| b.0.cmp(&a.0);
        for v in inputs() {
            let mut std_sorted = v.clone();
            std_sorted.sort_by(by_key_desc);
            let mut ours = v.clone();
            sort_by(&mut ours, by_key_desc);
            assert_eq!(ours, std_sorted, "sort_by, len {}", v.len());

            let mut std_sorted = v.clone();
            std_sorted.sort_by_key(|e| e.0);
            let mut ours = v.clone();
            sort_by_key(&mut ours, |e| e.0);
            assert_eq!(ours, std_sorted, "sort_by_key, len {}", v.len());

            let mut std_sorted = v.clone();
            std_sorted.sort();
            let mut ours = v.clone();
            sort(&mut ours);
            assert_eq!(ours, std_sorted, "sort, len {}", v.len());
        }
    }

    #[test]
    fn moves_elements_that_are_not_copy() {
        let mut v: Vec<String> = ["pear", "fig", "apple", "fig", "kiwi"]
            .map(String::from)
            .to_vec();
        sort_by(&mut v, |a, b| a.len().cmp(&b.len()));
        assert_eq!(v, ["fig", "fig", "pear", "kiwi", "apple"]);
    }

    #[test]
    fn keyed_sorts_equal_the_standard_stable_sort() {
        for v in inputs() {
            let mut std_sorted = v.clone();
            std_sorted.sort_by_key(|e| e.0);
            let mut ours = v.clone();
            sort_by_i64_key(&mut ours, |e| e.0 as i64);
            assert_eq!(ours, std_sorted, "sort_by_i64_key, len {}", v.len());

            let mut std_sorted = v.clone();
            std_sorted.sort_by_key(|e| (e.0 % 3, u8::MAX - e.0));
            let mut ours = v.clone();
            sort_by_i64_pair(&mut ours, |e| ((e.0 % 3) as i64, (u8::MAX - e.0) as i64));
            assert_eq!(ours, std_sorted, "sort_by_i64_pair, len {}", v.len());
        }
    }

    #[test]
    fn u64_key_orders_as_u64() {
        let xs = [
            0,
            1,
            2,
            1 << 62,
            (1 << 63) - 1,
            1 << 63,
            (1 << 63) + 1,
            u64::MAX - 1,
            u64::MAX,
        ];
        for a in xs {
            for b in xs {
                assert_eq!(u64_key(a).cmp(&u64_key(b)), a.cmp(&b), "{a} {b}");
                assert_eq!((!u64_key(a)).cmp(&!u64_key(b)), b.cmp(&a), "{a} {b}");
            }
        }
    }

    /// Floats whose order is easy to get wrong: ±0, ±∞, NaNs of both signs, subnormals, the
    /// extremes (also the keyed table sorts' tests).
    pub(crate) const AWKWARD_F64: [f64; 15] = [
        f64::NEG_INFINITY,
        -1e300,
        -1.5,
        -0.0,
        0.0,
        5e-324,
        1.0,
        2.5,
        f64::INFINITY,
        f64::NAN,
        -f64::NAN,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
    ];

    #[test]
    fn f64_key_orders_as_total_cmp() {
        let xs = AWKWARD_F64;
        for a in xs {
            for b in xs {
                assert_eq!(f64_key(a).cmp(&f64_key(b)), a.total_cmp(&b), "{a} {b}");
            }
        }
    }
}
