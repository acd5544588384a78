//! The snapshot view on a hand-built snapshot whose answers are known by construction.
//! (Real fixtures, the session and the CLI bytes: `tests/snapshot_web_session.rs`.)

use super::*;
use crate::base::Problems;
use crate::engine::read::snapshot::analyse;
use crate::ingest::InputFile;
use crate::model::snapshot::{Action, BlockState, NO_STACK};
use crate::model::snapshot_testing::SnapshotBuilder;
use crate::protocol::snapshot::{SnapCurveQuery, SnapLiveQuery};

const T0: i64 = 1_700_000_000_000_000;

/// Entries (1 ms apart): 0 alloc a 100 (P) · 1 alloc b 50 (Q) · 2 free_requested a ·
/// 3 free_completed a · 4 alloc c 30 (P) · 5 free_requested b · 6 free_completed b.
/// End state: one segment at 0xc: c (32 B block, 30 requested), 96 B inactive, and a
/// 512 B block (400 requested, no stack) allocated before recording (a PRE record).
///
/// Active: baseline 400, then 500 550 550 450 480 480 430. Reserved: 640 throughout.
fn view(settings: SnapshotSettingsDto) -> SnapshotView {
    let mut b = SnapshotBuilder::new();
    let p = b.stack(&[
        ("/proj/model.py", 20, "forward"),
        ("/proj/train.py", 5, "step"),
    ]);
    let q = b.stack(&[("/proj/optim.py", 30, "update")]);
    let e = |b: &mut SnapshotBuilder, i: i64, a: Action, addr: u64, size: u64, s| {
        b.entry(0, a, addr, size, s, T0 + 1000 * i);
    };
    e(&mut b, 0, Action::Alloc, 0xa, 100, p);
    e(&mut b, 1, Action::Alloc, 0xb, 50, q);
    e(&mut b, 2, Action::FreeRequested, 0xa, 100, NO_STACK);
    e(&mut b, 3, Action::FreeCompleted, 0xa, 100, NO_STACK);
    e(&mut b, 4, Action::Alloc, 0xc, 30, p);
    e(&mut b, 5, Action::FreeRequested, 0xb, 50, NO_STACK);
    e(&mut b, 6, Action::FreeCompleted, 0xb, 50, NO_STACK);
    b.segment(
        0,
        0xc,
        &[
            (32, 30, BlockState::ActiveAllocated, Some(p)),
            (96, 96, BlockState::Inactive, None),
            (512, 400, BlockState::ActiveAllocated, None),
        ],
    );
    let mut snap = b.finish();
    snap.features.has_time_us = true;
    let file = InputFile {
        path: "runs/hand.pickle".into(),
        size: 1234,
    };
    let opts = SnapshotOptions::from_settings(&settings).unwrap();
    let run = analyse(&file, snap, Problems::new(), &opts);
    SnapshotView::from_parts(3, run, settings, opts)
}

fn live(v: &SnapshotView, axis: SnapAxis, x: f64) -> crate::protocol::snapshot::SnapLiveDto {
    v.data()
        .live_at(&SnapLiveQuery {
            target: 3,
            slot: 0,
            axis,
            x,
            limit: 10,
        })
        .unwrap()
}

