//! Python `repr(float)`: the shortest round-trip digits, fixed notation for decimal
//! exponents −4 ≤ e < 16, else `1e+16` / `1.5e-07`. Exports write numbers with it
//! (`report::float`), and readers that rebuild a text key from a stored double (the
//! communication histogram's packet sizes of `analysis.db`) spell it the same way.

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
    // Fast path: Ryu's fixed notation covers decimal exponents −5..=15 and is Python's
    // spelling for −4..=15 (`123.0`, `0.0001`); only `0.0000d…` (exponent −5) differs.
    {
        let mut buf = ryu::Buffer::new();
        let s = buf.format_finite(a);
        if !s.contains('e') && !s.starts_with("0.0000") {
            out.push_str(s);
            return;
        }
    }
    let (digits, exp) = shortest_digits(a);
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

/// Shortest round-trip significant digits of `a > 0` (finite) and the decimal exponent of
/// the first digit (`a = d.ddd × 10^exp`). Ryu picks, among the shortest strings, the one
/// nearest the exact value and breaks exact ties to even, as CPython's `repr` does
/// (`1736405443929.15625` → `…1562`); Rust's own `{:e}` may pick the other of a tie.
fn shortest_digits(a: f64) -> (String, i32) {
    let mut buf = ryu::Buffer::new();
    let s = buf.format_finite(a);
    let (mant, e) = match s.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (s, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let mut digits: String = String::with_capacity(int.len() + frac.len());
    digits.push_str(int);
    digits.push_str(frac);
    let lead = digits.bytes().take_while(|b| *b == b'0').count();
    let point = int.len() as i32 - lead as i32;
    let digits = digits[lead..].trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    (digits.to_string(), point - 1 + e)
}

/// Python `repr(x)` as a new string.
pub fn py_repr(x: f64) -> String {
    let mut s = String::new();
    write_py_repr(&mut s, x);
    s
}
