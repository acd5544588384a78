//! The snapshot tab's worker side (`engine::session` + `engine::session::snapshot_view`) driven natively as
//! the worker drives it: `Open`, `Run{Snapshot}`, the curve / live-set / stack / segments
//! queries, settings and exports, on the real fixtures of `torch_snapshots`.
//! Golden values: `EXPECTED.json` (`memoryviz_like` = the active curve, §8); export bytes:
//! the `proflens snapshot` binary with the same options.

mod snapshot_common;

mod session_common;

use std::process::Command;

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::session::{Collected, Session};
use proflens::protocol::{
    AnalysisKind, Envelope, ExportRequest, Query, Reply, Request, Response, SnapAxis,
    SnapCurveQuery, SnapExportKind, SnapLiveQuery, SnapQuery, SnapReply, SnapshotSettingsDto,
    SnapshotSummaryDto, Summary,
};
use snapshot_common::{expected, fixture_dir, fixture_names, temp_path};

struct Tab {
    session: Session,
    opener: FsOpener,
    seq: u32,
}

impl Tab {
    /// Opens `path` (a file or the fixture folder) and runs the snapshot analysis on every
    /// snapshot of the inventory; returns the summaries and the failures.
    fn open(path: &std::path::Path) -> (Tab, Vec<SnapshotSummaryDto>, Vec<String>) {
        let (opener, files) = FsOpener::walk(path).unwrap();
        let metas = session_common::metas(&files);
        let mut tab = Tab {
            session: Session::new(),
            opener,
            seq: 0,
        };
        let out = tab.send(Request::Open { files: metas });
        let Response::Inventory(inv) = &out.out[0].1 else {
            panic!("expected the inventory, got {:?}", out.out[0].1);
        };
        let targets = 0..inv.snapshots.len() as u32;
        let out = tab.send(Request::run(AnalysisKind::Snapshot, targets));
        let mut sums = Vec::new();
        let mut failed = Vec::new();
        for (_, r) in out.out {
            match r {
                Response::Done {
                    summary: Summary::Snapshot(s),
                    ..
                } => sums.push(s),
                Response::TargetFailed { message, .. } => failed.push(message),
                _ => {}
            }
        }
        (tab, sums, failed)
    }

    fn send(&mut self, body: Request) -> Collected {
        self.seq += 1;
        let mut out = Collected::default();
        self.session.handle(
            Envelope {
                seq: self.seq,
                body,
            },
            &self.opener,
            &mut out,
        );
        out
    }

    fn snap(&mut self, q: SnapQuery) -> SnapReply {
        let out = self.send(Request::Query(Query::Snapshot(q)));
        match out.out.into_iter().next().map(|r| r.1) {
            Some(Response::Reply(Reply::Snapshot(r))) => r,
            other => panic!("unexpected reply {other:?}"),
        }
    }

    fn export(&mut self, target: u32, what: SnapExportKind) -> (String, Vec<u8>) {
        let out = self.send(Request::Export(ExportRequest::Snapshot { target, what }));
        let name = match out.out.last().map(|r| &r.1) {
            Some(Response::ExportDone { file_name, .. }) => file_name.clone(),
            other => panic!("expected ExportDone, got {other:?}"),
        };
        (name, out.bytes)
    }
}

