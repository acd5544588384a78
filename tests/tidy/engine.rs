//! The engine's floors (ARCHITECTURE.md, "The engine's floors"): every module of `src/engine`
//! names only its own floor and the floors below it, and no two engine modules name each other
//! through a circle of imports.

use std::collections::{BTreeMap, BTreeSet};

use super::*;

/// The floors of the engine, bottom up, by their first module name under `engine`: a module
/// may name its own floor and the floors below. `parallel` is the store's floor (it fills a
/// store on every core); `synth` stands beside the floors: any floor may name it and it names
/// none of them.
const FLOORS: &[&[&str]] = &[
    &["contract"],
    &["read"],
    &["store", "parallel"],
    &["export"],
    &["session"],
];

fn floor_of(name: &str) -> Option<usize> {
    FLOORS.iter().position(|f| f.contains(&name))
}

/// The engine modules `text` (the file of `module`) names: `crate::engine::…` and `super::…`
/// paths, and `child::…` paths to the modules it declares (`mod child;`), test code excluded.
fn engine_names(module: &[String], text: &str) -> Vec<Named> {
    let code = without_test_items(&blank(text));
    let mut out: Vec<Named> = named_paths(module, &code)
        .into_iter()
        .filter(|n| n.path.first().is_some_and(|p| p == "engine"))
        .collect();
    let b = code.as_bytes();
    let line_of = |k: usize| code[..k].bytes().filter(|&c| c == b'\n').count() + 1;
    let children: Vec<String> = code
        .lines()
        .filter_map(|l| {
            let l = l.trim().strip_prefix("pub ").unwrap_or(l.trim());
            let l = l.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(l.trim().to_string())
        })
        .collect();
    for c in &children {
        let pat = format!("{c}::");
        let mut from = 0;
        while let Some(k) = code[from..].find(&pat) {
            let at = from + k;
            if at == 0 || !(is_ident(b[at - 1]) || b[at - 1] == b':') {
                let mut path = module.to_vec();
                path.push(c.clone());
                out.push(Named {
                    path,
                    line: line_of(at),
                });
            }
            from = at + pat.len();
        }
    }
    out
}

/// Floor rule breaks of the engine file `rel` (`file:line: what`).
fn floor_violations(rel: &Path, text: &str) -> Vec<String> {
    let module = module_path(rel);
    if module.first().map(String::as_str) != Some("engine") || module.len() < 2 {
        return Vec::new();
    }
    let own = module[1].as_str();
    let mut bad = Vec::new();
    for n in engine_names(&module, text) {
        let Some(target) = n.path.get(1).map(String::as_str) else {
            continue;
        };
        if target == own || target == "synth" {
            continue;
        }
        let ok = match (floor_of(own), floor_of(target)) {
            (Some(a), Some(b)) => b <= a,
            _ => false,
        };
        if !ok {
            bad.push(format!(
                "{}:{}: `engine::{own}` names `crate::{}`, a floor above it or beside the floors (a floor names only itself, the floors below and synth)",
                rel.display(),
                n.line,
                n.path.join("::")
            ));
        }
    }
    bad
}

/// The circles among `edges` (module → modules it names), each as `a → b → … → a`.
fn circles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<String> {
    let mut found = Vec::new();
    let mut done: BTreeSet<Vec<String>> = BTreeSet::new();
    for start in edges.keys() {
        // Depth-first from `start`, looking for a way back to it through modules after it.
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((m, path)) = stack.pop() {
            for next in edges.get(&m).into_iter().flatten() {
                if next == start {
                    let names: Vec<String> = path.iter().map(|p| p.join("::")).collect();
                    found.push(format!("{} → {}", names.join(" → "), start.join("::")));
                } else if !done.contains(next) && seen.insert(next.clone()) {
                    let mut p = path.clone();
                    p.push(next.clone());
                    stack.push((next.clone(), p));
                }
            }
        }
        done.insert(start.clone());
    }
    found
}

/// The edges between the engine's module files: each file's module → the module files it names.
fn engine_edges(files: &[(Vec<String>, String)]) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (m, text) in files {
        let set = edges.entry(m.clone()).or_default();
        for n in engine_names(m, text) {
            // The longest module file that the path lies in.
            let target = (1..=n.path.len())
                .rev()
                .map(|k| n.path[..k].to_vec())
                .find(|p| modules.contains(p));
            if let Some(t) = target {
                if &t != m && t.len() > 1 {
                    set.insert(t);
                }
            }
        }
    }
    edges
}

fn engine_files() -> Vec<(PathBuf, Vec<String>, String)> {
    source_files()
        .into_iter()
        .filter_map(|f| {
            let rel = f.strip_prefix(root()).unwrap().to_path_buf();
            let m = module_path(&rel);
            (m.first().map(String::as_str) == Some("engine"))
                .then(|| (rel, m, fs::read_to_string(&f).unwrap()))
        })
        .collect()
}

#[test]
fn engine_floors_import_only_downward() {
    let files = engine_files();
    assert!(
        files.len() > 20,
        "tidy found too few engine files: {}",
        files.len()
    );
    let bad: Vec<String> = files
        .iter()
        .flat_map(|(rel, _, text)| floor_violations(rel, text))
        .collect();
    assert!(
        bad.is_empty(),
        "{} engine floor rule(s) broken:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn engine_modules_form_no_circle() {
    let files: Vec<(Vec<String>, String)> =
        engine_files().into_iter().map(|(_, m, t)| (m, t)).collect();
    let found = circles(&engine_edges(&files));
    assert!(
        found.is_empty(),
        "{} circle(s) of imports inside src/engine (move the shared item down a module):\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn guard_flags_an_import_up_a_floor_and_a_circle() {
    let up = floor_violations(
        Path::new("src/engine/read/rank.rs"),
        "use crate::engine::store::Store;\nuse crate::engine::contract::Target;\n",
    );
    assert_eq!(up.len(), 1, "{up:?}");
    assert!(up[0].starts_with("src/engine/read/rank.rs:1:"), "{up:?}");
    let sideways = floor_violations(
        Path::new("src/engine/synth/mod.rs"),
        "use crate::engine::read::Plan;\n",
    );
    assert_eq!(sideways.len(), 1, "{sideways:?}");
    let m = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    let files = vec![
        (
            m("engine::export"),
            "pub mod gather;\nuse gather::part;\n".to_string(),
        ),
        (m("engine::export::gather"), "use super::bad;\n".to_string()),
        (
            m("engine::store"),
            "use crate::engine::read::Plan;\n".to_string(),
        ),
        (m("engine::read"), String::new()),
    ];
    let found = circles(&engine_edges(&files));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("engine::export → engine::export::gather → engine::export"),
        "{found:?}"
    );
}
