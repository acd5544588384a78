//! Byte-level helpers over one JSON value: find where a value ends, and read a few
//! top-level keys of an event object without decoding the rest (the Perfetto
//! `ReadOneJsonKey` idea).

use std::borrow::Cow;

use super::object::quote_or_backslash;
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
        match quote_or_backslash(buf, j) {
            None => return End::Incomplete,
            Some(at) => {
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
/// The whole-buffer form of [`ValueScan`].
pub fn value_end(buf: &[u8], i: usize, eof: bool) -> End {
    match ValueScan::default().resume(buf.get(i..).unwrap_or(&[]), eof) {
        End::At(e) => End::At(i + e),
        other => other,
    }
}

/// A resumable scan for the end of one JSON value, so a value that arrives over many reads
/// is scanned once in total (linear time), not once per read.
///
/// Call [`ValueScan::resume`] with the bytes from the value's first byte on, again with more
/// bytes (the same prefix, longer) after each [`End::Incomplete`]. The scan remembers how far
/// it got, the bracket depth and whether it is inside a string.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ValueScan {
    /// Bytes of the value already scanned (relative to its first byte).
    done: usize,
    /// Depth of the opening bracket kind (objects or arrays).
    depth: usize,
    /// Inside a string (the value itself or one nested in it).
    in_string: bool,
    /// The last byte scanned is a backslash inside a string.
    escape: bool,
}

impl ValueScan {
    /// Bytes of the value scanned so far.
    pub fn scanned(&self) -> usize {
        self.done
    }

    /// Continues the scan over `v` (`v[0]` = the value's first byte, no leading whitespace).
    /// Returns [`End::At`] with the length of the value, [`End::Incomplete`] when `v` ends
    /// inside it (call again with more bytes), or [`End::Invalid`] when `v[0]` cannot start a
    /// value. Only the opening bracket kind is counted: inside well-formed JSON the other kind
    /// nests properly between matching pairs, and strings are skipped whole.
    pub fn resume(&mut self, v: &[u8], eof: bool) -> End {
        let Some(&first) = v.first() else {
            return End::Incomplete;
        };
        if self.done == 0 {
            match first {
                b'{' | b'[' => self.depth = 1,
                b'"' => self.in_string = true,
                // `NaN` / `Infinity` are not JSON but Python's `json.dumps` writes them; they
                // are scanned as scalars so that the reader can count them as unreadable.
                b'-' | b'0'..=b'9' | b't' | b'f' | b'n' | b'N' | b'I' => {}
                _ => return End::Invalid,
            }
            self.done = 1;
        }
        let mut j = self.done;
        let end = match first {
            b'{' | b'[' | b'"' => self.brackets(v, &mut j, first),
            _ => {
                let rest = v.get(j..).unwrap_or(&[]);
                match rest
                    .iter()
                    .position(|b| matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\r' | b'\n'))
                {
                    Some(k) => End::At(j + k),
                    None if eof => End::At(v.len()),
                    None => {
                        j = v.len();
                        End::Incomplete
                    }
                }
            }
        };
        self.done = j.min(v.len());
        end
    }

    /// Continues the scan of a bracketed value or a string (`first` = its first byte) whose
    /// scanned bytes the caller has dropped: `more` = the bytes right after them. Returns
    /// [`End::At`] with the length of the value's rest inside `more`, or [`End::Incomplete`]
    /// (every byte of `more` scanned; call again with the next bytes). What a reader uses to
    /// skip a value too large to keep in memory (formats.md §1.1).
    pub fn resume_dropped(&mut self, first: u8, more: &[u8]) -> End {
        if self.done == 0 || !matches!(first, b'{' | b'[' | b'"') {
            return End::Invalid;
        }
        // A plain byte loop, not `brackets`' searches: the same ends, but no per-hit search
        // cost on dense text (a quote every few bytes), so a skipped value costs about what a
        // well-formed trace of its size costs.
        let (open, close) = if first == b'[' {
            (b'[', b']')
        } else {
            (b'{', b'}')
        };
        for (k, &b) in more.iter().enumerate() {
            let ends = if self.in_string {
                if self.escape {
                    self.escape = false;
                    false
                } else if b == b'\\' {
                    self.escape = true;
                    false
                } else if b == b'"' {
                    self.in_string = false;
                    self.depth == 0
                } else {
                    false
                }
            } else if b == b'"' {
                self.in_string = true;
                false
            } else if b == open {
                self.depth += 1;
                false
            } else if b == close {
                self.depth -= 1;
                self.depth == 0
            } else {
                false
            };
            if ends {
                self.done += k + 1;
                return End::At(k + 1);
            }
        }
        self.done += more.len();
        End::Incomplete
    }

    /// The scan of a bracketed value or a string, from `*j` on; `*j` is left where it got.
    fn brackets(&mut self, v: &[u8], j: &mut usize, first: u8) -> End {
        let (open, close) = if first == b'[' {
            (b'[', b']')
        } else {
            (b'{', b'}')
        };
        loop {
            if self.in_string {
                if self.escape {
                    if *j >= v.len() {
                        return End::Incomplete;
                    }
                    *j += 1;
                    self.escape = false;
                }
                match quote_or_backslash(v, *j) {
                    None => {
                        *j = v.len();
                        return End::Incomplete;
                    }
                    Some(at) => {
                        *j = at + 1;
                        if v[at] == b'"' {
                            self.in_string = false;
                            if self.depth == 0 {
                                return End::At(*j);
                            }
                        } else {
                            self.escape = true;
                        }
                    }
                }
                continue;
            }
            let Some(k) = memchr::memchr3(b'"', open, close, v.get(*j..).unwrap_or(&[])) else {
                *j = v.len();
                return End::Incomplete;
            };
            let at = *j + k;
            *j = at + 1;
            let b = v[at];
            if b == b'"' {
                self.in_string = true;
            } else if b == open {
                self.depth += 1;
            } else {
                self.depth -= 1;
                if self.depth == 0 {
                    return End::At(*j);
                }
            }
        }
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
/// absent. Keys are compared as raw bytes (keys with escapes never match). A duplicate key:
/// the last occurrence wins (as `JSON.parse` and Python's `json`); see [`fields_dup`].
/// Returns `None` when `obj` is not a well-formed object at the top level.
pub fn fields<'a, const N: usize>(obj: &'a [u8], keys: [&str; N]) -> Option<[Option<&'a [u8]>; N]> {
    fields_dup(obj, keys).map(|(out, _)| out)
}

/// What [`fields_dup`] reads: the raw value of each key asked for, and the index of the first
/// key that occurs more than once.
pub type FieldsDup<'a, const N: usize> = ([Option<&'a [u8]>; N], Option<usize>);

/// [`fields`], and the index in `keys` of the first key that occurs more than once (the
/// object is read to its end; only the keys asked for are checked).
pub fn fields_dup<'a, const N: usize>(obj: &'a [u8], keys: [&str; N]) -> Option<FieldsDup<'a, N>> {
    let mut out = [None; N];
    let mut dup = None;
    let mut i = skip_ws(obj, 0);
    if obj.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(obj, i + 1);
    if obj.get(i) == Some(&b'}') {
        return Some((out, dup));
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
        if let Some(k) = keys.iter().position(|want| key == want.as_bytes()) {
            if out[k].is_some() && dup.is_none() {
                dup = Some(k);
            }
            out[k] = Some(&obj[i..vend]);
        }
        i = skip_ws(obj, vend);
        match obj.get(i) {
            Some(b',') => i = skip_ws(obj, i + 1),
            Some(b'}') => return Some((out, dup)),
            _ => return None,
        }
    }
}

