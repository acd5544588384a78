//! The Compare tab in the worker session (issue 13): a drop (side A) analysed as the page does,
//! then "Compare with…" side B (`Request::Compare`, B's files through their own opener). The
//! tab's numbers must be the CLI's document (`proflens diff A B --json`, run from the inputs'
//! parent folder so the side names agree), and the exports its bytes (`--json FILE`, `--md
//! FILE`). Real pairs: two snapshots of one project, the HTA trace_diff pair, two level1
//! ranks, and the level1 run against itself (the rank table).

mod session_common;

use std::path::{Path, PathBuf};
use std::process::Command;

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::session::{Collected, Session};
use proflens::protocol::compare::{
    CellDto, CompareExportKind, CompareKind, CompareOptions, CompareRequest, CompareStep,
    CompareTableDto, CompareViewDto,
};
use proflens::protocol::{AnalysisKind, ExportRequest, Reply, Request, Response, Target};
use serde_json::Value;
use session_common::{metas, open_dir, send};

const SNAPS: &str = "../shared/fixtures/torch_snapshots";
const HTA: &str =
    "../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/trace_diff";
const LEVEL1: &str = "../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1";

/// `proflens diff a b EXTRA… --json J --md M` run in `dir`: the JSON text and the Markdown.
fn cli_diff(dir: &Path, a: &str, b: &str, extra: &[&str]) -> (String, String) {
    let tmp = std::env::temp_dir().join(format!(
        "proflens-compare-session-{}-{a}-{b}-{}",
        std::process::id(),
        extra.join("_")
    ));
    std::fs::create_dir_all(&tmp).unwrap();
    let (j, m) = (tmp.join("d.json"), tmp.join("d.md"));
    let out = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .current_dir(dir)
        .args(["diff", a, b, "--json"])
        .arg(&j)
        .arg("--md")
        .arg(&m)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let res = (
        std::fs::read_to_string(&j).unwrap(),
        std::fs::read_to_string(&m).unwrap(),
    );
    let _ = std::fs::remove_dir_all(&tmp);
    res
}

/// Side A opened and run as the page does: every target of the drop in one session.
fn side_a(path: &Path) -> (Session, FsOpener) {
    let mut s = Session::new();
    let (opener, out) = open_dir(&mut s, path);
    let Some((_, Response::Inventory(inv))) = out.out.first() else {
        panic!("no inventory: {:?}", out.out)
    };
    let mut targets: Vec<Target> = (0..inv.ranks.len() as u32).map(Target::Rank).collect();
    targets.extend((0..inv.snapshots.len() as u32).map(Target::Snapshot));
    let run = send(
        &mut s,
        &opener,
        2,
        Request::Run {
            analyses: vec![
                AnalysisKind::Memory,
                AnalysisKind::Anomaly,
                AnalysisKind::Snapshot,
            ],
            targets,
        },
    );
    assert!(
        run.out
            .iter()
            .any(|(_, r)| matches!(r, Response::RunDone { failed: 0, .. })
                || matches!(r, Response::RunDone { .. })),
        "{:?}",
        run.out.last()
    );
    (s, opener)
}

/// "Compare with…" `b` in session `s`: the reply's view.
fn compare_with(s: &mut Session, a_name: &str, b: &Path, b_name: &str) -> CompareViewDto {
    let (opener, files) = FsOpener::walk(b).unwrap();
    let out = send(
        s,
        &opener,
        3,
        Request::Compare(CompareRequest {
            files: metas(&files),
            a_name: a_name.into(),
            b_name: b_name.into(),
            a_snapshot: 0,
            overlay_columns: 400,
            a_elsewhere: Vec::new(),
            b_is_a: false,
            options: Default::default(),
        }),
    );
    match out.out.as_slice() {
        [(3, Response::Reply(Reply::Compare(v)))] => (**v).clone(),
        other => panic!("unexpected reply: {other:?}"),
    }
}

