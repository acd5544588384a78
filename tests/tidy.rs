//! Tidy checks for what Cargo cannot see (house-style §8.3), as ordinary tests:
//!
//! * every layer names only the layers of its allowlist ([`ALLOW`], the table of
//!   ARCHITECTURE.md "Layers and what each may name"): `crate::…` paths, `crate::{…}` groups
//!   and `super::…` chains that leave the layer are all resolved to the module they name;
//! * the core never names a browser crate (the wasm32-only dependencies of `Cargo.toml`, read
//!   from it, so a new one is covered at once), never opens a file, never reads a clock;
//!   `analysis` and `model` never name serde;
//! * source files stay small enough to read.
//! * every rule citation (`§`) under src/ resolves to a heading of docs/ (`tidy/citations.rs`).
//!
//! Test code (`#[cfg(test)]` items and the files of `#[cfg(test)] mod x;`) is not checked:
//! a test may build its input with any layer, as `tests/` does.
//!
//! The checker is a plain function of (path, text), so `guard_*` tests below prove it fails
//! on banned text.

use std::fs;
use std::path::{Path, PathBuf};

/// Which modules each layer may name besides itself. An entry is a module path prefix:
/// `views` allows all of `crate::views`, `views::format` only that module and its items.
const ALLOW: &[(&str, &[&str])] = &[
    ("base", &[]),
    ("ingest", &["base"]),
    ("model", &["base"]),
    ("parse", &["base", "ingest", "model"]),
    ("analysis", &["base", "model"]),
    ("report", &["base", "model", "analysis"]),
    ("protocol", &[]),
    ("views", &["base", "model", "analysis", "protocol"]),
    (
        "engine",
        &[
            "base", "ingest", "parse", "model", "analysis", "report", "views", "protocol",
        ],
    ),
    (
        "cli",
        &[
            "base", "ingest", "parse", "model", "analysis", "report", "protocol", "engine",
        ],
    ),
    ("worker", &["base", "ingest", "protocol", "engine"]),
    (
        "ui",
        &[
            "protocol",
            "base::sort",
            "views::format",
            "views::view_state",
            "views::timeline_axis",
            "views::timeline_multi",
            "views::zoom",
            "views::cross_rank",
            "views::band_grid",
            "views::virtual_list",
            "views::cluster_table",
            "views::heatmap",
            "views::gpu",
            "views::snapshot_segmap",
            "views::compare_table",
            "views::comm_table",
            "views::notices",
        ],
    ),
];

/// The layers compiled on every target (the pure core).
const CORE: &[&str] = &[
    "base", "ingest", "parse", "model", "analysis", "report", "views", "protocol", "engine",
];
/// Text the core never contains (I/O and clocks belong to the edges).
const BANNED_IN_CORE: &[&str] = &["std::fs", "Instant::now", "SystemTime::now"];
/// Crates that layers never name, beside the browser crates banned in the whole core.
const BANNED_CRATES: &[(&str, &[&str])] = &[("analysis", &["serde"]), ("model", &["serde"])];
/// A file longer than this should be split by concept (house-style §8.2: "about 600").
const MAX_LINES: usize = 600;
/// The files still allowed over [`MAX_LINES`], by path from the crate root: this file. Shrink the list; an entry whose file is gone or
/// back under the limit fails the test until it is removed.
const LONG_FILES: &[&str] = &["tests/tidy.rs"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The wasm32-only dependencies of `Cargo.toml` (the browser crates), as Rust identifiers.
fn browser_crates(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            inside = t == "[target.'cfg(target_arch = \"wasm32\")'.dependencies]";
            continue;
        }
        if inside {
            if let Some((name, _)) = t.split_once('=') {
                let name = name.trim();
                if !name.is_empty() && !name.starts_with('#') && !name.contains(' ') {
                    out.push(name.replace('-', "_"));
                }
            }
        }
    }
    out
}

