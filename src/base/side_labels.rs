//! How the two sides of a comparison are named when their names are equal
//! (docs/compare.md, "Side names").

/// The names of two compared sides: `a_name` and `b_name` unchanged when they differ (or when
/// the paths are the same path: one file compared with itself); else, for each side, the
/// shortest trailing part of its path (`a_path`, `b_path`; `/` or `\` separated) that differs
/// from the other's: `run1/trace.json` and `run2/trace.json` for `/x/run1/trace.json` and
/// `/x/run2/trace.json` both named `trace.json`.
pub fn side_labels(a_name: &str, a_path: &str, b_name: &str, b_path: &str) -> (String, String) {
    fn parts(p: &str) -> Vec<&str> {
        p.split(['/', '\\'])
            .filter(|c| !c.is_empty() && *c != ".")
            .collect()
    }
    let (pa, pb) = (parts(a_path), parts(b_path));
    if a_name != b_name || pa == pb {
        return (a_name.to_string(), b_name.to_string());
    }
    let tail = |p: &[&str], k: usize| p[p.len().saturating_sub(k)..].join("/");
    let longest = pa.len().max(pb.len());
    (1..=longest)
        .map(|k| (tail(&pa, k), tail(&pb, k)))
        .find(|(x, y)| x != y)
        .unwrap_or_else(|| (a_name.to_string(), b_name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::side_labels;

    fn l(a: &str, ap: &str, b: &str, bp: &str) -> (String, String) {
        side_labels(a, ap, b, bp)
    }

    #[test]
    fn different_names_stay() {
        assert_eq!(
            l("control", "/x/control", "test", "/x/test"),
            ("control".into(), "test".into())
        );
    }

    #[test]
    fn equal_names_take_the_shortest_differing_tail() {
        assert_eq!(
            l(
                "trace.json",
                "/x/run1/trace.json",
                "trace.json",
                "/x/run2/trace.json"
            ),
            ("run1/trace.json".into(), "run2/trace.json".into())
        );
        assert_eq!(
            l("s.pickle", "/x/a/n/s.pickle", "s.pickle", "/x/b/n/s.pickle"),
            ("a/n/s.pickle".into(), "b/n/s.pickle".into())
        );
        assert_eq!(
            l("t.json", "C:\\r1\\t.json", "t.json", "C:\\r2\\t.json"),
            ("r1/t.json".into(), "r2/t.json".into())
        );
    }

    #[test]
    fn one_path_inside_the_other_folder() {
        assert_eq!(
            l("t.json", "t.json", "t.json", "run2/t.json"),
            ("t.json".into(), "run2/t.json".into())
        );
    }

    #[test]
    fn the_same_path_stays() {
        assert_eq!(
            l("t.json", "/x/t.json", "t.json", "/x/./t.json"),
            ("t.json".into(), "t.json".into())
        );
    }
}
