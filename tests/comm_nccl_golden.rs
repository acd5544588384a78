//! The GPU collective rules (docs/rules/communication.md §4) on HTA's NCCL trace: rank 0 of 2,
//! 21 NCCL kernels (15 allreduce + broadcasts). Golden values of communication.md §5.6.
//! The kernels are taken from the trace here with serde (a test's reader), then handed to
//! `analysis::comm::nccl::collectives`.

use std::io::Read;

use proflens::analysis::comm::nccl::collectives;
use proflens::model::comm::NcclKernel;
use serde_json::Value;

fn kernels() -> Vec<NcclKernel> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz"
    );
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("fixture"))
        .read_to_string(&mut text)
        .unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    events
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .filter(|e| {
            let n = e["name"].as_str().unwrap_or("").to_lowercase();
            n.contains("nccl") || n.contains("rccl")
        })
        .map(|e| {
            let a = &e["args"];
            NcclKernel {
                rank: 0,
                pg_name: a["Process Group Name"].as_str().map(str::to_string),
                collective: a["Collective name"].as_str().map(str::to_string),
                group_size: a["Group size"].as_i64(),
                dtype: a["dtype"].as_str().map(str::to_string),
                in_nelems: a["In msg nelems"].as_i64(),
                out_nelems: a["Out msg nelems"].as_i64(),
                stream: a["stream"].as_i64().unwrap_or(-1),
                ts_us: e["ts"].as_f64().unwrap(),
                dur_us: e["dur"].as_f64().unwrap(),
                ..NcclKernel::default()
            }
        })
        .collect()
}

fn close(a: f64, b: f64, tol: f64, what: &str) {
    assert!((a - b).abs() <= tol, "{what}: got {a}, expected {b}");
}

#[test]
fn hta_nccl_trace_gives_tracelens_collective_rows() {
    let ks = kernels();
    assert_eq!(ks.len(), 21);
    let rows = collectives(&ks);
    assert_eq!(rows.len(), 15);
    assert!(rows
        .iter()
        .all(|r| r.collective == "allreduce" && r.group_size == 2));
    let find = |id: &str| {
        rows.iter()
            .find(|r| r.collective_id == id)
            .unwrap_or_else(|| panic!("{id}"))
    };
    let r = find("0_2");
    close(r.full_msg_mb, 7.8163, 5e-5, "0_2 MiB");
    close(r.comm_latency_us, 3306.963, 1e-6, "0_2 latency");
    close(r.algo_bw_gbps.unwrap(), 2.3082, 5e-5, "0_2 algbw");
    // factor 2·(2−1)/2 = 1
    assert_eq!(r.bus_bw_gbps, r.algo_bw_gbps);
    // One rank: the skews are unmeasurable (none), never 0.
    assert_eq!((r.skew_start_us, r.skew_end_us), (None, None));
    assert_eq!(r.earliest_arrival_rank, None);
    let r = find("0_3");
    close(r.full_msg_mb, 30.043, 5e-4, "0_3 MiB");
    close(r.comm_latency_us, 2424.415, 1e-6, "0_3 latency");
    close(r.algo_bw_gbps.unwrap(), 12.1014, 5e-5, "0_3 algbw");
    let r = find("0_16");
    close(r.full_msg_mb, 7.8163, 5e-5, "0_16 MiB");
    close(r.comm_latency_us, 5993.392, 1e-6, "0_16 latency");
    close(r.algo_bw_gbps.unwrap(), 1.2736, 5e-5, "0_16 algbw");
}

#[test]
fn the_gpu_rank_pass_keeps_the_same_nccl_kernels_in_its_one_read() {
    use std::ops::ControlFlow;
    let dir = std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/nccl_parser_config"
    ));
    let (opener, files) = proflens::cli::fs_opener::FsOpener::walk(&dir).unwrap();
    let mut inv = proflens::ingest::inventory::Inventory::from_paths(&files);
    proflens::parse::metadata::read_side_files(&mut inv, &opener);
    let opts = proflens::analysis::comm::CommOptions::default();
    let plan = proflens::engine::Plan {
        comm: Some(opts.clone()),
        anomaly: Some(proflens::analysis::anomaly_config::AnomalyConfig::spec_defaults()),
        ..proflens::engine::Plan::none()
    };
    let store = proflens::engine::run(&inv, &opener, plan, &mut |_| ControlFlow::Continue(()));
    let got = proflens::engine::export::comm::gpu_kernels(&store);
    assert_eq!(got.len(), 21);
    let (rep, _) = proflens::engine::export::comm::report(&store, &got, &opts).unwrap();
    let want = collectives(&kernels());
    assert_eq!(rep.collectives.len(), want.len());
    for (a, b) in rep.collectives.iter().zip(&want) {
        assert_eq!(a.collective_id, b.collective_id);
        assert_eq!(a.full_msg_mb, b.full_msg_mb);
        assert!((a.comm_latency_us - b.comm_latency_us).abs() < 1e-6);
    }
}

#[test]
fn kernels_no_row_holds_are_counted_with_the_reason() {
    use proflens::analysis::comm::{analyze, CommOptions, GPU_UNTABULATED};
    // The 6 broadcasts of HTA's trace are outside the implicit-sync kinds (communication.md
    // §5.6); kernels without collective args (a trace recorded without them) are the other
    // reason. Each GPU rank gets one located note; nothing is dropped silently.
    let mut ks = kernels();
    let rep = analyze(&[], &ks, &CommOptions::default());
    let notes: Vec<_> = rep
        .problems
        .iter()
        .filter(|p| p.code == GPU_UNTABULATED)
        .collect();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].at.file.as_ref(), "GPU rank 0");
    assert!(notes[0].message.starts_with("6 of its 21 NCCL/RCCL kernel(s) are not in the collectives table: 6 are point-to-point, broadcast"), "{}", notes[0].message);
    for k in ks.iter_mut().take(3) {
        k.collective = None;
    }
    let rep = analyze(&[], &ks, &CommOptions::default());
    let m = &rep
        .problems
        .iter()
        .find(|p| p.code == GPU_UNTABULATED)
        .unwrap()
        .message;
    assert!(m.contains("3 carry no `Collective name` argument"), "{m}");
}
