//! Two runs' files of the same name in two folders (`run1/trace.json.gz`, `run2/trace.json.gz`;
//! `run1/snapshot.pickle`, `run2/snapshot.pickle`), compared by `proflens diff`: each side is
//! told apart in the documents and on stderr (docs/compare.md, "Side names").

mod diff_common;
mod snapshot_common;

use std::path::Path;

use diff_common::{proflens_in, same_name_runs};
use serde_json::Value;
use snapshot_common::fixture_dir;

/// Two runs' traces of the same name (`run1/trace.json.gz`, `run2/trace.json.gz`): the
/// documents name them by the paths as given, and the lines on stderr say which side each
/// side's problems are about (docs/compare.md, "Side names").
#[test]
fn two_traces_of_one_name_are_told_apart() {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../shared/fixtures/rl_insight/data/recipe/torch_data/torch_profile/agent_loop_rollout_replica_0",
    );
    let root = same_name_runs(
        "trace_same_name",
        &from.join("huawei_372640.1771730291744166997.pt.trace.json.gz"),
        &from.join("huawei_372640.1771730370159969000.pt.trace.json.gz"),
        "trace.json.gz",
    );
    let args = ["diff", "run1/trace.json.gz", "run2/trace.json.gz"];
    let (rc, json, err) = proflens_in(&root, &[&args[..], &["--json", "-"]].concat());
    assert_eq!(rc, 0, "{err}");
    let j: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(j["a"]["path"], "run1/trace.json.gz");
    assert_eq!(j["b"]["path"], "run2/trace.json.gz");
    let lines: Vec<&str> = err.lines().collect();
    let at = |l: &str| lines.iter().position(|x| *x == l);
    let (a, b) = (at("A: run1/trace.json.gz"), at("B: run2/trace.json.gz"));
    assert_eq!((a, b), (Some(0), Some(2)), "{err}");
    assert!(lines[1].starts_with("anomaly: info GPU-RUN-001: trace.json.gz: host-only trace"));
    assert!(lines[3].starts_with("anomaly: info GPU-RUN-001: trace.json.gz: host-only trace"));
    let (rc, md, err) = proflens_in(&root, &[&args[..], &["--md", "-"]].concat());
    assert_eq!(rc, 0, "{err}");
    assert!(
        md.starts_with(
            "# Trace comparison\n\nA: run1/trace.json.gz (kineto, 1 rank; compared: rank 0)  \n\
             B: run2/trace.json.gz (kineto, 1 rank; compared: rank 1)  \n"
        ),
        "{md}"
    );
    // Different names: no side lines.
    std::fs::rename(
        root.join("run2/trace.json.gz"),
        root.join("run2/other.json.gz"),
    )
    .unwrap();
    let (rc, _, err) = proflens_in(&root, &["diff", "run1/trace.json.gz", "run2/other.json.gz"]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        !err.lines()
            .any(|l| l.starts_with("A: ") || l.starts_with("B: ")),
        "{err}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// Two runs' snapshots of the same name (`run1/snapshot.pickle`, `run2/snapshot.pickle`): each
/// side is named by the shortest trailing path that differs, in the JSON, the Markdown and
/// the lines on stderr before each side's problems (docs/compare.md, "Side names"); one file
/// compared with itself keeps its name.
#[test]
fn two_snapshots_of_one_name_are_told_apart() {
    let f = fixture_dir();
    let root = same_name_runs(
        "snapshot_same_name",
        &f.join("jogregoire_How-Diffusion-Models-Work__my_snapshot.pickle"),
        &f.join("shreyansh26_MLSys-Experiments__model_memory_usage_profile_grad.pkl"),
        "snapshot.pickle",
    );
    // From the parent folder, and by absolute paths: the same names.
    let abs = |r: &str| root.join(r).join("snapshot.pickle").display().to_string();
    for (a, b) in [
        (
            "run1/snapshot.pickle".to_string(),
            "run2/snapshot.pickle".to_string(),
        ),
        (abs("run1"), abs("run2")),
    ] {
        let (rc, json, err) = proflens_in(&root, &["diff", &a, &b, "--json", "-"]);
        assert_eq!(rc, 0, "{err}");
        let j: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(j["a"]["file"], "run1/snapshot.pickle");
        assert_eq!(j["b"]["file"], "run2/snapshot.pickle");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines[0], "A: run1/snapshot.pickle", "{err}");
        let b_at = lines.iter().position(|l| *l == "B: run2/snapshot.pickle");
        assert!(b_at.is_some_and(|i| i > 0), "{err}");
        assert!(
            lines[1..b_at.unwrap()]
                .iter()
                .all(|l| l.contains(" snapshot.pickle: ")),
            "{err}"
        );
        let (rc, md, err) = proflens_in(&root, &["diff", &a, &b, "--md", "-"]);
        assert_eq!(rc, 0, "{err}");
        let head: Vec<&str> = md.lines().take(4).collect();
        assert_eq!(
            head,
            [
                "# Snapshot comparison",
                "",
                "A: run1/snapshot.pickle (12.3 KiB)  ",
                "B: run2/snapshot.pickle (21.9 KiB)  "
            ],
            "{md}"
        );
    }
    // One file with itself: its own name, no side lines.
    let (rc, json, err) = proflens_in(
        &root,
        &[
            "diff",
            "run1/snapshot.pickle",
            "run1/snapshot.pickle",
            "--json",
            "-",
        ],
    );
    assert_eq!(rc, 0, "{err}");
    let j: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (&j["a"]["file"], &j["b"]["file"]),
        (&"snapshot.pickle".into(), &"snapshot.pickle".into())
    );
    assert!(
        !err.lines()
            .any(|l| l.starts_with("A: ") || l.starts_with("B: ")),
        "{err}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}
