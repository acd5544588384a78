//! Pickle opcode bytes, names and classes (torch-snapshot.md §2.2).
//!
//! Three classes: data opcodes the VM executes, **refused** opcodes that would
//! construct Python objects or run code (a snapshot never needs them), and
//! everything else (text-mode protocol 0/1 opcodes, unassigned bytes), which is
//! "unsupported".

#![allow(missing_docs)]

pub const MARK: u8 = b'(';
pub const STOP: u8 = b'.';
pub const POP: u8 = b'0';
pub const POP_MARK: u8 = b'1';
pub const DUP: u8 = b'2';
pub const BININT: u8 = b'J';
pub const BININT1: u8 = b'K';
pub const BININT2: u8 = b'M';
pub const NONE: u8 = b'N';
pub const BINUNICODE: u8 = b'X';
pub const APPEND: u8 = b'a';
pub const DICT: u8 = b'd';
pub const EMPTY_DICT: u8 = b'}';
pub const APPENDS: u8 = b'e';
pub const BINGET: u8 = b'h';
pub const LONG_BINGET: u8 = b'j';
pub const LIST: u8 = b'l';
pub const EMPTY_LIST: u8 = b']';
pub const BINPUT: u8 = b'q';
pub const LONG_BINPUT: u8 = b'r';
pub const SETITEM: u8 = b's';
pub const TUPLE: u8 = b't';
pub const EMPTY_TUPLE: u8 = b')';
pub const SETITEMS: u8 = b'u';
pub const BINFLOAT: u8 = b'G';
pub const PROTO: u8 = 0x80;
pub const TUPLE1: u8 = 0x85;
pub const TUPLE2: u8 = 0x86;
pub const TUPLE3: u8 = 0x87;
pub const NEWTRUE: u8 = 0x88;
pub const NEWFALSE: u8 = 0x89;
pub const LONG1: u8 = 0x8a;
pub const LONG4: u8 = 0x8b;
pub const SHORT_BINUNICODE: u8 = 0x8c;
pub const BINUNICODE8: u8 = 0x8d;
pub const BINBYTES8: u8 = 0x8e;
pub const EMPTY_SET: u8 = 0x8f;
pub const ADDITEMS: u8 = 0x90;
pub const FROZENSET: u8 = 0x91;
pub const MEMOIZE: u8 = 0x94;
pub const FRAME: u8 = 0x95;
pub const SHORT_BINBYTES: u8 = b'C';
pub const BINBYTES: u8 = b'B';

/// What the decoder does with an opcode byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Executed (plain data).
    Data,
    /// Refused: constructs objects / runs code / out-of-band buffers.
    Refused,
    /// Not supported (text-mode or unassigned).
    Unsupported,
}

/// The class of `op`.
pub fn class(op: u8) -> Class {
    match op {
        MARK | STOP | POP | POP_MARK | DUP | BININT | BININT1 | BININT2 | NONE | BINUNICODE
        | APPEND | DICT | EMPTY_DICT | APPENDS | BINGET | LONG_BINGET | LIST | EMPTY_LIST
        | BINPUT | LONG_BINPUT | SETITEM | TUPLE | EMPTY_TUPLE | SETITEMS | BINFLOAT | PROTO
        | TUPLE1 | TUPLE2 | TUPLE3 | NEWTRUE | NEWFALSE | LONG1 | LONG4 | SHORT_BINUNICODE
        | BINUNICODE8 | BINBYTES8 | EMPTY_SET | ADDITEMS | FROZENSET | MEMOIZE | FRAME
        | SHORT_BINBYTES | BINBYTES => Class::Data,
        b'c' | 0x93 | b'R' | b'b' | b'i' | b'o' | 0x81 | 0x92 | 0x82 | 0x83 | 0x84 | b'P'
        | b'Q' | 0x96 | 0x97 | 0x98 => Class::Refused,
        _ => Class::Unsupported,
    }
}

/// The standard name of `op` (as `pickletools` prints it), or `"UNKNOWN"`.
pub fn name(op: u8) -> &'static str {
    match op {
        MARK => "MARK",
        STOP => "STOP",
        POP => "POP",
        POP_MARK => "POP_MARK",
        DUP => "DUP",
        BININT => "BININT",
        BININT1 => "BININT1",
        BININT2 => "BININT2",
        NONE => "NONE",
        BINUNICODE => "BINUNICODE",
        APPEND => "APPEND",
        DICT => "DICT",
        EMPTY_DICT => "EMPTY_DICT",
        APPENDS => "APPENDS",
        BINGET => "BINGET",
        LONG_BINGET => "LONG_BINGET",
        LIST => "LIST",
        EMPTY_LIST => "EMPTY_LIST",
        BINPUT => "BINPUT",
        LONG_BINPUT => "LONG_BINPUT",
        SETITEM => "SETITEM",
        TUPLE => "TUPLE",
        EMPTY_TUPLE => "EMPTY_TUPLE",
        SETITEMS => "SETITEMS",
        BINFLOAT => "BINFLOAT",
        PROTO => "PROTO",
        TUPLE1 => "TUPLE1",
        TUPLE2 => "TUPLE2",
        TUPLE3 => "TUPLE3",
        NEWTRUE => "NEWTRUE",
        NEWFALSE => "NEWFALSE",
        LONG1 => "LONG1",
        LONG4 => "LONG4",
        SHORT_BINUNICODE => "SHORT_BINUNICODE",
        BINUNICODE8 => "BINUNICODE8",
        BINBYTES8 => "BINBYTES8",
        EMPTY_SET => "EMPTY_SET",
        ADDITEMS => "ADDITEMS",
        FROZENSET => "FROZENSET",
        MEMOIZE => "MEMOIZE",
        FRAME => "FRAME",
        SHORT_BINBYTES => "SHORT_BINBYTES",
        BINBYTES => "BINBYTES",
        b'c' => "GLOBAL",
        0x93 => "STACK_GLOBAL",
        b'R' => "REDUCE",
        b'b' => "BUILD",
        b'i' => "INST",
        b'o' => "OBJ",
        0x81 => "NEWOBJ",
        0x92 => "NEWOBJ_EX",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        0x96 => "BYTEARRAY8",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        b'I' => "INT",
        b'L' => "LONG",
        b'F' => "FLOAT",
        b'S' => "STRING",
        b'T' => "BINSTRING",
        b'U' => "SHORT_BINSTRING",
        b'V' => "UNICODE",
        b'g' => "GET",
        b'p' => "PUT",
        _ => "UNKNOWN",
    }
}

/// Opcode names present in `histogram` (256 counts), sorted (EXPECTED.json `opcodes`).
pub fn names_present(histogram: &[u64]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = histogram
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(op, _)| name(op as u8))
        .collect();
    v.sort_unstable();
    v
}
