//! The JSON front end of the snapshot decoder (torch-snapshot.md §2.6): the snapshot dict (or
//! the list of segments) written with `json.dump` instead of `pickle.dump`, decoded into the
//! same model by the same schema builder as the pickle (`schema`, `fields`), so every number
//! equals the pickle form's.
//!
//! A push-fed tokenizer like the pickle VM (`feed(input) -> (Status, used)` over
//! [`ChunkReader`](crate::ingest::ChunkReader)): it never consumes a partial token, keeps
//! only the open containers (bounded depth), and hands each finished value to its parent the
//! way pickle's `SETITEM` / `APPEND` do; a finished trace entry becomes a row and is dropped.
//! Strings are decoded by the trace reader's lenient decoder
//! ([`decode_str`](crate::parse::trace_json::scan::decode_str)); numbers without a fraction or
//! exponent are exact integers (up to 128 bits, like pickle's `LONG1`; wider ones are flagged
//! as pickle's are), the others `f64` (correctly rounded, as CPython reads them); Python's
//! `NaN`, `Infinity` and `-Infinity` are read as floats.

use super::error::{PickleError, PickleErrorKind};
use super::memo::Memo;
use super::schema::{Builder, Kind, Role, MAX_OPEN};
use super::vm::{DecodeStats, Status, Val};
use crate::parse::trace_json::scan::{decode_str, string_end, End};

/// Most JSON containers open at once (a snapshot nests 6 deep; the pickle VM's mark bound).
pub const MAX_DEPTH: usize = super::vm::MAX_MARKS;

/// What the next token may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// A value (the root, a dict value, a list element after `,`).
    Value,
    /// After `[`: a value or `]`.
    ValueOrEnd,
    /// After `{`: a key or `}`.
    KeyOrEnd,
    /// After `,` in a dict: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After a value inside a container: `,` or the closing bracket.
    CommaOrEnd,
}

/// One open container: its handle, its kind and, for a dict, the key whose value comes next.
struct Open {
    val: Val,
    kind: Kind,
    key: Val,
}

/// The JSON machine: the open containers, the schema builder it feeds.
pub(super) struct JsonMachine {
    open: Vec<Open>,
    expect: Expect,
    memo: Memo,
    pub bigs: Vec<i128>,
    pub b: Builder,
    pub result: Option<Val>,
    pub stats: DecodeStats,
    /// Strings with a raw control byte or an invalid escape (kept as read).
    pub invalid_json_strings: u64,
    file: String,
    total: u64,
}

