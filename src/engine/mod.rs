//! The engine: where the core layers meet, in floors. Each floor may import its own floor and
//! the floors below it, never one above (`tests/tidy.rs` holds it):
//!
//! ```text
//! session   the worker's Session over one Store; view caches; the JIT warm-up
//!    ↓
//! export    every writer: CLI/page exports, reports, gathered parts, diffs, cluster summaries
//!    ↓
//! store     one Store for every analysis (insert, queries, outcomes); run(); parallel (native)
//!    ↓
//! read      one pass per target, nothing kept: Plan, the rank/GPU/snapshot reads
//!    ↓
//! contract  kinds, targets, progress, cancel, status: what every floor names
//! ```
//!
//! `synth` stands beside the floors (input generators for benches, the warm-up and tests) and
//! imports none of them. The rules the floors apply live in `analysis`; the engine orders
//! reads, keeps results and writes files.
pub mod contract;
pub mod export;
#[cfg(not(target_arch = "wasm32"))]
pub mod parallel;
pub mod read;
pub mod session;
pub mod store;
pub mod synth;

pub use read::Plan;
pub use store::{run, Store};
