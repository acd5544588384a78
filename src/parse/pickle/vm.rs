//! The push-fed pickle VM (torch-snapshot.md §2, §5.1).
//!
//! Maintainer note (fragile parts):
//! * `feed` must never consume a partial instruction: it checks the operand
//!   length first and answers `NeedMore` with the bytes used so far. At EOF a
//!   partial instruction is a `Truncated` error, never `NeedMore`.
//! * Values are small `Copy` handles ([`Val`]); containers live in the schema
//!   builder (`schema.rs`), the memo stores handles, so sharing costs nothing.
//! * The *role* of a new container (trace entry, frame list, …) is decided
//!   when it is pushed, from the stack below it (see `child_role`): pickle puts
//!   the parent container, a `MARK`, and the pending items on the stack.
//! * Nothing is ever executed: refused opcodes stop decoding at once.
//!
//! To debug a file, compare with `python3 -m pickletools FILE`: offsets match.

use super::error::{PickleError, PickleErrorKind};
use super::memo::Memo;
use super::opcodes::{self as op, Class};
use super::schema::{Builder, Kind, Role};
use crate::model::snapshot::{FrameId, StackId, StrId};

mod operands;
mod roles;

pub(super) use self::operands::decode_long;
use self::operands::{operand_len, PREFIX1, QUICK_LEN, SLOW};

/// A value on the VM stack or in the memo: a small handle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Val {
    None,
    Bool(bool),
    Int(i64),
    /// Index into the VM's wide-integer table (`LONG1`/`LONG4` wider than 8 bytes).
    Big(u32),
    /// An integer wider than 16 bytes.
    TooWide,
    Float(f64),
    Str(StrId),
    Bytes,
    /// A typed container being built by the schema builder.
    Obj(Obj),
    /// A finished frame.
    Frame(FrameId),
    /// A finished frame list (interned stack).
    Stack(StackId),
    /// A generic container (index into the builder's generic arena).
    Generic(u32),
    /// A memo slot whose object was consumed (a trace entry, segment, …).
    Tomb,
    /// A value dropped because the generic arena is full.
    Dropped,
    /// An undefined memo slot.
    Missing,
}

/// Handle of a typed container in a builder slab.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Obj {
    pub role: Role,
    pub slot: u32,
    pub gen: u32,
}

/// Result of one `feed` call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// More bytes are needed (the unconsumed tail must be offered again with more bytes).
    NeedMore,
    /// `STOP` was executed; trailing bytes are ignored.
    Done,
}

/// The VM: stack, marks, memo, and the schema builder it feeds.
pub(super) struct Machine {
    stack: Vec<Val>,
    marks: Vec<usize>,
    memo: Memo,
    bigs: Vec<i128>,
    tmp: Vec<Val>,
    pub b: Builder,
    pub histogram: Vec<u64>,
    pub protocol: u8,
    pub result: Option<Val>,
    /// The decoder's own memory accounting (high-water marks).
    pub stats: DecodeStats,
    file: String,
    total: u64,
}

/// High-water marks of the decoder's working memory while one file was decoded (the
/// accounting behind "memory grows with what is kept"; tests assert on it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodeStats {
    /// Most values on the VM stack at once.
    pub max_stack: usize,
    /// Most open `MARK`s at once.
    pub max_marks: usize,
    /// Memo entries stored (distinct indices).
    pub memo_entries: usize,
    /// Memo slots held at the end: dense slots + sparse entries (≤ 2 × entries + 64).
    pub memo_slots: usize,
    /// Most typed containers under construction at once (all kinds together).
    pub max_open_containers: usize,
    /// Items (and containers) kept in generic trees (unknown keys, settings, tuples).
    pub generic_items: usize,
}

