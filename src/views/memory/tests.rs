//! Hand-checked values on four rows (see each assertion's comment for the arithmetic).

use super::*;
use crate::analysis::memory_peak::{allocator_series_of, find_peak_of, live_series_of};
use crate::analysis::memory_pool::{Component, PoolSeries};
use crate::model::memory_events::{MemoryEvent, MemoryEventTable, Totals};
use crate::protocol::{MemColumn, RowFilter, RowsQuery, SiteKey, SortKey};

const LIB: &str = "/usr/lib/python3.10/site-packages/torch/x.py(1): f";
const USER: &str = "/home/u/main.py(5): train";
const OUTER: &str = "<string>(1): <module>";

/// One row: (size KiB, alloc ms, release ms, alloc totals, release totals, line).
type Ev = (
    f64,
    i64,
    Option<i64>,
    (f64, f64, f64),
    Option<(f64, f64, f64)>,
    u64,
);

const MS: i64 = 1_000_000;

/// The rows' model table, so the curves and the peak come from `analysis::memory_peak`.
fn table(evs: &[Ev]) -> MemoryEventTable {
    let tot = |t: (f64, f64, f64)| Totals {
        allocated: Some(t.0),
        reserved: Some(t.1),
        active: Some(t.2),
    };
    let mut m = MemoryEventTable::new();
    for &(size_kb, a, r, at, rt, line) in evs {
        m.push(MemoryEvent {
            size_kb,
            alloc_time_ns: a * MS,
            release_time_ns: r.map(|r| r * MS),
            alloc_totals: tot(at),
            release_totals: rt.map(tot).unwrap_or_default(),
            line,
            ..Default::default()
        });
    }
    m
}

const ALL: fn(usize) -> bool = |_| true;

/// Every row in one PTA pool (the rows' `RowIn::component` default).
fn with_series(m: &mut MemoryRows, t: &MemoryEventTable) {
    let samples = allocator_series_of(t, &ALL);
    let peak = find_peak_of(t, &samples, &ALL);
    m.set_series(&[PoolSeries {
        component: Component::Pta,
        rows: t.len() as u64,
        live: live_series_of(t, &ALL),
        samples,
        peak,
    }]);
}

const EVS: [Ev; 4] = [
    (
        100.0,
        10,
        Some(20),
        (1.0, 2.0, 1.0),
        Some((0.9, 2.0, 0.9)),
        2,
    ),
    (300.0, 15, None, (1.3, 2.0, 1.3), None, 3),
    (-100.0, 20, None, (1.2, 2.0, 1.2), None, 4),
    (
        50.0,
        20,
        Some(30),
        (1.25, 2.0, 1.25),
        Some((1.2, 2.0, 1.2)),
        5,
    ),
];

fn rows() -> MemoryRows {
    let mut m = MemoryRows::new(7);
    let stack = vec![LIB, USER, OUTER];
    let base = |i: usize| {
        let (size_kb, a, r, at, _, line) = EVS[i];
        RowIn {
            size_kb,
            start_time_ms: a as f64,
            duration_ms: r.map_or(0.0, |r| (r - a) as f64),
            alloc_ns: a * MS,
            release_ns: r.map(|r| r * MS),
            total_allocated_mb: at.0,
            total_reserved_mb: at.1,
            total_active_mb: at.2,
            source_line: line,
            match_quality: 4,
            ..Default::default()
        }
    };
    m.push(&RowIn {
        name: "aten::a",
        frames: stack,
        stack_key: Some(7),
        call_stack_top: LIB,
        user_frame: USER,
        match_quality: 1,
        stack_origin: "same_op",
        ..base(0)
    });
    m.push(&RowIn {
        name: "aten::b",
        ..base(1)
    });
    m.push(&RowIn {
        name: "aten::a",
        ..base(2)
    });
    m.push(&RowIn {
        name: "aten::c",
        // Same caller stack key: frames may be left out (row 3 must still show them).
        frames: Vec::new(),
        stack_key: Some(7),
        call_stack_top: LIB,
        user_frame: USER,
        match_quality: 2,
        stack_origin: "same_op",
        ..base(3)
    });
    with_series(&mut m, &table(&EVS));
    m
}

