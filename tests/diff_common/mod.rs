//! Running `proflens diff` as a process, shared by the diff tests.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Runs the built `proflens` with `args`: `(exit code, stdout, stderr)`.
pub fn proflens(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
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
