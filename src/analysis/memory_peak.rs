//! Allocator-level series, peak and live set at the peak (ascend-memory.md §9.5–9.6).
//!
//! The series comes from the totals the allocator wrote into `operator_memory.csv`
//! (one sample per row at allocation, one per released row at release), so it
//! includes memory allocated before the capture, unlike the naive curve of §11.
//!
//! Every function takes `keep`, the rows of one allocator pool ([`super::memory_pool`]): the
//! totals of rows of different pools belong to different allocators and are never mixed.

use crate::model::memory_events::{MemoryEventTable, Totals};

/// Kind of an allocator sample (§9.5). Sorts alloc before release at equal time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SampleKind {
    /// Sampled at `Allocation Time`.
    Alloc,
    /// Sampled at `Release Time`.
    Release,
}

impl SampleKind {
    /// `alloc` / `release`.
    pub fn as_str(self) -> &'static str {
        match self {
            SampleKind::Alloc => "alloc",
            SampleKind::Release => "release",
        }
    }
}

/// One allocator sample (§9.5): time, kind, source row and the three totals (MiB).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AllocatorSample {
    /// Instant, ns.
    pub t_ns: i64,
    /// Alloc or release sample.
    pub kind: SampleKind,
    /// Row index in the memory table.
    pub row: u32,
    /// Physical CSV line of that row.
    pub line: u64,
    /// Totals (MiB) written for this instant.
    pub totals: Totals,
}

/// The samples of the rows `keep` selects, sorted by `(t, alloc before release, line)` (§9.5).
pub fn allocator_series_of(
    mem: &MemoryEventTable,
    keep: &dyn Fn(usize) -> bool,
) -> Vec<AllocatorSample> {
    let mut s = Vec::new();
    for i in (0..mem.len()).filter(|&i| keep(i)) {
        s.push(AllocatorSample {
            t_ns: mem.alloc_time_ns()[i],
            kind: SampleKind::Alloc,
            row: i as u32,
            line: mem.line()[i],
            totals: mem.alloc_totals(i),
        });
        if let Some(t) = mem.release_time_ns(i) {
            s.push(AllocatorSample {
                t_ns: t,
                kind: SampleKind::Release,
                row: i as u32,
                line: mem.line()[i],
                totals: mem.release_totals(i),
            });
        }
    }
    s.sort_by_key(|a| (a.t_ns, a.kind, a.line));
    s
}

/// The live rule of §9.6, for the peak and for any instant: a row is live at `t_ns` when it
/// is an allocation (`size_kb > 0`) made at or before `t_ns` and not released at or before
/// `t_ns` (a row released exactly at `t` is not live at `t`; one allocated at `t` is).
pub fn is_live(size_kb: f64, alloc_ns: i64, release_ns: Option<i64>, t_ns: i64) -> bool {
    size_kb > 0.0 && alloc_ns <= t_ns && release_ns.is_none_or(|r| r > t_ns)
}

/// The live set of the rows `keep` selects as a step series: `(t_ns, Σ size_kb of the rows
/// live at t)` ([`is_live`]) at every instant where it changes, sorted by time. Starts from 0,
/// so it ignores memory allocated before the capture (unlike [`allocator_series_of`]).
pub fn live_series_of(mem: &MemoryEventTable, keep: &dyn Fn(usize) -> bool) -> Vec<(i64, f64)> {
    // Releases sort before allocations at equal times: after all changes at `t` the level is
    // exactly the live set at `t`.
    let mut ev: Vec<(i64, u8, f64)> = Vec::new();
    for i in (0..mem.len()).filter(|&i| keep(i)) {
        let kb = mem.size_kb()[i];
        if kb > 0.0 {
            ev.push((mem.alloc_time_ns()[i], 1, kb));
            if let Some(r) = mem.release_time_ns(i) {
                ev.push((r, 0, -kb));
            }
        }
    }
    ev.sort_by_key(|e| (e.0, e.1));
    let mut out: Vec<(i64, f64)> = Vec::new();
    let mut live = 0.0;
    for (t, _, d) in ev {
        live += d;
        match out.last_mut() {
            Some(last) if last.0 == t => last.1 = live,
            _ => out.push((t, live)),
        }
    }
    out
}

