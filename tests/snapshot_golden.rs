//! Golden tests: every `fixtures/torch_snapshots` pickle against `EXPECTED.json`
//! (torch-snapshot.md §8), also re-pickled with protocol 5 by the CPython
//! helper `tests/reference/snapshot_repickle.py`.

mod snapshot_common;

use proflens::analysis::snapshot::reference::{in_window_replay, memoryviz_like};
use proflens::model::snapshot::{Snapshot, TopLevel};
use proflens::parse::pickle::opcodes::names_present;
use serde_json::Value;
use snapshot_common::{decode_bytes, expected, fixture_dir, fixture_names};

fn check_structure(name: &str, snap: &Snapshot, exp: &Value, check_opcodes: bool) {
    let ctx = |what: &str| format!("{name}: {what}");
    if check_opcodes {
        let ops: Vec<&str> = exp["opcodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let mut want = ops.clone();
        want.sort_unstable();
        assert_eq!(
            names_present(&snap.opcode_histogram),
            want,
            "{}",
            ctx("opcodes")
        );
        assert_eq!(
            snap.features.protocol as u64,
            exp["pickle_protocol"].as_u64().unwrap()
        );
    }
    match exp["top_level"].as_str().unwrap() {
        "dict" => {
            assert_eq!(
                snap.features.top_level,
                TopLevel::Dict,
                "{}",
                ctx("top_level")
            );
            let keys: Vec<String> = exp["top_keys"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            assert_eq!(snap.top_keys, keys, "{}", ctx("top_keys"));
        }
        other => {
            assert!(other.starts_with("list"), "{other}");
            assert_eq!(
                snap.features.top_level,
                TopLevel::SegmentsList,
                "{}",
                ctx("top_level")
            );
        }
    }
    let seg = &exp["segments"];
    assert_eq!(
        snap.segments.len() as u64,
        seg["count"].as_u64().unwrap(),
        "{}",
        ctx("segment count")
    );
    let mut devs: Vec<i64> = snap.segments.iter().map(|s| s.device).collect();
    devs.sort_unstable();
    devs.dedup();
    let want_devs: Vec<i64> = seg["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(devs, want_devs, "{}", ctx("segment devices"));
    let total: u64 = snap.segments.iter().map(|s| s.total_size).sum();
    let alloc: u64 = snap.segments.iter().map(|s| s.allocated_size).sum();
    assert_eq!(
        total,
        seg["total_size_sum"].as_u64().unwrap(),
        "{}",
        ctx("total_size_sum")
    );
    assert_eq!(
        alloc,
        seg["allocated_size_sum"].as_u64().unwrap(),
        "{}",
        ctx("allocated_size_sum")
    );
    let states = seg["block_states"].as_object().unwrap();
    for (state, n) in states {
        let got = snap
            .blocks
            .iter()
            .filter(|b| b.state.name(&snap.pools.strings) == *state)
            .count();
        assert_eq!(
            got as u64,
            n.as_u64().unwrap(),
            "{}",
            ctx(&format!("blocks {state}"))
        );
    }
    let known: u64 = states.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(snap.blocks.len() as u64, known, "{}", ctx("block count"));
    let hist = snap.blocks.iter().filter(|b| b.has_history).count() as u64;
    assert_eq!(
        hist,
        seg["legacy_history_blocks"].as_u64().unwrap(),
        "{}",
        ctx("history blocks")
    );
    match exp.get("external_annotations") {
        Some(a) => {
            let n = snap.annotations.as_ref().map(|v| v.len() as u64);
            assert_eq!(
                n,
                Some(a["count"].as_u64().unwrap_or_else(|| a.as_u64().unwrap())),
                "{}",
                ctx("annotations")
            );
        }
        None => assert!(
            snap.annotations.is_none(),
            "{}",
            ctx("annotations key absent")
        ),
    }
    let traces = exp["device_traces"].as_array().cloned().unwrap_or_default();
    assert_eq!(snap.devices.len(), traces.len(), "{}", ctx("device slots"));
    for (dev, want) in snap.devices.iter().zip(&traces) {
        let d = format!("device {}", dev.device);
        assert_eq!(dev.device as u64, want["device"].as_u64().unwrap());
        assert_eq!(
            dev.entries.len() as u64,
            want["entries"].as_u64().unwrap(),
            "{}",
            ctx(&d)
        );
        if dev.entries.is_empty() {
            continue;
        }
        let actions = want["actions"].as_object().unwrap();
        let got = dev.action_counts();
        assert_eq!(
            got.len(),
            actions.len(),
            "{}",
            ctx(&format!("{d} action kinds {got:?}"))
        );
        for (a, n) in &got {
            assert_eq!(
                Some(*n),
                actions[a.as_str()].as_u64(),
                "{}",
                ctx(&format!("{d} action {a}"))
            );
        }
        let keys: Vec<String> = want["entry_key_sets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert_eq!(dev.key_sets, keys, "{}", ctx(&format!("{d} key sets")));
        assert_eq!(
            dev.max_frames as u64,
            want["max_frames"].as_u64().unwrap(),
            "{}",
            ctx(&format!("{d} max_frames"))
        );
        assert_eq!(
            dev.entries.stream_values().len() as u64,
            want["streams"].as_u64().unwrap(),
            "{}",
            ctx(&d)
        );
        let iw = in_window_replay(dev);
        let w = &want["in_window_replay"];
        assert_eq!(
            iw.peak_bytes,
            w["peak_bytes"].as_u64().unwrap(),
            "{}",
            ctx(&format!("{d} peak_bytes"))
        );
        assert_eq!(
            iw.peak_event_index,
            w["peak_event_index"].as_i64().unwrap(),
            "{}",
            ctx(&format!("{d} peak idx"))
        );
        assert_eq!(
            iw.end_bytes,
            w["end_bytes"].as_u64().unwrap(),
            "{}",
            ctx(&format!("{d} end_bytes"))
        );
        assert_eq!(
            iw.live_at_end,
            w["live_at_end"].as_u64().unwrap(),
            "{}",
            ctx(&format!("{d} live_at_end"))
        );
        assert_eq!(
            iw.unmatched_free_completed,
            w["unmatched_free_completed"].as_u64().unwrap(),
            "{}",
            ctx(&d)
        );
        let mv = memoryviz_like(snap, dev);
        let w = &want["memoryviz_like"];
        assert_eq!(
            mv.baseline_bytes,
            w["baseline_bytes"].as_u64().unwrap(),
            "{}",
            ctx(&format!("{d} baseline"))
        );
        assert_eq!(
            mv.max_bytes,
            w["max_bytes"].as_u64().unwrap(),
            "{}",
            ctx(&format!("{d} max"))
        );
        assert_eq!(
            mv.end_bytes,
            w["end_bytes"].as_u64().unwrap(),
            "{}",
            ctx(&format!("{d} end"))
        );
        assert_eq!(
            mv.elements,
            w["elements"].as_u64().unwrap(),
            "{}",
            ctx(&format!("{d} elements"))
        );
        assert_eq!(
            mv.initially_allocated,
            w["initially_allocated"].as_u64().unwrap(),
            "{}",
            ctx(&d)
        );
    }
}

#[test]
fn every_fixture_matches_expected_json() {
    let exp = expected();
    let names = fixture_names();
    assert_eq!(names.len(), 13, "the 13 fixtures of SOURCES.md");
    for name in &names {
        let bytes = std::fs::read(fixture_dir().join(name)).unwrap();
        assert_eq!(bytes.len() as u64, exp[name]["bytes"].as_u64().unwrap());
        let decoded = decode_bytes(name, &bytes).unwrap_or_else(|e| panic!("{e}"));
        check_structure(name, &decoded.snapshot, &exp[name], true);
    }
}

#[test]
fn every_fixture_repickled_with_protocol_5_matches_expected_json() {
    let exp = expected();
    let dir = snapshot_common::repickled_dir(5);
    for name in fixture_names() {
        let bytes = std::fs::read(dir.join(&name)).unwrap();
        assert_eq!(&bytes[..2], &[0x80, 5], "{name}: protocol 5 header");
        let decoded = decode_bytes(&name, &bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(decoded.snapshot.features.protocol, 5);
        check_structure(&name, &decoded.snapshot, &exp[&name], false);
    }
}

#[test]
fn every_fixture_repickled_with_protocol_2_matches_expected_json() {
    let exp = expected();
    let dir = snapshot_common::repickled_dir(2);
    for name in fixture_names() {
        let bytes = std::fs::read(dir.join(&name)).unwrap();
        let decoded = decode_bytes(&name, &bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(decoded.snapshot.features.protocol, 2);
        let h = &decoded.snapshot.opcode_histogram;
        assert!(
            h[b'q' as usize] + h[b'r' as usize] > 0,
            "{name}: protocol 2 memoizes with BINPUT"
        );
        check_structure(&name, &decoded.snapshot, &exp[&name], false);
    }
}

#[test]
fn frame_sharing_is_interned_by_content() {
    // torch-snapshot.md §8.3: 551 distinct frames, 152 distinct stacks in trace entries.
    let name = "cranberrii_ftcourse__memory_snapshot.pickle";
    let bytes = std::fs::read(fixture_dir().join(name)).unwrap();
    let snap = decode_bytes(name, &bytes).unwrap().snapshot;
    let dev = &snap.devices[0];
    let mut stacks: Vec<_> = dev.entries.stack().to_vec();
    stacks.sort_unstable();
    stacks.dedup();
    assert_eq!(stacks.len(), 152);
    let refs: usize = dev
        .entries
        .stack()
        .iter()
        .map(|s| snap.pools.stacks.get(*s).len())
        .sum();
    assert_eq!(refs, 984_474);
    let mut frames: Vec<_> = stacks
        .iter()
        .flat_map(|s| snap.pools.stacks.get(*s).to_vec())
        .collect();
    frames.sort_unstable();
    frames.dedup();
    assert_eq!(frames.len(), 551);
}

#[test]
fn distinct_trace_stacks_per_fixture() {
    // torch-snapshot.md §8.3.
    for (name, want) in [
        ("ZidongLiu_DeComFL__memory.pickle", 205),
        ("bcrafton_assignment2-systems__memory_snapshot.pickle", 142),
        ("silmont2000_assignment2-systems__memory_forward_bf16_128.pickle", 133),
        ("Ascend_msinsight__scripts_MemSnapDump_test_test-data_snapshot_expandable.pkl", 60),
        ("Ascend_msinsight__scripts_MemSnapDump_test_test-data_snapshot_with_empty_cache.pkl", 61),
        ("Ascend_msinsight__scripts_MemSnapDump_test_test-data_snapshot_with_empty_cache_expandable.pkl", 61),
    ] {
        let bytes = std::fs::read(fixture_dir().join(name)).unwrap();
        let snap = decode_bytes(name, &bytes).unwrap().snapshot;
        let mut stacks: Vec<_> = snap.devices[0].entries.stack().to_vec();
        stacks.sort_unstable();
        stacks.dedup();
        assert_eq!(stacks.len(), want, "{name}");
    }
    let name = "Ascend_msinsight__scripts_MemSnapDump_test_test-data_snapshot_expandable.pkl";
    let snap = decode_bytes(name, &std::fs::read(fixture_dir().join(name)).unwrap())
        .unwrap()
        .snapshot;
    let empty = snap.devices[0]
        .entries
        .stack()
        .iter()
        .filter(|s| snap.pools.stacks.get(**s).is_empty())
        .count();
    assert_eq!(empty, 3_723);
}
