//! Merging the readers of consecutive byte ranges of one trace (formats.md §8.2): each range
//! fills its own [`KinetoBuilder`]; [`KinetoBuilder::absorb`] adds a later range's builder to
//! the one of the bytes before it, so that the result is what one builder fed every event in
//! file order holds — rows appended in order, strings and origins re-interned in the order
//! they first appear, counters summed, the first byte offsets kept, flow ends paired in file
//! order, members and rank ids as one pass sees them.
//!
//! What cannot be merged after the fact is kept in order instead: a later range's reader
//! ([`KinetoBuilder::deferring`]) pairs no flow end and reads no top-level member; it keeps
//! them ([`Deferred`]) and the merge replays them, in file order, through the same code.

use super::split::Table;
use super::KinetoBuilder;
use crate::model::gpu::{Flow, FlowKind};
use crate::model::strings::StrId;

/// A flow end kept by a deferring reader: `s` or not, its category, id, `ts` and origin.
#[derive(Clone, Copy, Debug)]
pub(super) struct FlowEnd {
    start: bool,
    kind: FlowKind,
    id: i64,
    ts: i64,
    origin: u16,
}

/// What a later range's reader keeps for the merge, in file order.
#[derive(Default)]
pub(super) struct Deferred {
    flows: Vec<FlowEnd>,
    /// Top-level members: `(key, raw value, byte offset)`.
    pub(super) members: Vec<(Vec<u8>, Vec<u8>, u64)>,
}

impl KinetoBuilder {
    /// A reader of a later byte range of a file (its bytes start at byte `base`, `len` of
    /// them): flow ends and top-level members are kept for [`KinetoBuilder::absorb`], and the
    /// tables are sized for the range.
    pub fn deferring(mut self, base: u64, len: u64) -> Self {
        self.deferred = Some(Deferred::default());
        self.sized_for = Some(len);
        self.sized_base = base;
        self
    }

    /// A flow end (`s` when `start`) of category `kind`, `id`, at `ts`, with origin `origin`:
    /// paired with the other end seen before, else kept open (a later end of the same key
    /// replaces it).
    pub(super) fn flow(&mut self, start: bool, kind: FlowKind, id: i64, ts: i64, origin: u16) {
        if let Some(d) = &mut self.deferred {
            d.flows.push(FlowEnd {
                start,
                kind,
                id,
                ts,
                origin,
            });
            return;
        }
        let key = (kind as u8, id);
        let before = self.b.t.flows.len();
        if start {
            match self.flow_ends.remove(&key) {
                Some(arrive_ns) => self.b.t.flows.push(Flow {
                    kind,
                    id,
                    launch_ns: ts,
                    arrive_ns,
                }),
                None => {
                    self.flow_starts.insert(key, ts);
                }
            }
        } else {
            match self.flow_starts.remove(&key) {
                Some(launch_ns) => self.b.t.flows.push(Flow {
                    kind,
                    id,
                    launch_ns,
                    arrive_ns: ts,
                }),
                None => {
                    self.flow_ends.insert(key, ts);
                }
            }
        }
        if self.b.t.flows.len() > before {
            self.origins.tag(Table::Flow, origin, &self.b.t);
        }
    }

