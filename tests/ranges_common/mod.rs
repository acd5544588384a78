//! The CLI half of the byte-range tests (formats.md §8.2): runs of `proflens` with 1 and 4
//! threads, ranges of 64 KiB (`PROFLENS_MIN_RANGE_BYTES`), compared byte for byte.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh scratch folder `proflens_<what>_<name>_<pid>` in the temp dir.
pub fn scratch(what: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("proflens_{what}_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every file under `dir`, by path relative to it.
pub fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Runs `proflens args…` with `threads`, in `out` (created), and returns stdout, stderr,
/// the exit code and every file written.
pub fn run(
    args: &[&str],
    threads: usize,
    out: &Path,
) -> (Vec<u8>, Vec<u8>, i32, BTreeMap<String, Vec<u8>>) {
    std::fs::create_dir_all(out).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(args)
        .arg("--threads")
        .arg(threads.to_string())
        .current_dir(out)
        .env("PROFLENS_MIN_RANGE_BYTES", "65536")
        .output()
        .unwrap();
    (o.stdout, o.stderr, o.status.code().unwrap_or(-1), tree(out))
}

/// `proflens anomaly` and `proflens analyze` on `dir` write the same stdout, stderr, exit code
/// and files with `--threads 1` and `--threads 4` (each run in a folder beside `dir`).
pub fn same_bytes(dir: &Path, name: &str) {
    let d = dir.to_str().unwrap();
    for (cmd, args) in [
        (
            "anomaly",
            vec!["anomaly", d, "--out", "a.json", "--report-dir", "rep"],
        ),
        ("analyze", vec!["analyze", d, "--out-dir", "an", "--quiet"]),
    ] {
        let one = run(&args, 1, &dir.with_extension(format!("{cmd}1")));
        let four = run(&args, 4, &dir.with_extension(format!("{cmd}4")));
        assert_eq!(one.2, four.2, "{name} {cmd}: exit code");
        assert_eq!(one.0, four.0, "{name} {cmd}: stdout");
        assert_eq!(
            String::from_utf8_lossy(&one.1),
            String::from_utf8_lossy(&four.1),
            "{name} {cmd}: stderr"
        );
        assert!(!one.3.is_empty(), "{name} {cmd}: nothing written");
        assert_eq!(
            one.3.keys().collect::<Vec<_>>(),
            four.3.keys().collect::<Vec<_>>()
        );
        for (k, v) in &one.3 {
            assert!(v == &four.3[k], "{name} {cmd}: {k} differs");
        }
    }
}