fn q(sort: Option<SortKey>, filter: RowFilter) -> RowsQuery {
    RowsQuery {
        rank: 7,
        offset: 0,
        limit: 10,
        sort,
        filter,
    }
}

fn ids(p: &crate::protocol::RowsPage) -> Vec<u32> {
    p.rows.iter().map(|r| r.row).collect()
}

#[test]
fn sorts_filters_and_pages_over_all_rows() {
    let mut m = rows();
    let by_size = Some(SortKey {
        column: MemColumn::SizeKb,
        descending: true,
    });
    let p = m.rows(&q(by_size, RowFilter::default()));
    // 300 > 100 > 50 > −100.
    assert_eq!(ids(&p), vec![1, 0, 3, 2]);
    assert_eq!((p.total_rows, p.matching_rows), (4, 4));
    // Case-insensitive text on any stack frame: rows 0 and 3 share the stack with main.py.
    let text = RowFilter {
        text: "MAIN.PY(5)".into(),
        ..Default::default()
    };
    let p = m.rows(&q(None, text));
    assert_eq!(ids(&p), vec![0, 3]);
    assert_eq!(p.rows[0].user_frame, USER);
    assert_eq!(p.rows[1].match_quality, "nearest_before");
    // Size range 60 ≤ size_kb: rows 0 (100) and 1 (300).
    let range = RowFilter {
        min_kb: Some(60.0),
        ..Default::default()
    };
    assert_eq!(ids(&m.rows(&q(None, range))), vec![0, 1]);
    // Name filter and a page beyond the end.
    let name = RowFilter {
        text: "aten::a".into(),
        ..Default::default()
    };
    let mut query = q(None, name);
    assert_eq!(ids(&m.rows(&query)), vec![0, 2]);
    query.offset = 5;
    let p = m.rows(&query);
    assert!(p.rows.is_empty());
    assert_eq!(p.offset, 2);
}

#[test]
fn live_curve_and_live_set_follow_the_rows() {
    let m = rows();
    // +100@10, +300@15, at 20: −100 (release first) then +50 → 350 KB, −50@30 → 300 KB.
    assert_eq!(m.pools[0].live_t, vec![10.0, 15.0, 20.0, 30.0]);
    let kb: Vec<f64> = m.pools[0].live_mb.iter().map(|v| v * 1024.0).collect();
    assert_eq!(kb, vec![100.0, 400.0, 350.0, 300.0]);
    // At t = 20 row 0 is released (not live), row 3 was just allocated (live).
    let l = m.live_at(20.0, 5, None);
    assert_eq!(l.live_rows, 2);
    assert_eq!(l.live_mb * 1024.0, 350.0);
    assert_eq!(
        l.largest.iter().map(|r| r.row).collect::<Vec<_>>(),
        vec![1, 3]
    );
    // Allocator samples at t=20 in (alloc before release, line) order: 1.2, 1.25, then 0.9.
    assert_eq!(l.totals_mb, Some((0.9, 2.0, 0.9)));
    // At the peak's own time (15 ms): the card's live set, the peak sample's totals.
    let l = m.live_at(15.0, 5, None);
    assert_eq!((l.live_rows, l.live_mb * 1024.0), (2, 400.0));
    assert_eq!(l.totals_mb, Some((1.3, 2.0, 1.3)));
}

