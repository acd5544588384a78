//! Human units for sizes, durations, times and ratios ("Units, numbers and words";
//! units on every number). The one place these rules live: the page (through
//! `views::format`), the CLI's Markdown and terminal summaries, and the chart axes call these
//! functions. Machine exports (CSV, JSON) never do: they keep full precision.
//!
//! Rules:
//! * sizes are binary: `B`, `KiB`, `MiB`, `GiB`, `TiB` (1024 steps); two decimals below 10
//!   of the unit, one decimal above (`1.50 KiB`, `486.6 MiB`, `1.16 GiB`); whole bytes below 1 KiB;
//! * durations pick the unit by magnitude: `ns` below 1 µs, `µs` below 1 ms, `ms` below 1 s,
//!   `s` below 10 min, then `min`; three significant decimals in ms and s (`12.346 ms`);
//! * a wall-clock time taken reads like a stopwatch: `341 ms`, `2.4 s`, `3 min 05 s`
//!   ([`elapsed_ms`]);
//! * times shown in tables are offsets from the capture start (`+12.346 ms`), never raw epoch µs;
//! * no number is ever printed as a negative zero (`-0.0`, `-0.000 ms`, `-0.0 %`): a value that
//!   rounds to zero prints without its sign ([`fixed`]).

/// Bytes per KiB.
const KIB: f64 = 1024.0;

/// `v` with `decimals` decimals, never a negative zero (`fixed(-0.0004, 3)` → `0.000`);
/// NaN → `–`, infinities → `∞` / `-∞`.
pub fn fixed(v: f64, decimals: usize) -> String {
    if v.is_nan() {
        return "–".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "∞" } else { "-∞" }.to_string();
    }
    let s = format!("{v:.decimals$}");
    match s.strip_prefix('-') {
        Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_string(),
        _ => s,
    }
}

/// A size in bytes in binary units (`512 B`, `1.50 KiB`, `486.6 MiB`, `1.16 GiB`); `–` for NaN.
pub fn bytes(n: f64) -> String {
    if n.is_nan() {
        return "–".to_string();
    }
    let a = n.abs();
    if a < KIB {
        return format!("{} B", fixed(n, 0));
    }
    let mut v = n / KIB;
    let mut unit = "KiB";
    for next in ["MiB", "GiB", "TiB"] {
        // Rounding can carry a value to 1024.0 of the unit: move up first.
        if v.abs() < KIB - 0.05 {
            break;
        }
        v /= KIB;
        unit = next;
    }
    let d = if v.abs() < 9.995 { 2 } else { 1 };
    format!("{} {unit}", fixed(v, d))
}

/// A tick step for a size axis in binary units: the power of two (bytes) nearest to `raw`
/// on a log scale, at least 1 B (`raw` 200 MiB → 256 MiB, 300 MiB → 256 MiB, 3 GiB → 4 GiB,
/// 1000 B → 1 KiB), so the ticks read 256 MiB, 512 MiB, 768 MiB, 1.00 GiB — never the decimal
/// 200 MiB steps of a 1/2/5 rule. Non-finite or non-positive `raw`: 1 B.
pub fn binary_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 1.0) {
        return 1.0;
    }
    2f64.powi(raw.log2().round() as i32)
}

/// How [`nice_step`] rounds a raw step to 1, 2 or 5 × 10^k.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepRound {
    /// The smallest nice step ≥ `raw`: ticks never closer than asked (the timeline ruler).
    Up,
    /// The nearest nice step: 1 below 1.5, 2 below 3.5, 5 below 7.5, else 10 (the x axes of
    /// the canvas charts).
    Nearest,
}

/// A "nice" tick step (1, 2 or 5 × 10^k) for a decimal axis, from the raw step `raw` (the
/// range over the number of ticks wanted), rounded as `round` says. Non-finite or
/// non-positive `raw`: 1. Size axes take [`binary_step`] instead.
pub fn nice_step(raw: f64, round: StepRound) -> f64 {
    if !(raw > 0.0) || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    match round {
        StepRound::Up => {
            for m in [1.0, 2.0, 5.0, 10.0] {
                // Relative tolerance: 0.3 must give 0.5, not be lost to 0.30000000000000004.
                if m * mag >= raw * (1.0 - 1e-9) {
                    return m * mag;
                }
            }
            10.0 * mag
        }
        StepRound::Nearest => {
            let norm = raw / mag;
            let nice = if norm < 1.5 {
                1.0
            } else if norm < 3.5 {
                2.0
            } else if norm < 7.5 {
                5.0
            } else {
                10.0
            };
            nice * mag
        }
    }
}

/// [`bytes`] of an integer byte count.
pub fn bytes_i(n: i64) -> String {
    bytes(n as f64)
}

/// A size given in KiB (the CSV's `Size(KB)` columns) as a human size.
pub fn kib(v: f64) -> String {
    bytes(v * KIB)
}

