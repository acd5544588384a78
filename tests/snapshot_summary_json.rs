//! The snapshot tab's summary (`views::snapshot`, built from the analysis types) carries the
//! numbers and labels of the JSON report (`proflens snapshot FILE --json`, built by
//! `report::snapshot_json`): every real fixture, default and changed settings, every device,
//! point, leak, delayed free and warning compared field by field.

mod snapshot_common;

use std::ops::ControlFlow;
use std::process::Command;

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::read::snapshot::{run, SnapshotOptions};
use proflens::engine::session::snapshot_view::SnapshotView;
use proflens::protocol::{SnapshotSettingsDto, SnapshotSummaryDto};
use serde_json::Value;
use snapshot_common::{fixture_dir, fixture_names, temp_path};

/// The CLI flags of `settings` (the ones this test changes).
fn flags(s: &SnapshotSettingsDto) -> Vec<String> {
    let mut v = vec![
        "--top-n".to_string(),
        s.top_n.to_string(),
        "--top-contributors".into(),
        s.top_contributors.to_string(),
        "--link-style".into(),
        s.link_style.clone(),
    ];
    if let Some(r) = &s.repo_url {
        v.extend(["--repo-url".into(), r.clone()]);
    }
    if let Some(r) = &s.project_root {
        v.extend(["--project-root".into(), r.clone()]);
    }
    v
}

fn json_of(path: &std::path::Path, s: &SnapshotSettingsDto, out: &std::path::Path) -> Value {
    let mut args = vec![
        "snapshot".to_string(),
        path.display().to_string(),
        "--json".into(),
        out.display().to_string(),
    ];
    args.extend(flags(s));
    let o = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(&args)
        .output()
        .unwrap();
    let code = o.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "proflens {args:?}: exit {code}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
}

fn summary_of(path: &std::path::Path, s: &SnapshotSettingsDto) -> SnapshotSummaryDto {
    let (opener, files) = FsOpener::walk(path).unwrap();
    let opts = SnapshotOptions::from_settings(s).unwrap();
    let r = run(
        &opener,
        &files[0],
        &opts,
        &mut |_| ControlFlow::Continue(()),
    )
    .unwrap();
    SnapshotView::new(0, r, s.clone()).unwrap().summary()
}

fn ms(first: &Value, t: &Value) -> Option<f64> {
    Some((t.as_i64()? - first.as_i64()?) as f64 / 1000.0)
}

/// A JSON object of counts as (key, count) pairs in key order.
fn counts(v: &Value) -> Vec<(String, u64)> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, c)| (k.clone(), c.as_u64().unwrap()))
        .collect()
}