/// Most values on the VM stack at once. A snapshot's stack holds the open containers (depth
/// ≈ 6) plus one `SETITEMS`/`APPENDS` batch (≤ 2 × 1000 values); the real fixtures peak below
/// 1,300 (CPython's picklers batch by 1000). Beyond this bound decoding stops with
/// [`PickleErrorKind::Limit`].
pub const MAX_STACK: usize = 1 << 18;
/// Most open `MARK`s at once (real snapshots: one per open container, ≤ 8).
pub const MAX_MARKS: usize = 1 << 12;

impl Machine {
    pub fn new(file: &str, total: u64) -> Self {
        let mut b = Builder::new(file);
        b.total = total;
        Machine {
            stack: Vec::with_capacity(64),
            marks: Vec::with_capacity(16),
            memo: Memo::for_file(total),
            bigs: Vec::new(),
            tmp: Vec::new(),
            b,
            histogram: vec![0; 256],
            protocol: 0,
            result: None,
            stats: DecodeStats::default(),
            file: file.to_string(),
            total,
        }
    }

    fn err(&self, off: u64, kind: PickleErrorKind) -> PickleError {
        PickleError::new(&self.file, off, kind)
    }

    fn malformed(&self, off: u64, what: impl Into<String>) -> PickleError {
        self.err(off, PickleErrorKind::Malformed { what: what.into() })
    }

    /// Executes every complete instruction of `input` (which starts at absolute
    /// offset `base`). Returns the status and the number of bytes consumed.
    pub fn feed(
        &mut self,
        input: &[u8],
        base: u64,
        at_eof: bool,
    ) -> Result<(Status, usize), PickleError> {
        let mut pos = 0usize;
        loop {
            let Some(&code) = input.get(pos) else {
                if at_eof {
                    return Err(self.err(
                        base + pos as u64,
                        PickleErrorKind::Truncated { total: self.total },
                    ));
                }
                return Ok((Status::NeedMore, pos));
            };
            let off = base + pos as u64;
            // Fast path: a data opcode whose operand length is fixed or has a 1-byte prefix.
            let rest = &input[pos + 1..];
            let quick = match QUICK_LEN[code as usize] {
                SLOW => None,
                PREFIX1 => rest.first().map(|&n| 1 + n as usize),
                n => Some(n as usize),
            };
            let len = match quick.filter(|&n| n <= rest.len()) {
                Some(len) => len,
                None => match self.slow_len(code, rest, off, at_eof)? {
                    Some(len) => len,
                    None => return Ok((Status::NeedMore, pos)),
                },
            };
            let arg = &rest[..len];
            self.histogram[code as usize] += 1;
            pos += 1 + len;
            if code == op::STOP {
                let v = self.pop(off)?;
                self.result = Some(v);
                return Ok((Status::Done, pos));
            }
            self.b.offset = off;
            self.step(code, arg, off)?;
            self.check_bounds(off)?;
        }
    }

    /// The opcode check and operand length off the fast path: `Ok(Some(n))` with `n` bytes
    /// available, `Ok(None)` if more bytes are needed (never at EOF: that is `Truncated`).
    #[cold]
    fn slow_len(
        &self,
        code: u8,
        rest: &[u8],
        off: u64,
        at_eof: bool,
    ) -> Result<Option<usize>, PickleError> {
        match op::class(code) {
            Class::Data => {}
            Class::Refused => {
                return Err(self.err(
                    off,
                    PickleErrorKind::Refused {
                        opcode: op::name(code),
                    },
                ))
            }
            Class::Unsupported => {
                return Err(self.err(off, PickleErrorKind::Unsupported { byte: code }))
            }
        }
        match operand_len(code, rest) {
            Ok(Some(n)) if n <= rest.len() => Ok(Some(n)),
            Ok(_) => {
                if at_eof {
                    return Err(self.err(off, PickleErrorKind::Truncated { total: self.total }));
                }
                Ok(None)
            }
            Err(what) => Err(self.malformed(off, what)),
        }
    }

