//! Columnar tables and interning pools built by the parsers; builders
//! establish the invariants (sorted, equal-length columns), getters borrow.

pub mod host_events;
pub mod memory_events;
pub mod snapshot;
pub mod snapshot_stacks;
pub mod stacks;
pub mod strings;
