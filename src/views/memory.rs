//! The memory view's data in the worker: compact columns of one rank's memory event rows,
//! and the answers to the UI's queries about them — table pages (sorted and filtered over
//! all rows, ~1M rows in well under a second), downsampled curves, the live set at an
//! instant, grouped allocation sites and full call stacks.
//!
//! Rows are copied once from the engine's result into [`MemoryRows`] (strings interned, one
//! `f64` column per number), so the queries never touch the parsers' types. Exports are not
//! served from here: they re-run the engine so they stay byte-identical to the CLI.
//!
//! No memory rule is computed here (ascend-memory.md §9.5–9.6 live in
//! [`crate::analysis::memory_peak`], once): the curves are the analysis' allocator series and
//! live series ([`MemoryRows::set_series`]), the peak marker is the analysis' peak (the summary
//! card's), and the live set at an instant uses [`is_live`] on the rows' exact ns times. This
//! module converts units (ns → ms, KiB → MiB), downsamples, sorts, filters and pages.

use rustc_hash::FxHashMap as HashMap;

use super::curve::{step_min_max, value_at};
use super::table::{cmp_f64, contains_ci, order_rows, page};
use crate::analysis::memory_peak::{is_live, AllocatorSample, Peak};
use crate::base::units::{ns_to_ms, NS_PER_MS};
use crate::protocol::{
    CurveDto, FrameDto, GroupDto, LiveAtDto, MemColumn, MemoryRowDto, RowFilter, RowsPage,
    RowsQuery, SeriesDto, SiteKey, SitesDto, SortKey, StackDto,
};

/// Sentinel for "no string" / "no stack".
const NONE: u32 = u32::MAX;

/// Match quality codes (ascend-memory.md §6.4), in display order.
pub const QUALITIES: [&str; 5] = [
    "exact",
    "enclosing",
    "nearest_before",
    "via_forward",
    "none",
];

/// One row as the engine gives it (borrowed; copied into the columns).
#[derive(Clone, Debug, Default)]
pub struct RowIn<'a> {
    /// Operator name.
    pub name: &'a str,
    /// Signed size, KiB.
    pub size_kb: f64,
    /// Allocation time, ms.
    pub start_time_ms: f64,
    /// Duration, ms (`0.0` = not released).
    pub duration_ms: f64,
    /// Allocation time, exact ns (the live rule's clock).
    pub alloc_ns: i64,
    /// Release time, exact ns, when released.
    pub release_ns: Option<i64>,
    /// Allocator totals at allocation, MiB (`total_*_mb` parity columns).
    pub total_allocated_mb: f64,
    /// Reserved total at allocation, MiB.
    pub total_reserved_mb: f64,
    /// Active total at allocation, MiB.
    pub total_active_mb: f64,
    /// Matched stack frames, innermost first (the default-mode stack; empty when none).
    /// May be left empty when `stack_key` is one [`MemoryRows::knows_stack`] already knows.
    pub frames: Vec<&'a str>,
    /// The caller's id of this stack (equal ids = equal frames), so each distinct stack is
    /// interned once instead of once per row; `None` = intern `frames`.
    pub stack_key: Option<u32>,
    /// First listed frame (parity `call_stack_top`).
    pub call_stack_top: &'a str,
    /// First user frame (ascend-memory.md §6.3), `""` when none.
    pub user_frame: &'a str,
    /// Index into [`QUALITIES`].
    pub match_quality: u8,
    /// `same_op`, `forward:<name>` or `""`.
    pub stack_origin: &'a str,
    /// 1-based CSV line.
    pub source_line: u64,
}

