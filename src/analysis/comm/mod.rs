//! Communication across ranks (communication.md; the rules in the repo's words:
//! docs/rules/communication.md). Pure functions over every rank's [`RankComm`] tables:
//!
//! * [`time`]: the time summary per step, group and rank, and the bandwidth summary per
//!   transport (communication.md §2.1, §2.2);
//! * [`matrix`]: the cross-rank link matrix with the local → global rank map, the dropped
//!   links (`parity`) or the links recovered from `parallel_group_info` (communication.md §2.3);
//! * [`slow`]: slow ranks (Dixon / 3σ) and slow links (3σ) (communication.md §2.4, §2.5);
//! * [`nccl`]: the GPU collectives of NCCL kernels (communication.md §4);
//! * [`ops`]: per-op duration across ranks, who arrived last (a proflens extension);
//! * [`msi`]: MindStudio Insight's slow rank list (communication.md §3).
//!
//! Ranks are taken in ascending rank order whatever the input order (communication.md §6).

pub mod matrix;
pub mod msi;
pub mod nccl;
pub mod ops;
pub mod rank_view;
pub mod round;
pub mod slow;
pub mod time;

use std::collections::BTreeMap;

use crate::base::{Position, Problem, Severity};
use crate::model::comm::{double_hash, NcclKernel, RankComm};

pub use matrix::{DroppedLink, MatrixRow};
pub use slow::{SlowLinkRow, SlowRankRow};
pub use time::{BandwidthRow, TimeSummaryRow};

/// Problem code: a rank names a group whose ops or links no other rank of the group has.
pub const GROUP_ALONE: &str = "COMM-GROUP-001";
/// Problem code: two ranks claim the same local rank of a group (first kept).
pub const SELF_LINK_CONFLICT: &str = "COMM-MATRIX-001";
/// Problem code: links dropped because an end cannot be mapped to a global rank.
pub const LINKS_DROPPED: &str = "COMM-MATRIX-002";
/// Problem code: an op present on some ranks of its group only.
pub const OP_PARTIAL: &str = "COMM-OP-001";
/// Problem code: NCCL kernels that no GPU collective row holds (no collective args, or a kind
/// TraceLens does not tabulate).
pub const GPU_UNTABULATED: &str = "COMM-GPU-001";
/// Problem code: `--step` names a step no rank has.
pub const STEP_ABSENT: &str = "COMM-STEP-001";
/// Problem code: two rank folders with the same rank id (the first by label is used).
pub const RANK_TWICE: &str = "COMM-RANK-001";

/// What the analysis is asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommOptions {
    /// Reproduce msprof-analyze exactly: links with an unmapped end are dropped (and listed).
    /// Off: such links are mapped from `parallel_group_info` where it exists.
    pub parity: bool,
    /// Only this step (`13` or `step13`); `None`: every step.
    pub step: Option<String>,
}

impl CommOptions {
    /// True when step key `key` is selected.
    pub fn selects(&self, key: &str) -> bool {
        match &self.step {
            None => true,
            Some(s) => key == s || key.strip_prefix("step") == Some(s.as_str()),
        }
    }
}

/// A communication group as the ranks and the metadata know it.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupRow {
    /// The group hash (the text after `@`).
    pub group: String,
    /// `p2p` or `collective` (by the section it was seen in; `collective` wins).
    pub section: &'static str,
    /// Group id and name from `parallel_group_info` (empty when no rank has it).
    pub id: String,
    /// `dp`, `tp`, `pp`, …
    pub name: String,
    /// `global_ranks` sorted (empty without metadata).
    pub global_ranks: Vec<i64>,
    /// Ranks whose files name the group, ascending.
    pub present: Vec<i64>,
    /// `global_ranks` not present.
    pub missing: Vec<i64>,
}

/// An op (step, group, name) that some ranks naming its group do not have.
#[derive(Clone, Debug, PartialEq)]
pub struct PartialOp {
    /// Step key.
    pub step: String,
    /// Group hash.
    pub group: String,
    /// Op name.
    pub op: String,
    /// Ranks that have it, ascending.
    pub ranks: Vec<i64>,
    /// Ranks of the input naming the group that do not have it.
    pub missing: Vec<i64>,
}

