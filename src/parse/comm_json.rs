//! The shared walk of torch_npu's two per-rank communication files (communication.md §1.2,
//! §1.4): `{ "<step>": { "p2p"|"collective": { "<key>": ENTRY, … } } }`.
//!
//! The three levels of objects are cut by [`super::json_cut::Cutter`] over the bytes read in
//! chunks; each entry is parsed from its own bytes as a small typed struct and handed to a
//! callback in file order. Memory is one read chunk plus the entry being decoded (capped at
//! [`MAX_ENTRY`]), whatever the file's size. A type section may be `{}` or `[]` (both seen
//! or documented). A step whose object holds neither `p2p` nor `collective` is not this
//! layout (an unknown era): the file is refused with its line.

use std::fmt;
use std::io::Read;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::json_cut::{CutError, CutKind, Cutter, MAX_PIECE};
use crate::base::Position;
use crate::model::comm::Section;
use crate::parse::{ParseError, ParseErrorKind};

/// Largest communication file read (bytes). The read is streaming (memory grows with the
/// rows kept, not the file), so the cap only bounds a runaway input.
pub const MAX_COMM_JSON: u64 = 4 << 30;

/// Largest entry of a communication file (bytes); a larger one refuses the file, located
/// at the entry's first byte.
pub const MAX_ENTRY: usize = MAX_PIECE;

/// The callback: step key, section, entry key, decoded entry.
pub type OnEntry<'a, E> = dyn FnMut(&str, Section, String, E) + 'a;

/// Walks `src` (`file` for positions), decoding every entry of every type section as `E` and
/// handing it to `on` in file order. `what` names the expected layout in errors.
///
/// Errors: [`ParseErrorKind::TooLarge`] past `cap` (the file) or past [`MAX_ENTRY`] (one
/// entry, at its first byte); [`ParseErrorKind::Syntax`] with the line for bytes that are not
/// this layout, a cut file (`expected` then says the file ends early, located at its end),
/// or an unknown era.
pub fn walk<R: Read, E: DeserializeOwned>(
    src: R,
    file: &str,
    cap: u64,
    what: &'static str,
    on: &mut OnEntry<'_, E>,
) -> Result<(), ParseError> {
    walk_in(src, file, cap, MAX_ENTRY, what, on)
}

/// [`walk`] with entries of at most `entry_cap` bytes.
fn walk_in<R: Read, E: DeserializeOwned>(
    src: R,
    file: &str,
    cap: u64,
    entry_cap: usize,
    what: &'static str,
    on: &mut OnEntry<'_, E>,
) -> Result<(), ParseError> {
    let mut src = src.take(cap + 1);
    let res = {
        let mut cut = Cutter::new(&mut src, entry_cap);
        cut_walk(&mut cut, on)
    };
    if src.limit() == 0 {
        return Err(ParseError::new(
            Position::file(file).at_byte(cap),
            ParseErrorKind::TooLarge {
                limit: cap as usize,
            },
        ));
    }
    res.map_err(|e| {
        let at = Position::file(file).at_line(e.at.line);
        let kind = match &e.kind {
            // A cut file is located at its end (every byte was read).
            CutKind::Eof => ParseErrorKind::Syntax {
                expected: "the rest of the file: it ends early (cut)",
            },
            CutKind::Io(_) => ParseErrorKind::Syntax {
                expected: "readable bytes",
            },
            CutKind::TooLarge { limit } => ParseErrorKind::TooLarge { limit: *limit },
            CutKind::Syntax(s) if s == UNKNOWN_ERA => ParseErrorKind::Syntax {
                expected:
                    "a step object with \"p2p\" or \"collective\" (this layout is not a known era)",
            },
            CutKind::Syntax(_) => ParseErrorKind::Syntax { expected: what },
        };
        let at = match e.kind {
            CutKind::Eof | CutKind::TooLarge { .. } => at.at_byte(e.at.byte),
            _ => at,
        };
        ParseError::new(at, kind)
    })
}

