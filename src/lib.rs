//! proflens: streaming analysis of Ascend profiler folders and PyTorch memory snapshots.
//!
//! See `ARCHITECTURE.md` for the map. Modules are listed in reading order: the
//! pure core (`base` → `ingest` → `parse` → `model` → `analysis` → `report` /
//! `views`, glued by `engine`) builds on every target; the edges (`cli` native,
//! `worker` and `ui` wasm32) are gated by target.

#![warn(missing_docs)]

pub mod analysis;
pub mod base;
pub mod engine;
pub mod ingest;
pub mod model;
pub mod parse;
pub mod protocol;
pub mod report;
pub mod views;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(target_arch = "wasm32")]
pub mod ui;
#[cfg(target_arch = "wasm32")]
pub mod worker;
