//! The communication matrix across ranks (communication.md §2.3).
//!
//! Per (step, group): the local → global map from the ranks' own self links `"i-i"` (first rank
//! wins, a conflict is a located warning); per op kind the links of every rank merged (transport
//! and op name: last wins; size and time added); each link converted to global ranks, or
//! dropped when an end is unmapped (`parity`) — by default recovered from the metadata's
//! `sorted(global_ranks)[local]` and marked; then the group total over the kinds that are not
//! `top`/`middle`/`bottom` (the `*-total` kinds, or every real op of 2023 files), bandwidth
//! `compute_ratio(size, time)`.

use std::collections::BTreeMap;

use super::round::compute_ratio;
use super::time::step_order;
use super::{CommOptions, LINKS_DROPPED, SELF_LINK_CONFLICT};
use crate::base::{Position, Problem, Severity};
use crate::model::comm::RankComm;

/// One link of the matrix, global ranks.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixRow {
    /// Step key.
    pub step: String,
    /// Group hash.
    pub group: String,
    /// `Total Op Info` for the group total, else the op kind (`allreduce-total`, …).
    pub kind: String,
    /// Global source rank.
    pub src: i64,
    /// Global destination rank.
    pub dst: i64,
    /// Transport (last kind wins).
    pub transport: String,
    /// Σ size (MB).
    pub size_mb: f64,
    /// Σ time (ms).
    pub time_ms: f64,
    /// `compute_ratio(size, time)`.
    pub bandwidth_gbps: f64,
    /// True when an end was mapped from `parallel_group_info`, not from a self link.
    pub mapped_from_metadata: bool,
    /// `Op Name` of the merged link (per kind only; last wins).
    pub op_name: String,
}

/// A link of one op kind left out of the matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct DroppedLink {
    /// Step key.
    pub step: String,
    /// Group hash.
    pub group: String,
    /// The op kind.
    pub kind: String,
    /// Local source rank, as written.
    pub src_local: String,
    /// Local destination rank.
    pub dst_local: String,
    /// The rank whose file holds it (the first, when several do).
    pub rank: i64,
    /// Σ size (MB) and time (ms) of the merged link.
    pub size_mb: f64,
    /// Σ time (ms).
    pub time_ms: f64,
    /// Why, in words.
    pub reason: String,
}

/// What [`build`] returns.
#[derive(Default)]
pub struct Built {
    /// Group totals.
    pub total: Vec<MatrixRow>,
    /// Per op kind.
    pub by_kind: Vec<MatrixRow>,
    /// Dropped links.
    pub dropped: Vec<DroppedLink>,
    /// Data checks.
    pub problems: Vec<Problem>,
}

struct Merged {
    rank: i64,
    transport: String,
    op_name: String,
    size: f64,
    time: f64,
}

