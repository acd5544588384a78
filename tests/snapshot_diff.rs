//! `proflens diff` on snapshots: a pair whose differences are known by
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
    let f = |name: &str, line: u32| format!("{name} @ /home/u/proj/train.py:{line}");
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
            "| [cache @ /home/u/proj/train.py:40](vscode://file/home/u/proj/train.py:40) | 0 B | 8.00 MiB | +8.00 MiB | new |"
        ),
        "{md}"
    );
    assert!(md.contains("| −4.00 MiB | gone |"), "{md}");
    assert!(md.contains("Only side B has this device"), "{md}");
    assert!(
        md.contains("| 2 | 2 | – | order | 7.00 MiB | 12.0 MiB | +5.00 MiB | changed |"),
        "{md}"
    );
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
                for p in peak_rows(&d["matched_peaks"]) {
                    assert_eq!((p.6, p.7.as_str()), (0, "same"), "{name} peak {p:?}");
                    assert_ne!(p.3, "unmatched", "{name} peak {p:?}");
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

/// `(a_index, b_index, annotation, matched_by, a_bytes, b_bytes, delta_bytes, change)` rows.
type PeakRow = (
    Option<i64>,
    Option<i64>,
    Option<String>,
    String,
    i64,
    i64,
    i64,
    String,
);

fn peak_rows(t: &Value) -> Vec<PeakRow> {
    let s = |v: &Value| v.as_str().unwrap().to_string();
    t.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["a_index"].as_i64(),
                r["b_index"].as_i64(),
                r["annotation"].as_str().map(str::to_string),
                s(&r["matched_by"]),
                r["a_bytes"].as_i64().unwrap(),
                r["b_bytes"].as_i64().unwrap(),
                r["delta_bytes"].as_i64().unwrap(),
                s(&r["change"]),
            )
        })
        .collect()
}

fn peak(a: Option<i64>, b: Option<i64>, ann: Option<&str>, by: &str, ab: i64, bb: i64) -> PeakRow {
    let change = match (a, b) {
        (None, _) => "new",
        (_, None) => "gone",
        _ if ab == bb => "same",
        _ => "changed",
    };
    (
        a,
        b,
        ann.map(str::to_string),
        by.to_string(),
        ab,
        bb,
        bb - ab,
        change.to_string(),
    )
}

#[test]
fn matched_peaks_pair_by_annotation_then_by_order_with_exact_deltas() {
    let dir = pair_dir();
    // c/d: annotated (see snapshot_pair.py): warmup peak resized +1 MiB, the first step peak
    // unchanged, the global peak +2 MiB, one new peak in step on D.
    let j = diff_json(&dir.join("c.pickle"), &dir.join("d.pickle"), &[]);
    let d0 = &j["devices"][0];
    assert_eq!(
        peak_rows(&d0["matched_peaks"]),
        [
            peak(
                Some(1),
                Some(1),
                Some("warmup"),
                "annotation",
                5 * MIB,
                6 * MIB
            ),
            peak(
                Some(3),
                Some(5),
                Some("step"),
                "annotation",
                3 * MIB,
                3 * MIB
            ),
            peak(
                Some(5),
                Some(7),
                Some("step"),
                "annotation",
                7 * MIB,
                9 * MIB
            ),
            peak(None, Some(9), Some("step"), "unmatched", 0, 4 * MIB),
        ]
    );
    assert!(d0.get("overlay").is_none(), "no overlay unless asked");
    // a/b: no annotations, one peak each: matched by order; device 1 on B only.
    let j = diff_json(&dir.join("a.pickle"), &dir.join("b.pickle"), &[]);
    assert_eq!(
        peak_rows(&j["devices"][0]["matched_peaks"]),
        [peak(Some(2), Some(2), None, "order", 7 * MIB, 12 * MIB)]
    );
    assert_eq!(
        peak_rows(&j["devices"][1]["matched_peaks"]),
        [peak(None, Some(0), None, "unmatched", 0, MIB)]
    );
}

#[test]
fn overlaid_curves_align_at_an_annotation_with_exact_columns() {
    let dir = pair_dir();
    let (c, d) = (dir.join("c.pickle"), dir.join("d.pickle"));
    let j = diff_json(&c, &d, &["--overlay", "11", "--align", "step"]);
    let o = &j["devices"][0]["overlay"];
    // "step" starts before C's entry 3 and D's entry 5: aligned window [−5, 6), one entry
    // per column; C's 7 entries fill columns 2..=8.
    assert_eq!(
        (
            &o["axis"],
            &o["align"],
            &o["a_offset"],
            &o["b_offset"],
            &o["x0"],
            &o["x1"],
            &o["columns"]
        ),
        (
            &Value::from("index"),
            &Value::from("step"),
            &Value::from(3.0),
            &Value::from(5.0),
            &Value::from(-5.0),
            &Value::from(6.0),
            &Value::from(11)
        )
    );
    let mib = |v: &Value| -> Vec<Option<f64>> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().map(|b| b as f64 / MIB as f64))
            .collect()
    };
    let n = None;
    let s = |x: f64| Some(x);
    assert_eq!(o["a"][0]["curve"], "allocated");
    assert_eq!(
        mib(&o["a"][0]["min"]),
        [n, n, s(0.), s(1.), s(1.), s(1.), s(1.), s(1.), s(1.), n, n]
    );
    assert_eq!(
        mib(&o["a"][0]["max"]),
        [n, n, s(1.), s(5.), s(5.), s(3.), s(3.), s(7.), s(7.), n, n]
    );
    let blip = 1.0 + 1.0 / 1024.0;
    assert_eq!(
        mib(&o["b"][0]["max"]),
        [1., 6., 6., blip, blip, 3., 3., 9., 9., 4., 4.].map(Some)
    );
    assert_eq!(o["b"][1]["curve"], "reserved");
    assert_eq!(mib(&o["b"][1]["max"]), [Some(0.0); 11]);
    // Time axis: ms since each side's first entry (ms 1): "step" at ms 5 and ms 20.
    let j = diff_json(
        &c,
        &d,
        &[
            "--overlay",
            "4",
            "--overlay-axis",
            "time",
            "--align",
            "step",
        ],
    );
    let o = &j["devices"][0]["overlay"];
    assert_eq!(
        (&o["axis"], &o["a_offset"], &o["b_offset"]),
        (
            &Value::from("time_ms"),
            &Value::from(4.0),
            &Value::from(19.0)
        )
    );
    // Refusals in words: no time_us, an annotation a side lacks, --align without --overlay.
    let a = dir.join("a.pickle");
    for (extra, want) in [
        (
            &["--overlay", "8", "--overlay-axis", "time"][..],
            "has no time_us: use the index axis",
        ),
        (
            &["--overlay", "8", "--align", "nope"][..],
            "has no entry inside annotation \"nope\"",
        ),
        (
            &["--align", "step"][..],
            "--align and --overlay-axis apply with --overlay COLUMNS",
        ),
    ] {
        let src = if extra.contains(&"time") {
            a.clone()
        } else {
            c.clone()
        };
        let mut args = vec!["diff", src.to_str().unwrap(), src.to_str().unwrap()];
        args.extend_from_slice(extra);
        let (rc, _, err) = proflens(&args);
        assert_eq!(rc, 2, "{extra:?}");
        assert!(err.contains(want), "{extra:?}: {err}");
    }
}
