//! Cross-check of the Rust pipeline against the independent Python reference of
//! the spec's formulas (tests/reference/anomaly_ref.py), on every real capture with
//! a kernel table: msinsight level0/1/2, the msinsight st/ut ranks, and the two
//! msprof-analyze kernel_details.csv files.

mod engine_support;

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::Command;

use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::read::RankAnalysis;
use proflens::ingest::inventory::Inventory;
use serde_json::Value;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures/ascend/");

fn rust(folder: &Path, cfg: &AnomalyConfig) -> Vec<RankAnalysis> {
    let (opener, files) = FsOpener::walk(folder).expect("fixture folder");
    let mut inv = Inventory::from_paths(&files);
    proflens::parse::metadata::read_side_files(&mut inv, &opener);
    engine_support::anomaly_run(&inv, &opener, cfg, &mut |_| ControlFlow::Continue(()))
        .unwrap()
        .0
}

fn reference(arg: &Path, mode: &str) -> Value {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/anomaly_ref.py"
    );
    let out = Command::new("python3")
        .arg(script)
        .arg(arg)
        .arg(mode)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "reference failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("reference JSON")
}

fn close(a: f64, b: f64, tol: f64, what: &str) {
    assert!((a - b).abs() <= tol, "{what}: rust {a} vs reference {b}");
}

/// (folder given to the Rust pipeline, argument given to the reference)
fn cases() -> Vec<(PathBuf, PathBuf)> {
    let msi = PathBuf::from(FIX).join("Ascend__msinsight");
    let text = msi.join("test/data/pytorch/text");
    let mut v = Vec::new();
    for r in [
        "level0/rank0_ascend_pt",
        "level0/rank1_ascend_pt",
        "level1/rank0_ascend_pt",
        "level1/rank1_ascend_pt",
        "level2/rank0_ascend_pt",
    ] {
        v.push((text.join(r), text.join(r)));
    }
    v.push((
        msi.join("test/st/level2/rank_0_ascend_pt"),
        msi.join("test/st/level2/rank_0_ascend_pt"),
    ));
    for r in ["test_rank_0", "test_rank_1"] {
        let p = msi.join("server/src/test/test_data").join(r);
        v.push((p.clone(), p));
    }
    let mpa = PathBuf::from(FIX).join("Ascend__msprof-analyze/test/ut/advisor");
    for d in ["advisor_backend/compute_advice", "compute_advice/data"] {
        v.push((mpa.join(d), mpa.join(d).join("kernel_details.csv")));
    }
    v
}

fn check(mode: &str, cfg: &AnomalyConfig) {
    for (folder, refarg) in cases() {
        let ranks = rust(&folder, cfg);
        assert_eq!(ranks.len(), 1, "{}", folder.display());
        let r = &ranks[0].result;
        let k = &ranks[0].kernels;
        let want = reference(&refarg, mode);
        let ws = want["steps"].as_array().unwrap();
        let what = folder.display().to_string();
        assert_eq!(r.steps.len(), ws.len(), "{what}: step count");
        assert!(!ws.is_empty(), "{what}: reference found no step");
        for (s, w) in r.steps.iter().zip(ws) {
            let m = &s.metrics;
            let ms = |ns: i64| ns as f64 / 1e6;
            assert_eq!(s.step_id, w["step_id"].as_str().unwrap(), "{what}");
            close(
                ms(m.service_ns),
                w["service_ms"].as_f64().unwrap(),
                1e-5,
                &format!("{what} service"),
            );
            close(
                ms(m.busy_ns),
                w["device_busy_union_ms"].as_f64().unwrap(),
                1e-5,
                &format!("{what} busy"),
            );
            close(
                m.underfeed_ratio,
                w["underfeed_ratio"].as_f64().unwrap(),
                1e-7,
                &format!("{what} underfeed"),
            );
            close(
                ms(m.prelaunch_ns),
                w["prelaunch_gap_ms"].as_f64().unwrap(),
                1e-5,
                &format!("{what} prelaunch"),
            );
            close(
                ms(m.tail_ns),
                w["tail_gap_ms"].as_f64().unwrap(),
                1e-5,
                &format!("{what} tail"),
            );
            close(
                ms(m.internal_total_ns()),
                w["internal_bubble_total_ms"].as_f64().unwrap(),
                1e-5,
                &format!("{what} internal"),
            );
            close(
                ms(m.largest_internal_ns()),
                w["largest_internal_bubble_ms"].as_f64().unwrap(),
                1e-5,
                &format!("{what} largest"),
            );
            assert_eq!(
                m.bubble_count() as u64,
                w["bubble_count"].as_u64().unwrap(),
                "{what} bubbles"
            );
            assert_eq!(
                s.inventory.total_kernel_count as u64,
                w["kernel_count"].as_u64().unwrap(),
                "{what} kernels"
            );
            let heavy: Vec<&str> = s
                .tags
                .iter()
                .filter(|t| t.is_heavy())
                .map(|t| t.as_str())
                .collect();
            let wt: Vec<&str> = w["tags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap())
                .collect();
            assert_eq!(heavy, wt, "{what} tags");
        }
        if r.groups.len() == 1 && r.steps.len() == 1 {
            assert_eq!(
                r.groups[0].dominant_idle_pattern.as_str(),
                ws[0]["dominant_idle_pattern"].as_str().unwrap(),
                "{what} pattern"
            );
        }
        let g = &want["global_gaps"];
        close(
            r.global.capture.len_ns() as f64 / 1e6,
            g["capture_span_ms"].as_f64().unwrap(),
            1e-5,
            &format!("{what} span"),
        );
        close(
            r.global.busy_ns as f64 / 1e6,
            g["device_busy_union_ms"].as_f64().unwrap(),
            1e-5,
            &format!("{what} global busy"),
        );
        close(
            r.global.largest_ns() as f64 / 1e6,
            g["largest_gap_ms"].as_f64().unwrap(),
            1e-5,
            &format!("{what} largest gap"),
        );
        let top: Vec<f64> = r
            .global
            .top
            .iter()
            .map(|t| t.len_ns() as f64 / 1e6)
            .collect();
        let wtop: Vec<f64> = g["top_gap_ms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(top.len(), wtop.len(), "{what} top gaps");
        for (a, b) in top.iter().zip(&wtop) {
            close(*a, *b, 1e-5, &format!("{what} top gap"));
        }
        let wa = want["wait_anchor_top10"].as_array().unwrap();
        for (o, w) in r.wait_anchor_ops.iter().zip(wa) {
            assert_eq!(
                o.op_name,
                w["op_name"].as_str().unwrap(),
                "{what} wait anchor order"
            );
            assert_eq!(
                o.is_false_hotspot_risk,
                w["is_false_hotspot_risk"].as_bool().unwrap(),
                "{what} {}",
                o.op_name
            );
            close(
                o.wait_ratio,
                w["wait_ratio"].as_f64().unwrap(),
                1e-5,
                &format!("{what} {} ratio", o.op_name),
            );
        }
        match want["comm_wait_ratio_weighted"].as_f64() {
            Some(x) => close(
                r.comm.wait_ratio_weighted.unwrap(),
                x,
                1e-9,
                &format!("{what} comm wait"),
            ),
            None => assert!(r.comm.wait_ratio_weighted.is_none(), "{what}"),
        }
        let _ = k;
    }
}

#[test]
fn rulebook_matches_reference_on_every_real_kernel_table() {
    check("rulebook", &AnomalyConfig::spec_defaults());
}

#[test]
fn script_mode_matches_reference_on_every_real_kernel_table() {
    check("script", &AnomalyConfig::script_compatible());
}