fn proflens(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "proflens {args:?}: exit {code}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_fixture_runs_and_the_active_curve_peaks_at_the_memoryviz_maximum() {
    let exp = expected();
    let (mut tab, sums, failed) = Tab::open(&fixture_dir());
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(sums.len(), fixture_names().len());
    let mut checked = 0;
    for s in &sums {
        let name = s.file.rsplit('/').next().unwrap();
        let want = &exp[name]["device_traces"];
        for d in s.devices.iter().filter(|d| d.entries > 0) {
            let mv = &want[d.device as usize]["memoryviz_like"];
            let max = mv["max_bytes"].as_i64().unwrap();
            // MemoryViz's maximum counts the level before the first entry (the baseline):
            // Yiyi's only entry frees a block, so its maximum is the baseline.
            assert_eq!(d.max_active.bytes.max(d.baseline_bytes.1), max, "{name}");
            assert_eq!(
                d.baseline_bytes.1,
                mv["baseline_bytes"].as_i64().unwrap(),
                "{name}"
            );
            // The downsampled curve keeps that maximum whatever the width.
            for width_px in [37, 1000] {
                let SnapReply::Curve(c) = tab.snap(SnapQuery::Curve(SnapCurveQuery {
                    target: s.target,
                    slot: d.slot,
                    axis: SnapAxis::Index,
                    range: None,
                    width_px,
                })) else {
                    panic!()
                };
                let top = c.series[1].max.iter().copied().fold(f64::MIN, f64::max);
                assert_eq!(top, max as f64, "{name} width {width_px}");
                assert_eq!(c.entries_in_window, d.entries);
            }
            // The live set at the global peak is the report's live set at that point.
            let g = &d.points[0];
            assert_eq!(g.kind, "global_peak");
            let SnapReply::Live(l) = tab.snap(SnapQuery::Live(SnapLiveQuery {
                target: s.target,
                slot: d.slot,
                axis: SnapAxis::Index,
                x: g.index as f64,
                limit: 50,
            })) else {
                panic!()
            };
            assert_eq!(
                (l.index, l.live_bytes, l.live_tensors, l.active_bytes),
                (g.index, g.live_bytes, g.live_tensors, d.max_active.bytes),
                "{name}"
            );
            assert_eq!(
                l.live_bytes as i64, l.active_bytes,
                "{name}: live bytes = active level"
            );
            checked += 1;
        }
    }
    // Every fixture with a populated device slot (EXPECTED.json §8.2: 11 of them).
    assert_eq!(checked, 11);
}

#[test]
fn zidongliu_peak_live_set_time_axis_and_segments() {
    let file = fixture_dir().join("ZidongLiu_DeComFL__memory.pickle");
    let (mut tab, sums, _) = Tab::open(&file);
    let d = &sums[0].devices[0];
    // EXPECTED.json: in_window_replay peak 1,783,664,516 @ 11205, memoryviz baseline 0.
    assert_eq!(d.max_active.bytes, 1_783_664_516);
    assert_eq!(d.max_active.index, Some(11205));
    assert!(d.has_time);
    let peak_ms = d.max_active.time_ms.unwrap();
    // A click on the time axis at the peak's time gives the last entry at that time, whose
    // level is the peak (entries sharing a time_us stay at or below it).
    let SnapReply::Live(l) = tab.snap(SnapQuery::Live(SnapLiveQuery {
        target: 0,
        slot: 0,
        axis: SnapAxis::Time,
        x: peak_ms,
        limit: 20,
    })) else {
        panic!()
    };
    assert!(l.index >= 11205);
    assert_eq!(l.time_ms, Some(peak_ms));
    let SnapReply::Live(l) = tab.snap(SnapQuery::Live(SnapLiveQuery {
        target: 0,
        slot: 0,
        axis: SnapAxis::Index,
        x: 11205.0,
        limit: 20,
    })) else {
        panic!()
    };
    assert_eq!(l.live_bytes, 1_783_664_516);
    assert_eq!(l.tensors.len(), 20);
    assert!(l.tensors.windows(2).all(|w| w[0].bytes >= w[1].bytes));
    let sum_contrib: u64 = l.contributors.iter().map(|c| c.bytes).sum::<u64>() + l.more_sites.1;
    assert_eq!(sum_contrib, l.live_bytes);
    assert_eq!(l.tree[0].bytes, l.live_bytes);
    // §8.3: Windows site-packages paths are library frames, so no contributor site is one.
    assert!(l
        .contributors
        .iter()
        .all(|c| !c.site.contains("site-packages") || c.site_kind != "project"));
    // The stack of the largest tensor.
    let SnapReply::Stack(st) = tab.snap(SnapQuery::Stack {
        target: 0,
        slot: 0,
        record: l.tensors[0].record,
    }) else {
        panic!()
    };
    assert!(!st.frames.is_empty());
    // EXPECTED.json segments: 61 segments, Σ total_size 1,897,922,560, Σ allocated 1,014,430,208.
    let SnapReply::Segments(sg) = tab.snap(SnapQuery::Segments {
        target: 0,
        slot: 0,
        limit: 10,
    }) else {
        panic!()
    };
    assert_eq!(
        (
            sg.total_segments,
            sg.reserved_bytes,
            sg.allocated_bytes,
            sg.segments.len()
        ),
        (61, 1_897_922_560, 1_014_430_208, 10)
    );
}

