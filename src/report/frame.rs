//! Typed columnar tables ([`Frame`]): the one hand-off of a result table to columnar consumers
//! (the CLI's Arrow IPC output, hence the Python package's DataFrames). A frame is built from
//! the same [`Cell`]s the CSV and JSON writers render, so a frame and the CLI's CSV of the same
//! table hold the same values, cell by cell (docs/frames.md §2).
//!
//! Types survive: integers stay `i64`, exact times ([`Cell::Exact`], ns scaled for the text
//! outputs) become integer **ns** columns named `<base>_ns`, text columns are dictionary
//! encoded (one copy of each distinct string), and lists ([`Cell::List`]) stay lists of
//! dictionary-encoded strings. Formatting only: no rule lives here.

use std::borrow::Cow;

use rustc_hash::FxHashMap as HashMap;

/// One cell value of a result table, as the CSV / JSON writers and [`FrameBuilder`] take it.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell<'a> {
    /// Text.
    Str(Cow<'a, str>),
    /// A float (written as Python `repr` in text outputs).
    F64(f64),
    /// An integer.
    I64(i64),
    /// A time `ns / 10^scale`, written exactly in text outputs (`float::exact_number_text`);
    /// an integer ns column in a frame.
    Exact(i64, u32),
    /// A time `ns / 10^scale` written with exactly `scale` decimals in text outputs
    /// (`float::fixed_number_text`: `12.500`); an integer ns column in a frame.
    Fixed(i64, u32),
    /// A boolean.
    Bool(bool),
    /// A list of texts (joined by `;` in CSV).
    List(Vec<Cow<'a, str>>),
    /// A float written in its shortest round-trip digits as JSON writers spell it (`1.5e-7`,
    /// `100.0`; Python `repr` would write `1.5e-07`), in CSV and JSON alike: the communication
    /// tables' spelling. A `F64` column in a frame. Non-finite values are written as
    /// [`Cell::Null`] by whoever builds the cell.
    Short(f64),
    /// A list of integers (the JSON array text `[0,1]` in CSV and JSON).
    Ints(Vec<i64>),
    /// No value.
    Null,
}

/// Distinct strings of one text column, in first-seen order; `keys` index into `values`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dict {
    /// The distinct strings.
    pub values: Vec<String>,
    index: HashMap<String, u32>,
}

impl Dict {
    /// The key of `s`, added when new.
    pub fn key(&mut self, s: &str) -> u32 {
        if let Some(&k) = self.index.get(s) {
            return k;
        }
        let k = self.values.len() as u32;
        self.values.push(s.to_string());
        self.index.insert(s.to_string(), k);
        k
    }
}

/// The values of one column (one entry per row; `None` = null).
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// 64-bit integers (counts, ids, bytes, ns).
    I64(Vec<Option<i64>>),
    /// 64-bit floats (the ms / MB / ratio columns of the text outputs).
    F64(Vec<Option<f64>>),
    /// Booleans.
    Bool(Vec<Option<bool>>),
    /// Dictionary-encoded text.
    Text(Vec<Option<u32>>, Dict),
    /// Lists of integers (`offsets` has rows + 1 entries into `items`).
    I64List {
        /// Row `i` is `items[offsets[i]..offsets[i + 1]]`.
        offsets: Vec<i32>,
        /// The list items of every row, flattened.
        items: Vec<i64>,
        /// Null rows.
        nulls: Vec<bool>,
    },
    /// Lists of dictionary-encoded texts (`offsets` has rows + 1 entries into `keys`).
    TextList {
        /// Row `i` is `keys[offsets[i]..offsets[i + 1]]`.
        offsets: Vec<i32>,
        /// The list items of every row, flattened.
        keys: Vec<u32>,
        /// Null rows.
        nulls: Vec<bool>,
        /// The distinct items.
        dict: Dict,
    },
}

/// One named column.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// The column's name (the CSV header's, or `<base>_ns` for exact times).
    pub name: String,
    /// Its values.
    pub values: Values,
}

/// A whole table, column by column.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    /// The columns, in the CSV's order.
    pub columns: Vec<Column>,
    /// Number of rows.
    pub rows: usize,
}

/// The type of one column of a [`FrameBuilder`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// [`Cell::Str`] → dictionary text.
    Text,
    /// [`Cell::F64`].
    F64,
    /// [`Cell::I64`].
    I64,
    /// [`Cell::Exact`] / [`Cell::Fixed`] → integer ns.
    TimeNs,
    /// [`Cell::Bool`].
    Bool,
    /// [`Cell::List`] → list of dictionary texts.
    TextList,
    /// [`Cell::Ints`] → list of integers.
    I64List,
}

