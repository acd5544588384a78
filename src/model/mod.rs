//! Columnar tables and interning pools built by the parsers; builders
//! establish the invariants (sorted, equal-length columns), getters borrow.

pub mod comm;
pub mod gpu;
pub mod host_events;
pub mod kernels;
pub mod memory_events;
pub mod side_tables;
pub mod snapshot;
pub mod snapshot_stacks;
pub mod snapshot_testing;
pub mod stacks;
pub mod strings;
pub mod trace_events;
