//! The analysed memory events of one rank ([`RankMemory`]) and of a whole run
//! ([`MemoryRun`]): compact per-row columns over the rank's pools, the
//! `MemoryEventRow` view ([`RowRef`], ascend-memory.md §8) and the
//! deterministic merge order (§9.0).
//!
//! The host-op table is not kept: matching results are compacted into a few
//! 4–8-byte columns per row, strings and stacks stay interned.

use std::sync::Arc;

use super::memory_match::{MatchQuality, Matches};
use super::memory_phase::{classify, Phase};
use super::user_frame::{UserFrameRule, UserFrameStatus, UserFrames};
use crate::base::Problems;
use crate::model::host_events::HostOpTable;
use crate::model::memory_events::MemoryEventTable;
use crate::model::stacks::{StackId, StackPool};
use crate::model::strings::{StrId, StringPool};

const NONE: u32 = u32::MAX;
const NONE_I64: i64 = i64::MIN;

/// Identity of one analysed capture folder (§3, §8.2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankInfo {
    /// Role (§3.3).
    pub role: String,
    /// Rank id (§3.1).
    pub rank_id: i64,
    /// Position among the folders of the same `(role, rank)` (§3.2).
    pub source_index: u32,
    /// Folder path relative to the dropped root.
    pub source_dir: String,
}

/// The §9.0 rank order: `(role, rank_id, source_index, source_dir)`. One rule for every
/// place that orders ranks (the merge here and the gathered exports of `engine::export::gather`).
pub fn rank_order_key<'a>(
    role: &'a str,
    rank_id: i64,
    source_index: u32,
    source_dir: &'a str,
) -> (&'a str, i64, u32, &'a str) {
    (role, rank_id, source_index, source_dir)
}

impl RankInfo {
    /// This rank's [`rank_order_key`].
    pub fn order_key(&self) -> (&str, i64, u32, &str) {
        rank_order_key(
            &self.role,
            self.rank_id,
            self.source_index,
            &self.source_dir,
        )
    }
}

/// What happened to a rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RankStatus {
    /// Rows were produced (possibly with problems).
    Analysed,
    /// Nothing usable; the reason (its problems say more).
    Failed(String),
    /// Stopped on request.
    Cancelled,
}

/// Facts of the trace read, for summaries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceFacts {
    /// A `trace_view.json` was read.
    pub present: bool,
    /// `cpu_op` events kept.
    pub cpu_ops: u64,
    /// Of those with a `Call stack` key.
    pub with_stack: u64,
}

/// One rank's analysed memory events.
///
/// Invariant: every per-row column has `events.len()` entries.
#[derive(Clone, Debug)]
pub struct RankMemory {
    /// Who this is.
    pub info: RankInfo,
    /// §9.7 phase of the role.
    pub phase: Phase,
    /// Outcome.
    pub status: RankStatus,
    /// Problems of this rank (inventory notes, CSV rows, trace).
    pub problems: Problems,
    /// Trace facts.
    pub trace: TraceFacts,
    strings: StringPool,
    stacks: StackPool,
    events: MemoryEventTable,
    parity_stack: Vec<u32>,
    stack: Vec<u32>,
    quality: Vec<MatchQuality>,
    matched_ts_ns: Vec<i64>,
    origin: Vec<u32>,
    user_frames: UserFrames,
}

impl RankMemory {
    /// A rank without rows (failed, cancelled or skipped).
    pub fn empty(info: RankInfo, status: RankStatus, problems: Problems) -> Self {
        RankMemory {
            phase: classify(&info.role),
            info,
            status,
            problems,
            trace: TraceFacts::default(),
            strings: StringPool::new(),
            stacks: StackPool::new(),
            events: MemoryEventTable::new(),
            parity_stack: Vec::new(),
            stack: Vec::new(),
            quality: Vec::new(),
            matched_ts_ns: Vec::new(),
            origin: Vec::new(),
            user_frames: UserFrames::default(),
        }
    }

