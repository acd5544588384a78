//! The Ascend DB export end to end (docs/rules/ascend-db.md), through the CLI on the DB
//! fixtures (`db/level0|1|2`, five ranks):
//!
//! * every DB rank gives the same memory rows and the same step metrics as its text export
//!   rebuilt from the same DB by an independent reading (`tests/reference/ascend_db_text.py`,
//!   Python's `sqlite3` over the rules), and the values an independent query gives;
//! * the DB files are never changed and no `-wal`/`-journal` appears beside them, a WAL-flagged
//!   file (the real MindStudio-Insight-touched L1r0, and a flagged copy) is read;
//! * both exports in one folder: the DB is read once, the text skipped, the inventory says so;
//! * bad input (not SQLite, truncated, the wrong tables, a DB that cannot be opened beside a
//!   text export): located problems, nothing panics, the rest is analysed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const DB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/db"
);
const UT_DB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/Ascend__msinsight/server/src/test/test_data/full_db/msprof_0.db"
);
const REBUILD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/reference/ascend_db_text.py"
);
const RANKS: [&str; 5] = [
    "level0/rank0_ascend_pt",
    "level0/rank1_ascend_pt",
    "level1/rank0_ascend_pt",
    "level1/rank1_ascend_pt",
    "level2/rank0_ascend_pt",
];

fn proflens(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("proflens_db_{}_{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), &t).unwrap();
        }
    }
}

/// Every file under `root` with its bytes.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// The rebuilt text export of every DB rank, under `<tmp>/db/...` (the same relative paths).
fn rebuilt(name: &str) -> PathBuf {
    let root = temp(name).join("db");
    for r in RANKS {
        let st = Command::new("python3")
            .arg(REBUILD)
            .arg(Path::new(DB).join(r))
            .arg(root.join(r))
            .status()
            .expect("python3 runs the reference rebuild");
        assert!(st.success(), "rebuild of {r}");
    }
    root
}

fn anomaly_json(root: &Path) -> serde_json::Value {
    let (code, out, err) = proflens(&["anomaly", s(root)]);
    assert_eq!(code, 0, "{err}");
    let mut v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for r in v.as_array_mut().unwrap() {
        // Which files were read differs by construction, and the DB says its step trace
        // times are the exact ones (ASC-DB-005).
        r["proflens"]["inputs"] = serde_json::Value::Null;
        let p = r["proflens"]["problems"].as_array_mut().unwrap();
        p.retain(|x| !x.as_str().unwrap_or("").contains("[ASC-DB-005]"));
    }
    v
}

#[test]
fn db_ranks_equal_their_rebuilt_text_export() {
    let text = rebuilt("rebuilt");
    let (c1, db_mem, e1) = proflens(&["memory", DB, "--format", "csv"]);
    let (c2, tx_mem, e2) = proflens(&["memory", s(&text), "--format", "csv"]);
    assert_eq!((c1, c2), (0, 0), "{e1}\n{e2}");
    assert!(e1.contains("920 rows from 5 of 5 rank folder(s)"), "{e1}");
    assert_eq!(
        db_mem, tx_mem,
        "memory rows differ between the DB and its rebuilt text"
    );
    let (_, db_par, _) = proflens(&["memory", DB, "--parity", "--format", "csv"]);
    let (_, tx_par, _) = proflens(&["memory", s(&text), "--parity", "--format", "csv"]);
    assert!(db_par.lines().count() > 5 * 100);
    assert_eq!(
        db_par, tx_par,
        "parity rows differ between the DB and its rebuilt text"
    );
    let db_an = anomaly_json(Path::new(DB));
    let tx_an = anomaly_json(&text);
    assert_eq!(
        db_an, tx_an,
        "step metrics differ between the DB and its rebuilt text"
    );
    // Values of an independent query of each DB (Python sqlite3): STEP_TIME id 50, 187
    // compute tasks + 4 COMMUNICATION_OP rows, Σ COMMUNICATION_OP (endNs − startNs).
    let comm_ms = [89.880576, 93.993858, 102.1081, 98.59019, 94.107521];
    for (i, r) in db_an.as_array().unwrap().iter().enumerate() {
        let st = &r["steps"][0];
        assert_eq!(st["step_id"], "ProfilerStep#50", "{}", RANKS[i]);
        let d = &r["anomaly_discovery"];
        assert_eq!(
            d["comm_totals"]["comm_total_ms_kernel_details"].as_f64(),
            Some(comm_ms[i]),
            "{}",
            RANKS[i]
        );
        assert_eq!(d["step_detection_method"], "marker");
    }
    // Memory: 184 OP_MEMORY rows per rank, 57 of them GE (cann::, never matched).
    let ge = db_mem.lines().filter(|l| l.starts_with("cann::")).count();
    assert_eq!(ge, 5 * 57);
    let _ = std::fs::remove_dir_all(text.parent().unwrap());
}

