//! Cell text → numbers, with the exact rules of ascend-memory.md §4.3 and
//! formats.md §2.1, §2.5–2.7:
//!
//! * [`trim_cell`]: cells are trimmed of ASCII whitespace (the trailing TAB torch_npu writes).
//! * [`is_null`]: empty or `N/A` (case-sensitive, after trim) means "no value".
//! * [`parse_f64`]: default-mode grammar `[+-]?digits[.digits][(e|E)[+-]?digits]`, correctly rounded.
//! * [`parse_f64_python`]: exactly the spellings CPython's `float()` accepts (parity mode).
//! * [`parse_time_ns`]: a decimal µs timestamp → exact `i64` nanoseconds (≤ 3 fraction
//!   digits exact, beyond that round half-to-even); exponent forms are accepted and flagged.

/// Why a cell is not a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumError {
    /// Empty after trimming (or `N/A` where nulls are not allowed).
    Empty,
    /// Not in the accepted grammar.
    Invalid,
    /// In the grammar but outside the representable range (e.g. > i64 ns).
    OutOfRange,
}

impl std::fmt::Display for NumError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NumError::Empty => "empty",
            NumError::Invalid => "not a number",
            NumError::OutOfRange => "out of range",
        })
    }
}

/// Trims ASCII whitespace (space, `\t`, `\r`, `\n`, form feed) from both ends.
pub fn trim_cell(s: &str) -> &str {
    match (s.as_bytes().first(), s.as_bytes().last()) {
        // Fast path: most cells have nothing to trim.
        (Some(f), Some(l)) if !f.is_ascii_whitespace() && !l.is_ascii_whitespace() => s,
        _ => s.trim_matches(|c: char| c.is_ascii_whitespace()),
    }
}

/// True when the trimmed cell is empty or exactly `N/A` (formats.md §2.6).
pub fn is_null(s: &str) -> bool {
    let t = trim_cell(s);
    t.is_empty() || t == "N/A"
}

/// Default-mode number: trims, then accepts `[+-]?digits[.digits][(e|E)[+-]?digits]` only
/// (no `nan`, `inf`, `_`; ascend-memory.md §4.3 Decision). Correctly rounded to f64.
///
/// Errors: [`NumError::Empty`] for an empty cell, [`NumError::Invalid`] otherwise.
pub fn parse_f64(s: &str) -> Result<f64, NumError> {
    let t = trim_cell(s);
    if t.is_empty() {
        return Err(NumError::Empty);
    }
    if !matches_default_grammar(t.as_bytes()) {
        return Err(NumError::Invalid);
    }
    t.parse::<f64>().map_err(|_| NumError::Invalid)
}

/// Like [`parse_f64`], but empty / `N/A` give `Ok(None)`.
pub fn parse_opt_f64(s: &str) -> Result<Option<f64>, NumError> {
    if is_null(s) {
        Ok(None)
    } else {
        parse_f64(s).map(Some)
    }
}

/// Parses a base-10 integer (optional sign), trimmed. Errors as [`parse_f64`].
pub fn parse_i64(s: &str) -> Result<i64, NumError> {
    let t = trim_cell(s);
    if t.is_empty() {
        return Err(NumError::Empty);
    }
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(NumError::Invalid);
    }
    t.parse::<i64>().map_err(|_| NumError::OutOfRange)
}

fn digits(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    i
}

fn matches_default_grammar(b: &[u8]) -> bool {
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let j = digits(b, i);
    if j == i {
        return false;
    }
    i = j;
    if i < b.len() && b[i] == b'.' {
        let j = digits(b, i + 1);
        if j == i + 1 {
            return false;
        }
        i = j;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let j = digits(b, i);
        if j == i {
            return false;
        }
        i = j;
    }
    i == b.len()
}

