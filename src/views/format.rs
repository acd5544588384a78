//! Human units for display: the rules of [`crate::base::format`] (one module for every layer),
//! re-exported for the UI (whose allowlist names `views::format`, not `base`), plus the
//! display helpers only the page needs (stack frame shortening).

use crate::analysis::snapshot::frame_filter::{function_name, native_frame, NativeFrame};

pub use crate::base::format::{
    binary_step, bytes, bytes_i, duration_ms, duration_ns, elapsed_ms, fixed, kib, mib, nice_step,
    offset_ms, percent, rate, thousands, StepRound,
};

/// A stack frame `<path>(<line>): <function>` shortened to the file name, line and
/// function (`/home/u/main.py(354): train` → `main.py(354): train`); other text unchanged.
pub fn short_frame(frame: &str) -> &str {
    let path_end = frame
        .find("): ")
        .and_then(|i| frame[..i].rfind('('))
        .unwrap_or(frame.len());
    match frame[..path_end].rfind('/') {
        Some(slash) => &frame[slash + 1..],
        None => frame,
    }
}

/// A read rate given in MiB/s, in binary units (`151.2 MiB/s`).
pub fn rate_mb_s(v: f64) -> String {
    rate(v * 1024.0 * 1024.0)
}

/// A snapshot frame label `function @ path:line` shortened to the file name
/// (`forward @ /root/m/model.py:12` → `forward @ model.py:12`, Windows `\\` too), after
/// [`site_label`] (a C++ frame reads as its node or operator); other text unchanged.
pub fn short_site(label: &str) -> String {
    let label = site_label(label);
    match label.rsplit_once(" @ ") {
        Some((func, path)) => {
            let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
            format!("{func} @ {file}")
        }
        None => label,
    }
}

/// A snapshot site label as the page shows it: a C++-only site (torch-snapshot.md §7.5) loses
/// its argument list and the unknown `@ ??:0` location, an autograd node reads as the backward
/// it is (`torch::autograd::generated::BmmBackward0::apply(std::vector<…>&&) @ ??:0` →
/// `BmmBackward0 (autograd)`) and an ATen entry as its operator
/// (`at::_ops::sum_dim_IntList::call(…) @ ??:0` → `at::_ops::sum_dim_IntList`); Python sites
/// and bucket labels (`<no stack>`) are unchanged. Display only: exports keep the full label,
/// and the page keeps it in the cell's title.
pub fn site_label(label: &str) -> String {
    let (func, place) = match label.rsplit_once(" @ ") {
        Some((f, p)) => (f, Some(p)),
        None => (label, None),
    };
    // Only C++ names are rewritten: a qualified name or a signature.
    if !(func.contains("::") || func.contains('(')) || func.starts_with('<') {
        return label.to_string();
    }
    let name = function_name(func);
    let short = match native_frame(name) {
        NativeFrame::AutogradNode(node) => format!("{node} (autograd)"),
        NativeFrame::AtenOp(op) => format!("at::_ops::{op}"),
        NativeFrame::Allocator | NativeFrame::Other => name.to_string(),
    };
    match place {
        // The location of a frame with no debug information says nothing.
        Some(p) if !p.starts_with("??") => format!("{short} @ {p}"),
        _ => short,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_sites_lose_their_directories() {
        assert_eq!(
            short_site("forward @ /root/m/model.py:12"),
            "forward @ model.py:12"
        );
        assert_eq!(short_site("f @ C:\\r\\DeComFL\\main.py:3"), "f @ main.py:3");
        assert_eq!(short_site("<module> @ main.py:1"), "<module> @ main.py:1");
        assert_eq!(short_site("<non-python>"), "<non-python>");
    }

    #[test]
    fn cpp_only_sites_read_as_their_node_or_operator() {
        assert_eq!(
            site_label("torch::autograd::generated::BmmBackward0::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&) @ ??:0"),
            "BmmBackward0 (autograd)"
        );
        assert_eq!(
            site_label("at::_ops::sum_dim_IntList::call(at::Tensor const&, c10::OptionalArrayRef<long>, bool, std::optional<c10::ScalarType>) @ ??:0"),
            "at::_ops::sum_dim_IntList"
        );
        assert_eq!(
            site_label("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*) @ ??:0"),
            "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc"
        );
        assert_eq!(
            site_label("at::native::foo(int) @ /src/aten/foo.cpp:12"),
            "at::native::foo @ /src/aten/foo.cpp:12"
        );
        // Python sites and the bucket labels are left as they are.
        assert_eq!(
            site_label("forward @ /root/m/model.py:12"),
            "forward @ /root/m/model.py:12"
        );
        assert_eq!(site_label("<no stack>"), "<no stack>");
        assert_eq!(site_label("<module> @ main.py:1"), "<module> @ main.py:1");
    }

    #[test]
    fn frames_rates_and_the_shared_rules() {
        assert_eq!(mib(1187.9814453125), "1.16 GiB");
        assert_eq!(duration_ms(12.3456), "12.346 ms");
        assert_eq!(
            short_frame("/home/u/imagenet_script/main.py(354): train"),
            "main.py(354): train"
        );
        assert_eq!(
            short_frame("<string>(1): <module>"),
            "<string>(1): <module>"
        );
        assert_eq!(short_frame(""), "");
        assert_eq!(offset_ms(1005.5, 1000.0), "+5.500 ms");
        assert_eq!(rate_mb_s(151.25), "151.2 MiB/s");
    }
}
