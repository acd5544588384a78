//! Outputs (CSV, JSON, Markdown): formatting only, never recomputation.

pub mod float;
pub mod memory_md;
pub mod memory_rows;
