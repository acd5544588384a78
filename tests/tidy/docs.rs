//! The documents: ARCHITECTURE.md stays a map, and the docs speak of the product only.

use super::*;

/// ARCHITECTURE.md is a code map, not a lab notebook: measurements live in docs/perf/, fuzz
/// runs in fuzz/README.md, rules in docs/rules/.
const MAX_ARCHITECTURE_BYTES: u64 = 40 * 1024;

#[test]
fn architecture_md_is_a_map_under_40_kb() {
    let len = fs::metadata(root().join("ARCHITECTURE.md")).unwrap().len();
    assert!(
        len <= MAX_ARCHITECTURE_BYTES,
        "ARCHITECTURE.md is {len} bytes, over {MAX_ARCHITECTURE_BYTES}: keep it a map (layers, data \
         flow, invariants); measurements go to docs/perf/, fuzz runs to fuzz/README.md, rules to \
         docs/rules/"
    );
}

/// The words that, followed by a number, name how the work was organised: a work session or a
/// work item (singular or plural, any case, joined by spaces or a dash).
const WORK_WORDS: [&str; 2] = ["session", "issue"];
/// The root of the machines the work was done on; a path under it is someone's machine, not
/// the product's (assembled, so this file passes its own check).
const MACHINE_ROOT: &str = concat!("/", "work", "/");

/// Every place in `text` that speaks of how the work was done instead of the product: one of
/// [`WORK_WORDS`] followed by a number, or a path under [`MACHINE_ROOT`]. One `line: what`
/// entry per finding, lines from 1.
fn history_mentions(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let lower = line.to_ascii_lowercase();
        let b = lower.as_bytes();
        if WORK_WORDS.iter().any(|w| numbered_word(&lower, b, w)) {
            found.push(format!("{}: {}", i + 1, line.trim()));
        }
        if line.contains(MACHINE_ROOT) {
            found.push(format!("{}: {}", i + 1, line.trim()));
        }
    }
    found
}

/// True when `lower` (its bytes `b`) holds the word `w` (or its plural) followed by spaces or
/// dashes and a digit.
fn numbered_word(lower: &str, b: &[u8], w: &str) -> bool {
    {
        let mut from = 0;
        while let Some(k) = lower[from..].find(w) {
            let at = from + k;
            let mut j = at + w.len();
            from = j;
            if at > 0 && is_ident(b[at - 1]) {
                continue;
            }
            if b.get(j) == Some(&b's') {
                j += 1;
            }
            let gap = j;
            while matches!(b.get(j), Some(b' ' | b'-')) {
                j += 1;
            }
            if j > gap && b.get(j).is_some_and(u8::is_ascii_digit) {
                return true;
            }
        }
    }
    false
}

fn doc_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            // Build output, installed packages and fuzz corpora are not the project's text.
            if !matches!(name, "target" | "node_modules" | "corpus" | "artifacts") {
                doc_files(&p, out);
            }
        } else if !matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("gz" | "pickle" | "pkl" | "png" | "db" | "wasm" | "lock")
        ) {
            out.push(p);
        }
    }
}

#[test]
fn docs_name_no_work_session_and_no_machine_path() {
    let mut files = vec![root().join("README.md"), root().join("ARCHITECTURE.md")];
    for dir in [
        "docs", "src", "tests", "examples", "scripts", "web", "fuzz", "python", ".ci", "fixtures",
    ] {
        doc_files(&root().join(dir), &mut files);
    }
    assert!(
        files.len() > 100,
        "tidy found too few files: {}",
        files.len()
    );
    let mut bad = Vec::new();
    for f in &files {
        let text = String::from_utf8_lossy(&fs::read(f).unwrap()).into_owned();
        let rel = f.strip_prefix(root()).unwrap_or(f).display().to_string();
        bad.extend(
            history_mentions(&text)
                .into_iter()
                .map(|m| format!("{rel}:{m}")),
        );
    }
    assert!(
        bad.is_empty(),
        "the documents speak of the product only (no work sessions by number, no machine paths; \
         write a date, or DIR for a folder):\n{}",
        bad.join("\n")
    );
}

#[test]
fn guard_flags_work_sessions_and_machine_paths() {
    // `{s}`, `{i}`, `{w}`: the words and the root the check looks for, filled in below (so
    // this file never holds a finding itself).
    let fill = |t: &str| {
        t.replace("{s}", WORK_WORDS[0])
            .replace("{S}", "Session")
            .replace("{i}", WORK_WORDS[1])
            .replace("{w}", MACHINE_ROOT)
    };
    let text = fill(
        "# Notes\n\
         Measured in {s} 12 on a quiet machine.\n\
         Runs of {s}s 5–15 and {S}-3.\n\
         `python3 {w}venv/bin/python x.py`\n\
         The worker's `Session` holds one store; `examples/session_bench DIR` times it.\n\
         A session of 3 steps; sessionStorage 2; /workspace/x; a sub{s} 4.\n\
         Fixed in {i} 11 (hostile input); {i}s 3 and 4; a t{i} 5.\n",
    );
    let bad = history_mentions(&text);
    let want: Vec<String> = [
        "2: Measured in {s} 12 on a quiet machine.",
        "3: Runs of {s}s 5–15 and {S}-3.",
        "4: `python3 {w}venv/bin/python x.py`",
        "7: Fixed in {i} 11 (hostile input); {i}s 3 and 4; a t{i} 5.",
    ]
    .iter()
    .map(|t| fill(t))
    .collect();
    assert_eq!(bad, want);
    assert!(history_mentions("On 2026-12-04, DIR/kineto: 153.5 MB/s.\n").is_empty());
}
