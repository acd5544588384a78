//! One pass over an event object: where it ends **and** where its top-level members are, so
//! that a reader of a few keys does not scan the object a second time with
//! [`fields_dup`].
//!
//! [`scan_object`] is strict: it succeeds only on an object that is well-formed JSON as far
//! as structure goes (brackets properly nested, `"key": value` pairs, `,` between them,
//! scalars made of `[0-9A-Za-z.+-]`). On such an object its end equals [`ValueScan`]'s (which
//! counts only `{`/`}` outside strings) and its members equal what [`fields_dup`] reads. On
//! anything else, or when the buffer ends inside the object, it answers `None` and the caller
//! uses the lenient, resumable [`ValueScan`] and [`fields_dup`] exactly as before, so what is
//! delivered never depends on the fast path.
//!
//! [`ValueScan`]: super::scan::ValueScan

use super::scan::{fields_dup, skip_ws, FieldsDup};

/// Most top-level members recorded; an object with more is read with [`fields_dup`].
const MAX_MEMBERS: usize = 16;

/// Deepest nesting the strict scan follows (then it gives up: the lenient scan takes over).
const MAX_DEPTH: u32 = 64;

/// Members of one object: `(key_start, key_end, value_start, value_end)` byte ranges into the
/// scanned bytes (key without its quotes), in file order.
#[derive(Clone, Debug)]
struct Spans {
    n: usize,
    /// More members than [`MAX_MEMBERS`]: the spans are incomplete, not usable.
    overflow: bool,
    spans: [[usize; 4]; MAX_MEMBERS],
}

impl Default for Spans {
    fn default() -> Self {
        Spans {
            n: 0,
            overflow: false,
            spans: [[0; 4]; MAX_MEMBERS],
        }
    }
}

impl Spans {
    fn clear(&mut self) {
        self.n = 0;
        self.overflow = false;
    }

    fn push(&mut self, span: [usize; 4]) {
        match self.spans.get_mut(self.n) {
            Some(s) => {
                *s = span;
                self.n += 1;
            }
            None => self.overflow = true,
        }
    }

    /// [`fields_dup`] of the object these spans index inside `obj` (the bytes [`scan_object`]
    /// read); `None` when the spans are incomplete (the caller then scans). Inlined so that
    /// the callers' constant keys are compared as constants.
    #[inline]
    fn lookup<'a, const N: usize>(
        &self,
        obj: &'a [u8],
        keys: [&str; N],
    ) -> Option<FieldsDup<'a, N>> {
        if self.overflow {
            return None;
        }
        let mut out = [None; N];
        let mut dup = None;
        for &[ks, ke, vs, ve] in self.spans.get(..self.n)? {
            let key = obj.get(ks..ke)?;
            let same = |want: &&str| {
                let w = want.as_bytes();
                w.len() == key.len() && w.first() == key.first() && w == key
            };
            if let Some(k) = keys.iter().position(same) {
                if out[k].is_some() && dup.is_none() {
                    dup = Some(k);
                }
                out[k] = Some(obj.get(vs..ve)?);
            }
        }
        Some((out, dup))
    }
}

/// What [`scan_object`] found in one object: its top-level members, and the members of the
/// last top-level `args` whose value is an object (read again by most readers).
#[derive(Clone, Debug, Default)]
pub struct ObjectIndex {
    top: Spans,
    args: Spans,
    /// The value range of the `args` object that `args` indexes.
    args_at: Option<(usize, usize)>,
}

impl ObjectIndex {
    #[inline]
    fn lookup<'a, const N: usize>(
        &self,
        obj: &'a [u8],
        keys: [&str; N],
    ) -> Option<FieldsDup<'a, N>> {
        self.top.lookup(obj, keys)
    }
}

/// One event object as the splitter hands it out: its raw bytes and, when the strict scan
/// read it, the index of its top-level members.
#[derive(Clone, Copy, Debug)]
pub struct Event<'a> {
    bytes: &'a [u8],
    index: Option<&'a ObjectIndex>,
}

