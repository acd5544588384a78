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

/// What a C++ frame's name says it is (§7.5), read from its function name (the text before
/// its argument list): an autograd node (`torch::autograd::generated::<Node>::apply`), an ATen
/// operator entry (`at::_ops::<op>::call`), the caching allocator's own code (a name holding
/// `CachingAllocator`: CUDA, ROCm and torch_npu), or another frame. The one reading of these
/// names, for the site's choice ([`native_site_rank`]) and its label (`views::format::site_label`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NativeFrame<'a> {
    /// An autograd node: the backward of the forward op it names (`BmmBackward0`).
    AutogradNode(&'a str),
    /// An ATen operator entry (`sum_dim_IntList`).
    AtenOp(&'a str),
    /// The caching allocator's own frames.
    Allocator,
    /// Any other frame.
    Other,
}

/// The function name of a C++ frame `name`: the text before its argument list (`name` itself
/// when it has none, or when it starts with `(`).
pub fn function_name(name: &str) -> &str {
    match name.find('(') {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}

/// [`NativeFrame`] of the frame named `name` (with or without its argument list).
pub fn native_frame(name: &str) -> NativeFrame<'_> {
    let func = function_name(name);
    if let Some(node) = func
        .strip_prefix("torch::autograd::generated::")
        .and_then(|r| r.strip_suffix("::apply"))
    {
        NativeFrame::AutogradNode(node)
    } else if let Some(op) = func
        .strip_prefix("at::_ops::")
        .and_then(|r| r.strip_suffix("::call"))
    {
        NativeFrame::AtenOp(op)
    } else if func.contains("CachingAllocator") {
        NativeFrame::Allocator
    } else {
        NativeFrame::Other
    }
}

/// Preference of a named frame as the site of a stack with no Python frame (§7.5 fallback 2;
/// lower is preferred): 0 an autograd node, 1 an ATen operator entry, 2 any other frame, 3 the
/// caching allocator's own frames ([`native_frame`]).
pub fn native_site_rank(name: &str) -> u8 {
    match native_frame(name) {
        NativeFrame::AutogradNode(_) => 0,
        NativeFrame::AtenOp(_) => 1,
        NativeFrame::Other => 2,
        NativeFrame::Allocator => 3,
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