#[test]
fn the_db_files_are_never_changed_and_a_wal_flagged_file_is_read() {
    let before = snapshot(Path::new(DB));
    // The real L1r0 DB was opened by MindStudio Insight: WAL-flagged header.
    let l1r0 = Path::new(DB)
        .join("level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
    assert_eq!(&before[&l1r0][18..20], &[2, 2]);
    let out = temp("untouched");
    let (code, _, err) = proflens(&["analyze", "--out-dir", s(&out), DB]);
    assert_eq!(code, 0, "{err}");
    let after = snapshot(Path::new(DB));
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    assert!(before == after, "a DB fixture changed");
    // A flagged copy of a pristine rank gives the same rows as the original.
    let rank = temp("wal").join("rank0_ascend_pt");
    copy_dir(&Path::new(DB).join(RANKS[0]), &rank);
    let f = rank.join("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
    let mut b = std::fs::read(&f).unwrap();
    assert_eq!(&b[18..20], &[1, 1]);
    b[18] = 2;
    b[19] = 2;
    std::fs::write(&f, &b).unwrap();
    let listing = snapshot(&rank);
    let (c1, flagged, e1) = proflens(&["memory", s(&rank), "--format", "csv"]);
    let (c2, plain, _) = proflens(&["memory", &format!("{DB}/{}", RANKS[0]), "--format", "csv"]);
    assert_eq!((c1, c2), (0, 0), "{e1}");
    assert_eq!(flagged, plain);
    assert!(
        snapshot(&rank) == listing,
        "the flagged copy changed or got a sibling"
    );
    let _ = std::fs::remove_dir_all(out);
    let _ = std::fs::remove_dir_all(rank.parent().unwrap());
}

#[test]
fn both_exports_in_one_folder_read_the_db_once() {
    let text = rebuilt("both_text");
    let rank = text.join(RANKS[3]);
    let out = rank.join("ASCEND_PROFILER_OUTPUT");
    for f in ["ascend_pytorch_profiler_1.db", "analysis.db"] {
        std::fs::copy(
            Path::new(DB)
                .join(RANKS[3])
                .join("ASCEND_PROFILER_OUTPUT")
                .join(f),
            out.join(f),
        )
        .unwrap();
    }
    let (code, both, err) = proflens(&["memory", s(&rank), "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    let (_, db_only, _) = proflens(&["memory", &format!("{DB}/{}", RANKS[3]), "--format", "csv"]);
    assert_eq!(both, db_only);
    let (code, an, err) = proflens(&["anomaly", s(&rank)]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&an).unwrap();
    let inputs: Vec<String> = v[0]["proflens"]["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().rsplit('/').next().unwrap().to_string())
        .collect();
    assert_eq!(inputs, ["ascend_pytorch_profiler_1.db", "analysis.db"]);
    // The inventory says which export was read and why.
    let both_out = temp("both_out");
    let (_, _, an_err) = proflens(&["analyze", "--out-dir", s(&both_out), s(&rank)]);
    let _ = std::fs::remove_dir_all(&both_out);
    assert!(
        an_err.contains("ASC-DB-001") && an_err.contains("ascend_pytorch_profiler_1.db is read"),
        "{an_err}"
    );
    let _ = std::fs::remove_dir_all(text.parent().unwrap());
}

fn rank_with_db(name: &str, bytes: &[u8]) -> PathBuf {
    let rank = temp(name).join("rank0_ascend_pt");
    let out = rank.join("ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::copy(
        Path::new(DB).join(RANKS[0]).join("profiler_info_0.json"),
        rank.join("profiler_info_0.json"),
    )
    .unwrap();
    std::fs::write(out.join("ascend_pytorch_profiler_0.db"), bytes).unwrap();
    rank
}

#[test]
fn bad_db_files_are_located_problems() {
    let good = std::fs::read(
        Path::new(DB)
            .join(RANKS[0])
            .join("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"),
    )
    .unwrap();
    // Not SQLite.
    let r = rank_with_db("notsqlite", b"this is a text file named .db\n");
    let (code, _, err) = proflens(&["memory", s(&r), "--format", "csv"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("ASC-DB-003") && err.contains("not an SQLite database"),
        "{err}"
    );
    // Truncated: the pages past the cut are missing.
    let r = rank_with_db("truncated", &good[..good.len() / 3]);
    let (_, _, err) = proflens(&["memory", s(&r), "--format", "csv"]);
    assert!(err.contains("ASC-DB-00"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let (_, _, err) = proflens(&["anomaly", s(&r)]);
    assert!(!err.contains("panicked"), "{err}");
    // The wrong tables (a bare msprof DB): each missing table named.
    let r = rank_with_db("wrong_tables", &std::fs::read(UT_DB).unwrap());
    let (_, _, err) = proflens(&["memory", s(&r), "--format", "csv"]);
    assert!(
        err.contains("ASC-DB-002") && err.contains("OP_MEMORY"),
        "{err}"
    );
    // A row without its allocation time: left out, named by table and row id.
    let r = rank_with_db("bad_row", &good);
    let f = r.join("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
    let st = Command::new("python3")
        .arg("-c")
        .arg("import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('UPDATE OP_MEMORY SET allocationTime = NULL WHERE rowid = 5'); c.commit()")
        .arg(&f)
        .status()
        .unwrap();
    assert!(st.success());
    let (code, _, err) = proflens(&["memory", s(&r), "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("ASC-DB-004")
            && err.contains("OP_MEMORY row id 5")
            && err.contains("183 rows"),
        "{err}"
    );
    // analysis.db without its profiler DB: only the communication analysis reads it, and this
    // one (level 0) holds no communication tables: nothing to analyse, and it says why.
    let r = temp("analysis_only").join("rank0_ascend_pt");
    std::fs::create_dir_all(r.join("ASCEND_PROFILER_OUTPUT")).unwrap();
    for f in ["profiler_info_0.json", "ASCEND_PROFILER_OUTPUT/analysis.db"] {
        std::fs::copy(Path::new(DB).join(RANKS[0]).join(f), r.join(f)).unwrap();
    }
    let out = temp("analysis_only_out");
    let (code, _, err) = proflens(&["analyze", "--out-dir", s(&out), s(&r)]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("ASC-DB-002")
            && err.contains("no communication tables (CommAnalyzerTime, CommAnalyzerMatrix)"),
        "{err}"
    );
    // A DB that cannot be opened beside a text export: the text is read.
    let text = rebuilt("fallback");
    let rank = text.join(RANKS[0]);
    std::fs::write(
        rank.join("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"),
        b"garbage",
    )
    .unwrap();
    let (code, rows, err) = proflens(&["memory", s(&rank), "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("ASC-DB-003"), "{err}");
    let (_, db_rows, _) = proflens(&["memory", &format!("{DB}/{}", RANKS[0]), "--format", "csv"]);
    assert_eq!(rows, db_rows);
    let _ = std::fs::remove_dir_all(text.parent().unwrap());
    for t in [
        "notsqlite",
        "truncated",
        "wrong_tables",
        "bad_row",
        "analysis_only",
        "analysis_only_out",
    ] {
        let d = std::env::temp_dir().join(format!("proflens_db_{}_{t}", std::process::id()));
        let _ = std::fs::remove_dir_all(d);
    }
}

/// The DB export of generated text ranks (`scripts/ascend_db_from_text.py`, the inverse rules)
/// gives the text's memory rows and step metrics: 5,000 memory rows over a ~2 MB trace, and
/// 6,000 kernels in 3 steps with HCCL rows on their own stream.
#[test]
fn generated_runs_give_the_same_results_from_either_export() {
    use proflens::engine::synth::ascend::{
        memory_rng, profiler_info_json, write_anomaly_rank, write_memory_trace,
        write_operator_memory, AnomalySpec, MemoryTraceSpec,
    };
    let root = temp("generated");
    let text = root.join("text/run/rank0_ascend_pt");
    let out = text.join("ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(text.join("profiler_info_0.json"), profiler_info_json(0)).unwrap();
    let mut rng = memory_rng(7);
    let mut ops = Vec::new();
    let spec = MemoryTraceSpec {
        target_bytes: 2 << 20,
        rank: 0,
    };
    let mut tv = Vec::new();
    write_memory_trace(&mut tv, &spec, &mut rng, &mut ops).unwrap();
    std::fs::write(out.join("trace_view.json"), tv).unwrap();
    let mut om = Vec::new();
    write_operator_memory(&mut om, 5000, &ops, &mut rng).unwrap();
    std::fs::write(out.join("operator_memory.csv"), om).unwrap();
    let an = root.join("text/run/rank1_ascend_pt");
    std::fs::create_dir_all(an.join("ASCEND_PROFILER_OUTPUT")).unwrap();
    std::fs::write(an.join("profiler_info_1.json"), profiler_info_json(1)).unwrap();
    let (mut kd, mut tv) = (Vec::new(), Vec::new());
    let spec = AnomalySpec {
        kernels: 6000,
        steps: 3,
    };
    write_anomaly_rank(&mut kd, &mut tv, &spec).unwrap();
    std::fs::write(an.join("ASCEND_PROFILER_OUTPUT/kernel_details.csv"), kd).unwrap();
    std::fs::write(an.join("ASCEND_PROFILER_OUTPUT/trace_view.json"), tv).unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/ascend_db_from_text.py"
    );
    for r in ["rank0_ascend_pt", "rank1_ascend_pt"] {
        let st = Command::new("python3")
            .arg(script)
            .arg(root.join("text/run").join(r))
            .arg(root.join("db/run").join(r))
            .status()
            .unwrap();
        assert!(st.success());
    }
    let t = root.join("text/run");
    let d = root.join("db/run");
    let (_, tm, e1) = proflens(&["memory", s(&t), "--format", "csv"]);
    let (_, dm, e2) = proflens(&["memory", s(&d), "--format", "csv"]);
    assert!(e1.contains("5000 rows"), "{e1}");
    assert!(e2.contains("5000 rows"), "{e2}");
    assert_eq!(tm, dm, "memory rows differ");
    let steps = |root: &Path| {
        let v = anomaly_json(root);
        let r = v
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["rank_id"] == 1)
            .unwrap()
            .clone();
        let keep = [
            "step_id",
            "service_ms",
            "device_busy_union_ms",
            "underfeed_ms",
            "bubble_count",
            "total_kernel_count",
        ];
        r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| keep.map(|k| s[k].clone()))
            .collect::<Vec<_>>()
    };
    let (ts, ds) = (steps(&t), steps(&d));
    assert_eq!(ts.len(), 3);
    assert_eq!(ts, ds, "step metrics differ");
    let _ = std::fs::remove_dir_all(root);
}