/// What was wrong with a JSON string that was decoded anyway (lossy text is kept
/// and flagged).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StrFlaws {
    /// Bytes that are not UTF-8 (or a lone `\u` surrogate): replaced by U+FFFD.
    pub invalid_utf8: bool,
    /// A raw control byte (below 0x20) or an invalid `\` escape: kept as read.
    pub invalid_json: bool,
    /// When `invalid_utf8`: the index in the raw string (quotes included) of the first byte
    /// that is not UTF-8, or of the `\` of the first lone `\u` surrogate, whichever is first.
    pub utf8_at: usize,
    /// When `invalid_json`: the index in the raw string (quotes included) of the first raw
    /// control byte or of the `\` of the first invalid escape, whichever is first.
    pub json_at: usize,
}

impl StrFlaws {
    /// True when nothing was wrong.
    pub fn is_clean(self) -> bool {
        self == StrFlaws::default()
    }

    fn bad_utf8(&mut self, at: usize) {
        if !self.invalid_utf8 || at < self.utf8_at {
            self.utf8_at = at;
        }
        self.invalid_utf8 = true;
    }

    fn bad_json(&mut self, at: usize) {
        if !self.invalid_json || at < self.json_at {
            self.json_at = at;
        }
        self.invalid_json = true;
    }
}

