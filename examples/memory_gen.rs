//! Generator of large, realistic torch_npu rank folders for the memory benchmark
//! (issue 2 "Performance"). Never commit its output: write to /tmp or target/.
//!
//! ```text
//! cargo run --release --example memory_gen -- <out dir> [--trace-mb 200] [--rows 1000000] [--ranks 1] [--seed 1]
//! ```
//!
//! Writes `<out>/gen_run/rank<k>_ascend_pt/` with `profiler_info_<k>.json`,
//! `profiler_metadata.json` and `ASCEND_PROFILER_OUTPUT/{trace_view.json, operator_memory.csv}`.
//! The trace mimics a real Level1 capture (formats.md §5): a bare array written like
//! Python `json.dumps` (`", "` separators), string `ts` with 3 decimals, `cpu_op` events
//! with innermost-first `Call stack`s, `Sequence number`/`Fwd thread id`, a backward
//! thread without stacks, `python_function`, enqueue/dequeue, device kernels (no `cat`),
//! `async_npu`/`fwdbwd` flows and counters. The CSV is the 15-column form with the
//! trailing-TAB quirk; its rows are allocations inside the generated ops, so matching has
//! realistic work to do.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::PathBuf;

mod common;
use common::{exit_on_help, Rng};

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

/// One allocating op: name, start ns, duration ns.
struct AllocOp {
    name: &'static str,
    ts: i64,
    dur: i64,
}

struct Writer<W: Write> {
    w: W,
    bytes: u64,
    first: bool,
}

impl<W: Write> Writer<W> {
    fn event(&mut self, s: &str) -> std::io::Result<()> {
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

fn stack(rng: &mut Rng, op: &str) -> String {
    // innermost first: torch internals, then user frames, then the entry point
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
    let _ = op;
    frames.join(";\\r\\n")
}

#[allow(clippy::too_many_lines)]
fn gen_trace(
    path: &PathBuf,
    target: u64,
    rank: u32,
    rng: &mut Rng,
    ops: &mut Vec<AllocOp>,
) -> std::io::Result<u64> {
    let f = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut w = Writer {
        w: f,
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
        // one step: marker, forward ops with stacks, backward ops without
        let step_start = t;
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
                ts(t), dur / 1000, (dur % 1000) / 10, stack(&mut Rng(0x1234_5678 + layer as u64 * 7919), op)))?;
            ops.push(AllocOp {
                name: op,
                ts: t,
                dur,
            });
            // a child aten::empty inside the op, also with a stack
            let cdur = 5_000 + rng.below(20_000) as i64;
            w.event(&format!("{{\"ph\": \"X\", \"name\": \"aten::empty\", \"pid\": {pid}, \"tid\": {pid}, \"ts\": {}, \"dur\": {}.{:02}, \"cat\": \"cpu_op\", \"args\": {{\"Sequence number\": -1, \"Fwd thread id\": 0, \"Input Dims\": \";\\r\\n;\\r\\n\", \"Input type\": \"ScalarList;\\r\\nScalar\", \"Call stack\": \"{}\"}}}}",
                ts(t + 2_000), cdur / 1000, (cdur % 1000) / 10, stack(&mut Rng(0x8765_4321 + layer as u64 * 104_729), "aten::empty")))?;
            ops.push(AllocOp {
                name: "aten::empty",
                ts: t + 2_000,
                dur: cdur,
            });
            w.event(&format!("{{\"ph\": \"s\", \"bp\": \"e\", \"name\": \"fwdbwd\", \"id\": {flow_id}, \"pid\": {pid}, \"tid\": {pid}, \"ts\": {}, \"cat\": \"fwdbwd\"}}", ts(t)))?;
            fwd_seqs.push((seq, k, flow_id));
            flow_id += 1;
            w.event(&format!("{{\"ph\": \"X\", \"name\": \"enqueue\", \"pid\": {pid}, \"tid\": {pid}, \"ts\": {}, \"dur\": 3.1, \"cat\": \"enqueue\", \"args\": {{\"correlation_id\": {flow_id}}}}}", ts(t + 3_000)))?;
            // device kernels with a host→device flow
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
        // backward on the autograd thread: no stacks; nodes carry Sequence number + Fwd thread id
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
        let _ = step_start;
        step += 1;
    }
    w.w.write_all(b"]")?;
    w.w.flush()?;
    Ok(w.bytes + 1)
}

fn gen_csv(path: &PathBuf, rows: u64, ops: &[AllocOp], rng: &mut Rng) -> std::io::Result<u64> {
    let mut f = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let header = "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),Release Total Active(MB),Stream Ptr,Device Type\r\n";
    f.write_all(header.as_bytes())?;
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
        f.write_all(line.as_bytes())?;
    }
    f.flush()?;
    Ok(bytes)
}

const USAGE: &str =
    "usage: memory_gen <out dir> [--trace-mb N] [--rows N] [--ranks K] [--seed S]\n\
     writes <out dir>/gen_run/rank<k>_ascend_pt/ (trace_view.json of about N MB, N operator_memory rows)";

fn main() -> std::io::Result<()> {
    exit_on_help(USAGE);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut out: Option<PathBuf> = None;
    let (mut trace_mb, mut rows, mut ranks, mut seed) = (200.0f64, 1_000_000u64, 1u32, 1u64);
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--trace-mb" => trace_mb = v.parse().expect("--trace-mb N"),
            "--rows" => rows = v.parse().expect("--rows N"),
            "--ranks" => ranks = v.parse().expect("--ranks N"),
            "--seed" => seed = v.parse().expect("--seed N"),
            p if p.starts_with('-') => {
                eprintln!("unknown option {p}\n{USAGE}");
                std::process::exit(2);
            }
            p => {
                out = Some(PathBuf::from(p));
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    let Some(out) = out else {
        eprintln!("{USAGE}");
        std::process::exit(2);
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed.wrapping_mul(0x2545_f491_4f6c_dd1d));
    for rank in 0..ranks {
        let dir = out.join("gen_run").join(format!("rank{rank}_ascend_pt"));
        fs::create_dir_all(dir.join("ASCEND_PROFILER_OUTPUT"))?;
        fs::write(dir.join(format!("profiler_info_{rank}.json")), format!(
            "{{\"config\": {{\"common_config\": {{\"with_stack\": true, \"profile_memory\": true, \"record_shapes\": true}}, \"experimental_config\": {{\"_profiler_level\": \"Level1\", \"_export_type\": [\"text\"]}}}}, \"torch_npu_version\": \"2.7.1\", \"cann_version\": \"8.3.RC1\", \"rank_id\": {rank}}}"
        ))?;
        fs::write(
            dir.join("profiler_metadata.json"),
            "{\"ENV_VARIABLES\": {\"PYTORCH_NPU_ALLOC_CONF\": \"max_split_size_mb:2048\"}}",
        )?;
        let mut ops = Vec::new();
        let tb = gen_trace(
            &dir.join("ASCEND_PROFILER_OUTPUT/trace_view.json"),
            (trace_mb * 1048576.0) as u64,
            rank,
            &mut rng,
            &mut ops,
        )?;
        let cb = gen_csv(
            &dir.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv"),
            rows,
            &ops,
            &mut rng,
        )?;
        eprintln!("{}: trace_view.json {:.1} MB ({} allocating ops), operator_memory.csv {:.1} MB ({rows} rows)", dir.display(), tb as f64 / 1048576.0, ops.len(), cb as f64 / 1048576.0);
    }
    Ok(())
}