impl<'a> Event<'a> {
    /// An event without an index (its keys are found by scanning).
    pub fn plain(bytes: &'a [u8]) -> Self {
        Event { bytes, index: None }
    }

    /// `bytes` with the index [`scan_object`] built for exactly these bytes.
    pub(super) fn indexed(bytes: &'a [u8], index: &'a ObjectIndex) -> Self {
        Event {
            bytes,
            index: Some(index),
        }
    }

    /// True when the strict scan read the event: it is well-formed JSON as far as structure
    /// goes, and its top-level members are indexed.
    pub fn is_indexed(&self) -> bool {
        self.index.is_some()
    }

    /// The raw bytes of the event object.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Exactly [`fields_fast`] of `args` (a member value of this event, as
    /// [`Event::fields_dup`] gave it), from the index when `args` is the indexed `args` object.
    #[inline]
    pub fn args_fields<const N: usize>(
        &self,
        args: &'a [u8],
        keys: [&str; N],
    ) -> Option<[Option<&'a [u8]>; N]> {
        let indexed = self.index.and_then(|x| {
            let (vs, ve) = x.args_at?;
            let at = (args.as_ptr() as usize).checked_sub(self.bytes.as_ptr() as usize)?;
            if at != vs || args.len() != ve - vs {
                return None;
            }
            x.args.lookup(self.bytes, keys)
        });
        match indexed {
            Some((out, _)) => Some(out),
            None => fields_fast(args, keys),
        }
    }

    /// Exactly [`fields_dup`] of [`Event::bytes`], from the index when there is one.
    #[inline]
    pub fn fields_dup<const N: usize>(&self, keys: [&str; N]) -> Option<FieldsDup<'a, N>> {
        match self.index.and_then(|x| x.lookup(self.bytes, keys)) {
            Some(found) => Some(found),
            None => fields_dup(self.bytes, keys),
        }
    }
}

/// Exactly [`super::scan::fields`] of `obj` (a complete value), reading it in one strict
/// pass when it is well-formed.
pub fn fields_fast<'a, const N: usize>(
    obj: &'a [u8],
    keys: [&str; N],
) -> Option<[Option<&'a [u8]>; N]> {
    let mut index = ObjectIndex::default();
    let fast = match scan_object(obj, &mut index) {
        // Trailing bytes after the object: `fields_dup` ignores them; leave it to it.
        Some(e) if e == obj.len() => index.lookup(obj, keys),
        _ => None,
    };
    match fast {
        Some((out, _)) => Some(out),
        None => fields_dup(obj, keys).map(|(out, _)| out),
    }
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;
const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;

/// High bit set in exactly the bytes of `x` that are zero (no carry crosses a byte).
fn zero_bytes(x: u64) -> u64 {
    !(((x & LOW7).wrapping_add(LOW7)) | x) & HI
}

/// The bytes of the word at `v[j..j + 8]` that are `"` or `\`, as [`zero_bytes`] marks them.
fn quotes_or_backslashes(v: &[u8], j: usize) -> Option<u64> {
    const QUOTE: u64 = LO * b'"' as u64;
    const BACKSLASH: u64 = LO * b'\\' as u64;
    let w = u64::from_le_bytes(<[u8; 8]>::try_from(v.get(j..j + 8)?).ok()?);
    Some(zero_bytes(w ^ QUOTE) | zero_bytes(w ^ BACKSLASH))
}

/// Index of the first `"` or `\\` at or after `j`: word-at-a-time for the first 32 bytes
/// (most strings of a trace are short), then `memchr2`.
pub(super) fn quote_or_backslash(v: &[u8], mut j: usize) -> Option<usize> {
    for _ in 0..4 {
        let Some(m) = quotes_or_backslashes(v, j) else {
            break;
        };
        if m != 0 {
            return Some(j + (m.trailing_zeros() / 8) as usize);
        }
        j += 8;
    }
    memchr::memchr2(b'"', b'\\', v.get(j..)?).map(|k| j + k)
}

/// Index just past the string whose opening quote is at `v[i]` (a backslash skips the next
/// byte, as [`super::scan::string_end`]); `None` when `v` ends inside it. Word-at-a-time
/// (escapes handled inside the word); after four quiet words in a row, `memchr2`.
fn string_end(v: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    let mut quiet = 0;
    loop {
        if quiet >= 4 {
            let k = j + memchr::memchr2(b'"', b'\\', v.get(j..)?)?;
            if v[k] == b'"' {
                return Some(k + 1);
            }
            j = k + 2;
            quiet = 0;
            continue;
        }
        let Some(mut m) = quotes_or_backslashes(v, j) else {
            // The last bytes of the buffer, one at a time.
            while let Some(&c) = v.get(j) {
                match c {
                    b'"' => return Some(j + 1),
                    b'\\' => j += 2,
                    _ => j += 1,
                }
            }
            return None;
        };
        if m == 0 {
            j += 8;
            quiet += 1;
            continue;
        }
        quiet = 0;
        loop {
            let k = j + (m.trailing_zeros() / 8) as usize;
            if v[k] == b'"' {
                return Some(k + 1);
            }
            // A backslash: skip it and the byte it escapes.
            let next = k + 2;
            if next >= j + 8 {
                j = next;
                break;
            }
            m &= u64::MAX << ((next - j) * 8);
            if m == 0 {
                j += 8;
                break;
            }
        }
    }
}

/// The bytes a scalar of the strict scan is made of: `[0-9A-Za-z.+-]`.
const SCALAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || b == b'.' || b == b'+' || b == b'-';
        c += 1;
    }
    t
};

