//! The "Across ranks" table of a rank's report (anomaly.md §13.4): one row per analysed rank,
//! with the role column when the ranks hold several roles.

use std::fmt::Write;

use crate::analysis::anomaly::cross_rank::RankRow;

/// Appends the table of `cross` (more than one rank).
pub fn write_across(o: &mut String, cross: &[RankRow]) {
    // Grouped by role (`cross_rank::flag_slow_by_role`): the role column says which ranks
    // each row's median and robust z were computed among.
    let grouped = cross.iter().any(|c| c.group.is_some());
    if grouped {
        let _ = writeln!(o, "\n## Across ranks\n\nThe ranks hold several roles: the median, robust z and slow flag of each row are computed among the ranks of its role.\n\n| role | rank | steps | service_ms avg | busy_union_ms avg | underfeed avg | comm_ms | comm wait ratio | bubbles/step | idle pattern | robust z | slow |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|");
    } else {
        let _ = writeln!(o, "\n## Across ranks\n\n| rank | steps | service_ms avg | busy_union_ms avg | underfeed avg | comm_ms | comm wait ratio | bubbles/step | idle pattern | robust z | slow |\n|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|");
    }
    for c in cross {
        if grouped {
            let _ = write!(
                o,
                "| {} ",
                crate::report::snapshot_md::md_code(c.group.as_deref().unwrap_or(""))
            );
        }
        let _ = writeln!(
            o,
            "| {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {:.1} | {} | {} | {} |",
            c.rank_id,
            c.steps,
            c.service_ms_avg,
            c.busy_union_ms_avg,
            c.underfeed_ratio_avg,
            c.comm_total_ms,
            c.comm_wait_ratio_weighted
                .map(|x| format!("{x:.3}"))
                .unwrap_or_else(|| "—".into()),
            c.bubble_count_avg,
            c.dominant_idle_pattern,
            // Not compared (no peer in its role): "—", as a one-rank collective's skew.
            c.robust_z
                .map(|z| format!("{z:.2}"))
                .unwrap_or_else(|| "—".into()),
            if c.slow { "**slow**" } else { "" }
        );
    }
}
