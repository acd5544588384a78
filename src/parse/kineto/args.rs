//! Argument values of a Kineto event: integers written as numbers or strings, and JSON
//! values (`Input Dims`) in one compact spelling.

use crate::parse::number::parse_time_ns;
use crate::parse::trace_json::scan::{decimal_text, int_fast};

/// An integer argument: a JSON number (integral) or a string holding one; `-1` otherwise.
pub(super) fn int_arg(raw: Option<&[u8]>) -> i64 {
    if let Some(v) = raw.and_then(int_fast) {
        return v;
    }
    let Some(t) = raw.and_then(decimal_text) else {
        return -1;
    };
    let t = t.trim();
    if let Ok(v) = t.parse::<i64>() {
        return v;
    }
    match parse_time_ns(t) {
        // `7.0` → 7: the value in "µs" ×1000 back to units, only when integral.
        Ok(v) if !v.precision_lost && v.ns % 1000 == 0 => v.ns / 1000,
        _ => -1,
    }
}

/// A JSON value (`Input Dims`) in one spelling whatever the writer's layout: no whitespace
/// outside strings but one space after each `,` (`[[1, 512], []]`, as PyTorch writes it
/// compactly; a pretty-printed trace spreads it over lines). Written into `out`.
pub(super) fn compact_json(raw: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let (mut in_str, mut esc) = (false, false);
    for &c in raw {
        if in_str {
            out.push(c);
            if esc {
                esc = false;
            } else if c == b'\\' {
                esc = true;
            } else if c == b'"' {
                in_str = false;
            }
            continue;
        }
        match c {
            b' ' | b'\n' | b'\r' | b'\t' => {}
            b',' => out.extend_from_slice(b", "),
            b'"' => {
                in_str = true;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
}
