//! Synthetic snapshots for the fixture gaps (torch-snapshot.md §8.4), written by CPython's
//! pickler (`tests/reference/snapshot_synth.py`) with independently computed expected values.

mod snapshot_common;

use std::path::PathBuf;
use std::sync::OnceLock;

use proflens::analysis::snapshot::curves::{self, CurveKind};
use proflens::analysis::snapshot::device::{analyze, AnalysisOptions, PointKind};
use proflens::analysis::snapshot::lifetimes::{self, FLAG_NPU_WORKSPACE, PRE};
use proflens::analysis::snapshot::reference::{in_window_replay, memoryviz_like};
use proflens::model::snapshot::{SettingValue, TopLevel};
use serde_json::Value;
use snapshot_common::{decode_bytes, python};

fn synth_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("snapshot_synth_{}", std::process::id()));
        python("snapshot_synth.py", &[dir.to_str().unwrap()]);
        dir
    })
}

fn load(name: &str) -> (proflens::parse::pickle::Decoded, Option<Value>) {
    let dir = synth_dir();
    let bytes = std::fs::read(dir.join(format!("{name}.pickle"))).unwrap();
    let exp = std::fs::read_to_string(dir.join(format!("{name}.expected.json")))
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap());
    (
        decode_bytes(name, &bytes).unwrap_or_else(|e| panic!("{e}")),
        exp,
    )
}

/// Every device against the independent Python replay (SOURCES.md rules + §7.2–7.3 curves).
fn check_against_python(name: &str) {
    let (d, exp) = load(name);
    let snap = d.snapshot;
    let exp = exp.unwrap();
    let devs = exp["devices"].as_array().unwrap();
    assert_eq!(snap.devices.len(), devs.len(), "{name}: slots");
    for (dev, want) in snap.devices.iter().zip(devs) {
        assert_eq!(dev.entries.len() as u64, want["entries"].as_u64().unwrap());
        if dev.entries.is_empty() {
            continue;
        }
        assert_eq!(
            dev.entries.stream_values().len() as u64,
            want["streams"].as_u64().unwrap(),
            "{name} streams"
        );
        for (a, n) in dev.action_counts() {
            assert_eq!(
                Some(n),
                want["actions"][a.as_str()].as_u64(),
                "{name} action {a}"
            );
        }
        let iw = in_window_replay(dev);
        let w = &want["in_window_replay"];
        assert_eq!(iw.peak_bytes, w["peak_bytes"].as_u64().unwrap());
        assert_eq!(iw.peak_event_index, w["peak_event_index"].as_i64().unwrap());
        assert_eq!(iw.end_bytes, w["end_bytes"].as_u64().unwrap());
        assert_eq!(iw.live_at_end, w["live_at_end"].as_u64().unwrap());
        assert_eq!(
            iw.unmatched_free_completed,
            w["unmatched_free_completed"].as_u64().unwrap()
        );
        let mv = memoryviz_like(&snap, dev);
        let w = &want["memoryviz_like"];
        assert_eq!(mv.baseline_bytes, w["baseline_bytes"].as_u64().unwrap());
        assert_eq!(mv.max_bytes, w["max_bytes"].as_u64().unwrap());
        assert_eq!(mv.end_bytes, w["end_bytes"].as_u64().unwrap());
        assert_eq!(mv.elements, w["elements"].as_u64().unwrap());
        assert_eq!(
            mv.initially_allocated,
            w["initially_allocated"].as_u64().unwrap()
        );
        let lt = lifetimes::build(&snap, dev);
        let c = curves::build(&snap, dev, &lt);
        for (kind, key) in [
            (CurveKind::Allocated, "allocated"),
            (CurveKind::Active, "active"),
        ] {
            let w = &want["curves"][key];
            assert_eq!(
                c.baseline(kind),
                w["baseline"].as_i64().unwrap(),
                "{name} {key} baseline"
            );
            let (mx, at) = c.max(kind);
            assert_eq!(mx, w["max"].as_i64().unwrap(), "{name} {key} max");
            assert_eq!(
                at.map(|i| i as i64),
                w["max_index"].as_i64(),
                "{name} {key} max index"
            );
            assert_eq!(
                *c.get(kind).last().unwrap(),
                w["end"].as_i64().unwrap(),
                "{name} {key} end"
            );
        }
    }
}

#[test]
fn multi_device_multi_stream_matches_python_replay_in_protocols_2_4_5() {
    check_against_python("multi");
    check_against_python("multi_p2");
    check_against_python("multi_p5");
}