/// Parity-mode number: exactly what CPython's `float(str)` accepts (ascend-memory.md §4.3):
/// surrounding whitespace, optional sign, `nan` / `inf` / `infinity` in any case, decimal
/// forms `1`, `1.`, `.5`, `1.5e-3`, and `_` between digits (`1_000`).
///
/// Errors: [`NumError::Empty`] or [`NumError::Invalid`] (Python would raise `ValueError`).
pub fn parse_f64_python(s: &str) -> Result<f64, NumError> {
    let t = s.trim();
    if t.is_empty() {
        return Err(NumError::Empty);
    }
    let (neg, body) = match t.as_bytes()[0] {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = body.to_ascii_lowercase();
    let special = match lower.as_str() {
        "nan" => Some(f64::NAN),
        "inf" | "infinity" => Some(f64::INFINITY),
        _ => None,
    };
    if let Some(v) = special {
        return Ok(if neg { -v } else { v });
    }
    // Validate the Python grammar: digitpart ("_"? digit)*; "." optional; at least one digit
    // in the mantissa; exponent [eE][+-]?digitpart.
    let b = body.as_bytes();
    let mut clean = String::with_capacity(b.len() + 1);
    if neg {
        clean.push('-');
    }
    let mut i = 0;
    let mut mantissa_digits = 0;
    let read_digitpart = |i: &mut usize, clean: &mut String| -> Result<usize, NumError> {
        let start = *i;
        let mut n = 0;
        while *i < b.len() {
            let c = b[*i];
            if c.is_ascii_digit() {
                clean.push(c as char);
                n += 1;
                *i += 1;
            } else if c == b'_'
                && *i > start
                && b[*i - 1].is_ascii_digit()
                && *i + 1 < b.len()
                && b[*i + 1].is_ascii_digit()
            {
                *i += 1;
            } else {
                break;
            }
        }
        Ok(n)
    };
    mantissa_digits += read_digitpart(&mut i, &mut clean)?;
    if i < b.len() && b[i] == b'.' {
        clean.push('.');
        i += 1;
        mantissa_digits += read_digitpart(&mut i, &mut clean)?;
    }
    if mantissa_digits == 0 {
        return Err(NumError::Invalid);
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        clean.push('e');
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            clean.push(b[i] as char);
            i += 1;
        }
        if read_digitpart(&mut i, &mut clean)? == 0 {
            return Err(NumError::Invalid);
        }
    }
    if i != b.len() {
        return Err(NumError::Invalid);
    }
    clean.parse::<f64>().map_err(|_| NumError::Invalid)
}

/// An exactly parsed timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeNs {
    /// The value in integer nanoseconds (input is µs).
    pub ns: i64,
    /// True when the text was in exponent form (spreadsheet damage, formats.md §2.5):
    /// the digits that were lost cannot be recovered, so never join on this value.
    pub precision_lost: bool,
}

