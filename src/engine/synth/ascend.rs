//! Synthetic torch_npu rank folders (formats.md §1–5): the memory generator's Level1
//! `trace_view.json` and `operator_memory.csv` (`examples/memory_gen`), the anomaly
//! generator's `kernel_details.csv` + `trace_view.json` (`examples/anomaly_gen`), and the
//! side files the inventory reads.

use std::io::{self, Write};

use super::{Lcg, XorShift};

/// `profiler_info_<rank>.json` of a Level1 capture with stacks and memory profiling.
pub fn profiler_info_json(rank: u32) -> String {
    format!(
        "{{\"config\": {{\"common_config\": {{\"with_stack\": true, \"profile_memory\": true, \"record_shapes\": true}}, \"experimental_config\": {{\"_profiler_level\": \"Level1\", \"_export_type\": [\"text\"]}}}}, \"torch_npu_version\": \"2.7.1\", \"cann_version\": \"8.3.RC1\", \"rank_id\": {rank}}}"
    )
}

/// `profiler_metadata.json` (no role).
pub const PROFILER_METADATA_JSON: &str =
    "{\"ENV_VARIABLES\": {\"PYTORCH_NPU_ALLOC_CONF\": \"max_split_size_mb:2048\"}}";

/// The memory generator's random source for run seed `seed` (shared by every rank it writes,
/// in rank order: trace, then CSV).
pub fn memory_rng(seed: u64) -> XorShift {
    XorShift(0x9e37_79b9_7f4a_7c15 ^ seed.wrapping_mul(0x2545_f491_4f6c_dd1d))
}

/// Shape of a memory generator `trace_view.json` ([`write_memory_trace`]).
#[derive(Clone, Copy, Debug)]
pub struct MemoryTraceSpec {
    /// Bytes to reach: whole steps are written until the trace is at least this long (one
    /// step, 48 layers, is about 0.7 MB).
    pub target_bytes: u64,
    /// Rank (offsets the pids).
    pub rank: u32,
}

/// One allocating op of a generated trace: name, start ns, duration ns. The CSV rows of
/// [`write_operator_memory`] are allocations inside these.
#[derive(Clone, Debug)]
pub struct AllocOp {
    /// Op name (`aten::…`).
    pub name: &'static str,
    /// Start, ns since the epoch.
    pub ts: i64,
    /// Duration, ns.
    pub dur: i64,
}

fn ts(ns: i64) -> String {
    format!("\"{}.{:03}\"", ns / 1000, ns % 1000)
}

const USER_FRAMES: [&str; 8] = [
    "/home/user/project/model.py(88): forward",
    "/home/user/project/model.py(120): forward",
    "/home/user/project/layers/attention.py(45): forward",
    "/home/user/project/layers/mlp.py(31): forward",
    "/home/user/project/train.py(354): train",
    "/home/user/project/train.py(366): train",
    "/home/user/project/train.py(536): accuracy",
    "/home/user/project/train.py(600): main",
];
const LIB_FRAMES: [&str; 6] = [
    "/home/user/.local/lib/python3.9/site-packages/torch/nn/modules/conv.py(456): _conv_forward",
    "/home/user/.local/lib/python3.9/site-packages/torch/nn/modules/conv.py(460): forward",
    "/home/user/.local/lib/python3.9/site-packages/torch/nn/modules/module.py(1501): _call_impl",
    "/home/user/.local/lib/python3.9/site-packages/torch/nn/functional.py(1457): relu",
    "/home/user/.local/lib/python3.9/site-packages/torch/optim/sgd.py(293): _multi_tensor_sgd",
    "/home/user/miniconda3/lib/python3.9/threading.py(973): run",
];
const FWD_OPS: [(&str, &str); 6] = [
    ("aten::conv2d", "ConvolutionBackward0"),
    ("aten::linear", "AddmmBackward0"),
    ("aten::relu", "ReluBackward0"),
    ("aten::layer_norm", "NativeLayerNormBackward0"),
    ("aten::matmul", "MmBackward0"),
    ("aten::add", "AddBackward0"),
];
const BWD_CHILD: [&str; 6] = [
    "aten::convolution_backward",
    "aten::mm",
    "aten::threshold_backward",
    "aten::native_layer_norm_backward",
    "aten::mm",
    "aten::add",
];