/// `text` with comments, string and char literals blanked (same length, newlines kept), so
/// offsets still map to lines and nothing inside a comment or string counts as code.
fn blank(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let wipe = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(b.len(), |k| i + k);
                wipe(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k + 2);
                wipe(&mut out, i, end);
                i = end;
            }
            // Raw strings, byte raw strings included (`r"…"`, `r#"…"#`, `br#"…"#`).
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && (i == 0
                    || !is_ident(b[i - 1])
                    || (b[i - 1] == b'b' && (i == 1 || !is_ident(b[i - 2])))) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                let end = text[start..]
                    .find(&close)
                    .map_or(b.len(), |k| start + k + close.len());
                wipe(&mut out, i, end);
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                wipe(&mut out, i, j + 1);
                i = j + 1;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\''), else a lifetime.
                let end = if b.get(i + 1) == Some(&b'\\') {
                    text[i + 2..].find('\'').map(|k| i + 2 + k + 1)
                } else if b.get(i + 2) == Some(&b'\'') {
                    Some(i + 3)
                } else {
                    text[i + 1..]
                        .chars()
                        .next()
                        .filter(|c| !c.is_ascii())
                        .and_then(|c| {
                            let k = i + 1 + c.len_utf8();
                            (b.get(k) == Some(&b'\'')).then_some(k + 1)
                        })
                };
                match end {
                    Some(e) => {
                        wipe(&mut out, i, e);
                        i = e;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Blanks every item marked `#[cfg(test)]` (an inline `mod tests { … }`, a `mod x;`, a fn).
fn without_test_items(code: &str) -> String {
    let mut out = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some(k) = code[from..].find("#[cfg(test)]") {
        let start = from + k;
        let rest = &code[start..];
        let semi = rest.find(';');
        let brace = rest.find('{');
        let end = match (semi, brace) {
            (Some(s), Some(b)) if s < b => start + s + 1,
            (_, Some(b)) => {
                let mut depth = 0usize;
                let mut end = code.len();
                for (j, c) in code[start + b..].bytes().enumerate() {
                    match c {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = start + b + j + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (Some(s), None) => start + s + 1,
            (None, None) => code.len(),
        };
        for c in &mut out[start..end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        from = end;
    }
    String::from_utf8(out).unwrap_or_default()
}

/// The module path of a file under `src/` (`src/views/snapshot/live.rs` → `views::snapshot::live`).
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    if parts.first().map(String::as_str) == Some("src") {
        parts.remove(0);
    }
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if stem != "mod" && stem != "lib" {
            parts.push(stem.to_string());
        }
    }
    parts
}

/// Files declared by `#[cfg(test)] mod x;` (with or without `#[path = "…"]`) in `file`.
fn test_module_files(file: &Path, text: &str) -> Vec<PathBuf> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let child_dir = if stem == "mod" || stem == "lib" {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if *l != "#[cfg(test)]" {
            continue;
        }
        let mut path_attr = None;
        for next in &lines[i + 1..] {
            if let Some(p) = next.strip_prefix("#[path = \"") {
                path_attr = p.strip_suffix("\"]").map(str::to_string);
            } else if next.starts_with("#[") {
                continue;
            } else {
                // Any visibility: `pub mod`, `pub(crate) mod`, `pub(super) mod`, …
                let decl = match next.strip_prefix("pub") {
                    Some(rest) if rest.starts_with('(') => {
                        rest.split_once(") ").map_or(*next, |(_, d)| d)
                    }
                    Some(rest) => rest.trim_start(),
                    None => next,
                };
                if let Some(name) = decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(';')) {
                    match &path_attr {
                        Some(p) => out.push(dir.join(p)),
                        None => {
                            out.push(child_dir.join(format!("{name}.rs")));
                            out.push(child_dir.join(name).join("mod.rs"));
                        }
                    }
                }
                break;
            }
        }
    }
    out
}

/// A path the code names: its module path from the crate root, and the line.
#[derive(Debug, PartialEq)]
struct Named {
    path: Vec<String>,
    line: usize,
}

fn ident_at(b: &[u8], mut i: usize) -> Option<(String, usize)> {
    let start = i;
    while i < b.len() && is_ident(b[i]) {
        i += 1;
    }
    (i > start).then(|| (String::from_utf8_lossy(&b[start..i]).into_owned(), i))
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Parses the path after `prefix` at `i` (`a::b::c` or a `{…}` group, recursively) and pushes
/// every full path; returns the end.
fn parse_tail(b: &[u8], i: usize, prefix: &[String], line: usize, out: &mut Vec<Named>) -> usize {
    let mut i = skip_ws(b, i);
    let mut path = prefix.to_vec();
    loop {
        if b.get(i) == Some(&b'{') {
            i += 1;
            loop {
                i = skip_ws(b, i);
                match b.get(i) {
                    None => return i,
                    Some(b'}') => return i + 1,
                    Some(b',') => i += 1,
                    _ => {
                        let before = i;
                        i = parse_tail(b, i, &path, line, out);
                        if i == before {
                            i += 1;
                        }
                    }
                }
            }
        }
        match ident_at(b, i) {
            Some((id, j)) => {
                if id != "self" {
                    path.push(id);
                }
                i = j;
            }
            None => break,
        }
        let j = skip_ws(b, i);
        if b.get(j) == Some(&b':') && b.get(j + 1) == Some(&b':') {
            i = skip_ws(b, j + 2);
        } else {
            break;
        }
    }
    if path.len() > prefix.len() || !prefix.is_empty() {
        out.push(Named { path, line });
    }
    i
}

/// Every `crate::…` and `super::…` path in `code` (already blanked), resolved from `module`.
fn named_paths(module: &[String], code: &str) -> Vec<Named> {
    let b = code.as_bytes();
    let line_of = |k: usize| code[..k].bytes().filter(|&c| c == b'\n').count() + 1;
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let word_start = i == 0 || !(is_ident(b[i - 1]) || b[i - 1] == b'$' || b[i - 1] == b':');
        if word_start && code[i..].starts_with("crate::") {
            i = parse_tail(b, i + 7, &[], line_of(i), &mut out);
        } else if word_start && code[i..].starts_with("super::") {
            let at = i;
            let mut base = module.to_vec();
            while code[i..].starts_with("super::") {
                base.pop();
                i = skip_ws(b, i + 7);
            }
            i = parse_tail(b, i, &base, line_of(at), &mut out);
        } else {
            i += 1;
        }
    }
    out
}

fn allowlist(layer: &str) -> Option<&'static [&'static str]> {
    ALLOW.iter().find(|(l, _)| *l == layer).map(|(_, a)| *a)
}

fn allowed(layer: &str, path: &[String]) -> bool {
    let Some(first) = path.first() else {
        return true;
    };
    if first == layer || first == "lib" {
        return true;
    }
    let Some(allow) = allowlist(layer) else {
        return true;
    };
    allow.iter().any(|entry| {
        let e: Vec<&str> = entry.split("::").collect();
        e.len() <= path.len() && e.iter().zip(path).all(|(a, b)| *a == b)
    })
}

/// Every rule `text` (the file at `rel`, relative to the crate root) breaks, one readable
/// line each: `file:line: what is named, and what the layer may name`.
fn violations(rel: &Path, text: &str, browser: &[String]) -> Vec<String> {
    let module = module_path(rel);
    let Some(layer) = module.first().cloned() else {
        return Vec::new();
    };
    let code = without_test_items(&blank(text));
    let file = rel.display();
    let mut bad = Vec::new();
    if let Some(allow) = allowlist(&layer) {
        for n in named_paths(&module, &code) {
            if !allowed(&layer, &n.path) {
                let may = if allow.is_empty() {
                    "nothing outside itself".to_string()
                } else {
                    allow.join(", ")
                };
                bad.push(format!(
                    "{file}:{}: `{layer}` names `crate::{}`; {layer} may name only {may}",
                    n.line,
                    n.path.join("::")
                ));
            }
        }
    }
    let line_of = |k: usize| code[..k].bytes().filter(|&c| c == b'\n').count() + 1;
    let mut crates: Vec<&str> = Vec::new();
    if CORE.contains(&layer.as_str()) {
        crates.extend(browser.iter().map(String::as_str));
        for banned in BANNED_IN_CORE {
            if let Some(k) = code.find(banned) {
                bad.push(format!(
                    "{file}:{}: core layer `{layer}` uses `{banned}` (I/O and clocks belong to the edges)",
                    line_of(k)
                ));
            }
        }
    }
    for (l, list) in BANNED_CRATES {
        if *l == layer {
            crates.extend(list.iter().copied());
        }
    }
    for krate in crates {
        let b = code.as_bytes();
        let mut from = 0;
        while let Some(k) = code[from..].find(krate) {
            let at = from + k;
            let end = at + krate.len();
            let whole = (at == 0 || !(is_ident(b[at - 1]) || b[at - 1] == b':'))
                && (end == b.len() || !is_ident(b[end]));
            if whole {
                bad.push(format!(
                    "{file}:{}: `{layer}` names the crate `{krate}`{}",
                    line_of(at),
                    if browser.iter().any(|c| c == krate) {
                        " (a browser crate: only worker and ui may)"
                    } else {
                        ""
                    }
                ));
                break;
            }
            from = end;
        }
    }
    bad
}

fn source_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut test_files = Vec::new();
    for f in &files {
        test_files.extend(test_module_files(f, &fs::read_to_string(f).unwrap()));
    }
    files.retain(|f| !test_files.contains(f));
    files
}

