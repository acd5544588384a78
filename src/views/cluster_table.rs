//! The cluster view's rank table: the row order for one sort and filter, and the
//! choices of the filter. Pure functions of [`ClusterRankRow`]s (the page calls them on the
//! rows the worker sent once; 10,000 ranks sort in about a millisecond), natively tested.
//!
//! Rules: a sort is stable and breaks ties by the summary's order (role, rank id, rank dir);
//! a rank without a value in the sorted column (no anomaly result, a `null` robust z) comes
//! after every rank with one, in both directions; the filter keeps a rank when every set part
//! holds (role equal, slow, status equal).

use std::cmp::Ordering;

use crate::protocol::cluster_view::{ClusterColumn, ClusterFilter, ClusterRankRow, ClusterSort};

/// Indices into `rows` (positions, not [`ClusterRankRow::index`]) of the rows `filter` keeps,
/// in the order of `sort` (the summary's order when `None`).
pub fn order(
    rows: &[ClusterRankRow],
    sort: Option<ClusterSort>,
    filter: &ClusterFilter,
) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..rows.len() as u32)
        .filter(|&i| keeps(filter, &rows[i as usize]))
        .collect();
    if let Some(s) = sort {
        crate::base::sort::sort_by(&mut ids, |&a, &b| {
            compare(&rows[a as usize], &rows[b as usize], s)
        });
    }
    ids
}

/// True when `row` passes every set part of `filter`.
pub fn keeps(filter: &ClusterFilter, row: &ClusterRankRow) -> bool {
    filter.role.as_ref().is_none_or(|r| *r == row.role)
        && (!filter.slow_only || row.slow)
        && filter.status.as_ref().is_none_or(|s| *s == row.status)
}

/// The distinct values of a text column over `rows`, sorted (the filter's choices).
pub fn choices(rows: &[ClusterRankRow], of: fn(&ClusterRankRow) -> &str) -> Vec<String> {
    let mut v: Vec<String> = rows.iter().map(|r| of(r).to_string()).collect();
    crate::base::sort::sort(&mut v);
    v.dedup();
    v
}

/// The folder (or file) name "open this rank" asks for: the last segment of the summary's
/// `rank_dir` (`/data/run/actor/rank_7_ascend_pt/` → `rank_7_ascend_pt`; `\\` separators too).
pub fn expected_folder(rank_dir: &str) -> &str {
    let d = rank_dir.trim_end_matches(['/', '\\']);
    d.rsplit(['/', '\\']).next().unwrap_or(d)
}

/// True when the files picked for a rank (their relative paths) are that rank's folder: one
/// of them lies in a folder named [`expected_folder`], or is that file.
pub fn picked_matches(rank_dir: &str, paths: &[String]) -> bool {
    let want = expected_folder(rank_dir);
    !want.is_empty() && paths.iter().any(|p| p.split('/').any(|seg| seg == want))
}

/// A sortable value of one cell: a number (None = missing) or text.
enum Key<'a> {
    Num(Option<f64>),
    Text(&'a str),
}

fn key(r: &ClusterRankRow, c: ClusterColumn) -> Key<'_> {
    let num = |v: Option<f64>| Key::Num(v.filter(|x| !x.is_nan()));
    match c {
        ClusterColumn::Rank => num(r.rank_id.map(|v| v as f64)),
        ClusterColumn::Role => Key::Text(&r.role),
        ClusterColumn::Status => Key::Text(&r.status),
        ClusterColumn::Steps => num(Some(r.steps as f64)),
        ClusterColumn::ServiceMs => num(r.service_ms_avg),
        ClusterColumn::BusyUnionMs => num(r.busy_union_ms_avg),
        ClusterColumn::UnderfeedRatio => num(r.underfeed_ratio_avg),
        ClusterColumn::CommWait => num(r.comm_wait_ratio),
        ClusterColumn::Bubbles => num(r.bubble_count_avg),
        ClusterColumn::RobustZ => num(r.robust_z),
        ClusterColumn::Slow => num(Some(r.slow as u8 as f64)),
        ClusterColumn::Pattern => Key::Text(r.idle_pattern.as_deref().unwrap_or("")),
        ClusterColumn::Peak => num(r.peak_bytes.map(|b| b as f64)),
        // errors weigh more than any number of warnings
        ClusterColumn::Problems => num(Some(r.errors as f64 * 1e9 + r.warnings as f64)),
        ClusterColumn::RankDir => Key::Text(&r.rank_dir),
    }
}

