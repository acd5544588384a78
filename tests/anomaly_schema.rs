//! JSON Schema validation of every produced anomaly result (anomaly.md §6):
//! the schema files live in fixtures/anomaly/schema/, the validator is Python
//! `jsonschema` (tests/reference/anomaly_validate.py, installed idempotently).

mod engine_support;

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::Command;

use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::cli::fs_opener::FsOpener;
use proflens::ingest::inventory::Inventory;
use proflens::report::anomaly_json;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures/ascend/");

fn validate(json: &serde_json::Value, tag: &str) -> (bool, String) {
    let dir = std::env::temp_dir().join(format!("proflens-anom-schema-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{tag}.json"));
    std::fs::write(&path, serde_json::to_vec(json).unwrap()).unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/anomaly_validate.py"
    );
    let out = Command::new("python3")
        .arg(script)
        .arg(&path)
        .output()
        .expect("python3");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn produce(folder: &Path, cfg: &AnomalyConfig) -> serde_json::Value {
    let (opener, files) = FsOpener::walk(folder).expect("folder");
    let mut inv = Inventory::from_paths(&files);
    proflens::parse::metadata::read_side_files(&mut inv, &opener);
    let (ranks, _) =
        engine_support::anomaly_run(&inv, &opener, cfg, &mut |_| ControlFlow::Continue(()))
            .unwrap();
    assert!(!ranks.is_empty(), "{}", folder.display());
    let v: Vec<_> = ranks
        .iter()
        .map(|r| anomaly_json::build(&r.kernels, &r.result, &r.meta, cfg))
        .collect();
    serde_json::to_value(v).unwrap()
}

#[test]
fn every_real_capture_validates_in_both_modes() {
    let msi = PathBuf::from(FIX).join("Ascend__msinsight");
    let folders = [
        msi.join("test/data/pytorch/text/level0"),
        msi.join("test/data/pytorch/text/level1"),
        msi.join("test/data/pytorch/text/level2"),
        msi.join("test/st/level2"),
        msi.join("server/src/test/test_data/test_rank_0"),
        PathBuf::from(FIX).join("Ascend__msprof-analyze/test/ut/advisor/compute_advice/data"),
    ];
    for (i, f) in folders.iter().enumerate() {
        for (m, cfg) in [
            ("rb", AnomalyConfig::spec_defaults()),
            ("sc", AnomalyConfig::script_compatible()),
        ] {
            let v = produce(f, &cfg);
            let (ok, msg) = validate(&v, &format!("real{i}{m}"));
            assert!(ok, "{}: {msg}", f.display());
        }
    }
}

#[test]
fn schema_rejects_a_result_missing_required_fields() {
    let f = PathBuf::from(FIX).join("Ascend__msinsight/test/data/pytorch/text/level1");
    let mut v = produce(&f, &AnomalyConfig::spec_defaults());
    v[0]["anomaly_discovery"]
        .as_object_mut()
        .unwrap()
        .remove("confidence");
    v[0]["anomaly_discovery"]["bubble_windows"][0]["scope"] = serde_json::json!("sideways");
    v[1]["steps"][0]
        .as_object_mut()
        .unwrap()
        .remove("service_ms");
    let (ok, msg) = validate(&v, "broken");
    assert!(!ok);
    assert!(msg.contains("'confidence' is a required property"), "{msg}");
    assert!(msg.contains("'sideways' is not one of"), "{msg}");
    assert!(msg.contains("'service_ms' is a required property"), "{msg}");
}
