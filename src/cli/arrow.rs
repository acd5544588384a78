//! `--format arrow`: a [`Frame`] as one Arrow IPC stream (docs/frames.md §2), the columnar
//! hand-off to Python (`pyarrow.ipc.open_stream`, then pandas or polars). Native only; the
//! page never links Arrow.
//!
//! Types: `I64` → `Int64`, `F64` → `Float64`, `Bool` → `Boolean`, text → `Dictionary(Int32,
//! Utf8)` (pandas `category`), lists → `List(Dictionary(Int32, Utf8))`, integer lists → `List(Int64)`. One record batch.

use std::io::Write;
use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int32Array, Int64Array, ListArray,
    RecordBatch, RecordBatchOptions, StringArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{ArrowError, DataType, Field, Schema};

use crate::report::frame::{Dict, Frame, Values};

fn dictionary(keys: Int32Array, dict: &Dict) -> Result<DictionaryArray<Int32Type>, ArrowError> {
    let values = StringArray::from_iter_values(dict.values.iter());
    DictionaryArray::try_new(keys, Arc::new(values))
}

fn text_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

fn key(k: u32) -> i32 {
    i32::try_from(k).unwrap_or(i32::MAX)
}

/// The Arrow array of one column's values.
fn array(values: &Values) -> Result<ArrayRef, ArrowError> {
    Ok(match values {
        Values::I64(v) => Arc::new(Int64Array::from(v.clone())),
        Values::F64(v) => Arc::new(Float64Array::from(v.clone())),
        Values::Bool(v) => Arc::new(BooleanArray::from(v.clone())),
        Values::Text(keys, dict) => {
            let keys: Int32Array = keys.iter().map(|k| k.map(key)).collect();
            Arc::new(dictionary(keys, dict)?)
        }
        Values::I64List {
            offsets,
            items,
            nulls,
        } => {
            let field = Arc::new(Field::new("item", DataType::Int64, false));
            let valid = NullBuffer::from(nulls.iter().map(|n| !n).collect::<Vec<bool>>());
            Arc::new(ListArray::try_new(
                field,
                OffsetBuffer::new(ScalarBuffer::from(offsets.clone())),
                Arc::new(Int64Array::from(items.clone())),
                Some(valid),
            )?)
        }
        Values::TextList {
            offsets,
            keys,
            nulls,
            dict,
        } => {
            let items = dictionary(keys.iter().map(|&k| key(k)).collect(), dict)?;
            let field = Arc::new(Field::new("item", text_type(), false));
            let valid = NullBuffer::from(nulls.iter().map(|n| !n).collect::<Vec<bool>>());
            Arc::new(ListArray::try_new(
                field,
                OffsetBuffer::new(ScalarBuffer::from(offsets.clone())),
                Arc::new(items),
                Some(valid),
            )?)
        }
    })
}

/// The batch of `frame`.
pub fn batch(frame: &Frame) -> Result<RecordBatch, ArrowError> {
    let mut fields = Vec::with_capacity(frame.columns.len());
    let mut arrays = Vec::with_capacity(frame.columns.len());
    for c in &frame.columns {
        let a = array(&c.values)?;
        fields.push(Field::new(c.name.as_str(), a.data_type().clone(), true));
        arrays.push(a);
    }
    let opts = RecordBatchOptions::new().with_row_count(Some(frame.rows));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), arrays, &opts)
}

/// Writes `frame` to `out` as an Arrow IPC stream (schema, one batch, end marker).
///
/// Errors: the writer's, as text.
pub fn write_stream(frame: &Frame, out: &mut dyn Write) -> Result<(), String> {
    let b = batch(frame).map_err(|e| format!("cannot build the Arrow table: {e}"))?;
    let mut w = StreamWriter::try_new(out, &b.schema()).map_err(|e| e.to_string())?;
    w.write(&b).map_err(|e| e.to_string())?;
    w.finish().map_err(|e| e.to_string())
}
