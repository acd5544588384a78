//! Generator of a large realistic rank folder for the anomaly benchmark (issue 3):
//! `cargo run --release --example anomaly_gen -- OUT_DIR [KERNELS=1000000] [STEPS=100]`.
//!
//! Writes `OUT_DIR/bench_ascend_pt/ASCEND_PROFILER_OUTPUT/{kernel_details.csv,
//! trace_view.json}`: STEPS `ProfilerStep#N` markers; per step, layers of compute
//! kernels on stream 2 with small-op runs, an auxiliary stream 3, one HCCL all-reduce
//! per layer, rare AI_CPU kernels, internal bubbles of varied size; the trace holds
//! the markers, host `cpu_op` / `python_function` events (nested), CANN API events,
//! `HostToDevice` flows and the `Ascend Hardware` device-lane copy of every kernel.
//! Deterministic (fixed LCG seed). Never commit the output (hundreds of MB).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::PathBuf;

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
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

fn main() -> std::io::Result<()> {
    let usage = "usage: anomaly_gen OUT_DIR [KERNELS] [STEPS]\n\
                 writes OUT_DIR/bench_ascend_pt/ with KERNELS kernels (default 1000000) in STEPS steps (100)";
    if std::env::args().skip(1).any(|a| a == "-h" || a == "--help") {
        println!("{usage}");
        return Ok(());
    }
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(
        args.next()
            .expect("usage: anomaly_gen OUT_DIR [KERNELS] [STEPS]"),
    );
    let n_kernels: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let steps: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    let dir = out.join("bench_ascend_pt/ASCEND_PROFILER_OUTPUT");
    fs::create_dir_all(&dir)?;
    let mut kd = BufWriter::with_capacity(1 << 20, File::create(dir.join("kernel_details.csv"))?);
    let mut tv = BufWriter::with_capacity(1 << 20, File::create(dir.join("trace_view.json"))?);
    writeln!(kd, "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,aic_mac_ratio,aic_mte2_ratio")?;
    write!(tv, "[")?;
    let meta = [
        (3096504u64, "Python"),
        (3096505, "CANN"),
        (3170820512, "Ascend Hardware"),
        (3170820576, "HCCL"),
    ];
    for (pid, name) in meta {
        write!(tv, "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":\"{name}\"}}}},\n")?;
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
                    write!(tv, "{{\"ph\":\"X\",\"name\":\"{name}\",\"pid\":3170820576,\"tid\":0,\"ts\":\"{}\",\"dur\":{}.{:03},\"args\":{{\"model id\":4294967295,\"count\":1024}}}},\n", us(start), dur_ns / 1000, dur_ns % 1000)?;
                } else {
                    write!(tv, "{{\"name\":\"{name}\",\"pid\":3170820512,\"tid\":{stream},\"ts\":\"{}\",\"dur\":{}.{:03},\"args\":{{\"Task Id\":{task}}},\"ph\":\"X\"}},\n", us(start), dur_ns / 1000, dur_ns % 1000)?;
                }
                // Host side: a cpu_op every 3rd kernel (+ CANN call and flow every 8th).
                let h_dur = 3_000 + rng.below(15_000) as i64;
                host_t = host_t.max(start - 400_000);
                if j % 3 == 0 {
                    write!(tv, "{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::{}\",\"pid\":3096504,\"tid\":3096504,\"ts\":\"{}\",\"dur\":{}.{:03},\"args\":{{\"Sequence number\":{task},\"Fwd thread id\":0}}}},\n", &name[..name.len().min(12)], us(host_t), h_dur / 1000, h_dur % 1000)?;
                }
                if j % 8 == 0 {
                    write!(tv, "{{\"ph\":\"X\",\"name\":\"AscendCL@aclnnLaunch\",\"pid\":3096505,\"tid\":3096504,\"ts\":\"{}\",\"dur\":2.5,\"args\":{{\"connection_id\":{flow}}}}},\n", us(host_t + 500))?;
                    write!(tv, "{{\"ph\":\"s\",\"bp\":\"e\",\"name\":\"HostToDevice{flow}\",\"id\":{flow},\"pid\":3096505,\"tid\":3096504,\"ts\":\"{}\",\"cat\":\"HostToDevice\"}},\n", us(host_t + 500))?;
                    write!(tv, "{{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"HostToDevice{flow}\",\"id\":{flow},\"pid\":3170820512,\"tid\":{stream},\"ts\":\"{}\",\"cat\":\"HostToDevice\"}},\n", us(start))?;
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
        write!(
            tv,
            "{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#{}\",\"pid\":3096504,\"tid\":3096504,\"ts\":\"{}\",\"dur\":{},\"args\":{{\"Sequence number\":-1}}}},\n",
            step + 1,
            us(step_start),
            (step_end - step_start) / 1000
        )?;
        write!(tv, "{{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"train.py(42): train_step\",\"pid\":3096504,\"tid\":3096504,\"ts\":\"{}\",\"dur\":{},\"args\":{{\"Python id\":{step}}}}},\n", us(step_start + 1_000), (step_end - step_start) / 1000 - 2)?;
        t_ns += 200_000;
    }
    write!(tv, "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":3096504,\"args\":{{\"sort_index\":0}}}}]")?;
    kd.flush()?;
    tv.flush()?;
    let size = |p: &str| fs::metadata(dir.join(p)).map(|m| m.len()).unwrap_or(0);
    eprintln!(
        "wrote {} kernels in {steps} steps: kernel_details.csv {:.1} MB, trace_view.json {:.1} MB under {}",
        task,
        size("kernel_details.csv") as f64 / 1e6,
        size("trace_view.json") as f64 / 1e6,
        out.display()
    );
    Ok(())
}
