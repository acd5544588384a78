//! The Active Memory Timeline as the page reads it: a [`SnapBandsDto`] expanded once into
//! per-column cells (band, bottom, top in bytes) for drawing at any zoom, and the hit-test of
//! the pointer. Pure geometry of the payload (no analysis types), so the UI may name it.

use crate::protocol::snapshot::SnapBandsDto;

/// Cell band id of the summarised band (allocations too small to draw one by one).
pub const SUMMARISED: u32 = u32::MAX;

/// Per column, the stacked cells of one layout: `(band index or SUMMARISED, low, high)` bytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BandGrid {
    /// Columns.
    pub cols: usize,
    start: Vec<u32>,
    band: Vec<u32>,
    lo: Vec<f64>,
    hi: Vec<f64>,
}

impl BandGrid {
    /// Expands the runs of `d` (cells of one column in stacking order, the summarised band
    /// last when it is not empty). O(cells).
    pub fn new(d: &SnapBandsDto) -> Self {
        let cols = d.reps.len();
        let mut count = vec![0u32; cols + 1];
        for b in &d.bands {
            let n: u32 = b.runs.iter().map(|r| r.0).sum();
            let (a, e) = (b.first_col as usize, (b.first_col + n) as usize);
            for c in count.iter_mut().take(e.min(cols)).skip(a) {
                *c += 1;
            }
        }
        for (c, s) in d.summarised.iter().enumerate().take(cols) {
            if *s > 0 {
                count[c] += 1;
            }
        }
        let mut start = vec![0u32; cols + 1];
        for c in 0..cols {
            start[c + 1] = start[c] + count[c];
        }
        let total = start[cols] as usize;
        let (mut band, mut lo, mut hi) = (vec![0; total], vec![0.0; total], vec![0.0; total]);
        let mut fill = start.clone();
        let mut top = vec![0.0f64; cols];
        for (i, b) in d.bands.iter().enumerate() {
            let mut c = b.first_col as usize;
            for &(n, off) in &b.runs {
                for _ in 0..n {
                    if c < cols {
                        let k = fill[c] as usize;
                        band[k] = i as u32;
                        lo[k] = off as f64;
                        hi[k] = (off + b.bytes) as f64;
                        top[c] = top[c].max(hi[k]);
                        fill[c] += 1;
                    }
                    c += 1;
                }
            }
        }
        for (c, s) in d.summarised.iter().enumerate().take(cols) {
            if *s > 0 {
                let k = fill[c] as usize;
                band[k] = SUMMARISED;
                lo[k] = top[c];
                hi[k] = top[c] + *s as f64;
            }
        }
        BandGrid {
            cols,
            start,
            band,
            lo,
            hi,
        }
    }

    /// The cells of column `col`, bottom first: `(band or SUMMARISED, low, high)` bytes.
    pub fn cells(&self, col: usize) -> impl Iterator<Item = (u32, f64, f64)> + '_ {
        let (a, b) = match (self.start.get(col), self.start.get(col + 1)) {
            (Some(&a), Some(&b)) => (a as usize, b as usize),
            _ => (0, 0),
        };
        (a..b).map(move |k| (self.band[k], self.lo[k], self.hi[k]))
    }

    /// The band (or [`SUMMARISED`]) under `bytes` in column `col`; None above the stack.
    pub fn at(&self, col: usize, bytes: f64) -> Option<u32> {
        self.cells(col)
            .find(|&(_, lo, hi)| bytes >= lo && bytes < hi)
            .map(|(b, _, _)| b)
    }

    /// Total cells.
    pub fn len(&self) -> usize {
        self.band.len()
    }

    /// True when no column has a cell.
    pub fn is_empty(&self) -> bool {
        self.band.is_empty()
    }
}

/// The layout column under axis position `v` of a layout over `[x0, x1)` with `cols` columns.
pub fn column_at(x0: f64, x1: f64, cols: usize, v: f64) -> Option<usize> {
    if cols == 0 || !(x1 > x0) || !(v >= x0) || v >= x1 {
        return None;
    }
    Some(
        (((v - x0) / (x1 - x0)) * cols as f64)
            .floor()
            .min(cols as f64 - 1.0) as usize,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::snapshot::{SnapAxis, SnapBandDto};

    fn band(record: u32, bytes: u64, first_col: u32, runs: Vec<(u32, u64)>) -> SnapBandDto {
        SnapBandDto {
            record,
            bytes,
            addr: String::new(),
            memoryviz_name: String::new(),
            alloc_index: None,
            site: String::new(),
            first_col,
            runs,
        }
    }

    /// The layout of `snapshot_bands::tests::the_band_cap_keeps_the_largest_and_summarises_the_rest`.
    fn capped() -> SnapBandsDto {
        SnapBandsDto {
            target: 0,
            slot: 0,
            axis: SnapAxis::Index,
            x0: 0.0,
            x1: 6.0,
            full: (0.0, 6.0),
            reps: vec![0, 1, 2, 2, 3, 4],
            y_max: 160.0,
            bands: vec![
                band(1, 100, 0, vec![(6, 0)]),
                band(3, 50, 2, vec![(3, 100)]),
            ],
            summarised: vec![30, 40, 10, 10, 0, 0],
            records_in_view: 4,
            summarised_records: 2,
            min_band_bytes: 1,
            entries_in_window: 6,
        }
    }

    #[test]
    fn cells_stack_bands_then_the_summarised_band() {
        let g = BandGrid::new(&capped());
        assert_eq!(g.cols, 6);
        assert_eq!(g.len(), 6 + 3 + 4);
        assert_eq!(
            g.cells(0).collect::<Vec<_>>(),
            vec![(0, 0.0, 100.0), (SUMMARISED, 100.0, 130.0)]
        );
        assert_eq!(
            g.cells(2).collect::<Vec<_>>(),
            vec![
                (0, 0.0, 100.0),
                (1, 100.0, 150.0),
                (SUMMARISED, 150.0, 160.0)
            ]
        );
        assert_eq!(
            g.cells(4).collect::<Vec<_>>(),
            vec![(0, 0.0, 100.0), (1, 100.0, 150.0)]
        );
        assert_eq!(g.cells(5).collect::<Vec<_>>(), vec![(0, 0.0, 100.0)]);
        assert_eq!(g.cells(6).count(), 0);
    }

    #[test]
    fn hit_test_finds_the_band_under_the_pointer() {
        let g = BandGrid::new(&capped());
        assert_eq!(g.at(2, 0.0), Some(0));
        assert_eq!(g.at(2, 99.9), Some(0));
        assert_eq!(g.at(2, 100.0), Some(1));
        assert_eq!(g.at(2, 155.0), Some(SUMMARISED));
        assert_eq!(g.at(2, 160.0), None);
        assert_eq!(g.at(5, 120.0), None);
        assert_eq!(g.at(9, 1.0), None);
    }

    #[test]
    fn columns_of_axis_positions() {
        assert_eq!(column_at(0.0, 6.0, 6, 0.0), Some(0));
        assert_eq!(column_at(0.0, 6.0, 6, 5.99), Some(5));
        assert_eq!(column_at(0.0, 6.0, 6, 6.0), None);
        assert_eq!(column_at(0.0, 6.0, 6, -0.1), None);
        assert_eq!(column_at(0.0, 6.0, 3, 2.5), Some(1));
        assert_eq!(column_at(0.0, 0.0, 3, 0.0), None);
        assert_eq!(column_at(0.0, 6.0, 3, f64::NAN), None);
    }
}