/// The peak of the allocated series and the live set at it (§9.6).
#[derive(Clone, Debug, PartialEq)]
pub struct Peak {
    /// Maximum `allocated` over the samples, MiB.
    pub peak_allocated_mb: f64,
    /// Time of the first sample reaching it, ns.
    pub peak_time_ns: i64,
    /// Its kind.
    pub peak_sample_kind: SampleKind,
    /// Its CSV line.
    pub peak_source_line: u64,
    /// Its row index.
    pub peak_row: u32,
    /// Reserved total holding at the peak sample (its own value, else the latest before), MiB.
    pub reserved_at_peak_mb: Option<f64>,
    /// Active total holding at the peak sample, MiB.
    pub active_at_peak_mb: Option<f64>,
    /// Maximum reserved over all samples, MiB.
    pub max_reserved_mb: Option<f64>,
    /// Rows live at the peak (`size_kb > 0`, allocated ≤ peak, not released at or before it), in row order.
    pub live_rows: Vec<u32>,
    /// Σ `size_kb` of the live rows.
    pub live_kb: f64,
    /// `(live_kb / 1024) / peak_allocated_mb` (None when the peak is 0).
    pub explained_ratio: Option<f64>,
}

/// Computes §9.6 over `samples` from [`allocator_series_of`] with the same `keep` (the live
/// set holds only those rows); `None` when no sample has an allocated total.
pub fn find_peak_of(
    mem: &MemoryEventTable,
    samples: &[AllocatorSample],
    keep: &dyn Fn(usize) -> bool,
) -> Option<Peak> {
    let mut best: Option<usize> = None;
    let mut max_reserved: Option<f64> = None;
    for (k, s) in samples.iter().enumerate() {
        if let Some(a) = s.totals.allocated {
            if best.is_none_or(|b| a > samples[b].totals.allocated.unwrap_or(f64::NEG_INFINITY)) {
                best = Some(k);
            }
        }
        if let Some(r) = s.totals.reserved {
            max_reserved = Some(max_reserved.map_or(r, |m: f64| m.max(r)));
        }
    }
    let b = best?;
    let ps = samples[b];
    let hold =
        |f: fn(&Totals) -> Option<f64>| samples[..=b].iter().rev().find_map(|s| f(&s.totals));
    let t = ps.t_ns;
    let mut live_rows = Vec::new();
    let mut live_kb = 0.0;
    for i in (0..mem.len()).filter(|&i| keep(i)) {
        let size = mem.size_kb()[i];
        if is_live(size, mem.alloc_time_ns()[i], mem.release_time_ns(i), t) {
            live_rows.push(i as u32);
            live_kb += size;
        }
    }
    let peak = ps.totals.allocated.unwrap_or(0.0);
    Some(Peak {
        peak_allocated_mb: peak,
        peak_time_ns: t,
        peak_sample_kind: ps.kind,
        peak_source_line: ps.line,
        peak_row: ps.row,
        reserved_at_peak_mb: hold(|t| t.reserved),
        active_at_peak_mb: hold(|t| t.active),
        max_reserved_mb: max_reserved,
        live_rows,
        live_kb,
        explained_ratio: (peak != 0.0).then(|| live_kb / 1024.0 / peak),
    })
}

/// One group of rows: key, Σ KB, count.
#[derive(Clone, Debug, PartialEq)]
pub struct Group<K> {
    /// Group key (e.g. a user frame or an op name).
    pub key: K,
    /// Σ `size_kb`.
    pub kb: f64,
    /// Number of rows.
    pub count: u64,
}

