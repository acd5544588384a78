//! `trace_view.json` (formats.md §5): a Chrome-trace event list, hundreds of MB to GB.
//!
//! Never decoded as a whole. [`splitter::for_each_event`] streams the file through a
//! [`crate::ingest::ChunkReader`] and hands out the raw bytes of each event object
//! (bare array or `{"traceEvents": […]}` wrapper, truncation-tolerant). Consumers then
//! read a few keys cheaply with [`scan::fields`] (`cat`, `ph`, `name`…) and run
//! `serde_json::from_slice` only on the events they keep.

pub mod call_stack_index;
pub mod diag;
pub mod hccl_sizes;
pub mod object;
pub mod ranges;
pub mod scan;
pub mod splitter;

pub use object::Event;
pub use splitter::{
    for_each_event, for_each_indexed_event, for_each_member_and_event,
    for_each_member_and_indexed_event, TraceScan,
};
pub mod timeline;

#[cfg(test)]
pub(crate) mod ranges_tests;

/// Test inputs: a fixed-seed xorshift generator, `rnd(n)` in `0..n` (same sequence every run).
#[cfg(test)]
fn test_rng() -> impl FnMut(usize) -> usize {
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    }
}
