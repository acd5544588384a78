//! Epoch-µs times in the exports are written exactly from the integer ns: an f64
//! division printed a window that starts at …080 µs as …079.75 (JSON) / 1700000000000079.8.

mod anomaly_support;

use anomaly_support::*;
use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::engine::export::anomaly::write_json;
use proflens::report::anomaly_csv::{write_steps, CsvRank};

#[test]
fn epoch_times_are_exact_in_the_json_csv_and_markdown() {
    let cfg = AnomalyConfig::spec_defaults();
    // Two kernels at epoch µs ≈ 1.7e15 (f64 spacing 0.25 µs) with a 1 ms bubble between them.
    let k = kernel_csv(&[
        K("a", "AI_CORE", "1700000000000080", "10.123", "0", "2"),
        K("b", "AI_CORE", "1700000000001090.123", "10", "0", "2"),
    ]);
    let r = run_rank(k, None, &cfg);
    let mut json = Vec::new();
    write_json(&mut json, std::slice::from_ref(&r), &cfg).unwrap();
    let json = String::from_utf8(json).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v[0]["steps"].is_array());
    // The step window and the kernels, exactly (an f64 would give …079.75 / …080.2).
    assert!(json.contains("\"start_us\": 1700000000000080.0"), "{json}");
    assert!(
        json.contains("\"start_us\": 1700000000001090.123"),
        "{json}"
    );
    assert!(json.contains("\"end_us\": 1700000000001100.123"), "{json}");
    // The bubble between the kernels: [a.end, b.start].
    assert!(
        json.contains("\"start_us\": 1700000000000090.123"),
        "{json}"
    );
    assert!(
        !json.contains("079.75") && !json.contains("079.8"),
        "{json}"
    );
    let mut csv = Vec::new();
    write_steps(
        &[CsvRank {
            rank_id: r.meta.rank_id,
            rank_dir: &r.meta.rank_dir,
            result: &r.result,
            kernels: &r.kernels,
        }],
        &mut csv,
    )
    .unwrap();
    let csv = String::from_utf8(csv).unwrap();
    assert!(
        csv.contains(",1700000000000080.0,1700000000001100.123,"),
        "{csv}"
    );
    let md = proflens::report::anomaly_md::render(
        &r.kernels,
        &r.result,
        &r.meta,
        &r.cross_check,
        &[],
        None,
        &cfg,
    );
    assert!(
        md.contains("| 1700000000000090.123 | 1700000000001090.123 |"),
        "{md}"
    );
}
