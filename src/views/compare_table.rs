//! The Compare tab's tables: the row order for one sort and filter, and each
//! cell's display text. Pure and natively tested; the UI renders what these return.
//!
//! * Filter: a case-insensitive substring of any text cell of the row (site, name, step,
//!   change); empty = every row.
//! * Sort: by one column, stable (ties keep the document's order: the largest change first),
//!   missing values last in both directions; numbers numerically, text by code point.

use std::cmp::Ordering;

use crate::base::format;
use crate::protocol::compare::{CellDto, CompareStep, CompareTableDto, UnitDto};

/// A sort: column index and direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sort {
    /// Column index.
    pub column: usize,
    /// Descending (largest first).
    pub desc: bool,
}

impl Sort {
    /// `3d` / `3a` (column, direction) as kept in the URL.
    pub fn to_token(self) -> String {
        format!("{}{}", self.column, if self.desc { 'd' } else { 'a' })
    }
    /// Parses [`Sort::to_token`]; `None` for anything else.
    pub fn parse(s: &str) -> Option<Sort> {
        let (num, dir) = s.split_at(s.len().checked_sub(1)?);
        let desc = match dir {
            "d" => true,
            "a" => false,
            _ => return None,
        };
        Some(Sort {
            column: num.parse().ok()?,
            desc,
        })
    }
}

fn num(c: &CellDto) -> Option<f64> {
    match c {
        CellDto::Int(i) => Some(*i as f64),
        CellDto::Num(f) => Some(*f),
        _ => None,
    }
}

fn cmp_cells(a: &CellDto, b: &CellDto) -> Ordering {
    match (a, b) {
        (CellDto::Int(x), CellDto::Int(y)) => x.cmp(y),
        (CellDto::Text(x), CellDto::Text(y)) => x.cmp(y),
        _ => match (num(a), num(b)) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            _ => Ordering::Equal,
        },
    }
}

fn missing(c: &CellDto) -> bool {
    matches!(c, CellDto::Null)
}

/// True when some text cell of `row` contains `needle` (already lower-cased).
fn matches(row: &[CellDto], needle: &str) -> bool {
    needle.is_empty()
        || row.iter().any(|c| match c {
            CellDto::Text(s) => s.to_lowercase().contains(needle),
            _ => false,
        })
}

/// The rows of `t` to show, in order: those matching `filter`, sorted by `sort` (the
/// document's order when `None` or the column does not exist).
pub fn order(t: &CompareTableDto, sort: Option<Sort>, filter: &str) -> Vec<usize> {
    let needle = filter.trim().to_lowercase();
    let mut ids: Vec<usize> = (0..t.rows.len())
        .filter(|&i| matches(&t.rows[i], &needle))
        .collect();
    if let Some(s) = sort.filter(|s| s.column < t.columns.len()) {
        let key = |i: usize| &t.rows[i][s.column];
        crate::base::sort::sort_by(&mut ids, |&i, &j| {
            let (a, b) = (key(i), key(j));
            match (missing(a), missing(b)) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                _ if s.desc => cmp_cells(b, a),
                _ => cmp_cells(a, b),
            }
        });
    }
    ids
}

fn value(unit: UnitDto, v: f64) -> String {
    match unit {
        UnitDto::Bytes => format::bytes(v),
        UnitDto::Ms => format::duration_ms(v),
        UnitDto::Us => format::duration_ms(v / 1000.0),
        UnitDto::Mib => format::mib(v),
        UnitDto::Kib => format::kib(v),
        UnitDto::Count => format::thousands(v as i64),
        UnitDto::Number | UnitDto::Text | UnitDto::Site => format::fixed(v, 3),
    }
}

/// The display text of a cell of `unit`; `delta` cells carry their sign (`+1.50 MiB`, `−`
/// for negative), zero deltas read `0`. Missing values read `–`.
pub fn text(c: &CellDto, unit: UnitDto, delta: bool) -> String {
    let v = match c {
        CellDto::Null => return "–".into(),
        CellDto::Text(s) if unit == UnitDto::Site => return crate::views::format::site_label(s),
        CellDto::Text(s) => return s.clone(),
        CellDto::Int(i) if unit == UnitDto::Bytes => {
            let s = format::bytes_i(i.unsigned_abs().min(i64::MAX as u64) as i64);
            return match (delta, i.signum()) {
                (true, 1) => format!("+{s}"),
                (true, -1) => format!("−{s}"),
                (true, _) => "0".into(),
                _ => s,
            };
        }
        other => num(other).unwrap_or(0.0),
    };
    if !delta {
        return value(unit, v);
    }
    if v == 0.0 {
        return "0".into();
    }
    let s = value(unit, v.abs());
    if v > 0.0 {
        format!("+{s}")
    } else {
        format!("−{s}")
    }
}

/// The exact value of a cell (tooltips): integers in full, floats as the document has them.
pub fn exact(c: &CellDto) -> String {
    match c {
        CellDto::Null => "null".into(),
        CellDto::Text(s) => s.clone(),
        CellDto::Int(i) => i.to_string(),
        CellDto::Num(f) => f.to_string(),
    }
}