/// Groups `rows` by `key`, summing `size_kb`; sorted by KB descending, then key; at most `top`.
pub fn group_rows<K: Ord + Clone>(
    mem: &MemoryEventTable,
    rows: impl Iterator<Item = u32>,
    key: impl Fn(u32) -> K,
    top: usize,
) -> Vec<Group<K>> {
    let mut map: std::collections::BTreeMap<K, (f64, u64)> = std::collections::BTreeMap::new();
    for r in rows {
        let e = map.entry(key(r)).or_insert((0.0, 0));
        e.0 += mem.size_kb().get(r as usize).copied().unwrap_or(0.0);
        e.1 += 1;
    }
    let mut v: Vec<Group<K>> = map
        .into_iter()
        .map(|(key, (kb, count))| Group { key, kb, count })
        .collect();
    crate::base::sort::sort_by(&mut v, |a, b| {
        b.kb.total_cmp(&a.kb).then_with(|| a.key.cmp(&b.key))
    });
    v.truncate(top);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::memory_events::MemoryEvent;
    use crate::model::strings::StrId;

    const ALL: fn(usize) -> bool = |_| true;

    fn ev(
        size: f64,
        alloc: i64,
        rel: Option<i64>,
        a: f64,
        r_a: Option<f64>,
        line: u64,
    ) -> MemoryEvent {
        MemoryEvent {
            name: StrId::EMPTY,
            size_kb: size,
            alloc_time_ns: alloc,
            release_time_ns: rel,
            alloc_totals: Totals {
                allocated: Some(a),
                reserved: Some(10.0),
                active: Some(a),
            },
            release_totals: Totals {
                allocated: r_a,
                reserved: r_a.map(|_| 12.0),
                active: r_a,
            },
            line,
            ..Default::default()
        }
    }

    #[test]
    fn peak_at_a_release_sample_and_live_set() {
        let mut m = MemoryEventTable::new();
        m.push(ev(1024.0, 10, Some(100), 5.0, Some(4.0), 2));
        m.push(ev(2048.0, 20, Some(50), 7.0, Some(9.0), 3)); // release at 50 reports 9 MiB
        m.push(ev(512.0, 30, None, 7.5, None, 4));
        m.push(ev(-512.0, 40, None, 7.0, None, 5));
        let s = allocator_series_of(&m, &ALL);
        assert_eq!(s.len(), 6);
        assert_eq!((s[4].t_ns, s[4].kind), (50, SampleKind::Release));
        let p = find_peak_of(&m, &s, &ALL).unwrap();
        assert_eq!(p.peak_allocated_mb, 9.0);
        assert_eq!(p.peak_time_ns, 50);
        assert_eq!(p.peak_sample_kind, SampleKind::Release);
        assert_eq!(p.peak_source_line, 3);
        assert_eq!(p.reserved_at_peak_mb, Some(12.0));
        assert_eq!(p.max_reserved_mb, Some(12.0));
        // row 1 released exactly at the peak: not live; negative rows never live
        assert_eq!(p.live_rows, vec![0, 2]);
        assert_eq!(p.live_kb, 1536.0);
        assert_eq!(p.explained_ratio, Some(1.5 / 9.0));
        let g = group_rows(&m, 0..4, |r| if r % 2 == 0 { "even" } else { "odd" }, 15);
        assert_eq!(
            g[0],
            Group {
                key: "even",
                kb: 1536.0,
                count: 2
            }
        ); // tie: key order
    }

    #[test]
    fn live_series_follows_the_live_rule() {
        let mut m = MemoryEventTable::new();
        m.push(ev(1024.0, 10, Some(100), 5.0, Some(4.0), 2));
        m.push(ev(2048.0, 20, Some(50), 7.0, Some(9.0), 3));
        m.push(ev(512.0, 50, None, 7.5, None, 4)); // allocated when row 1 is released
        m.push(ev(-512.0, 40, None, 7.0, None, 5)); // a free row: never live
                                                    // At 50: −2048 then +512 → 1536; the level at each instant is is_live's sum.
        let s = live_series_of(&m, &ALL);
        assert_eq!(
            s,
            vec![(10, 1024.0), (20, 3072.0), (50, 1536.0), (100, 512.0)]
        );
        for &(t, kb) in &s {
            let sum: f64 = (0..m.len())
                .filter(|&i| {
                    is_live(
                        m.size_kb()[i],
                        m.alloc_time_ns()[i],
                        m.release_time_ns(i),
                        t,
                    )
                })
                .map(|i| m.size_kb()[i])
                .sum();
            assert_eq!(sum, kb, "t = {t}");
        }
    }

    #[test]
    fn first_sample_reaching_the_max_wins() {
        let mut m = MemoryEventTable::new();
        m.push(ev(1.0, 10, None, 3.0, None, 2));
        m.push(ev(1.0, 20, None, 3.0, None, 3));
        let p = find_peak_of(&m, &allocator_series_of(&m, &ALL), &ALL).unwrap();
        assert_eq!(p.peak_source_line, 2);
        assert!(find_peak_of(&MemoryEventTable::new(), &[], &ALL).is_none());
    }
}