    /// Keeps the stack and the marks within their bounds (open containers: `new_container`).
    fn check_bounds(&mut self, off: u64) -> Result<(), PickleError> {
        let st = &mut self.stats;
        if self.stack.len() > st.max_stack {
            st.max_stack = self.stack.len();
            if st.max_stack > MAX_STACK {
                return Err(self.limit(off, "values on the pickle stack", MAX_STACK));
            }
        }
        if self.marks.len() > st.max_marks {
            st.max_marks = self.marks.len();
            if st.max_marks > MAX_MARKS {
                return Err(self.limit(off, "nested MARKs", MAX_MARKS));
            }
        }
        Ok(())
    }

    fn limit(&self, off: u64, what: &'static str, limit: usize) -> PickleError {
        self.err(off, PickleErrorKind::Limit { what, limit })
    }

    /// The final accounting (memo figures filled in).
    pub fn final_stats(&self) -> DecodeStats {
        let (dense, sparse) = self.memo.footprint();
        DecodeStats {
            memo_entries: self.memo.len(),
            memo_slots: dense + sparse,
            generic_items: self.b.generic_items(),
            ..self.stats
        }
    }

    fn pop(&mut self, off: u64) -> Result<Val, PickleError> {
        if self.marks.last() == Some(&self.stack.len()) {
            return Err(self.malformed(off, "pop of a mark where a value was expected"));
        }
        self.stack
            .pop()
            .ok_or_else(|| self.malformed(off, "stack underflow"))
    }

    fn top(&self, off: u64) -> Result<Val, PickleError> {
        self.stack
            .last()
            .copied()
            .ok_or_else(|| self.malformed(off, "empty stack"))
    }

    /// Removes the last mark and returns its stack position (the items lie above it).
    fn pop_mark(&mut self, off: u64) -> Result<usize, PickleError> {
        let m = self
            .marks
            .pop()
            .ok_or_else(|| self.malformed(off, "no MARK on the stack"))?;
        if m > self.stack.len() {
            return Err(self.malformed(off, "MARK above the stack top"));
        }
        Ok(m)
    }

    /// Moves the items above the last mark into `self.tmp` and removes the mark.
    fn pop_to_mark(&mut self, off: u64) -> Result<(), PickleError> {
        let m = self.pop_mark(off)?;
        self.tmp.clear();
        self.tmp.extend(self.stack.drain(m..));
        Ok(())
    }

    fn push_int(&mut self, v: i128) {
        match i64::try_from(v) {
            Ok(i) => self.stack.push(Val::Int(i)),
            Err(_) => {
                self.bigs.push(v);
                self.stack.push(Val::Big((self.bigs.len() - 1) as u32));
            }
        }
    }

