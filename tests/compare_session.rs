//! The Compare tab in the worker session: a drop (side A) analysed as the page does,
//! then "Compare with…" side B (`Request::Compare`, B's files through their own opener). The
//! tab's numbers must be the CLI's document (`proflens diff A B --json`, run from the inputs'
//! parent folder so the side names agree), and the exports its bytes (`--json FILE`, `--md
//! FILE`). Real pairs: two snapshots of one project, the HTA trace_diff pair, two level1
//! ranks, and the level1 run against itself (the rank table).

mod compare_common;
mod session_common;

use std::path::{Path, PathBuf};

use compare_common::{
    assert_overlays, assert_table, cell_of, check_exports, cli_diff, compare_again, compare_with,
    one_rank, side_a, table, two_device_pickle, HTA, LEVEL1, SNAPS,
};
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::session::Session;
use proflens::protocol::compare::{
    CellDto, CompareExportKind, CompareKind, CompareOptions, CompareRequest, CompareStep,
};
use proflens::protocol::{ExportRequest, Reply, Request, Response};
use serde_json::Value;
use session_common::{metas, send};

#[test]
fn two_real_snapshots_show_the_clis_deltas_overlay_and_exports() {
    let a = "silmont2000_assignment2-systems__mem_snapshot.pickle";
    let b = "silmont2000_assignment2-systems__memory_forward_bf16_128.pickle";
    let dir = PathBuf::from(SNAPS);
    let (mut s, _) = side_a(&dir.join(a));
    let v = compare_with(&mut s, a, &dir.join(b), b);
    let (json, md) = cli_diff(&dir, a, b, &[]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v.kind, CompareKind::Snapshot);
    let devices = doc["devices"].as_array().unwrap();
    assert!(!devices.is_empty());
    for (k, d) in devices.iter().enumerate() {
        let dev = d["device"].as_u64().unwrap();
        let (peak, end) = (&v.facts[2 * k], &v.facts[2 * k + 1]);
        for (f, key) in [(peak, "peak"), (end, "end")] {
            assert_eq!(f.a, cell_of(&d[key]["a_bytes"]));
            assert_eq!(f.b, cell_of(&d[key]["b_bytes"]));
            assert_eq!(f.delta, cell_of(&d[key]["delta_bytes"]));
        }
        for key in ["sites_at_peak", "sites_at_end", "matched_peaks"] {
            assert_table(table(&v, &format!("dev{dev}.{key}")), &d[key]);
        }
    }
    // This pair differs: device 0's global peak 3.03 GiB → 743.7 MiB, the end 30.3 → 499.5
    // MiB, all 20 sites at the peak changed. The backward pass's C++-only stacks are sited at
    // their autograd nodes (torch-snapshot.md §7.5): `DivBackward0` 2 GiB and `BmmBackward0`
    // 522.1 MiB, one allocator site of 2.51 GiB before.
    assert_eq!(devices.len(), 1);
    assert_eq!(v.facts[0].delta, CellDto::Int(-2_469_306_376));
    assert_eq!(v.facts[1].delta, CellDto::Int(492_092_412));
    let sites = table(&v, "dev0.sites_at_peak");
    assert_eq!(sites.rows.len(), 20);
    let site_a = |name: &str| {
        sites
            .rows
            .iter()
            .find(|r| matches!(&r[0], CellDto::Text(t) if t.contains(name)))
            .map(|r| r[1].clone())
    };
    assert_eq!(
        site_a("DivBackward0::apply"),
        Some(CellDto::Int(2_147_483_648))
    );
    assert_eq!(
        site_a("BmmBackward0::apply"),
        Some(CellDto::Int(547_487_744))
    );
    assert_eq!(site_a("CachingAllocator"), None);
    assert!(sites
        .rows
        .iter()
        .all(|r| r[4] != CellDto::Text("same".into())));
    // The overlaid curves are the CLI's `--overlay 400`.
    let (ojson, _) = cli_diff(&dir, a, b, &["--overlay", "400"]);
    let odoc: Value = serde_json::from_str(&ojson).unwrap();
    assert_overlays(&v, &odoc, 400);
    assert_eq!(v.overlays.len(), devices.len());
    check_exports(
        &mut s,
        &json,
        &md,
        "diff_silmont2000_assignment2-systems__mem_snapshot.pickle_vs_silmont2000_assignment2-systems__memory_forward_bf16_128.pickle",
    );
}