/// A JSON array of events written like Python `json.dumps` (`", "` between events).
struct Events<'a> {
    w: &'a mut dyn Write,
    bytes: u64,
    first: bool,
}

impl Events<'_> {
    fn event(&mut self, s: &str) -> io::Result<()> {
        if !self.first {
            self.w.write_all(b", ")?;
            self.bytes += 2;
        }
        self.first = false;
        self.w.write_all(s.as_bytes())?;
        self.bytes += s.len() as u64;
        Ok(())
    }
}

/// A `Call stack`: torch internals innermost, then user frames, then the entry point.
fn stack(rng: &mut XorShift) -> String {
    let mut frames: Vec<String> = Vec::new();
    let lib = 2 + rng.below(4) as usize;
    for k in 0..lib {
        frames.push(LIB_FRAMES[(k + rng.below(3) as usize) % LIB_FRAMES.len()].to_string());
    }
    let user = 2 + rng.below(3) as usize;
    for k in 0..user {
        frames.push(USER_FRAMES[(k * 2 + rng.below(2) as usize) % USER_FRAMES.len()].to_string());
    }
    frames.push("<string>(1): <module>".into());
    frames.join(";\\r\\n")
}

/// The memory generator's `trace_view.json`: a real Level1 capture's shape (formats.md §5) —
/// a bare array written like Python `json.dumps`, string `ts` with 3 decimals, `cpu_op`
/// events with innermost-first `Call stack`s, `Sequence number`/`Fwd thread id`, a backward
/// thread without stacks, `python_function`, enqueue, device kernels (no `cat`),
/// `async_npu`/`fwdbwd` flows and counters. Each step: a `ProfilerStep#N` marker, 48 forward
/// layers, their backward ops. Pushes the allocating ops to `ops`; returns the bytes written.
///
/// Errors: those of `w`.
#[allow(clippy::too_many_lines)]
pub fn write_memory_trace(
    w: &mut dyn Write,
    spec: &MemoryTraceSpec,
    rng: &mut XorShift,
    ops: &mut Vec<AllocOp>,
) -> io::Result<u64> {
    let (target, rank) = (spec.target_bytes, spec.rank);
    let mut w = Events {
        w,
        bytes: 1,
        first: true,
    };
    w.w.write_all(b"[")?;
    let pid = 3_096_504 + rank as i64;
    let bwd_tid = pid + 8571;
    let dev_pid = 3_170_820_512i64 + rank as i64;
    for (p, name, label) in [(pid, "Python", "CPU"), (dev_pid, "Ascend Hardware", "NPU")] {
        w.event(&format!("{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {p}, \"tid\": 0, \"args\": {{\"name\": \"{name}\"}}}}"))?;
        w.event(&format!("{{\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": {p}, \"tid\": 0, \"args\": {{\"labels\": \"{label}\"}}}}"))?;
    }
    let mut t: i64 = 1_736_408_883_688_177_930;
    let mut seq: i64 = 1000;
    let mut flow_id: u64 = 1;
    let mut step = 0u64;
    while w.bytes < target {
        // One step: marker, forward ops with stacks, backward ops without.
        w.event(&format!("{{\"ph\": \"X\", \"name\": \"ProfilerStep#{step}\", \"pid\": {pid}, \"tid\": {pid}, \"ts\": {}, \"dur\": 150000.0, \"cat\": \"cpu_op\", \"args\": {{\"Sequence number\": -1, \"Fwd thread id\": 0}}}}", ts(t)))?;
        t += 1_000;
        let mut fwd_seqs = Vec::new();
        for layer in 0..48 {
            let k = (layer + step as usize) % FWD_OPS.len();
            let (op, _) = FWD_OPS[k];
            let dur = 40_000 + rng.below(200_000) as i64;
            w.event(&format!("{{\"ph\": \"X\", \"name\": \"{}\", \"pid\": {pid}, \"tid\": {pid}, \"ts\": {}, \"dur\": {}.{:02}, \"cat\": \"python_function\", \"args\": {{\"Python id\": {}, \"Python parent id\": {}}}}}",
                USER_FRAMES[k % USER_FRAMES.len()], ts(t - 500), (dur + 1000) / 1000, rng.below(100), 100 + layer, 99))?;
            w.event(&format!("{{\"ph\": \"X\", \"name\": \"{op}\", \"pid\": {pid}, \"tid\": {pid}, \"ts\": {}, \"dur\": {}.{:02}, \"cat\": \"cpu_op\", \"args\": {{\"Sequence number\": {seq}, \"Fwd thread id\": 0, \"Input Dims\": \"32,256,13,13;\\r\\n256,256,3,3;\\r\\n\", \"Input type\": \"float;\\r\\nfloat;\\r\\nScalarList\", \"Call stack\": \"{}\"}}}}",
                ts(t), dur / 1000, (dur % 1000) / 10, stack(&mut XorShift(0x1234_5678 + layer as u64 * 7919))))?;
            ops.push(AllocOp {
                name: op,
                ts: t,
                dur,
            });
            // A child aten::empty inside the op, also with a stack.
            let cdur = 5_000 + rng.below(20_000) as i64;
            w.event(&format!("{{\"ph\": \"X\", \"name\": \"aten::empty\", \"pid\": {pid}, \"tid\": {pid}, \"ts\": {}, \"dur\": {}.{:02}, \"cat\": \"cpu_op\", \"args\": {{\"Sequence number\": -1, \"Fwd thread id\": 0, \"Input Dims\": \";\\r\\n;\\r\\n\", \"Input type\": \"ScalarList;\\r\\nScalar\", \"Call stack\": \"{}\"}}}}",
                ts(t + 2_000), cdur / 1000, (cdur % 1000) / 10, stack(&mut XorShift(0x8765_4321 + layer as u64 * 104_729))))?;
            ops.push(AllocOp {
                name: "aten::empty",
                ts: t + 2_000,
                dur: cdur,
            });
            w.event(&format!("{{\"ph\": \"s\", \"bp\": \"e\", \"name\": \"fwdbwd\", \"id\": {flow_id}, \"pid\": {pid}, \"tid\": {pid}, \"ts\": {}, \"cat\": \"fwdbwd\"}}", ts(t)))?;
            fwd_seqs.push((seq, k, flow_id));
            flow_id += 1;
            w.event(&format!("{{\"ph\": \"X\", \"name\": \"enqueue\", \"pid\": {pid}, \"tid\": {pid}, \"ts\": {}, \"dur\": 3.1, \"cat\": \"enqueue\", \"args\": {{\"correlation_id\": {flow_id}}}}}", ts(t + 3_000)))?;
            // Device kernels with a host→device flow.
            for kk in 0..3 {
                let kt = t + 30_000 + kk * 7_000;
                w.event(&format!("{{\"ph\": \"s\", \"bp\": \"e\", \"name\": \"torch_to_npu\", \"id\": {}, \"pid\": {pid}, \"tid\": {pid}, \"ts\": {}, \"cat\": \"async_npu\"}}", flow_id * 10 + kk as u64, ts(t)))?;
                w.event(&format!("{{\"name\": \"aclnn{op}_Kernel_{kk}\", \"pid\": {dev_pid}, \"tid\": 2, \"ts\": {}, \"dur\": {}.{:03}, \"args\": {{\"Model Id\": 4294967295, \"Task Type\": \"AI_CORE\", \"Physic Stream Id\": 2, \"Task Id\": {}, \"Batch Id\": 0, \"Subtask Id\": 4294967295, \"connection_id\": {}}}, \"ph\": \"X\"}}",
                    ts(kt), 5 + rng.below(40), rng.below(1000), rng.below(65536), flow_id))?;
                w.event(&format!("{{\"ph\": \"f\", \"bp\": \"e\", \"name\": \"torch_to_npu\", \"id\": {}, \"pid\": {dev_pid}, \"tid\": 2, \"ts\": {}, \"cat\": \"async_npu\"}}", flow_id * 10 + kk as u64, ts(kt)))?;
            }
            for c in 0..12 {
                w.event(&format!("{{\"name\": \"HBM {}/Read\", \"ts\": {}, \"pid\": {}, \"tid\": 0, \"args\": {{\"MB/s\": {}.{:03}}}, \"ph\": \"C\"}}", c % 4, ts(t + c * 1_000), dev_pid + 33, rng.below(90_000), rng.below(1000)))?;
            }
            for pf in 0..5u64 {
                w.event(&format!("{{\"ph\": \"X\", \"name\": \"{}\", \"pid\": {pid}, \"tid\": {pid}, \"ts\": {}, \"dur\": {}.{:02}, \"cat\": \"python_function\", \"args\": {{\"Python id\": {}, \"Python parent id\": {}}}}}",
                    LIB_FRAMES[(pf as usize + layer) % LIB_FRAMES.len()], ts(t + 100 + pf as i64 * 50), 1 + rng.below(30), rng.below(100), 200 + pf, 100 + layer))?;
            }
            if layer % 4 == 0 {
                w.event(&format!("{{\"name\": \"AI Core Freq\", \"ts\": {}, \"pid\": {}, \"tid\": 0, \"args\": {{\"MHz\": 1800}}, \"ph\": \"C\"}}", ts(t), dev_pid + 32))?;
                w.event(&format!("{{\"name\": \"APP/DDR\", \"ts\": {}, \"pid\": {}, \"tid\": 0, \"args\": {{\"KB\": {}.0}}, \"ph\": \"C\"}}", ts(t), dev_pid + 31, rng.below(1 << 20)))?;
            }
            seq += 1;
            t += dur + 5_000;
        }
        // Backward on the autograd thread: no stacks; nodes carry Sequence number + Fwd thread id.
        for (s, k, fid) in fwd_seqs.into_iter().rev() {
            let (_, node) = FWD_OPS[k];
            let child = BWD_CHILD[k];
            let dur = 60_000 + rng.below(300_000) as i64;
            w.event(&format!("{{\"ph\": \"X\", \"name\": \"autograd::engine::evaluate_function: {node}\", \"pid\": {pid}, \"tid\": {bwd_tid}, \"ts\": {}, \"dur\": {}.{:02}, \"cat\": \"cpu_op\", \"args\": {{\"Sequence number\": -1, \"Fwd thread id\": 0}}}}", ts(t), (dur + 4_000) / 1000, 0))?;
            w.event(&format!("{{\"ph\": \"X\", \"name\": \"{node}\", \"pid\": {pid}, \"tid\": {bwd_tid}, \"ts\": {}, \"dur\": {}.{:02}, \"cat\": \"cpu_op\", \"args\": {{\"Sequence number\": {s}, \"Fwd thread id\": 1}}}}", ts(t + 1_000), (dur + 2_000) / 1000, 0))?;
            w.event(&format!("{{\"ph\": \"f\", \"bp\": \"e\", \"name\": \"fwdbwd\", \"id\": {fid}, \"pid\": {pid}, \"tid\": {bwd_tid}, \"ts\": {}, \"cat\": \"fwdbwd\"}}", ts(t + 1_000)))?;
            w.event(&format!("{{\"ph\": \"X\", \"name\": \"{child}\", \"pid\": {pid}, \"tid\": {bwd_tid}, \"ts\": {}, \"dur\": {}.{:02}, \"cat\": \"cpu_op\", \"args\": {{\"Sequence number\": -1, \"Fwd thread id\": 0, \"Input Dims\": \"32,256,13,13;\\r\\n\", \"Input type\": \"float\"}}}}", ts(t + 2_000), dur / 1000, (dur % 1000) / 10))?;
            ops.push(AllocOp {
                name: child,
                ts: t + 2_000,
                dur,
            });
            t += dur + 6_000;
        }
        step += 1;
    }
    w.w.write_all(b"]")?;
    Ok(w.bytes + 1)
}

