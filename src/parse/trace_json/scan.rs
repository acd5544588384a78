//! Byte-level helpers over one JSON value: find where a value ends, and read a few
//! top-level keys of an event object without decoding the rest (the Perfetto
//! `ReadOneJsonKey` idea, house-style §8.4).

use std::borrow::Cow;

use crate::parse::number::{parse_time_ns, TimeNs};

/// Outcome of [`value_end`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The value ends just before this index.
    At(usize),
    /// The buffer ends inside the value.
    Incomplete,
    /// Not a JSON value start at this index.
    Invalid,
}

/// Index just past the end of the string whose opening quote is at `buf[i]`.
pub fn string_end(buf: &[u8], i: usize) -> End {
    let mut j = i + 1;
    loop {
        match memchr::memchr2(b'"', b'\\', buf.get(j..).unwrap_or(&[])) {
            None => return End::Incomplete,
            Some(k) => {
                let at = j + k;
                if buf[at] == b'"' {
                    return End::At(at + 1);
                }
                // Backslash: skip it and the escaped byte.
                j = at + 2;
                if j > buf.len() {
                    return End::Incomplete;
                }
            }
        }
    }
}

/// Finds the end of the JSON value starting at `buf[i]` (no leading whitespace).
///
/// Objects and arrays are matched by depth, strings by quotes and escapes; scalars run to the
/// next delimiter. Contents are not validated (decoding does that for the values kept).
/// A scalar reaching the end of the buffer is [`End::Incomplete`] unless `eof`.
pub fn value_end(buf: &[u8], i: usize, eof: bool) -> End {
    let Some(&first) = buf.get(i) else {
        return End::Incomplete;
    };
    match first {
        b'{' | b'[' => {
            // Only the opening bracket kind is counted: inside well-formed JSON the other
            // kind nests properly between matching pairs, and strings are skipped whole.
            let (open, close) = if first == b'{' {
                (b'{', b'}')
            } else {
                (b'[', b']')
            };
            let mut depth: usize = 0;
            let mut j = i;
            loop {
                let Some(k) = memchr::memchr3(b'"', open, close, &buf[j..]) else {
                    return End::Incomplete;
                };
                j += k;
                let b = buf[j];
                if b == b'"' {
                    match string_end(buf, j) {
                        End::At(e) => {
                            j = e;
                            continue;
                        }
                        other => return other,
                    }
                } else if b == open {
                    depth += 1;
                } else {
                    depth -= 1;
                    if depth == 0 {
                        return End::At(j + 1);
                    }
                }
                j += 1;
            }
        }
        b'"' => string_end(buf, i),
        b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
            let mut j = i;
            while j < buf.len() {
                match buf[j] {
                    b',' | b']' | b'}' | b' ' | b'\t' | b'\r' | b'\n' => return End::At(j),
                    _ => j += 1,
                }
            }
            if eof {
                End::At(j)
            } else {
                End::Incomplete
            }
        }
        _ => End::Invalid,
    }
}