/// A scalar token.
enum Scalar<'a> {
    Str(&'a [u8]),
    Num(&'a [u8]),
    Lit(Val),
}

impl JsonMachine {
    pub fn new(file: &str, total: u64) -> Self {
        let mut b = Builder::new(file);
        b.total = total;
        JsonMachine {
            open: Vec::with_capacity(16),
            expect: Expect::Value,
            memo: Memo::default(),
            bigs: Vec::new(),
            b,
            result: None,
            stats: DecodeStats::default(),
            invalid_json_strings: 0,
            file: file.to_string(),
            total,
        }
    }

    fn err(&self, off: u64, kind: PickleErrorKind) -> PickleError {
        PickleError::new(&self.file, off, kind)
    }

    fn invalid(&self, off: u64, what: impl Into<String>) -> PickleError {
        self.err(off, PickleErrorKind::JsonInvalid { what: what.into() })
    }

    /// Handles every complete token of `input` (which starts at absolute offset `base`).
    /// Returns the status and the number of bytes consumed; the unconsumed tail (a token cut
    /// by the end of the buffer) must be offered again with more bytes.
    pub fn feed(
        &mut self,
        input: &[u8],
        base: u64,
        at_eof: bool,
    ) -> Result<(Status, usize), PickleError> {
        let mut pos = 0usize;
        loop {
            while pos < input.len() && matches!(input[pos], b' ' | b'\t' | b'\n' | b'\r') {
                pos += 1;
            }
            let off = base + pos as u64;
            let Some(&c) = input.get(pos) else {
                if at_eof {
                    return Err(self.err(off, PickleErrorKind::JsonTruncated { total: self.total }));
                }
                return Ok((Status::NeedMore, pos));
            };
            self.b.offset = off;
            match self.expect {
                Expect::Colon => {
                    if c != b':' {
                        return Err(self.invalid(off, "expected `:` after a key"));
                    }
                    pos += 1;
                    self.expect = Expect::Value;
                }
                Expect::CommaOrEnd => match c {
                    b',' => {
                        pos += 1;
                        self.expect = match self.open.last().map(|o| o.kind) {
                            Some(Kind::Dict) => Expect::Key,
                            _ => Expect::Value,
                        };
                    }
                    b'}' | b']' => {
                        pos += 1;
                        if self.close(c, off)? {
                            return Ok((Status::Done, pos));
                        }
                    }
                    _ => return Err(self.invalid(off, "expected `,` or the end of the container")),
                },
                Expect::KeyOrEnd | Expect::Key => match c {
                    b'}' if self.expect == Expect::KeyOrEnd => {
                        pos += 1;
                        if self.close(c, off)? {
                            return Ok((Status::Done, pos));
                        }
                    }
                    b'"' => {
                        let Some(end) = self.token_end(input, pos, off, at_eof, true)? else {
                            return Ok((Status::NeedMore, pos));
                        };
                        let key = self.string(&input[pos..end]);
                        if let Some(top) = self.open.last_mut() {
                            top.key = key;
                        }
                        pos = end;
                        self.expect = Expect::Colon;
                    }
                    _ => {
                        return Err(self.invalid(off, "expected a key (a string in double quotes)"))
                    }
                },
                Expect::Value | Expect::ValueOrEnd => match c {
                    b']' if self.expect == Expect::ValueOrEnd => {
                        pos += 1;
                        if self.close(c, off)? {
                            return Ok((Status::Done, pos));
                        }
                    }
                    b'{' | b'[' => {
                        pos += 1;
                        let kind = if c == b'{' { Kind::Dict } else { Kind::List };
                        self.push_container(kind, off)?;
                    }
                    _ => {
                        let Some(end) = self.token_end(input, pos, off, at_eof, c == b'"')? else {
                            return Ok((Status::NeedMore, pos));
                        };
                        let tok = &input[pos..end];
                        let scalar = match c {
                            b'"' => Scalar::Str(tok),
                            _ => match tok {
                                b"true" => Scalar::Lit(Val::Bool(true)),
                                b"false" => Scalar::Lit(Val::Bool(false)),
                                b"null" => Scalar::Lit(Val::None),
                                b"NaN" => Scalar::Lit(Val::Float(f64::NAN)),
                                b"Infinity" => Scalar::Lit(Val::Float(f64::INFINITY)),
                                b"-Infinity" => Scalar::Lit(Val::Float(f64::NEG_INFINITY)),
                                _ => Scalar::Num(tok),
                            },
                        };
                        let v = match scalar {
                            Scalar::Str(raw) => self.string(raw),
                            Scalar::Lit(v) => v,
                            Scalar::Num(t) => self.number(t, off)?,
                        };
                        pos = end;
                        if self.deliver(v, off)? {
                            return Ok((Status::Done, pos));
                        }
                    }
                },
            }
        }
    }

    /// End (exclusive) of the string or bare token at `input[pos]`; `None` when the buffer
    /// ends inside it (never at EOF: that is truncation, or the end of a bare token).
    fn token_end(
        &self,
        input: &[u8],
        pos: usize,
        off: u64,
        at_eof: bool,
        string: bool,
    ) -> Result<Option<usize>, PickleError> {
        if string {
            return match string_end(input, pos) {
                End::At(e) => Ok(Some(e)),
                _ if at_eof => {
                    Err(self.err(off, PickleErrorKind::JsonTruncated { total: self.total }))
                }
                _ => Ok(None),
            };
        }
        let n = input[pos..].iter().position(
            |&b| !matches!(b, b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' | b'-' | b'+' | b'.'),
        );
        match n {
            Some(0) => Err(self.invalid(off, "expected a value")),
            Some(n) => Ok(Some(pos + n)),
            None if at_eof => Ok(Some(input.len())),
            None => Ok(None),
        }
    }

    /// Interns the text of the JSON string `raw` (with its quotes).
    fn string(&mut self, raw: &[u8]) -> Val {
        let (text, flaws) = decode_str(raw).unwrap_or_default();
        if flaws.invalid_utf8 {
            self.b.invalid_utf8 += 1;
        }
        if flaws.invalid_json {
            self.invalid_json_strings += 1;
        }
        Val::Str(self.b.pools.strings.intern(&text))
    }

    /// A number token: an exact integer when it has no fraction or exponent, else an `f64`.
    fn number(&mut self, t: &[u8], off: u64) -> Result<Val, PickleError> {
        let text = std::str::from_utf8(t).map_err(|_| self.invalid(off, "expected a number"))?;
        let digits = text.strip_prefix('-').unwrap_or(text);
        let plain = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        let leading_zero = digits.len() > 1 && digits.starts_with('0');
        if plain && !leading_zero {
            return Ok(match text.parse::<i128>() {
                Ok(v) => match i64::try_from(v) {
                    Ok(i) => Val::Int(i),
                    Err(_) => {
                        self.bigs.push(v);
                        Val::Big((self.bigs.len() - 1) as u32)
                    }
                },
                Err(_) => Val::TooWide,
            });
        }
        let json_number = digits.starts_with(|c: char| c.is_ascii_digit())
            && !leading_zero_before_fraction(digits)
            && !text.ends_with(['.', 'e', 'E', '+', '-']);
        match text.parse::<f64>() {
            Ok(f) if json_number && !text.contains(['i', 'I', 'n', 'N']) => Ok(Val::Float(f)),
            _ => Err(self.invalid(off, format!("`{}` is not a JSON value", short(text)))),
        }
    }

    /// Opens a container of `kind` under the current one, with the role the schema gives it.
    fn push_container(&mut self, kind: Kind, off: u64) -> Result<(), PickleError> {
        let role = match self.open.last() {
            None => Role::root(kind),
            Some(top) if top.kind == Kind::Dict => self.b.value_role(top.val, top.key),
            Some(top) => self.b.element_role(top.val, 0),
        };
        let role = if role.accepts(kind) {
            role
        } else {
            Role::Generic
        };
        let v = self
            .b
            .new_container(role, kind)
            .map_err(|w| self.invalid(off, w))?;
        self.b.note_push(v, self.open.len());
        self.open.push(Open {
            val: v,
            kind,
            key: Val::None,
        });
        self.expect = if kind == Kind::Dict {
            Expect::KeyOrEnd
        } else {
            Expect::ValueOrEnd
        };
        let st = &mut self.stats;
        st.max_stack = st.max_stack.max(self.open.len());
        if self.open.len() > MAX_DEPTH {
            return Err(self.limit(off, "nested JSON containers", MAX_DEPTH));
        }
        let n = self.b.open_containers();
        if n > st.max_open_containers {
            st.max_open_containers = n;
            if n > MAX_OPEN {
                return Err(self.limit(off, "snapshot containers under construction", MAX_OPEN));
            }
        }
        Ok(())
    }

    fn limit(&self, off: u64, what: &'static str, limit: usize) -> PickleError {
        self.err(off, PickleErrorKind::Limit { what, limit })
    }

    /// Closes the current container with bracket `c`; true when it was the root.
    fn close(&mut self, c: u8, off: u64) -> Result<bool, PickleError> {
        let want = if c == b'}' { Kind::Dict } else { Kind::List };
        match self.open.pop() {
            Some(o) if o.kind == want => self.deliver(o.val, off),
            Some(o) => {
                let end = if o.kind == Kind::Dict { '}' } else { ']' };
                Err(self.invalid(
                    off,
                    format!("`{}` where `{end}` closes the open container", c as char),
                ))
            }
            None => Err(self.invalid(off, format!("`{}` closes nothing open", c as char))),
        }
    }

    /// Hands the finished value `v` to the open container (a dict's current key, or the end of
    /// a list), as pickle's `SETITEM` / `APPEND` do; true when `v` was the root.
    fn deliver(&mut self, v: Val, off: u64) -> Result<bool, PickleError> {
        let Some(top) = self.open.last() else {
            self.result = Some(v);
            return Ok(true);
        };
        let (target, kind, key) = (top.val, top.kind, top.key);
        let r = match kind {
            Kind::Dict => {
                self.b
                    .add_items(Kind::Dict, target, &[key, v], &mut self.memo, &self.bigs)
            }
            _ => self
                .b
                .add_items(Kind::List, target, &[v], &mut self.memo, &self.bigs),
        };
        self.b.end_op(self.open.len());
        r.map_err(|what| self.invalid(off, what))?;
        self.expect = Expect::CommaOrEnd;
        Ok(false)
    }
}

/// `0` followed by another digit (`01.5`): not a JSON number.
fn leading_zero_before_fraction(digits: &str) -> bool {
    let b = digits.as_bytes();
    b.len() > 1 && b[0] == b'0' && b[1].is_ascii_digit()
}

/// The first 40 characters of `t`.
fn short(t: &str) -> String {
    t.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::super::read_snapshot_bytes;
    use crate::model::snapshot::Encoding;

    #[test]
    fn a_small_dict_decodes_like_its_pickle() {
        let json = br#" {"segments": [{"device": 0, "address": 4096, "total_size": 2097152,
            "allocated_size": 512, "active_size": 512, "requested_size": 500, "stream": 0,
            "segment_type": "large", "segment_pool_id": [0, 0], "is_expandable": false,
            "frames": [], "blocks": [{"address": 4096, "size": 512, "requested_size": 500,
            "state": "active_allocated", "frames": [{"filename": "a.py", "line": 3, "name": "f"}]},
            {"address": 4608, "size": 2096640, "requested_size": 0, "state": "inactive",
            "frames": []}]}],
          "device_traces": [[{"action": "segment_alloc", "addr": 4096, "size": 2097152,
            "stream": 0, "time_us": 10, "frames": []},
            {"action": "alloc", "addr": 4096, "size": 512, "stream": 0, "time_us": 11,
            "frames": [{"filename": "a.py", "line": 3, "name": "f"}]}]],
          "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": null, "max_split_size": -1,
            "garbage_collection_threshold": 0.0, "expandable_segments": false}}"#;
        let d = read_snapshot_bytes("s.json", json).unwrap();
        let s = &d.snapshot;
        assert_eq!(s.features.encoding, Encoding::Json);
        assert_eq!(s.features.protocol, 0);
        assert_eq!(s.segments.len(), 1);
        assert_eq!(s.blocks.len(), 2);
        assert_eq!(s.devices.len(), 1);
        assert_eq!(s.devices[0].entries.len(), 2);
        assert!(s.features.has_time_us && s.features.has_settings);
        assert_eq!(
            s.top_keys,
            ["segments", "device_traces", "allocator_settings"]
        );
        assert!(d.problems.kept().is_empty(), "{:?}", d.problems.kept());
    }

    #[test]
    fn damaged_json_is_a_located_error() {
        for (text, at, what) in [
            (&br#"{"segments": [}"#[..], 14, "expected a value"),
            (
                br#"{"segments": []]"#,
                15,
                "`]` where `}` closes the open container",
            ),
            (br#"{"segments" []}"#, 12, "expected `:` after a key"),
            (br#"{"segments": [01]}"#, 14, "not a JSON value"),
            (br#"{"segments": [1,]"#, 16, "expected a value"),
        ] {
            let e = read_snapshot_bytes("d.json", text).unwrap_err();
            assert_eq!(e.offset(), at, "{e}");
            assert!(e.to_string().contains(what), "{e}");
        }
        let e = read_snapshot_bytes("t.json", br#"{"segments": [{"device": 0"#).unwrap_err();
        assert!(
            e.to_string().contains("ends before the JSON is complete"),
            "{e}"
        );
        let e = read_snapshot_bytes("n.json", br#"{"a": 1}"#).unwrap_err();
        assert!(
            e.to_string()
                .contains("does not look like a PyTorch memory snapshot"),
            "{e}"
        );
    }
}
