//! Rule citations: the code cites the rules it applies as `ascend-memory.md §9.6`, or as a bare
//! `§9.6` in a file about one rule doc. Every citation under src/ must resolve to a heading of
//! a doc in the repository (`docs/rules/NAME.md` or `docs/NAME.md`) that carries that number.
//!
//! * `NAME.md §X` resolves against docs/rules/NAME.md, else docs/NAME.md.
//! * A bare `§X` that follows such a citation on its line, with only a separator between them
//!   (`formats.md §2.7, §5.1`, `§2–§3`), is cited from the same doc.
//! * Any other bare `§X` resolves against the docs of docs/ that the file names anywhere
//!   (`NAME.md`; any one of them may have the heading), else against the default docs of its
//!   folder ([`CITATION_DEFAULTS`]).
//! * A heading carries `X` when its text starts with `X` followed by the end, a space, or a `.`
//!   ending the number (`## 7. Analyses`, `### 7.10 Allocator-state view`). Ranges (`§1–2`) and
//!   tails (`§5.1 step 4`) resolve by their first number.

use std::fs;

use super::{root, rust_files};

/// Docs of bare `§X` citations in files that name no doc of docs/, by path prefix (the longest
/// matching prefix wins). The engine runs every analysis, so its citations may name any of
/// the three analysis docs.
const CITATION_DEFAULTS: &[(&str, &[&str])] = &[
    ("src/analysis/anomaly", &["anomaly.md"]),
    ("src/analysis/memory_", &["ascend-memory.md"]),
    ("src/analysis/snapshot", &["torch-snapshot.md"]),
    ("src/analysis/steps", &["anomaly.md"]),
    ("src/parse/pickle", &["torch-snapshot.md"]),
    ("src/protocol/snapshot", &["torch-snapshot.md"]),
    ("src/report/anomaly_md", &["anomaly.md"]),
    (
        "src/engine",
        &["ascend-memory.md", "anomaly.md", "torch-snapshot.md"],
    ),
    ("src/ui/anomaly_view", &["anomaly.md"]),
    ("src/ui/memory_view", &["ascend-memory.md"]),
    ("src/ui/snapshot_view", &["torch-snapshot.md"]),
    ("src/views/anomaly", &["anomaly.md"]),
    ("src/views/memory", &["ascend-memory.md"]),
    ("src/views/snapshot", &["torch-snapshot.md"]),
];

/// The heading texts of a Markdown doc (`#` lines outside fenced code, `#`s and spaces removed).
fn doc_headings(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(line.trim_start_matches('#').trim().to_string());
        }
    }
    out
}

/// True when one of `headings` carries section number `section`.
fn heading_carries(headings: &[String], section: &str) -> bool {
    headings.iter().any(|h| match h.strip_prefix(section) {
        Some(rest) => {
            rest.is_empty()
                || rest.starts_with(' ')
                || (rest.starts_with('.') && rest[1..].chars().next().is_none_or(|c| c == ' '))
        }
        None => false,
    })
}

/// The `NAME.md` file name that ends `text` (before trailing spaces and backticks), if any.
fn md_name_before(text: &str) -> Option<&str> {
    let t = text.trim_end_matches([' ', '`']);
    let start = t
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || "_-./".contains(c)))
        .map_or(0, |i| i + t[i..].chars().next().unwrap().len_utf8());
    let word = &t[start..];
    let name = word.rsplit('/').next().unwrap_or(word);
    (name.len() > 3 && name.ends_with(".md")).then_some(name)
}