/// A control of the Compare tab: the comparison held by `s` computed again with `options`
/// (`Request::CompareAgain`; the opener given reads nothing: it serves an empty folder).
fn compare_again(s: &mut Session, options: CompareOptions) -> Result<CompareViewDto, String> {
    let empty = std::env::temp_dir().join(format!("proflens-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let (opener, _) = FsOpener::walk(&empty).unwrap();
    let out = send(s, &opener, 5, Request::CompareAgain(options));
    match out.out.as_slice() {
        [(5, Response::Reply(Reply::Compare(v)))] => Ok((**v).clone()),
        [(5, Response::Failed(f))] => Err(f.message.clone()),
        other => panic!("unexpected reply: {other:?}"),
    }
}

/// The view's overlaid curves equal those of the CLI's document `odoc` (`--overlay N …`).
fn assert_overlays(v: &CompareViewDto, odoc: &Value, columns: usize) {
    let devices = odoc["devices"].as_array().unwrap();
    assert_eq!(v.overlays.len(), devices.len());
    for (o, d) in v.overlays.iter().zip(devices) {
        let want = &d["overlay"];
        assert_eq!(o.device as u64, d["device"].as_u64().unwrap());
        assert_eq!(o.axis, want["axis"].as_str().unwrap());
        assert_eq!(o.x0, want["x0"].as_f64().unwrap());
        assert_eq!(o.x1, want["x1"].as_f64().unwrap());
        for (side, got) in [("a", &o.a), ("b", &o.b)] {
            let w = want[side].as_array().unwrap();
            assert_eq!(got.len(), w.len());
            for (g, w) in got.iter().zip(w) {
                assert_eq!(g.curve, w["curve"].as_str().unwrap());
                let col = |k: &str| -> Vec<Option<i64>> {
                    w[k].as_array().unwrap().iter().map(Value::as_i64).collect()
                };
                assert_eq!(g.min, col("min"));
                assert_eq!(g.max, col("max"));
                assert_eq!(g.max.len(), columns);
            }
        }
    }
}

/// The export `what` of the comparison held by `s`: file name and bytes.
fn export(s: &mut Session, what: CompareExportKind) -> (String, Vec<u8>) {
    let (opener, _) = FsOpener::walk(Path::new(SNAPS)).unwrap();
    let out: Collected = send(s, &opener, 4, Request::Export(ExportRequest::Compare(what)));
    let Some((_, Response::ExportDone { file_name, .. })) = out.out.last() else {
        panic!("export failed: {:?}", out.out.last())
    };
    (file_name.clone(), out.bytes)
}

/// The document's value as the tab's cell holds it.
fn cell_of(v: &Value) -> CellDto {
    match v {
        Value::Null => CellDto::Null,
        Value::String(s) => CellDto::Text(s.clone()),
        Value::Number(n) => match n.as_i64() {
            Some(i) => CellDto::Int(i),
            None => CellDto::Num(n.as_f64().unwrap()),
        },
        Value::Bool(b) => CellDto::Text(if *b { "yes" } else { "no" }.into()),
        other => panic!("not a cell: {other}"),
    }
}

/// Every row of table `t` equals the document's `rows`, field by field (the column's path).
fn assert_table(t: &CompareTableDto, rows: &Value) {
    let rows = rows.as_array().unwrap();
    assert_eq!(t.rows.len(), rows.len(), "{}", t.id);
    for (got, want) in t.rows.iter().zip(rows) {
        for (c, col) in t.columns.iter().enumerate() {
            let v = col
                .field
                .split('.')
                .try_fold(want, |v, k| v.get(k))
                .unwrap_or(&Value::Null);
            assert_eq!(got[c], cell_of(v), "{} {}", t.id, col.field);
        }
    }
}

fn table<'a>(v: &'a CompareViewDto, id: &str) -> &'a CompareTableDto {
    v.tables
        .iter()
        .find(|t| t.id == id)
        .unwrap_or_else(|| panic!("no table {id}"))
}

fn check_exports(s: &mut Session, json: &str, md: &str, stem: &str) {
    let (name, bytes) = export(s, CompareExportKind::Json);
    assert_eq!(name, format!("{stem}.json"));
    assert!(
        bytes == json.as_bytes(),
        "JSON export differs from the CLI's"
    );
    let (name, bytes) = export(s, CompareExportKind::Md);
    assert_eq!(name, format!("{stem}.md"));
    assert!(
        bytes == md.as_bytes(),
        "Markdown export differs from the CLI's"
    );
}

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
    // MiB, all 19 sites at the peak changed.
    assert_eq!(devices.len(), 1);
    assert_eq!(v.facts[0].delta, CellDto::Int(-2_469_306_376));
    assert_eq!(v.facts[1].delta, CellDto::Int(492_092_412));
    let sites = table(&v, "dev0.sites_at_peak");
    assert_eq!(sites.rows.len(), 19);
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

/// Rank folder `rank` of `dir` analysed alone in a session (a pool worker holding one rank):
/// the session and the anomaly and memory summaries it sent.
fn one_rank(
    dir: &Path,
    rank: u32,
) -> (
    Session,
    proflens::protocol::anomaly::AnomalySummaryDto,
    Option<proflens::protocol::MemorySummaryDto>,
) {
    let mut s = Session::new();
    let (opener, _) = open_dir(&mut s, dir);
    let run = send(
        &mut s,
        &opener,
        2,
        Request::Run {
            analyses: vec![AnalysisKind::Memory, AnalysisKind::Anomaly],
            targets: vec![Target::Rank(rank)],
        },
    );
    let (mut anomaly, mut memory) = (None, None);
    for (_, r) in run.out {
        match r {
            Response::Done {
                summary: proflens::protocol::Summary::Anomaly(a),
                ..
            } => anomaly = Some(a),
            Response::Done {
                summary: proflens::protocol::Summary::Memory(m),
                ..
            } => memory = Some(m),
            _ => {}
        }
    }
    (s, anomaly.unwrap(), memory)
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

/// A snapshot with two devices made from a real one (bcrafton's, with `time_us` and an
/// optimizer annotation): device 0 is the file's trace, device 1 a copy of its last two thirds
/// (no shared objects: the parser refuses memo references to trace entries), with device
/// 0's segments and annotations copied to device 1. Written by CPython.
fn two_device_pickle() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("compare_two_devices_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("two_devices.pickle");
    let script = r#"
import copy, pickle, sys
class Plain(pickle.Unpickler):
    def find_class(self, m, n):
        raise pickle.UnpicklingError("globals are not allowed")
d = Plain(open(sys.argv[1], "rb")).load()
t = d["device_traces"][0]
d["device_traces"] = [t, copy.deepcopy(t[len(t) // 3:])]
d["segments"] = d["segments"] + [dict(copy.deepcopy(s), device=1) for s in d["segments"]]
d["external_annotations"] = d["external_annotations"] + [dict(a, device=1) for a in d["external_annotations"]]
pickle.dump(d, open(sys.argv[2], "wb"), protocol=4)
"#;
    let st = Command::new("python3")
        .args(["-c", script])
        .arg(PathBuf::from(SNAPS).join("bcrafton_assignment2-systems__memory_snapshot.pickle"))
        .arg(&out)
        .status()
        .expect("python3 is required by the tests");
    assert!(st.success());
    out
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
