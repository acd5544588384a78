//! Number formatting shared by every export (ascend-memory.md §8.1): Python
//! `repr(float)` (shortest round-trip digits, fixed notation for decimal
//! exponents −4 ≤ e < 16, else `1e+16` / `1.5e-07`), and exact ns → µs/ms.

use std::fmt::Write;

/// Appends Python `repr(x)` of `x` to `out`: `1.0`, `0.0001`, `1e-05`, `1e+16`, `-0.0`, `nan`, `inf`.
pub fn write_py_repr(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("nan");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { "inf" } else { "-inf" });
        return;
    }
    if x.is_sign_negative() {
        out.push('-');
    }
    let a = x.abs();
    if a == 0.0 {
        out.push_str("0.0");
        return;
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "d[.ddd]e[-]N".
    let s = format!("{a:e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: String = mant.chars().filter(|c| *c != '.').collect();
    python_tie_break(&mut digits, exp, a);
    let n = digits.len() as i32;
    if (-4..16).contains(&exp) {
        let decpt = exp + 1;
        if decpt <= 0 {
            out.push_str("0.");
            for _ in 0..-decpt {
                out.push('0');
            }
            out.push_str(&digits);
        } else if decpt >= n {
            out.push_str(&digits);
            for _ in 0..decpt - n {
                out.push('0');
            }
            out.push_str(".0");
        } else {
            out.push_str(&digits[..decpt as usize]);
            out.push('.');
            out.push_str(&digits[decpt as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
}

/// Among the shortest round-trip digit strings, Python picks the one nearest the exact
/// value and, on an exact tie, the one with an even last digit; Rust's shortest formatting
/// may pick the other of a tie (`1736405443929.15625` → Python `…1562`, Rust `…1563`).
/// `digits` (no dot) with decimal exponent `exp` is Rust's choice for `a > 0`.
fn python_tie_break(digits: &mut String, exp: i32, a: f64) {
    let n = digits.len();
    let last = digits.as_bytes()[n - 1];
    let parse = |d: &str| -> Option<f64> {
        let text = if d.len() > 1 {
            format!("{}.{}e{exp}", &d[..1], &d[1..])
        } else {
            format!("{d}e{exp}")
        };
        text.parse().ok()
    };
    for alt_last in [last.wrapping_sub(1), last + 1] {
        if !alt_last.is_ascii_digit() || (n == 1 && alt_last == b'0') {
            continue;
        }
        let mut alt = digits.clone().into_bytes();
        alt[n - 1] = alt_last;
        let alt = String::from_utf8(alt).unwrap_or_default();
        if parse(&alt) != Some(a) {
            continue;
        }
        // Both round-trip: decide by the exact value, n + 25 significant digits.
        let exact = format!("{a:.*e}", n + 24);
        let (m, _) = exact.split_once('e').unwrap_or((&exact, ""));
        let e_digits: String = m.chars().filter(|c| *c != '.').collect();
        let (lo, hi) = if alt_last < last {
            (&alt, &*digits)
        } else {
            (&*digits, &alt)
        };
        if e_digits.len() < n || &e_digits[..n] != lo.as_str() {
            return; // the exact value is not between the two: keep Rust's choice
        }
        let tail = &e_digits[n..];
        let half = tail.cmp(&format!("5{}", "0".repeat(tail.len().saturating_sub(1))));
        let pick_hi = match half {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Equal => (hi.as_bytes()[n - 1] - b'0') % 2 == 0,
        };
        *digits = if pick_hi {
            hi.to_string()
        } else {
            lo.to_string()
        };
        return;
    }
}

/// Python `repr(x)` as a new string.
pub fn py_repr(x: f64) -> String {
    let mut s = String::new();
    write_py_repr(&mut s, x);
    s
}

/// `ns / 10^scale` correctly rounded to f64, via the exact decimal text
/// (a plain division would round twice for values beyond 2^53 ns).
fn scaled(ns: i64, scale: u32) -> f64 {
    let p = 10i128.pow(scale);
    let v = ns as i128;
    let (q, r) = (v.abs() / p, v.abs() % p);
    let text = format!(
        "{}{}.{:0width$}",
        if v < 0 { "-" } else { "" },
        q,
        r,
        width = scale as usize
    );
    text.parse().unwrap_or(ns as f64 / p as f64)
}

/// Exact decimal text of `ns` in µs with 3 decimals (`1736408883743242.970`), for display.
pub fn ns_to_us_text(ns: i64) -> String {
    let v = ns as i128;
    format!(
        "{}{}.{:03}",
        if v < 0 { "-" } else { "" },
        v.abs() / 1000,
        v.abs() % 1000
    )
}

/// Exact ns → µs (correctly rounded).
pub fn ns_to_us(ns: i64) -> f64 {
    scaled(ns, 3)
}

/// Exact ns → ms (correctly rounded).
pub fn ns_to_ms(ns: i64) -> f64 {
    scaled(ns, 6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_python_repr() {
        // expected strings are CPython 3.11 `repr` outputs
        let cases: [(f64, &str); 22] = [
            (1.0, "1.0"),
            (0.5, "0.5"),
            (172387.5, "172387.5"),
            (1779785515596.6616, "1779785515596.6616"),
            (19207.61279296875, "19207.61279296875"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (123456789012345680.0, "1.2345678901234568e+17"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (-2.5, "-2.5"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e100, "1e+100"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (151491.31031, "151491.31031"),
            (12345678901234567.0, "1.2345678901234568e+16"),
            (1736405443929.15625, "1736405443929.1562"),
            (1736408883738.65625, "1736408883738.6562"),
        ];
        for (x, want) in cases {
            assert_eq!(py_repr(x), want, "{x:?}");
        }
        assert_eq!(py_repr(f64::NAN), "nan");
        assert_eq!(py_repr(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn exact_time_conversions() {
        assert_eq!(
            ns_to_ms(1_779_785_515_596_661_420),
            "1779785515596.66142".parse::<f64>().unwrap()
        );
        assert_eq!(
            ns_to_us(1_736_408_883_688_177_930),
            "1736408883688177.930".parse::<f64>().unwrap()
        );
        assert_eq!(ns_to_us(-1_500), -1.5);
    }
}