/// The memory generator's `operator_memory.csv`: the 15-column form with the trailing-TAB
/// quirk, `rows` allocations spread over `ops` in order (inside each op's span), 80 %
/// released, 1 in 50 a `cann::` row. Returns the bytes written.
///
/// Errors: those of `w`.
pub fn write_operator_memory(
    w: &mut dyn Write,
    rows: u64,
    ops: &[AllocOp],
    rng: &mut XorShift,
) -> io::Result<u64> {
    let header = "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),Release Total Active(MB),Stream Ptr,Device Type\r\n";
    w.write_all(header.as_bytes())?;
    let mut bytes = header.len() as u64;
    let us = |ns: i64| format!("{}.{:03}\t", ns / 1000, ns % 1000);
    let mut allocated_kb: f64 = 512.0 * 1024.0; // pre-existing memory
    let reserved_mb = 2048.0;
    let n = ops.len().max(1) as u64;
    for r in 0..rows {
        let op = &ops[((r as u128 * n as u128) / rows.max(1) as u128) as usize % ops.len().max(1)];
        let t = op.ts + (rng.below(op.dur.max(1) as u64 / 2)) as i64;
        let size_kb = [0.5, 8.5, 512.0, 2048.5, 147456.5, 4.5][rng.below(6) as usize];
        let name = if rng.below(50) == 0 {
            "cann::Graph_70"
        } else {
            op.name
        };
        allocated_kb += size_kb;
        let a_mb = allocated_kb / 1024.0;
        let released = rng.below(10) < 8;
        let line = if released {
            let d = 4_000 + rng.below(5_000_000) as i64;
            allocated_kb -= size_kb;
            let r_mb = allocated_kb / 1024.0;
            format!(
                "{name},{size_kb},{},{},{},{},{},{a_mb},{reserved_mb},{a_mb},{r_mb},{reserved_mb},{r_mb},94509039890976,NPU:0\r\n",
                us(t), us(t + d), us(t + d - 3_000), us(d), us(d - 3_000)
            )
        } else {
            format!(
                "{name},{size_kb},{},,,,,{a_mb},{reserved_mb},{a_mb},,,,94509039890976,NPU:0\r\n",
                us(t)
            )
        };
        bytes += line.len() as u64;
        w.write_all(line.as_bytes())?;
    }
    Ok(bytes)
}

