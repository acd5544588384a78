//! Hand-built lifetime tables with known layouts (every offset worked out by hand in the
//! comments), for the Active Memory Timeline rules of [`super`].

use super::*;
use crate::analysis::snapshot::lifetimes::StackKind;
use crate::analysis::snapshot::lifetimes::{NEVER, PRE};
use crate::model::snapshot::NO_STACK;

/// Records `(alloc index or PRE, free_completed index or NEVER, size)`.
fn table(n_entries: u32, recs: &[(u32, u32, u64)]) -> Lifetimes {
    let mut lt = Lifetimes {
        n_entries,
        ..Default::default()
    };
    for (i, &(a, f, s)) in recs.iter().enumerate() {
        lt.alloc_idx.push(a);
        lt.req_free_idx.push(f);
        lt.done_free_idx.push(f);
        lt.size.push(s);
        lt.stack.push(NO_STACK);
        lt.stack_kind.push(StackKind::None);
        lt.addr.push(0x7000 + 0x100 * i as u64);
        lt.version.push(0);
        lt.stream.push(0);
        lt.flags.push(0);
    }
    lt
}

/// The active curve of `lt` by its definition (§7.3): baseline = PRE sizes, +size at the
/// alloc, −size at `free_completed`.
fn active(lt: &Lifetimes) -> (Vec<i64>, i64) {
    let n = lt.n_entries as usize;
    let mut d = vec![0i64; n];
    let mut base = 0;
    for r in 0..lt.len() {
        let s = lt.size[r] as i64;
        match lt.alloc_idx[r] {
            PRE => base += s,
            a => d[a as usize] += s,
        }
        if lt.done_free_idx[r] != NEVER {
            d[lt.done_free_idx[r] as usize] -= s;
        }
    }
    let mut v = base;
    (
        d.iter()
            .map(|x| {
                v += x;
                v
            })
            .collect(),
        base,
    )
}

/// r0: PRE, freed at 2, 30 B; r1: 0..5, 100 B; r2: 1..3, 10 B; r3: 2..4, 50 B.
/// Active after each entry: 130, 140, 160, 150, 100, 0 (baseline 30).
fn four() -> Lifetimes {
    table(6, &[(PRE, 2, 30), (0, 5, 100), (1, 3, 10), (2, 4, 50)])
}

fn params(x0: f64, x1: f64, width: usize, height_px: f64) -> BandParams {
    BandParams {
        x0,
        x1,
        width,
        height_px,
        max_bands: MAX_BANDS,
        min_band_px: MIN_BAND_PX,
    }
}

fn run(lt: &Lifetimes, p: &BandParams) -> SnapBandsDto {
    let (a, base) = active(lt);
    layout(
        lt,
        &Axis::Index {
            n: lt.n_entries as usize,
        },
        &a,
        base,
        p,
    )
}

fn shape(d: &SnapBandsDto) -> Vec<(u32, u32, Vec<(u32, u64)>)> {
    d.bands
        .iter()
        .map(|b| (b.record, b.first_col, b.runs.clone()))
        .collect()
}

#[test]
fn one_column_per_entry_stacks_in_allocation_order() {
    let lt = four();
    let d = run(&lt, &params(0.0, 6.0, 6, 160.0));
    // Column c holds the level carried in (after entry c−1) and entry c: the higher one.
    assert_eq!(d.reps, vec![0, 1, 2, 2, 3, 4]);
    assert_eq!(d.y_max, 160.0);
    assert_eq!(d.records_in_view, 4);
    assert_eq!(d.summarised_records, 0);
    assert_eq!(d.min_band_bytes, 1);
    assert_eq!(d.entries_in_window, 6);
    // PRE first (bottom), then by alloc entry. r1 slides down by 30 when r0 is freed (col 2);
    // r2 sits on r1 (130, then 100), r3 on r2 (110), then on r1 (100) once r2 is freed.
    assert_eq!(
        shape(&d),
        vec![
            (0, 0, vec![(2, 0)]),
            (1, 0, vec![(2, 30), (4, 0)]),
            (2, 1, vec![(1, 130), (2, 100)]),
            (3, 2, vec![(2, 110), (1, 100)]),
        ]
    );
    assert_eq!(d.summarised, vec![0; 6]);
    assert_eq!(d.bands[1].addr, "0x7100");
    assert_eq!(d.bands[1].memoryviz_name, "b'7100_0'");
    assert_eq!(d.bands[0].alloc_index, None);
    assert_eq!(d.bands[3].alloc_index, Some(2));
}

#[test]
fn the_band_cap_keeps_the_largest_and_summarises_the_rest() {
    let lt = four();
    let mut p = params(0.0, 6.0, 6, 160.0);
    p.max_bands = 2;
    let d = run(&lt, &p);
    // r1 (100 B) and r3 (50 B) drawn; r0 (30) and r2 (10) summarised on top.
    assert_eq!(
        shape(&d),
        vec![(1, 0, vec![(6, 0)]), (3, 2, vec![(3, 100)])]
    );
    // Totals 130 140 160 160 150 100 minus drawn 100 100 150 150 150 100.
    assert_eq!(d.summarised, vec![30, 40, 10, 10, 0, 0]);
    assert_eq!(d.summarised_records, 2);
}