    fn step(&mut self, code: u8, arg: &[u8], off: u64) -> Result<(), PickleError> {
        match code {
            op::PROTO => {
                let v = arg[0];
                if v > 5 {
                    return Err(self.err(off, PickleErrorKind::Protocol { version: v }));
                }
                self.protocol = v;
            }
            op::FRAME => {}
            op::MARK => self.marks.push(self.stack.len()),
            op::NONE => self.stack.push(Val::None),
            op::NEWTRUE => self.stack.push(Val::Bool(true)),
            op::NEWFALSE => self.stack.push(Val::Bool(false)),
            op::BININT1 => self.stack.push(Val::Int(arg[0] as i64)),
            op::BININT2 => self.stack.push(Val::Int(le_u16(arg) as i64)),
            op::BININT => self.stack.push(Val::Int(le_u32(arg) as i32 as i64)),
            // The usual LONG1 (an address or a time, ≤ 8 bytes) without the 128-bit path.
            op::LONG1 if arg.len() <= 9 => self.stack.push(Val::Int(le_i64(&arg[1..]))),
            op::LONG1 | op::LONG4 => {
                let digits = if code == op::LONG1 {
                    &arg[1..]
                } else {
                    &arg[4..]
                };
                match decode_long(digits) {
                    Some(v) => self.push_int(v),
                    None => self.stack.push(Val::TooWide),
                }
            }
            op::BINFLOAT => {
                let mut b = [0u8; 8];
                b.copy_from_slice(arg);
                self.stack.push(Val::Float(f64::from_be_bytes(b)));
            }
            op::SHORT_BINUNICODE => self.push_str(&arg[1..]),
            op::BINUNICODE => self.push_str(&arg[4..]),
            op::BINUNICODE8 => self.push_str(&arg[8..]),
            op::SHORT_BINBYTES | op::BINBYTES | op::BINBYTES8 => self.stack.push(Val::Bytes),
            op::EMPTY_DICT => self.new_container(Kind::Dict, off)?,
            op::EMPTY_LIST => self.new_container(Kind::List, off)?,
            op::EMPTY_TUPLE => {
                let v = self.b.new_generic(Kind::Tuple, &[]);
                self.stack.push(v);
            }
            op::EMPTY_SET => {
                let v = self.b.new_generic(Kind::Set, &[]);
                self.stack.push(v);
            }
            op::DICT | op::LIST => {
                self.pop_to_mark(off)?;
                let kind = if code == op::DICT {
                    Kind::Dict
                } else {
                    Kind::List
                };
                if kind == Kind::Dict && self.tmp.len() % 2 == 1 {
                    return Err(self.malformed(off, "odd number of items for DICT"));
                }
                self.new_container(kind, off)?;
                let target = self.top(off)?;
                let items = std::mem::take(&mut self.tmp);
                let r = self.add_items(kind, target, &items, off);
                self.tmp = items;
                r?;
            }
            op::TUPLE | op::FROZENSET => {
                self.pop_to_mark(off)?;
                let kind = if code == op::TUPLE {
                    Kind::Tuple
                } else {
                    Kind::Set
                };
                let v = self.b.new_generic(kind, &self.tmp);
                self.stack.push(v);
            }
            op::TUPLE1 | op::TUPLE2 | op::TUPLE3 => {
                let n = (code - op::TUPLE1 + 1) as usize;
                let floor = self.marks.last().copied().unwrap_or(0);
                if self.stack.len() < floor + n {
                    return Err(self.malformed(off, "stack underflow building a tuple"));
                }
                let start = self.stack.len() - n;
                let v = self.b.new_generic(Kind::Tuple, &self.stack[start..]);
                self.stack.truncate(start);
                self.stack.push(v);
            }
            op::SETITEMS | op::APPENDS | op::ADDITEMS => {
                // The items stay where they are (no copy): the builder reads them off the
                // stack above the mark, then the stack drops to the mark.
                let m = self.pop_mark(off)?;
                let Some(target) = m.checked_sub(1).map(|t| self.stack[t]) else {
                    return Err(self.malformed(off, "empty stack"));
                };
                let kind = match code {
                    op::SETITEMS => Kind::Dict,
                    op::APPENDS => Kind::List,
                    _ => Kind::Set,
                };
                if kind == Kind::Dict && (self.stack.len() - m) % 2 == 1 {
                    return Err(self.malformed(off, "odd number of items for SETITEMS"));
                }
                let r =
                    self.b
                        .add_items(kind, target, &self.stack[m..], &mut self.memo, &self.bigs);
                self.stack.truncate(m);
                self.b.end_op(self.stack.len());
                r.map_err(|what| self.malformed(off, what))?;
            }
            op::SETITEM => {
                let v = self.pop(off)?;
                let k = self.pop(off)?;
                let target = self.top(off)?;
                self.add_items(Kind::Dict, target, &[k, v], off)?;
            }
            op::APPEND => {
                let v = self.pop(off)?;
                let target = self.top(off)?;
                self.add_items(Kind::List, target, &[v], off)?;
            }
            op::POP => {
                if self.marks.last() == Some(&self.stack.len()) {
                    self.marks.pop();
                } else {
                    self.pop(off)?;
                }
            }
            op::POP_MARK => {
                self.pop_to_mark(off)?;
            }
            op::DUP => {
                let v = self.top(off)?;
                self.b.note_push(v, self.stack.len());
                self.stack.push(v);
            }
            op::MEMOIZE => {
                // CPython: `memo[len(memo)] = top`.
                let v = self.top(off)?;
                let idx = u32::try_from(self.memo.len())
                    .map_err(|_| self.malformed(off, "more than 2^32 memo entries"))?;
                self.memo.put(idx, v);
                self.b.memoized(v, idx);
            }
            op::BINPUT | op::LONG_BINPUT => {
                let idx = if code == op::BINPUT {
                    arg[0] as u32
                } else {
                    le_u32(arg)
                };
                let v = self.top(off)?;
                self.memo.put(idx, v);
                self.b.memoized(v, idx);
            }
            op::BINGET | op::LONG_BINGET => {
                let idx = if code == op::BINGET {
                    arg[0] as u32
                } else {
                    le_u32(arg)
                };
                match self.memo.get(idx) {
                    Val::Missing => {
                        return Err(self.malformed(off, format!("memo index {idx} is not defined")))
                    }
                    Val::Tomb => {
                        return Err(self.malformed(
                            off,
                            format!("unexpected reference to a trace entry (memo {idx}) that was already stored"),
                        ))
                    }
                    v => {
                        self.b.note_push(v, self.stack.len());
                        self.stack.push(v);
                    }
                }
            }
            _ => return Err(self.err(off, PickleErrorKind::Unsupported { byte: code })),
        }
        Ok(())
    }

