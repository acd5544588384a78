//! Columnar tables and interning pools built by the parsers; builders
//! establish the invariants (sorted, equal-length columns), getters borrow.

pub mod snapshot;
pub mod snapshot_stacks;
