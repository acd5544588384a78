//! The communication section of a rank's anomaly report (docs/rules/anomaly.md "Communication
//! section"): the rank's totals and ratios, per group, and the slow-rank votes and slow links
//! of the rank when several ranks were analysed together (`analysis::comm::rank_view`).

use std::fmt::Write;

use crate::analysis::comm::rank_view::{CommTotals, CrossRankComm, RankCommView};

/// What the section shows of one rank.
pub struct CommSection<'a> {
    /// The rank's totals and groups.
    pub view: &'a RankCommView,
    /// The cross-rank rules over the ranks analysed together (`None`: one rank only, or an
    /// export that holds this rank alone).
    pub cross: Option<&'a CrossRankComm>,
}

fn row(o: &mut String, first: &str, t: &CommTotals) {
    let _ = writeln!(
        o,
        "| {first}{} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.4} | {:.4} |",
        t.n_ops,
        t.elapse_ms,
        t.transit_ms,
        t.wait_ms,
        t.sync_ms,
        t.idle_ms,
        t.wait_ratio,
        t.sync_ratio
    );
}

/// Appends the section of rank `rank` (its id; `None`: unknown, no cross-rank rows).
pub fn write_comm_section(o: &mut String, rank: Option<i64>, s: &CommSection<'_>) {
    let _ = writeln!(o, "\n## Communication\n");
    let _ = writeln!(
        o,
        "Every HCCL op of this rank (`communication.json`, or `analysis.db` for a DB export), all steps; the formulas of msprof-analyze's `Total Op Info` (times in ms; wait ratio = wait / (wait + transit), sync ratio = sync / (sync + transit), rounded to 4 places).\n"
    );
    let head = "| ops | elapse_ms | transit_ms | wait_ms | sync_ms | idle_ms | wait ratio | sync ratio |\n|---:|---:|---:|---:|---:|---:|---:|---:|";
    let _ = writeln!(o, "{head}");
    row(o, "", &s.view.total);
    if s.view.groups.len() > 1 {
        let _ = writeln!(o, "\nPer group:\n");
        let _ = writeln!(o, "| group | type | ops | elapse_ms | transit_ms | wait_ms | sync_ms | idle_ms | wait ratio | sync ratio |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (g, kind, t) in &s.view.groups {
            row(o, &format!("`{g}` | {kind} | "), t);
        }
    }
    let Some(c) = s.cross else {
        let _ = writeln!(
            o,
            "\nSlow ranks and slow links: not computed here (they compare ranks, and this analysis holds one rank with communication ops); `proflens comm` over the run's communication files computes them."
        );
        return;
    };
    let mine: Vec<_> = c
        .slow_ranks
        .iter()
        .filter(|v| Some(v.rank) == rank)
        .collect();
    let _ = writeln!(
        o,
        "\nAcross the {} ranks analysed together ({} op(s) tested; Dixon's test up to 100 ranks, else 3σ; a vote names the rank with the shortest time, the one the others waited for):\n",
        c.ranks, c.ops_tested
    );
    if mine.is_empty() {
        let _ = writeln!(o, "- Slow rank: no op votes this rank slow.");
    } else {
        let _ = writeln!(
            o,
            "- Slow rank: **{} op(s)** vote this rank slow{}:\n",
            mine.len(),
            if mine.len() > 20 {
                " (the first 20 by start time)"
            } else {
                ""
            }
        );
        let _ = writeln!(o, "| group | op | ranks | test | statistic | threshold | time_us | mean_us |\n|---|---|---:|---|---:|---:|---:|---:|");
        for v in mine.iter().take(20) {
            let _ = writeln!(
                o,
                "| `{}` | `{}` | {} | {} | {:.4} | {:.4} | {:.3} | {:.3} |",
                v.group,
                v.op,
                v.n,
                v.evidence.test,
                v.evidence.statistic,
                v.evidence.threshold,
                v.time_us,
                v.mean_us
            );
        }
        let _ = writeln!(o);
    }
    if !c.has_data_size {
        let _ = writeln!(o, "- Slow links: not computable: the rule groups ops by data size, and no op has one (it comes from the HCCL op events of `trace_view.json` or the DB's `COMMUNICATION_OP`).");
        return;
    }
    let links: Vec<_> = c.slow_links.iter().collect();
    if links.is_empty() {
        let _ = writeln!(o, "- Slow links: none flagged.");
    }
    for l in links {
        let _ = writeln!(
            o,
            "- Slow link `{}`: {} op(s), mean {:.1} ns, std {:.1} ns, offset ratio {:.4}; ops {}.",
            l.name,
            l.count,
            l.mean_ns,
            l.std_ns,
            l.offset_ratio,
            l.ops
                .iter()
                .map(|x| format!("`{x}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}
