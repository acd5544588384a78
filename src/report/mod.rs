//! Outputs (CSV, JSON, Markdown): formatting only, never recomputation.
