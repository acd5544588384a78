//! Running `proflens diff` as a process, shared by the diff tests.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Runs the built `proflens` with `args`: `(exit code, stdout, stderr)`.
pub fn proflens(args: &[&str]) -> (i32, String, String) {
    proflens_in(Path::new("."), args)
}

/// `proflens diff A B --json - EXTRA…`, which must exit 0: the JSON document.
pub fn diff_json(a: &Path, b: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--json",
        "-",
    ];
    args.extend_from_slice(extra);
    let (rc, out, err) = proflens(&args);
    assert_eq!(rc, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// Runs the built `proflens` with `args` in folder `dir`: `(exit code, stdout, stderr)`.
pub fn proflens_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A fresh folder `tag` holding `run1/NAME` (a copy of `a`) and `run2/NAME` (a copy of `b`):
/// two runs' files of the same name.
pub fn same_name_runs(tag: &str, a: &Path, b: &Path, name: &str) -> std::path::PathBuf {
    let root = std::env::temp_dir().join(format!("proflens_{tag}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for (run, from) in [("run1", a), ("run2", b)] {
        std::fs::create_dir_all(root.join(run)).unwrap();
        std::fs::copy(from, root.join(run).join(name)).unwrap();
    }
    root
}