/// A size given in MiB (the CSV's `Total …(MB)` columns) as a human size.
pub fn mib(v: f64) -> String {
    bytes(v * KIB * KIB)
}

/// A duration given in ms with an adaptive unit (`250 ns`, `12.5 µs`, `12.346 ms`, `3.338 s`,
/// `2.5 min`); `–` for NaN.
pub fn duration_ms(ms: f64) -> String {
    if ms.is_nan() {
        return "–".to_string();
    }
    let a = ms.abs();
    if a == 0.0 {
        "0 ms".to_string()
    } else if a < 0.001 {
        format!("{} ns", fixed(ms * 1e6, 0))
    } else if a < 1.0 {
        format!("{} µs", fixed(ms * 1000.0, 1))
    } else if a < 1000.0 {
        format!("{} ms", fixed(ms, 3))
    } else if a < 600_000.0 {
        format!("{} s", fixed(ms / 1000.0, 3))
    } else {
        format!("{} min", fixed(ms / 60_000.0, 1))
    }
}

/// A wall-clock time taken (the page's "Done … in", the CLI's timings) in ms, read the way a
/// stopwatch is: whole `ms` below 1 s (`341 ms`), one decimal in `s` below 1 min (`2.4 s`), then
/// whole minutes and seconds (`3 min 05 s`); `–` for NaN or a negative time. Measured durations
/// of the profiled run keep [`duration_ms`]'s three decimals.
pub fn elapsed_ms(ms: f64) -> String {
    if ms.is_nan() || ms < 0.0 {
        return "–".to_string();
    }
    if ms < 999.5 {
        format!("{} ms", fixed(ms, 0))
    } else if ms < 59_950.0 {
        format!("{} s", fixed(ms / 1000.0, 1))
    } else {
        let s = (ms / 1000.0).round() as u64;
        format!("{} min {:02} s", s / 60, s % 60)
    }
}

/// [`duration_ms`] of an exact nanosecond count.
pub fn duration_ns(ns: i64) -> String {
    duration_ms(super::units::ns_to_ms(ns))
}

/// An instant `t_ms` as an offset from `t0_ms` (the capture start): `+12.346 ms`; an instant
/// before the start is `-1.500 ms`; exactly the start is `+0 ms`.
pub fn offset_ms(t_ms: f64, t0_ms: f64) -> String {
    let d = t_ms - t0_ms;
    let text = duration_ms(d);
    if text.starts_with('-') || text == "–" {
        text
    } else {
        format!("+{text}")
    }
}

/// A ratio (1.0 = 100 %) as a percentage with `decimals` decimals (`0.1234` → `12.3 %`);
/// `–` for None or NaN.
pub fn percent(ratio: Option<f64>, decimals: usize) -> String {
    match ratio {
        Some(r) if !r.is_nan() => format!("{} %", fixed(r * 100.0, decimals)),
        _ => "–".to_string(),
    }
}

/// A delta `B − A` with its sign: `+` then `f(v)`, `−` (U+2212) then `f(|v|)`, `0` for zero;
/// `–` when there is no delta (a side is missing).
pub fn signed(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    match v {
        None => "–".into(),
        Some(x) if x > 0.0 => format!("+{}", f(x)),
        Some(x) if x < 0.0 => format!("−{}", f(-x)),
        Some(_) => "0".into(),
    }
}

/// An integer with thousands separators (`1234567` → `1,234,567`).
pub fn thousands(v: i64) -> String {
    let s = v.unsigned_abs().to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3 + 1);
    if v < 0 {
        out.push('-');
    }
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A size in binary units with its exact byte count: `1.50 GiB (1,610,612,736 bytes)`.
pub fn bytes_exact(b: i64) -> String {
    format!("{} ({} bytes)", bytes_i(b), thousands(b))
}

