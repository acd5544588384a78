//! Messages of the memory-snapshot analysis (issue 4, torch-snapshot.md).
//! Re-exported from [`crate::protocol`].
