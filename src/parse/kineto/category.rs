//! The event categories of a Kineto trace (formats.md §8): the 2023+ and the 2021 names, matched
//! as raw JSON bytes where possible, and the `ProfilerStep#N` step markers.

use std::borrow::Cow;

use crate::model::gpu::{DeviceOpKind, FlowKind, HostKind};
use crate::parse::trace_json::scan::as_str;

/// The category classes of §8 (2023+ and 2021 names).
pub(super) enum Cat {
    Device(DeviceOpKind),
    Host(HostKind),
    Flow(FlowKind),
}

/// Every `cat` text [`category`] names: [`cat_text`] matches these as raw JSON bytes (no
/// decoding). A text missing here is decoded the general way, with the same result.
pub(super) const CATS: [&str; 20] = [
    "kernel",
    "mtia_ccp_events",
    "mtia_runtime",
    "Kernel",
    "gpu_memcpy",
    "Memcpy",
    "gpu_memset",
    "Memset",
    "cpu_op",
    "Operator",
    "cuda_runtime",
    "Runtime",
    "cuda_driver",
    "user_annotation",
    "gpu_user_annotation",
    "python_function",
    "cuda_sync",
    "ac2g",
    "async_cpu_to_gpu",
    "async",
];

/// The text of a `cat` value (`""` when absent or not a string): one of [`CATS`] without
/// decoding, else [`as_str`].
pub(super) fn cat_text(raw: Option<&[u8]>) -> Cow<'_, str> {
    if let Some([b'"', inner @ .., b'"']) = raw {
        if let Some(c) = CATS.iter().find(|c| c.as_bytes() == inner) {
            return Cow::Borrowed(c);
        }
    }
    raw.and_then(as_str).unwrap_or_default()
}

pub(super) fn category(cat: &str, name: &str) -> Cat {
    match cat {
        // Meta's MTIA writes its device ops (kernels and `dma_*` transfers, told apart by name as
        // HTA does) as `mtia_ccp_events` and its launches (`runFunction`) as `mtia_runtime`.
        "kernel" | "Kernel" | "mtia_ccp_events" => Cat::Device(DeviceOpKind::Kernel),
        "gpu_memcpy" | "Memcpy" => Cat::Device(DeviceOpKind::Memcpy),
        "gpu_memset" | "Memset" => Cat::Device(DeviceOpKind::Memset),
        "cpu_op" | "Operator" => Cat::Host(HostKind::CpuOp),
        "cuda_runtime" | "Runtime" if name.starts_with("hip") => Cat::Host(HostKind::HipRuntime),
        "cuda_runtime" | "Runtime" | "mtia_runtime" => Cat::Host(HostKind::CudaRuntime),
        "cuda_driver" => Cat::Host(HostKind::CudaDriver),
        "user_annotation" => Cat::Host(HostKind::UserAnnotation),
        "gpu_user_annotation" => Cat::Host(HostKind::GpuUserAnnotation),
        "python_function" => Cat::Host(HostKind::PythonFunction),
        "cuda_sync" => Cat::Host(HostKind::CudaSync),
        "ac2g" => Cat::Flow(FlowKind::Ac2g),
        "async_cpu_to_gpu" | "async" => Cat::Flow(FlowKind::AsyncCpuToGpu),
        _ => Cat::Host(HostKind::Other),
    }
}

/// `N` of `ProfilerStep#N` (-1 when not a number), or `None` when not a step marker.
pub(super) fn step_number(name: &str) -> Option<i64> {
    let n = name.strip_prefix("ProfilerStep#")?;
    Some(n.trim().parse().unwrap_or(-1))
}
