//! Ties each Ascend memory event to the host operator whose call stack made it.
//!
//! Input: a rank's [`MemoryEventTable`] (from `operator_memory.csv`) and its
//! [`HostOpTable`] + [`CallStackIndex`] (from `trace_view.json`), names interned
//! in one pool. Output: per row the parity match (§6.1) and the default-mode
//! match (§6.4) with its [`MatchQuality`], lag and stack origin.
//!
//! * Parity (§6.1): same exact name, largest `ts ≤ t` on the Python-`float` µs
//!   values (`bisect_right − 1`), the last of equal `ts`; only ops whose args
//!   hold a `Call stack` key.
//! * Default (§6.4): the same on exact integer ns (`nearest_before`), or
//!   `enclosing_first`; optional `max_match_lag_us`; then `via_forward` for rows
//!   still unmatched (backward ops inherit their forward op's stack).
//!
//! Knows nothing about files; does not pick the user frame (`analysis::user_frame`).
//! Stacks are innermost-first (§6.2).

use crate::base::units::ns_to_us;
use crate::model::host_events::{CallStackIndex, HostOpTable};
use crate::model::memory_events::MemoryEventTable;
use crate::model::stacks::StackId;

/// Default-mode selection strategy (§6.4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MatchStrategy {
    /// Largest `ts ≤ t`, last among equal `ts` (same selection as parity).
    #[default]
    NearestBefore,
    /// Among entries with `ts ≤ t ≤ ts + dur` the greatest `ts`; else `NearestBefore`.
    EnclosingFirst,
}

/// How a row was tied to a stack (§6.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MatchQuality {
    /// `ts == t`.
    Exact,
    /// `ts < t ≤ ts + dur`.
    Enclosing,
    /// `ts + dur < t`.
    NearestBefore,
    /// Stack inherited from the forward op of a backward op.
    ViaForward,
    /// No entry.
    None,
}

impl MatchQuality {
    /// The §8.2 spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchQuality::Exact => "exact",
            MatchQuality::Enclosing => "enclosing",
            MatchQuality::NearestBefore => "nearest_before",
            MatchQuality::ViaForward => "via_forward",
            MatchQuality::None => "none",
        }
    }
    /// All values, in display order.
    pub const ALL: [MatchQuality; 5] = [
        MatchQuality::Exact,
        MatchQuality::Enclosing,
        MatchQuality::NearestBefore,
        MatchQuality::ViaForward,
        MatchQuality::None,
    ];
}

/// Settings of the default-mode match (§6.4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatchOptions {
    /// Selection strategy.
    pub strategy: MatchStrategy,
    /// Discard matches whose lag exceeds this many µs (`None` = unlimited).
    pub max_match_lag_us: Option<f64>,
    /// Run the backward-pass `via_forward` recovery.
    pub via_forward: bool,
}

impl Default for MatchOptions {
    fn default() -> Self {
        MatchOptions {
            strategy: MatchStrategy::NearestBefore,
            max_match_lag_us: None,
            via_forward: true,
        }
    }
}

const NONE: u32 = u32::MAX;

/// Per-row match results, columnar.
///
/// Invariant: every column has one entry per memory row.
#[derive(Clone, Debug, Default)]
pub struct Matches {
    parity_op: Vec<u32>,
    quality: Vec<MatchQuality>,
    matched_op: Vec<u32>,
    stack_op: Vec<u32>,
}