#[test]
fn curves_per_column_over_index_and_time() {
    let v = view(SnapshotSettingsDto::default());
    let q = |axis, range, width_px| SnapCurveQuery {
        target: 3,
        slot: 0,
        axis,
        range,
        width_px,
    };
    let c = v.data().curve(&q(SnapAxis::Index, None, 7)).unwrap();
    assert_eq!(
        (c.axis, c.x0, c.x1, c.full),
        (SnapAxis::Index, 0.0, 7.0, (0.0, 7.0))
    );
    let active = &c.series[1];
    assert_eq!(active.name, "active");
    // Column c = entry c, with the level carried from entry c − 1 (baseline 400 before 0).
    assert_eq!(
        active.max,
        vec![500.0, 550.0, 550.0, 550.0, 480.0, 480.0, 480.0]
    );
    assert_eq!(
        active.min,
        vec![400.0, 500.0, 550.0, 450.0, 450.0, 480.0, 430.0]
    );
    let allocated = &c.series[0];
    assert_eq!(
        allocated.min,
        vec![400.0, 500.0, 450.0, 450.0, 450.0, 430.0, 430.0]
    );
    assert_eq!(c.series[2].max, vec![640.0; 7]);
    // reserved − active: 240 before entry 0, then 140 90 90 190 160 160 210.
    assert_eq!(c.series[3].name, "reserved_minus_active");
    assert_eq!(
        c.series[3].max,
        vec![240.0, 140.0, 90.0, 190.0, 190.0, 160.0, 210.0]
    );
    assert_eq!(
        c.series[3].min,
        vec![140.0, 90.0, 90.0, 90.0, 160.0, 160.0, 160.0]
    );
    assert_eq!(c.y_max, 640.0);
    assert_eq!(c.entries_in_window, 7);
    let global = c.marks.iter().find(|m| m.kind == "global_peak").unwrap();
    assert_eq!((global.index, global.x, global.bytes), (1, 1.0, 550));
    assert!(c.marks.iter().any(|m| m.kind == "end" && m.index == 6));

    // Time axis: entries at 0..6 ms; two columns over [0, 3) ms hold entries 0–2.
    let c = v
        .data()
        .curve(&q(SnapAxis::Time, Some((0.0, 3.0)), 2))
        .unwrap();
    assert_eq!(c.axis, SnapAxis::Time);
    assert_eq!(c.series[1].max, vec![550.0, 550.0]);
    assert_eq!(c.series[1].min, vec![400.0, 550.0]);
    assert_eq!(c.entries_in_window, 3);
    assert_eq!(c.full, (0.0, 6.0 + 1e-3));
    let global = c.marks.iter().find(|m| m.kind == "global_peak").unwrap();
    assert_eq!(global.x, 1.0);
}

#[test]
fn live_set_at_any_entry_with_sites_tensors_and_icicle() {
    let v = view(SnapshotSettingsDto::default());
    let l = live(&v, SnapAxis::Index, 1.0);
    assert_eq!((l.index, l.time_ms), (1, Some(1.0)));
    assert_eq!((l.live_bytes, l.live_tensors), (550, 3));
    assert_eq!(
        (l.allocated_bytes, l.active_bytes, l.reserved_bytes),
        (550, 550, 640)
    );
    assert_eq!(
        l.entry,
        format!("alloc {} at 0xb (stream 0)", snapshot_md::exact(50))
    );
    let bytes: Vec<u64> = l.tensors.iter().map(|t| t.bytes).collect();
    assert_eq!(bytes, vec![400, 100, 50]);
    assert_eq!(l.tensors[0].alloc_index, None);
    assert_eq!(l.tensors[0].addr, "0x8c");
    assert_eq!(l.tensors[0].memoryviz_name, "b'8c_0'");
    assert_eq!(l.tensors[1].addr, "0xa");
    assert_eq!(l.tensors[1].memoryviz_name, "b'a_0'");
    assert_eq!(l.tensors[1].site, "forward @ /proj/model.py:20");
    assert_eq!(
        l.tensors[1].link.as_deref(),
        Some("vscode://file/proj/model.py:20")
    );
    assert_eq!(l.tensors[2].alloc_time_ms, Some(1.0));
    let sites: Vec<(&str, u64, &str)> = l
        .contributors
        .iter()
        .map(|c| (c.site.as_str(), c.bytes, c.origin.as_str()))
        .collect();
    assert_eq!(
        sites,
        vec![
            ("allocated before recording, no stack", 400, "pre_no_stack"),
            ("forward @ /proj/model.py:20", 100, "in_window"),
            ("update @ /proj/optim.py:30", 50, "in_window"),
        ]
    );
    let chain: Vec<&str> = l.contributors[1]
        .chain
        .iter()
        .map(|f| f.label.as_str())
        .collect();
    assert_eq!(
        chain,
        vec!["forward @ /proj/model.py:20", "step @ /proj/train.py:5"]
    );
    assert_eq!(
        l.contributors[1].chain[1].link.as_deref(),
        Some("vscode://file/proj/train.py:5")
    );
    assert!((l.contributors[0].percent - 400.0 * 100.0 / 550.0).abs() < 1e-9);
    // Icicle: root 550 → <non-python> 400 | step 100 → forward 100 | update 50.
    let t: Vec<(u32, u32, &str, u64, u64)> = l
        .tree
        .iter()
        .map(|n| (n.parent, n.depth, n.label.as_str(), n.offset, n.bytes))
        .collect();
    assert_eq!(
        t,
        vec![
            (0, 0, "<root>", 0, 550),
            (0, 1, "<non-python>", 0, 400),
            (0, 1, "step @ /proj/train.py:5", 400, 100),
            (0, 1, "update @ /proj/optim.py:30", 500, 50),
            (2, 2, "forward @ /proj/model.py:20", 400, 100),
        ]
    );

    // After the free_completed of a (entry 3): the PRE block and b.
    let l = live(&v, SnapAxis::Index, 3.0);
    assert_eq!(
        (
            l.live_bytes,
            l.live_tensors,
            l.active_bytes,
            l.allocated_bytes
        ),
        (450, 2, 450, 450)
    );
    // Time axis: 4.5 ms → entry 4 (the last at or before): PRE, b, c.
    let l = live(&v, SnapAxis::Time, 4.5);
    assert_eq!((l.index, l.live_bytes), (4, 480));
    // Before the first entry on the time axis → entry 0.
    assert_eq!(live(&v, SnapAxis::Time, -5.0).index, 0);
}

