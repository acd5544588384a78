//! Tables and columns of a DB by name (ascend-db.md §2), and the small query builder the
//! readers share: columns that exist are selected, missing optional ones read as NULL, string
//! ids are resolved by a `LEFT JOIN` on `STRING_IDS` (so no string map is held in memory).

use rustc_hash::FxHashMap as HashMap;

use crate::ingest::sqlite::Db;

/// The tables of a DB and their columns.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    tables: HashMap<String, Vec<String>>,
}

impl Schema {
    /// Reads the table list and every table's columns.
    pub fn read(db: &Db<'_>) -> Result<Schema, rusqlite::Error> {
        let names: Vec<String> = {
            let mut st = db
                .conn()
                .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
            let rows = st.query_map([], |r| r.get::<_, String>(0))?;
            rows.collect::<Result<_, _>>()?
        };
        let mut tables = HashMap::default();
        for n in names {
            let cols = db.columns(&n)?;
            tables.insert(n, cols);
        }
        Ok(Schema { tables })
    }

    /// True when `table` exists.
    pub fn has_table(&self, table: &str) -> bool {
        self.tables.contains_key(table)
    }

    /// True when `table` has `column`.
    pub fn has(&self, table: &str, column: &str) -> bool {
        self.tables
            .get(table)
            .is_some_and(|c| c.iter().any(|n| n == column))
    }

    /// The first of `required` that `table` lacks (as `TABLE.column`), or the table itself.
    pub fn lacks(&self, table: &str, required: &[&str]) -> Option<String> {
        if !self.has_table(table) {
            return Some(format!("table {table}"));
        }
        required
            .iter()
            .find(|c| !self.has(table, c))
            .map(|c| format!("column {table}.{c}"))
    }
}

/// A `SELECT` over one table (alias `t`) built column by column.
pub struct Select<'s> {
    schema: &'s Schema,
    table: &'static str,
    cols: Vec<String>,
    joins: Vec<String>,
}

impl<'s> Select<'s> {
    /// A select over `table`; the first column is its `rowid`.
    pub fn new(schema: &'s Schema, table: &'static str) -> Self {
        Select {
            schema,
            table,
            cols: vec!["t.rowid".into()],
            joins: Vec::new(),
        }
    }

    /// Selects `column` (NULL when the table lacks it); returns its index.
    pub fn col(&mut self, column: &str) -> usize {
        let e = if self.schema.has(self.table, column) {
            format!("t.\"{column}\"")
        } else {
            "NULL".into()
        };
        self.cols.push(e);
        self.cols.len() - 1
    }

    /// Selects the first of `columns` the table has (NULL when none).
    pub fn first_of(&mut self, columns: &[&str]) -> usize {
        match columns.iter().find(|c| self.schema.has(self.table, c)) {
            Some(c) => self.col(c),
            None => self.col(""),
        }
    }

    /// Selects the `STRING_IDS` value of the id in `column` (NULL when the column, the
    /// table `STRING_IDS` or the id is missing); returns its index.
    pub fn string(&mut self, column: &str) -> usize {
        if !self.schema.has(self.table, column) || !self.schema.has("STRING_IDS", "value") {
            return self.col("");
        }
        let a = format!("s{}", self.joins.len());
        self.joins.push(format!(
            "LEFT JOIN STRING_IDS {a} ON {a}.id = t.\"{column}\""
        ));
        self.cols.push(format!("{a}.value"));
        self.cols.len() - 1
    }

    /// Adds a raw join (e.g. `JOIN TASK k ON …`).
    pub fn join(&mut self, j: &str) {
        self.joins.push(j.into());
    }

    /// Adds a raw expression over `t` (e.g. a cast); returns its index.
    pub fn expr(&mut self, e: &str) -> usize {
        self.cols.push(e.into());
        self.cols.len() - 1
    }

    /// The SQL text, with `tail` (a `WHERE` / `ORDER BY`) appended.
    pub fn sql(&self, tail: &str) -> String {
        format!(
            "SELECT {} FROM \"{}\" t {} {tail}",
            self.cols.join(", "),
            self.table,
            self.joins.join(" ")
        )
    }
}

/// A text cell: NULL and non-text values as `""` (integers as their decimal text).
pub fn text(r: &rusqlite::Row<'_>, i: usize) -> String {
    use rusqlite::types::ValueRef;
    match r.get_ref(i) {
        Ok(ValueRef::Text(t)) => String::from_utf8_lossy(t).into_owned(),
        Ok(ValueRef::Integer(v)) => v.to_string(),
        Ok(ValueRef::Real(v)) => v.to_string(),
        _ => String::new(),
    }
}

/// An integer cell: integers, integral reals and decimal text (torch_npu stores
/// `PYTORCH_API.startNs` as text, ascend-db.md §4); anything else `None`.
pub fn int(r: &rusqlite::Row<'_>, i: usize) -> Option<i64> {
    use rusqlite::types::ValueRef;
    match r.get_ref(i).ok()? {
        ValueRef::Integer(v) => Some(v),
        ValueRef::Real(v) if v.fract() == 0.0 && v.abs() < 9.0e18 => Some(v as i64),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// A real cell (integers and decimal text too).
pub fn real(r: &rusqlite::Row<'_>, i: usize) -> Option<f64> {
    use rusqlite::types::ValueRef;
    match r.get_ref(i).ok()? {
        ValueRef::Integer(v) => Some(v as f64),
        ValueRef::Real(v) => Some(v),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        _ => None,
    }
}
