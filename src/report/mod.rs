//! Outputs (CSV, JSON, Markdown): formatting only, never recomputation.

pub mod anomaly_json;
