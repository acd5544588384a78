//! proflens: streaming analysis of Ascend profiler folders and PyTorch memory snapshots.
//!
//! See `ARCHITECTURE.md` for the map. Modules are listed in reading order: the
//! pure core (`base` → `ingest` → `parse` → `model` → `analysis` → `report` /
//! `views`, glued by `engine`) builds on every target; the edges (`cli` native,
//! `worker` and `ui` wasm32) are gated by target.
//!
//! The code cites the rules it applies as `ascend-memory.md §9.6` (or a bare `§9.6` in a file
//! about one rule doc): a numbered section of `docs/rules/NAME.md` (or `docs/NAME.md`), the
//! user-facing rules reference. `tests/tidy.rs` checks that every citation has its heading.

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
