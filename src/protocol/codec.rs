//! The page's message codec: a [`super::Request`] or [`super::Response`] envelope travels
//! between the page and a worker as bytes, each value in declaration order (not
//! self-describing, like `postcard` or `bincode`): little-endian fixed-width numbers, `f64` as
//! its bits, a `u32` count before text, bytes, sequences and maps, a `u32` variant index, one
//! presence byte before each struct field (0 for a field `skip_serializing_if` left out, which
//! then takes its `#[serde(default)]`).
//!
//! Why not a JS object (`serde-wasm-bindgen`): the derived deserialisers of the protocol's
//! types were the largest part of the page's wasm after the view code — field names matched as
//! text, a map visitor and a sequence visitor for every struct. Here only the sequence visitor
//! is reached (the map visitors and field-name matchers are never instantiated), and the
//! message is one `Uint8Array` instead of a tree of JS objects. Decoding never panics: short or
//! malformed bytes are an error in words. Both ends are built from the same source, so there is
//! no version field.
//!
//! Why not `postcard` or `bincode` themselves: the protocol's types are also written as JSON
//! (exports, the Python package) and leave empty fields out (`skip_serializing_if`); those
//! formats have no way to say a field is absent and fail on such a struct. The presence byte
//! is that way; `tests/tidy.rs` holds that every field left out has a default to read back.
//!
//! [`super::cluster`]'s `f64_or_nan` reads a plain `f64` here ([`serde::Deserializer::is_human_readable`]
//! is false), `Option<f64>` from JSON files.

use std::fmt;

use serde::{de, ser, Serialize};

mod de_bytes;
mod ser_bytes;

/// Why a message could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct CodecError(pub String);

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CodecError {}

impl ser::Error for CodecError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        CodecError(msg.to_string())
    }
}

impl de::Error for CodecError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        CodecError(msg.to_string())
    }
}

/// Encodes `v`.
pub fn to_bytes<T: Serialize + ?Sized>(v: &T) -> Result<Vec<u8>, CodecError> {
    let mut e = ser_bytes::Enc { buf: Vec::new() };
    v.serialize(&mut e)?;
    Ok(e.buf)
}

/// Decodes a `T` from all of `bytes`.
pub fn from_bytes<'de, T: de::Deserialize<'de>>(bytes: &'de [u8]) -> Result<T, CodecError> {
    let mut d = de_bytes::Dec { b: bytes, at: 0 };
    let v = T::deserialize(&mut d)?;
    if d.at != bytes.len() {
        return Err(CodecError(format!(
            "{} bytes left after the message",
            bytes.len() - d.at
        )));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::{from_bytes, to_bytes};
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    enum E {
        Unit,
        New(Option<String>),
        Tuple(u8, i64),
        Fields {
            a: f64,
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            b: Vec<u32>,
            c: bool,
        },
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct S {
        e: Vec<E>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        skip: Option<i32>,
        map: std::collections::BTreeMap<String, (u16, char)>,
        boxed: Box<Option<S2>>,
        text: String,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct S2(u64);

    fn sample(skip: Option<i32>, b: Vec<u32>) -> S {
        S {
            e: vec![
                E::Unit,
                E::New(None),
                E::New(Some("né".into())),
                E::Tuple(7, -3),
                E::Fields {
                    a: f64::NAN,
                    b,
                    c: true,
                },
            ],
            skip,
            map: [("x".to_string(), (1, 'λ')), (String::new(), (0, 'a'))].into(),
            boxed: Box::new(Some(S2(u64::MAX))),
            text: "tail".into(),
        }
    }

    #[test]
    fn values_come_back_equal_with_and_without_skipped_fields() {
        for s in [sample(None, vec![]), sample(Some(-5), vec![1, 2, 3])] {
            let bytes = to_bytes(&s).unwrap();
            let back: S = from_bytes(&bytes).unwrap();
            // NaN != NaN: compare the bits through the encoding again.
            assert_eq!(to_bytes(&back).unwrap(), bytes);
            assert_eq!(back.skip, s.skip);
            assert_eq!(back.map, s.map);
            assert_eq!(back.text, s.text);
        }
    }

    #[test]
    fn broken_messages_are_errors_not_panics() {
        let bytes = to_bytes(&sample(Some(1), vec![9])).unwrap();
        for n in 0..bytes.len() {
            assert!(from_bytes::<S>(&bytes[..n]).is_err(), "cut at {n}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(from_bytes::<S>(&longer).is_err());
        // A huge count with nothing behind it.
        assert!(from_bytes::<Vec<u64>>(&[255, 255, 255, 255]).is_err());
        assert!(from_bytes::<String>(&[1, 0, 0, 0, 0xff]).is_err());
        assert!(from_bytes::<E>(&[9, 0, 0, 0]).is_err());
    }
}