const UNKNOWN_ERA: &str = "unknown era";

/// The three levels of objects, each entry parsed from its bytes.
fn cut_walk<E: DeserializeOwned>(
    cut: &mut Cutter<'_>,
    on: &mut OnEntry<'_, E>,
) -> Result<(), CutError> {
    cut.begin_object("an object of steps")?;
    while let Some(step) = cut.next_key()? {
        cut.begin_object("a step object {\"p2p\": …, \"collective\": …}")?;
        let (mut keys, mut sections) = (0usize, 0usize);
        while let Some(k) = cut.next_key()? {
            keys += 1;
            match Section::of_key(&k) {
                Some(section) => {
                    sections += 1;
                    if cut.peek()? == b'[' {
                        cut.skip()?;
                    } else {
                        cut.begin_object("an object of \"<op>@<group>\" entries, or []")?;
                        while let Some(key) = cut.next_key()? {
                            let v: E = cut.value()?.parse()?;
                            on(&step, section, key, v);
                        }
                    }
                }
                None => cut.skip()?,
            }
        }
        if keys > 0 && sections == 0 {
            // Located where the step object ends (just past its `}`).
            return Err(CutError {
                kind: CutKind::Syntax(UNKNOWN_ERA.into()),
                at: cut.at(),
            });
        }
    }
    cut.end()
}

/// A JSON object decoded as its `(key, value)` pairs in file order (`[]` reads as empty).
#[derive(Clone, Debug, PartialEq)]
pub struct Ordered<V>(pub Vec<(String, V)>);

impl<V> Default for Ordered<V> {
    fn default() -> Self {
        Ordered(Vec::new())
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Ordered<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct OrderedVisitor<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for OrderedVisitor<V> {
            type Value = Ordered<V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Ordered<V>, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, V>()? {
                    out.push((k, v));
                }
                Ok(Ordered(out))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Ordered<V>, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Ordered(Vec::new()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Ordered<V>, E> {
                Ok(Ordered(Vec::new()))
            }
        }
        d.deserialize_any(OrderedVisitor(PhantomData))
    }
}

/// `"<name>@<group>"` split at the last `@`; no `@`: the whole key and an empty group.
pub fn split_key(key: &str) -> (&str, &str) {
    key.rsplit_once('@').unwrap_or((key, ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(bytes: &[u8], entry_cap: usize) -> Result<Vec<(String, String, u64)>, ParseError> {
        let mut got = Vec::new();
        walk_in(
            bytes,
            "c.json",
            MAX_COMM_JSON,
            entry_cap,
            "x",
            &mut |step: &str, _s: Section, key: String, v: u64| {
                got.push((step.to_string(), key, v))
            },
        )?;
        Ok(got)
    }

    #[test]
    fn entries_in_file_order_a_cut_file_located_at_its_end_and_an_entry_past_the_cap() {
        let j = br#"{"step1": {"p2p": {"a@1": 1}, "collective": {"b@1": 2, "c@2": 3}},
                     "step2": {"collective": {"b@1": 4}, "p2p": []}}"#;
        let got = entries(j, MAX_ENTRY).unwrap();
        assert_eq!(got.len(), 4);
        assert_eq!(got[3], ("step2".into(), "b@1".into(), 4));
        let e = entries(&j[..60], MAX_ENTRY).unwrap_err();
        assert_eq!(e.position().byte, Some(60), "{e}");
        assert!(e.to_string().contains("cut"), "{e}");
        let big = br#"{"s": {"p2p": {"a@1": 1, "b@1": 123456789}}}"#;
        let e = entries(big, 6).unwrap_err();
        assert_eq!(e.kind(), &ParseErrorKind::TooLarge { limit: 6 });
        assert_eq!(e.position().byte, Some(32), "{e}");
    }
}