/// Compact columns of one rank's rows, in export order, plus the curve samples.
#[derive(Debug, Default)]
pub struct MemoryRows {
    rank: u32,
    strings: Vec<String>,
    index: HashMap<String, u32>,
    stacks: Vec<Vec<u32>>,
    stack_index: HashMap<Vec<u32>, u32>,
    stack_by_key: HashMap<u32, u32>,
    name: Vec<u32>,
    size_kb: Vec<f64>,
    start_ms: Vec<f64>,
    duration_ms: Vec<f64>,
    alloc_ns: Vec<i64>,
    release_ns: Vec<Option<i64>>,
    allocated_mb: Vec<f64>,
    reserved_mb: Vec<f64>,
    active_mb: Vec<f64>,
    top: Vec<u32>,
    user: Vec<u32>,
    quality: Vec<u8>,
    origin: Vec<u32>,
    line: Vec<u64>,
    stack: Vec<u32>,
    // Curves (ms, MiB): the analysis' allocator series and live series.
    sample_t: Vec<f64>,
    sample_alloc: Vec<f64>,
    sample_res: Vec<f64>,
    sample_act: Vec<f64>,
    live_t: Vec<f64>,
    live_mb: Vec<f64>,
    /// The analysis' allocator peak: (ms, MiB) for the marker; its exact instant and the
    /// totals holding at it (allocated, reserved, active; MiB) for the live set there.
    peak: Option<(f64, f64)>,
    peak_at: Option<(i64, (f64, f64, f64))>,
    // Last (sort, filter) asked for, and its row order.
    cache: Option<(Option<SortKey>, RowFilter, Vec<u32>)>,
}

impl MemoryRows {
    /// Empty columns for rank folder `rank`.
    pub fn new(rank: u32) -> Self {
        MemoryRows {
            rank,
            ..Default::default()
        }
    }

    fn intern(&mut self, s: &str) -> u32 {
        if s.is_empty() {
            return NONE;
        }
        if let Some(&id) = self.index.get(s) {
            return id;
        }
        let id = self.strings.len() as u32;
        self.strings.push(s.to_string());
        self.index.insert(s.to_string(), id);
        id
    }

    fn text(&self, id: u32) -> &str {
        self.strings
            .get(id as usize)
            .map(String::as_str)
            .unwrap_or("")
    }

    /// True when a row with [`RowIn::stack_key`] `key` was pushed already (its frames may
    /// then be left out).
    pub fn knows_stack(&self, key: u32) -> bool {
        self.stack_by_key.contains_key(&key)
    }

    fn intern_stack(&mut self, frames: &[&str]) -> u32 {
        let frames: Vec<u32> = frames.iter().map(|f| self.intern(f)).collect();
        if frames.is_empty() {
            NONE
        } else if let Some(&id) = self.stack_index.get(&frames) {
            id
        } else {
            let id = self.stacks.len() as u32;
            self.stacks.push(frames.clone());
            self.stack_index.insert(frames, id);
            id
        }
    }

    /// Appends one row (export order).
    pub fn push(&mut self, r: &RowIn<'_>) {
        let name = self.intern(r.name);
        let top = self.intern(r.call_stack_top);
        let user = self.intern(r.user_frame);
        let origin = self.intern(r.stack_origin);
        let stack = match r.stack_key.map(|k| (k, self.stack_by_key.get(&k).copied())) {
            Some((_, Some(id))) => id,
            Some((k, None)) => {
                let id = self.intern_stack(&r.frames);
                self.stack_by_key.insert(k, id);
                id
            }
            None => self.intern_stack(&r.frames),
        };
        self.name.push(name);
        self.size_kb.push(r.size_kb);
        self.start_ms.push(r.start_time_ms);
        self.duration_ms.push(r.duration_ms);
        self.alloc_ns.push(r.alloc_ns);
        self.release_ns.push(r.release_ns);
        self.allocated_mb.push(r.total_allocated_mb);
        self.reserved_mb.push(r.total_reserved_mb);
        self.active_mb.push(r.total_active_mb);
        self.top.push(top);
        self.user.push(user);
        self.quality.push(r.match_quality.min(4));
        self.origin.push(origin);
        self.line.push(r.source_line);
        self.stack.push(stack);
    }