/// Builds the matrix of `ranks` (ascending) with the metadata groups `meta`
/// (hash → (id, name, sorted global ranks)).
pub fn build(
    ranks: &[&RankComm],
    meta: &BTreeMap<String, (String, String, Vec<i64>)>,
    opts: &CommOptions,
) -> Built {
    // (step, group) → kinds in order of first appearance → (rank index, link index) in rank
    // then file order: one pass over every link.
    type Key<'a> = (&'a str, &'a str);
    type Kinds<'a> = Vec<(&'a str, Vec<(usize, usize)>)>;
    let mut index: BTreeMap<Key, Kinds> = BTreeMap::new();
    for (ri, r) in ranks.iter().enumerate() {
        for (i, l) in r.links.iter().enumerate() {
            if !opts.selects(&l.step) {
                continue;
            }
            let kinds = index
                .entry((l.step.as_str(), l.group.as_str()))
                .or_default();
            match kinds.iter_mut().find(|k| k.0 == l.kind) {
                Some(k) => k.1.push((ri, i)),
                None => kinds.push((l.kind.as_str(), vec![(ri, i)])),
            }
        }
    }
    let mut order: Vec<Key> = index.keys().copied().collect();
    crate::base::sort::sort_by(&mut order, |a, b| {
        (step_order(a.0), a.1).cmp(&(step_order(b.0), b.1))
    });
    let mut out = Built::default();
    for (step, group) in order {
        let kinds = &index[&(step, group)];
        // A link key without `-` stops that rank's links of the kind (msprof-analyze).
        let links_of = |entries: &[(usize, usize)]| -> Vec<(usize, usize)> {
            let mut stopped: Option<usize> = None;
            let mut v = Vec::new();
            for &(ri, i) in entries {
                if stopped == Some(ri) {
                    continue;
                }
                if ranks[ri].links[i].dst.is_empty() {
                    stopped = Some(ri);
                    continue;
                }
                v.push((ri, i));
            }
            v
        };
        // 1. the map from self links
        let mut map: BTreeMap<&str, i64> = BTreeMap::new();
        for (kind, entries) in kinds {
            for (ri, i) in links_of(entries.as_slice()) {
                let r = ranks[ri];
                let l = &r.links[i];
                if l.src != l.dst {
                    continue;
                }
                {
                    match map.get(l.src.as_str()) {
                        None => {
                            map.insert(l.src.as_str(), r.rank);
                        }
                        Some(&first) if first != r.rank => out.problems.push(Problem::new(
                            Severity::Warning,
                            SELF_LINK_CONFLICT,
                            Position::file(r.label.clone()),
                            format!(
                                "{step} group {group} {kind}: local rank {} is claimed by rank {first} and rank {}; rank {first} kept",
                                l.src, r.rank
                            ),
                        )),
                        Some(_) => {}
                    }
                }
            }
        }
        let global = meta.get(group).map(|m| &m.2);
        let resolve = |local: &str| -> Option<(i64, bool)> {
            if let Some(&g) = map.get(local) {
                return Some((g, false));
            }
            if opts.parity {
                return None;
            }
            let i: usize = local.parse().ok()?;
            global.and_then(|g| g.get(i)).map(|&g| (g, true))
        };
        // 2.–3. merge per kind, convert
        let mut totals: Vec<((i64, i64), MatrixRow)> = Vec::new();
        let mut total_at: rustc_hash::FxHashMap<(i64, i64), usize> = Default::default();
        let mut dropped_here = 0usize;
        for (kind, entries) in kinds {
            let mut merged: Vec<((&str, &str), Merged)> = Vec::new();
            let mut at: rustc_hash::FxHashMap<(&str, &str), usize> = Default::default();
            for (ri, i) in links_of(entries.as_slice()) {
                let r = ranks[ri];
                {
                    let l = &r.links[i];
                    let k = (l.src.as_str(), l.dst.as_str());
                    match at.get(&k).map(|&p| &mut merged[p]) {
                        Some((_, m)) => {
                            m.transport.clone_from(&l.transport);
                            m.op_name.clone_from(&l.op_name);
                            m.size += l.size_mb;
                            m.time += l.time_ms;
                        }
                        None => {
                            at.insert(k, merged.len());
                            merged.push((
                                k,
                                Merged {
                                    rank: r.rank,
                                    transport: l.transport.clone(),
                                    op_name: l.op_name.clone(),
                                    size: l.size_mb,
                                    time: l.time_ms,
                                },
                            ));
                        }
                    }
                }
            }
            let counts =
                !(kind.contains("middle") || kind.contains("top") || kind.contains("bottom"));
            for ((s, d), m) in merged {
                let (Some((gs, ms)), Some((gd, md))) = (resolve(s), resolve(d)) else {
                    let reason = match (opts.parity, global) {
                        (true, _) => "an end has no self link on any rank (msprof-analyze drops it)",
                        (false, None) => "an end has no self link on any rank and the group has no parallel_group_info",
                        (false, Some(_)) => "an end has no self link on any rank and is beyond the group's global_ranks",
                    };
                    dropped_here += 1;
                    out.dropped.push(DroppedLink {
                        step: step.to_string(),
                        group: group.to_string(),
                        kind: kind.to_string(),
                        src_local: s.to_string(),
                        dst_local: d.to_string(),
                        rank: m.rank,
                        size_mb: m.size,
                        time_ms: m.time,
                        reason: reason.to_string(),
                    });
                    continue;
                };
                let row = MatrixRow {
                    step: step.to_string(),
                    group: group.to_string(),
                    kind: kind.to_string(),
                    src: gs,
                    dst: gd,
                    transport: m.transport,
                    size_mb: m.size,
                    time_ms: m.time,
                    bandwidth_gbps: compute_ratio(m.size, m.time),
                    mapped_from_metadata: ms || md,
                    op_name: m.op_name,
                };
                // 4. group total
                if counts {
                    match total_at.get(&(gs, gd)).map(|&p| &mut totals[p]) {
                        Some((_, t)) => {
                            t.transport.clone_from(&row.transport);
                            t.size_mb += row.size_mb;
                            t.time_ms += row.time_ms;
                            t.mapped_from_metadata |= row.mapped_from_metadata;
                        }
                        None => {
                            total_at.insert((gs, gd), totals.len());
                            totals.push((
                                (gs, gd),
                                MatrixRow {
                                    kind: "Total Op Info".to_string(),
                                    op_name: String::new(),
                                    ..row.clone()
                                },
                            ))
                        }
                    }
                }
                out.by_kind.push(row);
            }
        }
        for (_, mut t) in totals {
            t.bandwidth_gbps = compute_ratio(t.size_mb, t.time_ms);
            out.total.push(t);
        }
        if dropped_here > 0 {
            // Information: the links are listed in `dropped_links`; the usual cause is a rank
            // of the group that is not in the input.
            let first = &out.dropped[out.dropped.len() - dropped_here];
            let label = ranks
                .iter()
                .find(|r| r.rank == first.rank)
                .map_or("", |r| r.label.as_str());
            out.problems.push(Problem::new(
                Severity::Info,
                LINKS_DROPPED,
                Position::file(label.to_string()),
                format!(
                    "{step} group {group}: {dropped_here} link(s) left out of the matrix: an end (local rank {} first) has no self link on any rank read{}",
                    if first.src_local == first.dst_local || map.contains_key(first.dst_local.as_str()) { &first.src_local } else { &first.dst_local },
                    if opts.parity { " (--parity)" } else { " and no rank in parallel_group_info" }
                ),
            ));
        }
    }
    out
}
