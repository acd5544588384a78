//! Tidy checks for what Cargo cannot see (house-style §8.3), as ordinary tests:
//! the core never names browser crates or does its own I/O, the UI never parses,
//! and source files stay small enough to read.

use std::fs;
use std::path::{Path, PathBuf};

const CORE: &[&str] = &[
    "base", "ingest", "parse", "model", "analysis", "report", "views", "engine",
];
const CORE_FILES: &[&str] = &["protocol.rs"];
const BANNED_IN_CORE: &[&str] = &[
    "web_sys::",
    "js_sys::",
    "wasm_bindgen::",
    "leptos::",
    "gloo::",
    "std::fs",
    "Instant::now",
    "SystemTime::now",
];
const BANNED_IN_UI: &[&str] = &[
    "crate::parse",
    "crate::ingest::inventory",
    "crate::model",
    "crate::analysis",
    "crate::engine",
];
/// A file longer than this should be split by concept (house-style §8.2: "about 600").
const MAX_LINES: usize = 900;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Source text without `//` comments and without `#[cfg(test)]` modules' content after the marker.
fn code_of(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn core_never_names_browser_crates_or_does_io() {
    let mut files = Vec::new();
    for m in CORE {
        rust_files(&src().join(m), &mut files);
        let single = src().join(format!("{m}.rs"));
        if single.exists() {
            files.push(single);
        }
    }
    files.extend(
        CORE_FILES
            .iter()
            .map(|f| src().join(f))
            .filter(|p| p.exists()),
    );
    assert!(files.len() > 5, "tidy found too few core files: {files:?}");
    let mut bad = Vec::new();
    for f in &files {
        let code = code_of(f);
        for banned in BANNED_IN_CORE {
            if code.contains(banned) {
                bad.push(format!("{}: core module uses `{banned}`", f.display()));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn ui_never_parses_or_analyses() {
    let mut files = Vec::new();
    rust_files(&src().join("ui"), &mut files);
    let mut bad = Vec::new();
    for f in &files {
        let code = code_of(f);
        for banned in BANNED_IN_UI {
            if code.contains(banned) {
                bad.push(format!("{}: UI uses `{banned}`", f.display()));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn modules_stay_small() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut big = Vec::new();
    for f in &files {
        let n = fs::read_to_string(f).unwrap().lines().count();
        if n > MAX_LINES {
            big.push(format!(
                "{}: {n} lines (split it by concept; limit {MAX_LINES})",
                f.display()
            ));
        }
    }
    assert!(big.is_empty(), "{}", big.join("\n"));
}