fn compare(name: &str, j: &Value, s: &SnapshotSummaryDto) {
    assert_eq!(s.bytes, j["bytes"].as_u64().unwrap(), "{name}");
    let f = &j["format"];
    assert_eq!(s.protocol as u64, f["protocol"].as_u64().unwrap(), "{name}");
    assert_eq!(s.top_level, f["top_level"].as_str().unwrap(), "{name}");
    for (flag, label) in [
        ("has_time_us", "time_us"),
        ("has_history", "legacy history"),
        ("has_annotations", "annotations"),
        ("has_compile_context", "compile_context"),
        ("has_user_metadata", "user_metadata"),
        ("has_fx_frames", "FX frames"),
    ] {
        let on = f[flag].as_bool().unwrap();
        assert_eq!(s.features.iter().any(|x| x == label), on, "{name} {flag}");
    }
    let settings: Option<Vec<(String, String)>> =
        serde_json::from_value(j["allocator_settings"].clone()).unwrap();
    assert_eq!(s.allocator_settings, settings, "{name}");
    let seg = &j["segments"];
    let n = |v: &Value| v.as_u64().unwrap();
    assert_eq!(
        s.segments,
        (
            n(&seg["count"]),
            n(&seg["total_size_sum"]),
            n(&seg["allocated_size_sum"]),
            n(&seg["expandable"]),
            n(&seg["private_pools"]),
        ),
        "{name}"
    );
    assert_eq!(s.block_states, counts(&seg["block_states"]), "{name}");
    assert_eq!(s.note, j["note"].as_str().unwrap(), "{name}");

    let devices: Vec<&Value> = j["devices"]
        .as_array()
        .unwrap()
        .iter()
        .chain(j["end_state_only"].as_array().unwrap())
        .collect();
    assert_eq!(s.devices.len(), devices.len(), "{name}");
    for (d, jd) in s.devices.iter().zip(devices) {
        let at = format!("{name} device {}", d.device);
        let first = &jd["first_time_us"];
        assert_eq!(d.device as u64, n(&jd["device"]), "{at}");
        assert_eq!(d.entries, n(&jd["entries"]), "{at}");
        assert_eq!(d.has_time, !first.is_null(), "{at}");
        assert_eq!(d.actions, counts(&jd["actions"]), "{at}");
        assert_eq!(d.streams, n(&jd["streams"]), "{at}");
        let i = |v: &Value| v.as_i64().unwrap();
        assert_eq!(
            d.baseline_bytes,
            (
                i(&jd["baseline_allocated_bytes"]),
                i(&jd["baseline_active_bytes"]),
                i(&jd["baseline_reserved_bytes"]),
            ),
            "{at}"
        );
        for (l, key) in [
            (&d.max_allocated, "max_allocated"),
            (&d.max_active, "max_active"),
            (&d.max_reserved, "max_reserved"),
        ] {
            let jl = &jd[key];
            assert_eq!(l.bytes, i(&jl["bytes"]), "{at} {key}");
            assert_eq!(l.index.map(u64::from), jl["index"].as_u64(), "{at} {key}");
            assert_eq!(l.time_ms, ms(first, &jl["time_us"]), "{at} {key}");
        }
        assert_eq!(d.records, n(&jd["records"]), "{at}");
        assert_eq!(d.pre_records, n(&jd["pre_records"]), "{at}");
        assert_eq!(
            d.unmatched_free_completed,
            n(&jd["unmatched_free_completed"]),
            "{at}"
        );
        let points = jd["points"].as_array().unwrap();
        assert_eq!(d.points.len(), points.len(), "{at}");
        let end = points.iter().find(|p| p["kind"] == "end");
        assert_eq!(
            d.duration_ms,
            end.and_then(|p| ms(first, &p["time_us"])),
            "{at}"
        );
        for (p, jp) in d.points.iter().zip(points) {
            let at = format!("{at} point {}", p.index);
            assert_eq!(p.kind, jp["kind"].as_str().unwrap(), "{at}");
            assert_eq!(p.index as u64, n(&jp["index"]), "{at}");
            assert_eq!(p.time_ms, ms(first, &jp["time_us"]), "{at}");
            assert_eq!(p.height_bytes, i(&jp["height_bytes"]), "{at}");
            assert_eq!(p.allocated_bytes, i(&jp["allocated_bytes"]), "{at}");
            assert_eq!(p.active_bytes, i(&jp["active_bytes"]), "{at}");
            assert_eq!(p.reserved_bytes, i(&jp["reserved_bytes"]), "{at}");
            assert_eq!(p.prominence_bytes, jp["prominence_bytes"].as_i64(), "{at}");
            assert_eq!(
                p.recurring.map(u64::from),
                jp["recurring"]["count"].as_u64(),
                "{at}"
            );
            let ann: Vec<String> = serde_json::from_value(jp["annotations"].clone()).unwrap();
            assert_eq!(p.annotations, ann, "{at}");
            assert_eq!(p.live_bytes, n(&jp["live_bytes"]), "{at}");
            assert_eq!(p.live_tensors, n(&jp["live_tensors"]), "{at}");
            assert_eq!(
                p.top_site.as_deref(),
                jp["contributors"][0]["site"].as_str(),
                "{at}"
            );
            assert_eq!(
                p.oom_requested_bytes,
                jp["oom_requested_bytes"].as_u64(),
                "{at}"
            );
        }
        let leaks = jd["leaks"].as_array().unwrap();
        assert_eq!(d.leaks.len(), leaks.len(), "{at}");
        for (c, jc) in d.leaks.iter().zip(leaks) {
            assert_eq!(c.site, jc["site"].as_str().unwrap(), "{at}");
            assert_eq!(c.link.as_deref(), jc["link"].as_str(), "{at}");
            assert_eq!(c.site_kind, jc["site_kind"].as_str().unwrap(), "{at}");
            assert_eq!(c.origin, jc["origin"].as_str().unwrap(), "{at}");
            assert_eq!(c.bytes, n(&jc["bytes"]), "{at}");
            assert_eq!(c.percent, jc["percent_of_point"].as_f64().unwrap(), "{at}");
            assert_eq!(c.tensors, n(&jc["tensors"]), "{at}");
            assert_eq!(
                c.first_alloc_index.map(u64::from),
                jc["first_alloc_index"].as_u64(),
                "{at}"
            );
            let chain: Vec<String> = serde_json::from_value(jc["chain"].clone()).unwrap();
            let labels: Vec<&str> = c.chain.iter().map(|f| f.label.as_str()).collect();
            assert_eq!(labels, chain, "{at}");
        }
        let delayed = jd["delayed_frees"].as_array().unwrap();
        assert_eq!(d.delayed_frees.len(), delayed.len(), "{at}");
        for (x, jx) in d.delayed_frees.iter().zip(delayed) {
            assert_eq!(x.code, jx["site"].as_str().unwrap(), "{at}");
            let bytes = proflens::report::snapshot_md::exact(i(&jx["bytes"]));
            assert!(x.message.starts_with(&bytes), "{at}: {}", x.message);
            let gap = format!("gap {} entries", n(&jx["max_gap_entries"]));
            assert!(x.message.contains(&gap), "{at}: {}", x.message);
        }
        let warnings = jd["warnings"].as_array().unwrap();
        assert_eq!(d.warnings.len(), warnings.len(), "{at}");
        for (w, jw) in d.warnings.iter().zip(warnings) {
            assert_eq!(w.code, jw["code"].as_str().unwrap(), "{at}");
            assert_eq!(w.message, jw["message"].as_str().unwrap(), "{at}");
        }
        let iw = &jd["in_window_replay"];
        assert_eq!(
            d.reference[0].1,
            format!(
                "{} @ entry {}",
                proflens::report::snapshot_md::exact(i(&iw["peak_bytes"])),
                i(&iw["peak_event_index"])
            ),
            "{at}"
        );
        let mv = &jd["memoryviz_like"];
        assert_eq!(
            d.reference[1].1,
            proflens::report::snapshot_md::exact(i(&mv["max_bytes"])),
            "{at}"
        );
        assert_eq!(
            d.reference[2].1,
            proflens::report::snapshot_md::exact(i(&mv["baseline_bytes"])),
            "{at}"
        );
    }
}

#[test]
fn the_summary_carries_the_json_reports_numbers_on_every_fixture() {
    let changed = SnapshotSettingsDto {
        top_n: 3,
        top_contributors: 2,
        link_style: "github".into(),
        repo_url: Some("https://github.com/o/r".into()),
        project_root: Some("/home".into()),
        ..SnapshotSettingsDto::default()
    };
    let mut devices = 0;
    let mut points = 0;
    let names = fixture_names();
    for name in &names {
        let path = fixture_dir().join(name);
        for (k, settings) in [SnapshotSettingsDto::default(), changed.clone()]
            .iter()
            .enumerate()
        {
            let out = temp_path(&format!("summary_{k}_{name}.json"));
            let j = json_of(&path, settings, &out);
            let s = summary_of(&path, settings);
            compare(&format!("{name} (settings {k})"), &j, &s);
            devices += s.devices.len();
            points += s.devices.iter().map(|d| d.points.len()).sum::<usize>();
        }
    }
    assert_eq!(names.len(), 13, "{names:?}");
    assert!(
        devices >= 2 * names.len() && points > devices,
        "{devices} {points}"
    );
}