    /// Compacts the match of every row (`matches` from `analysis::memory_match::match_rows` over
    /// `events` and `host`) and computes user frames with `rule`. `host` can be dropped after.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        info: RankInfo,
        strings: StringPool,
        stacks: StackPool,
        events: MemoryEventTable,
        host: &HostOpTable,
        matches: &Matches,
        rule: &UserFrameRule,
        problems: Problems,
        trace: TraceFacts,
    ) -> Self {
        let n = events.len();
        let stack_of = |op: Option<usize>| {
            op.and_then(|o| host.stack(o))
                .map(|s| s.index() as u32)
                .unwrap_or(NONE)
        };
        let mut r = RankMemory::empty(info, RankStatus::Analysed, problems);
        r.trace = trace;
        r.parity_stack = (0..n).map(|i| stack_of(matches.parity_op(i))).collect();
        r.stack = (0..n).map(|i| stack_of(matches.stack_op(i))).collect();
        r.quality = (0..n).map(|i| matches.quality(i)).collect();
        r.matched_ts_ns = (0..n)
            .map(|i| {
                matches
                    .matched_op(i)
                    .map(|o| host.ts_ns()[o])
                    .unwrap_or(NONE_I64)
            })
            .collect();
        r.origin = (0..n)
            .map(|i| match (matches.quality(i), matches.stack_op(i)) {
                (MatchQuality::ViaForward, Some(o)) => host.name()[o].index() as u32,
                _ => NONE,
            })
            .collect();
        r.user_frames = UserFrames::compute(rule, &stacks);
        r.strings = strings;
        r.stacks = stacks;
        r.events = events;
        r
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.events.len()
    }
    /// True when the rank has no rows.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
    /// The rank's memory events.
    pub fn events(&self) -> &MemoryEventTable {
        &self.events
    }
    /// The rank's string pool.
    pub fn strings(&self) -> &StringPool {
        &self.strings
    }
    /// The rank's stack pool.
    pub fn stacks(&self) -> &StackPool {
        &self.stacks
    }
    /// Row `i` as a `MemoryEventRow` view (`i < len()`).
    pub fn row(&self, i: usize) -> RowRef<'_> {
        RowRef { r: self, i }
    }
    /// Rows per quality in [`MatchQuality::ALL`] order.
    pub fn quality_counts(&self) -> [u64; 5] {
        let mut c = [0u64; 5];
        for q in &self.quality {
            c[*q as usize] += 1;
        }
        c
    }
}

/// `component` (§8.2) of an op name: [`super::memory_pool::Component::of_name`].
pub fn component(name: &str) -> &'static str {
    super::memory_pool::Component::of_name(name).as_str()
}

/// One `MemoryEventRow` (§8.1 parity columns, §8.2 extensions), borrowed from its rank.
#[derive(Clone, Copy)]
pub struct RowRef<'a> {
    r: &'a RankMemory,
    i: usize,
}

fn opt_u32(v: u32) -> Option<u32> {
    (v != NONE).then_some(v)
}

impl<'a> RowRef<'a> {
    /// The rank.
    pub fn rank(&self) -> &'a RankMemory {
        self.r
    }
    /// Row index within the rank.
    pub fn index(&self) -> usize {
        self.i
    }
    /// 1 `name`.
    pub fn name(&self) -> &'a str {
        self.r.strings.get(self.r.events.name()[self.i])
    }
    /// 2 `role`.
    pub fn role(&self) -> &'a str {
        &self.r.info.role
    }
    /// 3 `rank_id`.
    pub fn rank_id(&self) -> i64 {
        self.r.info.rank_id
    }
    fn parity_stack(&self) -> Option<StackId> {
        opt_u32(self.r.parity_stack[self.i]).map(StackId::from_index)
    }
    /// 4 `call_stack`: the parity match's full stack (§6.1), or `""`.
    pub fn call_stack(&self) -> &'a str {
        self.parity_stack()
            .map(|s| self.r.stacks.text(s))
            .unwrap_or("")
    }
    /// 5 `call_stack_top`: text before the first `";\r\n"` of `call_stack`.
    pub fn call_stack_top(&self) -> &'a str {
        let s = self.call_stack();
        s.split(";\r\n").next().unwrap_or("")
    }
    /// 6 `size_kb`.
    pub fn size_kb(&self) -> f64 {
        self.r.events.size_kb()[self.i]
    }
    /// 7 `start_time_ms` = `float(Allocation Time(us)) / 1000`.
    pub fn start_time_ms(&self) -> f64 {
        self.r.events.alloc_time_us()[self.i] / 1000.0
    }
    /// 8 `duration_ms` (`0.0` when empty).
    pub fn duration_ms(&self) -> f64 {
        self.r.events.duration_us(self.i).unwrap_or(0.0) / 1000.0
    }
    /// 9 `total_allocated_mb` (`0.0` when empty).
    pub fn total_allocated_mb(&self) -> f64 {
        self.r.events.alloc_totals(self.i).allocated.unwrap_or(0.0)
    }
    /// 10 `total_reserved_mb`.
    pub fn total_reserved_mb(&self) -> f64 {
        self.r.events.alloc_totals(self.i).reserved.unwrap_or(0.0)
    }
    /// 11 `total_active_mb`.
    pub fn total_active_mb(&self) -> f64 {
        self.r.events.alloc_totals(self.i).active.unwrap_or(0.0)
    }
    /// 12 `device_type`.
    pub fn device_type(&self) -> &'a str {
        self.r.strings.get(self.r.events.device_type()[self.i])
    }
    /// The default-mode stack (§6.4, incl. `via_forward`).
    pub fn stack(&self) -> Option<StackId> {
        opt_u32(self.r.stack[self.i]).map(StackId::from_index)
    }
    /// Full text of [`RowRef::stack`] (`call_stack_frames` in exports).
    pub fn stack_text(&self) -> &'a str {
        self.stack().map(|s| self.r.stacks.text(s)).unwrap_or("")
    }
    /// `user_frame` and `user_frame_status` (§6.3).
    pub fn user_frame(&self) -> (&'a str, UserFrameStatus) {
        self.r.user_frames.of(&self.r.stacks, self.stack())
    }
    /// `match_quality`.
    pub fn match_quality(&self) -> MatchQuality {
        self.r.quality[self.i]
    }
    /// `matched_op_ts` in ns.
    pub fn matched_op_ts_ns(&self) -> Option<i64> {
        Some(self.r.matched_ts_ns[self.i]).filter(|v| *v != NONE_I64)
    }
    /// `match_lag` in ns (`t − ts`).
    pub fn match_lag_ns(&self) -> Option<i64> {
        self.matched_op_ts_ns().map(|ts| self.start_time_ns() - ts)
    }
    /// `stack_origin`: `same_op`, `forward:<name>` or `""`.
    pub fn stack_origin(&self) -> String {
        match (self.match_quality(), opt_u32(self.r.origin[self.i])) {
            (MatchQuality::None, _) => String::new(),
            (_, Some(o)) => format!("forward:{}", self.r.strings.get(StrId::from_index(o))),
            _ => "same_op".into(),
        }
    }
    /// `start_time_ns` (exact).
    pub fn start_time_ns(&self) -> i64 {
        self.r.events.alloc_time_ns()[self.i]
    }
    /// `Release Time(us)` in ns.
    pub fn release_time_ns(&self) -> Option<i64> {
        self.r.events.release_time_ns(self.i)
    }
    /// `Active Release Time(us)` in ns.
    pub fn active_release_time_ns(&self) -> Option<i64> {
        self.r.events.active_release_time_ns(self.i)
    }
    /// `active_duration_ms`.
    pub fn active_duration_ms(&self) -> Option<f64> {
        self.r.events.active_duration_us(self.i).map(|v| v / 1000.0)
    }
    /// Release totals (MiB).
    pub fn release_totals(&self) -> crate::model::memory_events::Totals {
        self.r.events.release_totals(self.i)
    }
    /// `stream_ptr` text.
    pub fn stream_ptr(&self) -> &'a str {
        self.r.strings.get(self.r.events.stream_ptr()[self.i])
    }
    /// `component`.
    pub fn component(&self) -> &'static str {
        component(self.name())
    }
    /// `phase`.
    pub fn phase(&self) -> Phase {
        self.r.phase
    }
    /// `source_dir`.
    pub fn source_dir(&self) -> &'a str {
        &self.r.info.source_dir
    }
    /// `source_index`.
    pub fn source_index(&self) -> u32 {
        self.r.info.source_index
    }
    /// `source_line`.
    pub fn source_line(&self) -> u64 {
        self.r.events.line()[self.i]
    }
}

