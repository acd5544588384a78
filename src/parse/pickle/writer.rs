//! A minimal pickle writer (protocol 2–5 data opcodes only) for the large-snapshot
//! generator and tests. It writes what CPython's pickler writes for plain
//! dicts/lists/str/int: containers memoized right after creation, `MARK …
//! SETITEMS`/`APPENDS` batches, `BINGET`/`LONG_BINGET` for shared objects
//! (torch-snapshot.md §2.3).
//!
//! The caller drives the structure; [`PickleWriter::memoize`] returns the memo
//! index to reuse with [`PickleWriter::get`].

use std::io::{self, Write};

use super::opcodes as op;

/// Streams pickle opcodes into `W`.
pub struct PickleWriter<W: Write> {
    out: W,
    memo: u32,
    protocol: u8,
}

impl<W: Write> PickleWriter<W> {
    /// Starts a pickle with `PROTO protocol` (2–5). Protocols ≥ 4 memoize with
    /// `MEMOIZE`, older ones with `BINPUT`/`LONG_BINPUT`.
    pub fn new(mut out: W, protocol: u8) -> io::Result<Self> {
        out.write_all(&[op::PROTO, protocol])?;
        Ok(PickleWriter {
            out,
            memo: 0,
            protocol,
        })
    }
    /// Writes raw bytes (tests use it to inject any opcode).
    pub fn raw(&mut self, b: &[u8]) -> io::Result<()> {
        self.out.write_all(b)
    }
    /// `EMPTY_DICT` + memoize; returns the memo index.
    pub fn dict(&mut self) -> io::Result<u32> {
        self.out.write_all(&[op::EMPTY_DICT])?;
        self.memoize()
    }
    /// `EMPTY_LIST` + memoize; returns the memo index.
    pub fn list(&mut self) -> io::Result<u32> {
        self.out.write_all(&[op::EMPTY_LIST])?;
        self.memoize()
    }
    /// Memoizes the top of the stack; returns its index.
    pub fn memoize(&mut self) -> io::Result<u32> {
        let idx = self.memo;
        self.memo += 1;
        if self.protocol >= 4 {
            self.out.write_all(&[op::MEMOIZE])?;
        } else if idx < 256 {
            self.out.write_all(&[op::BINPUT, idx as u8])?;
        } else {
            self.out.write_all(&[op::LONG_BINPUT])?;
            self.out.write_all(&idx.to_le_bytes())?;
        }
        Ok(idx)
    }
    /// Pushes memo entry `idx`.
    pub fn get(&mut self, idx: u32) -> io::Result<()> {
        if idx < 256 {
            self.out.write_all(&[op::BINGET, idx as u8])
        } else {
            self.out.write_all(&[op::LONG_BINGET])?;
            self.out.write_all(&idx.to_le_bytes())
        }
    }
    /// `MARK`.
    pub fn mark(&mut self) -> io::Result<()> {
        self.out.write_all(&[op::MARK])
    }
    /// `SETITEMS`.
    pub fn setitems(&mut self) -> io::Result<()> {
        self.out.write_all(&[op::SETITEMS])
    }
    /// `APPENDS`.
    pub fn appends(&mut self) -> io::Result<()> {
        self.out.write_all(&[op::APPENDS])
    }
    /// `APPEND`.
    pub fn append(&mut self) -> io::Result<()> {
        self.out.write_all(&[op::APPEND])
    }
    /// `SETITEM`.
    pub fn setitem(&mut self) -> io::Result<()> {
        self.out.write_all(&[op::SETITEM])
    }
    /// A string (not memoized; call [`Self::memoize`] to share it).
    pub fn str(&mut self, s: &str) -> io::Result<()> {
        let b = s.as_bytes();
        if b.len() < 256 && self.protocol >= 4 {
            self.out.write_all(&[op::SHORT_BINUNICODE, b.len() as u8])?;
        } else {
            self.out.write_all(&[op::BINUNICODE])?;
            self.out.write_all(&(b.len() as u32).to_le_bytes())?;
        }
        self.out.write_all(b)
    }
    /// An integer, with the opcode CPython picks (`BININT1/2`, `BININT`, `LONG1`).
    pub fn int(&mut self, v: i128) -> io::Result<()> {
        if (0..256).contains(&v) {
            self.out.write_all(&[op::BININT1, v as u8])
        } else if (0..65536).contains(&v) {
            self.out.write_all(&[op::BININT2])?;
            self.out.write_all(&(v as u16).to_le_bytes())
        } else if (i32::MIN as i128..=i32::MAX as i128).contains(&v) {
            self.out.write_all(&[op::BININT])?;
            self.out.write_all(&(v as i32).to_le_bytes())
        } else {
            let bytes = v.to_le_bytes();
            let mut n = 16;
            // Shortest two's-complement form.
            while n > 1 {
                let top = bytes[n - 1];
                let next_sign = bytes[n - 2] & 0x80;
                if (top == 0 && next_sign == 0) || (top == 0xff && next_sign != 0) {
                    n -= 1;
                } else {
                    break;
                }
            }
            self.out.write_all(&[op::LONG1, n as u8])?;
            self.out.write_all(&bytes[..n])
        }
    }
    /// A boolean.
    pub fn bool(&mut self, b: bool) -> io::Result<()> {
        self.out
            .write_all(&[if b { op::NEWTRUE } else { op::NEWFALSE }])
    }
    /// `None`.
    pub fn none(&mut self) -> io::Result<()> {
        self.out.write_all(&[op::NONE])
    }
    /// A float (`BINFLOAT`, big-endian).
    pub fn float(&mut self, f: f64) -> io::Result<()> {
        self.out.write_all(&[op::BINFLOAT])?;
        self.out.write_all(&f.to_be_bytes())
    }
    /// `TUPLE2` + memoize.
    pub fn tuple2(&mut self) -> io::Result<u32> {
        self.out.write_all(&[op::TUPLE2])?;
        self.memoize()
    }
    /// `STOP`; returns the inner writer.
    pub fn stop(mut self) -> io::Result<W> {
        self.out.write_all(&[op::STOP])?;
        Ok(self.out)
    }
}