/// The whole communication analysis of one drop.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CommReport {
    /// Ranks read, ascending.
    pub ranks: Vec<i64>,
    /// Every group seen, by hash.
    pub groups: Vec<GroupRow>,
    /// msprof-analyze's `Total Op Info@group` per (step, group, rank).
    pub time_summary: Vec<TimeSummaryRow>,
    /// Per (step, group, rank, transport).
    pub bandwidth_summary: Vec<BandwidthRow>,
    /// The per-group `Total Op Info` link table across ranks, global ranks.
    pub matrix: Vec<MatrixRow>,
    /// The same per op kind (`allreduce-total`, `allreduce-top1`, …).
    pub matrix_by_kind: Vec<MatrixRow>,
    /// Links not in the matrix, and why.
    pub dropped_links: Vec<DroppedLink>,
    /// Flagged slow-link groups.
    pub slow_links: Vec<SlowLinkRow>,
    /// Op rows the slow-link rule saw (one per op and rank, send/receive included).
    pub slow_link_rows: usize,
    /// Of those, the rows with a data size (the only ones grouped and tested, §2.4.1 step 2).
    pub slow_link_rows_sized: usize,
    /// Slow ranks, one row per (op, slow rank), with the evidence.
    pub slow_ranks: Vec<SlowRankRow>,
    /// MindStudio Insight's slow rank list, one row per (step, group, slow rank).
    pub msi_slow_ranks: Vec<msi::MsiSlowRank>,
    /// Ops tested for a slow rank.
    pub slow_rank_ops_tested: usize,
    /// GPU collectives across ranks (NCCL kernels).
    pub collectives: Vec<nccl::CollectiveRow>,
    /// Ops present on some ranks of their group only (never joined as if complete).
    pub partial_ops: Vec<PartialOp>,
    /// Per op across ranks: who arrived last ([`ops`]; a view of the page, not in the JSON).
    pub op_arrivals: Vec<ops::OpArrival>,
    /// Data checks (located).
    pub problems: Vec<Problem>,
}

/// The per-group metadata of every rank (later ranks override), keyed by group hash.
pub fn metadata_groups(ranks: &[&RankComm]) -> BTreeMap<String, (String, String, Vec<i64>)> {
    // Last rank first, first entry kept: the same result as "later ranks override", and each
    // group's rank list is copied once, not once per rank naming it (the world group's list on
    // every rank would make this quadratic in ranks).
    let mut out = BTreeMap::new();
    let mut seen: rustc_hash::FxHashSet<&str> = rustc_hash::FxHashSet::default();
    for r in ranks.iter().rev() {
        for g in r.groups.iter().rev() {
            if !seen.insert(g.id.as_str()) {
                continue;
            }
            let mut gr = g.global_ranks.clone();
            gr.sort_unstable();
            out.entry(double_hash(&g.id).to_string())
                .or_insert((g.id.clone(), g.name.clone(), gr));
        }
    }
    out
}

