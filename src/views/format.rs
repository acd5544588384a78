//! Human units for display (peers.md §7: units on every number). Pure functions; the UI
//! calls them, the exports never do (exports keep full precision).

/// Bytes as B / KiB / MiB / GiB with 1 decimal (`1536` → `1.5 KiB`).
pub fn bytes(n: f64) -> String {
    let a = n.abs();
    let (v, unit) = if a >= 1024.0 * 1024.0 * 1024.0 {
        (n / (1024.0 * 1024.0 * 1024.0), "GiB")
    } else if a >= 1024.0 * 1024.0 {
        (n / (1024.0 * 1024.0), "MiB")
    } else if a >= 1024.0 {
        (n / 1024.0, "KiB")
    } else {
        return format!("{n:.0} B");
    };
    format!("{v:.1} {unit}")
}

/// A KiB quantity as a human size (`size_kb` columns).
pub fn kb(size_kb: f64) -> String {
    bytes(size_kb * 1024.0)
}

/// A MiB quantity with 1 decimal and its unit (`1187.98` → `1188.0 MB`).
pub fn mb(v: f64) -> String {
    if v.is_nan() {
        return "–".to_string();
    }
    format!("{v:.1} MB")
}

/// A duration in ms: `µs` below 1 ms, `ms` below 1 s, else `s`.
pub fn duration_ms(ms: f64) -> String {
    let a = ms.abs();
    if a < 1.0 {
        format!("{:.1} µs", ms * 1000.0)
    } else if a < 1000.0 {
        format!("{ms:.3} ms")
    } else {
        format!("{:.3} s", ms / 1000.0)
    }
}

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

/// A time relative to `t0_ms`, shown as `+12.345 ms`.
pub fn rel_time_ms(t_ms: f64, t0_ms: f64) -> String {
    format!("+{}", duration_ms(t_ms - t0_ms))
}

/// A read rate in MB/s with 1 decimal.
pub fn rate_mb_s(v: f64) -> String {
    format!("{v:.1} MB/s")
}

/// A snapshot frame label `function @ path:line` shortened to the file name
/// (`forward @ /root/m/model.py:12` → `forward @ model.py:12`, Windows `\` too); other text
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
        assert_eq!(short_site("forward @ /root/m/model.py:12"), "forward @ model.py:12");
        assert_eq!(short_site("f @ C:\\r\\DeComFL\\main.py:3"), "f @ main.py:3");
        assert_eq!(short_site("<module> @ main.py:1"), "<module> @ main.py:1");
        assert_eq!(short_site("<non-python>"), "<non-python>");
    }

    #[test]
    fn sizes_and_times() {
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(1536.0), "1.5 KiB");
        assert_eq!(kb(147456.5), "144.0 MiB");
        assert_eq!(bytes(3.0 * 1024.0 * 1024.0 * 1024.0), "3.0 GiB");
        assert_eq!(mb(1187.9814453125), "1188.0 MB");
        assert_eq!(duration_ms(0.25), "250.0 µs");
        assert_eq!(duration_ms(12.3456), "12.346 ms");
        assert_eq!(duration_ms(12_345.0), "12.345 s");
        assert_eq!(duration_ms(3338.0), "3.338 s");
        assert_eq!(
            short_frame("/home/u/imagenet_script/main.py(354): train"),
            "main.py(354): train"
        );
        assert_eq!(
            short_frame("<string>(1): <module>"),
            "<string>(1): <module>"
        );
        assert_eq!(short_frame(""), "");
        assert_eq!(rel_time_ms(1005.5, 1000.0), "+5.500 ms");
        assert_eq!(rate_mb_s(151.25), "151.2 MB/s");
    }
}