#[test]
fn bands_under_the_pixel_threshold_are_summarised() {
    let lt = four();
    // 160 B over 16 px: 10 B per pixel; at 1 px every record (≥ 10 B) is drawn.
    let mut p = params(0.0, 6.0, 6, 16.0);
    p.min_band_px = 1.0;
    let d = run(&lt, &p);
    assert_eq!(d.min_band_bytes, 10);
    assert_eq!(d.bands.len(), 4);
    // At 4 px (40 B) only r1 and r3 are drawn: the same layout as a cap of 2.
    p.min_band_px = 4.0;
    let d = run(&lt, &p);
    assert_eq!(d.min_band_bytes, 40);
    assert_eq!(
        shape(&d),
        vec![(1, 0, vec![(6, 0)]), (3, 2, vec![(3, 100)])]
    );
    assert_eq!(d.summarised, vec![30, 40, 10, 10, 0, 0]);
    // The default quarter pixel: 2.5 B → 3 B.
    let d = run(&lt, &params(0.0, 6.0, 6, 16.0));
    assert_eq!(d.min_band_bytes, 3);
}

/// The shape of `examples/snapshot_gen`'s files (and of the 1M-entry browser test): thousands of
/// live allocations, none a quarter pixel tall, so no band is drawn and every column is the
/// summarised band, whose height is the whole curve. "0 allocations drawn" is a complete layout
/// (the page must not wait for a band: tests/e2e/snapshot_views.test.mjs waited forever).
#[test]
fn thousands_of_sub_pixel_allocations_are_one_summarised_band() {
    // 2000 records of 1000 B, record r allocated at entry r and never freed: 2 MB at the end,
    // 230 px → min band 2e6 · 0.25 / 230 = 2173.9… → 2174 B > 1000 B.
    let recs: Vec<(u32, u32, u64)> = (0..2000).map(|r| (r, NEVER, 1000)).collect();
    let lt = table(2000, &recs);
    let d = run(&lt, &params(0.0, 2000.0, 100, 230.0));
    assert_eq!(d.min_band_bytes, 2174);
    assert!(d.bands.is_empty());
    assert_eq!(d.records_in_view, 2000);
    assert_eq!(d.summarised_records, 2000);
    // Column c covers entries 20c .. 20c+19; its representative is the last (the curve rises).
    let tops: Vec<u64> = (0..100).map(|c| 1000 * (20 * c + 20)).collect();
    assert_eq!(d.summarised, tops);
    assert_eq!(d.y_max, 2_000_000.0);
    // The page's grid: one summarised cell per column, from 0 to the column's total.
    let g = crate::views::band_grid::BandGrid::new(&d);
    assert_eq!(g.len(), 100);
    assert_eq!(
        g.at(99, 1_999_999.0),
        Some(crate::views::band_grid::SUMMARISED)
    );
    assert_eq!(g.at(99, 2_000_000.0), None);
}

#[test]
fn zoomed_out_columns_show_their_highest_entry() {
    let lt = four();
    // Two columns of three entries: [0,3) peaks at entry 2 (160); [3,6) carries 160 in.
    let d = run(&lt, &params(0.0, 6.0, 2, 160.0));
    assert_eq!(d.reps, vec![2, 2]);
    // r0 (freed at 2) and nothing else short-lived is live after entry 2: r1, r2, r3.
    assert_eq!(d.records_in_view, 3);
    assert_eq!(
        shape(&d),
        vec![
            (1, 0, vec![(2, 0)]),
            (2, 0, vec![(2, 100)]),
            (3, 0, vec![(2, 110)])
        ]
    );
}

#[test]
fn a_zoomed_window_sees_only_its_records() {
    let lt = four();
    // [3.0, 5.0) in 2 columns: col 0 = carried 2 (160) vs entry 3 (150) → rep 2;
    // col 1 = carried 3 (150) vs entry 4 (100) → rep 3.
    let d = run(&lt, &params(3.0, 5.0, 2, 100.0));
    assert_eq!(d.reps, vec![2, 3]);
    assert_eq!(d.entries_in_window, 2);
    assert_eq!(
        shape(&d),
        vec![
            (1, 0, vec![(2, 0)]),
            (2, 0, vec![(1, 100)]),
            (3, 0, vec![(1, 110), (1, 100)])
        ]
    );
}

#[test]
fn before_the_first_entry_only_pre_records_are_live() {
    let lt = table(3, &[(PRE, NEVER, 40), (PRE, 1, 20), (0, 2, 5)]);
    // Index window [-2, 0): no entry before 0, both columns carry the baseline (60).
    let d = run(&lt, &params(-2.0, 0.0, 2, 60.0));
    assert_eq!(d.reps, vec![-1, -1]);
    assert_eq!(shape(&d), vec![(0, 0, vec![(2, 0)]), (1, 0, vec![(2, 40)])]);
    assert_eq!(d.y_max, 60.0);
}

#[test]
fn empty_inputs_give_empty_layouts() {
    let lt = table(0, &[]);
    let d = run(&lt, &params(0.0, 1.0, 10, 100.0));
    assert_eq!(d.reps, vec![-1; 10]);
    assert!(d.bands.is_empty());
    assert_eq!(d.summarised, vec![0; 10]);
    let d = run(&four(), &params(1.0, 1.0, 10, 100.0));
    assert!(d.reps.is_empty() && d.bands.is_empty());
    let mut p = params(0.0, 6.0, 6, 160.0);
    p.max_bands = 0;
    let d = run(&four(), &p);
    assert!(d.bands.is_empty());
    assert_eq!(d.summarised, vec![130, 140, 160, 160, 150, 100]);
}