/// The marker's time stands for the peak sample: two samples 100 ns apart are one f64 ms on
/// an epoch clock; the live set asked at the marker is the card's (row allocated 100 ns
/// after the peak is not in it), and so are the totals (the next sample lowers them).
#[test]
fn the_marker_time_means_the_exact_peak_instant() {
    let t0 = 1_736_408_883_694_i64 * MS; // epoch ns
    let mut t = MemoryEventTable::new();
    for (i, (kb, allocated)) in [(1024.0, 9.0), (2048.0, 8.5)].into_iter().enumerate() {
        t.push(MemoryEvent {
            size_kb: kb,
            alloc_time_ns: t0 + 100 * i as i64,
            alloc_totals: Totals {
                allocated: Some(allocated),
                reserved: Some(10.0),
                active: Some(allocated),
            },
            line: 2 + i as u64,
            ..Default::default()
        });
    }
    assert_eq!(
        ns_to_ms(t.alloc_time_ns()[0]),
        ns_to_ms(t.alloc_time_ns()[1])
    );
    let mut m = MemoryRows::new(0);
    for i in 0..t.len() {
        m.push(&RowIn {
            size_kb: t.size_kb()[i],
            alloc_ns: t.alloc_time_ns()[i],
            source_line: t.line()[i],
            ..Default::default()
        });
    }
    with_series(&mut m, &t);
    let peak = find_peak_of(&t, &allocator_series_of(&t, &ALL), &ALL).unwrap();
    let (p_ms, p_mb) = m.curve(None, 10, None).peak.unwrap();
    assert_eq!((p_ms, p_mb), (ns_to_ms(peak.peak_time_ns), 9.0));
    let l = m.live_at(p_ms, 5, None);
    assert_eq!(l.live_rows, peak.live_rows.len() as u64);
    assert_eq!(l.live_rows, 1);
    assert_eq!(l.totals_mb, Some((9.0, 10.0, 9.0)));
}

#[test]
fn allocator_samples_give_the_peak_and_curves() {
    let m = rows();
    assert_eq!(
        m.pools[0].sample_t,
        vec![10.0, 15.0, 20.0, 20.0, 20.0, 30.0]
    );
    assert_eq!(m.pools[0].sample_alloc, vec![1.0, 1.3, 1.2, 1.25, 0.9, 1.2]);
    assert_eq!(m.pools[0].peak, Some((15.0, 1.3)));
    let c = m.curve(None, 4, None);
    assert_eq!(c.full_range_ms, (10.0, 30.0));
    // Columns of 5 ms: [10,15) 1.0; [15,20) 1.3; [20,25) 1.2 … 0.9; [25,30] 0.9 then 1.2.
    assert_eq!(c.series[0].max, vec![1.0, 1.3, 1.25, 1.2]);
    assert_eq!(c.series[0].min, vec![1.0, 1.3, 0.9, 0.9]);
    assert_eq!(c.y_max_mb, 2.0);
}

#[test]
fn sites_group_allocations_only() {
    let m = rows();
    let s = m.sites(SiteKey::UserFrame, 10);
    // Row 1 has no user frame (300 KB); rows 0 and 3 share main.py (150 KB); row 2 is a free.
    assert_eq!(s.distinct, 2);
    assert_eq!(
        s.groups
            .iter()
            .map(|g| (g.key.as_str(), g.count, g.size_kb))
            .collect::<Vec<_>>(),
        vec![("", 1, 300.0), (USER, 2, 150.0)]
    );
    let by_name = m.sites(SiteKey::Name, 1);
    assert_eq!(by_name.distinct, 3);
    assert_eq!(by_name.groups[0].key, "aten::b");
}

#[test]
fn stack_marks_the_user_frame() {
    let m = rows();
    let s = m.stack(3).unwrap();
    let marks: Vec<(&str, bool)> = s.frames.iter().map(|f| (f.text.as_str(), f.user)).collect();
    assert_eq!(marks, vec![(LIB, false), (USER, true), (OUTER, false)]);
    assert_eq!(s.row.source_line, 5);
    assert!(m.stack(1).unwrap().frames.is_empty());
    assert!(m.stack(99).is_none());
}

