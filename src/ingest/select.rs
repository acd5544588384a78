//! Which rank folders a run uses (ascend-memory.md §2.2): the `rank_list` filter
//! (`all`, or comma-separated ids and `a-b` ranges), the role filter (exact names or
//! `*` globs) and the source filter (`source_index` values).

/// A parsed selection. The default selects everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// `None` = `all`; else inclusive id ranges.
    pub ranks: Option<Vec<(i64, i64)>>,
    /// Role patterns (`*` matches any run of characters); empty = all roles.
    pub roles: Vec<String>,
    /// Allowed `source_index` values; empty = all.
    pub sources: Vec<u32>,
}

/// Error of [`Selection::parse_ranks`]: the offending piece.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadRankList(pub String);

impl std::fmt::Display for BadRankList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot read '{}' as a rank id or an a-b range", self.0)
    }
}

fn glob(pat: &str, s: &str) -> bool {
    let parts: Vec<&str> = pat.split('*').collect();
    if parts.len() == 1 {
        return pat == s;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !s.starts_with(first)
        || !s[first.len()..].ends_with(last)
        || s.len() < first.len() + last.len()
    {
        return false;
    }
    let mut rest = &s[first.len()..s.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(p) => rest = &rest[p + mid.len()..],
            None => return false,
        }
    }
    true
}

impl Selection {
    /// Parses a `rank_list`: `all` (or empty) → every rank; else `0,2,4-7`.
    pub fn parse_ranks(text: &str) -> Result<Option<Vec<(i64, i64)>>, BadRankList> {
        let t = text.trim();
        if t.is_empty() || t == "all" {
            return Ok(None);
        }
        let mut v = Vec::new();
        for piece in t.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || BadRankList(piece.to_string());
            let r = match piece.split_once('-') {
                Some((a, b)) => (
                    a.trim().parse().map_err(|_| bad())?,
                    b.trim().parse().map_err(|_| bad())?,
                ),
                None => {
                    let x: i64 = piece.parse().map_err(|_| bad())?;
                    (x, x)
                }
            };
            v.push(r);
        }
        Ok(Some(v))
    }

    /// True when the rank list is not `all` (parity then returns nothing, §2.2).
    pub fn restricts_ranks(&self) -> bool {
        self.ranks.is_some()
    }

    /// True when a folder with these facts is selected.
    pub fn selects(&self, role: &str, rank_id: Option<i64>, source_index: u32) -> bool {
        let rank_ok = match (&self.ranks, rank_id) {
            (None, _) => true,
            (Some(rs), Some(r)) => rs.iter().any(|(a, b)| *a <= r && r <= *b),
            (Some(_), None) => false,
        };
        let role_ok = self.roles.is_empty() || self.roles.iter().any(|p| glob(p, role));
        let src_ok = self.sources.is_empty() || self.sources.contains(&source_index);
        rank_ok && role_ok && src_ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_lists_roles_and_sources() {
        assert_eq!(Selection::parse_ranks("all"), Ok(None));
        assert_eq!(
            Selection::parse_ranks(" 0, 2,4-7 "),
            Ok(Some(vec![(0, 0), (2, 2), (4, 7)]))
        );
        assert_eq!(Selection::parse_ranks("1,x"), Err(BadRankList("x".into())));
        let s = Selection {
            ranks: Selection::parse_ranks("0,4-7").unwrap(),
            roles: vec!["actor_*".into(), "ref".into()],
            sources: vec![0],
        };
        assert!(s.selects("actor_update", Some(5), 0));
        assert!(!s.selects("actor_update", Some(3), 0));
        assert!(!s.selects("rollout", Some(0), 0));
        assert!(s.selects("ref", Some(0), 0));
        assert!(!s.selects("ref", Some(0), 1));
        assert!(!s.selects("ref", None, 0));
        assert!(Selection::default().selects("x", None, 9));
        assert!(glob("*_log_*", "actor_compute_log_prob"));
        assert!(!glob("a*b", "ab_"));
    }
}
