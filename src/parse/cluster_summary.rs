//! Cluster summary files (`docs/cluster-summary.md`): the head that marks one
//! ([`head`], inventory step 2) and the streamed read of the whole file (in the worker of the
//! cluster view).
//!
//! [`head`] looks only at the leading scalar members of the top-level object (the writer puts
//! `"format"` and `"version"` first): it stops at the first list or object member, so the
//! first few hundred bytes decide and a 100 MB summary is never read by the inventory.

use crate::ingest::summary_file::{SummaryHead, FORMAT};

/// Bytes of the (inflated) file [`head`] is given at most.
pub const HEAD_BYTES: usize = 4096;

/// The summary head when `bytes` (the first bytes of a JSON file) open an object whose leading
/// scalar members include `"format": "proflens-cluster-summary"`; `None` for anything else
/// (a trace, another JSON document, garbage). `version` is that member when it is a
/// non-negative integer among the leading scalars, else 0.
pub fn head(bytes: &[u8]) -> Option<SummaryHead> {
    let mut s = Scan { b: bytes, i: 0 };
    s.ws();
    s.eat(b'{')?;
    let (mut format, mut version) = (false, 0u64);
    loop {
        s.ws();
        let key = s.string()?;
        s.ws();
        s.eat(b':')?;
        s.ws();
        match s.peek()? {
            b'"' => {
                let v = s.string()?;
                format |= key == "format" && v == FORMAT;
            }
            b'[' | b'{' => break,
            _ => {
                let v = s.scalar()?;
                if key == "version" {
                    version = std::str::from_utf8(v).ok()?.parse().unwrap_or(0);
                }
            }
        }
        s.ws();
        match s.peek() {
            Some(b',') => s.i += 1,
            _ => break,
        }
    }
    format.then_some(SummaryHead { version })
}

struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }
    /// A JSON string, decoded (escapes by serde_json).
    fn string(&mut self) -> Option<String> {
        let start = self.i;
        self.eat(b'"')?;
        loop {
            match self.peek()? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return serde_json::from_slice(&self.b[start..self.i]).ok();
                }
                _ => self.i += 1,
            }
        }
    }
    /// A number or literal: the bytes up to the next delimiter.
    fn scalar(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        while let Some(c) = self.peek() {
            if matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                break;
            }
            self.i += 1;
        }
        (self.i > start && self.i < self.b.len()).then(|| &self.b[start..self.i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_decides_from_the_leading_members() {
        let v1 = br#"{"format": "proflens-cluster-summary", "version": 1, "generator": "proflens 0.1.0", "roots": ["/r"], "ranks": [{"#;
        assert_eq!(head(v1), Some(SummaryHead { version: 1 }));
        let v2 = br#"  {"version":2,"format":"proflens-cluster-summary","ranks":[]}"#;
        assert_eq!(head(v2), Some(SummaryHead { version: 2 }));
        let escaped = br#"{"format":"proflens-cluster-\u0073ummary","version":1,"x":{}}"#;
        assert_eq!(head(escaped), Some(SummaryHead { version: 1 }));
        let no_version = br#"{"format":"proflens-cluster-summary","ranks":[1]}"#;
        assert_eq!(head(no_version), Some(SummaryHead { version: 0 }));
        // a trace, another format, the format too late (after a list), garbage, a cut head
        assert_eq!(
            head(br#"{"schemaVersion":1,"traceEvents":[{"ph":"X"}]}"#),
            None
        );
        assert_eq!(head(br#"{"format":"chrome-trace","version":1}"#), None);
        assert_eq!(
            head(br#"{"ranks":[],"format":"proflens-cluster-summary"}"#),
            None
        );
        assert_eq!(head(b"\x1f\x8b\x08garbage"), None);
        assert_eq!(head(br#"[{"format":"proflens-cluster-summary"}]"#), None);
        assert_eq!(head(br#"{"format":"proflens-cluster-summ"#), None);
        assert_eq!(head(b""), None);
    }
}
