//! Bytes → typed records, streaming, no analysis. One submodule per input
//! format (formats.md). Parsers read through [`crate::ingest::ChunkReader`] or the
//! `csv` crate, keep only what analyses need, and report row-level trouble as
//! [`crate::base::Problem`]s beside their results; a [`ParseError`] stops one file only.
//!
//! Shared primitives: [`number`] (cell → number rules), [`csv`] (generic CSV table reader),
//! [`trace_json`] (streaming `trace_view.json` event splitter and key scanner).

#[cfg(any(not(target_arch = "wasm32"), feature = "db"))]
pub mod ascend_db;
pub mod cluster_summary;
pub mod comm_json;
pub mod comm_matrix;
pub mod comm_time;
pub mod communication;
pub mod csv;
pub mod error;
pub mod json_cut;
pub mod kineto;
pub mod metadata;
pub mod number;
pub mod pickle;
pub mod trace_json;

pub use error::{ParseError, ParseErrorKind};
