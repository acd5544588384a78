//! Encoding (see [`super`]).

use serde::ser::{self, Serialize};

use super::CodecError;

pub(super) struct Enc {
    pub(super) buf: Vec<u8>,
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
pub(super) struct Compound<'a> {
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

/// The counted and positional compounds: every element is an item (sequences, tuples).
macro_rules! items {
    ($($tr:ident::$m:ident),*) => {$(
        impl ser::$tr for Compound<'_> {
            type Ok = ();
            type Error = CodecError;
            fn $m<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), CodecError> {
                self.item(v)
            }
            fn end(self) -> Result<(), CodecError> {
                self.close()
            }
        }
    )*};
}

items!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

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

/// Structs and struct variants: a presence byte before each field, 0 for one left out.
macro_rules! fields {
    ($($tr:ident),*) => {$(
        impl ser::$tr for Compound<'_> {
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
    )*};
}

fields!(SerializeStruct, SerializeStructVariant);
