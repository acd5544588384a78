//! proflens: streaming analysis of Ascend profiler folders and PyTorch memory snapshots.
//!
//! See `ARCHITECTURE.md` for the map. Modules are listed in reading order: the
//! pure core (`base` → `ingest` → `parse` → `model` → `analysis` → `report` /
//! `views`, glued by `engine`) builds on every target; the edges (`cli` native,
//! `worker` and `ui` wasm32) are gated by target.

pub mod base;
pub mod ingest;
pub mod parse;
pub mod model;
pub mod analysis;
pub mod report;
pub mod views;
pub mod protocol;
pub mod engine;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(target_arch = "wasm32")]
pub mod worker;
#[cfg(target_arch = "wasm32")]
pub mod ui;
