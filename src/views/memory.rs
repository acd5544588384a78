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
use super::table::{cmp_f64, contains_ci, desc_f64_key, order_rows, page};
use crate::analysis::memory_peak::is_live;
use crate::analysis::memory_pool::{Component, PoolSeries};
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
    /// The allocator pool of the row (ascend-memory.md §8.2 `component`).
    pub component: Component,
}

impl Default for Component {
    fn default() -> Self {
        Component::Pta
    }
}

/// One pool's curves (ms, MiB): the analysis' allocator series and live series of its rows,
/// and its peak.
#[derive(Debug, Default)]
struct PoolCurves {
    component: Component,
    sample_t: Vec<f64>,
    sample_alloc: Vec<f64>,
    sample_res: Vec<f64>,
    sample_act: Vec<f64>,
    live_t: Vec<f64>,
    live_mb: Vec<f64>,
    /// The pool's allocator peak: (ms, MiB) for the marker; its exact instant and the totals
    /// holding at it (allocated, reserved, active; MiB) for the live set there.
    peak: Option<(f64, f64)>,
    peak_at: Option<(i64, (f64, f64, f64))>,
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
    component: Vec<Component>,
    /// Curves per allocator pool, [`Component::ALL`] order, pools with rows only.
    pools: Vec<PoolCurves>,
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
        self.component.push(r.component);
    }

    /// Sets the curves and peaks from the rank's analysis: one [`PoolSeries`] per allocator
    /// pool ([`crate::analysis::memory_pool::pool_series`]: §9.5 series, live series and §9.6
    /// peak over the pool's rows; the summary card's peaks, so the chart's marker is the
    /// card's). Missing totals become gaps (NaN).
    pub fn set_series(&mut self, pools: &[PoolSeries]) {
        let nan = |v: Option<f64>| v.unwrap_or(f64::NAN);
        self.pools = pools
            .iter()
            .map(|p| PoolCurves {
                component: p.component,
                sample_t: p.samples.iter().map(|s| ns_to_ms(s.t_ns)).collect(),
                sample_alloc: p.samples.iter().map(|s| nan(s.totals.allocated)).collect(),
                sample_res: p.samples.iter().map(|s| nan(s.totals.reserved)).collect(),
                sample_act: p.samples.iter().map(|s| nan(s.totals.active)).collect(),
                live_t: p.live.iter().map(|l| ns_to_ms(l.0)).collect(),
                live_mb: p.live.iter().map(|l| l.1 / 1024.0).collect(),
                peak: p
                    .peak
                    .as_ref()
                    .map(|k| (ns_to_ms(k.peak_time_ns), k.peak_allocated_mb)),
                peak_at: p.peak.as_ref().map(|k| {
                    let totals = (
                        k.peak_allocated_mb,
                        nan(k.reserved_at_peak_mb),
                        nan(k.active_at_peak_mb),
                    );
                    (k.peak_time_ns, totals)
                }),
            })
            .collect();
    }

    /// The curves of `pool` (`None` or an unknown pool: the first pool with rows).
    fn pool(&self, pool: Option<Component>) -> Option<&PoolCurves> {
        pool.and_then(|c| self.pools.iter().find(|p| p.component == c))
            .or(self.pools.first())
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

    /// Full time range of the curves of every pool, ms (one x axis whichever pool is shown).
    pub fn time_range(&self) -> Option<(f64, f64)> {
        let ends = |v: &Vec<f64>| [v.first().copied(), v.last().copied()];
        let (first, last) = self
            .pools
            .iter()
            .flat_map(|p| [ends(&p.sample_t), ends(&p.live_t)])
            .flatten()
            .flatten()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), t| {
                (lo.min(t), hi.max(t))
            });
        (first <= last).then_some((first, last))
    }

    /// The curves of `pool` (`None`: the first pool with rows) downsampled to `width_px`
    /// columns over `x_range` (default: everything). Series names start with the pool
    /// (`PTA allocated`).
    pub fn curve(
        &self,
        x_range: Option<(f64, f64)>,
        width_px: u32,
        pool: Option<Component>,
    ) -> CurveDto {
        let full = self.time_range().unwrap_or((0.0, 1.0));
        let (mut x0, mut x1) = x_range.unwrap_or(full);
        if !(x1 > x0) {
            // A single instant: widen so that it is visible.
            x0 -= 0.5;
            x1 = x0 + 1.0;
        }
        let w = width_px.clamp(1, 8192) as usize;
        let mk = |name: String, ts: &[f64], vs: &[f64]| {
            let mm = step_min_max(ts, vs, x0, x1, w);
            SeriesDto {
                name,
                min: mm.min,
                max: mm.max,
            }
        };
        let p = self.pool(pool);
        let series = match p {
            None => Vec::new(),
            Some(p) => {
                let c = p.component.as_str();
                vec![
                    mk(format!("{c} allocated"), &p.sample_t, &p.sample_alloc),
                    mk(format!("{c} reserved"), &p.sample_t, &p.sample_res),
                    mk(format!("{c} active"), &p.sample_t, &p.sample_act),
                    mk(
                        format!("{c} live (its operator rows only, from 0)"),
                        &p.live_t,
                        &p.live_mb,
                    ),
                ]
            }
        };
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
            peak: p.and_then(|p| p.peak),
            samples: p.map_or(0, |p| (p.sample_t.len() + p.live_t.len()) as u64),
            pool: p.map(|p| p.component.as_str().to_string()),
        }
    }

    /// The rows of `pool` live at `t_ms` ([`is_live`], §9.6), the `limit` largest first, with
    /// the pool's allocator totals holding at `t`. `t_ms` equal to the pool's peak time as sent
    /// stands for the peak sample itself (ms cannot hold epoch ns exactly).
    pub fn live_at(&self, t_ms: f64, limit: u32, pool: Option<Component>) -> LiveAtDto {
        let p = self.pool(pool);
        let peak = p.and_then(|p| p.peak.filter(|k| k.0 == t_ms).and(p.peak_at));
        let t_ns = peak.map_or((t_ms * NS_PER_MS as f64).round() as i64, |p| p.0);
        let c = p.map(|p| p.component);
        let mut live: Vec<u32> = Vec::new();
        let mut kb = 0.0;
        for i in 0..self.len() {
            let s = self.size_kb[i];
            if Some(self.component[i]) == c
                && is_live(s, self.alloc_ns[i], self.release_ns[i], t_ns)
            {
                live.push(i as u32);
                kb += s;
            }
        }
        let live_rows = live.len() as u64;
        // Largest first, stable: `cmp_f64(b, a)`'s order.
        crate::base::sort::sort_by_i64_key(&mut live, |r| desc_f64_key(self.size_kb[r as usize]));
        live.truncate(limit as usize);
        let totals = match (peak, p) {
            (Some((_, totals)), _) => Some(totals),
            (None, Some(p)) => totals_at(p, t_ms),
            (None, None) => None,
        };
        LiveAtDto {
            rank: self.rank,
            t_ms,
            totals_mb: totals,
            live_mb: kb / 1024.0,
            live_rows,
            largest: live.into_iter().map(|i| self.row_dto(i)).collect(),
            pool: c.map(|c| c.as_str().to_string()),
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
        crate::base::sort::sort_by(&mut groups, |a, b| {
            cmp_f64(b.size_kb, a.size_kb).then(a.key.cmp(&b.key))
        });
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

/// The allocator totals of `p` holding at `t_ms` (the last samples at or before it).
fn totals_at(p: &PoolCurves, t_ms: f64) -> Option<(f64, f64, f64)> {
    match (
        value_at(&p.sample_t, &p.sample_alloc, t_ms),
        value_at(&p.sample_t, &p.sample_res, t_ms),
        value_at(&p.sample_t, &p.sample_act, t_ms),
    ) {
        (Some(a), Some(r), c) => Some((a, r, c.unwrap_or(f64::NAN))),
        _ => None,
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