/// All analysed ranks of a run and the §9.0 row order.
#[derive(Clone, Debug, Default)]
pub struct MemoryRun {
    /// Ranks sorted by `(role, rank_id, source_index)` (shared with the engine's store, so
    /// a merge never copies rows).
    pub ranks: Vec<Arc<RankMemory>>,
    order: Vec<(u32, u32)>,
}

impl MemoryRun {
    /// Merges rank results (§9.0 default): ranks sorted by `(role, rank_id, source_index)`,
    /// rows concatenated in file order, then stable-sorted by `start_time_ms`.
    pub fn merge(ranks: Vec<RankMemory>) -> MemoryRun {
        MemoryRun::merge_shared(ranks.into_iter().map(Arc::new).collect())
    }

    /// [`MemoryRun::merge`] over ranks shared with a store.
    pub fn merge_shared(mut ranks: Vec<Arc<RankMemory>>) -> MemoryRun {
        crate::base::sort::sort_by(&mut ranks, |a, b| {
            a.info.order_key().cmp(&b.info.order_key())
        });
        let mut order: Vec<(u32, u32)> = Vec::with_capacity(ranks.iter().map(|r| r.len()).sum());
        for (k, r) in ranks.iter().enumerate() {
            order.extend((0..r.len() as u32).map(|i| (k as u32, i)));
        }
        let key =
            |(k, i): (u32, u32)| ranks[k as usize].events.alloc_time_us()[i as usize] / 1000.0;
        crate::base::sort::sort_by(&mut order, |a, b| key(*a).total_cmp(&key(*b)));
        MemoryRun { ranks, order }
    }
    /// Total rows.
    pub fn len(&self) -> usize {
        self.order.len()
    }
    /// True when no rank produced rows.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
    /// The rows in §9.0 order.
    pub fn rows(&self) -> impl Iterator<Item = RowRef<'_>> + '_ {
        self.order
            .iter()
            .map(|&(k, i)| self.ranks[k as usize].row(i as usize))
    }
    /// Row `n` in §9.0 order.
    pub fn row(&self, n: usize) -> Option<RowRef<'_>> {
        self.order
            .get(n)
            .map(|&(k, i)| self.ranks[k as usize].row(i as usize))
    }
}
