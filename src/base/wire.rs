//! A small binary codec for byte buffers the core hands from one worker to another through
//! the UI (export parts, the side-file bundle): little-endian fixed-width numbers,
//! `f64` as its bits (so a value crosses unchanged), length-prefixed bytes and text. Decoding
//! never panics: a short or malformed buffer is an error in words.

/// Appends values to a buffer.
#[derive(Debug, Default)]
pub struct Enc {
    /// The bytes written so far.
    pub buf: Vec<u8>,
}

impl Enc {
    /// An encoder starting with `magic` (a tag the decoder checks).
    pub fn new(magic: &[u8]) -> Enc {
        Enc {
            buf: magic.to_vec(),
        }
    }
    /// One byte.
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    /// A `u32`.
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// A `u64`.
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// An `i64`.
    pub fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// An `f64`, bit for bit.
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    /// A flag.
    pub fn bool(&mut self, v: bool) {
        self.u8(v as u8);
    }
    /// An optional `i64`.
    pub fn opt_i64(&mut self, v: Option<i64>) {
        self.bool(v.is_some());
        if let Some(v) = v {
            self.i64(v);
        }
    }
    /// An optional `f64`.
    pub fn opt_f64(&mut self, v: Option<f64>) {
        self.bool(v.is_some());
        if let Some(v) = v {
            self.f64(v);
        }
    }
    /// Bytes, length first.
    pub fn bytes(&mut self, v: &[u8]) {
        self.u64(v.len() as u64);
        self.buf.extend_from_slice(v);
    }
    /// UTF-8 text, length first.
    pub fn str(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }
}

/// Reads values back in the order an [`Enc`] wrote them.
#[derive(Debug)]
pub struct Dec<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// Why a buffer could not be decoded.
pub type DecResult<T> = Result<T, String>;

/// A decoding failure ([`DecResult`]'s message) as the I/O error a reader of the encoded
/// bytes returns (`InvalidData`).
pub fn invalid_data(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message)
}

impl<'a> Dec<'a> {
    /// A decoder over `buf`, which must start with `magic`.
    ///
    /// # Errors
    ///
    /// `buf` does not start with `magic`.
    pub fn new(buf: &'a [u8], magic: &[u8]) -> DecResult<Dec<'a>> {
        if !buf.starts_with(magic) {
            return Err(format!(
                "not a {} buffer",
                String::from_utf8_lossy(magic).trim()
            ));
        }
        Ok(Dec {
            buf,
            pos: magic.len(),
        })
    }
    /// True when every byte was read.
    pub fn at_end(&self) -> bool {
        self.pos == self.buf.len()
    }
    fn take(&mut self, n: usize) -> DecResult<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| format!("buffer cut at byte {} ({} more wanted)", self.pos, n))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn array<const N: usize>(&mut self) -> DecResult<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    /// One byte.
    pub fn u8(&mut self) -> DecResult<u8> {
        Ok(self.take(1)?[0])
    }
    /// A `u32`.
    pub fn u32(&mut self) -> DecResult<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    /// A `u64`.
    pub fn u64(&mut self) -> DecResult<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    /// An `i64`.
    pub fn i64(&mut self) -> DecResult<i64> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    /// An `f64`.
    pub fn f64(&mut self) -> DecResult<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
    /// A flag (any byte other than 0 or 1 is an error).
    pub fn bool(&mut self) -> DecResult<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(format!("flag byte {b} at byte {}", self.pos - 1)),
        }
    }
    /// An optional `i64`.
    pub fn opt_i64(&mut self) -> DecResult<Option<i64>> {
        Ok(if self.bool()? {
            Some(self.i64()?)
        } else {
            None
        })
    }
    /// An optional `f64`.
    pub fn opt_f64(&mut self) -> DecResult<Option<f64>> {
        Ok(if self.bool()? {
            Some(self.f64()?)
        } else {
            None
        })
    }
    /// A count of items that each take at least `min_bytes` bytes: refuses counts the rest of
    /// the buffer cannot hold (so a bad count never reserves memory).
    pub fn count(&mut self, min_bytes: usize) -> DecResult<usize> {
        let n = self.u64()?;
        let left = (self.buf.len() - self.pos) as u64;
        if n.saturating_mul(min_bytes.max(1) as u64) > left {
            return Err(format!(
                "count {n} at byte {} exceeds the buffer",
                self.pos - 8
            ));
        }
        Ok(n as usize)
    }
    /// Bytes written by [`Enc::bytes`].
    pub fn bytes(&mut self) -> DecResult<&'a [u8]> {
        let n = self.u64()?;
        let n = usize::try_from(n).map_err(|_| format!("length {n} too large"))?;
        self.take(n)
    }
    /// Text written by [`Enc::str`].
    pub fn str(&mut self) -> DecResult<&'a str> {
        let at = self.pos;
        std::str::from_utf8(self.bytes()?).map_err(|e| format!("text at byte {at}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_and_cut_buffers_are_errors() {
        let mut e = Enc::new(b"T1");
        e.u8(7);
        e.u32(70_000);
        e.i64(-5);
        e.f64(-0.0);
        e.opt_f64(None);
        e.opt_i64(Some(i64::MIN));
        e.str("ränk");
        e.bytes(&[1, 2, 3]);
        let mut d = Dec::new(&e.buf, b"T1").unwrap();
        assert_eq!(d.u8().unwrap(), 7);
        assert_eq!(d.u32().unwrap(), 70_000);
        assert_eq!(d.i64().unwrap(), -5);
        assert_eq!(d.f64().unwrap().to_bits(), (-0.0f64).to_bits());
        assert_eq!(d.opt_f64().unwrap(), None);
        assert_eq!(d.opt_i64().unwrap(), Some(i64::MIN));
        assert_eq!(d.str().unwrap(), "ränk");
        assert_eq!(d.bytes().unwrap(), &[1, 2, 3]);
        assert!(d.at_end());
        let cut = &e.buf[..e.buf.len() - 1];
        let mut d = Dec::new(cut, b"T1").unwrap();
        assert_eq!((d.u8(), d.u32(), d.i64()), (Ok(7), Ok(70_000), Ok(-5)));
        assert_eq!(
            (d.f64(), d.opt_f64(), d.opt_i64()),
            (Ok(-0.0), Ok(None), Ok(Some(i64::MIN)))
        );
        assert_eq!(d.str(), Ok("ränk"));
        assert_eq!(
            d.bytes().unwrap_err(),
            "buffer cut at byte 54 (3 more wanted)"
        );
        assert!(Dec::new(b"XX", b"T1").is_err());
        let mut big = Enc::new(b"T1");
        big.u64(u64::MAX);
        assert_eq!(
            Dec::new(&big.buf, b"T1").unwrap().count(1).unwrap_err(),
            format!("count {} at byte 2 exceeds the buffer", u64::MAX)
        );
        assert_eq!(
            Dec::new(&big.buf, b"T1").unwrap().bytes().unwrap_err(),
            format!("buffer cut at byte 10 ({} more wanted)", u64::MAX)
        );
    }
}
