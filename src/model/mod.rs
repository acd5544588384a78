//! Columnar tables and interning pools built by the parsers; builders
//! establish the invariants (sorted, equal-length columns), getters borrow.

pub mod kernels;
pub mod side_tables;
pub mod snapshot;
pub mod snapshot_stacks;
pub mod trace_events;
