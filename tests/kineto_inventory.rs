//! GPU ranks in the inventory (formats.md §8 and §11): PyTorch profiler traces found
//! anywhere in a drop, rank from `distributedInfo.rank` / the file name / the order, role from
//! the parent folder, several traces of one rank, the Chakra `_et.json.gz` not a trace.

use proflens::cli::fs_opener::FsOpener;
use proflens::ingest::inventory::{FileKind, Inventory};
use proflens::ingest::rank::{CaptureKind, RankSource};
use proflens::ingest::{InputFile, MemOpener};
use proflens::parse::metadata::read_side_files;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures/");

fn inventory(dir: &str) -> Inventory {
    let (opener, files) = FsOpener::walk(std::path::Path::new(&format!("{FIX}{dir}"))).unwrap();
    let mut inv = Inventory::from_paths(&files);
    read_side_files(&mut inv, &opener);
    inv
}

fn rows(inv: &Inventory) -> Vec<(String, Option<i64>, u32, RankSource, String)> {
    inv.ranks
        .iter()
        .map(|r| {
            (
                r.role.clone(),
                r.rank_id,
                r.source_index,
                r.rank_source,
                r.files[0].rel.clone(),
            )
        })
        .collect()
}

#[test]
fn rl_insight_torch_profile_every_role_and_rank() {
    let inv = inventory("rl_insight/data/recipe/torch_data/torch_profile");
    let got = rows(&inv);
    let di = RankSource::DistributedInfo;
    let want = vec![
        (
            "actor_compute_log_prob".into(),
            Some(0),
            0,
            di,
            "prof_rank-0_031847.json.gz".into(),
        ),
        (
            "actor_compute_log_prob".into(),
            Some(1),
            0,
            di,
            "prof_rank-1_031847.json.gz".into(),
        ),
        (
            "actor_update".into(),
            Some(0),
            0,
            di,
            "prof_rank-0_031904.json.gz".into(),
        ),
        (
            "actor_update".into(),
            Some(1),
            0,
            di,
            "prof_rank-1_031904.json.gz".into(),
        ),
        (
            "agent_loop_rollout_replica_0".into(),
            Some(0),
            0,
            di,
            "huawei_372640.1771730291744166997.pt.trace.json.gz".into(),
        ),
        (
            "agent_loop_rollout_replica_0".into(),
            Some(1),
            0,
            di,
            "huawei_372640.1771730370159969000.pt.trace.json.gz".into(),
        ),
    ];
    assert_eq!(got, want);
    for r in &inv.ranks {
        assert_eq!(r.kind, CaptureKind::Kineto);
        assert_eq!(r.files[0].kind, FileKind::KinetoTrace);
        let h = r.side.kineto.as_ref().unwrap();
        assert!(h.is_trace && h.gzip);
        assert_eq!(h.devices, vec!["NVIDIA L20".to_string()]);
        assert_eq!(h.runtime.as_deref(), Some("CUDA 12.8"));
        assert_eq!(h.world_size, Some(2));
        assert!(
            r.readiness(proflens::ingest::inventory::Analysis::Anomaly)
                .unwrap()
                .can_run
        );
    }
    assert!(inv.notes.is_empty(), "{:?}", inv.notes);
    assert!(inv.ignored.is_empty());
}

