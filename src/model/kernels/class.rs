//! Which execution unit a kernel ran on (anomaly.md §1.2.2) and whether it communicates.

/// Normalised execution unit of a kernel (anomaly.md §1.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TaskClass {
    /// The AI_CORE family: `AI_CORE`, `AI_VECTOR_CORE`, `MIX_AI*`, `FFTS_PLUS`, …
    AiCore,
    /// `AI_CPU`.
    AiCpu,
    /// Communication: `HCCL`, `COMMUNICATION`.
    Hccl,
    /// Everything else (`DSA_SQE`, `DVPP`, `PCIE_DMA_SQE`, …).
    Other,
}

impl TaskClass {
    /// The spec spelling: `AI_CORE`, `AI_CPU`, `HCCL`, `OTHER`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskClass::AiCore => "AI_CORE",
            TaskClass::AiCpu => "AI_CPU",
            TaskClass::Hccl => "HCCL",
            TaskClass::Other => "OTHER",
        }
    }

    /// Class from the raw `Accelerator Core` / `Task Type` text and the kernel name
    /// (§1.2.2). Returns the class and whether it was inferred from the name
    /// (empty or `N/A` core).
    pub fn classify(core_raw: &str, name: &str) -> (TaskClass, bool) {
        // The core text compared upper-cased, without allocating (the names are ASCII).
        let core = core_raw.trim();
        let is = |names: &[&str]| names.iter().any(|n| core.eq_ignore_ascii_case(n));
        if is(&[
            "AI_CORE",
            "AI_VECTOR_CORE",
            "MIX_AIC",
            "MIX_AIV",
            "MIXED_AIC",
            "MIXED_AIV",
            "FFTS_PLUS",
            "AICORE",
            "AIVECTOR",
            "MIXAIC",
            // GPU compute kernels (`engine::read::gpu`): the compute class.
            "KERNEL",
        ]) {
            (TaskClass::AiCore, false)
        } else if is(&["AI_CPU", "AICPU"]) {
            (TaskClass::AiCpu, false)
        } else if is(&["HCCL", "COMMUNICATION", "NCCL"]) {
            // `NCCL`: GPU collectives (`engine::read::gpu`).
            (TaskClass::Hccl, false)
        } else if is(&["", "N/A"]) {
            let lower = name.to_ascii_lowercase();
            if is_hccl_name(&lower) {
                (TaskClass::Hccl, true)
            } else if lower.contains("aicpu") {
                (TaskClass::AiCpu, true)
            } else {
                (TaskClass::AiCore, true)
            }
        } else {
            (TaskClass::Other, false)
        }
    }
}

/// HCCL name pattern of §1.2.2 (Decision): `^(hcom|hccl)|allreduce|allgather|
/// reducescatter|reduce_scatter|alltoall|broadcast|batchsendrecv`, on a lower-cased name.
///
/// Refinement (our Decision): names starting with `aclnn` are single-operator compute
/// kernels (`aclnnEqTensor_BroadcastToAiCore_BroadcastTo` on `level0/rank0`) and never
/// match; this keeps §1.2.4's "all 187 non-communication rows" of the Level0 fixtures true.
fn is_hccl_name(lower: &str) -> bool {
    if lower.starts_with("aclnn") {
        return false;
    }
    lower.starts_with("hcom")
        || lower.starts_with("hccl")
        || [
            "allreduce",
            "allgather",
            "reducescatter",
            "reduce_scatter",
            "alltoall",
            "broadcast",
            "batchsendrecv",
        ]
        .iter()
        .any(|p| lower.contains(p))
}

/// True when the kernel is a communication kernel: class HCCL or name `^(hcom|hccl)` (§1.2.2).
pub fn is_comm_kernel(class: TaskClass, name: &str) -> bool {
    if class == TaskClass::Hccl {
        return true;
    }
    let b = name.as_bytes();
    b.len() >= 4 && (b[..4].eq_ignore_ascii_case(b"hcom") || b[..4].eq_ignore_ascii_case(b"hccl"))
}