impl Matches {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.quality.len()
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.quality.is_empty()
    }
    /// The op matched by the parity rule (§6.1) for row `i`.
    pub fn parity_op(&self, i: usize) -> Option<usize> {
        self.parity_op
            .get(i)
            .copied()
            .filter(|v| *v != NONE)
            .map(|v| v as usize)
    }
    /// Default-mode quality of row `i`.
    pub fn quality(&self, i: usize) -> MatchQuality {
        self.quality.get(i).copied().unwrap_or(MatchQuality::None)
    }
    /// The same-name op selected for row `i` (for `via_forward`: the backward op containing `t`).
    /// Its `ts` gives `matched_op_ts_us` and `match_lag_us`.
    pub fn matched_op(&self, i: usize) -> Option<usize> {
        self.matched_op
            .get(i)
            .copied()
            .filter(|v| *v != NONE)
            .map(|v| v as usize)
    }
    /// The op whose stack row `i` carries: the matched op, or the forward op for `via_forward`.
    pub fn stack_op(&self, i: usize) -> Option<usize> {
        self.stack_op
            .get(i)
            .copied()
            .filter(|v| *v != NONE)
            .map(|v| v as usize)
    }
    /// Row counts per quality, in [`MatchQuality::ALL`] order.
    pub fn quality_counts(&self) -> [u64; 5] {
        let mut c = [0u64; 5];
        for q in &self.quality {
            c[*q as usize] += 1;
        }
        c
    }
}

/// Parity selection (§6.1): index into `group` of the largest `ts_us ≤ t_us`, last among equal.
fn bisect_right_minus_one(group: &[u32], key: impl Fn(u32) -> f64, t_us: f64) -> Option<usize> {
    let n = group.partition_point(|op| key(*op) <= t_us);
    n.checked_sub(1)
}

/// Quality of a same-name entry `(ts, dur)` for an event at `t` (ns), given `ts ≤ t`.
pub fn quality_of(ts: i64, dur: i64, t: i64) -> MatchQuality {
    if ts == t {
        MatchQuality::Exact
    } else if t <= ts.saturating_add(dur) {
        MatchQuality::Enclosing
    } else {
        MatchQuality::NearestBefore
    }
}

/// Runs the parity (§6.1) and default (§6.4) matches for every memory row.
///
/// Cost: O(rows · log ops) plus, for `EnclosingFirst` and `via_forward`, a backward scan
/// bounded by the longest `dur` of the name.
pub fn match_rows(
    mem: &MemoryEventTable,
    host: &HostOpTable,
    idx: &CallStackIndex,
    opts: &MatchOptions,
) -> Matches {
    let n = mem.len();
    let mut m = Matches {
        parity_op: Vec::with_capacity(n),
        quality: Vec::with_capacity(n),
        matched_op: Vec::with_capacity(n),
        stack_op: Vec::with_capacity(n),
    };
    let ts_us = host.ts_us();
    let ts_ns = host.ts_ns();
    let dur = host.dur_ns();
    for i in 0..n {
        let name = mem.name()[i];
        // parity
        let g = idx.parity_group(name);
        let p = bisect_right_minus_one(g, |op| ts_us[op as usize], mem.alloc_time_us()[i])
            .map(|k| g[k]);
        m.parity_op.push(p.unwrap_or(NONE));
        // default
        let t = mem.alloc_time_ns()[i];
        let g = idx.exact_group(name);
        let end = g.partition_point(|op| ts_ns[*op as usize] <= t);
        let nearest = end.checked_sub(1).map(|k| g[k] as usize);
        let mut sel = nearest;
        if opts.strategy == MatchStrategy::EnclosingFirst {
            if let Some(op) = last_enclosing(&g[..end], ts_ns, dur, idx.max_dur_with_stack(name), t)
            {
                sel = Some(op);
            }
        }
        if let (Some(op), Some(max)) = (sel, opts.max_match_lag_us) {
            if ns_to_us(t - ts_ns[op]) > max {
                sel = None;
            }
        }
        match sel {
            Some(op) => {
                m.quality.push(quality_of(ts_ns[op], dur[op], t));
                m.matched_op.push(op as u32);
                m.stack_op.push(op as u32);
            }
            None => {
                let vf = if opts.via_forward {
                    via_forward(host, idx, name, t)
                } else {
                    None
                };
                match vf {
                    Some((bwd, fwd)) => {
                        m.quality.push(MatchQuality::ViaForward);
                        m.matched_op.push(bwd as u32);
                        m.stack_op.push(fwd as u32);
                    }
                    None => {
                        m.quality.push(MatchQuality::None);
                        m.matched_op.push(NONE);
                        m.stack_op.push(NONE);
                    }
                }
            }
        }
    }
    m
}