/// Runs every rule on `ranks` (any order; ranks are sorted by id, then folder label) and the
/// GPU collectives on `kernels`. Two folders with the same rank id (two captures dropped
/// together) cannot both be that rank: the first by label is used and a warning
/// ([`RANK_TWICE`]) names the others, so the CLI and the page keep the same one.
pub fn analyze(ranks: &[&RankComm], kernels: &[NcclKernel], opts: &CommOptions) -> CommReport {
    let mut sorted: Vec<&RankComm> = ranks.to_vec();
    crate::base::sort::sort_by(&mut sorted, |a, b| {
        (a.rank, &a.label).cmp(&(b.rank, &b.label))
    });
    let mut twice: Vec<Problem> = Vec::new(); // the input checks, first in the problems
    for w in sorted.windows(2).filter(|w| w[0].rank == w[1].rank) {
        twice.push(Problem::new(
            Severity::Warning,
            RANK_TWICE,
            Position::file(w[1].label.clone()),
            format!(
                "rank {} is also {}: two captures hold the same rank id, so this folder's communication data is not used (drop one capture's rank folders to compare its ranks)",
                w[0].rank, w[0].label
            ),
        ));
    }
    sorted.dedup_by_key(|r| r.rank);
    if let Some(want) = &opts.step {
        let mut present: Vec<&str> = sorted
            .iter()
            .flat_map(|r| {
                let ops = r.ops.iter().map(|o| o.step.as_str());
                ops.chain(r.links.iter().map(|l| l.step.as_str()))
            })
            .collect();
        present.sort_unstable();
        present.dedup();
        if !present.is_empty() && !present.iter().any(|s| opts.selects(s)) {
            twice.push(Problem::new(
                Severity::Warning,
                STEP_ABSENT,
                Position::file(sorted.first().map_or("", |r| r.label.as_str()).to_string()),
                format!(
                    "no rank has a step {want}: the steps present are {}; the tables are empty",
                    present.join(", ")
                ),
            ));
        }
    }
    let meta = metadata_groups(&sorted);
    let mut rep = CommReport {
        ranks: sorted.iter().map(|r| r.rank).collect(),
        problems: twice,
        ..Default::default()
    };
    rep.groups = groups(&sorted, &meta);
    for g in &rep.groups {
        // A group one rank names while the others of the input do not (located at that rank).
        if g.present.len() != 1 || sorted.len() < 2 || g.global_ranks.len() == 1 {
            continue;
        }
        let r = g.present[0];
        let label = sorted
            .iter()
            .find(|x| x.rank == r)
            .map_or("", |x| x.label.as_str());
        let (sev, msg) = match g.global_ranks.is_empty() {
            true => (Severity::Warning, format!(
                "group {} is named by rank {r} only, and no metadata says which ranks it spans: its ops are shown for that rank alone",
                g.group
            )),
            false => (Severity::Info, format!(
                "group {} ({}) is named by rank {r} only; its other ranks {:?} are not in the input",
                g.group, g.name, g.missing
            )),
        };
        rep.problems.push(Problem::new(
            sev,
            GROUP_ALONE,
            Position::file(label.to_string()),
            msg,
        ));
    }
    let t = time::summarize(&sorted, opts);
    rep.time_summary = t.0;
    rep.bandwidth_summary = t.1;
    rep.problems.extend(t.2);
    rep.msi_slow_ranks = msi::slow_rank_list(&rep.time_summary, &sorted, &rep.groups, opts);
    let m = matrix::build(&sorted, &meta, opts);
    rep.matrix = m.total;
    rep.matrix_by_kind = m.by_kind;
    rep.dropped_links = m.dropped;
    rep.problems.extend(m.problems);
    let (rows, tested) = slow::slow_ranks_of(&sorted, opts);
    rep.slow_ranks = rows;
    rep.slow_rank_ops_tested = tested;
    let link_rows = slow::link_rows_of(&sorted, opts);
    rep.slow_link_rows = link_rows.len();
    rep.slow_link_rows_sized = link_rows.iter().filter(|r| r.data_size.is_some()).count();
    rep.slow_links = slow::slow_links(&link_rows, slow::TOP_NUM);
    rep.collectives = nccl::collectives(kernels);
    // Per GPU rank: the collective kernels no row holds, and why (never dropped silently).
    // One analysed rank is one (scope, rank) (two traces of one rank have their own scope).
    let mut gpu_ranks: Vec<(&str, i64)> = Vec::new();
    let mut seen: rustc_hash::FxHashSet<(&str, i64)> = Default::default();
    for k in kernels {
        if seen.insert((&k.scope, k.rank)) {
            gpu_ranks.push((&k.scope, k.rank));
        }
    }
    for (scope, r) in gpu_ranks {
        let of = || {
            kernels
                .iter()
                .filter(move |k| k.rank == r && &*k.scope == scope)
        };
        let (unnamed, other) = nccl::untabulated(of());
        if unnamed + other == 0 {
            continue;
        }
        let mut why = Vec::new();
        if unnamed > 0 {
            why.push(format!("{unnamed} carry no `Collective name` argument (the trace was recorded without PyTorch's collective metadata on NCCL kernels: PyTorch 2.1 or later records it)"));
        }
        if other > 0 {
            why.push(format!("{other} are point-to-point, broadcast or another kind outside allreduce, reducescatter, allgather and alltoall (TraceLens' implicit-sync collectives)"));
        }
        rep.problems.push(Problem::new(
            Severity::Info,
            GPU_UNTABULATED,
            // The rank's trace file, as every GPU-* problem (a kernel list built without one:
            // the rank's number).
            Position::file(match of().next().map(|k| &*k.trace) {
                Some(t) if !t.is_empty() => t.to_string(),
                _ => format!("GPU rank {r}"),
            }),
            format!(
                "{} of its {} NCCL/RCCL kernel(s) are not in the collectives table: {}",
                unnamed + other,
                of().count(),
                why.join("; ")
            ),
        ));
    }
    rep.partial_ops = partial_ops(&sorted, &rep.groups, opts);
    rep.op_arrivals = ops::arrivals(&sorted, opts);
    // One note per group, located at the first rank missing its first partial op.
    let mut per_group: BTreeMap<&str, (usize, &PartialOp)> = BTreeMap::new();
    for p in &rep.partial_ops {
        per_group.entry(&p.group).or_insert((0, p)).0 += 1;
    }
    for (g, (n, p)) in per_group {
        let first = p.missing.first().copied();
        let label = sorted
            .iter()
            .find(|r| Some(r.rank) == first)
            .map_or("", |r| r.label.as_str());
        rep.problems.push(Problem::new(
            Severity::Info,
            OP_PARTIAL,
            Position::file(label.to_string()),
            format!(
                "group {g}: {n} op(s) present on some of its ranks only, e.g. {} of {} on rank(s) {:?}, missing on rank(s) {:?} (all listed in partial_ops; each rank's totals cover the ops it has)",
                p.op, p.step, p.ranks, p.missing
            ),
        ));
    }
    rep
}

