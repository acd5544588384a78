//! A cut trace (formats.md §8, §8.1): the real MI300X trace of TraceLens cut after 30,000 of
//! its compressed bytes ends (inflated) at byte 485,040, before its first kernel (at byte
//! 12,715,391 of the whole text). As a `.json.gz` and as the same text in a plain file it gets
//! the same located warning, and the rank's limitation leads with the cut, never with capture
//! advice.

use std::io::Read;
use std::ops::ControlFlow;

use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::base::{Problems, Severity};
use proflens::ingest::inventory::Inventory;
use proflens::ingest::MemOpener;

const MI300: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/real_world/AMD-AGI__TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"
);

/// The fixture's first 30,000 bytes, and the text they inflate to (up to the cut).
fn cut() -> (Vec<u8>, Vec<u8>) {
    let gz = std::fs::read(MI300).expect("fixture")[..30_000].to_vec();
    let mut text = Vec::new();
    let mut dec = flate2::read::GzDecoder::new(&gz[..]);
    let mut buf = [0u8; 8192];
    loop {
        match dec.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => text.extend_from_slice(&buf[..n]),
        }
    }
    (gz, text)
}

/// The problems, the limitations and the kernel count of the one rank of a drop of `path`.
fn analyse(path: &str, bytes: Vec<u8>) -> (Problems, Vec<String>, usize) {
    let mut m = MemOpener::new();
    m.add(path, bytes);
    let mut inv = Inventory::from_paths(&m.list());
    proflens::parse::metadata::read_side_files(&mut inv, &m);
    let plan = proflens::engine::Plan {
        anomaly: Some(AnomalyConfig::spec_defaults()),
        ..proflens::engine::Plan::none()
    };
    let store = proflens::engine::run(&inv, &m, plan, &mut |_| ControlFlow::Continue(()));
    let ranks = store.anomaly_ranks().unwrap();
    assert_eq!(ranks.len(), 1);
    let r = ranks[0];
    (
        r.problems.clone(),
        r.result.limitations.clone(),
        r.kernels.len(),
    )
}

#[test]
fn a_cut_gz_and_a_cut_plain_trace_get_the_same_warning_and_lead_with_the_cut() {
    let (gz, text) = cut();
    assert_eq!(text.len(), 485_040);
    for (path, bytes) in [
        ("run/rank0.pt.trace.json.gz", gz),
        ("run/rank0.pt.trace.json", text),
    ] {
        let (problems, lim, kernels) = analyse(path, bytes);
        assert_eq!(problems.count("GPU-TV-004"), 0, "{path}");
        let cuts: Vec<_> = problems
            .kept()
            .iter()
            .filter(|p| p.code == "GPU-TV-001")
            .collect();
        assert_eq!(cuts.len(), 1, "{path}");
        let c = cuts[0];
        assert_eq!((c.severity, c.at.byte), (Severity::Warning, Some(485_040)));
        let of_text = if path.ends_with(".gz") {
            " of its inflated text"
        } else {
            ""
        };
        assert!(
            c.message.starts_with(&format!(
                "rank0.pt.trace.json{} ends early (at byte 485040{of_text}, inside the event that starts at byte 484882)",
                if of_text.is_empty() { "" } else { ".gz" }
            )),
            "{}",
            c.message
        );
        assert!(
            c.message.ends_with(
                "events read so far are used (1214 events; the last one ends at byte 484878)"
            ),
            "{}",
            c.message
        );
        if !of_text.is_empty() {
            assert!(c.message.contains("after 30000 compressed bytes of 30000"));
        }
        assert_eq!(kernels, 0);
        let (cut, why) = proflens::analysis::gpu_rank::no_device_events(&lim).expect(path);
        assert!(cut, "{why}");
        assert!(
            why.starts_with(
                "cut trace: the file ends at byte 485040 (GPU-TV-001) before any device event"
            ),
            "{why}"
        );
        assert!(!why.contains("profiled without"), "{why}");
        let run = problems
            .kept()
            .iter()
            .find(|p| p.code == "GPU-RUN-001")
            .unwrap();
        assert_eq!(&run.message, why);
    }
}

#[test]
fn a_whole_host_only_trace_keeps_its_capture_advice() {
    let text = br#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5}]}"#;
    let (_, lim, _) = analyse("run/rank0.pt.trace.json", text.to_vec());
    let (cut, why) = proflens::analysis::gpu_rank::no_device_events(&lim).unwrap();
    assert!(!cut);
    assert!(
        why.starts_with("host-only trace: no device events"),
        "{why}"
    );
    assert!(
        why.contains("profiled without CUDA/ROCm activities"),
        "{why}"
    );
}
