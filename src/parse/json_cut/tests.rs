use serde_json::{Map, Value};

use super::*;
use crate::engine::synth::XorShift;

/// A source that hands out `sizes` bytes per read in turn (cycling); the cutter asks for
/// `sizes[0]` bytes per fill: the reads cut the text anywhere, inside strings, escapes and
/// numbers included. Also the cluster summary reader's tests' source.
pub(crate) struct Chunks<'a> {
    pub(crate) text: &'a [u8],
    pub(crate) sizes: Vec<usize>,
    pub(crate) k: usize,
}

impl Read for Chunks<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let want = self.sizes[self.k % self.sizes.len()];
        self.k += 1;
        let n = want.min(buf.len()).min(self.text.len());
        buf[..n].copy_from_slice(&self.text[..n]);
        self.text = &self.text[n..];
        Ok(n)
    }
}

/// The top-level object read member by member, an array member element by element, each
/// piece parsed as a `Value`.
fn cut_read(text: &[u8], sizes: Vec<usize>, cap: usize) -> Result<Value, CutError> {
    let chunk = sizes[0];
    let mut src = Chunks { text, sizes, k: 0 };
    let mut cut = Cutter::with_chunk(&mut src, cap, chunk);
    let mut out = Map::new();
    cut.begin_object("an object")?;
    while let Some(k) = cut.next_key()? {
        let v = if cut.peek()? == b'[' {
            Value::Array(cut.list("a list")?)
        } else {
            cut.value()?.parse()?
        };
        out.insert(k, v);
    }
    cut.end()?;
    Ok(Value::Object(out))
}

const PIECES: [&str; 12] = [
    "a",
    "\\\"",
    "\\\\",
    "\\n",
    "\\u00e9",
    "\\ud83d\\ude00",
    "é",
    "{",
    "}",
    "[",
    "]",
    ",",
];

fn string(rng: &mut XorShift) -> String {
    let n = rng.next_u64() % 6;
    let mut s = String::from("\"");
    for _ in 0..n {
        s.push_str(PIECES[(rng.next_u64() % PIECES.len() as u64) as usize]);
    }
    s.push('"');
    s
}

fn ws(rng: &mut XorShift) -> &'static str {
    ["", " ", "\n", "\r\n  ", "\t"][(rng.next_u64() % 5) as usize]
}

fn value(rng: &mut XorShift, depth: u32) -> String {
    match rng.next_u64() % if depth > 2 { 4 } else { 6 } {
        0 => string(rng),
        1 => ["-12.5e-3", "0", "123456789012", "true", "false", "null"]
            [(rng.next_u64() % 6) as usize]
            .to_string(),
        2 => format!("{}", rng.next_u64() as i64),
        3 => format!("{:?}", (rng.next_u64() % 10_000) as f64 / 7.0),
        4 => {
            let n = rng.next_u64() % 4;
            let items: Vec<String> = (0..n)
                .map(|_| format!("{}{}{}", ws(rng), value(rng, depth + 1), ws(rng)))
                .collect();
            format!("[{}]", items.join(","))
        }
        _ => {
            let n = rng.next_u64() % 4;
            let items: Vec<String> = (0..n)
                .map(|i| {
                    format!(
                        "{}\"k{i}\"{}:{}{}",
                        ws(rng),
                        ws(rng),
                        ws(rng),
                        value(rng, depth + 1)
                    )
                })
                .collect();
            format!("{{{}}}", items.join(","))
        }
    }
}

fn document(rng: &mut XorShift) -> String {
    let n = 1 + rng.next_u64() % 6;
    let members: Vec<String> = (0..n)
        .map(|i| {
            let v = if i % 2 == 0 {
                let items: Vec<String> = (0..rng.next_u64() % 5).map(|_| value(rng, 1)).collect();
                format!("[{}{}]", ws(rng), items.join(", "))
            } else {
                value(rng, 0)
            };
            // `string`'s text without its opening quote: a key `m<i>…` with escapes.
            format!(
                "{}\"m{i}{}{}:{}{}",
                ws(rng),
                &string(rng)[1..],
                ws(rng),
                ws(rng),
                v
            )
        })
        .collect();
    format!("{}{{{}}}{}", ws(rng), members.join(","), ws(rng))
}

