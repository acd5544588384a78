//! Byte ranges of one `trace_view.json` read into their own [`TimelineBuilder`]s and merged
//! in range order into exactly what one builder gives (formats.md §8.2).

use std::ops::ControlFlow;

use super::{is_marker_name, Raw, TimelineBuilder};
use crate::base::arith::Tally;
use crate::ingest::Progress;
use crate::model::trace_events::{FlowPoint, MarkerEvent};
use crate::parse::trace_json::hccl_sizes::HcclSizes;
use crate::parse::trace_json::object::Event;
use crate::parse::trace_json::ranges::{self, RangeSink};
use crate::parse::trace_json::TraceScan;
use rustc_hash::FxHashMap as HashMap;

/// The anomaly trace tables of the plain `trace_view.json` `path` (`size` bytes) read in
/// the byte ranges starting at `starts` (ascending, the first 0), each on its own thread
/// ([`ranges::read_cut`]), merged in range order: what [`TimelineBuilder::finish`]
/// then gives equals one reader's. With `sizes`, the same events give the HCCL op sizes too
/// ([`HcclSizes`], merged in range order). `None`: read the file with one reader.
pub fn read_cut(
    opener: &(dyn crate::ingest::Opener + Sync),
    path: &str,
    size: u64,
    starts: &[u64],
    custom_prefix: &str,
    sizes: bool,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Option<(TimelineBuilder, Option<HcclSizes>, TraceScan)> {
    let make = |start: Option<u64>, _: u64| RangeParts {
        t: match start {
            None => TimelineBuilder::new(custom_prefix),
            Some(_) => TimelineBuilder::new(custom_prefix).deferring(),
        },
        s: sizes.then(HcclSizes::default),
    };
    let (parts, scan) = ranges::read_cut(opener, path, size, starts, &make, on_progress)?;
    let mut parts = parts.into_iter();
    let RangeParts {
        t: mut merged,
        s: mut sizes,
    } = parts.next()?;
    for p in parts {
        merged.absorb(p.t);
        if let (Some(a), Some(b)) = (&mut sizes, p.s) {
            a.absorb(b);
        }
    }
    Some((merged, sizes, scan))
}

/// What one byte range's events feed: the timeline and, when asked, the op sizes.
struct RangeParts {
    t: TimelineBuilder,
    s: Option<HcclSizes>,
}

impl RangeSink for RangeParts {
    fn member(&mut self, _: &[u8], _: &[u8], _: u64) {}
    fn indexed_event(&mut self, ev: Event<'_>, at: u64) -> ControlFlow<()> {
        if let Some(s) = &mut self.s {
            let _ = s.indexed_event(ev, at);
        }
        TimelineBuilder::indexed_event(&mut self.t, ev, at)
    }
}

impl TimelineBuilder {
    /// Appends `next`, the builder of the byte range that follows the ones read into `self`
    /// (which starts at the file's start), as if one builder had read both: its strings,
    /// threads and pids re-interned in the order they first appear, its rows and markers
    /// appended, its `E`s without a `B` in its range closing the `B`s left open here in file
    /// order, the later process and thread names winning, counters summed and the first
    /// byte offsets of each finding kept in file order.
    pub fn absorb(&mut self, next: TimelineBuilder) {
        let TimelineBuilder {
            t: nt,
            info: ninfo,
            pid_ids,
            pid_names,
            thread_names,
            thread_tid,
            raws,
            open,
            pending,
            diag,
            ..
        } = next;
        let strs: Vec<u32> = (0..nt.text_count() as u32)
            .map(|i| self.t.intern(nt.text(i)))
            .collect();
        let mut pids_in: Vec<(&Vec<u8>, u32)> = pid_ids.iter().map(|(k, &v)| (k, v)).collect();
        pids_in.sort_unstable_by_key(|&(_, v)| v);
        let pids: Vec<u32> = pids_in
            .into_iter()
            .map(|(raw, _)| {
                let next = self.pid_ids.len() as u32;
                *self.pid_ids.entry(raw.clone()).or_insert(next)
            })
            .collect();
        let threads: Vec<u32> = (0..thread_tid.len() as u32)
            .map(|j| {
                let id = self.t.thread_key(nt.thread_text(j));
                if id as usize == self.thread_tid.len() {
                    self.thread_tid.push(strs[thread_tid[j as usize] as usize]);
                }
                id
            })
            .collect();
        for (p, n) in sorted(pid_names) {
            self.pid_names.insert(pids[p as usize], n);
        }
        for (th, n) in sorted(thread_names) {
            self.thread_names.insert(threads[th as usize], n);
        }
        // The `E`s of `next` that close a `B` left open before it, in file order.
        let mut rows: Vec<(usize, Raw)> = Vec::new();
        let mut marks: Vec<(usize, MarkerEvent)> = Vec::new();
        for e in pending {
            let thread = threads[e.thread as usize];
            let Some((n, c, b)) = self.open.get_mut(&thread).and_then(Vec::pop) else {
                continue;
            };
            let nm = self.t.text(n);
            if is_marker_name(nm, &self.custom_prefix) {
                let m = MarkerEvent {
                    name: nm.to_string(),
                    ts_ns: b,
                    dur_ns: e.ts - b,
                };
                marks.push((e.marker_at, m));
            }
            if e.ts > b {
                let r = Raw {
                    name: n,
                    cat: c,
                    pid: pids[e.pid as usize],
                    thread,
                    ts: b,
                    dur: e.ts - b,
                };
                rows.push((e.raw_at, r));
            }
        }
        let remap = |r: &Raw| Raw {
            name: strs[r.name as usize],
            cat: strs[r.cat as usize],
            pid: pids[r.pid as usize],
            thread: threads[r.thread as usize],
            ts: r.ts,
            dur: r.dur,
        };
        splice(&mut self.raws, raws.iter().map(remap), rows);
        splice(&mut self.t.markers, nt.markers.iter().cloned(), marks);
        for (th, v) in sorted(open) {
            let v = v
                .into_iter()
                .map(|(n, c, b)| (strs[n as usize], strs[c as usize], b));
            self.open.entry(threads[th as usize]).or_default().extend(v);
        }
        self.t
            .h2d_flow_ends_ns
            .extend_from_slice(&nt.h2d_flow_ends_ns);
        self.t
            .flow_points
            .extend(nt.flow_points.iter().map(|f| FlowPoint {
                thread: threads[f.thread as usize],
                ..*f
            }));
        let (e, ne) = (&mut self.t.evidence, nt.evidence);
        e.shapes |= ne.shapes;
        e.stack |= ne.stack;
        e.memory |= ne.memory;
        e.flops |= ne.flops;
        e.modules |= ne.modules;
        self.info.skipped += ninfo.skipped;
        let o = &mut self.info.out_of_range;
        o.count += ninfo.out_of_range.count;
        let room = Tally::KEEP.saturating_sub(o.first_at.len());
        o.first_at
            .extend(ninfo.out_of_range.first_at.iter().take(room));
        self.diag.merge(&diag);
    }
}

/// The entries of a map by key.
fn sorted<V>(m: HashMap<u32, V>) -> Vec<(u32, V)> {
    let mut v: Vec<(u32, V)> = m.into_iter().collect();
    v.sort_unstable_by_key(|&(k, _)| k);
    v
}

/// Appends `items` to `to`, with each `(i, x)` of `extra` (ascending `i`) placed before the
/// `i`-th of `items`.
fn splice<T>(to: &mut Vec<T>, items: impl Iterator<Item = T>, extra: Vec<(usize, T)>) {
    let mut extra = extra.into_iter().peekable();
    for (i, x) in items.enumerate() {
        while let Some((_, e)) = extra.next_if(|&(at, _)| at <= i) {
            to.push(e);
        }
        to.push(x);
    }
    to.extend(extra.map(|(_, e)| e));
}

impl RangeSink for TimelineBuilder {
    fn member(&mut self, _: &[u8], _: &[u8], _: u64) {}
    fn indexed_event(&mut self, ev: Event<'_>, at: u64) -> ControlFlow<()> {
        TimelineBuilder::indexed_event(self, ev, at)
    }
}
