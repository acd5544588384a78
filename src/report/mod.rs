//! Outputs (CSV, JSON, Markdown): formatting only, never recomputation.

pub mod snapshot_json;
pub mod snapshot_links;
pub mod snapshot_md;
