//! The Active Memory Timeline (`views::snapshot_bands`, served by `SnapshotView::bands`) on
//! every real snapshot of `torch_snapshots`, checked against definitions computed here by
//! brute force: each column's stack is the live set (active semantics) after its
//! representative entry, bands stacked in allocation order without gaps or overlaps, the
//! summarised band = the live records not drawn, and the top of the stack = the column maximum
//! of the active curve (`SnapQuery::Curve`). Golden: the tallest column of the full view is
//! EXPECTED.json `memoryviz_like.max_bytes` (MemoryViz's own maximum).

mod snapshot_common;

use proflens::analysis::snapshot::lifetimes::Semantics;
use proflens::engine::read::snapshot::{analyse, SnapshotOptions};
use proflens::engine::session::snapshot_view::SnapshotView;
use proflens::ingest::InputFile;
use proflens::protocol::snapshot::{
    SnapAxis, SnapBandsDto, SnapBandsQuery, SnapCurveQuery, SnapshotSettingsDto,
};
use proflens::views::band_grid::{BandGrid, SUMMARISED};
use snapshot_common::{decode_bytes, expected, fixture_dir, fixture_names};

fn view(name: &str) -> SnapshotView {
    let bytes = std::fs::read(fixture_dir().join(name)).unwrap();
    let d = decode_bytes(name, &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let settings = SnapshotSettingsDto::default();
    let opts = SnapshotOptions::from_settings(&settings).unwrap();
    let file = InputFile {
        path: name.into(),
        size: bytes.len() as u64,
    };
    let run = analyse(&file, d.snapshot, d.problems, &opts);
    SnapshotView::from_parts(0, run, settings, opts)
}

/// Checks one layout of slot `slot` against the definitions; returns it.
fn check(v: &SnapshotView, slot: u32, q: &SnapBandsQuery) -> SnapBandsDto {
    let name = &v.run().file.path;
    let b = v.data().bands(q).unwrap();
    let c = v
        .data()
        .curve(&SnapCurveQuery {
            target: 0,
            slot,
            axis: q.axis,
            range: q.range,
            width_px: q.width_px,
        })
        .unwrap();
    let d = &v.run().devices[slot as usize];
    let lt = &d.lifetimes;
    let grid = BandGrid::new(&b);
    assert_eq!(b.reps.len(), q.width_px as usize);
    assert_eq!(b.axis, c.axis);
    let active_max = &c.series[1].max;
    assert!(b.bands.len() <= proflens::views::snapshot_bands::MAX_BANDS);
    let mut drawn = vec![false; lt.len()];
    for band in &b.bands {
        assert!(
            band.bytes >= b.min_band_bytes,
            "{name}: band under the threshold"
        );
        assert!(!band.site.is_empty(), "{name}: band without a site label");
        assert!(band.addr.starts_with("0x"));
        drawn[band.record as usize] = true;
    }
    for (col, &rep) in b.reps.iter().enumerate() {
        let live: Vec<usize> = (0..lt.len())
            .filter(|&r| lt.start(r) <= rep && rep < lt.end(r, Semantics::Active))
            .collect();
        let total: u64 = live.iter().map(|&r| lt.size[r]).sum();
        assert_eq!(
            total as f64, active_max[col],
            "{name}: column {col} top != curve max"
        );
        // Drawn records in allocation order, each on top of the previous.
        let mut want: Vec<usize> = live.iter().copied().filter(|&r| drawn[r]).collect();
        want.sort_by_key(|&r| (lt.start(r), r));
        let cells: Vec<(u32, f64, f64)> = grid.cells(col).collect();
        let mut off = 0.0;
        for (k, &r) in want.iter().enumerate() {
            let (bi, lo, hi) = cells[k];
            assert_eq!(
                b.bands[bi as usize].record as usize, r,
                "{name}: column {col}"
            );
            assert_eq!(
                (lo, hi),
                (off, off + lt.size[r] as f64),
                "{name}: column {col}"
            );
            off = hi;
        }
        let rest: u64 = live
            .iter()
            .filter(|&&r| !drawn[r])
            .map(|&r| lt.size[r])
            .sum();
        assert_eq!(
            b.summarised[col], rest,
            "{name}: summarised band, column {col}"
        );
        assert_eq!(cells.len(), want.len() + usize::from(rest > 0));
        if rest > 0 {
            assert_eq!(cells[want.len()], (SUMMARISED, off, off + rest as f64));
        }
    }
    b
}

#[test]
fn every_fixture_stacks_its_live_sets_exactly() {
    let exp = expected();
    let mut checked = 0;
    for name in fixture_names() {
        let v = view(&name);
        for (slot, d) in v.run().devices.iter().enumerate() {
            if d.n_entries == 0 {
                continue;
            }
            let slot = slot as u32;
            for axis in [SnapAxis::Index, SnapAxis::Time] {
                let full = check(
                    &v,
                    slot,
                    &SnapBandsQuery {
                        target: 0,
                        slot,
                        axis,
                        range: None,
                        width_px: 700,
                        height_px: 300,
                    },
                );
                // The tallest column is MemoryViz's maximum of the whole trace.
                let mv = &exp[name.as_str()]["device_traces"][d.device as usize]["memoryviz_like"];
                if let Some(max) = mv["max_bytes"].as_f64() {
                    assert_eq!(
                        full.y_max,
                        max.max(d.curves.baseline_active as f64),
                        "{name}"
                    );
                }
                // A zoomed window in the middle, wider pixels than entries on small traces.
                let (a, z) = full.full;
                let span = z - a;
                check(
                    &v,
                    slot,
                    &SnapBandsQuery {
                        target: 0,
                        slot,
                        axis,
                        range: Some((a + span * 0.4, a + span * 0.45)),
                        width_px: 500,
                        height_px: 200,
                    },
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} device traces checked");
}

#[test]
fn zidong_full_view_draws_the_large_tensors_and_summarises_the_small_ones() {
    let v = view("ZidongLiu_DeComFL__memory.pickle");
    let q = SnapBandsQuery {
        target: 0,
        slot: 0,
        axis: SnapAxis::Index,
        range: None,
        width_px: 800,
        height_px: 300,
    };
    let b = check(&v, 0, &q);
    assert_eq!(b.y_max, 1_783_664_516.0);
    // A quarter pixel of 300 at 1.78 GB: allocations under 1,486,388 bytes are summarised.
    assert_eq!(b.min_band_bytes, 1_486_388);
    assert!(b.summarised_records > 0 && !b.bands.is_empty());
    assert_eq!(
        b.records_in_view,
        b.bands.len() as u64 + b.summarised_records
    );
}

#[test]
fn stacks_mark_cpp_frames_and_addresses_read_as_hex() {
    // cranberrii was recorded with stacks="all": C++ frames (torch::unwind, CapturedTraceback)
    // come first (innermost), then the Python frames.
    let v = view("cranberrii_ftcourse__memory_snapshot.pickle");
    let lt = &v.run().devices[0].lifetimes;
    let r = (0..lt.len() as u32)
        .find(|&r| {
            let s = v.data().stack(0, r).unwrap();
            s.frames
                .iter()
                .any(|f| f.label.contains("CapturedTraceback"))
                && s.frames.iter().any(|f| f.label.contains(".py:"))
        })
        .expect("a record with C++ and Python frames");
    let s = v.data().stack(0, r).unwrap();
    assert_eq!(s.addr, format!("0x{:x}", lt.addr[r as usize]));
    assert_eq!(
        s.memoryviz_name,
        format!("b'{:x}_{}'", lt.addr[r as usize], lt.version[r as usize])
    );
    assert_eq!(s.bytes, lt.size[r as usize]);
    for f in &s.frames {
        let python = f.label.contains(".py:");
        assert_eq!(
            f.native,
            !python && !f.label.contains(" @ <"),
            "{}",
            f.label
        );
    }
    assert!(
        s.frames[0].native,
        "the innermost frame is C++: {}",
        s.frames[0].label
    );
    assert!(s
        .frames
        .iter()
        .any(|f| f.label.contains("CapturedTraceback") && f.native));
}
