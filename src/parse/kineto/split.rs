//! Splitting a merged multi-rank trace into its ranks while it is read once (gpu-traces.md §6).
//!
//! Each kept row (device op, host op, GPU annotation, step marker, flow, memory sample) is
//! tagged with its **origin**: the event's `args.rank` (when it has one) and its raw `pid`.
//! Tags cost nothing until a second origin appears (then one `u16` per row); a trace whose
//! rows all share one origin is never tagged. At the end, when the trace is merged
//! ([`super::MergedRanks`]), every origin is given a rank by the key that told the ranks apart —
//! `args.rank` (an origin without one takes the rank its `pid` carries with `args.rank`
//! elsewhere, when that is one rank), or `pid / 10^8` — and the rows are dealt to one trace per
//! rank, in file order, before each is sorted. Rows no key places are counted, not guessed.

use rustc_hash::FxHashMap as HashMap;

use super::ranks::{MergedRanks, RankKey, RANK_PID_FACTOR};
use crate::model::gpu::{GpuTrace, GpuTraceBuilder};

/// The row tables of a [`GpuTrace`] that are tagged, in [`Origins`]' tag order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Table {
    Device = 0,
    Host = 1,
    Annotation = 2,
    Step = 3,
    Flow = 4,
    Memory = 5,
    Nccl = 6,
}

/// An origin no key places, or one past the `u16` range.
const UNPLACED: u16 = u16::MAX;

fn lens(t: &GpuTrace) -> [usize; 7] {
    [
        t.device_ops.len(),
        t.host_ops.len(),
        t.gpu_annotations.len(),
        t.steps.len(),
        t.flows.len(),
        t.memory.len(),
        t.nccl.len(),
    ]
}

/// The origins of the rows kept so far (see the module doc).
#[derive(Default)]
pub(super) struct Origins {
    /// Record origins at all (a reader that will split).
    pub on: bool,
    keys: Vec<(Option<i64>, Vec<u8>)>,
    index: HashMap<(Option<i64>, Vec<u8>), u16>,
    /// The last origin looked up (consecutive events mostly share one).
    last: Option<(Option<i64>, Vec<u8>, u16)>,
    /// One tag per row of each [`Table`], once a second origin appeared.
    tags: Option<[Vec<u16>; 7]>,
}

impl Origins {
    /// The origin of an event with `args.rank` = `rank` and raw `pid`.
    pub fn origin(&mut self, rank: Option<i64>, pid: Option<&[u8]>) -> u16 {
        let pid = pid.unwrap_or(b"");
        if let Some((r, p, o)) = &self.last {
            if *r == rank && p.as_slice() == pid {
                return *o;
            }
        }
        let key = (rank, pid.to_vec());
        let o = match self.index.get(&key) {
            Some(&o) => o,
            None if self.keys.len() < UNPLACED as usize => {
                let o = self.keys.len() as u16;
                self.keys.push(key.clone());
                self.index.insert(key, o);
                o
            }
            None => UNPLACED,
        };
        self.last = Some((rank, pid.to_vec(), o));
        o
    }

    /// Tags the row just pushed to `table` of `trace` with origin `o`.
    pub fn tag(&mut self, table: Table, o: u16, trace: &GpuTrace) {
        if !self.on {
            return;
        }
        match &mut self.tags {
            Some(tags) => tags[table as usize].push(o),
            None if o == 0 => {}
            None => {
                let mut tags = lens(trace).map(|n| vec![0u16; n]);
                if let Some(last) = tags[table as usize].last_mut() {
                    *last = o;
                }
                self.tags = Some(tags);
            }
        }
    }

    /// The id of origin `key` (a new one after the others), as [`Origins::origin`] gives it:
    /// merging the origins of a later byte range ([`super::merge`]).
    pub fn key_id(&mut self, key: &(Option<i64>, Vec<u8>)) -> u16 {
        self.last = None;
        match self.index.get(key) {
            Some(&o) => o,
            None if self.keys.len() < UNPLACED as usize => {
                let o = self.keys.len() as u16;
                self.keys.push(key.clone());
                self.index.insert(key.clone(), o);
                o
            }
            None => UNPLACED,
        }
    }

    /// The origins in id order.
    pub fn keys(&self) -> &[(Option<i64>, Vec<u8>)] {
        &self.keys
    }

    /// The tag of every row of `t` (0 for every row while untagged), taken out.
    pub fn take_tags(&mut self, t: &GpuTrace) -> [Vec<u16>; 7] {
        self.tags
            .take()
            .unwrap_or_else(|| lens(t).map(|n| vec![0u16; n]))
    }