#[test]
fn multi_features_pools_oom_big_ints() {
    let (d, _) = load("multi");
    let snap = d.snapshot;
    let f = snap.features;
    assert!(
        f.has_time_us
            && f.has_annotations
            && f.has_compile_context
            && f.has_user_metadata
            && f.has_fx_frames
    );
    assert_eq!(snap.devices.len(), 3);
    let dev = &snap.devices[0];
    assert_eq!(dev.entries.stream_values(), &[0, 7]);
    // The 9-byte LONG1 address 2^63 + 4096 survives as u64.
    assert_eq!(dev.entries.addr()[2], (1u64 << 63) + 4096);
    assert!(dev.key_sets.iter().any(|k| k.contains("forward_frames")));
    assert!(dev
        .key_sets
        .iter()
        .any(|k| k == "action,device_free,frames,size,stream,time_us"));
    assert_eq!(dev.entries.device_free(), &[(8, 1 << 20)]);
    assert_eq!(
        snap.pools.strings.get(dev.entries.compile_ctx(1)),
        "region_a"
    );
    assert_eq!(snap.pools.strings.get(dev.entries.user_meta(1)), "step=3");
    assert_eq!(snap.segments[0].pool_id, (1, 2));
    assert_eq!(
        snap.setting("garbage_collection_threshold"),
        Some(&SettingValue::Float(0.0))
    );
    assert_eq!(
        snap.setting("expandable_segments"),
        Some(&SettingValue::Bool(false))
    );
    assert_eq!(snap.setting("max_split_size"), Some(&SettingValue::Int(-1)));
    assert_eq!(
        snap.other_fields,
        vec![(
            "custom_fork_key".to_string(),
            "{\"note\": \"kept under other fields\"}".to_string()
        )]
    );
    assert_eq!(snap.annotations.as_ref().map(|a| a.len()), Some(4));
    // The FX frame keeps fx_original_trace.
    let fx = (0..snap.pools.frames.len() as u32)
        .filter_map(|i| snap.pools.frames.get(proflens::model::snapshot::FrameId(i)))
        .find_map(|f| f.fx)
        .map(|s| snap.pools.strings.get(s).to_string());
    assert_eq!(fx.as_deref(), Some("File model.py, line 9"));

    let a = analyze(&snap, dev, &AnalysisOptions::spec_defaults());
    let oom = a
        .points
        .iter()
        .find(|p| p.kind == PointKind::Oom)
        .expect("OOM point");
    assert_eq!((oom.index, oom.oom), (8, Some((1 << 40, Some(1 << 20)))));
    let g = &a.points[0];
    assert_eq!(g.kind, PointKind::GlobalPeak);
    // Peak active at entry 7: 700 (PRE free) + 6000 (PRE end blocks 2000+4000 not live in trace)
    // + 3000 (big, pending free on stream 7) + 5000 + 2000.
    assert_eq!((g.index, g.height), (7, 16_700));
    assert_eq!(g.annotations, vec!["ProfilerStep#1".to_string()]);
    assert_eq!(g.compile_context.as_deref(), Some("region_a"));
    // Delayed free: free_requested at 6, free_completed at 9 on stream 7.
    assert_eq!(a.delayed.records, 2);
    assert!(a
        .delayed
        .by_site
        .iter()
        .any(|(c, gap, us)| c.bytes == 3000 && *gap == 3 && *us == Some(3)));
}

#[test]
fn legacy_list_computes_block_addresses() {
    let (d, _) = load("legacy_list");
    let snap = d.snapshot;
    assert_eq!(snap.features.top_level, TopLevel::SegmentsList);
    assert!(snap.devices.is_empty());
    let addrs: Vec<(u64, bool)> = snap
        .blocks
        .iter()
        .map(|b| (b.address, b.address_computed))
        .collect();
    assert_eq!(addrs, vec![(4096, true), (5120, true)]);
}

#[test]
fn torch_npu_workspace_triple_and_unknown_action() {
    let (d, _) = load("workspace");
    let snap = d.snapshot;
    let dev = &snap.devices[0];
    assert_eq!(dev.unknown_actions, vec![("mystery_action".to_string(), 1)]);
    let lt = lifetimes::build(&snap, dev);
    assert_eq!(lt.alloc_idx, vec![PRE, 3]);
    assert_eq!(lt.flags[0] & FLAG_NPU_WORKSPACE, FLAG_NPU_WORKSPACE);
}
