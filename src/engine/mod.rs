//! The one place where the core layers meet: the analysis contract ([`contract`]), the
//! per-target result store fed by one read per input file ([`store`], [`rank_pass`]), the
//! per-analysis phases ([`memory`], [`anomaly`], [`snapshot`]), the native multi-core driver
//! ([`parallel`]) and the worker's session. Used by the CLI, the worker and the tests.
pub mod anomaly;
pub mod cluster;
pub mod compare;
pub mod contract;
pub mod gather;
pub mod gpu;
pub mod gpu_report;
pub mod memory;
#[cfg(not(target_arch = "wasm32"))]
pub mod parallel;
pub mod rank_pass;
pub mod session;
pub mod snapshot;
pub mod store;
pub mod synth;
pub mod warmup;