#[test]
fn the_hta_trace_pair_shows_htas_ops_and_the_steps_side_by_side() {
    let dir = PathBuf::from(HTA);
    let (mut s, _) = side_a(&dir.join("control"));
    let v = compare_with(&mut s, "control", &dir.join("test"), "test");
    let (json, md) = cli_diff(&dir, "control", "test", &[]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v.kind, CompareKind::Trace);
    assert_eq!(doc["ops_rule"], "hta_trace_diff");
    assert_table(table(&v, "ops"), &doc["ops"]);
    assert_table(table(&v, "steps"), &doc["steps"]);
    assert_table(table(&v, "bubble_labels"), &doc["bubble_labels"]);
    // The spec's check on this pair (gpu-traces.md §5): cudaMemcpyAsync 38 → 802 calls.
    let ops = table(&v, "ops");
    let memcpy = ops
        .rows
        .iter()
        .find(|r| r[0] == CellDto::Text("cudaMemcpyAsync".into()))
        .unwrap();
    assert_eq!(
        (&memcpy[1], &memcpy[2]),
        (&CellDto::Int(38), &CellDto::Int(802))
    );
    assert_eq!(ops.rows.len(), 432);
    check_exports(&mut s, &json, &md, "diff_control_vs_test");
}

#[test]
fn two_level1_ranks_compare_ops_steps_and_memory_per_pool() {
    let dir = PathBuf::from(LEVEL1);
    let (mut s, _) = side_a(&dir.join("rank0_ascend_pt"));
    let v = compare_with(
        &mut s,
        "rank0_ascend_pt",
        &dir.join("rank1_ascend_pt"),
        "rank1_ascend_pt",
    );
    let (json, md) = cli_diff(&dir, "rank0_ascend_pt", "rank1_ascend_pt", &[]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["ops_rule"], "kernels");
    assert_table(table(&v, "ops"), &doc["ops"]);
    assert_table(table(&v, "steps"), &doc["steps"]);
    let pools = doc["memory"].as_array().unwrap();
    assert!(!pools.is_empty(), "level1 ranks have operator_memory.csv");
    assert_table(table(&v, "memory"), &doc["memory"]);
    for p in pools {
        let c = p["component"].as_str().unwrap();
        for key in ["live_by_user_frame", "live_by_name"] {
            assert_table(table(&v, &format!("memory.{c}.{key}")), &p[key]);
        }
    }
    check_exports(
        &mut s,
        &json,
        &md,
        "diff_rank0_ascend_pt_vs_rank1_ascend_pt",
    );
}

