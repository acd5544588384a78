//! The built-in "Load sample": a tiny synthetic two-rank run (memory events of two allocator
//! pools, steps with kernels and bubbles, and a memory snapshot) written by
//! `fixtures/sample/make_sample.py`, embedded in the app and loaded through the same path as
//! a dropped folder (in-memory `File`s with relative paths).

macro_rules! sample_files {
    ($($rel:literal),* $(,)?) => {
        &[$((concat!("sample_run/", $rel), include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/sample/sample_run/", $rel)) as &[u8])),*]
    };
}

/// `(relative path, bytes)` of every sample file.
pub const SAMPLE: &[(&str, &[u8])] = sample_files!(
    "README.txt",
    "memory_snapshot.pickle",
    "rank0_ascend_pt/profiler_info_0.json",
    "rank0_ascend_pt/profiler_metadata.json",
    "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
    "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
    "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
    "rank1_ascend_pt/profiler_info_1.json",
    "rank1_ascend_pt/profiler_metadata.json",
    "rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
    "rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
    "rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
);
