//! Times the phases of the anomaly pipeline separately (kernel CSV, trace, analysis).
use std::ops::ControlFlow;
use std::time::Instant;

use proflens::analysis::anomaly::{analyse, CaptureInfo, RankInput};
use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::base::Problems;
use proflens::model::kernels::KernelTableBuilder;

fn main() {
    let dir = std::env::args().nth(1).expect("DIR");
    let kd = format!("{dir}/bench_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv");
    let tv = format!("{dir}/bench_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
    let t = Instant::now();
    let mut b = KernelTableBuilder::new();
    let mut p = Problems::new();
    proflens::parse::csv::kernel_details::read(
        std::fs::File::open(&kd).unwrap(),
        &kd,
        None,
        &mut b,
        &mut p,
        &mut |_| ControlFlow::Continue(()),
    )
    .unwrap();
    let k = b.finish();
    eprintln!("kernel csv: {:.2}s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let (tr, _) = proflens::parse::trace_json::timeline::read(
        std::fs::File::open(&tv).unwrap(),
        &tv,
        None,
        "",
        &mut |_| ControlFlow::Continue(()),
    )
    .unwrap();
    eprintln!(
        "trace: {:.2}s ({} host events)",
        t.elapsed().as_secs_f64(),
        tr.events().len()
    );
    let t = Instant::now();
    let cfg = AnomalyConfig::spec_defaults();
    let r = analyse(
        &RankInput {
            kernels: &k,
            trace: Some(&tr),
            comm_ops: &[],
            step_trace: &[],
            info: CaptureInfo::default(),
        },
        &cfg,
    );
    eprintln!(
        "analysis: {:.2}s ({} steps)",
        t.elapsed().as_secs_f64(),
        r.steps.len()
    );
}