/// Index of `part` (a sub-slice of `whole`) in `whole`; 0 when it is not a sub-slice.
pub fn index_in(whole: &[u8], part: &[u8]) -> usize {
    let (w, p) = (whole.as_ptr() as usize, part.as_ptr() as usize);
    match p.checked_sub(w) {
        Some(k) if k + part.len() <= whole.len() => k,
        _ => 0,
    }
}

/// The text of a JSON string value (raw, with quotes), decoded leniently: borrowed when it
/// has no escapes and is clean UTF-8; invalid UTF-8 becomes U+FFFD, raw control bytes and
/// invalid escapes are kept as read, and [`StrFlaws`] says which happened. `None` if `raw` is
/// not a string.
pub fn decode_str(raw: &[u8]) -> Option<(Cow<'_, str>, StrFlaws)> {
    if raw.len() < 2 || raw[0] != b'"' || raw[raw.len() - 1] != b'"' {
        return None;
    }
    let inner = &raw[1..raw.len() - 1];
    if let Some(s) = plain_text(inner) {
        return Some((Cow::Borrowed(s), StrFlaws::default()));
    }
    // Indices below are into `inner`; `raw` has one quote before it.
    let mut flaws = StrFlaws::default();
    if let Some(c) = inner.iter().position(|&b| b < 0x20) {
        flaws.bad_json(c + 1);
    }
    // Escapes are ASCII and what they decode to never continues a multi-byte sequence, so
    // the decoded text is UTF-8 exactly when the raw bytes are (lone surrogates aside).
    let utf8 = std::str::from_utf8(inner);
    if let Err(e) = &utf8 {
        flaws.bad_utf8(e.valid_up_to() + 1);
    }
    if !inner.contains(&b'\\') {
        let text = match utf8 {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => Cow::Owned(String::from_utf8_lossy(inner).into_owned()),
        };
        return Some((text, flaws));
    }
    let mut out: Vec<u8> = Vec::with_capacity(inner.len());
    let mut k = 0;
    while k < inner.len() {
        let b = inner[k];
        if b != b'\\' {
            out.push(b);
            k += 1;
            continue;
        }
        let e = inner.get(k + 1).copied();
        let esc = k + 1; // the `\` in `raw`
        k += 2;
        let c = match e {
            Some(b'"') => b'"',
            Some(b'\\') => b'\\',
            Some(b'/') => b'/',
            Some(b'b') => 8,
            Some(b'f') => 12,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'u') => {
                let Some(hi) = hex4(inner.get(k..k + 4)) else {
                    flaws.bad_json(esc);
                    out.extend_from_slice(b"\\u");
                    continue;
                };
                k += 4;
                let mut ch = None;
                if (0xD800..0xDC00).contains(&hi) && inner.get(k..k + 2) == Some(b"\\u") {
                    if let Some(lo) =
                        hex4(inner.get(k + 2..k + 6)).filter(|l| (0xDC00..0xE000).contains(l))
                    {
                        ch = char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00));
                        k += 6;
                    }
                }
                let ch = ch.or_else(|| char::from_u32(hi)).unwrap_or_else(|| {
                    flaws.bad_utf8(esc);
                    '\u{FFFD}'
                });
                let mut tmp = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
                continue;
            }
            Some(other) => {
                flaws.bad_json(esc);
                out.push(b'\\');
                out.push(other);
                continue;
            }
            None => {
                flaws.bad_json(esc);
                out.push(b'\\');
                continue;
            }
        };
        out.push(c);
    }
    let text = match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => {
            if !flaws.invalid_utf8 {
                flaws.bad_utf8(1); // not expected (see above); never unflagged
            }
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    Some((Cow::Owned(text), flaws))
}

/// Index in `raw` (a JSON string with its quotes) of the first `\\` that does not start a
/// valid JSON escape (`\\w` in a Windows path such as `"D:\\work\\train.py"` written
/// without doubling its backslashes), or `None`.
pub fn first_invalid_escape(raw: &[u8]) -> Option<usize> {
    let mut k = 1;
    let end = raw.len().saturating_sub(1);
    while k < end {
        let at = k + memchr::memchr(b'\\', raw.get(k..end)?)?;
        let ok = match raw.get(at + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => true,
            Some(b'u') => hex4(raw.get(at + 2..at + 6)).is_some(),
            _ => false,
        };
        if !ok || at + 1 >= end {
            return Some(at);
        }
        k = at + 2;
    }
    None
}