#[test]
fn exports_are_the_cli_bytes_with_default_and_changed_settings() {
    for name in [
        "cranberrii_ftcourse__memory_snapshot.pickle",
        "bcrafton_assignment2-systems__memory_snapshot.pickle",
        "Muduard_LayoutEditing__memory_snapshot.pkl",
    ] {
        let input = fixture_dir().join(name);
        let (mut tab, sums, failed) = Tab::open(&input);
        assert!(failed.is_empty() && sums.len() == 1, "{name}: {failed:?}");
        let json = temp_path(&format!("web-{name}.json"));
        let md = temp_path(&format!("web-{name}.md"));
        let run_cli = |extra: &[&str]| {
            let mut args = vec![
                "snapshot",
                input.to_str().unwrap(),
                "--json",
                json.to_str().unwrap(),
                "--report",
                md.to_str().unwrap(),
            ];
            args.extend_from_slice(extra);
            proflens(&args);
            (std::fs::read(&json).unwrap(), std::fs::read(&md).unwrap())
        };
        let (cli_json, cli_md) = run_cli(&[]);
        let (md_name, web_md) = tab.export(0, SnapExportKind::ReportMd);
        let (_, web_json) = tab.export(0, SnapExportKind::Json);
        assert!(md_name.starts_with("MEM_PEAK_ANALYSIS_"));
        assert_eq!(web_md, cli_md, "{name}: Markdown");
        assert_eq!(web_json, cli_json, "{name}: JSON");

        // The settings panel: project root, path map, github links, fewer peaks.
        let settings = SnapshotSettingsDto {
            top_n: 3,
            top_contributors: 5,
            project_root: Some("/home/u/proj".into()),
            link_style: "github".into(),
            repo_url: Some("https://github.com/o/r".into()),
            commit: Some("abc123".into()),
            path_map: vec![("/".into(), "/home/u/proj/".into())],
            ..Default::default()
        };
        let SnapReply::Summary(s) = tab.snap(SnapQuery::Settings {
            target: 0,
            settings: settings.clone(),
        }) else {
            panic!()
        };
        assert_eq!(s.settings, settings);
        let (cli_json, cli_md) = run_cli(&[
            "--top-n",
            "3",
            "--top-contributors",
            "5",
            "--project-root",
            "/home/u/proj",
            "--link-style",
            "github",
            "--repo-url",
            "https://github.com/o/r",
            "--commit",
            "abc123",
            "--map",
            "/=/home/u/proj/",
        ]);
        let (_, web_md) = tab.export(0, SnapExportKind::ReportMd);
        let (_, web_json) = tab.export(0, SnapExportKind::Json);
        assert_eq!(web_md, cli_md, "{name}: Markdown with settings");
        assert_eq!(web_json, cli_json, "{name}: JSON with settings");
    }
}

#[test]
fn queries_about_unknown_targets_or_slots_fail_clearly() {
    let file =
        fixture_dir().join("shreyansh26_MLSys-Experiments__model_memory_usage_profile_grad.pkl");
    let (mut tab, _, _) = Tab::open(&file);
    let out = tab.send(Request::Query(Query::Snapshot(SnapQuery::Segments {
        target: 7,
        slot: 0,
        limit: 1,
    })));
    match &out.out[0].1 {
        Response::Failed(f) => assert!(f.message.contains("snapshot 7 has not been analysed")),
        other => panic!("{other:?}"),
    }
    let out = tab.send(Request::Query(Query::Snapshot(SnapQuery::Stack {
        target: 0,
        slot: 3,
        record: 0,
    })));
    match &out.out[0].1 {
        Response::Failed(f) => assert!(f.message.contains("no device slot 3"), "{}", f.message),
        other => panic!("{other:?}"),
    }
}