/// Every `NAME.md` named in `text`.
fn md_names(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for (i, _) in text.match_indices(".md") {
        let end = i + 3;
        if text[end..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        {
            continue;
        }
        if let Some(n) = md_name_before(&text[..end]) {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// The section number at the start of `s` (`9.6` of `9.6–9.7 …`), if any.
fn section_number(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    let mut end = 0;
    while end < b.len() && b[end].is_ascii_digit() {
        end += 1;
        if end < b.len() && b[end] == b'.' && b.get(end + 1).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
    }
    (end > 0).then(|| &s[..end])
}

/// True when `gap`, the text between the end of one citation's number and the next `§`, only
/// separates two citations of one doc (`, `, ` / `, `; `, ` and `, a range dash, or a range's
/// second number before them).
fn is_separator(gap: &str) -> bool {
    let mut g = gap;
    if let Some(rest) = g.strip_prefix(['–', '-']) {
        g = rest.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    }
    let g: String = g.chars().filter(|c| !c.is_whitespace()).collect();
    matches!(
        g.as_str(),
        "" | "," | ";" | "/" | "and" | "or" | ",and" | "–" | "-"
    )
}

/// The number of `§` citations in `text` (the file `rel`) and those that do not resolve, as
/// `rel:line: …` lines.
/// `docs(name)` gives the headings of doc `name` of docs/, `None` when there is no such doc.
fn unresolved_citations(
    rel: &str,
    text: &str,
    docs: &dyn Fn(&str) -> Option<Vec<String>>,
) -> (usize, Vec<String>) {
    let all_named = md_names(text);
    let named: Vec<String> = all_named
        .iter()
        .copied()
        .filter(|n| docs(n).is_some())
        .map(String::from)
        .collect();
    let fallback: Vec<String> = if named.is_empty() {
        CITATION_DEFAULTS
            .iter()
            .filter(|(p, _)| rel.starts_with(p))
            .max_by_key(|(p, _)| p.len())
            .map(|(_, d)| d.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default()
    } else {
        named
    };
    let (mut count, mut bad) = (0, Vec::new());
    for (ln, line) in text.lines().enumerate() {
        let mut prev: Option<(String, usize)> = None;
        for (pos, _) in line.match_indices('§') {
            count += 1;
            let after = &line[pos + '§'.len_utf8()..];
            let Some(section) = section_number(after.trim_start()) else {
                bad.push(format!("{rel}:{}: `§` without a section number", ln + 1));
                prev = None;
                continue;
            };
            let explicit = md_name_before(&line[..pos]).map(String::from);
            let chained = prev
                .as_ref()
                .filter(|(_, end)| is_separator(&line[*end..pos]))
                .map(|(d, _)| d.clone());
            let cands: Vec<String> = match explicit.clone().or(chained.clone()) {
                Some(d) => vec![d],
                None => fallback.clone(),
            };
            let ok = cands
                .iter()
                .any(|d| docs(d).is_some_and(|h| heading_carries(&h, section)));
            if !ok {
                let looked = if cands.is_empty() {
                    format!(
                        "the file names no doc of docs/ (it names: {}) and its folder has no \
                         default (tests/tidy.rs CITATION_DEFAULTS)",
                        all_named.join(", ")
                    )
                } else {
                    format!("no heading {section} in {}", cands.join(", "))
                };
                bad.push(format!("{rel}:{}: §{section}: {looked}", ln + 1));
            }
            let end =
                pos + '§'.len_utf8() + (after.len() - after.trim_start().len()) + section.len();
            prev = explicit.or(chained).map(|d| (d, end));
        }
    }
    (count, bad)
}

/// Headings of every doc of docs/rules/ and docs/ by file name (docs/rules/ first).
fn repo_docs() -> std::collections::HashMap<String, Vec<String>> {
    let mut out = std::collections::HashMap::new();
    for dir in ["docs", "docs/rules"] {
        let Ok(rd) = fs::read_dir(root().join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.ends_with(".md") {
                out.insert(name, doc_headings(&fs::read_to_string(e.path()).unwrap()));
            }
        }
    }
    out
}

#[test]
fn every_rule_citation_resolves() {
    let docs = repo_docs();
    let lookup = |n: &str| docs.get(n).cloned();
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    files.sort();
    let (mut count, mut bad) = (0, Vec::new());
    for f in &files {
        let rel = f
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let (n, b) = unresolved_citations(&rel, &fs::read_to_string(f).unwrap(), &lookup);
        count += n;
        bad.extend(b);
    }
    assert!(
        count > 500,
        "tidy found too few `§` citations under src/: {count}"
    );
    assert!(
        bad.is_empty(),
        "{} of {count} rule citations do not resolve to a heading of docs/ (write the section \
         in docs/rules/, or cite the doc that has it):\n{}",
        bad.len(),
        bad.join("\n")
    );
}

fn guard_docs(name: &str) -> Option<Vec<String>> {
    let text = match name {
        "ascend-memory.md" => {
            "# A\n## 9. Ordering\n### 9.0 Ordering\n### 9.6 Peak\n```\n# 9.7 not a heading\n```\n"
        }
        "torch-snapshot.md" => "# T\n## 7. Analyses\n### 7.10 Allocator-state view\n",
        "cluster-summary.md" => "# C\n## 4. Cross-rank rules\n",
        _ => return None,
    };
    Some(doc_headings(text))
}

fn guard_cite(rel: &str, text: &str) -> Vec<String> {
    unresolved_citations(rel, text, &guard_docs).1
}

#[test]
fn guard_flags_a_citation_without_its_heading() {
    assert!(guard_cite(
        "src/x.rs",
        "// ascend-memory.md §9.6, torch-snapshot.md §7.10\n"
    )
    .is_empty());
    assert_eq!(
        guard_cite("src/x.rs", "// (ascend-memory.md §9.7)\n"),
        ["src/x.rs:1: §9.7: no heading 9.7 in ascend-memory.md"]
    );
    // §7.1 is not §7.10; §7 is `## 7.` and not `7.10`.
    assert_eq!(
        guard_cite("src/x.rs", "// torch-snapshot.md §7.1\n").len(),
        1
    );
    assert!(guard_cite("src/x.rs", "// torch-snapshot.md §7\n").is_empty());
    assert!(heading_carries(&["9.0 Ordering".into()], "9.0"));
    assert!(!heading_carries(&["7.10 Allocator".into()], "7"));
    // A doc that docs/ does not have.
    assert_eq!(
        guard_cite("src/x.rs", "// peers.md §5\n"),
        ["src/x.rs:1: §5: no heading 5 in peers.md"]
    );
    // `docs/NAME.md` with backticks.
    assert!(guard_cite("src/x.rs", "// (`docs/cluster-summary.md` §4)\n").is_empty());
}

#[test]
fn guard_resolves_bare_citations_by_chain_file_and_folder() {
    // Chained after an explicit citation: same doc, ranges by their first number.
    assert!(guard_cite("src/x.rs", "// (ascend-memory.md §9.0–9.6, §9.6 step 2)\n").is_empty());
    assert_eq!(
        guard_cite("src/x.rs", "// (torch-snapshot.md §7, §9.6)\n"),
        ["src/x.rs:1: §9.6: no heading 9.6 in torch-snapshot.md"]
    );
    // Bare: against the docs the file names …
    let text = "//! Peaks (ascend-memory.md).\n/// The §9.6 peak; §9.7 phases.\n";
    assert_eq!(
        guard_cite("src/a.rs", text),
        ["src/a.rs:2: §9.7: no heading 9.7 in ascend-memory.md"]
    );
    // … else against the folder default (longest prefix) …
    assert!(guard_cite("src/analysis/memory_match.rs", "/// (§9.6)\n").is_empty());
    assert_eq!(
        guard_cite("src/analysis/snapshot/x.rs", "/// (§9.6)\n").len(),
        1
    );
    // … else nothing resolves it.
    let bad = guard_cite("src/ui/app.rs", "/// (house-style §8.9)\n");
    assert!(bad.len() == 1 && bad[0].contains("names no doc"), "{bad:?}");
    // A `§` without a number.
    assert_eq!(guard_cite("src/x.rs", "// see §\n").len(), 1);
    // Headings inside fenced code do not count.
    assert_eq!(
        guard_cite("src/x.rs", "// ascend-memory.md §9.7\n").len(),
        1
    );
}
