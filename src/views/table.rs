//! Row orders of big tables (1M rows, virtualised tables). The worker keeps the
//! table; for each (sort, filter) the UI asks for it computes one permutation of row ids,
//! caches it, and serves pages from it. The UI only ever holds one page.

use std::cmp::Ordering;

/// Row ids passing `keep`, ordered by `cmp` (stable: ties keep row-id order), or in row-id
/// order when `cmp` is `None`. With `descending` the comparison is reversed; ties still keep
/// ascending row-id order, so paging is deterministic.
///
/// Cost: O(n) for the filter, O(k log k) for the sort of the k kept rows.
pub fn order_rows(
    n: usize,
    keep: impl Fn(u32) -> bool,
    cmp: Option<&dyn Fn(u32, u32) -> Ordering>,
    descending: bool,
) -> Vec<u32> {
    let n = u32::try_from(n).unwrap_or(u32::MAX);
    let mut ids: Vec<u32> = (0..n).filter(|&i| keep(i)).collect();
    if let Some(cmp) = cmp {
        if descending {
            ids.sort_by(|&a, &b| cmp(b, a));
        } else {
            ids.sort_by(|&a, &b| cmp(a, b));
        }
    }
    ids
}

/// Total order on `f64` for sorting columns: NaN last, `-0.0 == 0.0`.
pub fn cmp_f64(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// An `i64` key whose ascending order is `cmp_f64(b, a)`'s (largest first, NaN before every
/// number, `-0.0 == 0.0`): for the keyed sorts of `base::sort`.
pub fn desc_f64_key(x: f64) -> i64 {
    if x.is_nan() {
        i64::MIN
    } else {
        // `!` reverses the order; no number's key is `i64::MAX`, so none becomes `i64::MIN`.
        !crate::base::sort::f64_key(if x == 0.0 { 0.0 } else { x })
    }
}

/// Case-insensitive (ASCII) substring test; `needle_lower` must already be lowercase.
/// An empty needle matches everything.
pub fn contains_ci(haystack: &str, needle_lower: &str) -> bool {
    if needle_lower.is_empty() {
        return true;
    }
    let h = haystack.as_bytes();
    let nd = needle_lower.as_bytes();
    if nd.len() > h.len() {
        return false;
    }
    h.windows(nd.len())
        .any(|w| w.iter().zip(nd).all(|(a, b)| a.to_ascii_lowercase() == *b))
}

/// The rows `[offset, offset + limit)` of `order` (clamped).
pub fn page(order: &[u32], offset: u32, limit: u32) -> &[u32] {
    let start = (offset as usize).min(order.len());
    let end = start.saturating_add(limit as usize).min(order.len());
    &order[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn desc_f64_key_orders_as_cmp_f64_reversed() {
        let xs = crate::base::sort::tests::AWKWARD_F64;
        for a in xs {
            for b in xs {
                assert_eq!(
                    desc_f64_key(a).cmp(&desc_f64_key(b)),
                    cmp_f64(b, a),
                    "{a} {b}"
                );
            }
        }
    }

    #[test]
    fn sorts_stably_both_ways_and_filters() {
        let sizes = [3.0, 1.0, 3.0, f64::NAN, 2.0];
        let cmp = |a: u32, b: u32| cmp_f64(sizes[a as usize], sizes[b as usize]);
        let asc = order_rows(5, |_| true, Some(&cmp), false);
        assert_eq!(asc, vec![1, 4, 0, 2, 3]);
        let desc = order_rows(5, |_| true, Some(&cmp), true);
        // Ties (rows 0 and 2) keep ascending row order; NaN sorts last ascending, first descending.
        assert_eq!(desc, vec![3, 0, 2, 4, 1]);
        let kept = order_rows(5, |i| sizes[i as usize] >= 2.0, None, false);
        assert_eq!(kept, vec![0, 2, 4]);
    }

    #[test]
    fn substring_is_case_insensitive() {
        assert!(contains_ci("/home/u/main.py(354): train", "main.py(354)"));
        assert!(contains_ci("aten::Empty_Strided", "empty_strided"));
        assert!(!contains_ci("aten::mm", "aten::mul"));
        assert!(contains_ci("x", ""));
    }

    #[test]
    fn pages_are_clamped() {
        let order: Vec<u32> = (0..10).collect();
        assert_eq!(page(&order, 8, 5), &[8, 9]);
        assert_eq!(page(&order, 20, 5), &[] as &[u32]);
        assert_eq!(page(&order, 0, 3), &[0, 1, 2]);
    }

    #[test]
    fn a_million_rows_sort_and_filter() {
        let n = 1_000_000usize;
        let key: Vec<f64> = (0..n).map(|i| ((i * 7919) % n) as f64).collect();
        let cmp = |a: u32, b: u32| cmp_f64(key[a as usize], key[b as usize]);
        let order = order_rows(n, |i| i % 2 == 0, Some(&cmp), true);
        assert_eq!(order.len(), n / 2);
        assert!(order
            .windows(2)
            .all(|w| key[w[0] as usize] >= key[w[1] as usize]));
    }
}
