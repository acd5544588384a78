//! Frame filters of snapshot stacks (torch-snapshot.md §3.4, §7.5).
//!
//! * [`memoryviz_hidden`]: MemoryViz's filter of unwinder / interpreter frames (§3.4).
//! * [`ProjectRule`]: the *project rule* of §7.5, which is the Ascend
//!   `user_frame` rule (ascend-memory.md §6.3) applied to `filename` after `\` → `/`.

/// True when MemoryViz hides the frame (§3.4 list, substring matches).
pub fn memoryviz_hidden(name: &str, filename: &str) -> bool {
    const NAMES: [&str; 8] = [
        "unwind::unwind",
        "CapturedTraceback::gather",
        "gather_with_cpp",
        "_start",
        "__libc_start_main",
        "PyEval_",
        "PyObject_",
        "PyFunction_",
    ];
    const FILES: [&str; 10] = [
        "core/boxing",
        "/Register",
        "/Redispatch",
        "pythonrun.c",
        "Modules/main.c",
        "Objects/call.c",
        "Objects/methodobject.c",
        "pycore_ceval.h",
        "ceval.c",
        "cpython/abstract.h",
    ];
    NAMES.iter().any(|n| name.contains(n)) || FILES.iter().any(|f| filename.contains(f))
}

/// True when `filename` is a Python source file (`.py`, case-insensitive).
pub fn is_python(filename: &str) -> bool {
    filename.len() >= 3 && filename[filename.len() - 3..].eq_ignore_ascii_case(".py")
}

/// The project rule (ascend-memory.md §6.3 rules 1–6) with user overrides.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProjectRule {
    /// Project roots: frames under these count as project code even if rules 3–5 exclude them.
    pub include_prefixes: Vec<String>,
    /// Extra library roots: frames under these never count (applied after rules 1–5).
    pub exclude_prefixes: Vec<String>,
}

impl ProjectRule {
    /// True when a frame with this `filename` is project (user) code.
    pub fn is_project(&self, filename: &str) -> bool {
        let path = filename.replace('\\', "/");
        if !is_python(&path) || path.starts_with('<') {
            return false;
        }
        if self
            .include_prefixes
            .iter()
            .any(|p| !p.is_empty() && path.starts_with(p.as_str()))
        {
            return true;
        }
        let library = path.contains("/site-packages/")
            || path.contains("/dist-packages/")
            || path.starts_with("site-packages/")
            || path.contains("/torch/")
            || path.contains("/torch_npu/")
            || path.starts_with("torch/")
            || path.starts_with("torch_npu/")
            || in_stdlib(&path);
        !library
            && !self
                .exclude_prefixes
                .iter()
                .any(|p| !p.is_empty() && path.starts_with(p.as_str()))
    }
}

/// `(^|/)lib/python\d+(\.\d+)?/` or a `/Lib/` component (Windows stdlib).
fn in_stdlib(path: &str) -> bool {
    if path.contains("/Lib/") || path.starts_with("Lib/") {
        return true;
    }
    let b = path.as_bytes();
    let mut from = 0;
    while let Some(p) = path.get(from..).and_then(|s| s.find("lib/python")) {
        let at = from + p;
        from = at + 1;
        if at > 0 && b[at - 1] != b'/' {
            continue;
        }
        let rest = &b[at + "lib/python".len()..];
        let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            continue;
        }
        let mut i = digits;
        if rest.get(i) == Some(&b'.') {
            let minor = rest[i + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            if minor > 0 {
                i += 1 + minor;
            }
        }
        if rest.get(i) == Some(&b'/') {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_rule_cases() {
        let r = ProjectRule::default();
        assert!(r.is_project("/home/u/proj/train.py"));
        assert!(r.is_project("C:\\research\\DeComFL\\decomfl_main.py"));
        assert!(!r.is_project(
            "C:\\research\\DeComFL\\.venv\\lib\\site-packages\\torch\\nn\\modules\\module.py"
        ));
        assert!(!r.is_project("/usr/lib/python3.10/runpy.py"));
        assert!(!r.is_project("/opt/conda/lib/python3.11/site-packages/x.py"));
        assert!(!r.is_project("<frozen runpy>"));
        assert!(!r.is_project("??"));
        assert!(!r.is_project("torch/nn/modules/module.py"));
        let inc = ProjectRule {
            include_prefixes: vec!["/opt/conda/lib/python3.11/site-packages/mylib/".into()],
            exclude_prefixes: vec!["/home/u/proj/vendor/".into()],
        };
        assert!(inc.is_project("/opt/conda/lib/python3.11/site-packages/mylib/a.py"));
        assert!(!inc.is_project("/home/u/proj/vendor/b.py"));
    }

    #[test]
    fn memoryviz_filter() {
        assert!(memoryviz_hidden("torch::unwind::unwind()", "??"));
        assert!(memoryviz_hidden("_PyEval_EvalFrameDefault", "??"));
        assert!(memoryviz_hidden("f", "/src/Python/ceval.c"));
        assert!(!memoryviz_hidden("forward", "model.py"));
    }
}