/// `+`, `−` or empty: the sign class of a delta cell (for colouring).
pub fn sign(c: &CellDto) -> &'static str {
    match num(c) {
        Some(v) if v > 0.0 => "up",
        Some(v) if v < 0.0 => "down",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::compare::ColumnDto;

    fn t() -> CompareTableDto {
        let col = |title: &str, unit| ColumnDto {
            title: title.into(),
            field: title.into(),
            unit,
            delta: false,
        };
        CompareTableDto {
            id: "x".into(),
            title: "x".into(),
            columns: vec![col("site", UnitDto::Text), col("d", UnitDto::Bytes)],
            rows: vec![
                vec![CellDto::Text("Alpha @ a.py:1".into()), CellDto::Int(-5)],
                vec![CellDto::Text("beta @ b.py:2".into()), CellDto::Null],
                vec![CellDto::Text("gamma @ a.py:3".into()), CellDto::Int(10)],
                vec![CellDto::Text("delta @ c.py:4".into()), CellDto::Int(10)],
            ],
        }
    }

    #[test]
    fn filter_and_sort_keep_ties_and_put_missing_last() {
        let t = t();
        assert_eq!(order(&t, None, ""), vec![0, 1, 2, 3]);
        assert_eq!(order(&t, None, "A.PY"), vec![0, 2]);
        assert_eq!(order(&t, None, "nothing"), Vec::<usize>::new());
        let desc = Sort {
            column: 1,
            desc: true,
        };
        assert_eq!(order(&t, Some(desc), ""), vec![2, 3, 0, 1]);
        let asc = Sort {
            column: 1,
            desc: false,
        };
        assert_eq!(order(&t, Some(asc), ""), vec![0, 2, 3, 1]);
        assert_eq!(
            order(
                &t,
                Some(Sort {
                    column: 0,
                    desc: false
                }),
                ""
            ),
            vec![0, 1, 3, 2]
        );
        assert_eq!(
            order(
                &t,
                Some(Sort {
                    column: 9,
                    desc: false
                }),
                ""
            ),
            vec![0, 1, 2, 3]
        );
    }

    #[test]
    fn sort_tokens_round_trip() {
        let s = Sort {
            column: 12,
            desc: true,
        };
        assert_eq!(Sort::parse(&s.to_token()), Some(s));
        assert_eq!(Sort::parse("3a").map(|s| s.desc), Some(false));
        for bad in ["", "d", "x3d", "3", "3z", "-1d"] {
            assert_eq!(Sort::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn texts_carry_signs_and_units() {
        assert_eq!(
            text(&CellDto::Int(-1024), UnitDto::Bytes, true),
            "−1.00 KiB"
        );
        assert_eq!(text(&CellDto::Int(2048), UnitDto::Bytes, true), "+2.00 KiB");
        assert_eq!(text(&CellDto::Int(0), UnitDto::Bytes, true), "0");
        assert_eq!(text(&CellDto::Null, UnitDto::Ms, true), "–");
        assert_eq!(text(&CellDto::Int(1234), UnitDto::Count, false), "1,234");
        assert_eq!(
            text(&CellDto::Text("new".into()), UnitDto::Text, false),
            "new"
        );
        // A site cell reads short; its exact text (the title, the exports) is the full label.
        let node = CellDto::Text(
            "torch::autograd::generated::DivBackward0::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&) @ ??:0".into(),
        );
        assert_eq!(text(&node, UnitDto::Site, false), "DivBackward0 (autograd)");
        assert!(
            exact(&node).starts_with("torch::autograd::generated::DivBackward0::apply(std::vector")
        );
        assert_eq!(sign(&CellDto::Num(-0.5)), "down");
        assert_eq!(exact(&CellDto::Num(1.5)), "1.5");
    }
}

/// The URL form of a compared step (`cmp.step`): `all`, or the step counted from 1.
pub fn step_to_hash(step: CompareStep) -> Option<String> {
    match step {
        CompareStep::First => None,
        CompareStep::Nth(n) => Some(n.to_string()),
        CompareStep::All => Some("all".into()),
    }
}

/// Reads `cmp.step` back; `None` when malformed (0 or not a number).
pub fn step_from_hash(s: &str) -> Option<CompareStep> {
    match s {
        "all" => Some(CompareStep::All),
        n => match n.parse::<u32>().ok()? {
            0 => None,
            1 => Some(CompareStep::First),
            n => Some(CompareStep::Nth(n)),
        },
    }
}

#[cfg(test)]
mod step_hash_tests {
    use super::*;

    #[test]
    fn a_step_reads_back_from_its_url_form() {
        for s in [CompareStep::Nth(3), CompareStep::All] {
            assert_eq!(step_from_hash(&step_to_hash(s).unwrap()), Some(s));
        }
        assert_eq!(step_to_hash(CompareStep::First), None);
        assert_eq!(step_from_hash("1"), Some(CompareStep::First));
        assert_eq!(step_from_hash("0"), None);
        assert_eq!(step_from_hash("x"), None);
    }
}