fn groups(
    ranks: &[&RankComm],
    meta: &BTreeMap<String, (String, String, Vec<i64>)>,
) -> Vec<GroupRow> {
    use crate::model::comm::Section;
    let mut seen: BTreeMap<&str, (bool, Vec<i64>)> = BTreeMap::new();
    for r in ranks {
        let ops = r.ops.iter().map(|o| (o.group.as_str(), o.section));
        let links = r.links.iter().map(|l| (l.group.as_str(), l.section));
        for (g, s) in ops.chain(links) {
            let e = seen.entry(g).or_insert((false, Vec::new()));
            e.0 |= s != Some(Section::P2p);
            if e.1.last() != Some(&r.rank) {
                e.1.push(r.rank);
            }
        }
    }
    seen.into_iter()
        .map(|(g, (coll, present))| {
            let (id, name, global) = meta.get(g).cloned().unwrap_or_default();
            // `present` is ascending (ranks are visited in order).
            let missing = global
                .iter()
                .copied()
                .filter(|x| present.binary_search(x).is_err())
                .collect();
            GroupRow {
                group: g.to_string(),
                section: if coll { "collective" } else { "p2p" },
                id,
                name,
                global_ranks: global,
                present,
                missing,
            }
        })
        .collect()
}

/// The ops of `ranks` missing on some rank that names their group (§2.1: never imputed).
fn partial_ops(ranks: &[&RankComm], groups: &[GroupRow], opts: &CommOptions) -> Vec<PartialOp> {
    let present: BTreeMap<&str, &[i64]> = groups
        .iter()
        .map(|g| (g.group.as_str(), g.present.as_slice()))
        .collect();
    let mut order: Vec<(&str, &str, &str)> = Vec::new();
    let mut have: rustc_hash::FxHashMap<(&str, &str, &str), Vec<i64>> = Default::default();
    for r in ranks {
        for o in r.ops.iter().filter(|o| opts.selects(&o.step)) {
            let k = (o.step.as_str(), o.group.as_str(), o.op.as_str());
            let v = have.entry(k).or_insert_with(|| {
                order.push(k);
                Vec::new()
            });
            if v.last() != Some(&r.rank) {
                v.push(r.rank);
            }
        }
    }
    let mut out = Vec::new();
    for k in order {
        let got = &have[&k];
        let all = present.get(k.1).copied().unwrap_or(&[]);
        if got.len() >= all.len() {
            continue;
        }
        out.push(PartialOp {
            step: k.0.to_string(),
            group: k.1.to_string(),
            op: k.2.to_string(),
            ranks: got.clone(),
            // `got` is ascending (ranks are visited in order).
            missing: all
                .iter()
                .copied()
                .filter(|r| got.binary_search(r).is_err())
                .collect(),
        });
    }
    out
}