    /// Adds the builder of the next byte range (a [`KinetoBuilder::deferring`] reader that
    /// started at the event where this one stopped): afterwards this builder holds what one
    /// builder fed both ranges' events in order holds.
    pub fn absorb(&mut self, o: KinetoBuilder) {
        let KinetoBuilder {
            b,
            info,
            diag,
            not_kept,
            ranks,
            origins,
            deferred,
            ..
        } = o;
        let ot = b.t;
        // Strings: ids in the order they first appear (a pool is in that order).
        let ids: Vec<StrId> = (0..ot.pool.len())
            .map(|i| self.b.intern(ot.pool.get(StrId::from_index(i as u32))))
            .collect();
        let id = |s: StrId| ids[s.index()];
        // Origins: likewise; every row's tag is its origin.
        let on = self.origins.on;
        let omap: Vec<u16> = match on {
            true => origins
                .keys()
                .iter()
                .map(|k| self.origins.key_id(k))
                .collect(),
            false => Vec::new(),
        };
        let mut origins = origins;
        let mut tags = match on {
            true => Some((self.origins.take_tags(&self.b.t), origins.take_tags(&ot))),
            false => None,
        };
        let o_of = |o: u16| omap.get(o as usize).copied().unwrap_or(u16::MAX);
        let t = &mut self.b.t;
        t.device_ops.reserve(ot.device_ops.len());
        t.device_ops.extend(ot.device_ops.iter().map(|d| {
            let mut d = *d;
            d.name = id(d.name);
            d
        }));
        t.host_ops.reserve(ot.host_ops.len());
        t.host_ops.extend(ot.host_ops.iter().map(|h| {
            let mut h = *h;
            h.name = id(h.name);
            h.cat = id(h.cat);
            h.pid = id(h.pid);
            h.tid = id(h.tid);
            h.shapes = id(h.shapes);
            h
        }));
        t.gpu_annotations.extend(
            ot.gpu_annotations
                .iter()
                .map(|&(s, a, e, n)| (s, a, e, id(n))),
        );
        t.steps.extend(ot.steps.iter().map(|s| {
            let mut s = *s;
            s.name = id(s.name);
            s
        }));
        // A deferring reader pairs no flow: its flows table is empty.
        t.flows.extend(ot.flows.iter().copied());
        t.memory.extend(ot.memory.iter().copied());
        t.nccl.extend(ot.nccl);
        let e = &mut t.evidence;
        e.shapes |= ot.evidence.shapes;
        e.stack |= ot.evidence.stack;
        e.memory |= ot.evidence.memory;
        e.flops |= ot.evidence.flops;
        e.modules |= ot.evidence.modules;
        if let Some((mine, theirs)) = &mut tags {
            for (m, t) in mine.iter_mut().zip(theirs.iter()) {
                m.extend(t.iter().map(|&o| o_of(o)));
            }
        }
        // Flow ends in file order, paired through the same code (tags of new flow rows).
        if let Some(d) = deferred {
            for f in d.flows {
                let before = self.b.t.flows.len();
                let origin = o_of(f.origin);
                self.flow_paired(f.start, f.kind, f.id, f.ts);
                if let Some((mine, _)) = &mut tags {
                    if self.b.t.flows.len() > before {
                        mine[Table::Flow as usize].push(origin);
                    }
                }
            }
            for (k, v, at) in d.members {
                self.member(&k, &v, at);
            }
        }
        if let Some((mine, _)) = tags {
            self.origins.set_tags(mine);
        }
        // Counters and first offsets.
        let me = &mut self.info;
        me.raw_backslash += info.raw_backslash;
        let room = super::MAX_LOCATED.saturating_sub(me.raw_backslash_at.len());
        me.raw_backslash_at
            .extend(info.raw_backslash_at.into_iter().take(room));
        me.out_of_range.count += info.out_of_range.count;
        let room = crate::base::arith::Tally::KEEP.saturating_sub(me.out_of_range.first_at.len());
        me.out_of_range
            .first_at
            .extend(info.out_of_range.first_at.into_iter().take(room));
        me.bad_members.extend(info.bad_members);
        self.diag.merge(&diag);
        for (ph, n) in not_kept {
            *self.not_kept.entry(ph).or_insert(0) += n;
        }
        self.ranks.absorb(ranks);
    }

    /// [`KinetoBuilder::flow`] of a non-deferring builder without the tag (the merge tags).
    fn flow_paired(&mut self, start: bool, kind: FlowKind, id: i64, ts: i64) {
        let on = std::mem::replace(&mut self.origins.on, false);
        self.flow(start, kind, id, ts, 0);
        self.origins.on = on;
    }
}