/// What the strict scan expects next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    /// A key or `}` (just after `{`).
    KeyOrClose,
    /// A key (after `,` in an object).
    Key,
    /// A value or `]` (just after `[`).
    ValueOrClose,
    /// A value (after `:` or after `,` in an array).
    Value,
    /// `,` or the closing bracket of the container.
    After,
}

/// Strict scan of the object starting at `v[0]` (`{`): the index just past its end, with its
/// top-level members in `index`; `None` when `v` does not start with `{`, ends inside the
/// object, or the object is not strictly well-formed (see the module doc).
pub fn scan_object(v: &[u8], index: &mut ObjectIndex) -> Option<usize> {
    index.top.clear();
    index.args.clear();
    index.args_at = None;
    if v.first() != Some(&b'{') {
        return None;
    }
    // Bit d of `arrays`: the container at depth d + 1 is an array.
    let mut arrays: u64 = 0;
    let mut depth: u32 = 1;
    let mut i = 1;
    let mut key = (0, 0);
    let mut value_at = 0;
    // Inside a top-level `args` object: its members (depth 2) are indexed too.
    let mut in_args = false;
    let mut args_key = (0, 0);
    let mut args_value_at = 0;
    let mut want = Want::KeyOrClose;
    loop {
        i = skip_ws(v, i);
        let b = *v.get(i)?;
        let mut value_end = false;
        match want {
            Want::KeyOrClose | Want::Key if b == b'"' => {
                let e = string_end(v, i)?;
                if depth == 1 {
                    key = (i + 1, e - 1);
                } else if depth == 2 && in_args {
                    args_key = (i + 1, e - 1);
                }
                // The `:` right away (one turn of the loop less per member).
                i = skip_ws(v, e);
                if *v.get(i)? != b':' {
                    return None;
                }
                i += 1;
                want = Want::Value;
            }
            Want::ValueOrClose | Want::Value if !(b == b']' && want == Want::ValueOrClose) => {
                if depth == 1 {
                    value_at = i;
                    if b == b'{' && v.get(key.0..key.1) == Some(b"args") {
                        in_args = true;
                        index.args.clear();
                        index.args_at = None;
                    }
                } else if depth == 2 && in_args {
                    args_value_at = i;
                }
                match b {
                    b'"' => {
                        i = string_end(v, i)?;
                        value_end = true;
                    }
                    b'{' | b'[' => {
                        if depth >= MAX_DEPTH {
                            return None;
                        }
                        if b == b'[' {
                            arrays |= 1 << depth;
                        } else {
                            arrays &= !(1 << depth);
                        }
                        depth += 1;
                        i += 1;
                        want = if b == b'[' {
                            Want::ValueOrClose
                        } else {
                            Want::KeyOrClose
                        };
                    }
                    b'-' | b'0'..=b'9' | b't' | b'f' | b'n' | b'N' | b'I' => {
                        i += 1;
                        while v.get(i).is_some_and(|&c| SCALAR[c as usize]) {
                            i += 1;
                        }
                        value_end = true;
                    }
                    _ => return None,
                }
            }
            Want::After if b == b',' => {
                i += 1;
                want = if arrays & (1 << (depth - 1)) != 0 {
                    Want::Value
                } else {
                    Want::Key
                };
            }
            Want::KeyOrClose | Want::ValueOrClose | Want::After => {
                let array = arrays & (1 << (depth - 1)) != 0;
                let close = if array { b']' } else { b'}' };
                if b != close || (want == Want::KeyOrClose && array) {
                    return None;
                }
                if want == Want::ValueOrClose && !array {
                    return None;
                }
                i += 1;
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
                value_end = true;
            }
            _ => return None,
        }
        if value_end {
            if depth == 1 {
                if in_args {
                    in_args = false;
                    index.args_at = Some((value_at, i));
                }
                index.top.push([key.0, key.1, value_at, i]);
            } else if depth == 2 && in_args {
                index.args.push([args_key.0, args_key.1, args_value_at, i]);
            }
            want = Want::After;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::scan::{value_end, End};
    use super::*;

    const KEYS: [&str; 5] = ["ph", "name", "args", "ts", "x"];

    /// The strict scan agrees with the lenient one wherever it answers, and answers on
    /// well-formed objects.
    fn agree(text: &[u8]) -> bool {
        let mut index = ObjectIndex::default();
        let fast = scan_object(text, &mut index);
        let slow = value_end(text, 0, false);
        if let Some(e) = fast {
            assert_eq!(slow, End::At(e), "{}", String::from_utf8_lossy(text));
            let obj = &text[..e];
            assert_eq!(
                Event::indexed(obj, &index).fields_dup(KEYS),
                fields_dup(obj, KEYS),
                "{}",
                String::from_utf8_lossy(text)
            );
            assert_eq!(fields_fast(obj, KEYS), fields_dup(obj, KEYS).map(|x| x.0));
            let ev = Event::indexed(obj, &index);
            if let Some(([Some(args)], _)) = ev.fields_dup(["args"]) {
                assert_eq!(ev.args_fields(args, KEYS), fields_fast(args, KEYS));
                assert_eq!(
                    Event::plain(obj).args_fields(args, KEYS),
                    fields_fast(args, KEYS)
                );
            }
        }
        fast.is_some()
    }

    #[test]
    fn strict_scan_matches_the_lenient_scan() {
        let good: [&[u8]; 9] = [
            br#"{}"#,
            br#"{ }  tail"#,
            br#"{"ph":"X","name":"a\"}b","ts":1.5e3,"args":{"x":[1,{"y":"]"}],"z":{}},"x":null}"#,
            br#"{ "ph" : "X" , "ts" : "12.5" , "ph" : "B" }, {"#,
            br#"{"name":"\\","args":[[],[[]],{}],"x":-1}"#,
            br#"{"a":true,"b":false,"c":NaN,"d":-Infinity}"#,
            br#"{"name":"long string long string long string long string \u00e9 long","ts":1}"#,
            b"{\"name\":\"tab\tin\xff string\",\"ts\":1}",
            br#"{"ph":"i","args":{"name":{"deep":[{"x":1}]}},"ts":0}"#,
        ];
        for t in good {
            assert!(agree(t), "{}", String::from_utf8_lossy(t));
        }
        // `args` indexed one level down: the last `args` wins, whatever its kind.
        let args: [&[u8]; 6] = [
            br#"{"args":{"ph":1,"ts":{"args":{"x":2}},"ph":3},"args":{"x":4,"name":"n"}}"#,
            br#"{"args":{"x":1},"args":5}"#,
            br#"{"args":5,"args":{"x":[1,2],"ts":"t"}}"#,
            br#"{"x":{"args":{"x":1}},"args":{}}"#,
            br#"{"args":[{"x":1}],"y":{"x":2}}"#,
            br#"{ "args" : { "x" : 1 , "x" : 2 } }"#,
        ];
        for t in args {
            assert!(agree(t), "{}", String::from_utf8_lossy(t));
        }
        let mut many = br#"{"args":{"#.to_vec();
        for k in 0..40 {
            many.extend(format!("\"k{k}\":{k},").bytes());
        }
        many.extend(br#""x":"X"}}"#);
        assert!(agree(&many));
        let not_strict: [&[u8]; 14] = [
            br#"{"a":1"b":2}"#,
            br#"{"a":1,}"#,
            br#"{"a":[1,]}"#,
            br#"{"a":[}],"b":1}"#,
            br#"{"a" 1}"#,
            br#"{"a":}"#,
            br#"{"a":1x"}"}"#,
            br#"{"a":[1}"#,
            br#"{"a":{"b":1]}"#,
            br#"{"a":"unterminated"#,
            br#"{"a":1"#,
            br#"{,"a":1}"#,
            br#"{"a":1 2}"#,
            br#"{"a":'x'}"#,
        ];
        for t in not_strict {
            assert!(!agree(t), "{}", String::from_utf8_lossy(t));
        }
        // Deep nesting: the strict scan gives up, the lenient one still finds the end.
        let mut deep = br#"{"a":"#.to_vec();
        deep.extend(std::iter::repeat_n(b'[', 100));
        deep.extend(std::iter::repeat_n(b']', 100));
        deep.push(b'}');
        assert!(!agree(&deep));
        // More members than recorded: the end is found, the keys are scanned.
        let mut many = b"{".to_vec();
        for k in 0..40 {
            many.extend(format!("\"k{k}\":{k},").bytes());
        }
        many.extend(br#""ph":"X"}"#);
        assert!(agree(&many));
        let ev = Event::plain(&many);
        assert_eq!(ev.fields_dup(["ph"]).unwrap().0[0], Some(&b"\"X\""[..]));
    }

    /// The word-at-a-time string scan ends where the plain one does, on random strings rich
    /// in quotes, backslashes and the bytes next to them (`#` = `"` ^ 1, `]` = `\\` ^ 1).
    #[test]
    fn string_end_matches_the_plain_scan() {
        let alphabet = [
            b'a', b'a', b'a', b'a', b'a', b'"', b'\\', b'#', b']', 1, 0xff, 0x80,
        ];
        let mut rnd = super::super::test_rng();
        for _ in 0..50_000 {
            let max = if rnd(4) == 0 { 200 } else { 24 };
            let len = rnd(max);
            let sparse = rnd(3) == 0;
            let mut t = vec![b'"'];
            for _ in 0..len {
                let c = alphabet[rnd(alphabet.len())];
                t.push(if sparse && rnd(8) != 0 { b'a' } else { c });
            }
            let want = match super::super::scan::string_end(&t, 0) {
                End::At(e) => Some(e),
                _ => None,
            };
            assert_eq!(string_end(&t, 0), want, "{:?}", String::from_utf8_lossy(&t));
        }
    }

    /// Every prefix and every one-byte change of a few objects: never a panic, and the strict
    /// scan agrees with the lenient scan whenever it answers.
    #[test]
    fn mutations_never_disagree() {
        let bases: [&[u8]; 3] = [
            br#"{"ph":"X","name":"a\"b\\","ts":"1.5","args":{"x":[1,{"y":"]"}]},"x":null}"#,
            br#"{ "ph" : "X" , "ts" : 12 , "ph" : "B", "args" : [ ] }"#,
            br#"{"name":"0123456789abcdef0123456789abcdef0123456789abcdef\n","ts":1}"#,
        ];
        for base in bases {
            for cut in 0..=base.len() {
                agree(&base[..cut]);
            }
            for at in 0..base.len() {
                for b in [
                    b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b' ', b'x', b'1',
                ] {
                    let mut t = base.to_vec();
                    t[at] = b;
                    agree(&t);
                }
            }
        }
    }
}
