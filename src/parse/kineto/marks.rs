//! What makes a JSON file a PyTorch profiler trace (formats.md §8.1): the one rule the
//! inventory's head sniff ([`super::sniff`]) and the run's judgement of an undecided file
//! ([`has_pytorch_marks`], `engine::read::gpu`) share, so both decide alike.

use crate::model::gpu::{GpuTrace, HostKind};

/// The event categories the PyTorch profiler (Kineto) writes, 2023+ and 2021 names: one of
/// them on any event marks a PyTorch profiler trace, with or without GPU events.
pub const PYTORCH_CATS: [&str; 20] = [
    "kernel",
    "mtia_ccp_events",
    "mtia_runtime",
    "gpu_memcpy",
    "gpu_memset",
    "cpu_op",
    "cuda_runtime",
    "cuda_driver",
    "user_annotation",
    "gpu_user_annotation",
    "python_function",
    "cuda_sync",
    "cpu_instant_event",
    "ac2g",
    "async_cpu_to_gpu",
    "Kernel",
    "Memcpy",
    "Memset",
    "Operator",
    "Runtime",
];

/// The device-side categories (a GPU capture; the rest are host categories).
pub const GPU_CATS: [&str; 12] = [
    "kernel",
    "mtia_ccp_events",
    "mtia_runtime",
    "gpu_memcpy",
    "gpu_memset",
    "cuda_runtime",
    "cuda_driver",
    "Kernel",
    "Memcpy",
    "Memset",
    "Runtime",
    "ac2g",
];

/// True for a category of [`PYTORCH_CATS`].
pub fn is_pytorch_category(cat: &str) -> bool {
    PYTORCH_CATS.contains(&cat)
}

/// True for the event names only the PyTorch profiler writes: its `[memory]` instants and its
/// `ProfilerStep#N` step markers.
pub fn is_pytorch_name(name: &str) -> bool {
    name == "[memory]" || name.starts_with("ProfilerStep#")
}

/// True when a whole read found a PyTorch profiler trace's mark: `deviceProperties`,
/// `distributedInfo`, a device op, a host event of a PyTorch category, a `[memory]` sample,
/// a step marker or a launch flow. What decides a file the head sniff left undecided.
pub fn has_pytorch_marks(t: &GpuTrace) -> bool {
    !t.facts.devices.is_empty()
        || t.facts.distributed.is_some()
        || !t.device_ops.is_empty()
        || t.host_ops.iter().any(|h| h.kind != HostKind::Other)
        || !t.gpu_annotations.is_empty()
        || !t.memory.is_empty()
        || !t.steps.is_empty()
        || !t.flows.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_and_names() {
        for c in [
            "cpu_op",
            "python_function",
            "user_annotation",
            "kernel",
            "Runtime",
        ] {
            assert!(is_pytorch_category(c), "{c}");
        }
        for c in [
            "python",
            "",
            "Trace",
            "fwdbwd",
            "disabled-by-default-devtools.timeline",
        ] {
            assert!(!is_pytorch_category(c), "{c}");
        }
        assert!(GPU_CATS.iter().all(|c| is_pytorch_category(c)));
        assert!(is_pytorch_name("[memory]"));
        assert!(is_pytorch_name("ProfilerStep#12"));
        assert!(!is_pytorch_name("memory"));
        assert!(!has_pytorch_marks(&GpuTrace::default()));
    }
}