/// Parses a decimal microsecond value (e.g. `"1736408883688177.930\t"`) into exact
/// nanoseconds (formats.md §2.7): up to 3 fraction digits are exact, further digits round
/// half-to-even. Exponent form (`1.69512E+15`) is accepted with `precision_lost = true`.
///
/// Errors: [`NumError::Empty`], [`NumError::Invalid`] (outside the default grammar),
/// [`NumError::OutOfRange`] (beyond ±9.2e18 ns).
pub fn parse_time_ns(s: &str) -> Result<TimeNs, NumError> {
    let t = trim_cell(s);
    if t.is_empty() {
        return Err(NumError::Empty);
    }
    let b = t.as_bytes();
    if !matches_default_grammar(b) {
        return Err(NumError::Invalid);
    }
    let (neg, rest) = match b[0] {
        b'-' => (true, &b[1..]),
        b'+' => (false, &b[1..]),
        _ => (false, b),
    };
    // Split mantissa / exponent.
    let (mant, exp, has_exp) = match rest.iter().position(|&c| c == b'e' || c == b'E') {
        Some(p) => {
            let e = std::str::from_utf8(&rest[p + 1..])
                .ok()
                .and_then(|s| s.parse::<i32>().ok());
            match e {
                Some(e) => (&rest[..p], e, true),
                None => return Err(NumError::OutOfRange),
            }
        }
        None => (rest, 0, false),
    };
    // Digits of the mantissa with the decimal point removed; value = D × 10^(exp - frac_len) µs.
    let (int_part, frac_part) = match mant.iter().position(|&c| c == b'.') {
        Some(p) => (&mant[..p], &mant[p + 1..]),
        None => (mant, &mant[0..0]),
    };
    // ns = D × 10^(exp - frac_len + 3)
    let shift = exp as i64 - frac_part.len() as i64 + 3;
    let all = int_part.iter().chain(frac_part.iter());
    let n_digits = int_part.len() + frac_part.len();
    if (0..=19).contains(&shift) && n_digits <= 19 {
        // Fast path, every epoch timestamp in µs with 3 fraction digits (19 digits): u64 only.
        let m = scaled_u64(all, shift as u32).ok_or(NumError::OutOfRange)?;
        return Ok(TimeNs {
            ns: signed_ns(neg, m)?,
            precision_lost: has_exp,
        });
    }
    let value: i128 = if shift >= 0 {
        let mut v: i128 = 0;
        for &d in all {
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add((d - b'0') as i128))
                .ok_or(NumError::OutOfRange)?;
        }
        if shift > 30 && v != 0 {
            return Err(NumError::OutOfRange);
        }
        v.checked_mul(10i128.pow(shift.min(30) as u32))
            .ok_or(NumError::OutOfRange)?
    } else {
        // Keep the first n_digits - drop digits, round half-to-even on the dropped ones.
        let drop = (-shift) as usize;
        let keep = n_digits.saturating_sub(drop);
        let mut v: i128 = 0;
        for &d in all.clone().take(keep) {
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add((d - b'0') as i128))
                .ok_or(NumError::OutOfRange)?;
        }
        // Compare the dropped part with one half.
        let mut dropped = all.skip(keep).map(|&d| d - b'0');
        let first = dropped.next().unwrap_or(0);
        let rest_nonzero = dropped.any(|d| d != 0);
        let round_up = if drop > n_digits {
            false // value < 10^-(drop - n_digits) ≤ 0.1: rounds to 0
        } else if first > 5 || (first == 5 && rest_nonzero) {
            true
        } else if first == 5 {
            v % 2 == 1
        } else {
            false
        };
        if round_up {
            v + 1
        } else {
            v
        }
    };
    let signed = if neg { -value } else { value };
    let ns = i64::try_from(signed).map_err(|_| NumError::OutOfRange)?;
    Ok(TimeNs {
        ns,
        precision_lost: has_exp,
    })
}

/// `10^0 … 10^19`; 10^19 is the largest power of ten in a `u64`.
const POW10: [u64; 20] = {
    let mut p = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

/// Exact `D × 10^shift` for at most 19 decimal digits `D` and `shift ≤ 19`, in `u64`
/// arithmetic only (no 128-bit multiply, which is a software call on wasm32). 19 digits are
/// at most 10^19 − 1 < `u64::MAX`, so the digit loop cannot overflow; the scaling is checked
/// by comparison. `None` when the result exceeds `u64`.
fn scaled_u64<'a>(digits: impl Iterator<Item = &'a u8>, shift: u32) -> Option<u64> {
    let mut v: u64 = 0;
    for &d in digits {
        v = v * 10 + (d - b'0') as u64;
    }
    let p = POW10[shift as usize];
    (v <= u64::MAX / p).then(|| v * p)
}

/// The magnitude `m` with its sign as `i64`: `-2^63 ..= 2^63 − 1`, else out of range.
fn signed_ns(neg: bool, m: u64) -> Result<i64, NumError> {
    if neg {
        if m <= 1 << 63 {
            Ok((m as i64).wrapping_neg())
        } else {
            Err(NumError::OutOfRange)
        }
    } else {
        i64::try_from(m).map_err(|_| NumError::OutOfRange)
    }
}

