//! The shared walk of torch_npu's two per-rank communication files (communication.md §1.2,
//! §1.4): `{ "<step>": { "p2p"|"collective": { "<key>": ENTRY, … } } }`.
//!
//! Entries are decoded through serde's visitors, one at a time (a small typed struct), and
//! each is handed to a callback in file order. A file up to [`WHOLE`] bytes is read whole and
//! parsed from memory (fast); a larger one streams, holding only the entry being decoded. A type section may be `{}` or `[]` (both seen or documented). A step whose
//! object holds neither `p2p` nor `collective` is not this layout (an unknown era): the
//! file is refused with its line.

use std::fmt;
use std::io::Read;
use std::marker::PhantomData;

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde::{Deserialize, Deserializer};

use crate::base::Position;
use crate::model::comm::Section;
use crate::parse::{ParseError, ParseErrorKind};

/// Largest communication file read (bytes). The read is streaming (memory grows with the
/// rows kept, not the file), so the cap only bounds a runaway input.
pub const MAX_COMM_JSON: u64 = 4 << 30;

/// Largest communication file parsed from memory (bytes); larger ones stream.
pub const WHOLE: u64 = 32 << 20;

/// The callback: step key, section, entry key, decoded entry.
pub type OnEntry<'a, E> = dyn FnMut(&str, Section, String, E) + 'a;

/// Walks `src` (`file` for positions), decoding every entry of every type section as `E` and
/// handing it to `on` in file order. `what` names the expected layout in errors.
///
/// Errors: [`ParseErrorKind::TooLarge`] past `cap`; [`ParseErrorKind::Syntax`] with the line
/// for bytes that are not this layout, a cut file (`expected` then says the file ends early),
/// or an unknown era.
pub fn walk<R: Read, E: DeserializeOwned>(
    src: R,
    file: &str,
    cap: u64,
    what: &'static str,
    on: &mut OnEntry<'_, E>,
) -> Result<(), ParseError> {
    walk_in(src, file, cap, WHOLE, what, on)
}

/// [`walk`] with files up to `whole` bytes parsed from memory.
fn walk_in<R: Read, E: DeserializeOwned>(
    src: R,
    file: &str,
    cap: u64,
    whole: u64,
    what: &'static str,
    on: &mut OnEntry<'_, E>,
) -> Result<(), ParseError> {
    let mut rdr = std::io::BufReader::new(Counted {
        inner: src.take(cap + 1),
        n: 0,
    });
    // A file up to `WHOLE` bytes (every rank's file of a usual capture) is read whole and
    // parsed from the slice, several times faster than serde_json's byte-by-byte reader; a
    // larger one streams, one entry at a time.
    let mut head = Vec::new();
    let fits = (&mut rdr)
        .take(whole.min(cap) + 1)
        .read_to_end(&mut head)
        .map(|n| n as u64 <= whole.min(cap));
    let res = match fits {
        Ok(true) => {
            let mut de = serde_json::Deserializer::from_slice(&head);
            Top { on }.deserialize(&mut de).and_then(|_| de.end())
        }
        Ok(false) => {
            // The reader type of the cluster summary's read (`engine::session::cluster`): one
            // instantiation of serde_json's streaming parser for both in the wasm.
            let rest: Box<dyn Read + '_> = Box::new(head.as_slice().chain(&mut rdr));
            let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(rest));
            Top { on }.deserialize(&mut de).and_then(|_| de.end())
        }
        Err(e) => Err(serde_json::Error::io(e)),
    };
    drop(head);
    let read = rdr.get_ref().n;
    if rdr.get_ref().inner.limit() == 0 {
        return Err(ParseError::new(
            Position::file(file).at_byte(cap),
            ParseErrorKind::TooLarge {
                limit: cap as usize,
            },
        ));
    }
    res.map_err(|e| {
        let expected = match e.classify() {
            serde_json::error::Category::Eof => "the rest of the file: it ends early (cut)",
            serde_json::error::Category::Io => "readable bytes",
            _ if e.to_string().starts_with(UNKNOWN_ERA) => {
                "a step object with \"p2p\" or \"collective\" (this layout is not a known era)"
            }
            _ => what,
        };
        // A cut file is located at its end (every byte was read); any other error at its line.
        let at = Position::file(file).at_line(e.line() as u64);
        let at = match e.classify() {
            serde_json::error::Category::Eof => at.at_byte(read),
            _ => at,
        };
        ParseError::new(at, ParseErrorKind::Syntax { expected })
    })
}

