//! Problems: findings about the input that did not stop the analysis
//! (ascend-memory.md §10.3 shape: severity, code, position, message).

use std::collections::BTreeMap;

use super::Position;

/// How bad a problem is (ascend-memory.md §10.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Context only; nothing was dropped or changed.
    Info,
    /// Data was kept, with a caveat.
    Warning,
    /// Data was dropped (a row, a file, a rank).
    Error,
}

/// One finding about the input.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// How bad it is.
    pub severity: Severity,
    /// Stable machine code, e.g. `MEM-CSV-003` (spec tables list them).
    pub code: &'static str,
    /// Where it was found.
    pub at: Position,
    /// Human message: what was found and what was expected.
    pub message: String,
}

impl Problem {
    /// Builds a problem.
    pub fn new(
        severity: Severity,
        code: &'static str,
        at: Position,
        message: impl Into<String>,
    ) -> Self {
        Problem {
            severity,
            code,
            at,
            message: message.into(),
        }
    }
}

/// The problems of one run: the first [`Problems::MAX_KEPT`] in full, exact counts of all by code.
///
/// Bounded so that a file with a million bad rows cannot exhaust memory.
#[derive(Clone, Debug, Default)]
pub struct Problems {
    kept: Vec<Problem>,
    total: u64,
    by_code: BTreeMap<&'static str, u64>,
}

impl Problems {
    /// How many problems are kept in full; the rest are only counted.
    pub const MAX_KEPT: usize = 10_000;

    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }
    /// Records one problem.
    pub fn push(&mut self, p: Problem) {
        self.total += 1;
        *self.by_code.entry(p.code).or_default() += 1;
        if self.kept.len() < Self::MAX_KEPT {
            self.kept.push(p);
        }
    }
    /// Records `p` when there is one (e.g. `Tally::problem`).
    pub fn push_some(&mut self, p: Option<Problem>) {
        if let Some(p) = p {
            self.push(p);
        }
    }
    /// Moves every problem of `other` into `self`.
    pub fn extend(&mut self, other: Problems) {
        self.total += other.total - other.kept.len() as u64;
        for (code, n) in &other.by_code {
            *self.by_code.entry(code).or_default() += n;
        }
        for p in other.kept {
            self.total += 1;
            if self.kept.len() < Self::MAX_KEPT {
                self.kept.push(p);
            }
        }
    }
    /// The problems kept in full, in the order found.
    pub fn kept(&self) -> &[Problem] {
        &self.kept
    }
    /// Number of problems recorded, kept or not.
    pub fn total(&self) -> u64 {
        self.total
    }
    /// Number recorded with `code`.
    pub fn count(&self, code: &str) -> u64 {
        self.by_code.get(code).copied().unwrap_or(0)
    }
    /// Counts by code.
    pub fn by_code(&self) -> &BTreeMap<&'static str, u64> {
        &self.by_code
    }
    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extend_keeps_exact_counts() {
        let mut a = Problems::new();
        a.push(Problem::new(
            Severity::Warning,
            "X-1",
            Position::file("a"),
            "m",
        ));
        let mut b = Problems::new();
        b.push(Problem::new(
            Severity::Error,
            "X-2",
            Position::file("b"),
            "m",
        ));
        b.push(Problem::new(
            Severity::Error,
            "X-2",
            Position::file("b"),
            "m",
        ));
        a.extend(b);
        assert_eq!(a.total(), 3);
        assert_eq!(a.count("X-2"), 2);
        assert_eq!(a.kept().len(), 3);
    }
}