/// The frame name of a text column `name` of kind `kind`: an exact time column's unit suffix
/// (`_us`, `_ms`, or none) becomes `_ns`.
pub fn frame_name(name: &str, kind: Kind) -> String {
    if kind != Kind::TimeNs {
        return name.to_string();
    }
    let base = name
        .strip_suffix("_us")
        .or_else(|| name.strip_suffix("_ms"))
        .unwrap_or(name);
    format!("{base}_ns")
}

/// Builds a [`Frame`] row by row from [`Cell`]s.
pub struct FrameBuilder {
    frame: Frame,
}

impl FrameBuilder {
    /// An empty frame with columns `(CSV name, kind)`.
    pub fn new(columns: &[(&str, Kind)]) -> Self {
        let columns = columns
            .iter()
            .map(|&(name, kind)| Column {
                name: frame_name(name, kind),
                values: match kind {
                    Kind::Text => Values::Text(Vec::new(), Dict::default()),
                    Kind::F64 => Values::F64(Vec::new()),
                    Kind::I64 | Kind::TimeNs => Values::I64(Vec::new()),
                    Kind::Bool => Values::Bool(Vec::new()),
                    Kind::I64List => Values::I64List {
                        offsets: vec![0],
                        items: Vec::new(),
                        nulls: Vec::new(),
                    },
                    Kind::TextList => Values::TextList {
                        offsets: vec![0],
                        keys: Vec::new(),
                        nulls: Vec::new(),
                        dict: Dict::default(),
                    },
                },
            })
            .collect();
        FrameBuilder {
            frame: Frame { columns, rows: 0 },
        }
    }

    /// Appends one row: `cells[k]` goes to column `k` (a cell of another type than the
    /// column's is stored as null; missing cells are null).
    pub fn push(&mut self, cells: &[Cell<'_>]) {
        for (k, col) in self.frame.columns.iter_mut().enumerate() {
            let c = cells.get(k).unwrap_or(&Cell::Null);
            match &mut col.values {
                Values::I64(v) => v.push(match c {
                    Cell::I64(i) => Some(*i),
                    Cell::Exact(ns, _) | Cell::Fixed(ns, _) => Some(*ns),
                    _ => None,
                }),
                Values::F64(v) => v.push(match c {
                    Cell::F64(x) | Cell::Short(x) => Some(*x),
                    _ => None,
                }),
                Values::Bool(v) => v.push(match c {
                    Cell::Bool(b) => Some(*b),
                    _ => None,
                }),
                Values::Text(keys, dict) => keys.push(match c {
                    Cell::Str(s) => Some(dict.key(s)),
                    _ => None,
                }),
                Values::I64List {
                    offsets,
                    items,
                    nulls,
                } => {
                    match c {
                        Cell::Ints(v) => {
                            items.extend_from_slice(v);
                            nulls.push(false);
                        }
                        _ => nulls.push(true),
                    }
                    offsets.push(i32::try_from(items.len()).unwrap_or(i32::MAX));
                }
                Values::TextList {
                    offsets,
                    keys,
                    nulls,
                    dict,
                } => {
                    match c {
                        Cell::List(items) => {
                            keys.extend(items.iter().map(|s| dict.key(s)));
                            nulls.push(false);
                        }
                        _ => nulls.push(true),
                    }
                    offsets.push(i32::try_from(keys.len()).unwrap_or(i32::MAX));
                }
            }
        }
        self.frame.rows += 1;
    }

    /// The finished frame.
    pub fn finish(self) -> Frame {
        self.frame
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_land_typed_and_exact_times_become_ns_columns() {
        let mut b = FrameBuilder::new(&[
            ("name", Kind::Text),
            ("start_us", Kind::TimeNs),
            ("ms", Kind::F64),
            ("tags", Kind::TextList),
        ]);
        b.push(&[
            Cell::Str("a".into()),
            Cell::Exact(1_700_000_000_123_456_789, 3),
            Cell::F64(0.5),
            Cell::List(vec!["x".into(), "y".into()]),
        ]);
        b.push(&[Cell::Str("a".into()), Cell::Null, Cell::Null, Cell::Null]);
        let f = b.finish();
        assert_eq!(f.rows, 2);
        assert_eq!(f.columns[1].name, "start_ns");
        assert_eq!(
            f.columns[1].values,
            Values::I64(vec![Some(1_700_000_000_123_456_789), None])
        );
        match &f.columns[0].values {
            Values::Text(keys, dict) => {
                assert_eq!(keys, &vec![Some(0), Some(0)]);
                assert_eq!(dict.values, vec!["a".to_string()]);
            }
            other => panic!("{other:?}"),
        }
        match &f.columns[3].values {
            Values::TextList {
                offsets,
                keys,
                nulls,
                ..
            } => {
                assert_eq!(offsets, &vec![0, 2, 2]);
                assert_eq!(keys, &vec![0, 1]);
                assert_eq!(nulls, &vec![false, true]);
            }
            other => panic!("{other:?}"),
        }
    }
}
