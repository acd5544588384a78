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
//! [`super::cluster`]'s `f64_or_nan` reads a plain `f64` here ([`serde::Deserializer::is_human_readable`]
//! is false), `Option<f64>` from JSON files.

use std::fmt;

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde::ser::{self, Serialize};

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
    let mut e = Enc { buf: Vec::new() };
    v.serialize(&mut e)?;
    Ok(e.buf)
}

/// Decodes a `T` from all of `bytes`.
pub fn from_bytes<'de, T: de::Deserialize<'de>>(bytes: &'de [u8]) -> Result<T, CodecError> {
    let mut d = Dec { b: bytes, at: 0 };
    let v = T::deserialize(&mut d)?;
    if d.at != bytes.len() {
        return Err(CodecError(format!(
            "{} bytes left after the message",
            bytes.len() - d.at
        )));
    }
    Ok(v)
}

// ---- encoding

struct Enc {
    buf: Vec<u8>,
}

impl Enc {
    fn count(&mut self, n: usize) -> Result<(), CodecError> {
        let n = u32::try_from(n).map_err(|_| CodecError("a length over 4 GiB".into()))?;
        self.buf.extend_from_slice(&n.to_le_bytes());
        Ok(())
    }
}

/// A sequence or map being written: its count is patched in at the end (`at`), so a length
/// the serializer does not know up front costs nothing more.
struct Compound<'a> {
    e: &'a mut Enc,
    at: Option<usize>,
    n: u32,
}

impl Compound<'_> {
    fn open(e: &mut Enc, counted: bool) -> Compound<'_> {
        let at = counted.then(|| {
            e.buf.extend_from_slice(&[0; 4]);
            e.buf.len() - 4
        });
        Compound { e, at, n: 0 }
    }
    fn item<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), CodecError> {
        self.n += 1;
        v.serialize(&mut *self.e)
    }
    fn field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), CodecError> {
        self.e.buf.push(1);
        v.serialize(&mut *self.e)
    }
    fn close(self) -> Result<(), CodecError> {
        if let Some(at) = self.at {
            self.e.buf[at..at + 4].copy_from_slice(&self.n.to_le_bytes());
        }
        Ok(())
    }
}

macro_rules! fixed {
    ($($name:ident: $t:ty),*) => {$(
        fn $name(self, v: $t) -> Result<(), CodecError> {
            self.buf.extend_from_slice(&v.to_le_bytes());
            Ok(())
        }
    )*};
}

