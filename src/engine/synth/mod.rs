//! Synthetic inputs written from code: the benchmarks' generators (`examples/kineto_gen`,
//! `memory_gen`, `anomaly_gen`, `snapshot_gen`) and the worker's JIT warm-up
//! ([`crate::engine::session::warmup`]) share them, so what the warm-up exercises is what the benchmarks
//! measure. Deterministic (fixed seeds); never real data. Kineto traces here, torch_npu rank
//! folders in [`ascend`], memory-snapshot pickles in [`snapshot`].

pub mod ascend;
pub mod snapshot;

use std::io::Write;

/// Shape of a synthetic PyTorch profiler (Kineto) trace ([`write_kineto_trace`]).
#[derive(Clone, Copy, Debug)]
pub struct KinetoSpec {
    /// GPU kernels to write (about 690 bytes of compact JSON each, host events included).
    pub kernels: u64,
    /// `ProfilerStep#N` ranges (at least 1).
    pub steps: u64,
    /// `distributedInfo.rank`.
    pub rank: u64,
}

/// A small deterministic generator (64-bit LCG).
pub(crate) struct Lcg(u64);
impl Lcg {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A tiny deterministic xorshift64 generator (the memory and snapshot generators').
#[derive(Clone, Debug)]
pub struct XorShift(pub u64);

impl XorShift {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A value in `0..n` (`0` when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// `(aten op, kernel name, mean duration ns)` of the generated kernels.
const KERNELS: [(&str, &str, u64); 6] = [
    ("aten::mm", "ampere_sgemm_128x64_tn", 40_000),
    ("aten::add", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int)", 3_000),
    ("aten::mul", "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float> >(int)", 2_500),
    ("aten::softmax", "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*, float const*, int, int, int, bool const*, int, bool)", 8_000),
    ("aten::layer_norm", "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)", 6_000),
    ("aten::relu", "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}>(int)", 2_000),
];

/// `ns` as µs with three decimals (Kineto's ns-resolution float `ts`).
fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// One rank's `*.pt.trace.json` (formats.md §8): the 2023+ layout with `schemaVersion`,
/// `deviceProperties`, `distributedInfo`, `baseTimeNanoseconds` and `traceEvents`. Per step a
/// `ProfilerStep#N` `user_annotation`; per three kernels an `aten::` `cpu_op`; per kernel its
/// `cudaLaunchKernel` `cuda_runtime` call (with `correlation`), the `ac2g` flow pair and the
/// `kernel` on stream 7 — a mix of GEMMs and elementwise kernels, one NCCL all-reduce on stream
/// 20 every 50 kernels, a memcpy / memset now and then, and a device that falls a little behind
/// the host (launch queue). Float `ts` with ns fractions.
///
/// Errors: those of `w`.
pub fn write_kineto_trace(w: &mut dyn Write, a: &KinetoSpec) -> std::io::Result<()> {
    let base: u64 = 1_712_000_000_000_000_000;
    writeln!(w, "{{\n  \"schemaVersion\": 1,")?;
    writeln!(w, "  \"deviceProperties\": [{{\"id\": 0, \"name\": \"NVIDIA A100-SXM4-80GB\", \"totalGlobalMem\": 85097971712, \"computeMajor\": 8, \"computeMinor\": 0, \"numSms\": 108}}],")?;
    writeln!(
        w,
        "  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {}, \"world_size\": 8}},",
        a.rank
    )?;
    writeln!(w, "  \"cuda_runtime_version\": 12080,")?;
    writeln!(w, "  \"traceEvents\": [")?;
    writeln!(w, "  {{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 4242, \"tid\": 0, \"args\": {{\"name\": \"python3\"}}}},")?;
    writeln!(w, "  {{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 0, \"tid\": 0, \"args\": {{\"name\": \"GPU 0\"}}}},")?;
    let mut rng = Lcg(0x5eed_0010 + a.rank);
    let steps = a.steps.max(1);
    let per_step = (a.kernels / steps).max(1);
    let mut host: u64 = 1_000_000; // ns since base: host clock
    let mut dev: u64 = host; // device clock: the end of the last kernel on stream 7
                             // Real traces carry large ids (HTA downcasts the column to the smallest int that holds
                             // them, then stores event indices in it: small ids break HTA, not the trace).
    let mut corr: u64 = 278_204_204;
    let mut written = 0u64;
    for step in 0..steps {
        let n = if step + 1 == steps {
            a.kernels - written
        } else {
            per_step.min(a.kernels - written)
        };
        let step_start = host;
        let mut step_events: Vec<String> = Vec::new();
        for k in 0..n {
            let (op, name, mean) = KERNELS[rng.below(KERNELS.len() as u64) as usize];
            let (cat, name, stream, dur) = if k % 50 == 49 {
                ("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", 20, 60_000 + rng.below(40_000))
            } else if k % 97 == 0 {
                (
                    "gpu_memcpy",
                    "Memcpy HtoD (Pinned -> Device)",
                    7,
                    4_000 + rng.below(2_000),
                )
            } else if k % 131 == 0 {
                ("gpu_memset", "Memset (Device)", 7, 1_500)
            } else {
                ("kernel", name, 7, mean / 2 + rng.below(mean))
            };
            let op_start = host + 1_000;
            let launch = op_start + 2_000 + rng.below(1_000);
            let launch_dur = 3_000 + rng.below(2_000);
            // Kernels queue behind the previous one; a host stall now and then leaves a gap.
            let start = (launch + 5_000).max(dev + 1_000 + rng.below(2_000));
            if stream == 7 {
                dev = start + dur;
            }
            host = launch + launch_dur + 1_000 + if rng.below(200) == 0 { 400_000 } else { 0 };
            written += 1;
            let c = corr;
            corr += 1;
            // An aten op launches one to three kernels: one cpu_op per three kernels.
            let op_event = if k % 3 == 0 {
                format!(
                    "{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"{op}\",\"pid\":4242,\"tid\":4242,\"ts\":{},\"dur\":{},\"args\":{{\"External id\":{c}}}}},\n",
                    us(op_start),
                    us(launch + launch_dur + 500 - op_start)
                )
            } else {
                String::new()
            };
            step_events.push(format!(
                "{op_event}{{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":4242,\"tid\":4242,\"ts\":{},\"dur\":{},\"args\":{{\"External id\":{c},\"correlation\":{c}}}}},\n\
                 {{\"ph\":\"s\",\"id\":{c},\"pid\":4242,\"tid\":4242,\"ts\":{},\"cat\":\"ac2g\",\"name\":\"ac2g\"}},\n\
                 {{\"ph\":\"X\",\"cat\":\"{cat}\",\"name\":\"{name}\",\"pid\":0,\"tid\":{stream},\"ts\":{},\"dur\":{},\"args\":{{\"External id\":{c},\"device\":0,\"stream\":{stream},\"correlation\":{c},\"grid\":[1024,1,1]}}}},\n\
                 {{\"ph\":\"f\",\"id\":{c},\"pid\":0,\"tid\":{stream},\"ts\":{},\"cat\":\"ac2g\",\"name\":\"ac2g\"}}",
                us(launch),
                us(launch_dur),
                us(launch),
                us(start),
                us(dur),
                us(start),
            ));
        }
        host += 20_000;
        let marker = format!(
            "  {{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#{step}\", \"pid\": 4242, \"tid\": 4242, \"ts\": {}, \"dur\": {}, \"args\": {{\"External id\": 0}}}}",
            us(step_start),
            us(host - step_start)
        );
        write!(w, "{marker}")?;
        for e in &step_events {
            write!(w, ",\n{e}")?;
        }
        writeln!(w, "{}", if step + 1 == steps { "" } else { "," })?;
    }
    writeln!(w, "  ],")?;
    writeln!(
        w,
        "  \"baseTimeNanoseconds\": {base},\n  \"traceName\": \"kineto_gen\"\n}}"
    )?;
    Ok(())
}
