//! Allocated / active / reserved curves over entry index (torch-snapshot.md §7.3).
//!
//! Step functions: value `i` is the level *after* entry `i`. Absolute levels =
//! baseline (Σ PRE records alive before entry 0) + running delta. Fragmentation
//! is `reserved − active`. The time axis, when the trace has `time_us`, is the
//! entry's time (see `EntryTable::time_us`).

use crate::model::snapshot::{Action, DeviceTrace, Snapshot};

use super::axis::Levels;
use super::lifetimes::{Lifetimes, Semantics};

/// The three curves of one device, one value per entry (bytes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Curves {
    /// `memory_allocated()`-like level after each entry.
    pub allocated: Vec<i64>,
    /// Active level (MemoryViz total) after each entry.
    pub active: Vec<i64>,
    /// Reserved (segments) level after each entry.
    pub reserved: Vec<i64>,
    /// Allocated level before the first entry.
    pub baseline_allocated: i64,
    /// Active level before the first entry.
    pub baseline_active: i64,
    /// Reserved level before the first entry.
    pub baseline_reserved: i64,
}

/// One of the three curves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CurveKind {
    /// Allocated bytes.
    Allocated,
    /// Active bytes.
    Active,
    /// Reserved bytes.
    Reserved,
}

impl CurveKind {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            CurveKind::Allocated => "allocated",
            CurveKind::Active => "active",
            CurveKind::Reserved => "reserved",
        }
    }
}

impl Curves {
    /// The values of curve `k`.
    pub fn get(&self, k: CurveKind) -> &[i64] {
        match k {
            CurveKind::Allocated => &self.allocated,
            CurveKind::Active => &self.active,
            CurveKind::Reserved => &self.reserved,
        }
    }
    /// Baseline of curve `k`.
    pub fn baseline(&self, k: CurveKind) -> i64 {
        match k {
            CurveKind::Allocated => self.baseline_allocated,
            CurveKind::Active => self.baseline_active,
            CurveKind::Reserved => self.baseline_reserved,
        }
    }
    /// `reserved − active` (§7.3 fragmentation) after each entry, read from the two curves as
    /// it is drawn, and before the first: the chart's fourth series, kept nowhere.
    pub fn fragmentation(&self) -> (Levels<'_>, i64) {
        (
            Levels::Difference(&self.reserved, &self.active),
            self.baseline_reserved - self.baseline_active,
        )
    }
    /// `(max value, first index reaching it)` of curve `k`; `(baseline, None)` for an empty trace.
    pub fn max(&self, k: CurveKind) -> (i64, Option<usize>) {
        let mut best = (self.baseline(k), None);
        for (i, &v) in self.get(k).iter().enumerate() {
            if best.1.is_none() || v > best.0 {
                best = (v, Some(i));
            }
        }
        best
    }
}

/// Builds the curves of device `dev` from its lifetimes and segment events (§7.3).
///
/// Reserved = Σ end-state `total_size` of the device − net in-trace segment delta + running delta.
pub fn build(snap: &Snapshot, dev: &DeviceTrace, lt: &Lifetimes) -> Curves {
    let n = lt.n_entries as usize;
    let mut d_alloc = vec![0i64; n];
    let mut d_active = vec![0i64; n];
    let (mut base_alloc, mut base_active) = (0i64, 0i64);
    for r in 0..lt.len() {
        let size = lt.size[r] as i64;
        let s = lt.start(r);
        for (sem, d, base) in [
            (Semantics::Allocated, &mut d_alloc, &mut base_alloc),
            (Semantics::Active, &mut d_active, &mut base_active),
        ] {
            let e = lt.end(r, sem);
            if e <= s {
                continue;
            }
            if s < 0 {
                *base += size;
            } else {
                d[s as usize] += size;
            }
            if e < n as i64 {
                d[e as usize] -= size;
            }
        }
    }
    let t = &dev.entries;
    let mut d_res = vec![0i64; n];
    let mut net = 0i64;
    for (i, (&a, &s)) in t.action().iter().zip(t.size()).enumerate() {
        let d = match a {
            Action::SegmentAlloc | Action::SegmentMap => s as i64,
            Action::SegmentFree | Action::SegmentUnmap => -(s as i64),
            _ => 0,
        };
        d_res[i] = d;
        net += d;
    }
    let end_reserved: i64 = snap
        .segments
        .iter()
        .filter(|s| s.device == dev.device as i64)
        .map(|s| s.total_size as i64)
        .sum();
    let base_res = end_reserved - net;
    let running = |base: i64, mut d: Vec<i64>| -> Vec<i64> {
        let mut acc = base;
        for x in d.iter_mut() {
            acc += *x;
            *x = acc;
        }
        d
    };
    Curves {
        allocated: running(base_alloc, d_alloc),
        active: running(base_active, d_active),
        reserved: running(base_res, d_res),
        baseline_allocated: base_alloc,
        baseline_active: base_active,
        baseline_reserved: base_res,
    }
}