/// Like [`parse_time_ns`], but empty / `N/A` give `Ok(None)`.
pub fn parse_opt_time_ns(s: &str) -> Result<Option<TimeNs>, NumError> {
    if is_null(s) {
        Ok(None)
    } else {
        parse_time_ns(s).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_is_exact_with_the_trailing_tab() {
        let t = parse_time_ns("1736408883688177.930\t").unwrap();
        assert_eq!(
            t,
            TimeNs {
                ns: 1_736_408_883_688_177_930,
                precision_lost: false
            }
        );
        assert_eq!(
            parse_time_ns("1695115378723902.5").unwrap().ns,
            1_695_115_378_723_902_500
        );
        assert_eq!(parse_time_ns(" 12 ").unwrap().ns, 12_000);
        assert_eq!(parse_time_ns("-1.5").unwrap().ns, -1_500);
    }

    #[test]
    fn time_rounds_half_to_even_beyond_ns() {
        assert_eq!(parse_time_ns("0.0005").unwrap().ns, 0);
        assert_eq!(parse_time_ns("0.0015").unwrap().ns, 2);
        assert_eq!(parse_time_ns("0.0025").unwrap().ns, 2);
        assert_eq!(parse_time_ns("0.00250001").unwrap().ns, 3);
        assert_eq!(parse_time_ns("0.0024999").unwrap().ns, 2);
        assert_eq!(parse_time_ns("0.0000001").unwrap().ns, 0);
    }

    #[test]
    fn time_at_18_19_and_20_digits_and_the_i64_limits() {
        let ns = |s: &str| parse_time_ns(s).map(|t| t.ns);
        // 18 digits, 19 digits (epoch µs with 3 fraction digits), 20 digits (slow path).
        assert_eq!(ns("123456789012345.678"), Ok(123_456_789_012_345_678));
        assert_eq!(ns("1736408883688177.930"), Ok(1_736_408_883_688_177_930));
        assert_eq!(ns("01736408883688177.930"), Ok(1_736_408_883_688_177_930));
        assert_eq!(ns("12345678901234567.890"), Err(NumError::OutOfRange));
        // i64 limits at 19 digits: 2^63 − 1 and −2^63 exactly, one past them out of range.
        assert_eq!(ns("9223372036854775.807"), Ok(i64::MAX));
        assert_eq!(ns("9223372036854775.808"), Err(NumError::OutOfRange));
        assert_eq!(ns("-9223372036854775.808"), Ok(i64::MIN));
        assert_eq!(ns("-9223372036854775.809"), Err(NumError::OutOfRange));
        assert_eq!(ns("9999999999999999.999"), Err(NumError::OutOfRange));
        // The same limits reached by scaling (integer µs: ×1000; exponent forms: up to ×10^19).
        assert_eq!(ns("9223372036854775"), Ok(9_223_372_036_854_775_000));
        assert_eq!(ns("9223372036854776"), Err(NumError::OutOfRange));
        assert_eq!(ns("-9223372036854775"), Ok(-9_223_372_036_854_775_000));
        assert_eq!(ns("9e15"), Ok(9_000_000_000_000_000_000));
        assert_eq!(ns("1e16"), Err(NumError::OutOfRange));
        assert_eq!(ns("99999e15"), Err(NumError::OutOfRange));
        assert_eq!(ns("-0.000"), Ok(0));
    }

    /// Straight i128 evaluation of `[-]int.frac` (≤ 3 fraction digits) for the comparison below.
    fn reference_ns(neg: bool, int: &str, frac: &str) -> Result<i64, NumError> {
        let mut v: i128 = 0;
        for d in int.bytes().chain(frac.bytes()) {
            v = v * 10 + (d - b'0') as i128;
            if v > 1i128 << 100 {
                return Err(NumError::OutOfRange);
            }
        }
        v *= 10i128.pow(3 - frac.len() as u32);
        i64::try_from(if neg { -v } else { v }).map_err(|_| NumError::OutOfRange)
    }

    #[test]
    fn fast_path_equals_the_i128_evaluation() {
        // Deterministic LCG over 1–22 integer digits (leading digit 1–9, often 9 to reach the
        // limits), 0–3 fraction digits and both signs.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % m
        };
        for _ in 0..20_000 {
            let n_int = 1 + next(22) as usize;
            let n_frac = next(4) as usize;
            let neg = next(2) == 1;
            let nines = next(3) == 0;
            let mut int = String::new();
            for i in 0..n_int {
                let d = if nines {
                    9
                } else if i == 0 {
                    1 + next(9)
                } else {
                    next(10)
                };
                int.push((b'0' + d as u8) as char);
            }
            let frac: String = (0..n_frac)
                .map(|_| (b'0' + next(10) as u8) as char)
                .collect();
            let text = format!(
                "{}{int}{}{frac}",
                if neg { "-" } else { "" },
                if n_frac > 0 { "." } else { "" }
            );
            assert_eq!(
                parse_time_ns(&text).map(|t| t.ns),
                reference_ns(neg, &int, &frac),
                "{text}"
            );
        }
    }

    #[test]
    fn exponent_form_is_flagged() {
        let t = parse_time_ns("1.69512E+15").unwrap();
        assert_eq!(t.ns, 1_695_120_000_000_000_000);
        assert!(t.precision_lost);
        assert_eq!(parse_time_ns("5e-1").unwrap().ns, 500);
        assert_eq!(parse_time_ns("5e-4").unwrap().ns, 0); // 0.5 ns: half to even
    }

    #[test]
    fn time_errors() {
        assert_eq!(parse_time_ns("\t"), Err(NumError::Empty));
        assert_eq!(parse_time_ns("N/A"), Err(NumError::Invalid));
        assert_eq!(parse_opt_time_ns("N/A"), Ok(None));
        assert_eq!(parse_time_ns("1_000"), Err(NumError::Invalid));
        assert_eq!(
            parse_time_ns("99999999999999999999"),
            Err(NumError::OutOfRange)
        );
        assert_eq!(parse_time_ns("1e999999999999"), Err(NumError::OutOfRange));
    }

    #[test]
    fn default_grammar() {
        assert_eq!(parse_f64("19071.60547"), Ok(19071.60547));
        assert_eq!(parse_f64("-8192.5\t"), Ok(-8192.5));
        assert_eq!(parse_f64("1E3"), Ok(1000.0));
        for bad in ["nan", "inf", "1_000", ".5", "1.", "abc", "1e", "--1"] {
            assert_eq!(parse_f64(bad), Err(NumError::Invalid), "{bad}");
        }
        assert_eq!(parse_opt_f64("  "), Ok(None));
        assert_eq!(parse_i64("897357296"), Ok(897357296));
        assert_eq!(parse_i64("1.5"), Err(NumError::Invalid));
    }

    #[test]
    fn python_float_spellings() {
        assert_eq!(parse_f64_python(" 1_000.5 "), Ok(1000.5));
        assert_eq!(parse_f64_python("1."), Ok(1.0));
        assert_eq!(parse_f64_python(".5"), Ok(0.5));
        assert!(parse_f64_python("-NaN").unwrap().is_nan());
        assert_eq!(parse_f64_python("+Infinity"), Ok(f64::INFINITY));
        assert_eq!(
            parse_f64_python("1779785515596661.420\t"),
            Ok(1779785515596661.420)
        );
        for bad in ["N/A", "1__0", "_1", "1_", "1e", "infinit", "0x10", ""] {
            assert!(parse_f64_python(bad).is_err(), "{bad}");
        }
    }
}