    /// Sets the curves and the peak from the rank's analysis: `samples` from
    /// [`crate::analysis::memory_peak::allocator_series`] (§9.5), `live_kb` from
    /// [`crate::analysis::memory_peak::live_series`], `peak` from
    /// [`crate::analysis::memory_peak::find_peak`] (the summary card's peak, so the chart's
    /// marker is the card's). Missing totals become gaps (NaN).
    pub fn set_series(
        &mut self,
        samples: &[AllocatorSample],
        live_kb: &[(i64, f64)],
        peak: Option<&Peak>,
    ) {
        let nan = |v: Option<f64>| v.unwrap_or(f64::NAN);
        self.sample_t = samples.iter().map(|s| ns_to_ms(s.t_ns)).collect();
        self.sample_alloc = samples.iter().map(|s| nan(s.totals.allocated)).collect();
        self.sample_res = samples.iter().map(|s| nan(s.totals.reserved)).collect();
        self.sample_act = samples.iter().map(|s| nan(s.totals.active)).collect();
        self.live_t = live_kb.iter().map(|l| ns_to_ms(l.0)).collect();
        self.live_mb = live_kb.iter().map(|l| l.1 / 1024.0).collect();
        self.peak = peak.map(|p| (ns_to_ms(p.peak_time_ns), p.peak_allocated_mb));
        self.peak_at = peak.map(|p| {
            let totals = (
                p.peak_allocated_mb,
                nan(p.reserved_at_peak_mb),
                nan(p.active_at_peak_mb),
            );
            (p.peak_time_ns, totals)
        });
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.name.len()
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }

    fn row_dto(&self, i: u32) -> MemoryRowDto {
        let k = i as usize;
        MemoryRowDto {
            row: i,
            name: self.text(self.name[k]).to_string(),
            size_kb: self.size_kb[k],
            start_time_ms: self.start_ms[k],
            duration_ms: self.duration_ms[k],
            total_allocated_mb: self.allocated_mb[k],
            total_reserved_mb: self.reserved_mb[k],
            total_active_mb: self.active_mb[k],
            call_stack_top: self.text(self.top[k]).to_string(),
            user_frame: self.text(self.user[k]).to_string(),
            match_quality: QUALITIES[self.quality[k] as usize].to_string(),
            source_line: self.line[k],
        }
    }

