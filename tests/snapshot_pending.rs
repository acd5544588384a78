//! `active_pending_free` end blocks count as active (torch-snapshot.md §3.2
//! `active_size`, §7.3): on a state-only snapshot shaped like the RL one of the issue
//! (`tests/reference/snapshot_pending.py`: 68 private pools, 9 pending-free blocks holding
//! 597 MB, written by CPython), active = allocated + pending, allocated leaves them out, and a
//! warning says so. On the old code active was reported equal to allocated.

mod snapshot_common;

use std::path::{Path, PathBuf};

use proflens::analysis::snapshot::device::{analyze, AnalysisOptions, PointKind};
use snapshot_common::{decode_bytes, python};

fn made() -> (PathBuf, serde_json::Value) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("snapshot_pending");
    python("snapshot_pending.py", &[dir.to_str().unwrap()]);
    let exp = std::fs::read_to_string(dir.join("rl_state.expected.json")).unwrap();
    (
        dir.join("rl_state.pickle"),
        serde_json::from_str(&exp).unwrap(),
    )
}

#[test]
fn pending_frees_are_active_not_allocated() {
    let (path, exp) = made();
    let bytes = std::fs::read(&path).unwrap();
    let snap = decode_bytes("rl_state.pickle", &bytes).unwrap().snapshot;
    let pools: std::collections::HashSet<_> = snap
        .segments
        .iter()
        .map(|s| s.pool_id)
        .filter(|p| *p != (0, 0))
        .collect();
    assert_eq!(pools.len() as u64, exp["private_pools"].as_u64().unwrap());
    let dev = &snap.devices[0];
    assert!(dev.entries.is_empty());
    let a = analyze(&snap, dev, &AnalysisOptions::spec_defaults());
    let end = &a.points[0];
    assert_eq!(end.kind, PointKind::End);
    let want_alloc = exp["allocated_requested"].as_i64().unwrap();
    let want_active = exp["active_requested"].as_i64().unwrap();
    assert_eq!(want_active - want_alloc, 597_000_000);
    assert_eq!(end.allocated, want_alloc);
    assert_eq!(end.active, want_active);
    assert_eq!(end.live_bytes as i64, want_active);
    assert_eq!(a.curves.baseline_active, want_active);
    assert_eq!(a.curves.baseline_allocated, want_alloc);
    assert_eq!(end.reserved, exp["reserved"].as_i64().unwrap());
    let note = a
        .notes
        .iter()
        .find(|n| n.code == "SNAP-PENDING-FREE")
        .expect("a pending-free warning");
    assert!(
        note.message
            .contains("9 block(s) holding 569.3 MiB (597,000,000 bytes) requested"),
        "{}",
        note.message
    );
    // The §7.3 consistency check holds: no SNAP-CHECK-ACTIVE.
    assert!(a.notes.iter().all(|n| n.code != "SNAP-CHECK-ACTIVE"));
}

/// The OOM explanation in the JSON and Markdown reports (a built snapshot with a known
/// fragmentation OOM: 5 MiB free in 1 MiB holes, 3 MiB asked, the driver out of memory).
#[test]
fn oom_explanation_in_the_reports() {
    use proflens::base::Problems;
    use proflens::engine::read::snapshot::{analyse, SnapshotOptions};
    use proflens::ingest::InputFile;
    use proflens::model::snapshot::BlockState;
    use proflens::model::snapshot_testing::SnapshotBuilder;
    use proflens::protocol::SnapshotSettingsDto;
    const MIB: u64 = 1 << 20;
    let mut b = SnapshotBuilder::new();
    b.oom(3 * MIB, 0);
    let blocks: Vec<_> = (0..10)
        .map(|k| match k % 2 {
            0 => (MIB, MIB, BlockState::ActiveAllocated, None),
            _ => (MIB, 0, BlockState::Inactive, None),
        })
        .collect();
    b.segment(0, 0x1000_0000, &blocks);
    let opts = SnapshotOptions::from_settings(&SnapshotSettingsDto::default()).unwrap();
    let file = InputFile {
        path: "oom.pickle".into(),
        size: 1,
    };
    let run = analyse(&file, b.finish(), Problems::new(), &opts);
    let json: serde_json::Value =
        serde_json::from_str(&run.json_text(&opts.report).unwrap()).unwrap();
    let p = json["devices"][0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "oom")
        .unwrap();
    let e = &p["oom_explanation"];
    assert_eq!(e["cause"], "fragmentation");
    assert_eq!(e["largest_free_bytes"], MIB);
    assert_eq!(e["cached_free_bytes"], 5 * MIB);
    assert_eq!(e["segments"][0]["address"], "0x10000000");
    let md = run.markdown(&opts.report);
    assert!(
        md.contains("  - segment 0x10000000 (10.0 MiB, stream 0): largest free block 1.00 MiB (1,048,576 bytes), free 5.00 MiB"),
        "{md}"
    );
    assert!(md.contains("  - **Verdict (fragmentation):** Fragmentation: the allocator's segments on this stream had 5.00 MiB free"), "{md}");
}
