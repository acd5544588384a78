//! The timeline's lanes and level-of-detail boxes on the real msinsight `level1` ranks,
//! cross-checked against `tests/reference/timeline_ref.py` (an independent reading of
//! kernel_details.csv and trace_view.json with Python's standard library).

mod engine_support;

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::Command;

use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::cli::fs_opener::FsOpener;
use proflens::ingest::inventory::Inventory;
use proflens::protocol::LaneKind;
use proflens::views::timeline::{TimelineIndex, TimelineQuery, TimelineSource};

fn level1() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1"
    ))
}

/// Zoomed windows, ns relative to the origin, and widths: 1 ms at 800 px, 50 µs at 1000 px.
const ZOOMS: [(i64, i64, u32); 2] = [
    (20_000_000, 21_000_000, 800),
    (20_950_000, 21_000_000, 1000),
];

fn reference(rank_dir: &str) -> serde_json::Value {
    let mut cmd = Command::new("python3");
    cmd.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/timeline_ref.py"
    ))
    .arg(level1().join(rank_dir))
    .arg("1600");
    for (a, b, w) in ZOOMS {
        cmd.args([a.to_string(), b.to_string(), w.to_string()]);
    }
    let out = cmd.output().expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("reference JSON")
}

/// Both ranks of level1, analysed with the spec defaults.
fn level1_ranks() -> Vec<proflens::engine::read::RankAnalysis> {
    let (opener, files) = FsOpener::walk(&level1()).expect("fixture folder");
    let mut inv = Inventory::from_paths(&files);
    proflens::parse::metadata::read_side_files(&mut inv, &opener);
    engine_support::anomaly_run(&inv, &opener, &AnomalyConfig::spec_defaults(), &mut |_| {
        ControlFlow::Continue(())
    })
    .unwrap()
    .0
}

#[test]
fn level1_lanes_and_merged_boxes_match_the_python_reference() {
    let ranks = level1_ranks();
    assert_eq!(ranks.len(), 2);
    for (n, r) in ranks.iter().enumerate() {
        let dir = format!("rank{n}_ascend_pt");
        let want = reference(&dir);
        let src = TimelineSource {
            kernels: &r.kernels,
            trace: r.trace.as_ref(),
            result: &r.result,
            runtime: "CANN",
        };
        let ix = TimelineIndex::new(src);
        assert_eq!(
            ix.origin_ns(),
            want["origin_ns"].as_i64().unwrap(),
            "{dir} origin"
        );
        let full = TimelineQuery {
            x_range_ms: None,
            width_px: 1600,
        };
        let d = ix.build(src, n as u32, &full);
        // Device lanes: the reference's stream keys, in numeric order then `hccl`.
        let want_lanes = want["lanes"].as_object().unwrap();
        let mut keys: Vec<&String> = want_lanes.keys().collect();
        keys.sort_by_key(|k| (k.parse::<i64>().unwrap_or(i64::MAX), k.to_string()));
        let device: Vec<_> = d
            .lanes
            .iter()
            .filter(|l| l.kind == LaneKind::Device)
            .collect();
        let labels: Vec<String> = device.iter().map(|l| l.label.clone()).collect();
        let want_labels: Vec<String> = keys.iter().map(|k| format!("stream {k}")).collect();
        assert_eq!(labels, want_labels, "{dir} device lanes");
        for (lane, key) in keys.iter().enumerate() {
            let w = &want_lanes[key.as_str()];
            assert_eq!(
                device[lane].total,
                w["total"].as_u64().unwrap(),
                "{dir} {key} total"
            );
            let queries =
                std::iter::once(full).chain(ZOOMS.iter().map(|&(a, b, px)| TimelineQuery {
                    x_range_ms: Some((a as f64 / 1e6, b as f64 / 1e6)),
                    width_px: px,
                }));
            for (wi, q) in queries.enumerate() {
                let got: Vec<[i64; 4]> = ix
                    .lane_boxes(lane, &q)
                    .iter()
                    .map(|b| [b.start_ns, b.end_ns, b.count as i64, b.busy_ns])
                    .collect();
                let exp: Vec<[i64; 4]> = w["windows"][wi]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| {
                        let v: Vec<i64> = b
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|x| x.as_i64().unwrap())
                            .collect();
                        [v[0], v[1], v[2], v[3]]
                    })
                    .collect();
                assert_eq!(got, exp, "{dir} {key} window {wi}");
                if wi == 0 {
                    assert_eq!(
                        device[lane].boxes.count.len(),
                        exp.len(),
                        "{dir} {key} DTO boxes"
                    );
                    let n: i64 = exp.iter().map(|b| b[2]).sum();
                    assert_eq!(device[lane].in_window as i64, n);
                }
            }
        }
        // Host lanes: one per Python/CANN thread, counts from the reference.
        let host: BTreeMap<String, u64> = d
            .lanes
            .iter()
            .filter(|l| l.kind == LaneKind::Host)
            .map(|l| (l.label.split_once(' ').unwrap().1.to_string(), l.total))
            .collect();
        let want_host: BTreeMap<String, u64> = want["host"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
            .collect();
        assert_eq!(host, want_host, "{dir} host lanes");
        // One step band; every emitted window of the rank is drawn or repeats a drawn one.
        assert_eq!(d.steps.len(), 1);
        assert_eq!(d.steps[0].step_id, "ProfilerStep#50");
        let drawn: u32 = d.bubbles.iter().map(|b| b.merged).sum();
        let globals_repeating = r
            .result
            .bubbles
            .iter()
            .filter(|b| {
                b.window.scope.as_str() == "global"
                    && r.result.bubbles.iter().any(|o| {
                        o.window.scope.as_str() != "global"
                            && o.window.interval == b.window.interval
                    })
            })
            .count();
        assert_eq!(
            drawn as usize + globals_repeating,
            r.result.bubbles.len(),
            "{dir} bubbles"
        );
    }
}

#[test]
fn level1_search_finds_every_matmul_kernel_in_time_order() {
    let ranks = level1_ranks();
    let r = &ranks[0];
    // The kernels named like matmul, counted from the CSV itself.
    let csv_path = level1().join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv");
    let mut rd = csv::Reader::from_path(&csv_path).unwrap();
    let name_col = rd
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "Name")
        .unwrap();
    let want = rd
        .records()
        .filter(|rec| {
            rec.as_ref().unwrap()[name_col]
                .to_lowercase()
                .contains("matmul")
        })
        .count();
    assert_eq!(want, 14);
    let src = TimelineSource {
        kernels: &r.kernels,
        trace: r.trace.as_ref(),
        result: &r.result,
        runtime: "CANN",
    };
    let ix = TimelineIndex::new(src);
    let d = ix.search(src, 0, "MatMul", 10_000);
    let device: Vec<_> = d
        .matches
        .iter()
        .filter(|m| m.kind == proflens::protocol::LaneKind::Device)
        .collect();
    assert_eq!(device.len(), want);
    assert_eq!(d.total as usize, d.matches.len());
    assert!(d
        .matches
        .iter()
        .all(|m| m.name.to_lowercase().contains("matmul")));
    assert!(d.matches.windows(2).all(|w| w[0].start_ms <= w[1].start_ms));
    // The limit keeps the earliest matches and still counts all of them.
    let first = ix.search(src, 0, "matmul", 3);
    assert_eq!(first.total, d.total);
    assert_eq!(first.matches, d.matches[..3].to_vec());
}