#[test]
fn live_set_at_the_global_peak_equals_the_report_point() {
    let v = view(SnapshotSettingsDto::default());
    let d = &v.run().devices[0];
    let p = d
        .points
        .iter()
        .find(|p| p.kind == crate::analysis::snapshot::device::PointKind::GlobalPeak)
        .unwrap();
    let l = live(&v, SnapAxis::Index, p.index as f64);
    assert_eq!(
        (l.live_bytes, l.live_tensors),
        (p.live_bytes, p.live_tensors)
    );
    let s = v.summary();
    let g = &s.devices[0].points[0];
    assert_eq!(
        (g.kind.as_str(), g.index, g.live_bytes),
        ("global_peak", 1, 550)
    );
    assert_eq!(g.time_ms, Some(1.0));
    assert_eq!(s.devices[0].baseline_bytes, (400, 400, 640));
    assert_eq!(s.devices[0].max_active.bytes, 550);
    assert_eq!(s.devices[0].duration_ms, Some(6.0));
    assert_eq!(s.segments.0, 1);
}

#[test]
fn settings_change_paths_and_links_without_decoding_again() {
    let mut v = view(SnapshotSettingsDto::default());
    let s = SnapshotSettingsDto {
        project_root: Some("/proj".into()),
        link_style: "github".into(),
        repo_url: Some("https://github.com/o/r".into()),
        commit: Some("abc".into()),
        ..Default::default()
    };
    let summary = v.set_settings(s.clone()).unwrap();
    assert_eq!(summary.settings, s);
    let l = live(&v, SnapAxis::Index, 1.0);
    assert_eq!(l.contributors[1].site, "forward @ model.py:20");
    assert_eq!(
        l.contributors[1].link.as_deref(),
        Some("https://github.com/o/r/blob/abc/model.py#L20")
    );
    // Path mapping: recorded /proj/ → a local checkout; plain-text links.
    v.set_settings(SnapshotSettingsDto {
        path_map: vec![("/proj/".into(), "/home/me/p/".into())],
        link_style: "none".into(),
        ..Default::default()
    })
    .unwrap();
    let l = live(&v, SnapAxis::Index, 1.0);
    assert_eq!(l.contributors[1].site, "forward @ /home/me/p/model.py:20");
    assert_eq!(l.contributors[1].link, None);
    // Bad settings are refused and the previous ones stay.
    let bad = SnapshotSettingsDto {
        link_style: "emacs".into(),
        ..Default::default()
    };
    assert!(v.set_settings(bad).unwrap_err().contains("--link-style"));
    assert_eq!(v.settings().link_style, "none");
}