/// The text between the quotes of the JSON string `raw`, byte for byte (escapes not
/// decoded; invalid UTF-8 replaced by U+FFFD). For strings that are not valid JSON because of
/// raw backslashes (Windows paths): their text is what the writer meant.
pub fn verbatim_str(raw: &[u8]) -> Option<Cow<'_, str>> {
    if raw.len() < 2 || raw[0] != b'"' || raw[raw.len() - 1] != b'"' {
        return None;
    }
    Some(String::from_utf8_lossy(&raw[1..raw.len() - 1]))
}

fn hex4(d: Option<&[u8]>) -> Option<u32> {
    let d = d?;
    let s = std::str::from_utf8(d).ok()?;
    if s.len() != 4 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(s, 16).ok()
}

/// The text of a JSON string value (raw, with quotes), decoded leniently as [`decode_str`]
/// does, without its flaws. `None` if `raw` is not a string.
pub fn as_str(raw: &[u8]) -> Option<Cow<'_, str>> {
    decode_str(raw).map(|(s, _)| s)
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
    if let Some(ns) = time_ns_fast(raw) {
        return Some(TimeNs {
            ns,
            precision_lost: false,
        });
    }
    parse_time_ns(decimal_text(raw)?).ok()
}

/// The text between the quotes of a number written as a JSON string, else `raw`.
fn unquoted(raw: &[u8]) -> &[u8] {
    match raw {
        [b'"', inner @ .., b'"'] => inner,
        _ => raw,
    }
}

/// [`time_ns`] of the common form `digits[.digits]` (quoted or not) with at most 19 digits and
/// 3 fraction digits: the same value without the general parser. `None` for every other form
/// (the caller then parses it the general way).
fn time_ns_fast(raw: &[u8]) -> Option<i64> {
    let t = unquoted(raw);
    let mut v: u64 = 0;
    let mut digits = 0;
    let mut point = None;
    for (k, &c) in t.iter().enumerate() {
        match c {
            b'0'..=b'9' => {
                digits += 1;
                if digits > 19 {
                    return None;
                }
                // At most 19 digits: below 10^19 < u64::MAX.
                v = v * 10 + (c - b'0') as u64;
            }
            b'.' if point.is_none() && k > 0 => point = Some(k),
            _ => return None,
        }
    }
    let frac = match point {
        Some(p) => t.len() - p - 1,
        None => 0,
    };
    if digits == 0 || frac > 3 || (point.is_some() && frac == 0) {
        return None;
    }
    let scale = [1000, 100, 10, 1][frac];
    i64::try_from(v.checked_mul(scale)?).ok()
}

/// An integer written `-?digits` (quoted or not, at most 18 digits): its value, as
/// `str::parse::<i64>` of [`decimal_text`] gives it; `None` for every other form.
pub fn int_fast(raw: &[u8]) -> Option<i64> {
    let t = unquoted(raw);
    let (neg, d) = match t {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, t),
    };
    if d.is_empty() || d.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &c in d {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as i64;
    }
    Some(if neg { -v } else { v })
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// `inner` (a string's bytes between its quotes) as text when it is printable ASCII without
/// a backslash, the common case: nothing to decode and nothing to flag. `None` otherwise
/// (also, rarely, for such text: the caller then takes the general path).
pub fn plain_text(inner: &[u8]) -> Option<&str> {
    const BACKSLASH: u64 = LO * b'\\' as u64;
    const SPACE: u64 = LO * 0x20;
    let mut words = inner.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes(<[u8; 8]>::try_from(w).ok()?);
        // Non-ASCII, a backslash, or (when all are ASCII) a byte below 0x20.
        let b = w ^ BACKSLASH;
        let bad = (w & HI) | (b.wrapping_sub(LO) & !b & HI) | (w.wrapping_sub(SPACE) & !w & HI);
        if bad != 0 {
            return None;
        }
    }
    if words
        .remainder()
        .iter()
        .any(|&c| !(0x20..0x80).contains(&c) || c == b'\\')
    {
        return None;
    }
    std::str::from_utf8(inner).ok()
}

#[cfg(test)]
mod tests;