/// A rate in bytes per second in binary units (`151.2 MiB/s`).
pub fn rate(bytes_per_s: f64) -> String {
    format!("{}/s", bytes(bytes_per_s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps_are_1_2_5_times_a_power_of_ten() {
        use StepRound::{Nearest, Up};
        assert_eq!(nice_step(0.3, Up), 0.5);
        assert_eq!(nice_step(1.0, Up), 1.0);
        assert_eq!(nice_step(1.01, Up), 2.0);
        assert_eq!(nice_step(7.0, Up), 10.0);
        assert_eq!(nice_step(0.0012, Up), 0.002);
        assert_eq!(nice_step(-1.0, Up), 1.0);
        assert_eq!(nice_step(1.4, Nearest), 1.0);
        assert_eq!(nice_step(3.0, Nearest), 2.0);
        assert_eq!(nice_step(7.0, Nearest), 5.0);
        assert_eq!(nice_step(80.0, Nearest), 100.0);
        assert_eq!(nice_step(0.0, Nearest), 1.0);
        assert_eq!(nice_step(f64::NAN, Nearest), 1.0);
    }

    #[test]
    fn size_ticks_step_in_powers_of_two() {
        const MIB: f64 = 1048576.0;
        assert_eq!(binary_step(200.0 * MIB), 256.0 * MIB);
        assert_eq!(binary_step(300.0 * MIB), 256.0 * MIB);
        assert_eq!(binary_step(3.0 * 1024.0 * MIB), 4.0 * 1024.0 * MIB);
        assert_eq!(binary_step(1000.0), 1024.0);
        assert_eq!(binary_step(0.0), 1.0);
        assert_eq!(binary_step(f64::NAN), 1.0);
        // The labels of a 1452 MiB axis (the level2 reserved peak) with 5 ticks: 256 MiB steps.
        let step = binary_step(1452.0 * MIB / 5.0);
        let labels: Vec<String> = (1..=5).map(|i| bytes(i as f64 * step)).collect();
        assert_eq!(
            labels,
            vec![
                "256.0 MiB",
                "512.0 MiB",
                "768.0 MiB",
                "1.00 GiB",
                "1.25 GiB"
            ]
        );
    }

    #[test]
    fn sizes_are_binary_and_rounded() {
        assert_eq!(bytes(0.0), "0 B");
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(1536.0), "1.50 KiB");
        assert_eq!(bytes(-1536.0), "-1.50 KiB");
        assert_eq!(kib(147456.5), "144.0 MiB");
        assert_eq!(mib(1187.9814453125), "1.16 GiB");
        assert_eq!(mib(486.6), "486.6 MiB");
        assert_eq!(mib(74.75), "74.8 MiB");
        assert_eq!(mib(49.125), "49.1 MiB");
        assert_eq!(bytes_i(1_783_664_516), "1.66 GiB");
        assert_eq!(bytes(3.0 * 1024.0 * 1024.0 * 1024.0), "3.00 GiB");
        // 1023.99 MiB would print as "1024.0 MiB": it is 1.00 GiB.
        assert_eq!(mib(1023.99), "1.00 GiB");
        assert_eq!(bytes(f64::NAN), "–");
        assert_eq!(bytes(-0.2), "0 B");
    }

    #[test]
    fn durations_pick_their_unit() {
        assert_eq!(duration_ms(0.0), "0 ms");
        assert_eq!(duration_ms(-0.0), "0 ms");
        assert_eq!(duration_ms(0.00025), "250 ns");
        assert_eq!(duration_ms(0.25), "250.0 µs");
        assert_eq!(duration_ms(12.3456), "12.346 ms");
        assert_eq!(duration_ms(3338.0), "3.338 s");
        assert_eq!(duration_ms(140_000.0), "140.000 s");
        assert_eq!(duration_ms(900_000.0), "15.0 min");
        assert_eq!(duration_ns(17_903_000), "17.903 ms");
        assert_eq!(duration_ms(-1.5), "-1.500 ms");
    }

    #[test]
    fn elapsed_times_read_like_a_stopwatch() {
        assert_eq!(elapsed_ms(0.0), "0 ms");
        assert_eq!(elapsed_ms(341.1), "341 ms");
        assert_eq!(elapsed_ms(999.4), "999 ms");
        assert_eq!(elapsed_ms(999.6), "1.0 s");
        assert_eq!(elapsed_ms(2400.0), "2.4 s");
        assert_eq!(elapsed_ms(59_949.0), "59.9 s");
        assert_eq!(elapsed_ms(59_950.0), "1 min 00 s");
        assert_eq!(elapsed_ms(185_000.0), "3 min 05 s");
        assert_eq!(elapsed_ms(-1.0), "–");
        assert_eq!(elapsed_ms(f64::NAN), "–");
    }

    #[test]
    fn no_negative_zero_anywhere() {
        assert_eq!(fixed(-0.0, 1), "0.0");
        assert_eq!(fixed(-0.0004, 3), "0.000");
        assert_eq!(fixed(-0.0006, 3), "-0.001");
        assert_eq!(percent(Some(-0.0), 1), "0.0 %");
        assert_eq!(percent(Some(-1e-9), 1), "0.0 %");
        assert_eq!(duration_ms(-1e-12), "0 ns");
        assert_eq!(offset_ms(1000.0, 1000.0), "+0 ms");
        assert_eq!(percent(None, 1), "–");
        assert_eq!(fixed(f64::NAN, 2), "–");
    }

    #[test]
    fn offsets_ratios_counts() {
        assert_eq!(offset_ms(1005.5, 1000.0), "+5.500 ms");
        assert_eq!(offset_ms(998.5, 1000.0), "-1.500 ms");
        assert_eq!(offset_ms(1000.0 + 140_000.0, 1000.0), "+140.000 s");
        assert_eq!(percent(Some(0.1234), 1), "12.3 %");
        assert_eq!(thousands(1_783_664_516), "1,783,664,516");
        assert_eq!(thousands(-1234), "-1,234");
        assert_eq!(thousands(12), "12");
        assert_eq!(rate(151.25 * 1024.0 * 1024.0), "151.2 MiB/s");
    }
}
