//! Outputs (CSV, JSON, Markdown): formatting only, never recomputation.

pub mod anomaly_csv;
pub mod anomaly_json;
pub mod anomaly_md;
pub mod arch_md;
pub mod comm;
pub mod diff_tables;
pub mod float;
pub mod frame;
pub mod gpu_breakdown_csv;
pub mod gpu_kernels_csv;
pub mod gpu_md;
pub mod memory_curves;
pub mod memory_md;
pub mod memory_rows;
pub mod pretty_json;
pub mod run_diff;
pub mod snapshot_diff;
pub mod snapshot_json;
pub mod snapshot_md;
pub mod snapshot_overlay;
pub mod snapshot_rows;
pub mod structure_csv;
pub mod table_csv;
pub mod trace_diff;
