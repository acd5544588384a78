//! A [`ClusterSummary`] read by the cutting reader: the top-level object member by member,
//! the list members element by element (a rank, a cross-rank row, an outlier, …), every
//! element and other member parsed from its own bytes by `serde_json::from_slice`. The
//! same value as `serde_json::from_slice` of the whole text gives (the tests compare them):
//! members in any order, unknown members skipped, a missing member or a member given twice
//! refused with serde's words, the members with `#[serde(default)]` in
//! `protocol::cluster` defaulted here too.

use serde::de::DeserializeOwned;

use crate::parse::json_cut::{CutError, CutKind, Cutter};
use crate::protocol::cluster::ClusterSummary;

/// One member, once.
fn set<T>(slot: &mut Option<T>, v: T, name: &str, cut: &Cutter<'_>) -> Result<(), CutError> {
    if slot.is_some() {
        return Err(refusal(cut, format!("duplicate field `{name}`")));
    }
    *slot = Some(v);
    Ok(())
}

fn refusal(cut: &Cutter<'_>, why: String) -> CutError {
    CutError {
        kind: CutKind::Syntax(why),
        at: cut.at(),
    }
}

/// A member that must be there.
fn need<T>(slot: Option<T>, name: &str, cut: &Cutter<'_>) -> Result<T, CutError> {
    slot.ok_or_else(|| refusal(cut, format!("missing field `{name}`")))
}

fn one<T: DeserializeOwned>(cut: &mut Cutter<'_>) -> Result<T, CutError> {
    cut.value()?.parse()
}

/// Reads the summary that is `cut`'s whole document.
pub(super) fn summary(cut: &mut Cutter<'_>) -> Result<ClusterSummary, CutError> {
    const LIST: &str = "a list";
    let (mut format, mut version, mut generator, mut roots, mut run) =
        (None, None, None, None, None);
    let (mut rank_count, mut ranks, mut cross_rank, mut slow_ranks) = (None, None, None, None);
    let (mut matrices, mut outliers, mut outliers_dropped) = (None, None, None);
    let (mut problems_total, mut problems, mut problems_dropped) = (None, None, None);
    let (mut comm_slow_ranks, mut comm_slow_links) = (None, None);
    cut.begin_object("an object (a cluster summary)")?;
    while let Some(key) = cut.next_key()? {
        let k = key.as_str();
        match k {
            "format" => set(&mut format, one(cut)?, k, cut)?,
            "version" => set(&mut version, one(cut)?, k, cut)?,
            "generator" => set(&mut generator, one(cut)?, k, cut)?,
            "roots" => set(&mut roots, cut.list(LIST)?, k, cut)?,
            "run" => set(&mut run, one(cut)?, k, cut)?,
            "rank_count" => set(&mut rank_count, one(cut)?, k, cut)?,
            "ranks" => set(&mut ranks, cut.list(LIST)?, k, cut)?,
            "cross_rank" => set(&mut cross_rank, cut.list(LIST)?, k, cut)?,
            "slow_ranks" => set(&mut slow_ranks, cut.list(LIST)?, k, cut)?,
            "matrices" => set(&mut matrices, one(cut)?, k, cut)?,
            "outliers" => set(&mut outliers, cut.list(LIST)?, k, cut)?,
            "outliers_dropped" => set(&mut outliers_dropped, one(cut)?, k, cut)?,
            "problems_total" => set(&mut problems_total, one(cut)?, k, cut)?,
            "problems" => set(&mut problems, cut.list(LIST)?, k, cut)?,
            "problems_dropped" => set(&mut problems_dropped, one(cut)?, k, cut)?,
            "comm_slow_ranks" => set(&mut comm_slow_ranks, cut.list(LIST)?, k, cut)?,
            "comm_slow_links" => set(&mut comm_slow_links, cut.list(LIST)?, k, cut)?,
            _ => cut.skip()?,
        }
    }
    let s = ClusterSummary {
        format: need(format, "format", cut)?,
        version: need(version, "version", cut)?,
        generator: need(generator, "generator", cut)?,
        roots: need(roots, "roots", cut)?,
        run: need(run, "run", cut)?,
        rank_count: need(rank_count, "rank_count", cut)?,
        ranks: need(ranks, "ranks", cut)?,
        cross_rank: need(cross_rank, "cross_rank", cut)?,
        slow_ranks: need(slow_ranks, "slow_ranks", cut)?,
        matrices: need(matrices, "matrices", cut)?,
        outliers: need(outliers, "outliers", cut)?,
        outliers_dropped: need(outliers_dropped, "outliers_dropped", cut)?,
        problems_total: need(problems_total, "problems_total", cut)?,
        problems: need(problems, "problems", cut)?,
        problems_dropped: need(problems_dropped, "problems_dropped", cut)?,
        comm_slow_ranks: comm_slow_ranks.unwrap_or_default(),
        comm_slow_links: comm_slow_links.unwrap_or_default(),
    };
    cut.end()?;
    Ok(s)
}

#[cfg(test)]
mod tests;