fn compare(a: &ClusterRankRow, b: &ClusterRankRow, s: ClusterSort) -> Ordering {
    let dir = |o: Ordering| if s.descending { o.reverse() } else { o };
    let o = match (key(a, s.column), key(b, s.column)) {
        (Key::Num(Some(x)), Key::Num(Some(y))) => dir(x.total_cmp(&y)),
        (Key::Num(Some(_)), Key::Num(None)) => Ordering::Less,
        (Key::Num(None), Key::Num(Some(_))) => Ordering::Greater,
        (Key::Text(x), Key::Text(y)) => dir(x.cmp(y)),
        _ => Ordering::Equal,
    };
    o.then(a.index.cmp(&b.index))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(index: u32, rank: i64, role: &str, service: Option<f64>, slow: bool) -> ClusterRankRow {
        ClusterRankRow {
            index,
            rank_id: Some(rank),
            role: role.into(),
            rank_dir: format!("run/{role}/rank{rank}_ascend_pt"),
            status: if service.is_some() { "ok" } else { "failed" }.into(),
            steps: 8,
            service_ms_avg: service,
            slow,
            robust_z: service.map(|s| (s - 100.0) / 2.0),
            ..Default::default()
        }
    }

    fn table() -> Vec<ClusterRankRow> {
        vec![
            row(0, 0, "actor", Some(100.0), false),
            row(1, 1, "actor", Some(180.0), true),
            row(2, 2, "actor", None, false),
            row(3, 0, "learner", Some(100.0), false),
            row(4, 1, "learner", Some(99.5), false),
        ]
    }

    #[test]
    fn sorts_by_every_numeric_column_with_missing_values_last() {
        let t = table();
        let by = |column, descending| {
            order(
                &t,
                Some(ClusterSort { column, descending }),
                &ClusterFilter::default(),
            )
        };
        // longest service first: the straggler, then the two ties in summary order, the
        // failed rank (no value) last in both directions
        assert_eq!(by(ClusterColumn::ServiceMs, true), vec![1, 0, 3, 4, 2]);
        assert_eq!(by(ClusterColumn::ServiceMs, false), vec![4, 0, 3, 1, 2]);
        assert_eq!(by(ClusterColumn::RobustZ, true), vec![1, 0, 3, 4, 2]);
        assert_eq!(by(ClusterColumn::Slow, true), vec![1, 0, 2, 3, 4]);
        assert_eq!(by(ClusterColumn::Rank, false), vec![0, 3, 1, 4, 2]);
        assert_eq!(by(ClusterColumn::Role, true), vec![3, 4, 0, 1, 2]);
        assert_eq!(by(ClusterColumn::Status, false), vec![2, 0, 1, 3, 4]);
        // unsorted: the summary's order
        assert_eq!(
            order(&t, None, &ClusterFilter::default()),
            vec![0, 1, 2, 3, 4]
        );
    }

    #[test]
    fn problems_sort_errors_before_warnings() {
        let mut t = table();
        t[0].warnings = 40;
        t[3].errors = 1;
        let o = order(
            &t,
            Some(ClusterSort {
                column: ClusterColumn::Problems,
                descending: true,
            }),
            &ClusterFilter::default(),
        );
        assert_eq!(o, vec![3, 0, 1, 2, 4]);
    }

    #[test]
    fn filters_by_role_slow_and_status() {
        let t = table();
        let f = |role: Option<&str>, slow_only, status: Option<&str>| {
            let filter = ClusterFilter {
                role: role.map(Into::into),
                slow_only,
                status: status.map(Into::into),
            };
            order(&t, None, &filter)
        };
        assert_eq!(f(Some("learner"), false, None), vec![3, 4]);
        assert_eq!(f(None, true, None), vec![1]);
        assert_eq!(f(Some("learner"), true, None), Vec::<u32>::new());
        assert_eq!(f(None, false, Some("failed")), vec![2]);
        assert_eq!(f(Some("actor"), false, Some("ok")), vec![0, 1]);
        assert_eq!(choices(&t, |r| &r.role), vec!["actor", "learner"]);
        assert_eq!(choices(&t, |r| &r.status), vec!["failed", "ok"]);
    }

    #[test]
    fn open_this_rank_names_and_checks_the_folder() {
        assert_eq!(
            expected_folder("/data/run/actor/rank_7_ascend_pt/"),
            "rank_7_ascend_pt"
        );
        assert_eq!(
            expected_folder("C:\\runs\\rank_7_ascend_pt"),
            "rank_7_ascend_pt"
        );
        assert_eq!(
            expected_folder("traces/rank-3.pt.trace.json.gz"),
            "rank-3.pt.trace.json.gz"
        );
        assert_eq!(expected_folder("rank0"), "rank0");
        let picked = vec!["rank_7_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv".to_string()];
        assert!(picked_matches("/data/run/actor/rank_7_ascend_pt", &picked));
        assert!(!picked_matches("/data/run/actor/rank_8_ascend_pt", &picked));
        assert!(picked_matches(
            "t/rank-3.pt.trace.json.gz",
            &["rank-3.pt.trace.json.gz".to_string()]
        ));
        assert!(!picked_matches("", &picked));
    }

    #[test]
    fn ten_thousand_ranks_sort_and_filter() {
        let t: Vec<ClusterRankRow> = (0..10_000u32)
            .map(|i| {
                row(
                    i,
                    i as i64,
                    if i % 2 == 0 { "actor" } else { "learner" },
                    Some(100.0 + (i % 97) as f64),
                    i == 4242,
                )
            })
            .collect();
        let o = order(
            &t,
            Some(ClusterSort {
                column: ClusterColumn::ServiceMs,
                descending: true,
            }),
            &ClusterFilter::default(),
        );
        assert_eq!(o.len(), 10_000);
        // the largest value (196 = 100 + 96) first, ties by index
        assert_eq!(o[0], 96);
        assert_eq!(t[o[0] as usize].service_ms_avg, Some(196.0));
        assert!(o.windows(2).all(|w| {
            let (a, b) = (&t[w[0] as usize], &t[w[1] as usize]);
            a.service_ms_avg > b.service_ms_avg
                || (a.service_ms_avg == b.service_ms_avg && a.index < b.index)
        }));
        let slow = order(
            &t,
            None,
            &ClusterFilter {
                slow_only: true,
                ..Default::default()
            },
        );
        assert_eq!(slow, vec![4242]);
    }
}
