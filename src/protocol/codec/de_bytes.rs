//! Decoding (see [`super`]).

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};

use super::CodecError;

pub(super) struct Dec<'de> {
    pub(super) b: &'de [u8],
    pub(super) at: usize,
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

impl<'de> Items<'_, 'de> {
    /// The next item, or `None` after the last.
    fn next<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, CodecError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.d).map(Some)
    }
    /// Never more than the bytes left: a broken count does not size an allocation.
    fn hint(&self) -> Option<usize> {
        Some(self.left.min(self.d.b.len() - self.d.at))
    }
}

impl<'de> de::SeqAccess<'de> for Items<'_, 'de> {
    type Error = CodecError;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, CodecError> {
        self.next(seed)
    }
    fn size_hint(&self) -> Option<usize> {
        self.hint()
    }
}

impl<'de> de::MapAccess<'de> for Items<'_, 'de> {
    type Error = CodecError;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, CodecError> {
        self.next(seed)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, CodecError> {
        seed.deserialize(&mut *self.d)
    }
    fn size_hint(&self) -> Option<usize> {
        self.hint()
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
