//! `proflens diff` on snapshots (issue 13 "Compare"): a pair whose differences are known by
//! construction (tests/reference/snapshot_pair.py, CPython's pickler), every real snapshot
//! against itself and against its protocol-5 re-pickling (all deltas zero), and the CLI's
//! refusals in words.

mod diff_common;
mod snapshot_common;

use std::path::{Path, PathBuf};

use diff_common::{diff_json, proflens};
use serde_json::Value;
use snapshot_common::{fixture_dir, fixture_names, python, repickled_dir};

const MIB: i64 = 1 << 20;

/// The constructed pair, written once per test run (the tests of this file run in parallel).
fn pair_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("diff_pair_{}", std::process::id()));
        python("snapshot_pair.py", &[dir.to_str().unwrap()]);
        dir
    })
    .clone()
}

/// `(site, a_bytes, b_bytes, delta_bytes, change)` rows of one table.
fn rows(t: &Value) -> Vec<(String, i64, i64, i64, String)> {
    t.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["site"].as_str().unwrap().to_string(),
                r["a_bytes"].as_i64().unwrap(),
                r["b_bytes"].as_i64().unwrap(),
                r["delta_bytes"].as_i64().unwrap(),
                r["change"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn row(site: &str, a: i64, b: i64, change: &str) -> (String, i64, i64, i64, String) {
    (site.to_string(), a, b, b - a, change.to_string())
}

#[test]
fn a_pair_made_with_known_differences_gives_exactly_those_deltas() {
    let dir = pair_dir();
    let j = diff_json(&dir.join("a.pickle"), &dir.join("b.pickle"), &[]);
    assert_eq!(j["kind"], "snapshot");
    assert_eq!(j["curve"], "active");
    let devs = j["devices"].as_array().unwrap();
    assert_eq!(devs.len(), 2);
    let d0 = &devs[0];
    assert_eq!(d0["device"], 0);
    assert_eq!(
        (d0["in_a"].as_bool(), d0["in_b"].as_bool()),
        (Some(true), Some(true))
    );
    let pair = |v: &Value| {
        (
            v["a_bytes"].as_i64().unwrap(),
            v["b_bytes"].as_i64().unwrap(),
            v["delta_bytes"].as_i64().unwrap(),
        )
    };
    assert_eq!(pair(&d0["peak"]), (7 * MIB, 12 * MIB, 5 * MIB));
    assert_eq!(pair(&d0["end"]), (5 * MIB, 9 * MIB, 4 * MIB));
    assert_eq!(d0["peak_index"], serde_json::json!([2, 2]));
    let f = |name: &str, line: u32| format!("{name} @ /work/proj/train.py:{line}");
    assert_eq!(
        rows(&d0["sites_at_peak"]),
        [
            row(&f("cache", 40), 0, 8 * MIB, "new"),
            row(&f("scratch", 30), 4 * MIB, 0, "gone"),
            row(&f("forward", 20), 2 * MIB, 3 * MIB, "changed"),
            row(&f("build", 10), MIB, MIB, "same"),
        ]
    );
    assert_eq!(
        rows(&d0["sites_at_end"]),
        [
            row(&f("cache", 40), 0, 8 * MIB, "new"),
            row(&f("scratch", 30), 4 * MIB, 0, "gone"),
            row(&f("build", 10), MIB, MIB, "same"),
        ]
    );
    // Device 1 is on side B only: compared with nothing.
    let d1 = &devs[1];
    assert_eq!(
        (d1["in_a"].as_bool(), d1["in_b"].as_bool()),
        (Some(false), Some(true))
    );
    assert_eq!(pair(&d1["peak"]), (0, MIB, MIB));
    assert_eq!(
        rows(&d1["sites_at_peak"]),
        [row(&f("other", 50), 0, MIB, "new")]
    );
    // Two devices of one file: B's device 1 against B's device 0, read once.
    let b = dir.join("b.pickle");
    let j = diff_json(&b, &b, &["--a-device", "0", "--b-device", "1"]);
    let d = &j["devices"][0];
    assert_eq!(
        (d["device"].as_i64(), d["b_device"].as_i64()),
        (Some(0), Some(1))
    );
    assert_eq!(pair(&d["peak"]), (12 * MIB, MIB, -11 * MIB));
}

#[test]
fn the_markdown_has_the_tables_links_and_signed_human_deltas() {
    let dir = pair_dir();
    let md_path = dir.join("diff.md");
    let (rc, _, err) = proflens(&[
        "diff",
        dir.join("a.pickle").to_str().unwrap(),
        dir.join("b.pickle").to_str().unwrap(),
        "--md",
        md_path.to_str().unwrap(),
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        err.contains("device 0: global peak 7.00 MiB → 12.0 MiB (+5242880 bytes)"),
        "{err}"
    );
    let md = std::fs::read_to_string(md_path).unwrap();
    assert!(
        md.contains("| global peak | 7.00 MiB | 12.0 MiB | +5.00 MiB |"),
        "{md}"
    );
    assert!(
        md.contains("| end | 5.00 MiB | 9.00 MiB | +4.00 MiB |"),
        "{md}"
    );
    assert!(
        md.contains(
            "| [cache @ /work/proj/train.py:40](vscode://file/work/proj/train.py:40) | 0 B | 8.00 MiB | +8.00 MiB | new |"
        ),
        "{md}"
    );
    assert!(md.contains("| −4.00 MiB | gone |"), "{md}");
    assert!(md.contains("Only side B has this device"), "{md}");
}

#[test]
fn every_real_snapshot_against_itself_and_its_protocol_5_repickling_has_no_delta() {
    let p5 = repickled_dir(5);
    let mut compared = 0;
    for name in fixture_names() {
        let orig = fixture_dir().join(&name);
        for other in [orig.clone(), p5.join(&name)] {
            let j = diff_json(&orig, &other, &[]);
            for d in j["devices"].as_array().unwrap() {
                for k in ["peak", "end"] {
                    assert_eq!(d[k]["delta_bytes"], 0, "{name} {k}");
                    assert_eq!(d[k]["a_bytes"], d[k]["b_bytes"], "{name} {k}");
                }
                for t in ["sites_at_peak", "sites_at_end"] {
                    for r in rows(&d[t]) {
                        assert_eq!((r.3, r.4.as_str()), (0, "same"), "{name} {t} {}", r.0);
                    }
                }
            }
            compared += 1;
        }
    }
    assert!(compared >= 20, "{compared} comparisons");
}

#[test]
fn a_folder_against_a_snapshot_missing_devices_and_bad_curves_are_refused_in_words() {
    let dir = pair_dir();
    let a = dir.join("a.pickle");
    let (rc, _, err) = proflens(&["diff", dir.to_str().unwrap(), a.to_str().unwrap()]);
    assert_eq!(rc, 2);
    assert!(err.contains("are not the same kind of input"), "{err}");
    let (rc, _, err) = proflens(&[
        "diff",
        a.to_str().unwrap(),
        a.to_str().unwrap(),
        "--b-device",
        "3",
    ]);
    assert_eq!(rc, 2);
    assert!(err.contains("side B has no device 3 (devices: 0)"), "{err}");
    let (rc, _, err) = proflens(&[
        "diff",
        a.to_str().unwrap(),
        a.to_str().unwrap(),
        "--curve",
        "x",
    ]);
    assert_eq!(rc, 2);
    assert!(
        err.contains("--curve: expected allocated, active or reserved"),
        "{err}"
    );
}
