//! Human units for display: the rules of [`crate::base::format`] (one module for every layer),
//! re-exported for the UI (whose allowlist names `views::format`, not `base`), plus the
//! display helpers only the page needs (stack frame shortening).

pub use crate::base::format::{
    binary_step, bytes, bytes_i, duration_ms, duration_ns, fixed, kib, mib, nice_step, offset_ms,
    percent, rate, thousands, StepRound,
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
/// (`forward @ /root/m/model.py:12` → `forward @ model.py:12`, Windows `\\` too); other text
/// unchanged.
pub fn short_site(label: &str) -> String {
    match label.rsplit_once(" @ ") {
        Some((func, path)) => {
            let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
            format!("{func} @ {file}")
        }
        None => label.to_string(),
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
