//! The cluster view's rank × step heatmap: colour scale, legend, the RGBA raster
//! the page puts on a canvas, and the hit-test of the hover. Pure functions of a
//! [`HeatmapDto`], natively tested; the UI only draws the bytes.
//!
//! Rules:
//! * **Scale.** Linear from the smallest to the largest finite value of the matrix
//!   ([`Scale::of`]; a ratio is clamped to 0–1). Colours follow the viridis ramp (dark blue →
//!   green → yellow: ordered in lightness, readable in both themes and for colour-blind
//!   readers); a cell without a value (the rank has no such step) is transparent, so the
//!   canvas background shows through.
//! * **Binning.** With more ranks than pixel rows (10,000 ranks on ~400 px), each pixel row
//!   covers a contiguous range of ranks and shows their **largest** value, so a straggler is
//!   never averaged away; the hover names the rank holding that value. With fewer ranks than
//!   pixel rows, each rank spans several pixel rows. Columns (steps) bin the same way.

use crate::base::format;
use crate::protocol::cluster_view::HeatmapDto;

/// What the values are, for the legend's labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Milliseconds (adaptive duration units).
    Ms,
    /// A fraction 0–1 (shown as a percentage).
    Ratio,
}

impl Unit {
    /// The unit of a summary matrix by its metric name (`*_ratio` → ratio, else ms).
    pub fn of_metric(metric: &str) -> Unit {
        if metric.ends_with("_ratio") {
            Unit::Ratio
        } else {
            Unit::Ms
        }
    }

    /// `v` in this unit, for a person.
    pub fn label(self, v: f64) -> String {
        match self {
            Unit::Ms => format::duration_ms(v),
            Unit::Ratio => format::percent(Some(v), 1),
        }
    }
}

/// A linear colour scale over `min..=max`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    /// Value of the darkest colour.
    pub min: f64,
    /// Value of the lightest colour.
    pub max: f64,
    /// Unit of the values.
    pub unit: Unit,
}

/// Viridis at 0, ¼, ½, ¾ and 1.
const RAMP: [[f64; 3]; 5] = [
    [68.0, 1.0, 84.0],
    [59.0, 82.0, 139.0],
    [33.0, 145.0, 140.0],
    [94.0, 201.0, 98.0],
    [253.0, 231.0, 37.0],
];

impl Scale {
    /// The scale of `h`'s finite values (`0..=0` when it has none).
    pub fn of(h: &HeatmapDto) -> Scale {
        let unit = Unit::of_metric(&h.metric);
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in h.values.iter().flatten().filter(|v| v.is_finite()) {
            min = min.min(*v);
            max = max.max(*v);
        }
        if min > max {
            (min, max) = (0.0, 0.0);
        }
        if unit == Unit::Ratio {
            (min, max) = (min.clamp(0.0, 1.0), max.clamp(0.0, 1.0));
        }
        Scale { min, max, unit }
    }