#[test]
fn a_million_rows_page_quickly_enough_for_a_table() {
    let mut m = MemoryRows::new(0);
    let frames = [LIB, USER, OUTER];
    for i in 0..1_000_000u64 {
        let name = if i % 3 == 0 { "aten::mm" } else { "aten::add" };
        m.push(&RowIn {
            name,
            size_kb: ((i * 7919) % 10_000) as f64,
            start_time_ms: i as f64,
            duration_ms: 1.0,
            alloc_ns: i as i64 * MS,
            release_ns: Some((i as i64 + 1) * MS),
            frames: if i % 2 == 0 {
                frames.to_vec()
            } else {
                Vec::new()
            },
            user_frame: if i % 2 == 0 { USER } else { "" },
            match_quality: 1,
            source_line: i + 2,
            ..Default::default()
        });
    }
    let live: Vec<(i64, f64)> = (0..1_000_000i64).map(|i| (i * MS, 1.0)).collect();
    m.set_series(&[PoolSeries {
        component: Component::Pta,
        rows: 1_000_000,
        samples: Vec::new(),
        live,
        peak: None,
    }]);
    let p = m.rows(&q(
        Some(SortKey {
            column: MemColumn::SizeKb,
            descending: true,
        }),
        RowFilter {
            text: "main.py".into(),
            ..Default::default()
        },
    ));
    assert_eq!(p.matching_rows, 500_000);
    // (i · 7919) mod 10000 = 9999 needs an odd i; even rows (with the stack) reach 9998.
    assert_eq!(p.rows[0].size_kb, 9998.0);
    let c = m.curve(None, 1000, None);
    assert_eq!(c.series[3].max.len(), 1000);
}

#[test]
fn each_pool_has_its_own_curve_peak_and_live_set() {
    // Rows 0 and 2 are PTA (≈1000 MiB allocator), row 1 GE (≈50 MiB workspace), interleaved
    // in time as in msinsight level2: mixed, the allocated curve would drop 1000 → 50 → 1000.
    let evs: [Ev; 3] = [
        (1024.0, 10, None, (1000.0, 1400.0, 1000.0), None, 2),
        (
            2048.0,
            12,
            Some(14),
            (50.0, 75.0, 50.0),
            Some((48.0, 75.0, 48.0)),
            3,
        ),
        (512.0, 16, None, (1000.5, 1400.0, 1000.5), None, 4),
    ];
    let t = table(&evs);
    let comp = [Component::Pta, Component::Ge, Component::Pta];
    let pools: Vec<PoolSeries> = [Component::Pta, Component::Ge]
        .into_iter()
        .map(|c| {
            let keep = |i: usize| comp[i] == c;
            let samples = allocator_series_of(&t, &keep);
            PoolSeries {
                component: c,
                rows: comp.iter().filter(|&&x| x == c).count() as u64,
                live: live_series_of(&t, &keep),
                peak: find_peak_of(&t, &samples, &keep),
                samples,
            }
        })
        .collect();
    let mut m = MemoryRows::new(0);
    for (i, &(size_kb, a, r, ..)) in evs.iter().enumerate() {
        m.push(&RowIn {
            size_kb,
            alloc_ns: a * MS,
            release_ns: r.map(|r| r * MS),
            component: comp[i],
            ..Default::default()
        });
    }
    m.set_series(&pools);
    // Default: the first pool (PTA): never below 1000 MiB once it starts.
    let pta = m.curve(None, 3, None);
    assert_eq!(pta.pool.as_deref(), Some("PTA"));
    assert_eq!(pta.series[0].name, "PTA allocated");
    assert_eq!(pta.series[0].max, vec![1000.0, 1000.0, 1000.5]);
    assert_eq!(pta.peak, Some((16.0, 1000.5)));
    assert_eq!(pta.full_range_ms, (10.0, 16.0));
    let ge = m.curve(None, 3, Some(Component::Ge));
    assert_eq!(ge.series[0].name, "GE allocated");
    assert_eq!(ge.peak, Some((12.0, 50.0)));
    assert_eq!(ge.y_max_mb, 75.0);
    // At 13 ms: the GE row is live in GE only; PTA's live set is row 0 alone.
    let l = m.live_at(13.0, 5, Some(Component::Ge));
    assert_eq!(
        (l.live_rows, l.live_mb, l.totals_mb),
        (1, 2.0, Some((50.0, 75.0, 50.0)))
    );
    let l = m.live_at(13.0, 5, Some(Component::Pta));
    assert_eq!((l.live_rows, l.live_mb), (1, 1.0));
    assert_eq!(l.totals_mb, Some((1000.0, 1400.0, 1000.0)));
    assert_eq!(l.pool.as_deref(), Some("PTA"));
    // A pool the rank does not have falls back to the first one.
    assert_eq!(
        m.curve(None, 3, Some(Component::Other)).pool.as_deref(),
        Some("PTA")
    );
}
