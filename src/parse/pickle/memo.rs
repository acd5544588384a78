//! The pickle memo: memory proportional to the entries stored, never to their indices
//! (torch-snapshot.md §2.3).
//!
//! CPython's picklers number memo entries 0, 1, 2, … so real files fill the memo densely.
//! `BINPUT`/`LONG_BINPUT` take any `u32` index, though: a 1 KB file whose indices jump by a
//! million at each step made a plain `Vec` memo reach gigabytes. Here indices that keep the
//! dense part at least half full go into a `Vec`; any other index goes into a hash map. So the
//! memo holds at most `2 × entries + 64` dense slots plus one map entry per sparse index.

use rustc_hash::FxHashMap as HashMap;

use super::vm::Val;

/// Dense slots allowed beyond twice the number of stored entries (small files, index 0..63).
const DENSE_SLACK: usize = 64;

/// Memo of VM handles keyed by memo index.
#[derive(Debug, Default)]
pub(super) struct Memo {
    dense: Vec<Val>,
    sparse: HashMap<u32, Val>,
    /// Entries stored (distinct indices ever written) — CPython's `len(memo)`.
    entries: usize,
}

/// File bytes per dense memo slot reserved up front ([`Memo::for_file`]): a snapshot
/// memoizes every trace entry dict, one every ≈ 75 bytes in generated and real files.
const BYTES_PER_SLOT: u64 = 64;

/// Most dense slots reserved up front (16 Mi, 256–384 MB of handles).
const MAX_RESERVED: u64 = 1 << 24;

impl Memo {
    /// A memo for a pickle of `total` bytes: room for one dense slot per [`BYTES_PER_SLOT`]
    /// bytes, reserved once, so the memo of a large snapshot does not grow by doubling (each
    /// step a copy of every slot, and both copies alive at once).
    pub fn for_file(total: u64) -> Self {
        let n = (total / BYTES_PER_SLOT).min(MAX_RESERVED) as usize;
        let mut memo = Memo::default();
        // An estimate: room the allocator refuses is left to growth.
        let _ = memo.dense.try_reserve(n);
        memo
    }

    /// Number of distinct indices stored (the index `MEMOIZE` writes next, as in CPython).
    pub fn len(&self) -> usize {
        self.entries
    }

    /// Stores `v` under `idx` (a new entry or an overwrite).
    #[inline]
    pub fn put(&mut self, idx: u32, v: Val) {
        let i = idx as usize;
        if i == self.dense.len() && self.sparse.is_empty() {
            // The common case (CPython numbers 0, 1, 2, …): dense stays ≤ 2 × entries + 64.
            self.dense.push(v);
            self.entries += 1;
            return;
        }
        self.put_other(idx, v);
    }

    /// [`Memo::put`] off the common case: an overwrite, a gap or a sparse index.
    #[inline(never)]
    fn put_other(&mut self, idx: u32, v: Val) {
        let i = idx as usize;
        if let Some(slot) = self.dense.get_mut(i) {
            if *slot == Val::Missing {
                self.entries += 1;
            }
            *slot = v;
            return;
        }
        if let Some(slot) = self.sparse.get_mut(&idx) {
            *slot = v;
            return;
        }
        self.entries += 1;
        if i < 2 * self.entries + DENSE_SLACK {
            // Grow the dense part; sparse entries inside the new range move into it.
            let from = self.dense.len();
            self.dense.resize(i + 1, Val::Missing);
            if !self.sparse.is_empty() {
                for j in from..i {
                    if let Some(x) = self.sparse.remove(&(j as u32)) {
                        self.dense[j] = x;
                    }
                }
            }
            self.dense[i] = v;
        } else {
            self.sparse.insert(idx, v);
        }
    }

    /// The value under `idx` ([`Val::Missing`] if never stored).
    #[inline]
    pub fn get(&self, idx: u32) -> Val {
        match self.dense.get(idx as usize) {
            Some(&v) => v,
            None => self.sparse.get(&idx).copied().unwrap_or(Val::Missing),
        }
    }

    /// Rewrites an existing entry (a consumed container becomes an id or a tombstone);
    /// an index never stored stays absent.
    #[inline]
    pub fn replace(&mut self, idx: u32, v: Val) {
        if let Some(slot) = self.dense.get_mut(idx as usize) {
            if *slot != Val::Missing {
                *slot = v;
            }
        } else if let Some(slot) = self.sparse.get_mut(&idx) {
            *slot = v;
        }
    }

    /// Slots held: `(dense slots, sparse entries)` — the decoder's memory accounting.
    pub fn footprint(&self) -> (usize, usize) {
        (self.dense.len(), self.sparse.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_indices_stay_dense() {
        let mut m = Memo::default();
        for i in 0..1000u32 {
            m.put(i, Val::Int(i as i64));
        }
        assert_eq!(m.len(), 1000);
        assert_eq!(m.footprint(), (1000, 0));
        assert_eq!(m.get(999), Val::Int(999));
        assert_eq!(m.get(1000), Val::Missing);
    }

    #[test]
    fn jumping_indices_go_sparse_and_cost_one_slot_each() {
        let mut m = Memo::default();
        for k in 0..4000u32 {
            m.put(k.wrapping_mul(1_000_003), Val::Int(k as i64));
        }
        assert_eq!(m.len(), 4000);
        let (dense, sparse) = m.footprint();
        assert!(
            dense + sparse <= 2 * 4000 + DENSE_SLACK,
            "{dense} + {sparse}"
        );
        assert_eq!(m.get(1_000_003 * 17), Val::Int(17));
        assert_eq!(m.get(5), Val::Missing);
        m.put(u32::MAX, Val::Bool(true));
        assert_eq!(m.get(u32::MAX), Val::Bool(true));
    }

    #[test]
    fn sparse_entries_move_into_a_growing_dense_part() {
        let mut m = Memo::default();
        m.put(100, Val::Int(100)); // beyond 2·1 + 64: sparse
        assert_eq!(m.footprint(), (0, 1));
        for i in 0..100u32 {
            m.put(i, Val::Int(i as i64));
        }
        m.put(101, Val::Int(101));
        assert_eq!(m.footprint(), (102, 0));
        assert_eq!(m.get(100), Val::Int(100));
        assert_eq!(m.len(), 102);
        // Overwrites do not add entries; replace never creates one.
        m.put(100, Val::None);
        m.replace(5000, Val::Tomb);
        assert_eq!(m.len(), 102);
        assert_eq!(m.get(5000), Val::Missing);
        m.replace(100, Val::Tomb);
        assert_eq!(m.get(100), Val::Tomb);
    }
}