#[test]
fn hta_data_folder_traces_and_the_chakra_file() {
    let inv = inventory("ascend/facebookresearch__HolisticTraceAnalysis/tests/data");
    assert_eq!(inv.ranks.len(), 12); // 13 .gz files, one of them the Chakra execution trace
    let et = inv
        .ignored
        .iter()
        .find(|f| f.path.ends_with("benchmark_simple_add_et.json.gz"))
        .expect("the execution trace is ignored");
    assert!(
        et.reason.contains("not a PyTorch profiler trace"),
        "{}",
        et.reason
    );
    let find = |end: &str| inv.ranks.iter().find(|r| r.dir.ends_with(end)).unwrap();
    // distributedInfo after the events (cupti_profiler): the head does not see it → order
    let c = find("benchmark_result_924719_1679055439_trace.json.gz");
    assert_eq!(
        (c.role.as_str(), c.rank_id, c.rank_source),
        ("cupti_profiler", Some(0), RankSource::Order)
    );
    let a = find("mi250_minitoy_train_ROCm6_2_kineto.json.gz");
    assert_eq!(
        a.side.kineto.as_ref().unwrap().runtime.as_deref(),
        Some("ROCm")
    );
    assert_eq!(a.rank_source, RankSource::Order);
    // No HTA trace has `cuda_runtime_version`: its `cuda…` runtime calls say CUDA (no
    // version), as `hip…` ones say ROCm; the CPU-only trace has no runtime at all.
    let mut runtimes: Vec<(String, Option<String>)> = inv
        .ranks
        .iter()
        .map(|r| {
            let name = r.dir.rsplit('/').next().unwrap().to_string();
            (name, r.side.kineto.as_ref().unwrap().runtime.clone())
        })
        .collect();
    runtimes.sort();
    let cuda = Some("CUDA".to_string());
    assert_eq!(
        runtimes,
        vec![
            (
                "benchmark_result_2869224_1695835535_trace.json.gz".into(),
                cuda.clone()
            ),
            (
                "benchmark_result_924719_1679055439_trace.json.gz".into(),
                cuda.clone()
            ),
            ("benchmark_simple_add_trace.json.gz".into(), cuda.clone()),
            ("control.json.gz".into(), cuda.clone()),
            (
                "mi250_minitoy_train_ROCm6_2_kineto.json.gz".into(),
                Some("ROCm".into())
            ),
            ("nccl_data.json.gz".into(), cuda.clone()),
            (
                "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz".into(),
                cuda.clone()
            ),
            ("rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz".into(), None),
            ("rank0.json.gz".into(), cuda.clone()),
            ("sampled_rank-0.json.gz".into(), cuda.clone()),
            ("sampled_rank-1.json.gz".into(), cuda.clone()),
            ("test.json.gz".into(), cuda.clone()),
        ]
    );
    let t = find("trace_diff/control/control.json.gz");
    assert_eq!(
        (t.role.as_str(), t.rank_id, t.rank_source),
        ("control", Some(3), RankSource::DistributedInfo)
    );
    let s = find("sampled_rank-1.json.gz");
    assert_eq!((s.role.as_str(), s.rank_id), ("trace_filter", Some(1)));
    let cpu = find("rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
    assert_eq!(cpu.rank_id, Some(34));
}

/// Names only (step 1) and the head rules (step 2) on files built here: a `.pt.trace.json`
/// with brackets in its folder name, two traces of one rank, a plain JSON that is not a trace,
/// a trace without any rank (order), an Ascend folder beside them.
#[test]
fn names_heads_and_several_traces_of_one_rank() {
    let trace = |rank: Option<i64>| {
        let d = rank
            .map(|r| format!(r#""distributedInfo": {{"rank": {r}}}, "#))
            .unwrap_or_default();
        format!(
            r#"{{{d}"traceEvents": [{{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1}}]}}"#
        )
    };
    let mut o = MemOpener::new();
    o.add("run/[trainer]/a.pt.trace.json", trace(Some(2)));
    o.add("run/[trainer]/b.pt.trace.json", trace(Some(2)));
    o.add("run/[trainer]/c.json", trace(None));
    o.add("run/[trainer]/config.json", r#"{"lr": 0.1}"#);
    o.add(
        "run/[trainer]/chrome.json",
        r#"[{"ph": "X", "cat": "python", "name": "x", "ts": 1, "dur": 1}]"#,
    );
    o.add(
        "run/r0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
        "x",
    );
    let files: Vec<InputFile> = o.list();
    let mut inv = Inventory::from_paths(&files);
    assert_eq!(inv.ranks.len(), 6); // 5 JSON candidates + the Ascend folder
    read_side_files(&mut inv, &o);
    let got: Vec<(String, Option<i64>, u32, RankSource)> = inv
        .ranks
        .iter()
        .filter(|r| r.kind == CaptureKind::Kineto)
        .map(|r| {
            (
                r.files[0].rel.clone(),
                r.rank_id,
                r.source_index,
                r.rank_source,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("c.json".into(), Some(0), 0, RankSource::Order),
            (
                "a.pt.trace.json".into(),
                Some(2),
                0,
                RankSource::DistributedInfo
            ),
            (
                "b.pt.trace.json".into(),
                Some(2),
                1,
                RankSource::DistributedInfo
            ),
        ]
    );
    let a = inv
        .ranks
        .iter()
        .find(|r| r.dir.ends_with("a.pt.trace.json"))
        .unwrap();
    assert_eq!(a.role, "[trainer]");
    assert!(a
        .notes
        .iter()
        .any(|n| n.code == "GPU-DISC-002" && n.message.contains("2 traces")));
    let ignored: Vec<&str> = inv.ignored.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        ignored,
        vec!["run/[trainer]/chrome.json", "run/[trainer]/config.json"]
    );
    assert!(inv.ranks.iter().any(|r| r.kind == CaptureKind::AscendPt));
}

/// The Inventory's rank cards list only their platform's fields
/// (`views::gpu::rank_card_facts`, what `ui::inventory` renders): an Ascend rank has no
/// `GPU` / `GPU runtime` rows (they read "—" on every Ascend card before), a GPU rank no
/// Ascend rows. The L20 trace's values are its `deviceProperties[0].name` ("NVIDIA L20") and
/// `cuda_runtime_version` 12080 (read with Python's `json`).
#[test]
fn rank_cards_list_only_their_platforms_fields() {
    use proflens::engine::session::dto;
    use proflens::views::gpu::rank_card_facts;
    let keys = |dir: &str| -> Vec<Vec<(&'static str, Option<String>)>> {
        dto::inventory(&inventory(dir), &[])
            .ranks
            .iter()
            .map(|r| rank_card_facts(r, None))
            .collect()
    };
    let ascend = keys("ascend/Ascend__msinsight/test/data/pytorch/text/level1");
    assert!(!ascend.is_empty());
    for card in &ascend {
        let labels: Vec<&str> = card.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            labels,
            [
                "folder",
                "rank from",
                "other files",
                "level",
                "export",
                "torch_npu",
                "CANN"
            ]
        );
    }
    let gpu = keys("rl_insight/data/recipe/torch_data/torch_profile/actor_update");
    assert_eq!(gpu.len(), 2);
    for card in &gpu {
        let labels: Vec<&str> = card.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            labels,
            ["folder", "rank from", "other files", "GPU", "GPU runtime"]
        );
        assert_eq!(card[3].1.as_deref(), Some("NVIDIA L20"));
        // 12080 = 12 · 1000 + 8 · 10.
        assert_eq!(card[4].1.as_deref(), Some("CUDA 12.8"));
    }
}

/// A file named like a PyTorch profiler trace that is not one (empty, not JSON, a `.gz` that is
/// not gzip) is an error of the drop (`GPU-FILE-002`), which the page's problems and the CLI
/// show, naming why and where; it is said once, not again among the files not used. A plain
/// JSON that is not a trace stays an info (`DROP-001`).
#[test]
fn a_trace_named_file_that_is_not_a_trace_is_an_error_said_once() {
    let mut o = MemOpener::new();
    o.add("run/empty.pt.trace.json", "");
    o.add("run/notjson.pt.trace.json", "this is not json at all\n");
    o.add("run/notgzip.pt.trace.json.gz", "not gzip\n");
    o.add("run/config.json", r#"{"lr": 0.1}"#);
    let mut inv = Inventory::from_paths(&o.list());
    read_side_files(&mut inv, &o);
    let errors: Vec<(String, String)> = inv
        .problems()
        .kept()
        .iter()
        .filter(|p| p.code == "GPU-FILE-002")
        .map(|p| (p.at.file.to_string(), p.message.clone()))
        .collect();
    let start = "named like a PyTorch profiler trace (*.pt.trace.json), but not a trace: ";
    assert_eq!(
        errors,
        vec![
            (
                "run/empty.pt.trace.json".into(),
                format!("{start}empty.pt.trace.json (byte 0): file is empty; not used")
            ),
            (
                "run/notgzip.pt.trace.json.gz".into(),
                format!("{start}named .gz but not gzip-compressed (it does not start with the bytes 1F 8B), read as plain text: notgzip.pt.trace.json.gz (byte 0): expected `[` or `{{` at the start of a trace; not used")
            ),
            (
                "run/notjson.pt.trace.json".into(),
                format!("{start}notjson.pt.trace.json (byte 0): expected `[` or `{{` at the start of a trace; not used")
            ),
        ]
    );
    let not_used: Vec<(&str, String)> = inv
        .not_used()
        .into_iter()
        .map(|n| (n.code, n.file))
        .collect();
    assert_eq!(not_used, vec![("DROP-001", "run/config.json".to_string())]);
    // Every file is still listed among those not used (the page's list), with its reason.
    assert_eq!(inv.ignored.len(), 4);
}

/// A GPU trace and an Ascend rank under one parent folder are not peers: the GPU rank's role
/// becomes `<role> (GPU)` (with an info note), so the cross-rank rules, which compare the ranks
/// of one role, never put a CUDA trace and an NPU rank in one median. A drop of GPU traces only
/// keeps its roles.
#[test]
fn a_gpu_trace_beside_an_ascend_rank_is_not_its_peer() {
    let trace = r#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1}]}"#;
    let mut o = MemOpener::new();
    o.add("mixed/rank0.pt.trace.json", trace);
    o.add(
        "mixed/r0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
        "x",
    );
    let mut inv = Inventory::from_paths(&o.list());
    read_side_files(&mut inv, &o);
    let mut roles: Vec<(CaptureKind, String)> =
        inv.ranks.iter().map(|r| (r.kind, r.role.clone())).collect();
    roles.sort_by_key(|r| r.1.clone());
    assert_eq!(
        roles,
        vec![
            (CaptureKind::AscendPt, "mixed".to_string()),
            (CaptureKind::Kineto, "mixed (GPU)".to_string())
        ]
    );
    let gpu = inv
        .ranks
        .iter()
        .find(|r| r.kind == CaptureKind::Kineto)
        .unwrap();
    assert!(
        gpu.notes.iter().any(|n| n.code == "GPU-DISC-004"),
        "{:?}",
        gpu.notes
    );
    // GPU traces alone keep the folder's role.
    let mut o = MemOpener::new();
    o.add("mixed/rank0.pt.trace.json", trace);
    o.add("mixed/rank1.pt.trace.json", trace);
    let mut inv = Inventory::from_paths(&o.list());
    read_side_files(&mut inv, &o);
    assert!(inv
        .ranks
        .iter()
        .all(|r| r.role == "mixed" && r.notes.iter().all(|n| n.code != "GPU-DISC-004")));
}

/// Traces of one folder whose heads state different devices or world sizes are of different
/// runs, not peers (formats.md §8): each gets the role `<folder> (<device>, world <N>)` and a
/// `GPU-DISC-006` note. Traces of one run, and a trace whose head states neither, keep the
/// folder's role; an empty device name states nothing.
#[test]
fn traces_of_different_runs_in_one_folder_are_not_peers() {
    let head = |device: &str, world: u32, rank: u32| {
        format!(
            r#"{{"deviceProperties": [{{"id": 0, "name": "{device}"}}], "distributedInfo": {{"backend": "nccl", "rank": {rank}, "world_size": {world}}}, "traceEvents": [{{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1}}]}}"#
        )
    };
    let bare = r#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1}]}"#;
    let mut o = MemOpener::new();
    o.add("mix/b200.pt.trace.json", head("NVIDIA B200", 8, 0).as_str());
    o.add(
        "mix/mi300.pt.trace.json",
        head("AMD Instinct MI300X", 8, 0).as_str(),
    );
    o.add("mix/late.pt.trace.json", bare);
    o.add(
        "same/a.pt.trace.json",
        head("NVIDIA H100 80GB HBM3", 2, 0).as_str(),
    );
    o.add(
        "same/b.pt.trace.json",
        head("NVIDIA H100 80GB HBM3", 2, 1).as_str(),
    );
    o.add("unnamed/a.pt.trace.json", head("", 2, 0).as_str());
    o.add("unnamed/b.pt.trace.json", bare);
    let mut inv = Inventory::from_paths(&o.list());
    read_side_files(&mut inv, &o);
    let mut roles: Vec<(String, String, bool)> = inv
        .ranks
        .iter()
        .map(|r| {
            let note = r.notes.iter().any(|n| n.code == "GPU-DISC-006");
            (r.files[0].path.clone(), r.role.clone(), note)
        })
        .collect();
    roles.sort();
    let row = |f: &str, role: &str, note| (f.to_string(), role.to_string(), note);
    assert_eq!(
        roles,
        vec![
            row("mix/b200.pt.trace.json", "mix (NVIDIA B200, world 8)", true),
            row("mix/late.pt.trace.json", "mix", false),
            row(
                "mix/mi300.pt.trace.json",
                "mix (AMD Instinct MI300X, world 8)",
                true
            ),
            row("same/a.pt.trace.json", "same", false),
            row("same/b.pt.trace.json", "same", false),
            row("unnamed/a.pt.trace.json", "unnamed", false),
            row("unnamed/b.pt.trace.json", "unnamed", false),
        ]
    );
    // Rank 0 of each run: no GPU-DISC-002 (two traces of one rank) across runs.
    let b200 = inv
        .ranks
        .iter()
        .find(|r| r.files[0].path == "mix/b200.pt.trace.json")
        .unwrap();
    assert_eq!(b200.rank_id, Some(0));
    assert!(b200.notes.iter().all(|n| n.code != "GPU-DISC-002"));
    let note = b200
        .notes
        .iter()
        .find(|n| n.code == "GPU-DISC-006")
        .unwrap();
    assert_eq!(
        note.message,
        "mix/b200.pt.trace.json states NVIDIA B200, world 8, unlike other traces of the folder \"mix\" (2 runs): it is compared only with the traces of its own run, as role \"mix (NVIDIA B200, world 8)\""
    );
}
