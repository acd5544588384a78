//! Columnar tables and interning pools built by the parsers; builders
//! establish the invariants (sorted, equal-length columns), getters borrow.

pub mod kernels;
pub mod trace_events;
pub mod side_tables;