    /// Sets the tag of every row: untagged when every row has origin 0 (what tagging row by
    /// row gives: tags appear with the first row of another origin).
    pub fn set_tags(&mut self, tags: [Vec<u16>; 7]) {
        self.tags = match tags.iter().flatten().any(|&o| o != 0) {
            true => Some(tags),
            false => None,
        };
    }

    /// True once a second origin appeared (rows are tagged).
    pub fn tagged(&self) -> bool {
        self.tags.is_some()
    }

    /// The rank of each origin under `m`'s key (`None`: not placed).
    fn ranks_of(&self, m: &MergedRanks) -> Vec<Option<i64>> {
        match m.key {
            RankKey::ArgsRank => {
                // pid → the one rank its events name with `args.rank` (None when several).
                let mut by_pid: HashMap<&[u8], Option<i64>> = HashMap::default();
                for (r, pid) in &self.keys {
                    if let Some(r) = r {
                        by_pid
                            .entry(pid.as_slice())
                            .and_modify(|v| {
                                if *v != Some(*r) {
                                    *v = None
                                }
                            })
                            .or_insert(Some(*r));
                    }
                }
                self.keys
                    .iter()
                    .map(|(r, pid)| r.or_else(|| by_pid.get(pid.as_slice()).copied().flatten()))
                    .collect()
            }
            RankKey::PidPrefix => self
                .keys
                .iter()
                .map(|(_, pid)| {
                    let p: i64 = std::str::from_utf8(pid).ok()?.trim().parse().ok()?;
                    (p >= 0).then_some(p / RANK_PID_FACTOR)
                })
                .collect(),
        }
    }
}

/// A merged trace dealt into its ranks.
pub struct Split {
    /// One trace per rank that holds at least one row, by rank id ascending.
    pub ranks: Vec<(i64, GpuTrace)>,
    /// Rows that no key placed (left out of every rank).
    pub unplaced: u64,
}

/// Deals the rows of `b` (unsorted, as read) to the ranks of `m` by `origins` (rows of an
/// untagged reader all go unplaced: check [`Origins::tagged`] first). Each rank's trace gets the
/// whole trace's strings, top-level facts and capture evidence, and is sorted by
/// [`GpuTraceBuilder::finish`].
pub(super) fn split(b: GpuTraceBuilder, origins: &Origins, m: &MergedRanks) -> Split {
    let none: [Vec<u16>; 7] = Default::default();
    let tags = origins.tags.as_ref().unwrap_or(&none);
    let of = origins.ranks_of(m);
    let slot_of_rank: HashMap<i64, usize> =
        m.ranks.iter().enumerate().map(|(k, &r)| (r, k)).collect();
    // origin → index into `m.ranks`, or None.
    let slot: Vec<Option<usize>> = of
        .iter()
        .map(|r| r.and_then(|r| slot_of_rank.get(&r).copied()))
        .collect();
    let place = |o: u16| slot.get(o as usize).copied().flatten();
    let whole = b.t;
    let mut parts: Vec<GpuTraceBuilder> = m
        .ranks
        .iter()
        .map(|_| GpuTraceBuilder {
            t: GpuTrace {
                pool: whole.pool.clone(),
                facts: whole.facts.clone(),
                evidence: whole.evidence.clone(),
                ..GpuTrace::default()
            },
        })
        .collect();
    let mut unplaced = 0u64;
    macro_rules! deal {
        ($field:ident, $table:expr) => {
            let t = &tags[$table as usize];
            for (i, row) in whole.$field.into_iter().enumerate() {
                match t.get(i).and_then(|&o| place(o)) {
                    Some(k) => parts[k].t.$field.push(row),
                    None => unplaced += 1,
                }
            }
        };
    }
    deal!(device_ops, Table::Device);
    deal!(host_ops, Table::Host);
    deal!(gpu_annotations, Table::Annotation);
    deal!(steps, Table::Step);
    deal!(flows, Table::Flow);
    deal!(memory, Table::Memory);
    deal!(nccl, Table::Nccl);
    let ranks = m
        .ranks
        .iter()
        .zip(parts)
        .filter(|(_, p)| {
            let t = &p.t;
            lens(t).iter().any(|&n| n > 0)
        })
        .map(|(&r, p)| (r, p.finish()))
        .collect();
    Split { ranks, unplaced }
}
