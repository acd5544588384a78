//! PyTorch profiler (Kineto) traces in a drop (formats.md §8, §11): which files are
//! traces, and their rank and role. Each trace file is one GPU rank capture in the inventory
//! (`CaptureKind::Kineto`, one `FileKind::KinetoTrace` file; several traces of one rank are
//! ordered by `source_index`).
//!
//! * Step 1 (names only): `*.pt.trace.json[.gz]` is a trace; any other `*.json[.gz]` outside a
//!   capture folder that is not an Ascend file name is a *candidate*; the Chakra execution
//!   trace (`*_et.json[.gz]`) never is.
//! * Step 2 (`parse::metadata::read_side_files` → `parse::kineto::sniff`): the head of each
//!   trace is read (top-level members, then events, bounded): a candidate stays when it has
//!   `traceEvents` and `deviceProperties`, `distributedInfo` or a PyTorch category
//!   (formats.md §8.1), or when the bounded head cannot tell (then the run judges it); a
//!   memory snapshot written as JSON moves to the snapshots; `distributedInfo.rank` is
//!   recorded.
//! * Rank: `distributedInfo.rank`, else a `rank<N>` / `rank_<N>` / `rank-<N>` token of the file
//!   name (`prof_rank-1_031904.json.gz`), else the first number not used by another trace of
//!   the same role, in path order. Role: the folder holding the file (as for Ascend), else
//!   `unknown`.

use serde::Serialize;

use super::rank::rank_from_folder_name;

/// What step 2 read from the head of a trace (serialised for the inventory view).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KinetoHead {
    /// True when the head is a Kineto trace (`traceEvents` + one GPU signal, or the name
    /// `*.pt.trace.json[.gz]` with `traceEvents`).
    pub is_trace: bool,
    /// Why a candidate is not a trace (for the ignored list).
    pub not_trace_reason: Option<String>,
    /// `distributedInfo.rank`, when it comes before the events.
    pub rank: Option<i64>,
    /// `distributedInfo.world_size`.
    pub world_size: Option<i64>,
    /// `deviceProperties[].name`, distinct, in order.
    pub devices: Vec<String>,
    /// `CUDA 12.8` from `cuda_runtime_version`, `ROCm` when the runtime calls are `hip…`,
    /// `CUDA` (no version) when they are `cuda…` and the version key is missing.
    pub runtime: Option<String>,
    /// The file is gzip.
    pub gzip: bool,
    /// The head is a proflens cluster summary's (`ingest::summary_file`), not a trace.
    pub summary: Option<super::summary_file::SummaryHead>,
    /// The head is a memory snapshot written as JSON (top-level `segments` or
    /// `device_traces`, or a list of segment objects; torch-snapshot.md §2.6): the file
    /// moves to the snapshots.
    pub snapshot: bool,
    /// The bounded head read neither found a PyTorch profiler trace's mark nor ruled one out
    /// (formats.md §8.1): the file is kept as a trace and the one read of it judges by its
    /// whole content (`engine::read::gpu`).
    pub undecided: bool,
}

/// Code of a file that is not a PyTorch profiler trace after all: a rank's run that finds no
/// trace in it, or a `*.pt.trace.json(.gz)` file whose head is not one (error, formats.md §8.1).
pub const NOT_A_TRACE: &str = "GPU-FILE-002";

/// True for a name the PyTorch profiler writes (`*.pt.trace.json`, optionally `.gz`).
pub fn is_trace_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let n = n.strip_suffix(".gz").unwrap_or(&n);
    n.ends_with(".pt.trace.json")
}

/// True for a JSON name that may hold a Kineto trace (to be confirmed by its head), i.e.
/// `*.json[.gz]` that is not a Chakra execution trace (`*_et.json[.gz]`).
pub fn is_candidate_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let n = n.strip_suffix(".gz").unwrap_or(&n);
    n.ends_with(".json") && !n.ends_with("_et.json")
}

/// Rank from a trace file name: a `rank<N>` token (`prof_rank-1_031904.json.gz`,
/// `rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz`).
pub fn rank_from_file_name(name: &str) -> Option<i64> {
    rank_from_folder_name(name)
}

/// The runtime a trace names (a GPU card's "GPU runtime"): `ROCm` when a device is AMD's or
/// the runtime calls are `hip…` (`hip_calls`); else `CUDA <major>.<minor>` from
/// `cuda_runtime_version`; else `CUDA` without a version when a device is NVIDIA's or the calls
/// are `cuda…` (older Kineto and HTA's traces have no version key); else `None`.
pub fn runtime_text(
    devices: &[String],
    cuda_runtime_version: Option<i64>,
    hip_calls: bool,
    cuda_calls: bool,
) -> Option<String> {
    if hip_calls || devices.iter().any(|d| d.starts_with("AMD")) {
        return Some("ROCm".into());
    }
    let nvidia = devices.iter().any(|d| d.starts_with("NVIDIA"));
    cuda_runtime_version
        .map(cuda_version_text)
        .or_else(|| (cuda_calls || nvidia).then(|| "CUDA".into()))
}

/// `deviceProperties[].name` of a trace, distinct, in file order.
pub fn device_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    }
    out
}

/// `CUDA <major>.<minor>` from Kineto's `cuda_runtime_version` integer (12080 → `CUDA 12.8`).
pub fn cuda_version_text(v: i64) -> String {
    format!("CUDA {}.{}", v / 1000, (v % 1000) / 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_trace_name(
            "huawei_372640.1771730291744166997.pt.trace.json.gz"
        ));
        assert!(is_trace_name("w.PT.TRACE.JSON"));
        assert!(!is_trace_name("prof_rank-0_031904.json.gz"));
        assert!(is_candidate_name("prof_rank-0_031904.json.gz"));
        assert!(is_candidate_name("rank0.json"));
        assert!(!is_candidate_name("benchmark_simple_add_et.json.gz"));
        assert!(!is_candidate_name("x.pickle"));
        assert_eq!(rank_from_file_name("prof_rank-1_031904.json.gz"), Some(1));
        assert_eq!(
            rank_from_file_name("rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"),
            Some(0)
        );
        assert_eq!(rank_from_file_name("sampled_rank-1.json.gz"), Some(1));
        assert_eq!(rank_from_file_name("nccl_data.json.gz"), None);
        assert_eq!(cuda_version_text(12080), "CUDA 12.8");
        assert_eq!(cuda_version_text(11070), "CUDA 11.7");
    }
}