/// Index of the first non-whitespace byte at or after `i` (may be `buf.len()`).
pub fn skip_ws(buf: &[u8], mut i: usize) -> usize {
    while i < buf.len() && matches!(buf[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    i
}

/// Raw bytes of the top-level members `keys` of the object `obj` (a complete object).
///
/// `out[k]` is the raw value text of `keys[k]` (strings keep their quotes), or `None` when
/// absent. Keys are compared as raw bytes (keys with escapes never match). The first
/// occurrence of a duplicate key wins; scanning stops once every key is found. Returns `None`
/// when `obj` is not a well-formed object at the top level (up to the last key read).
pub fn fields<'a, const N: usize>(obj: &'a [u8], keys: [&str; N]) -> Option<[Option<&'a [u8]>; N]> {
    let mut out = [None; N];
    let mut i = skip_ws(obj, 0);
    if obj.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(obj, i + 1);
    if obj.get(i) == Some(&b'}') {
        return Some(out);
    }
    loop {
        if obj.get(i) != Some(&b'"') {
            return None;
        }
        let End::At(kend) = string_end(obj, i) else {
            return None;
        };
        let key = &obj[i + 1..kend - 1];
        i = skip_ws(obj, kend);
        if obj.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(obj, i + 1);
        let End::At(vend) = value_end(obj, i, true) else {
            return None;
        };
        for (k, want) in keys.iter().enumerate() {
            if out[k].is_none() && key == want.as_bytes() {
                out[k] = Some(&obj[i..vend]);
                if out.iter().all(Option::is_some) {
                    return Some(out);
                }
            }
        }
        i = skip_ws(obj, vend);
        match obj.get(i) {
            Some(b',') => i = skip_ws(obj, i + 1),
            Some(b'}') => return Some(out),
            _ => return None,
        }
    }
}

/// The text of a JSON string value (raw, with quotes). Borrowed when it has no escapes;
/// decoded otherwise. `None` if `raw` is not a string.
pub fn as_str(raw: &[u8]) -> Option<Cow<'_, str>> {
    if raw.len() < 2 || raw[0] != b'"' || raw[raw.len() - 1] != b'"' {
        return None;
    }
    let inner = &raw[1..raw.len() - 1];
    if !inner.contains(&b'\\') {
        return std::str::from_utf8(inner).ok().map(Cow::Borrowed);
    }
    serde_json::from_slice::<String>(raw).ok().map(Cow::Owned)
}

/// The decimal text of a value that is a number or a string holding a number
/// (`ts` is a string like `"1736408883688177.930"` in real files, a number elsewhere).
pub fn decimal_text(raw: &[u8]) -> Option<&str> {
    let t = match raw.first()? {
        b'"' => &raw[1..raw.len().checked_sub(1)?.max(1)],
        _ => raw,
    };
    std::str::from_utf8(t).ok()
}

/// A µs time value (string or number) parsed exactly into ns (formats.md §2.7, §5.1).
pub fn time_ns(raw: &[u8]) -> Option<TimeNs> {
    parse_time_ns(decimal_text(raw)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_end_handles_nesting_strings_and_escapes() {
        let b = br#"{"a":"x}\"]","b":[1,{"c":2}]} rest"#;
        assert_eq!(value_end(b, 0, false), End::At(29));
        assert_eq!(value_end(br#"{"a":"#, 0, false), End::Incomplete);
        assert_eq!(value_end(b"12.5,", 0, false), End::At(4));
        assert_eq!(value_end(b"12.5", 0, false), End::Incomplete);
        assert_eq!(value_end(b"12.5", 0, true), End::At(4));
        assert_eq!(value_end(b"]", 0, true), End::Invalid);
        assert_eq!(value_end(br#""ab\"#, 0, false), End::Incomplete);
    }

    #[test]
    fn fields_reads_top_level_keys_only() {
        let ev = br#"{"ph":"X","args":{"cat":"inner","name":"no"},"name":"aten::add","cat":"cpu_op","ts":"1736408883688177.930","dur":1.5}"#;
        let [cat, ph, name, ts, missing] = fields(ev, ["cat", "ph", "name", "ts", "id"]).unwrap();
        assert_eq!(as_str(cat.unwrap()).unwrap(), "cpu_op");
        assert_eq!(as_str(ph.unwrap()).unwrap(), "X");
        assert_eq!(as_str(name.unwrap()).unwrap(), "aten::add");
        assert_eq!(time_ns(ts.unwrap()).unwrap().ns, 1_736_408_883_688_177_930);
        assert_eq!(missing, None);
        assert_eq!(time_ns(b"12.5").unwrap().ns, 12_500);
        assert_eq!(as_str(br#""a\nb""#).unwrap(), "a\nb");
        assert!(fields(b"[1]", ["a"]).is_none());
        assert!(fields(br#"{"b":1"#, ["a"]).is_none());
    }
}
