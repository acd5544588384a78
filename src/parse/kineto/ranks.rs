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
    /// Where the first id of each key was seen, and the ids in the order they entered
    /// each set (merging the ranks of a later byte range: [`RanksSeen::absorb`]).
    first_arg_at: Option<u64>,
    first_pid_at: Option<u64>,
    order_arg: Vec<i64>,
    order_pid: Vec<i64>,
}

/// One key's rank ids of [`RanksSeen`]: set, insertion order, first id, where it and the
/// first other id were seen.
struct KeySeen<'a> {
    set: &'a mut std::collections::BTreeSet<i64>,
    order: &'a mut Vec<i64>,
    first: &'a mut Option<i64>,
    first_at: &'a mut Option<u64>,
    other_at: &'a mut Option<u64>,
}

impl KeySeen<'_> {
    fn note(&mut self, rank: i64, at: u64) {
        match *self.first {
            None => {
                *self.first = Some(rank);
                *self.first_at = Some(at);
            }
            Some(f) if f != rank && self.other_at.is_none() => *self.other_at = Some(at),
            _ => {}
        }
        if !self.set.contains(&rank) && self.set.len() < MAX_RANK_IDS {
            self.set.insert(rank);
            self.order.push(rank);
        }
    }

    /// Adds what `o` saw in the bytes after those `self` saw: the same as one pass over both.
    fn absorb(&mut self, o: KeySeen<'_>) {
        match (*self.first, *o.first) {
            (None, Some(_)) => {
                *self.first = *o.first;
                *self.first_at = *o.first_at;
                *self.other_at = *o.other_at;
            }
            (Some(f), Some(g)) if self.other_at.is_none() => {
                *self.other_at = if g != f { *o.first_at } else { *o.other_at };
            }
            _ => {}
        }
        for &r in o.order.iter() {
            if !self.set.contains(&r) && self.set.len() < MAX_RANK_IDS {
                self.set.insert(r);
                self.order.push(r);
            }
        }
    }
}

impl RanksSeen {
    fn by_arg(&mut self) -> KeySeen<'_> {
        KeySeen {
            set: &mut self.by_arg,
            order: &mut self.order_arg,
            first: &mut self.first_arg,
            first_at: &mut self.first_arg_at,
            other_at: &mut self.other_arg_at,
        }
    }

    fn by_pid(&mut self) -> KeySeen<'_> {
        KeySeen {
            set: &mut self.by_pid,
            order: &mut self.order_pid,
            first: &mut self.first_pid,
            first_at: &mut self.first_pid_at,
            other_at: &mut self.other_pid_at,
        }
    }

    /// An event's `args.rank` (a repeat of the only rank seen so far costs one compare).
    pub(super) fn arg(&mut self, rank: i64, at: u64) {
        if self.first_arg != Some(rank) || self.by_arg.len() > 1 {
            self.by_arg().note(rank, at);
        }
    }

    /// A device op's `pid / 10^8`.
    pub(super) fn pid(&mut self, rank: i64, at: u64) {
        if self.first_pid != Some(rank) || self.by_pid.len() > 1 {
            self.by_pid().note(rank, at);
        }
    }

    /// Adds the ranks `o` saw in the bytes after those this one saw (one pass over both
    /// gives the same, up to `MAX_RANK_IDS` distinct ids in each byte range).
    pub(super) fn absorb(&mut self, mut o: RanksSeen) {
        self.by_arg().absorb(o.by_arg());
        self.by_pid().absorb(o.by_pid());
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
