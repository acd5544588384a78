//! Number formatting shared by every export (ascend-memory.md §8.1): Python
//! `repr(float)` (shortest round-trip digits, fixed notation for decimal
//! exponents −4 ≤ e < 16, else `1e+16` / `1.5e-07`), and exact ns → µs/ms.

pub use crate::base::pyfloat::{py_repr, write_py_repr};

/// `ns / 10^scale` correctly rounded to f64, via the exact decimal text
/// (a plain division would round twice for values beyond 2^53 ns).
fn scaled(ns: i64, scale: u32) -> f64 {
    let p = 10u64.pow(scale);
    let v = ns.unsigned_abs();
    // Up to 2^53 both `ns` and `p` (≤ 10^19 < 2^64, exact when ≤ 10^22) are exact f64s, and
    // IEEE division rounds the exact quotient correctly: the same f64 as parsing the text.
    if v <= 1 << 53 && scale <= 19 {
        return ns as f64 / p as f64;
    }
    let (mut q, mut r) = (v / p, v % p);
    // digits written right to left into a stack buffer: "-q.rrr"
    let mut b = [0u8; 48];
    let mut i = b.len();
    for _ in 0..scale {
        i -= 1;
        b[i] = b'0' + (r % 10) as u8;
        r /= 10;
    }
    i -= 1;
    b[i] = b'.';
    loop {
        i -= 1;
        b[i] = b'0' + (q % 10) as u8;
        q /= 10;
        if q == 0 {
            break;
        }
    }
    if ns < 0 {
        i -= 1;
        b[i] = b'-';
    }
    std::str::from_utf8(&b[i..])
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(ns as f64 / p as f64)
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

/// `ns / 10^scale` with exactly `scale` decimals (`fixed_number_text(12_500, 3)` = `12.500`;
/// [`ns_to_us_text`] for `scale` 3).
pub fn fixed_number_text(ns: i64, scale: u32) -> String {
    let p = 10u128.pow(scale);
    let v = (ns as i128).unsigned_abs();
    let sign = if ns < 0 { "-" } else { "" };
    if scale == 0 {
        return format!("{sign}{v}");
    }
    format!("{sign}{}.{:0w$}", v / p, v % p, w = scale as usize)
}

/// `ns / 10^scale` as a number text that is exactly the value (exact times):
/// Python's `repr` of the correctly rounded f64 whenever that repr is the exact value (up to
/// 15 significant digits: what every earlier export wrote, so those bytes do not change),
/// else the exact decimal with trailing zeros removed (`1700000000000080.123`; an f64 would
/// print `1700000000000080.2`). Never an exponent for values of 16 or more digits.
pub fn exact_number_text(ns: i64, scale: u32) -> String {
    if let Some(x) = repr_is_exact(ns, scale) {
        return py_repr(x);
    }
    let p = 10u64.pow(scale);
    let v = ns.unsigned_abs();
    let (q, r) = (v / p, v % p);
    let mut frac = format!("{r:0width$}", width = scale as usize);
    while frac.len() > 1 && frac.ends_with('0') {
        frac.pop();
    }
    format!("{}{q}.{frac}", if ns < 0 { "-" } else { "" })
}

/// `ns / 10^scale` correctly rounded when its Python `repr` is the exact value (at most 15
/// significant digits: the decimal digits of |ns| without trailing zeros), else `None`
/// ([`exact_number_text`]'s rule).
fn repr_is_exact(ns: i64, scale: u32) -> Option<f64> {
    let mut sig = ns.unsigned_abs();
    while sig != 0 && sig % 10 == 0 {
        sig /= 10;
    }
    (sig < 1_000_000_000_000_000).then(|| scaled(ns, scale))
}

/// A time in µs written exactly from its ns ([`exact_number_text`] with 3 decimals): a JSON
/// number in serde output (raw text, so no f64 rounding), e.g. `start_us`, `end_us`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ExactUs(pub i64);

impl serde::Serialize for ExactUs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // serde_json writes an f64 as Ryu's shortest text, which is Python's `repr` for
        // 0 and for 1e-4 ≤ |x| < 1e16 (`write_py_repr`'s fast path): then no text is built.
        if let Some(x) = repr_is_exact(self.0, 3) {
            if x == 0.0 || (1e-4..1e16).contains(&x.abs()) {
                return s.serialize_f64(x);
            }
        }
        let raw = serde_json::value::RawValue::from_string(exact_number_text(self.0, 3))
            .map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

/// Exact ns → µs (correctly rounded).
pub fn ns_to_us(ns: i64) -> f64 {
    scaled(ns, 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_number_text_is_the_value_and_repr_where_repr_is_exact() {
        // The case: a window at …080 µs (an f64 division printed …079.75).
        assert_eq!(
            exact_number_text(1_700_000_000_000_080_000, 3),
            "1700000000000080.0"
        );
        assert_eq!(
            exact_number_text(1_700_000_000_000_080_123, 3),
            "1700000000000080.123"
        );
        assert_eq!(
            exact_number_text(-1_700_000_000_000_080_120, 3),
            "-1700000000000080.12"
        );
        assert_eq!(
            exact_number_text(1_700_000_000_000_080_123, 6),
            "1700000000000.080123"
        );
        // Up to 15 significant digits: Python repr (bytes of earlier exports unchanged).
        assert_eq!(
            exact_number_text(1_736_408_883_743_000, 3),
            "1736408883743.0"
        );
        assert_eq!(exact_number_text(100_500, 3), "100.5");
        assert_eq!(exact_number_text(1, 6), "1e-06");
        assert_eq!(exact_number_text(0, 3), "0.0");
        assert_eq!(exact_number_text(i64::MIN, 3), "-9223372036854775.808");
        let j = serde_json::to_string(&[ExactUs(1_700_000_000_000_080_000), ExactUs(5)]).unwrap();
        assert_eq!(j, "[1700000000000080.0,0.005]");
    }

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
            ns_to_us(1_736_408_883_688_177_930),
            "1736408883688177.930".parse::<f64>().unwrap()
        );
        assert_eq!(ns_to_us(-1_500), -1.5);
    }

    #[test]
    fn exact_us_in_json_is_exact_number_text() {
        // The f64 fast path of `ExactUs` against the text path, over every magnitude.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut cases: Vec<i64> = vec![0, 1, -1, 99, 100, 999, 1000, 1 << 53, (1 << 53) + 1];
        cases.extend([
            i64::MIN,
            i64::MAX,
            9_999_999_999_999_999,
            1_000_000_000_000_000_000,
        ]);
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bits = (x % 64) as u32;
            let v = ((x >> 1) as i64) >> (63 - bits.min(62));
            // Round some to whole µs / ms so short reprs (`12.0`, `0.5`) come up too.
            let v = match x % 4 {
                0 => v / 1000 * 1000,
                1 => v / 100 * 100,
                _ => v,
            };
            cases.push(if x & 16 == 0 { v } else { v.wrapping_neg() });
        }
        for ns in cases {
            let j = serde_json::to_string(&ExactUs(ns)).unwrap();
            assert_eq!(j, exact_number_text(ns, 3), "{ns}");
        }
        // Values below 1e-4 µs cannot occur (1 ns = 0.001 µs); the text path covers them.
        assert_eq!(exact_number_text(1, 6), "1e-06");
    }
}