#[test]
fn stack_segments_and_exports() {
    let v = view(SnapshotSettingsDto::default());
    let l = live(&v, SnapAxis::Index, 1.0);
    let st = v.data().stack(0, l.tensors[1].record).unwrap();
    let frames: Vec<(&str, bool)> = st
        .frames
        .iter()
        .map(|f| (f.label.as_str(), f.project))
        .collect();
    assert_eq!(
        frames,
        vec![
            ("forward @ /proj/model.py:20", true),
            ("step @ /proj/train.py:5", true)
        ]
    );
    assert_eq!(st.stack_kind, "alloc");
    assert!(v.data().stack(0, 99).is_err());
    assert!(v
        .data()
        .stack(5, 0)
        .unwrap_err()
        .contains("no device slot 5"));

    let s = v.data().segments(0, 10).unwrap();
    assert_eq!(
        (
            s.total_segments,
            s.reserved_bytes,
            s.allocated_bytes,
            s.inactive_bytes
        ),
        (1, 640, 544, 96)
    );
    assert_eq!(
        (s.largest_inactive_bytes, s.internal_waste_bytes),
        (96, 114)
    );
    assert_eq!(s.external_fragmentation, 0.0);
    assert_eq!(s.segments[0].address, "0xc");

    let (name, mime, md) = v.export(SnapExportKind::ReportMd).unwrap();
    assert_eq!(
        (name.as_str(), mime),
        ("MEM_PEAK_ANALYSIS_hand.md", "text/markdown")
    );
    assert_eq!(md, v.run().markdown(&v.options().report).into_bytes());
    let (name, _, json) = v.export(SnapExportKind::Json).unwrap();
    assert_eq!(name, "hand.proflens.json");
    let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(doc["devices"][0]["max_active"]["bytes"], 550);
}

#[test]
fn allocator_state_at_any_entry() {
    use crate::protocol::snapshot_allocator::SnapAllocatorQuery;
    let v = view(SnapshotSettingsDto::default());
    let q = |index: Option<u32>| {
        v.data()
            .allocator(&SnapAllocatorQuery {
                target: 3,
                slot: 0,
                index,
                context: 2,
            })
            .unwrap()
    };
    let end = q(Some(6));
    assert_eq!(end.index, Some(6));
    assert_eq!(end.segments.len(), 1);
    let blocks: Vec<(&str, u64, &str, Option<&str>)> = end.segments[0]
        .blocks
        .iter()
        .map(|b| {
            (
                b.address.as_str(),
                b.bytes,
                b.state.as_str(),
                b.site.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        blocks,
        vec![
            ("0xc", 32, "allocated", Some("forward @ /proj/model.py:20")),
            ("0x2c", 96, "inactive", None),
            (
                "0x8c",
                512,
                "allocated",
                Some("allocated before recording, no stack")
            ),
        ]
    );
    // The largest recent request is a's 100 bytes, rounded to 512: the 96-byte hole is hard.
    let f = &end.fragmentation;
    assert_eq!(f.largest_recent_request_bytes, 512);
    assert_eq!((f.hard_bytes, f.soft_bytes, f.stream_bytes), (96, 0, 0));
    assert_eq!((f.reserved_bytes, f.active_bytes), (640, 544));
    assert_eq!(
        end.entries.iter().map(|e| e.index).collect::<Vec<_>>(),
        vec![4, 5, 6]
    );
    assert_eq!(end.entries[2].text, "free_completed 0xb 50 B (stream 0)");
    // After entry 2, a (0xa) is pending free and b (0xb) allocated: both lie outside the end
    // state's only segment (this hand-built trace has no segment events), so they are orphans.
    let at2 = q(Some(2));
    assert_eq!(at2.orphan_blocks, 2);
    assert_eq!(at2.oom, None);
    assert_eq!(end.replay_mismatches, 0);
}

#[test]
fn allocator_histories_are_built_at_the_first_allocator_query_only() {
    use crate::protocol::snapshot_allocator::SnapAllocatorQuery;
    let mut v = view(SnapshotSettingsDto::default());
    let _ = v.data().summary();
    let c = SnapCurveQuery {
        target: 3,
        slot: 0,
        axis: SnapAxis::Index,
        range: None,
        width_px: 7,
    };
    v.data().curve(&c).unwrap();
    assert!(
        v.state.allocs.get().is_none(),
        "not built for the summary or the curve"
    );
    let q = SnapAllocatorQuery {
        target: 3,
        slot: 0,
        index: Some(2),
        context: 2,
    };
    let first = v.data().allocator(&q).unwrap();
    assert!(v.state.allocs.get().is_some_and(|a| a[0].is_some()));
    // A new setting re-analyses the run and keeps the histories (they do not depend on it).
    let mut s = SnapshotSettingsDto::default();
    s.top_n = 1;
    v.set_settings(s).unwrap();
    assert_eq!(v.data().allocator(&q).unwrap(), first);
}