/// The source with a count of the bytes read from it.
struct Counted<R> {
    inner: std::io::Take<R>,
    n: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.n += k as u64;
        Ok(k)
    }
}

const UNKNOWN_ERA: &str = "unknown era";

struct Top<'a, 'b, E> {
    on: &'a mut OnEntry<'b, E>,
}

impl<'de, E: DeserializeOwned> DeserializeSeed<'de> for Top<'_, '_, E> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, E: DeserializeOwned> Visitor<'de> for Top<'_, '_, E> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of steps")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        while let Some(step) = m.next_key::<String>()? {
            m.next_value_seed(Step {
                step: &step,
                on: &mut *self.on,
            })?;
        }
        Ok(())
    }
}

struct Step<'a, 'b, E> {
    step: &'a str,
    on: &'a mut OnEntry<'b, E>,
}

impl<'de, E: DeserializeOwned> DeserializeSeed<'de> for Step<'_, '_, E> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, E: DeserializeOwned> Visitor<'de> for Step<'_, '_, E> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a step object {\"p2p\": …, \"collective\": …}")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        let (mut keys, mut sections) = (0usize, 0usize);
        while let Some(k) = m.next_key::<String>()? {
            keys += 1;
            match Section::of_key(&k) {
                Some(section) => {
                    sections += 1;
                    m.next_value_seed(Entries {
                        step: self.step,
                        section,
                        on: &mut *self.on,
                    })?
                }
                None => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        if keys > 0 && sections == 0 {
            return Err(de::Error::custom(UNKNOWN_ERA));
        }
        Ok(())
    }
}

struct Entries<'a, 'b, E> {
    step: &'a str,
    section: Section,
    on: &'a mut OnEntry<'b, E>,
}

impl<'de, E: DeserializeOwned> DeserializeSeed<'de> for Entries<'_, '_, E> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, E: DeserializeOwned> Visitor<'de> for Entries<'_, '_, E> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of \"<op>@<group>\" entries, or []")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<(), A::Error> {
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        while let Some(k) = m.next_key::<String>()? {
            let v: E = m.next_value()?;
            (self.on)(self.step, self.section, k, v);
        }
        Ok(())
    }
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

    fn entries(bytes: &[u8], whole: u64) -> Result<Vec<(String, String, u64)>, ParseError> {
        let mut got = Vec::new();
        walk_in(
            bytes,
            "c.json",
            MAX_COMM_JSON,
            whole,
            "x",
            &mut |step: &str, _s: Section, key: String, v: u64| {
                got.push((step.to_string(), key, v))
            },
        )?;
        Ok(got)
    }

    #[test]
    fn from_memory_and_streamed_alike_and_a_cut_file_located_at_its_end() {
        let j = br#"{"step1": {"p2p": {"a@1": 1}, "collective": {"b@1": 2, "c@2": 3}},
                     "step2": {"collective": {"b@1": 4}}}"#;
        let whole = entries(j, WHOLE).unwrap();
        assert_eq!(whole.len(), 4);
        assert_eq!(whole[3], ("step2".into(), "b@1".into(), 4));
        // 16 bytes in memory, the rest streamed: the same entries.
        assert_eq!(entries(j, 16).unwrap(), whole);
        for w in [WHOLE, 16] {
            let e = entries(&j[..60], w).unwrap_err();
            assert_eq!(e.position().byte, Some(60), "{e}");
            assert!(e.to_string().contains("cut"), "{e}");
        }
    }
}
