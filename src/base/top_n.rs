//! The first `n` items of a slice under a total order, without sorting the whole slice (the
//! top gaps of anomaly.md §5.6, the top kernels of a structure, §4.4).

use std::cmp::Ordering;

/// The first `n` of `v` under `order` (a total order: items equal under it must be equal, so
/// the result does not depend on the unstable selection), in that order. A selection of the
/// `n` (O(len)), then a sort of those only (O(n log n)).
pub fn top_n_by<T: Clone>(v: &[T], n: usize, mut order: impl FnMut(&T, &T) -> Ordering) -> Vec<T> {
    let mut top = v.to_vec();
    if n < top.len() {
        if n == 0 {
            return Vec::new();
        }
        top.select_nth_unstable_by(n - 1, &mut order);
        top.truncate(n);
        // The copy of the whole slice is not kept: the result holds its `n` items only.
        top.shrink_to_fit();
    }
    top.sort_unstable_by(&mut order);
    top
}

#[cfg(test)]
mod tests {
    use super::top_n_by;

    #[test]
    fn equals_a_full_sort_truncated() {
        let v: Vec<(u32, u32)> = (0..500u32).map(|i| ((i * 7919) % 97, i)).collect();
        let order = |a: &(u32, u32), b: &(u32, u32)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
        for n in [0, 1, 5, 96, 97, 499, 500, 600] {
            let mut full = v.clone();
            full.sort_by(order);
            full.truncate(n);
            assert_eq!(top_n_by(&v, n, order), full, "n = {n}");
        }
    }
}