    /// Position of `v` on the scale, 0–1 (clamped; 0 when the scale has no width).
    pub fn fraction(&self, v: f64) -> f64 {
        let w = self.max - self.min;
        if w > 0.0 && v.is_finite() {
            ((v - self.min) / w).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// RGBA of a cell: the ramp colour of `v`, transparent without a finite value.
    pub fn colour(&self, v: Option<f64>) -> [u8; 4] {
        match v.filter(|v| v.is_finite()) {
            None => [0, 0, 0, 0],
            Some(v) => {
                let [r, g, b] = ramp(self.fraction(v));
                [r, g, b, 255]
            }
        }
    }

    /// `n` legend stops (n ≥ 2): the fraction along the bar and the value's label.
    pub fn legend(&self, n: usize) -> Vec<(f64, String)> {
        let n = n.max(2);
        (0..n)
            .map(|i| {
                let f = i as f64 / (n - 1) as f64;
                (f, self.unit.label(self.min + f * (self.max - self.min)))
            })
            .collect()
    }
}

/// The ramp colour at fraction `f` (0–1), linearly between the viridis stops.
pub fn ramp(f: f64) -> [u8; 3] {
    let x = f.clamp(0.0, 1.0) * (RAMP.len() - 1) as f64;
    let i = (x.floor() as usize).min(RAMP.len() - 2);
    let t = x - i as f64;
    let (a, b) = (RAMP[i], RAMP[i + 1]);
    [0, 1, 2].map(|k| (a[k] + (b[k] - a[k]) * t).round() as u8)
}

/// The items `lo..hi` of `n` items shown by pixel `p` of `px` pixels (never empty when
/// `n > 0`).
pub fn bin(p: u32, px: u32, n: u32) -> (u32, u32) {
    if n == 0 || px == 0 {
        return (0, 0);
    }
    let lo = (p as u64 * n as u64 / px as u64) as u32;
    let hi = ((p as u64 + 1) * n as u64 / px as u64) as u32;
    (lo.min(n - 1), hi.clamp(lo + 1, n))
}

/// The cell under a pixel: the rank with the largest value of the bin (the first such rank;
/// the first rank of the bin when none has a value), the step, and the bin's extent.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// Row (rank index in the summary).
    pub row: u32,
    /// Column (step index).
    pub col: u32,
    /// The value, when the rank has the step.
    pub value: Option<f64>,
    /// Ranks the pixel row covers (`row` is one of them).
    pub rows: (u32, u32),
}

/// The largest value of rows `rows` at column `col` and the row holding it.
fn bin_max(h: &HeatmapDto, rows: (u32, u32), col: u32) -> (u32, Option<f64>) {
    let mut best = (rows.0, None::<f64>);
    for r in rows.0..rows.1 {
        if let Some(v) = h.get(r, col).filter(|v| v.is_finite()) {
            if best.1.is_none_or(|b| v > b) {
                best = (r, Some(v));
            }
        }
    }
    best
}

/// What pixel (`x`, `y`) of a `width` × `height` px raster shows (`None` outside).
pub fn hit(h: &HeatmapDto, x: f64, y: f64, width: u32, height: u32) -> Option<Hit> {
    if !(x >= 0.0 && y >= 0.0)
        || x >= width as f64
        || y >= height as f64
        || h.rows == 0
        || h.cols == 0
    {
        return None;
    }
    let rows = bin(y as u32, height, h.rows);
    let (c0, c1) = bin(x as u32, width, h.cols);
    // a pixel column covering several steps shows the largest; report that step
    let (mut row, mut col, mut value) = (rows.0, c0, None::<f64>);
    for c in c0..c1 {
        let (r, v) = bin_max(h, rows, c);
        if value.is_none() || v.is_some_and(|v| value.is_none_or(|b| v > b)) {
            (row, col, value) = (r, c, v);
        }
    }
    Some(Hit {
        row,
        col,
        value,
        rows,
    })
}

/// The `width` × `height` RGBA raster of `h` on `scale` (row-major, 4 bytes a pixel, what
/// `ImageData` takes). Each pixel shows the largest value of the ranks and steps it covers.
pub fn raster(h: &HeatmapDto, scale: &Scale, width: u32, height: u32) -> Vec<u8> {
    let mut out = vec![0u8; width as usize * height as usize * 4];
    if h.rows == 0 || h.cols == 0 || width == 0 {
        return out;
    }
    // colour per (pixel row, step), then per pixel column
    let col_of: Vec<(u32, u32)> = (0..width).map(|x| bin(x, width, h.cols)).collect();
    let mut per_step = vec![None::<f64>; h.cols as usize];
    for y in 0..height {
        let rows = bin(y, height, h.rows);
        for (c, slot) in per_step.iter_mut().enumerate() {
            *slot = bin_max(h, rows, c as u32).1;
        }
        let line = &mut out[(y * width * 4) as usize..((y + 1) * width * 4) as usize];
        for (x, &(c0, c1)) in col_of.iter().enumerate() {
            let v = per_step[c0 as usize..c1 as usize]
                .iter()
                .flatten()
                .copied()
                .fold(None::<f64>, |m, v| Some(m.map_or(v, |m| m.max(v))));
            line[x * 4..x * 4 + 4].copy_from_slice(&scale.colour(v));
        }
    }
    out
}

/// Top of rank `row`'s pixel band in a raster `height` px tall (where the slow-rank markers go).
pub fn row_y(row: u32, rows: u32, height: u32) -> f64 {
    if rows == 0 {
        0.0
    } else {
        row as f64 * height as f64 / rows as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(
        metric: &str,
        rows: u32,
        cols: u32,
        f: impl Fn(u32, u32) -> Option<f64>,
    ) -> HeatmapDto {
        HeatmapDto {
            metric: metric.into(),
            rows,
            cols,
            values: (0..rows)
                .flat_map(|r| (0..cols).map(move |c| (r, c)))
                .map(|(r, c)| f(r, c))
                .collect(),
        }
    }

    #[test]
    fn the_scale_spans_the_finite_values_and_labels_in_units() {
        let h = matrix("service_ms", 3, 2, |r, c| match (r, c) {
            (0, 0) => None,
            (1, 1) => Some(f64::NAN),
            _ => Some(100.0 + (r * 2 + c) as f64 * 10.0),
        });
        let s = Scale::of(&h);
        assert_eq!((s.min, s.max, s.unit), (110.0, 150.0, Unit::Ms));
        assert_eq!(s.fraction(130.0), 0.5);
        assert_eq!(s.fraction(1e9), 1.0);
        assert_eq!(s.colour(Some(110.0)), [68, 1, 84, 255]);
        assert_eq!(s.colour(Some(150.0)), [253, 231, 37, 255]);
        assert_eq!(s.colour(Some(130.0)), [33, 145, 140, 255]);
        assert_eq!(s.colour(None), [0, 0, 0, 0]);
        assert_eq!(s.colour(Some(f64::NAN)), [0, 0, 0, 0]);
        let legend = s.legend(3);
        assert_eq!(
            legend,
            vec![
                (0.0, "110.000 ms".to_string()),
                (0.5, "130.000 ms".into()),
                (1.0, "150.000 ms".into())
            ]
        );
        let u = matrix("underfeed_ratio", 1, 2, |_, c| {
            Some([0.05, 0.5][c as usize])
        });
        let su = Scale::of(&u);
        assert_eq!((su.min, su.max, su.unit), (0.05, 0.5, Unit::Ratio));
        assert_eq!(su.legend(2)[1].1, format::percent(Some(0.5), 1));
        // an empty matrix has a zero-width scale and paints nothing
        let e = matrix("service_ms", 0, 0, |_, _| None);
        assert_eq!(Scale::of(&e).max, 0.0);
        assert_eq!(ramp(0.125), [64, 42, 112]);
    }

    #[test]
    fn bins_cover_every_item_once() {
        // 10,000 ranks on 400 px: 25 a pixel row, contiguous, nothing left out
        let mut next = 0;
        for y in 0..400 {
            let (lo, hi) = bin(y, 400, 10_000);
            assert_eq!(lo, next);
            assert_eq!(hi - lo, 25);
            next = hi;
        }
        assert_eq!(next, 10_000);
        // 8 steps on 600 px: each step 75 px
        assert_eq!(bin(0, 600, 8), (0, 1));
        assert_eq!(bin(74, 600, 8), (0, 1));
        assert_eq!(bin(75, 600, 8), (1, 2));
        assert_eq!(bin(599, 600, 8), (7, 8));
        // 3 ranks on 400 px: rank 1 spans pixel rows 134..267
        assert_eq!(bin(133, 400, 3), (0, 1));
        assert_eq!(bin(134, 400, 3), (1, 2));
        assert_eq!(bin(0, 0, 5), (0, 0));
    }

    #[test]
    fn a_straggler_among_ten_thousand_is_not_averaged_away() {
        let slow = 6_789;
        let h = matrix("service_ms", 10_000, 8, |r, c| {
            Some(if r == slow && c >= 2 {
                300.0
            } else {
                100.0 + (r % 7) as f64
            })
        });
        let s = Scale::of(&h);
        let (w, ht) = (80, 400);
        let img = raster(&h, &s, w, ht);
        assert_eq!(img.len(), (w * ht * 4) as usize);
        // the straggler's pixel row (6789 / 25 = 271), step 5 (x = 55): the brightest colour
        let y = slow / 25;
        let px = |x: u32, y: u32| &img[((y * w + x) * 4) as usize..((y * w + x) * 4 + 4) as usize];
        assert_eq!(px(55, y), &[253, 231, 37, 255]);
        // its step 0 and the neighbouring pixel rows are not
        assert_ne!(px(5, y), &[253, 231, 37, 255]);
        assert_ne!(px(55, y + 1), &[253, 231, 37, 255]);
        let hit = hit(&h, 55.5, y as f64 + 0.5, w, ht).unwrap();
        assert_eq!(
            hit,
            Hit {
                row: slow,
                col: 5,
                value: Some(300.0),
                rows: (6_775, 6_800)
            }
        );
        assert_eq!(row_y(slow, 10_000, ht), 271.56);
    }

    #[test]
    fn missing_steps_are_transparent_and_hover_outside_is_none() {
        let h = matrix("service_ms", 2, 2, |r, c| {
            (r == 0 || c == 0).then_some(10.0 * (r + c + 1) as f64)
        });
        let s = Scale::of(&h);
        let img = raster(&h, &s, 2, 2);
        assert_eq!(&img[12..16], &[0, 0, 0, 0]); // rank 1, step 1: no value
        assert_eq!(&img[0..4], &[68, 1, 84, 255]); // the smallest, 10
        assert_eq!(hit(&h, 1.5, 1.5, 2, 2).unwrap().value, None);
        assert_eq!(hit(&h, -1.0, 0.0, 2, 2), None);
        assert_eq!(hit(&h, 2.0, 0.0, 2, 2), None);
        assert_eq!(hit(&h, f64::NAN, 0.0, 2, 2), None);
    }
}
