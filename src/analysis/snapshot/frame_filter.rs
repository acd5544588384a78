//! Frame filters of snapshot stacks (torch-snapshot.md §3.4, §7.5).
//!
//! * [`memoryviz_hidden`]: MemoryViz's filter of unwinder / interpreter frames (§3.4).
//! * [`ProjectRule`]: the *project rule* of §7.5, which is the Ascend
//!   `user_frame` rule (ascend-memory.md §6.3, `analysis::user_frame`) applied to `filename`.

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
    // Compared as bytes: the last 3 bytes may be inside a multi-byte character (`…データ`).
    let b = filename.as_bytes();
    b.len() >= 3 && b[b.len() - 3..].eq_ignore_ascii_case(b".py")
}

/// Preference of a named frame as the site of a stack with no Python frame (§7.5 fallback 2;
/// lower is preferred): 0 an autograd node (`torch::autograd::generated::…::apply`), 1 an ATen
/// operator entry (`at::_ops::…::call`), 2 any other frame, 3 the caching allocator's own frames
/// (a name holding `CachingAllocator`: CUDA, ROCm and torch_npu).
pub fn native_site_rank(name: &str) -> u8 {
    if name.contains("torch::autograd::generated::") && name.contains("::apply") {
        0
    } else if name.contains("at::_ops::") && name.contains("::call") {
        1
    } else if name.contains("CachingAllocator") {
        3
    } else {
        2
    }
}

/// The project rule of §7.5: the Ascend user-frame rule (ascend-memory.md §6.3), one implementation.
pub use crate::analysis::user_frame::UserFrameRule as ProjectRule;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_python_on_names_ending_in_multibyte_characters() {
        // Found by fuzz/snapshot_report: these sliced inside a character and panicked.
        assert!(!is_python("x.\u{FFFD}pp"));
        assert!(!is_python("/home/u/データ"));
        assert!(is_python("/home/u/モデル.PY"));
        assert!(!is_python("é"));
    }

    #[test]
    fn project_rule_cases() {
        let r = ProjectRule::default();
        assert!(r.is_user_path("/home/u/proj/train.py"));
        assert!(r.is_user_path("C:\\research\\DeComFL\\decomfl_main.py"));
        assert!(!r.is_user_path(
            "C:\\research\\DeComFL\\.venv\\lib\\site-packages\\torch\\nn\\modules\\module.py"
        ));
        assert!(!r.is_user_path("/usr/lib/python3.10/runpy.py"));
        assert!(!r.is_user_path("/opt/conda/lib/python3.11/site-packages/x.py"));
        assert!(!r.is_user_path("<frozen runpy>"));
        assert!(!r.is_user_path("??"));
        assert!(!r.is_user_path("torch/nn/modules/module.py"));
        let inc = ProjectRule {
            include_prefixes: vec!["/opt/conda/lib/python3.11/site-packages/mylib/".into()],
            exclude_prefixes: vec!["/home/u/proj/vendor/".into()],
        };
        assert!(inc.is_user_path("/opt/conda/lib/python3.11/site-packages/mylib/a.py"));
        assert!(!inc.is_user_path("/home/u/proj/vendor/b.py"));
    }

    #[test]
    fn native_site_ranks() {
        let node = "torch::autograd::generated::BmmBackward0::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)";
        assert_eq!(native_site_rank(node), 0);
        assert_eq!(
            native_site_rank("at::_ops::bmm::call(at::Tensor const&, at::Tensor const&)"),
            1
        );
        assert_eq!(
            native_site_rank("at::_ops::bmm::redispatch(c10::DispatchKeySet)"),
            2
        );
        assert_eq!(native_site_rank("at::cuda::getNewWorkspace()"), 2);
        let cuda = "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)";
        assert_eq!(native_site_rank(cuda), 3);
        assert_eq!(native_site_rank("c10_npu::NPUCachingAllocator::DeviceCachingAllocator::malloc(int, unsigned long, aclrtStream)"), 3);
    }

    #[test]
    fn memoryviz_filter() {
        assert!(memoryviz_hidden("torch::unwind::unwind()", "??"));
        assert!(memoryviz_hidden("_PyEval_EvalFrameDefault", "??"));
        assert!(memoryviz_hidden("f", "/src/Python/ceval.c"));
        assert!(!memoryviz_hidden("forward", "model.py"));
    }
}