#[test]
fn the_level1_run_against_itself_has_the_rank_table_with_zero_deltas() {
    let dir = PathBuf::from(LEVEL1);
    let parent = dir.parent().unwrap();
    let (mut s, _) = side_a(&dir);
    let v = compare_with(&mut s, "level1", &dir, "level1");
    let (json, md) = cli_diff(parent, "level1", "level1", &[]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    let ranks = table(&v, "ranks");
    assert_eq!(ranks.rows.len(), 2);
    assert_table(ranks, &doc["ranks"]);
    let delta = ranks
        .columns
        .iter()
        .position(|c| c.field == "delta_service_ms_avg")
        .unwrap();
    for r in &ranks.rows {
        assert!(matches!(r[delta], CellDto::Num(x) if x == 0.0) || r[delta] == CellDto::Int(0));
    }
    check_exports(&mut s, &json, &md, "diff_level1_vs_level1");
}

#[test]
fn a_run_spread_over_two_workers_compares_from_the_other_workers_summaries() {
    // level1's two ranks on two pool workers: the comparison runs in the worker holding rank 0
    // (the compared rank, first by id); rank 1's row comes from the summaries its worker sent
    // (views::cross_rank::compare_rank). The documents equal the CLI's on the whole run.
    let dir = PathBuf::from(LEVEL1);
    let (mut x, a0, m0) = one_rank(&dir, 0);
    let (mut y, a1, m1) = one_rank(&dir, 1);
    assert_eq!((a0.rank_id, a1.rank_id), (Some(0), Some(1)));
    let (json, md) = cli_diff(dir.parent().unwrap(), "level1", "level1", &[]);
    let (opener, files) = FsOpener::walk(&dir).unwrap();
    let req = |elsewhere| {
        Request::Compare(CompareRequest {
            files: metas(&files),
            a_name: "level1".into(),
            b_name: "level1".into(),
            a_snapshot: 0,
            overlay_columns: 10,
            a_elsewhere: elsewhere,
            b_is_a: false,
            options: Default::default(),
        })
    };
    // Without rank 1's figures, the worker says what it lacks.
    let out = send(&mut x, &opener, 3, req(Vec::new()));
    let [(3, Response::Failed(f))] = &out.out[..] else {
        panic!("{:?}", out.out)
    };
    assert!(f.message.contains("[1]"), "{}", f.message);
    let with_1 = vec![proflens::views::cross_rank::compare_rank(&a1, m1.as_ref())];
    let out = send(&mut x, &opener, 3, req(with_1));
    let [(3, Response::Reply(Reply::Compare(v)))] = &out.out[..] else {
        panic!("{:?}", out.out)
    };
    assert_eq!(table(v, "ranks").rows.len(), 2);
    check_exports(&mut x, &json, &md, "diff_level1_vs_level1");
    // The worker holding only rank 1 cannot compare rank 0's ops and steps: it says so.
    let with_0 = vec![proflens::views::cross_rank::compare_rank(&a0, m0.as_ref())];
    let out = send(&mut y, &opener, 3, req(with_0));
    let [(3, Response::Failed(f))] = &out.out[..] else {
        panic!("{:?}", out.out)
    };
    assert!(
        f.message.contains("held by another worker"),
        "{}",
        f.message
    );
}

#[test]
fn a_snapshot_against_a_folder_and_compare_before_open_are_refused_in_words() {
    let mut s = Session::new();
    let (opener, _) = FsOpener::walk(Path::new(HTA)).unwrap();
    let out = send(
        &mut s,
        &opener,
        1,
        Request::Compare(CompareRequest {
            files: Vec::new(),
            a_name: "a".into(),
            b_name: "b".into(),
            a_snapshot: 0,
            overlay_columns: 10,
            a_elsewhere: Vec::new(),
            b_is_a: false,
            options: Default::default(),
        }),
    );
    assert!(
        matches!(&out.out[..], [(1, Response::Failed(f))] if f.message.contains("drop a folder first")),
        "{:?}",
        out.out
    );
    let snap =
        PathBuf::from(SNAPS).join("jogregoire_How-Diffusion-Models-Work__my_snapshot.pickle");
    let (mut s, _) = side_a(&snap);
    let (opener, files) = FsOpener::walk(&PathBuf::from(HTA).join("test")).unwrap();
    let out = send(
        &mut s,
        &opener,
        3,
        Request::Compare(CompareRequest {
            files: metas(&files),
            a_name: "my_snapshot.pickle".into(),
            b_name: "test".into(),
            a_snapshot: 0,
            overlay_columns: 10,
            a_elsewhere: Vec::new(),
            b_is_a: false,
            options: Default::default(),
        }),
    );
    let [(3, Response::Failed(f))] = &out.out[..] else {
        panic!("{:?}", out.out)
    };
    assert!(
        f.message.contains("not the same kind of input"),
        "{}",
        f.message
    );
    // Nothing compared: the export says so.
    let out = send(
        &mut s,
        &opener,
        4,
        Request::Export(ExportRequest::Compare(CompareExportKind::Json)),
    );
    assert!(
        matches!(&out.out[..], [(4, Response::Failed(f))] if f.message.contains("Compare with")),
        "{:?}",
        out.out
    );
}

#[test]
fn two_devices_of_one_file_with_each_overlay_axis_and_alignment_are_the_clis() {
    let path = two_device_pickle();
    let dir = path.parent().unwrap().to_path_buf();
    let f = "two_devices.pickle";
    let (mut s, _) = side_a(&path);
    // "Compare devices of this file": B is A's own file, nothing is read.
    let options = CompareOptions {
        a_device: Some(0),
        b_device: Some(1),
        ..CompareOptions::default()
    };
    let out = send(
        &mut s,
        &FsOpener::walk(&std::env::temp_dir().join("proflens-none-here"))
            .map(|(o, _)| o)
            .unwrap_or_else(|_| FsOpener::walk(&dir).unwrap().0),
        3,
        Request::Compare(CompareRequest {
            files: Vec::new(),
            a_name: f.into(),
            b_name: f.into(),
            a_snapshot: 0,
            overlay_columns: 400,
            a_elsewhere: Vec::new(),
            b_is_a: true,
            options: options.clone(),
        }),
    );
    let v = match out.out.as_slice() {
        [(3, Response::Reply(Reply::Compare(v)))] => (**v).clone(),
        other => panic!("unexpected reply: {other:?}"),
    };
    assert_eq!(v.choices.a_devices, vec![0, 1]);
    assert_eq!(v.choices.b_devices, vec![0, 1]);
    assert!(v.choices.b_is_a);
    let dev = ["--a-device", "0", "--b-device", "1"];
    let (json, md) = cli_diff(&dir, f, f, &dev);
    let doc: Value = serde_json::from_str(&json).unwrap();
    // Device 1 lost device 0's first third: the same peak and end bytes (the end state
    // reconstructs what is alive), but other sites hold them.
    assert_eq!(doc["devices"][0]["b_device"], 1);
    assert!(doc["devices"][0]["sites_at_peak"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["change"] != "same"));
    assert_eq!(
        v.facts[0].delta,
        cell_of(&doc["devices"][0]["peak"]["delta_bytes"])
    );
    for key in ["sites_at_peak", "sites_at_end", "matched_peaks"] {
        assert_table(table(&v, &format!("dev0.{key}")), &doc["devices"][0][key]);
    }
    let ov = |extra: &[&str]| -> Value {
        let mut a: Vec<&str> = dev.to_vec();
        a.extend(["--overlay", "400"]);
        a.extend(extra);
        serde_json::from_str(&cli_diff(&dir, f, f, &a).0).unwrap()
    };
    assert_overlays(&v, &ov(&[]), 400);
    check_exports(
        &mut s,
        &json,
        &md,
        "diff_two_devices.pickle_vs_two_devices.pickle",
    );
    // The time axis.
    let t = compare_again(
        &mut s,
        CompareOptions {
            time_axis: true,
            ..options.clone()
        },
    )
    .unwrap();
    assert_eq!(t.overlays[0].axis, "time_ms");
    assert_overlays(&t, &ov(&["--overlay-axis", "time"]), 400);
    assert_eq!(t.options.time_axis, true);
    check_exports(
        &mut s,
        &json,
        &md,
        "diff_two_devices.pickle_vs_two_devices.pickle",
    );
    // Aligned at an annotation present on both devices, on each axis.
    assert_eq!(
        t.choices.annotations,
        vec!["Optimizer.step#AdamW.step".to_string()]
    );
    let name = t.choices.annotations[0].clone();
    for (time_axis, axis) in [(false, "index"), (true, "time")] {
        let o = CompareOptions {
            time_axis,
            align: Some(name.clone()),
            ..options.clone()
        };
        let al = compare_again(&mut s, o).unwrap();
        let want = ov(&["--overlay-axis", axis, "--align", &name]);
        assert_eq!(want["devices"][0]["overlay"]["align"], name.as_str());
        assert_overlays(&al, &want, 400);
    }
    // Device 0 against device 0: the zero diff of `--a-device 0 --b-device 0`.
    let same = compare_again(
        &mut s,
        CompareOptions {
            b_device: Some(0),
            ..options.clone()
        },
    )
    .unwrap();
    assert_eq!(same.facts[0].delta, CellDto::Int(0));
    let (json0, md0) = cli_diff(&dir, f, f, &["--a-device", "0", "--b-device", "0"]);
    check_exports(
        &mut s,
        &json0,
        &md0,
        "diff_two_devices.pickle_vs_two_devices.pickle",
    );
    // Refusals in words, as the CLI's; the previous comparison stays.
    let e = compare_again(
        &mut s,
        CompareOptions {
            a_device: Some(7),
            ..options.clone()
        },
    )
    .unwrap_err();
    assert_eq!(e, "side A has no device 7 (devices: 0, 1)");
    let e = compare_again(
        &mut s,
        CompareOptions {
            align: Some("nowhere".into()),
            ..options.clone()
        },
    )
    .unwrap_err();
    assert!(
        e.contains("has no entry inside annotation \"nowhere\""),
        "{e}"
    );
    let e = compare_again(
        &mut s,
        CompareOptions {
            step: CompareStep::All,
            ..options
        },
    )
    .unwrap_err();
    assert!(e.contains("not to snapshot files"), "{e}");
    check_exports(
        &mut s,
        &json0,
        &md0,
        "diff_two_devices.pickle_vs_two_devices.pickle",
    );
}

#[test]
fn two_real_snapshots_on_the_time_axis_are_the_clis() {
    let a = "silmont2000_assignment2-systems__mem_snapshot.pickle";
    let b = "silmont2000_assignment2-systems__memory_forward_bf16_128.pickle";
    let dir = PathBuf::from(SNAPS);
    let (mut s, _) = side_a(&dir.join(a));
    compare_with(&mut s, a, &dir.join(b), b);
    let v = compare_again(
        &mut s,
        CompareOptions {
            time_axis: true,
            ..CompareOptions::default()
        },
    )
    .unwrap();
    let (ojson, _) = cli_diff(&dir, a, b, &["--overlay", "400", "--overlay-axis", "time"]);
    assert_overlays(&v, &serde_json::from_str(&ojson).unwrap(), 400);
    // A has no annotation: nothing to align at.
    assert!(v.choices.annotations.is_empty());
}

#[test]
fn the_hta_pair_at_another_step_and_all_steps_is_the_clis() {
    let dir = PathBuf::from(HTA);
    let (mut s, _) = side_a(&dir.join("control"));
    let v = compare_with(&mut s, "control", &dir.join("test"), "test");
    assert!(v.choices.steps >= 2, "{:?}", v.choices);
    for (step, flags) in [
        (CompareStep::Nth(2), vec!["--step", "2"]),
        (CompareStep::All, vec!["--all-steps"]),
        (CompareStep::First, vec![]),
    ] {
        let v = compare_again(
            &mut s,
            CompareOptions {
                step,
                ..CompareOptions::default()
            },
        )
        .unwrap();
        let (json, md) = cli_diff(&dir, "control", "test", &flags);
        let doc: Value = serde_json::from_str(&json).unwrap();
        assert_table(table(&v, "ops"), &doc["ops"]);
        check_exports(&mut s, &json, &md, "diff_control_vs_test");
    }
    let e = compare_again(
        &mut s,
        CompareOptions {
            time_axis: true,
            ..CompareOptions::default()
        },
    )
    .unwrap_err();
    assert!(e.contains("apply to snapshot files"), "{e}");
}

#[test]
fn the_level1_run_at_rank_1_is_the_clis() {
    let dir = PathBuf::from(LEVEL1);
    let parent = dir.parent().unwrap();
    let (mut s, _) = side_a(&dir);
    let v = compare_with(&mut s, "level1", &dir, "level1");
    assert_eq!(v.choices.ranks, vec![0, 1]);
    let v = compare_again(
        &mut s,
        CompareOptions {
            rank: Some(1),
            step: CompareStep::All,
            ..CompareOptions::default()
        },
    )
    .unwrap();
    let (json, md) = cli_diff(parent, "level1", "level1", &["--rank", "1", "--all-steps"]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["a"]["rank"], 1);
    assert_table(table(&v, "ops"), &doc["ops"]);
    assert_table(table(&v, "steps"), &doc["steps"]);
    check_exports(&mut s, &json, &md, "diff_level1_vs_level1");
    let e = compare_again(
        &mut s,
        CompareOptions {
            rank: Some(9),
            ..CompareOptions::default()
        },
    )
    .unwrap_err();
    assert!(e.contains("has no rank 9 (ranks: 0, 1)"), "{e}");
}
