//! What the Compare-tab session tests share: the fixtures, the CLI's `proflens diff` run, side
//! A opened and analysed in a session, "Compare with…" side B, and the checks of a comparison
//! against the CLI's document and export bytes.

use std::path::{Path, PathBuf};
use std::process::Command;

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::session::{Collected, Session};
use proflens::protocol::compare::{
    CellDto, CompareExportKind, CompareOptions, CompareRequest, CompareTableDto, CompareViewDto,
};
use proflens::protocol::{AnalysisKind, ExportRequest, Reply, Request, Response, Target};
use serde_json::Value;

use crate::session_common::{metas, open_dir, send};

pub const SNAPS: &str = "../shared/fixtures/torch_snapshots";
pub const HTA: &str =
    "../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/trace_diff";
pub const LEVEL1: &str =
    "../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1";

/// `proflens diff a b EXTRA… --json J --md M` run in `dir`: the JSON text and the Markdown.
pub fn cli_diff(dir: &Path, a: &str, b: &str, extra: &[&str]) -> (String, String) {
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
pub fn side_a(path: &Path) -> (Session, FsOpener) {
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
pub fn compare_with(s: &mut Session, a_name: &str, b: &Path, b_name: &str) -> CompareViewDto {
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
pub fn compare_again(s: &mut Session, options: CompareOptions) -> Result<CompareViewDto, String> {
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
pub fn assert_overlays(v: &CompareViewDto, odoc: &Value, columns: usize) {
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
pub fn export(s: &mut Session, what: CompareExportKind) -> (String, Vec<u8>) {
    let (opener, _) = FsOpener::walk(Path::new(SNAPS)).unwrap();
    let out: Collected = send(s, &opener, 4, Request::Export(ExportRequest::Compare(what)));
    let Some((_, Response::ExportDone { file_name, .. })) = out.out.last() else {
        panic!("export failed: {:?}", out.out.last())
    };
    (file_name.clone(), out.bytes)
}

/// The document's value as the tab's cell holds it.
pub fn cell_of(v: &Value) -> CellDto {
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
pub fn assert_table(t: &CompareTableDto, rows: &Value) {
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

pub fn table<'a>(v: &'a CompareViewDto, id: &str) -> &'a CompareTableDto {
    v.tables
        .iter()
        .find(|t| t.id == id)
        .unwrap_or_else(|| panic!("no table {id}"))
}

pub fn check_exports(s: &mut Session, json: &str, md: &str, stem: &str) {
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

/// Rank folder `rank` of `dir` analysed alone in a session (a pool worker holding one rank):
/// the session and the anomaly and memory summaries it sent.
pub fn one_rank(
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

/// A snapshot with two devices made from a real one (bcrafton's, with `time_us` and an
/// optimizer annotation): device 0 is the file's trace, device 1 a copy of its last two thirds
/// (no shared objects: the parser refuses memo references to trace entries), with device
/// 0's segments and annotations copied to device 1. Written by CPython.
pub fn two_device_pickle() -> PathBuf {
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