/// Shape of an anomaly generator rank ([`write_anomaly_rank`]).
#[derive(Clone, Copy, Debug)]
pub struct AnomalySpec {
    /// Kernels to write (about 210 bytes of CSV and 260 bytes of trace each).
    pub kernels: u64,
    /// `ProfilerStep#N` markers (at least 1).
    pub steps: u64,
}

const NAMES: [&str; 12] = [
    "aclnnAddmm_MatMulCommon_MatMulV2",
    "aclnnMul_MulAiCore_Mul",
    "aclnnAdd_AddAiCore_Add",
    "aclnnRmsNorm_RmsNormAiCore_RmsNorm",
    "aclnnSoftmax_SoftmaxV2AiCore_SoftmaxV2",
    "aclnnFlashAttentionScore_FlashAttentionScore",
    "aclnnCast_CastAiCore_Cast",
    "aclnnInplaceCopy_TensorMoveAiCore_TensorMove",
    "aclnnSwiGlu_SwiGluAiCore_SwiGlu",
    "trans_TransData_1",
    "aclnnInplaceFillScalar_FillAiCore_Fill",
    "aclnnReduceSum_ReduceSumAiCore_ReduceSum",
];

/// The anomaly generator's rank: `kernel_details.csv` into `kd` and `trace_view.json` into
/// `tv`. `steps` `ProfilerStep#N` markers; per step, layers of ~200 compute kernels on stream
/// 2 with small-op runs, an auxiliary stream 3, one HCCL all-reduce per layer, rare AI_CPU
/// kernels, internal bubbles of varied size; the trace holds the markers, host `cpu_op` /
/// `python_function` events, CANN API events, `HostToDevice` flows and the `Ascend Hardware`
/// device-lane copy of every kernel. Returns the kernels written.
///
/// Errors: those of `kd` and `tv`.
#[allow(clippy::too_many_lines)]
pub fn write_anomaly_rank(
    kd: &mut dyn Write,
    tv: &mut dyn Write,
    spec: &AnomalySpec,
) -> io::Result<u64> {
    let (n_kernels, steps) = (spec.kernels, spec.steps.max(1));
    writeln!(kd, "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,aic_mac_ratio,aic_mte2_ratio")?;
    write!(tv, "[")?;
    let meta = [
        (3096504u64, "Python"),
        (3096505, "CANN"),
        (3170820512, "Ascend Hardware"),
        (3170820576, "HCCL"),
    ];
    for (pid, name) in meta {
        writeln!(tv, "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":\"{name}\"}}}},")?;
    }
    let mut rng = Lcg(0x5eed);
    let layer_names: Vec<String> = (0..200)
        .map(|j| format!("{}_{}", NAMES[(j * 7 + 3) % NAMES.len()], j / 25))
        .collect();
    let per_step = (n_kernels / steps).max(1);
    let mut t_ns: i64 = 1_736_408_883_686_740_710; // epoch µs × 1000
    let us = |ns: i64| format!("{}.{:03}", ns / 1000, ns % 1000);
    let mut task = 0u64;
    let mut flow = 0u64;
    for step in 0..steps {
        let step_start = t_ns;
        // Prelaunch gap 0.5–3 ms.
        t_ns += 500_000 + rng.below(2_500_000) as i64;
        let mut host_t = step_start + 10_000;
        let mut written = 0;
        while written < per_step {
            // One layer: ~200 kernels.
            let layer = 200.min(per_step - written);
            for j in 0..layer {
                let (name, core, stream, dur_ns) = if j == layer - 1 {
                    (
                        "hcom_allReduce__586_0_1",
                        "HCCL",
                        "N/A",
                        200_000 + rng.below(800_000) as i64,
                    )
                } else if rng.below(500) == 0 {
                    (
                        "aclnnNonzero_NonzeroAiCpu_Nonzero",
                        "AI_CPU",
                        "2",
                        20_000 + rng.below(50_000) as i64,
                    )
                } else if j % 17 == 5 {
                    (
                        NAMES[7],
                        "AI_VECTOR_CORE",
                        "3",
                        5_000 + rng.below(20_000) as i64,
                    )
                } else {
                    // Names repeat once per ~200-kernel layer: a realistic repetition unit.
                    let n = layer_names[j as usize % layer_names.len()].as_str();
                    let small = j % 9 < 3;
                    (
                        n,
                        if j % 3 == 0 {
                            "AI_CORE"
                        } else {
                            "AI_VECTOR_CORE"
                        },
                        "2",
                        if small {
                            1_000 + rng.below(8_000) as i64
                        } else {
                            10_000 + rng.below(200_000) as i64
                        },
                    )
                };
                let wait = if rng.below(10) == 0 {
                    rng.below(2_000_000) as i64
                } else {
                    0
                };
                let start = t_ns;
                writeln!(
                    kd,
                    "{},4294967295,{},{},{},{},dynamic,{},{}\t,{},{},8,0,NO,\"\"\"32,1024\"\"\",FLOAT16,ND,\"\"\"32,1024\"\"\",FLOAT16,ND,N/A,{},12345,0.{},0.{}",
                    step + 1,
                    task,
                    stream,
                    name,
                    name.split('_').next().unwrap_or(name),
                    core,
                    us(start),
                    us(dur_ns),
                    us(wait),
                    us(dur_ns),
                    rng.below(99),
                    rng.below(99)
                )?;
                if core == "HCCL" {
                    writeln!(tv, "{{\"ph\":\"X\",\"name\":\"{name}\",\"pid\":3170820576,\"tid\":0,\"ts\":\"{}\",\"dur\":{}.{:03},\"args\":{{\"model id\":4294967295,\"count\":1024}}}},", us(start), dur_ns / 1000, dur_ns % 1000)?;
                } else {
                    writeln!(tv, "{{\"name\":\"{name}\",\"pid\":3170820512,\"tid\":{stream},\"ts\":\"{}\",\"dur\":{}.{:03},\"args\":{{\"Task Id\":{task}}},\"ph\":\"X\"}},", us(start), dur_ns / 1000, dur_ns % 1000)?;
                }
                // Host side: a cpu_op every 3rd kernel (+ CANN call and flow every 8th).
                let h_dur = 3_000 + rng.below(15_000) as i64;
                host_t = host_t.max(start - 400_000);
                if j % 3 == 0 {
                    writeln!(tv, "{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::{}\",\"pid\":3096504,\"tid\":3096504,\"ts\":\"{}\",\"dur\":{}.{:03},\"args\":{{\"Sequence number\":{task},\"Fwd thread id\":0}}}},", &name[..name.len().min(12)], us(host_t), h_dur / 1000, h_dur % 1000)?;
                }
                if j % 8 == 0 {
                    writeln!(tv, "{{\"ph\":\"X\",\"name\":\"AscendCL@aclnnLaunch\",\"pid\":3096505,\"tid\":3096504,\"ts\":\"{}\",\"dur\":2.5,\"args\":{{\"connection_id\":{flow}}}}},", us(host_t + 500))?;
                    writeln!(tv, "{{\"ph\":\"s\",\"bp\":\"e\",\"name\":\"HostToDevice{flow}\",\"id\":{flow},\"pid\":3096505,\"tid\":3096504,\"ts\":\"{}\",\"cat\":\"HostToDevice\"}},", us(host_t + 500))?;
                    writeln!(tv, "{{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"HostToDevice{flow}\",\"id\":{flow},\"pid\":3170820512,\"tid\":{stream},\"ts\":\"{}\",\"cat\":\"HostToDevice\"}},", us(start))?;
                    flow += 1;
                }
                host_t += h_dur + 1_000;
                // Advance device time: busy plus occasional bubbles.
                let gap = match rng.below(100) {
                    0 => 1_000_000 + rng.below(1_500_000) as i64,
                    1..=10 => 60_000 + rng.below(300_000) as i64,
                    _ => rng.below(3_000) as i64,
                };
                t_ns = start + if stream == "3" { 0 } else { dur_ns } + gap;
                task += 1;
            }
            written += layer;
        }
        let step_end = t_ns;
        writeln!(
            tv,
            "{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#{}\",\"pid\":3096504,\"tid\":3096504,\"ts\":\"{}\",\"dur\":{},\"args\":{{\"Sequence number\":-1}}}},",
            step + 1,
            us(step_start),
            (step_end - step_start) / 1000
        )?;
        writeln!(tv, "{{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"train.py(42): train_step\",\"pid\":3096504,\"tid\":3096504,\"ts\":\"{}\",\"dur\":{},\"args\":{{\"Python id\":{step}}}}},", us(step_start + 1_000), (step_end - step_start) / 1000 - 2)?;
        t_ns += 200_000;
    }
    write!(tv, "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":3096504,\"args\":{{\"sort_index\":0}}}}]")?;
    Ok(task)
}
