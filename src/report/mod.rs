//! Outputs (CSV, JSON, Markdown): formatting only, never recomputation.

pub mod anomaly_json;
pub mod anomaly_md;
pub mod arch_md;
