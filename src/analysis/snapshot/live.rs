//! Live sets at many entry indices in one pass (torch-snapshot.md §7.6).
//!
//! A record is live after entry `p` iff `start ≤ p < end` under the chosen
//! semantics. Instead of replaying from zero per query, every record is placed
//! into the sorted query points it covers by two binary searches:
//! O(R log K + Σ|live|) for R records and K points.

use super::lifetimes::{Lifetimes, Semantics};
use crate::base::sort::sort_by_i64_key;

/// The live records (record ids, ascending) after each entry index of `points`
/// (any order; the result is parallel to `points`).
pub fn live_sets(lt: &Lifetimes, points: &[usize], sem: Semantics) -> Vec<Vec<u32>> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    sort_by_i64_key(&mut order, |i| points[i] as i64);
    let sorted: Vec<i64> = order.iter().map(|&i| points[i] as i64).collect();
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); points.len()];
    for r in 0..lt.len() {
        let (s, e) = (lt.start(r), lt.end(r, sem));
        if e <= s {
            continue;
        }
        let a = sorted.partition_point(|&p| p < s);
        let b = sorted.partition_point(|&p| p < e);
        for k in a..b {
            out[order[k]].push(r as u32);
        }
    }
    out
}

/// Sum of the requested sizes of `records`, bytes.
pub fn bytes_of(lt: &Lifetimes, records: &[u32]) -> u64 {
    records.iter().map(|&r| lt.size[r as usize]).sum()
}
