//! Interned UTF-8 strings: one arena, one id per distinct string.
//!
//! Operator names, device types, stream handles and whole call-stack strings
//! repeat across millions of rows; each distinct text is stored once and rows
//! hold a 4-byte [`StrId`].

use rustc_hash::FxHashMap as HashMap;

/// Interned string; index into one [`StringPool`]. Equal ids mean equal strings in that pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StrId(u32);

impl StrId {
    /// The id of `""` in every pool (interned first by [`StringPool::new`]).
    pub const EMPTY: StrId = StrId(0);
    /// The index as `usize`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
    /// Rebuilds an id from [`StrId::index`] (for compact `u32` columns).
    pub fn from_index(i: u32) -> StrId {
        StrId(i)
    }
}

/// A pool of distinct strings stored end to end in one buffer.
///
/// Invariant: `ends` is non-decreasing, `ends.len()` = number of strings;
/// string `i` is `text[ends[i-1]..ends[i]]`. Id 0 is `""`.
#[derive(Clone, Debug)]
pub struct StringPool {
    text: String,
    ends: Vec<usize>,
    by_hash: HashMap<u64, u32>,
}

impl Default for StringPool {
    fn default() -> Self {
        Self::new()
    }
}

/// The 64-bit hash the pool files a string under (rustc-hash's byte hash: eight bytes a
/// step, where the FNV-1a it replaces took one: names of GPU kernels run to hundreds of bytes).
fn text_hash(s: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(s)
}

impl StringPool {
    /// A pool holding only `""` (id [`StrId::EMPTY`]).
    pub fn new() -> Self {
        let mut p = StringPool {
            text: String::new(),
            ends: Vec::new(),
            by_hash: HashMap::default(),
        };
        p.intern("");
        p
    }

    /// The id of `s`, adding it if new. Open addressing over a 64-bit hash ([`text_hash`]):
    /// a collision moves to the next hash value, so distinct strings never share an id.
    pub fn intern(&mut self, s: &str) -> StrId {
        let mut h = text_hash(s);
        loop {
            match self.by_hash.get(&h) {
                Some(&id) if self.get(StrId(id)) == s => return StrId(id),
                Some(_) => h = h.wrapping_add(0x9e37_79b9_7f4a_7c15),
                None => {
                    let id = self.ends.len() as u32;
                    self.text.push_str(s);
                    self.ends.push(self.text.len());
                    self.by_hash.insert(h, id);
                    return StrId(id);
                }
            }
        }
    }

    /// The id of `s` if present.
    pub fn find(&self, s: &str) -> Option<StrId> {
        let mut h = text_hash(s);
        loop {
            match self.by_hash.get(&h) {
                Some(&id) if self.get(StrId(id)) == s => return Some(StrId(id)),
                Some(_) => h = h.wrapping_add(0x9e37_79b9_7f4a_7c15),
                None => return None,
            }
        }
    }

    /// The text of `id` (`""` for an id from another, larger pool).
    pub fn get(&self, id: StrId) -> &str {
        let i = id.index();
        let Some(&end) = self.ends.get(i) else {
            return "";
        };
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..end]
    }

    /// Number of distinct strings (including `""`).
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Always false: `""` is always present.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Bytes of text held.
    pub fn text_bytes(&self) -> usize {
        self.text.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable_and_distinct() {
        let mut p = StringPool::new();
        let a = p.intern("aten::add");
        let b = p.intern("aten::mul");
        assert_eq!(p.intern("aten::add"), a);
        assert_ne!(a, b);
        assert_eq!(p.get(a), "aten::add");
        assert_eq!(p.get(StrId::EMPTY), "");
        assert_eq!(p.intern(""), StrId::EMPTY);
        assert_eq!(p.find("aten::mul"), Some(b));
        assert_eq!(p.find("nope"), None);
        assert_eq!(p.len(), 3);
        for i in 0..1000 {
            let s = format!("op{i}");
            let id = p.intern(&s);
            assert_eq!(p.get(id), s);
        }
        assert_eq!(p.len(), 1003);
    }
}
