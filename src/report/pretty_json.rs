//! Pretty JSON written below the top level: the anomaly JSON's rank elements are streamed
//! one by one inside the array `serde_json::to_writer_pretty` would write for all of them.

/// One level of indentation of the pretty JSON (two spaces, as `serde_json`'s pretty printer).
pub const INDENT: &[u8] = b"  ";

/// `serde_json::ser::PrettyFormatter` (two-space indent) started `level` levels deep, each
/// indentation written in one piece: at level 0 it writes the bytes of
/// `serde_json::to_writer_pretty`. (`PrettyFormatter` writes two spaces per level and line,
/// and a writer adding two spaces after every newline sees one call per token: the anomaly
/// JSON of a 30k-kernel Kineto trace took 3.9× the instructions that way.)
pub struct Indented {
    level: usize,
    has_value: bool,
}

impl Indented {
    /// The formatter for a value that starts `level` levels deep.
    pub fn new(level: usize) -> Self {
        Indented {
            level,
            has_value: false,
        }
    }

    /// A newline (after a comma unless `first`) and the indentation of the current level.
    fn line<W: ?Sized + std::io::Write>(&self, w: &mut W, first: bool) -> std::io::Result<()> {
        const SPACES: &[u8; 66] =
            b",\n                                                                ";
        let mut n = self.level * INDENT.len();
        let head = if first { 1 } else { 0 };
        let k = n.min(SPACES.len() - 2);
        w.write_all(&SPACES[head..2 + k])?;
        n -= k;
        while n > 0 {
            let k = n.min(SPACES.len() - 2);
            w.write_all(&SPACES[2..2 + k])?;
            n -= k;
        }
        Ok(())
    }

    fn begin<W: ?Sized + std::io::Write>(&mut self, w: &mut W, open: &[u8]) -> std::io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(open)
    }

    fn end<W: ?Sized + std::io::Write>(&mut self, w: &mut W, close: &[u8]) -> std::io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.line(w, true)?;
        }
        w.write_all(close)
    }
}

impl serde_json::ser::Formatter for Indented {
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.begin(w, b"[")
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.end(w, b"]")
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.line(w, first)
    }

    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.begin(w, b"{")
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.end(w, b"}")
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.line(w, first)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At level 0 the bytes of `serde_json::to_writer_pretty`; at level 1 the same with two
    /// more spaces after every newline.
    #[test]
    fn same_bytes_as_serde_json_pretty() {
        let deep = "x".repeat(200);
        let mut v = serde_json::json!({"a": [1, {"b": [], "c": {}}, [[2.5]], "s\n"], "e": null});
        for _ in 0..40 {
            v = serde_json::json!({ "k": [v, deep] });
        }
        let want = serde_json::to_vec_pretty(&v).unwrap();
        let mut got = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut got, Indented::new(0));
        serde::Serialize::serialize(&v, &mut ser).unwrap();
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(want.clone()).unwrap()
        );
        let mut got = INDENT.to_vec();
        let mut ser = serde_json::Serializer::with_formatter(&mut got, Indented::new(1));
        serde::Serialize::serialize(&v, &mut ser).unwrap();
        let mut shifted = INDENT.to_vec();
        for &b in &want {
            shifted.push(b);
            if b == b'\n' {
                shifted.extend_from_slice(INDENT);
            }
        }
        assert_eq!(got, shifted);
    }
}