    fn push_str(&mut self, bytes: &[u8]) {
        let id = match std::str::from_utf8(bytes) {
            Ok(s) => self.b.pools.strings.intern(s),
            Err(_) => {
                self.b.invalid_utf8 += 1;
                let s = String::from_utf8_lossy(bytes);
                self.b.pools.strings.intern(&s)
            }
        };
        self.stack.push(Val::Str(id));
    }

    fn add_items(
        &mut self,
        kind: Kind,
        target: Val,
        items: &[Val],
        off: u64,
    ) -> Result<(), PickleError> {
        let r = self
            .b
            .add_items(kind, target, items, &mut self.memo, &self.bigs);
        self.b.end_op(self.stack.len());
        r.map_err(|what| self.malformed(off, what))
    }
}

/// The first 2 bytes of an operand as a little-endian `u16` (one bounds check, one load; the
/// fast path's table guarantees the length).
#[inline(always)]
fn le_u16(arg: &[u8]) -> u16 {
    arg.first_chunk::<2>().map_or(0, |b| u16::from_le_bytes(*b))
}

/// The first 4 bytes of an operand as a little-endian `u32` (see [`le_u16`]).
#[inline(always)]
fn le_u32(arg: &[u8]) -> u32 {
    arg.first_chunk::<4>().map_or(0, |b| u32::from_le_bytes(*b))
}

/// A little-endian two's-complement integer of 0–8 bytes (`LONG1`'s digits), sign-extended:
/// what [`decode_long`] gives for these lengths, in 64-bit arithmetic.
#[inline(always)]
fn le_i64(digits: &[u8]) -> i64 {
    let n = digits.len().min(8);
    if n == 0 {
        return 0;
    }
    let mut v = 0u64;
    for (i, &b) in digits[..n].iter().enumerate() {
        v |= (b as u64) << (8 * i);
    }
    let shift = 64 - 8 * n as u32;
    ((v << shift) as i64) >> shift
}

#[cfg(test)]
mod tests {
    use super::{decode_long, le_i64};

    #[test]
    fn le_i64_is_decode_long_up_to_8_bytes() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for n in 0..=8 {
            for _ in 0..200 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let mut d = x.to_le_bytes()[..n].to_vec();
                assert_eq!(Some(le_i64(&d) as i128), decode_long(&d), "{d:?}");
                if n > 0 {
                    d[n - 1] |= 0x80;
                    assert_eq!(Some(le_i64(&d) as i128), decode_long(&d), "{d:?}");
                    d[n - 1] = 0;
                    assert_eq!(Some(le_i64(&d) as i128), decode_long(&d), "{d:?}");
                }
            }
        }
    }
}
