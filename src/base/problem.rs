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
    /// [`Self::extend`], leaving out each kept problem of `other` whose text (code, position,
    /// message) is in `said`, and adding the others' texts to it. A rank folder's own findings
    /// are reported by each of its analyses (each analysis's output stands alone); a list over
    /// the analyses (the page's problems of a run) says each once. The counts leave the
    /// repeats out too.
    pub fn extend_unsaid(&mut self, other: Problems, said: &mut std::collections::HashSet<String>) {
        // What `other` only counted: its counts by code less its kept problems.
        let mut counted_only = other.by_code;
        for p in other.kept {
            if let Some(n) = counted_only.get_mut(p.code) {
                *n = n.saturating_sub(1);
            }
            if said.insert(format!("{}\u{0}{}\u{0}{}", p.code, p.at, p.message)) {
                self.push(p);
            }
        }
        for (code, n) in counted_only.into_iter().filter(|&(_, n)| n > 0) {
            self.total += n;
            *self.by_code.entry(code).or_default() += n;
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

    #[test]
    fn extend_unsaid_says_a_finding_of_two_analyses_once() {
        let p = |code, file: &str, m: &str| {
            Problem::new(Severity::Error, code, Position::file(file), m)
        };
        let mut said = std::collections::HashSet::new();
        let mut run = Problems::new();
        // The memory analysis of a rank: its folder's note and one of its own.
        let mut memory = Problems::new();
        memory.push(p("ASC-DB-003", "r/x.db", "not read"));
        memory.push(p("MEM-CSV-001", "r/m.csv", "bad row"));
        run.extend_unsaid(memory, &mut said);
        // Its anomaly analysis: the same note, a finding at another place with the same
        // words (said), and a count beyond the kept ones (only counted: stays counted).
        let mut anomaly = Problems::new();
        anomaly.push(p("ASC-DB-003", "r/x.db", "not read"));
        anomaly.push(p("MEM-CSV-001", "r/other.csv", "bad row"));
        anomaly.total += 5;
        *anomaly.by_code.entry("ANOM-X").or_default() += 5;
        run.extend_unsaid(anomaly, &mut said);
        let kept: Vec<(&str, &str)> = run.kept().iter().map(|p| (p.code, &*p.at.file)).collect();
        assert_eq!(
            kept,
            [
                ("ASC-DB-003", "r/x.db"),
                ("MEM-CSV-001", "r/m.csv"),
                ("MEM-CSV-001", "r/other.csv")
            ]
        );
        assert_eq!(
            (run.total(), run.count("ASC-DB-003"), run.count("ANOM-X")),
            (8, 1, 5)
        );
    }
}