#[test]
fn every_layer_names_only_its_allowlist() {
    let browser = browser_crates(&fs::read_to_string(root().join("Cargo.toml")).unwrap());
    assert!(
        browser.iter().any(|c| c == "web_sys") && browser.iter().any(|c| c == "leptos"),
        "tidy did not find the wasm32 dependencies in Cargo.toml: {browser:?}"
    );
    let files = source_files();
    assert!(
        files.len() > 100,
        "tidy found too few files: {}",
        files.len()
    );
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(root()).unwrap();
        bad.extend(violations(rel, &fs::read_to_string(f).unwrap(), &browser));
    }
    assert!(
        bad.is_empty(),
        "{} layer rule(s) broken (ARCHITECTURE.md, \"Layers and what each may name\"):\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn every_folder_under_src_has_an_allowlist() {
    let mut missing = Vec::new();
    for e in fs::read_dir(root().join("src")).unwrap().flatten() {
        let name = e
            .file_name()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if name == "lib" || name == "bin" {
            continue;
        }
        if allowlist(&name).is_none() {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "layers without an allowlist in tests/tidy.rs ALLOW: {missing:?}"
    );
}

#[test]
fn modules_stay_small() {
    let mut files = Vec::new();
    for dir in ["src", "tests", "examples"] {
        rust_files(&root().join(dir), &mut files);
    }
    let mut big = Vec::new();
    for f in &files {
        let n = fs::read_to_string(f).unwrap().lines().count();
        let rel = f.strip_prefix(root()).unwrap_or(f);
        let allowed = LONG_FILES.iter().any(|l| rel == Path::new(l));
        if n > MAX_LINES && !allowed {
            big.push(format!(
                "{}: {n} lines (split it by concept; limit {MAX_LINES})",
                rel.display()
            ));
        }
        if n <= MAX_LINES && allowed {
            big.push(format!(
                "{}: {n} lines, within the limit: remove it from LONG_FILES",
                rel.display()
            ));
        }
    }
    for l in LONG_FILES {
        if !root().join(l).is_file() {
            big.push(format!("{l}: in LONG_FILES but gone: remove it"));
        }
    }
    assert!(big.is_empty(), "{}", big.join("\n"));
}

/// The page's message codec (`protocol::codec`) is not self-describing: a field that
/// `skip_serializing_if` leaves out travels as "absent" and is read back as its
/// `#[serde(default)]`. A protocol field left out without a default would fail to decode at
/// run time, so every such field names its default (on the field or on its struct).
#[test]
fn protocol_fields_left_out_have_a_default() {
    let mut files = Vec::new();
    rust_files(&root().join("src/protocol"), &mut files);
    let mut bad = Vec::new();
    for f in &files {
        let text = fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            if !l.contains("skip_serializing_if") || l.trim_start().starts_with("//") {
                continue;
            }
            let attr = |j: &usize| lines[*j].trim_start().starts_with("#[");
            let first = (0..i).rev().take_while(attr).last().unwrap_or(i);
            let last = (i + 1..lines.len()).take_while(attr).last().unwrap_or(i);
            let field_default = lines[first..=last].iter().any(|a| a.contains("default"));
            // The struct's own attributes, above its `struct` line.
            let head = (0..i).rev().find(|&j| lines[j].contains("struct "));
            let container_default = head.is_some_and(|h| {
                (0..h)
                    .rev()
                    .take_while(|j| {
                        lines[*j].trim_start().starts_with("#[")
                            || lines[*j].trim_start().starts_with("///")
                    })
                    .any(|j| lines[j].contains("serde(default"))
            });
            if !field_default && !container_default {
                let rel = f.strip_prefix(root()).unwrap_or(f);
                bad.push(format!(
                    "{}:{}: skip_serializing_if without #[serde(default)]: the page's codec could not read the message back",
                    rel.display(),
                    i + 1
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

// The checker itself: it must fail on banned text, and only on that.

fn check(rel: &str, text: &str) -> Vec<String> {
    violations(Path::new(rel), text, &["web_sys".into(), "leptos".into()])
}

#[test]
fn guard_flags_a_banned_crate_path_with_its_line() {
    let bad = check(
        "src/views/memory.rs",
        "use crate::protocol::RowsPage;\n\nuse crate::engine::read::memory::analyse_rank;\n",
    );
    assert_eq!(
        bad,
        [
            "src/views/memory.rs:3: `views` names `crate::engine::read::memory::analyse_rank`; \
          views may name only base, model, analysis, protocol"
        ]
    );
}

#[test]
fn guard_resolves_groups_and_super_chains() {
    let bad = check(
        "src/views/snapshot/live.rs",
        "use crate::{analysis::snapshot, report::{snapshot_md, snapshot_json::Labeler}};\n\
         use super::super::super::engine::read::snapshot::SnapshotRun;\nuse super::axis::Axis;\n",
    );
    let named: Vec<&str> = bad
        .iter()
        .map(|l| l.split('`').nth(3).unwrap_or(""))
        .collect();
    assert_eq!(
        named,
        [
            "crate::report::snapshot_md",
            "crate::report::snapshot_json::Labeler",
            "crate::engine::read::snapshot::SnapshotRun",
        ]
    );
    // `super::axis` from views::snapshot::live is views::snapshot::axis: the same layer.
    assert!(check("src/views/snapshot/live.rs", "use super::axis::Axis;").is_empty());
}

#[test]
fn guard_knows_module_prefixes_in_the_ui() {
    assert!(check("src/ui/app.rs", "use crate::views::format::bytes;").is_empty());
    let bad = check(
        "src/ui/app.rs",
        "let r = crate::views::memory::MemoryRows::new(0);",
    );
    assert_eq!(bad.len(), 1, "{bad:?}");
    for banned in [
        "analysis", "report", "parse", "model", "engine", "ingest", "base",
    ] {
        let bad = check("src/ui/app.rs", &format!("use crate::{banned}::X;"));
        assert_eq!(bad.len(), 1, "ui naming {banned}: {bad:?}");
    }
}

#[test]
fn guard_flags_browser_crates_io_and_serde_in_the_core() {
    let bad = check(
        "src/analysis/steps.rs",
        "#[derive(serde::Serialize)]\nstruct S;\nfn f() { let _ = std::fs::read(\"x\"); }\n\
         fn g(e: &web_sys::Event) {}\n",
    );
    assert_eq!(bad.len(), 3, "{bad:?}");
    assert!(bad[0].contains("std::fs") && bad[0].starts_with("src/analysis/steps.rs:3:"));
    assert!(bad
        .iter()
        .any(|l| l.contains("crate `web_sys`") && l.contains(":4:")));
    assert!(bad
        .iter()
        .any(|l| l.contains("crate `serde`") && l.contains(":1:")));
    // The edges may.
    assert!(check("src/worker/mod.rs", "use web_sys::Blob;").is_empty());
}

#[test]
fn guard_ignores_comments_strings_and_test_code() {
    let text = "//! See [`crate::engine::read::memory`].\n\
                const S: &str = \"crate::engine::x std::fs\";\n\
                const R: &str = r#\"web_sys::\"#;\n\
                const B: &[u8] = br#\"{\"traceEvents\":[{\"#;\n\
                fn f<'a>(c: char) -> bool { c == '\"' }\n\
                #[cfg(test)]\nmod tests {\n    use crate::engine::read::memory;\n    fn t() { let _ = std::fs::read(\"x\"); }\n}\n";
    assert!(check("src/views/memory.rs", text).is_empty());
    // …but code after the test module is checked again.
    let after = format!("{text}use crate::report::memory_md;\n");
    assert_eq!(check("src/views/memory.rs", &after).len(), 1);
}

#[test]
fn guard_finds_test_module_files() {
    let text = "pub fn f() {}\n#[cfg(test)]\nmod tests;\n#[cfg(test)]\n#[path = \"x_tests.rs\"]\nmod more;\n";
    assert_eq!(
        test_module_files(Path::new("src/views/timeline.rs"), text),
        [
            PathBuf::from("src/views/timeline/tests.rs"),
            PathBuf::from("src/views/timeline/tests/mod.rs"),
            PathBuf::from("src/views/x_tests.rs"),
        ]
    );
    // A test module other modules' tests use is declared with a visibility.
    let shared = "#[cfg(test)]\npub(crate) mod ranges_tests;\n";
    assert_eq!(
        test_module_files(Path::new("src/parse/trace_json/mod.rs"), shared),
        [
            PathBuf::from("src/parse/trace_json/ranges_tests.rs"),
            PathBuf::from("src/parse/trace_json/ranges_tests/mod.rs"),
        ]
    );
    assert_eq!(
        module_path(Path::new("src/views/snapshot/mod.rs")),
        ["views", "snapshot"]
    );
}

// Rule citations: every `§` under src/ resolves to a heading of docs/ (its own file, so this one
// stays small).
#[path = "tidy/citations.rs"]
mod citations;

// The documents: ARCHITECTURE.md stays a map under 40 KB, and the docs speak of the product
// only (no work sessions, no machine paths).
#[path = "tidy/docs.rs"]
mod docs;

// The engine's floors: imports only downward, no circle (its own file, so this one stays small).
#[path = "tidy/engine.rs"]
mod engine;