#[test]
fn cut_at_any_read_boundary_gives_what_from_slice_gives() {
    let mut rng = XorShift(0x00c0_ffee);
    for round in 0..400 {
        let doc = document(&mut rng);
        let whole: Value = serde_json::from_str(&doc).unwrap_or_else(|e| panic!("{doc}: {e}"));
        for sizes in [vec![1], vec![2, 3], vec![7, 1, 5], vec![1 << 20]] {
            let got = cut_read(doc.as_bytes(), sizes.clone(), MAX_PIECE)
                .unwrap_or_else(|e| panic!("round {round}, reads {sizes:?}: {e}\n{doc}"));
            assert_eq!(got, whole, "round {round}, reads {sizes:?}\n{doc}");
        }
        // Every cut of the text ends early: where and how serde_json says so for the whole
        // cut text (a cut number or literal may read as a bad one), a cut in a string or
        // between values is the end of the file.
        for cut in [doc.len() / 3, doc.len() / 2, doc.trim_end().len() - 1] {
            let e = cut_read(&doc.as_bytes()[..cut], vec![3], MAX_PIECE).unwrap_err();
            let whole = serde_json::from_slice::<Value>(&doc.as_bytes()[..cut]).unwrap_err();
            let at = (whole.line() as u64, whole.column() as u64);
            assert_eq!(
                (e.at.line, e.at.column),
                at,
                "round {round}, cut at {cut}: {e}\n{doc}"
            );
            assert_eq!(
                e.kind == CutKind::Eof,
                whole.is_eof(),
                "round {round}: {e}\n{doc}"
            );
            if whole.is_eof() {
                assert_eq!(e.at.byte, cut as u64, "round {round}: {e}\n{doc}");
            }
        }
    }
}

#[test]
fn a_bad_value_is_located_in_the_file_and_a_long_one_refused_at_its_start() {
    let doc = b"{\"a\": [1, 2],\n \"b\": {\"x\": [\n  tru1]}}";
    for sizes in [vec![1], vec![1 << 20]] {
        let e = cut_read(doc, sizes, MAX_PIECE).unwrap_err();
        assert!(
            matches!(&e.kind, CutKind::Syntax(s) if s == "expected ident"),
            "{e}"
        );
        // serde_json's own place for it in the whole text.
        let whole = serde_json::from_slice::<Value>(doc).unwrap_err();
        assert_eq!(
            (e.at.line, e.at.column),
            (whole.line() as u64, whole.column() as u64)
        );
        assert_eq!(e.to_string(), whole.to_string());
        assert_eq!(e.at.byte, 28 + whole.column() as u64);
    }
    let e = cut_read(b"{\"a\" 1}", vec![2], MAX_PIECE).unwrap_err();
    assert_eq!(e.to_string(), "expected `:` at line 1 column 5");
    let e = cut_read(b"{\"a\": 1 \"b\": 2}", vec![2], MAX_PIECE).unwrap_err();
    assert_eq!(e.to_string(), "expected `,` or `}` at line 1 column 8");
    let e = cut_read(b"{\"a\": 1} x", vec![2], MAX_PIECE).unwrap_err();
    assert_eq!(e.to_string(), "trailing characters at line 1 column 9");
    // A value past the cap: refused at its first byte, whatever the reads.
    let doc = b"{\"a\": 1,\n \"b\": \"0123456789abcdef\"}";
    for sizes in [vec![1], vec![4, 9], vec![1 << 20]] {
        let e = cut_read(doc, sizes, 8).unwrap_err();
        assert_eq!(e.kind, CutKind::TooLarge { limit: 8 });
        assert_eq!((e.at.byte, e.at.line, e.at.column), (15, 2, 6));
    }
    assert!(cut_read(doc, vec![3], 18).is_ok());
}