    fn order(&mut self, sort: Option<SortKey>, filter: &RowFilter) -> &[u32] {
        let hit = matches!(&self.cache, Some((s, f, _)) if *s == sort && f == filter);
        if !hit {
            let needle = filter.text.trim().to_lowercase();
            // Each distinct string and stack is tested once, not once per row.
            let str_hit: Vec<bool> = self
                .strings
                .iter()
                .map(|s| contains_ci(s, &needle))
                .collect();
            let stack_hit: Vec<bool> = self
                .stacks
                .iter()
                .map(|st| st.iter().any(|&f| str_hit.get(f as usize) == Some(&true)))
                .collect();
            let (lo, hi) = (
                filter.min_kb.unwrap_or(f64::NEG_INFINITY),
                filter.max_kb.unwrap_or(f64::INFINITY),
            );
            let keep = |i: u32| {
                let k = i as usize;
                let kb = self.size_kb[k];
                if !(kb >= lo && kb <= hi) {
                    return false;
                }
                if needle.is_empty() {
                    return true;
                }
                let s = |id: u32| str_hit.get(id as usize) == Some(&true);
                s(self.name[k])
                    || s(self.top[k])
                    || s(self.user[k])
                    || stack_hit.get(self.stack[k] as usize) == Some(&true)
            };
            let order = match sort {
                None => order_rows(self.len(), keep, None, false),
                Some(SortKey { column, descending }) => {
                    let f = by_f64;
                    let s = |col| by_text(col, &self.strings);
                    let cmp: Cmp<'_> = match column {
                        MemColumn::Row => Box::new(|a: u32, b: u32| a.cmp(&b)),
                        MemColumn::Name => s(&self.name),
                        MemColumn::SizeKb => f(&self.size_kb),
                        MemColumn::StartTimeMs => f(&self.start_ms),
                        MemColumn::DurationMs => f(&self.duration_ms),
                        MemColumn::TotalAllocatedMb => f(&self.allocated_mb),
                        MemColumn::TotalReservedMb => f(&self.reserved_mb),
                        MemColumn::TotalActiveMb => f(&self.active_mb),
                        MemColumn::UserFrame => s(&self.user),
                        MemColumn::CallStackTop => s(&self.top),
                        MemColumn::MatchQuality => Box::new(|a: u32, b: u32| {
                            self.quality[a as usize].cmp(&self.quality[b as usize])
                        }),
                    };
                    order_rows(self.len(), keep, Some(&*cmp), descending)
                }
            };
            self.cache = Some((sort, filter.clone(), order));
        }
        match &self.cache {
            Some((_, _, o)) => o,
            None => &[],
        }
    }

    /// A page of rows for `q` (sorted and filtered over all rows; the order is cached).
    pub fn rows(&mut self, q: &RowsQuery) -> RowsPage {
        let total_rows = self.len() as u32;
        let ids: Vec<u32> = {
            let order = self.order(q.sort, &q.filter);
            page(order, q.offset, q.limit).to_vec()
        };
        let matching_rows = self.cache.as_ref().map(|c| c.2.len() as u32).unwrap_or(0);
        RowsPage {
            rank: self.rank,
            total_rows,
            matching_rows,
            offset: q.offset.min(matching_rows),
            rows: ids.into_iter().map(|i| self.row_dto(i)).collect(),
        }
    }

    /// Full time range of the curves, ms.
    pub fn time_range(&self) -> Option<(f64, f64)> {
        let first = [self.sample_t.first(), self.live_t.first()]
            .into_iter()
            .flatten()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let last = [self.sample_t.last(), self.live_t.last()]
            .into_iter()
            .flatten()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        (first <= last).then_some((first, last))
    }

    /// Curves downsampled to `width_px` columns over `x_range` (default: everything).
    pub fn curve(&self, x_range: Option<(f64, f64)>, width_px: u32) -> CurveDto {
        let full = self.time_range().unwrap_or((0.0, 1.0));
        let (mut x0, mut x1) = x_range.unwrap_or(full);
        if !(x1 > x0) {
            // A single instant: widen so that it is visible.
            x0 -= 0.5;
            x1 = x0 + 1.0;
        }
        let w = width_px.clamp(1, 8192) as usize;
        let mk = |name: &str, ts: &[f64], vs: &[f64]| {
            let mm = step_min_max(ts, vs, x0, x1, w);
            SeriesDto {
                name: name.to_string(),
                min: mm.min,
                max: mm.max,
            }
        };
        let series = vec![
            mk("allocated (allocator)", &self.sample_t, &self.sample_alloc),
            mk("reserved (allocator)", &self.sample_t, &self.sample_res),
            mk("active (allocator)", &self.sample_t, &self.sample_act),
            mk(
                "live (operator rows only, from 0)",
                &self.live_t,
                &self.live_mb,
            ),
        ];
        let y_max_mb = series
            .iter()
            .flat_map(|s| s.max.iter())
            .copied()
            .filter(|v| !v.is_nan())
            .fold(0.0, f64::max);
        CurveDto {
            rank: self.rank,
            x0_ms: x0,
            x1_ms: x1,
            full_range_ms: full,
            series,
            y_max_mb,
            peak: self.peak,
            samples: (self.sample_t.len() + self.live_t.len()) as u64,
        }
    }

    /// The peak's exact instant and totals when `t_ms` is the peak's time as sent (ms cannot
    /// hold epoch ns exactly, so the marker's time stands for the peak sample itself).
    fn at_peak(&self, t_ms: f64) -> Option<(i64, (f64, f64, f64))> {
        self.peak.filter(|p| p.0 == t_ms).and(self.peak_at)
    }

    /// The rows live at `t_ms` ([`is_live`], §9.6), the `limit` largest first, with the
    /// allocator totals holding at `t`.
    pub fn live_at(&self, t_ms: f64, limit: u32) -> LiveAtDto {
        let peak = self.at_peak(t_ms);
        let t_ns = peak.map_or((t_ms * NS_PER_MS as f64).round() as i64, |p| p.0);
        let mut live: Vec<u32> = Vec::new();
        let mut kb = 0.0;
        for i in 0..self.len() {
            let s = self.size_kb[i];
            if is_live(s, self.alloc_ns[i], self.release_ns[i], t_ns) {
                live.push(i as u32);
                kb += s;
            }
        }
        let live_rows = live.len() as u64;
        live.sort_by(|&a, &b| cmp_f64(self.size_kb[b as usize], self.size_kb[a as usize]));
        live.truncate(limit as usize);
        let totals = match peak {
            Some((_, totals)) => Some(totals),
            None => self.totals_at(t_ms),
        };
        LiveAtDto {
            rank: self.rank,
            t_ms,
            totals_mb: totals,
            live_mb: kb / 1024.0,
            live_rows,
            largest: live.into_iter().map(|i| self.row_dto(i)).collect(),
        }
    }

    /// The allocator totals holding at `t_ms` (the last samples at or before it).
    fn totals_at(&self, t_ms: f64) -> Option<(f64, f64, f64)> {
        match (
            value_at(&self.sample_t, &self.sample_alloc, t_ms),
            value_at(&self.sample_t, &self.sample_res, t_ms),
            value_at(&self.sample_t, &self.sample_act, t_ms),
        ) {
            (Some(a), Some(r), c) => Some((a, r, c.unwrap_or(f64::NAN))),
            _ => None,
        }
    }

    /// Allocations (`size_kb > 0`) grouped by `key`, largest Σ size first (ties by key).
    pub fn sites(&self, key: SiteKey, limit: u32) -> SitesDto {
        let col = match key {
            SiteKey::UserFrame => &self.user,
            SiteKey::CallStackTop => &self.top,
            SiteKey::Name => &self.name,
        };
        let mut acc: HashMap<u32, (u64, f64)> = HashMap::default();
        for i in 0..self.len() {
            if self.size_kb[i] > 0.0 {
                let e = acc.entry(col[i]).or_default();
                e.0 += 1;
                e.1 += self.size_kb[i];
            }
        }
        let mut groups: Vec<GroupDto> = acc
            .into_iter()
            .map(|(id, (count, size_kb))| GroupDto {
                key: self.text(id).to_string(),
                count,
                size_kb,
            })
            .collect();
        groups.sort_by(|a, b| cmp_f64(b.size_kb, a.size_kb).then(a.key.cmp(&b.key)));
        let distinct = groups.len() as u64;
        let total_kb = groups.iter().map(|g| g.size_kb).sum();
        groups.truncate(limit as usize);
        SitesDto {
            rank: self.rank,
            group_by: key,
            groups,
            distinct,
            total_kb,
        }
    }

    /// The full stack of `row`, frames innermost first, the user frame marked; `None` for
    /// an unknown row.
    pub fn stack(&self, row: u32) -> Option<StackDto> {
        let k = row as usize;
        if k >= self.len() {
            return None;
        }
        let user = self.user[k];
        let frames = self
            .stacks
            .get(self.stack[k] as usize)
            .map(|st| {
                st.iter()
                    .map(|&f| FrameDto {
                        text: self.text(f).to_string(),
                        user: f == user && user != NONE,
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(StackDto {
            rank: self.rank,
            row: self.row_dto(row),
            frames,
            stack_origin: self.text(self.origin[k]).to_string(),
        })
    }
}

type Cmp<'a> = Box<dyn Fn(u32, u32) -> std::cmp::Ordering + 'a>;

fn by_f64(col: &[f64]) -> Cmp<'_> {
    Box::new(move |a, b| cmp_f64(col[a as usize], col[b as usize]))
}

fn by_text<'a>(col: &'a [u32], strings: &'a [String]) -> Cmp<'a> {
    let text = move |id: u32| strings.get(id as usize).map(String::as_str).unwrap_or("");
    Box::new(move |a, b| text(col[a as usize]).cmp(text(col[b as usize])))
}

#[cfg(test)]
mod tests;
