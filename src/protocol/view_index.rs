//! The page's index of an anomaly rank (gpu-traces.md §6): a rank folder's inventory index, or,
//! for the other ranks of a merged multi-rank trace split in its one read, an index above
//! every rank folder's that names the folder and the rank's place in the split.

/// The first view index of the ranks of a split merged trace beyond its first
/// (gpu-traces.md §6): the page addresses each like a rank folder, by
/// `PART_BASE + folder × MAX_PARTS + k`; rank folder indices stay below it.
pub const PART_BASE: u32 = 1 << 30;

/// How many ranks of one split trace have a view index (the first one is the folder's own).
pub const MAX_PARTS: u32 = 1024;

/// The view index of rank `k` (1 = the second rank) of rank folder `folder`'s split trace;
/// `None` past [`MAX_PARTS`] or for a folder index that does not fit.
pub fn part_index(folder: u32, k: usize) -> Option<u32> {
    let k = u32::try_from(k).ok().filter(|&k| k >= 1 && k < MAX_PARTS)?;
    folder
        .checked_mul(MAX_PARTS)?
        .checked_add(k)?
        .checked_add(PART_BASE)
}

/// The rank folder of view index `i` and, for a rank of a split trace, its `k` (1-based).
pub fn split_index(i: u32) -> (u32, Option<usize>) {
    match i.checked_sub(PART_BASE) {
        Some(v) => (v / MAX_PARTS, Some((v % MAX_PARTS) as usize)),
        None => (i, None),
    }
}

/// The sort key of view index `i` that lists a split trace's other ranks right after its first:
/// `(rank folder, k)` (`k` = 0 for the folder's own rank).
pub fn view_order(i: u32) -> (u32, usize) {
    let (folder, part) = split_index(i);
    (folder, part.unwrap_or(0))
}
