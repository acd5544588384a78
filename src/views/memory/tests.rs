//! Hand-checked values on four rows (see each assertion's comment for the arithmetic).

use super::*;
use crate::protocol::{MemColumn, RowFilter, RowsQuery, SiteKey, SortKey};

const LIB: &str = "/usr/lib/python3.10/site-packages/torch/x.py(1): f";
const USER: &str = "/home/u/main.py(5): train";
const OUTER: &str = "<string>(1): <module>";

fn rows() -> MemoryRows {
    let mut m = MemoryRows::new(7);
    let stack = vec![LIB, USER, OUTER];
    m.push(&RowIn {
        name: "aten::a",
        size_kb: 100.0,
        start_time_ms: 10.0,
        duration_ms: 10.0,
        release_time_ms: Some(20.0),
        total_allocated_mb: 1.0,
        total_reserved_mb: 2.0,
        total_active_mb: 1.0,
        release_totals_mb: (Some(0.9), Some(2.0), Some(0.9)),
        has_alloc_totals: (true, true, true),
        frames: stack,
        stack_key: Some(7),
        call_stack_top: LIB,
        user_frame: USER,
        match_quality: 1,
        stack_origin: "same_op",
        source_line: 2,
    });
    m.push(&RowIn {
        name: "aten::b",
        size_kb: 300.0,
        start_time_ms: 15.0,
        total_allocated_mb: 1.3,
        total_reserved_mb: 2.0,
        total_active_mb: 1.3,
        has_alloc_totals: (true, true, true),
        match_quality: 4,
        source_line: 3,
        ..Default::default()
    });
    m.push(&RowIn {
        name: "aten::a",
        size_kb: -100.0,
        start_time_ms: 20.0,
        total_allocated_mb: 1.2,
        total_reserved_mb: 2.0,
        total_active_mb: 1.2,
        has_alloc_totals: (true, true, true),
        match_quality: 4,
        source_line: 4,
        ..Default::default()
    });
    m.push(&RowIn {
        name: "aten::c",
        size_kb: 50.0,
        start_time_ms: 20.0,
        duration_ms: 10.0,
        release_time_ms: Some(30.0),
        total_allocated_mb: 1.25,
        total_reserved_mb: 2.0,
        total_active_mb: 1.25,
        release_totals_mb: (Some(1.2), Some(2.0), Some(1.2)),
        has_alloc_totals: (true, true, true),
        // Same caller stack key: frames may be left out (row 3 must still show them).
        frames: Vec::new(),
        stack_key: Some(7),
        call_stack_top: LIB,
        user_frame: USER,
        match_quality: 2,
        stack_origin: "same_op",
        source_line: 5,
    });
    m.finish();
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
    assert_eq!(m.live_t, vec![10.0, 15.0, 20.0, 30.0]);
    let kb: Vec<f64> = m.live_mb.iter().map(|v| v * 1024.0).collect();
    assert_eq!(kb, vec![100.0, 400.0, 350.0, 300.0]);
    // At t = 20 row 0 is released (not live), row 3 was just allocated (live).
    let l = m.live_at(20.0, 5);
    assert_eq!(l.live_rows, 2);
    assert_eq!(l.live_mb * 1024.0, 350.0);
    assert_eq!(
        l.largest.iter().map(|r| r.row).collect::<Vec<_>>(),
        vec![1, 3]
    );
    // Allocator samples at t=20 in (alloc before release, line) order: 1.2, 1.25, then 0.9.
    assert_eq!(l.totals_mb, Some((0.9, 2.0, 0.9)));
}

#[test]
fn allocator_samples_give_the_peak_and_curves() {
    let m = rows();
    assert_eq!(m.sample_t, vec![10.0, 15.0, 20.0, 20.0, 20.0, 30.0]);
    assert_eq!(m.sample_alloc, vec![1.0, 1.3, 1.2, 1.25, 0.9, 1.2]);
    assert_eq!(m.peak, Some((15.0, 1.3)));
    let c = m.curve(None, 4);
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
            release_time_ms: Some(i as f64 + 1.0),
            has_alloc_totals: (true, true, true),
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
    m.finish();
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
    let c = m.curve(None, 1000);
    assert_eq!(c.series[3].max.len(), 1000);
}