/// The last op of `before` (ops with `ts ≤ t`, sorted by `ts`) whose `[ts, ts + dur]` holds
/// `t`: the enclosing op with the greatest `ts`. The scan stops once `ts + reach < t`
/// (`reach` = the longest `dur` of the group), so it is short.
fn last_enclosing(before: &[u32], ts: &[i64], dur: &[i64], reach: i64, t: i64) -> Option<usize> {
    for &o in before.iter().rev() {
        let o = o as usize;
        if ts[o].saturating_add(reach) < t {
            return None;
        }
        if t <= ts[o].saturating_add(dur[o]) {
            return Some(o);
        }
    }
    None
}

/// §6.4 `via_forward` steps 2–4 for one row: `(backward op containing t, forward op with stack)`.
fn via_forward(
    host: &HostOpTable,
    idx: &CallStackIndex,
    name: crate::model::strings::StrId,
    t: i64,
) -> Option<(usize, usize)> {
    let ts = host.ts_ns();
    let dur = host.dur_ns();
    // 2. the same-name op enclosing t with the greatest ts
    let g = idx.all_group(name);
    let end = g.partition_point(|op| ts[*op as usize] <= t);
    let op = last_enclosing(&g[..end], ts, dur, idx.max_dur(name), t)?;
    // 3. walk up to the autograd node: Sequence number >= 0 and Fwd thread id != 0
    let mut cur = Some(op);
    let mut node = None;
    while let Some(c) = cur {
        if host.seq(c).is_some_and(|s| s >= 0) && host.fwd_tid(c).is_some_and(|f| f != 0) {
            node = Some(c);
            break;
        }
        cur = idx.parent(c);
    }
    // 4. forward op with the same Sequence number and a stack (smallest ts)
    if let Some(fwd) = node
        .and_then(|nd| host.seq(nd))
        .and_then(|s| idx.forward_of_seq(s))
    {
        return Some((op, fwd));
    }
    // 4b. fallback: a fwdbwd flow ending inside the node (or the op), its start's enclosing forward op
    let anchor = node.unwrap_or(op);
    let th = host.thread()[anchor];
    let (a0, a1) = (ts[anchor], ts[anchor].saturating_add(dur[anchor]));
    let flows = host.flows();
    let finishes = idx.flow_finishes_on(th);
    let first = finishes.partition_point(|k| flows[*k].ts_ns < a0);
    for &fk in &finishes[first..] {
        let f = flows[fk];
        if f.ts_ns > a1 {
            break;
        }
        let Some(sk) = idx.flow_start(f.id) else {
            continue;
        };
        let s = flows[sk];
        if let Some(fwd) = innermost_with_stack(host, idx, s.thread, s.ts_ns) {
            return Some((op, fwd));
        }
    }
    None
}

/// The innermost op on `thread` enclosing instant `at` that has a stack (walking outwards).
fn innermost_with_stack(
    host: &HostOpTable,
    idx: &CallStackIndex,
    thread: u32,
    at: i64,
) -> Option<usize> {
    let ops = idx.thread_ops(thread);
    let ts = host.ts_ns();
    let dur = host.dur_ns();
    let end = ops.partition_point(|o| ts[*o as usize] <= at);
    // the innermost enclosing op is the last started one that still contains `at`
    let mut cur = ops[..end]
        .iter()
        .rev()
        .map(|o| *o as usize)
        .find(|o| at <= ts[*o].saturating_add(dur[*o]));
    while let Some(c) = cur {
        if host.stack(c).is_some_and(|s| s != StackId::EMPTY) {
            return Some(c);
        }
        cur = idx.parent(c);
    }
    None
}

#[cfg(test)]
mod tests;