impl<'a> ser::Serializer for &'a mut Enc {
    type Ok = ();
    type Error = CodecError;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fixed!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64,
        serialize_f32: f32, serialize_f64: f64);

    fn is_human_readable(&self) -> bool {
        false
    }
    fn serialize_bool(self, v: bool) -> Result<(), CodecError> {
        self.buf.push(v as u8);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), CodecError> {
        self.serialize_u32(v as u32)
    }
    fn serialize_str(self, v: &str) -> Result<(), CodecError> {
        self.serialize_bytes(v.as_bytes())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), CodecError> {
        self.count(v.len())?;
        self.buf.extend_from_slice(v);
        Ok(())
    }
    fn serialize_none(self) -> Result<(), CodecError> {
        self.buf.push(0);
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), CodecError> {
        self.buf.push(1);
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), CodecError> {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), CodecError> {
        Ok(())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
    ) -> Result<(), CodecError> {
        self.serialize_u32(index)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), CodecError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        v: &T,
    ) -> Result<(), CodecError> {
        self.serialize_u32(index)?;
        v.serialize(self)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'a>, CodecError> {
        Ok(Compound::open(self, true))
    }
    fn serialize_tuple(self, _: usize) -> Result<Compound<'a>, CodecError> {
        Ok(Compound::open(self, false))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, CodecError> {
        Ok(Compound::open(self, false))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, CodecError> {
        self.serialize_u32(index)?;
        Ok(Compound::open(self, false))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'a>, CodecError> {
        Ok(Compound::open(self, true))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, CodecError> {
        Ok(Compound::open(self, false))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, CodecError> {
        self.serialize_u32(index)?;
        Ok(Compound::open(self, false))
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = CodecError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), CodecError> {
        self.item(v)
    }
    fn end(self) -> Result<(), CodecError> {
        self.close()
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = CodecError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), CodecError> {
        self.item(v)
    }
    fn end(self) -> Result<(), CodecError> {
        self.close()
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = CodecError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), CodecError> {
        self.item(v)
    }
    fn end(self) -> Result<(), CodecError> {
        self.close()
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = CodecError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), CodecError> {
        self.item(v)
    }
    fn end(self) -> Result<(), CodecError> {
        self.close()
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = CodecError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), CodecError> {
        self.item(k)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), CodecError> {
        v.serialize(&mut *self.e)
    }
    fn end(self) -> Result<(), CodecError> {
        self.close()
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = CodecError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        _: &'static str,
        v: &T,
    ) -> Result<(), CodecError> {
        self.field(v)
    }
    fn skip_field(&mut self, _: &'static str) -> Result<(), CodecError> {
        self.e.buf.push(0);
        Ok(())
    }
    fn end(self) -> Result<(), CodecError> {
        self.close()
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = CodecError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        _: &'static str,
        v: &T,
    ) -> Result<(), CodecError> {
        self.field(v)
    }
    fn skip_field(&mut self, _: &'static str) -> Result<(), CodecError> {
        self.e.buf.push(0);
        Ok(())
    }
    fn end(self) -> Result<(), CodecError> {
        self.close()
    }
}

// ---- decoding

struct Dec<'de> {
    b: &'de [u8],
    at: usize,
}

impl<'de> Dec<'de> {
    fn take(&mut self, n: usize) -> Result<&'de [u8], CodecError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| CodecError("the message ends too early".into()))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], CodecError> {
        let mut a = [0; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn byte(&mut self) -> Result<u8, CodecError> {
        Ok(self.take(1)?[0])
    }
    fn count(&mut self) -> Result<usize, CodecError> {
        // No allocation is sized from a count alone (`size_hint` is capped by the bytes left).
        Ok(u32::from_le_bytes(self.array()?) as usize)
    }
    fn text(&mut self) -> Result<&'de str, CodecError> {
        let n = self.count()?;
        std::str::from_utf8(self.take(n)?).map_err(|_| CodecError("text that is not UTF-8".into()))
    }
}

macro_rules! fixed_de {
    ($($name:ident: $t:ty => $visit:ident),*) => {$(
        fn $name<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CodecError> {
            v.$visit(<$t>::from_le_bytes(self.array()?))
        }
    )*};
}

impl<'de> de::Deserializer<'de> for &mut Dec<'de> {
    type Error = CodecError;

    fixed_de!(deserialize_i8: i8 => visit_i8, deserialize_i16: i16 => visit_i16,
        deserialize_i32: i32 => visit_i32, deserialize_i64: i64 => visit_i64,
        deserialize_u8: u8 => visit_u8, deserialize_u16: u16 => visit_u16,
        deserialize_u32: u32 => visit_u32, deserialize_u64: u64 => visit_u64,
        deserialize_f32: f32 => visit_f32, deserialize_f64: f64 => visit_f64);

    fn is_human_readable(&self) -> bool {
        false
    }
    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, CodecError> {
        Err(CodecError(
            "the message codec cannot read a value of unknown type".into(),
        ))
    }
    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CodecError> {
        self.deserialize_any(v)
    }
    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CodecError> {
        match self.byte()? {
            0 => v.visit_bool(false),
            1 => v.visit_bool(true),
            b => Err(CodecError(format!("{b} is not a flag"))),
        }
    }
    fn deserialize_char<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CodecError> {
        let c = u32::from_le_bytes(self.array()?);
        v.visit_char(char::from_u32(c).ok_or_else(|| CodecError("not a character".into()))?)
    }
    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CodecError> {
        v.visit_borrowed_str(self.text()?)
    }
    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CodecError> {
        v.visit_borrowed_str(self.text()?)
    }
    fn deserialize_bytes<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CodecError> {
        let n = self.count()?;
        v.visit_borrowed_bytes(self.take(n)?)
    }
    fn deserialize_byte_buf<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CodecError> {
        self.deserialize_bytes(v)
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CodecError> {
        match self.byte()? {
            0 => v.visit_none(),
            1 => v.visit_some(self),
            b => Err(CodecError(format!("{b} is not an option tag"))),
        }
    }
    fn deserialize_unit<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CodecError> {
        v.visit_unit()
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        v: V,
    ) -> Result<V::Value, CodecError> {
        v.visit_unit()
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        v: V,
    ) -> Result<V::Value, CodecError> {
        v.visit_newtype_struct(self)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CodecError> {
        let left = self.count()?;
        v.visit_seq(Items { d: self, left })
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, CodecError> {
        v.visit_seq(Items { d: self, left: len })
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        len: usize,
        v: V,
    ) -> Result<V::Value, CodecError> {
        v.visit_seq(Items { d: self, left: len })
    }
    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CodecError> {
        let left = self.count()?;
        v.visit_map(Items { d: self, left })
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, CodecError> {
        v.visit_seq(Fields {
            d: self,
            left: fields.len(),
        })
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, CodecError> {
        v.visit_enum(self)
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CodecError> {
        self.deserialize_u32(v)
    }
}

/// The items of a sequence, tuple or map (`left` of them).
struct Items<'a, 'de> {
    d: &'a mut Dec<'de>,
    left: usize,
}

impl<'de> de::SeqAccess<'de> for Items<'_, 'de> {
    type Error = CodecError;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, CodecError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.d).map(Some)
    }
    fn size_hint(&self) -> Option<usize> {
        // Never more than the bytes left: a broken count does not size an allocation.
        Some(self.left.min(self.d.b.len() - self.d.at))
    }
}

impl<'de> de::MapAccess<'de> for Items<'_, 'de> {
    type Error = CodecError;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, CodecError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.d).map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, CodecError> {
        seed.deserialize(&mut *self.d)
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.left.min(self.d.b.len() - self.d.at))
    }
}

/// A struct's fields in declaration order, each after its presence byte: an absent field is
/// `None` to the derived visitor, which takes the field's default.
struct Fields<'a, 'de> {
    d: &'a mut Dec<'de>,
    left: usize,
}

impl<'de> de::SeqAccess<'de> for Fields<'_, 'de> {
    type Error = CodecError;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, CodecError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        match self.d.byte()? {
            0 => Ok(None),
            1 => seed.deserialize(&mut *self.d).map(Some),
            b => Err(CodecError(format!("{b} is not a field tag"))),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

impl<'de> de::EnumAccess<'de> for &mut Dec<'de> {
    type Error = CodecError;
    type Variant = Self;
    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self), CodecError> {
        let index = u32::from_le_bytes(self.array()?);
        let v = seed.deserialize(index.into_deserializer())?;
        Ok((v, self))
    }
}

impl<'de> de::VariantAccess<'de> for &mut Dec<'de> {
    type Error = CodecError;
    fn unit_variant(self) -> Result<(), CodecError> {
        Ok(())
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, CodecError> {
        seed.deserialize(self)
    }
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, CodecError> {
        v.visit_seq(Items { d: self, left: len })
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, CodecError> {
        v.visit_seq(Fields {
            d: self,
            left: fields.len(),
        })
    }
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
