//! Pure functions over `model` tables: no I/O, no clocks, no serde. Each
//! submodule names the spec sections whose rules it implements.

pub mod anomaly;
pub mod anomaly_config;
pub mod architecture;
pub mod bubbles;
pub mod comm;
pub mod compare;
pub mod device_lag;
pub mod gpu_breakdown;
pub mod gpu_kernel_class;
pub mod gpu_kernels;
pub mod gpu_memory;
pub mod gpu_rank;
pub mod gpu_straggler;
pub mod gpu_tables;
pub mod host_evidence;
pub mod intervals;
pub mod launch_timing;
pub mod memory_curve;
pub mod memory_match;
pub mod memory_peak;
pub mod memory_phase;
pub mod memory_pool;
pub mod memory_result;
pub mod memory_summary;
pub mod snapshot;
pub mod step_annotations;
pub mod steps;
pub mod structure;
pub mod user_frame;
