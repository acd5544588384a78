//! The ranks of a merged multi-rank trace (gpu-traces.md §6): TraceLens' trace fusion and
//! Perfetto exports of several ranks, told apart by `args.rank` or the device ops' `pid` / 10^8.

/// The rank prefix of a merged trace's `pid`s: `pid = rank × 10^8 + pid` (TraceLens' trace
/// fusion, gpu-traces.md §6).
pub const RANK_PID_FACTOR: i64 = 100_000_000;

/// How many distinct rank ids one pass remembers (a merged trace names them; more are cut).
const MAX_RANK_IDS: usize = 4096;

/// How the ranks of a merged trace were told apart (gpu-traces.md §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankKey {
    /// The events' `args.rank`.
    ArgsRank,
    /// `pid / 10^8` of the device ops.
    PidPrefix,
}

/// A trace whose events belong to two or more ranks (gpu-traces.md §6).
#[derive(Clone, Debug, PartialEq)]
pub struct MergedRanks {
    /// The distinct rank ids, ascending (at most `MAX_RANK_IDS`).
    pub ranks: Vec<i64>,
    /// How they were told apart.
    pub key: RankKey,
    /// Byte offset of the first event of a rank other than the first one seen.
    pub second_at: u64,
}

/// The rank ids one pass saw, by each key.
#[derive(Default)]
pub(super) struct RanksSeen {
    by_arg: std::collections::BTreeSet<i64>,
    by_pid: std::collections::BTreeSet<i64>,
    /// The first id seen by each key, and where the first other id was seen.
    first_arg: Option<i64>,
    first_pid: Option<i64>,
    other_arg_at: Option<u64>,
    other_pid_at: Option<u64>,
}

impl RanksSeen {
    /// Notes `rank` at byte `at` in one key's set (the first rank and where another first
    /// appears; at most `MAX_RANK_IDS` ids kept).
    fn note(
        set: &mut std::collections::BTreeSet<i64>,
        first: &mut Option<i64>,
        other_at: &mut Option<u64>,
        rank: i64,
        at: u64,
    ) {
        match *first {
            None => *first = Some(rank),
            Some(f) if f != rank && other_at.is_none() => *other_at = Some(at),
            _ => {}
        }
        if set.len() < MAX_RANK_IDS || set.contains(&rank) {
            set.insert(rank);
        }
    }

    /// An event's `args.rank` (a repeat of the only rank seen so far costs one compare).
    pub(super) fn arg(&mut self, rank: i64, at: u64) {
        if self.first_arg != Some(rank) || self.by_arg.len() > 1 {
            Self::note(
                &mut self.by_arg,
                &mut self.first_arg,
                &mut self.other_arg_at,
                rank,
                at,
            );
        }
    }

    /// A device op's `pid / 10^8`.
    pub(super) fn pid(&mut self, rank: i64, at: u64) {
        if self.first_pid != Some(rank) || self.by_pid.len() > 1 {
            Self::note(
                &mut self.by_pid,
                &mut self.first_pid,
                &mut self.other_pid_at,
                rank,
                at,
            );
        }
    }

    /// Two or more ranks by `args.rank`, else by the device ops' `pid` prefix.
    pub(super) fn merged(&self) -> Option<MergedRanks> {
        if self.by_arg.len() >= 2 {
            return Some(MergedRanks {
                ranks: self.by_arg.iter().copied().collect(),
                key: RankKey::ArgsRank,
                second_at: self.other_arg_at.unwrap_or(0),
            });
        }
        if self.by_arg.is_empty() && self.by_pid.len() >= 2 {
            return Some(MergedRanks {
                ranks: self.by_pid.iter().copied().collect(),
                key: RankKey::PidPrefix,
                second_at: self.other_pid_at.unwrap_or(0),
            });
        }
        None
    }
}
