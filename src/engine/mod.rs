//! The one place where the core layers meet: per-analysis pipelines used by
//! the CLI, the worker and the tests.
pub mod anomaly;
pub mod memory;
pub mod session;
pub mod snapshot;
