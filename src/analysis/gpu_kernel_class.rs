//! GPU kernel classes: HTA 0.5.0's `get_kernel_type` (gpu-traces.md §2; `hta/utils/utils.py`),
//! the one rule behind `gpu_time_breakdown.compute_us` and the kernel categories of GPU ranks.
//!
//! HTA matches regular expressions with Python's `re.match` (anchored at the start; `.` stops
//! at a newline):
//! * communication: `^nccl.*Kernel`;
//! * memory: `(^Memcpy)|(^Memset)|(^dma)`;
//! * computation: not `(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)` — i.e. not an NCCL
//!   kernel, no `Memcpy` in the first line, not starting with `Memset`, no `Sync` in the first
//!   line;
//! * other: the rest (e.g. `Stream Sync`, `Event Sync`, `…Memcpy…` kernels).
//!
//! The tests are applied in that order. RCCL (ROCm) kernels are named `ncclDevKernel_…` /
//! `ncclKernel_…` like NCCL's, so the same rule covers both.

use crate::model::gpu::GpuTrace;
use crate::model::strings::StrId;

/// HTA's kernel type (`KernelType` names: `COMMUNICATION`, `MEMORY`, `COMPUTATION`, `OTHER`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KernelClass {
    /// NCCL / RCCL collectives and point-to-point kernels.
    Communication,
    /// Memcpy / Memset / DMA.
    Memory,
    /// Everything that computes.
    Computation,
    /// Synchronisation and kernels HTA counts as neither (`…Sync`, kernels with `Memcpy` inside).
    Other,
}

impl KernelClass {
    /// HTA's spelling in lower case (`communication`, `memory`, `computation`, `other`).
    pub fn as_str(self) -> &'static str {
        match self {
            KernelClass::Communication => "communication",
            KernelClass::Memory => "memory",
            KernelClass::Computation => "computation",
            KernelClass::Other => "other",
        }
    }

    /// Classifies a device op by its event name, exactly as HTA's `get_kernel_type`.
    pub fn of(name: &str) -> KernelClass {
        // `.` in Python's re does not match `\n`: `.*X` finds X in the first line only.
        let line = name.split('\n').next().unwrap_or("");
        let nccl = line
            .strip_prefix("nccl")
            .is_some_and(|rest| rest.contains("Kernel"));
        if nccl {
            return KernelClass::Communication;
        }
        if name.starts_with("Memcpy") || name.starts_with("Memset") || name.starts_with("dma") {
            return KernelClass::Memory;
        }
        let not_compute =
            line.contains("Memcpy") || name.starts_with("Memset") || line.contains("Sync");
        if not_compute {
            KernelClass::Other
        } else {
            KernelClass::Computation
        }
    }
}

/// [`KernelClass::of`] over the names of one trace's string pool: the class is a function of
/// the interned name, so each distinct name is classified once and remembered by its id.
pub struct ClassOfName<'a> {
    t: &'a GpuTrace,
    memo: Vec<Option<KernelClass>>,
}

impl<'a> ClassOfName<'a> {
    /// An empty memo over `t`'s names.
    pub fn new(t: &'a GpuTrace) -> Self {
        ClassOfName {
            t,
            memo: vec![None; t.pool.len()],
        }
    }

    /// The class of the name `id` ([`KernelClass::of`] of its text).
    pub fn of(&mut self, id: StrId) -> KernelClass {
        let t = self.t;
        match self.memo.get_mut(id.index()) {
            Some(slot) => *slot.get_or_insert_with(|| KernelClass::of(t.text(id))),
            None => KernelClass::of(t.text(id)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::KernelClass::{self, *};

    #[test]
    fn hta_kernel_types_in_order_of_tests() {
        let cases = [
            (
                "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)",
                Communication,
            ),
            ("ncclKernel_AllGather_RING_LL_Sum_int8_t", Communication),
            ("nccl_no_kernel_word", Computation),
            ("Memcpy HtoD (Pinned -> Device)", Memory),
            ("Memset (Device)", Memory),
            ("dma_copy", Memory),
            (
                "void at::native::vectorized_elementwise_kernel<4>",
                Computation,
            ),
            ("Cijk_Alik_Bljk_SB_MT64x16x32", Computation),
            ("Stream Sync", Other),
            ("Event Sync", Other),
            ("cutlassMemcpyKernel", Other),
            ("xMemset", Computation), // `(Memset)` is anchored at the start
            ("first line\nwith Sync below", Computation),
            ("ncclX\nKernel", Computation),
        ];
        for (name, want) in cases {
            assert_eq!(KernelClass::of(name), want, "{name}");
        }
    }
}
