//! Windowing of a virtual list: which rows of a long table exist in the DOM for a scroll
//! position, with a synthetic scroll height (Chrome caps element heights around
//! a few million pixels, so 1M rows × 24 px cannot be a real spacer). Used by the memory
//! events table and the cluster rank table.
//!
//! The spacer is at most [`MAX_SPACER_PX`] tall; the scroll position maps linearly to the
//! first visible row. Only the visible rows (plus [`Window`]'s overscan) exist in the DOM.

/// Largest spacer height used, px.
pub const MAX_SPACER_PX: f64 = 4_000_000.0;

/// Height of the spacer for `total` rows of `row_h` px.
pub fn spacer_height(total: u32, row_h: f64) -> f64 {
    (total as f64 * row_h).min(MAX_SPACER_PX)
}

/// First visible row for a scroll position (`scroll_top` px) in a viewport `viewport_h` px tall.
pub fn first_row(scroll_top: f64, viewport_h: f64, total: u32, row_h: f64) -> u32 {
    let visible = (viewport_h / row_h).floor().max(1.0);
    let max_first = (total as f64 - visible).max(0.0);
    let natural = total as f64 * row_h;
    let first = if natural <= MAX_SPACER_PX {
        scroll_top / row_h
    } else {
        let range = (MAX_SPACER_PX - viewport_h).max(1.0);
        (scroll_top / range).clamp(0.0, 1.0) * max_first
    };
    first.floor().clamp(0.0, max_first) as u32
}

/// The rows to render for one scroll position: `first..first + count`, and where the first
/// one is drawn inside the scrolled content (`top_px`): at its natural place `first × row_h`
/// when the spacer is not scaled (rows move with the scroll, pixel for pixel), else at the
/// scroll position (the rows sit under the viewport whatever the spacer's scale).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// First row rendered.
    pub first: u32,
    /// Rows rendered (the visible ones plus `overscan` below, clamped to the total).
    pub count: u32,
    /// `top` of the first rendered row inside the scrolled content, px.
    pub top_px: f64,
}

/// The window of `total` rows of `row_h` px in a viewport `viewport_h` px tall scrolled to
/// `scroll_top`, with `overscan` extra rows below the visible ones.
pub fn window(scroll_top: f64, viewport_h: f64, total: u32, row_h: f64, overscan: u32) -> Window {
    let first = first_row(scroll_top, viewport_h, total, row_h);
    let visible = (viewport_h / row_h).ceil().max(1.0) as u32;
    let count = visible.saturating_add(overscan).min(total - first);
    let top_px = if total as f64 * row_h <= MAX_SPACER_PX {
        first as f64 * row_h
    } else {
        scroll_top.clamp(0.0, (MAX_SPACER_PX - viewport_h).max(0.0))
    };
    Window {
        first,
        count,
        top_px,
    }
}

/// A column of a virtualised table whose width follows its content (columns cut
/// while space is free).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitColumn {
    /// Characters of the widest text seen in it (header included).
    pub chars: usize,
    /// Narrowest width, ch.
    pub min_ch: u32,
    /// Widest width, ch (longer texts are cut with an ellipsis and keep their tooltip).
    pub max_ch: u32,
    /// Also takes a share of the free width (`1fr`): names, stack frames.
    pub flex: bool,
}

impl FitColumn {
    /// Its width, ch: `chars + 2` clamped to `[min_ch, max_ch]`.
    pub fn width_ch(&self) -> u32 {
        (self.chars as u32 + 2).clamp(self.min_ch, self.max_ch.max(self.min_ch))
    }
}

/// The row's least width, ch: the fixed columns' widths plus the flexible ones' minimums
/// (narrower than that, the table scrolls sideways, header and rows together).
pub fn fit_width_ch(cols: &[FitColumn]) -> u32 {
    cols.iter()
        .map(|c| if c.flex { c.min_ch } else { c.width_ch() })
        .sum()
}

/// CSS `grid-template-columns` for `cols`: a fixed column is `chars + 2` ch (the text and the
/// cell padding) clamped to `[min_ch, max_ch]`, so it is never cut; a flexible column is
/// `minmax(<min_ch>ch, <that>fr)`: it shares the free width in proportion to its content and
/// shrinks to its minimum (cut with an ellipsis, the cell keeps its tooltip) only when the row
/// is too narrow for every content.
pub fn fit_columns(cols: &[FitColumn]) -> String {
    cols.iter()
        .map(|c| {
            let ch = c.width_ch();
            if c.flex {
                format!("minmax({}ch, {ch}fr)", c.min_ch)
            } else {
                format!("{ch}ch")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_fit_their_widest_text_within_bounds() {
        let c = |chars, min_ch, max_ch, flex| FitColumn {
            chars,
            min_ch,
            max_ch,
            flex,
        };
        assert_eq!(
            fit_columns(&[
                c(2, 4, 10, false),  // "#" column, 2 digits: the minimum
                c(60, 16, 48, true), // long names: capped, flexible
                c(10, 6, 14, false), // "486.6 MiB" + 1
                c(30, 12, 80, true), // a frame
            ]),
            "4ch minmax(16ch, 48fr) 12ch minmax(12ch, 32fr)"
        );
        assert_eq!(fit_width_ch(&[c(2, 4, 10, false), c(60, 16, 48, true)]), 20);
        assert_eq!(fit_columns(&[]), "");
    }

    #[test]
    fn small_lists_map_scroll_to_rows_exactly() {
        // 10,000 rows × 24 px = 240,000 px: below the cap, so one row per 24 px.
        assert_eq!(spacer_height(10_000, 24.0), 240_000.0);
        let w = window(0.0, 480.0, 10_000, 24.0, 4);
        assert_eq!((w.first, w.count, w.top_px), (0, 24, 0.0));
        let w = window(24.0 * 137.0 + 5.0, 480.0, 10_000, 24.0, 4);
        assert_eq!((w.first, w.count, w.top_px), (137, 24, 3288.0));
        // the end: the last 20 visible rows, no row past the total
        let w = window(240_000.0 - 480.0, 480.0, 10_000, 24.0, 4);
        assert_eq!((w.first, w.count), (9_980, 20));
        assert_eq!(w.first + w.count, 10_000);
        // scrolled past the end (elastic scroll): clamped
        let w = window(1e9, 480.0, 10_000, 24.0, 4);
        assert_eq!((w.first, w.count, w.top_px), (9_980, 20, 239_520.0));
        assert_eq!(w.top_px + 20.0 * 24.0, spacer_height(10_000, 24.0));
        // fewer rows than the viewport holds
        let w = window(0.0, 480.0, 3, 24.0, 4);
        assert_eq!((w.first, w.count), (0, 3));
        let w = window(0.0, 480.0, 0, 24.0, 4);
        assert_eq!((w.first, w.count), (0, 0));
    }

    #[test]
    fn huge_lists_scale_the_spacer_and_still_reach_the_last_row() {
        let total = 1_000_000;
        assert_eq!(spacer_height(total, 24.0), MAX_SPACER_PX);
        let end = MAX_SPACER_PX - 480.0;
        let w = window(end, 480.0, total, 24.0, 0);
        assert_eq!((w.first, w.top_px), (total - 20, end));
        assert_eq!(w.first + w.count, total);
        let mid = window(end / 2.0, 480.0, total, 24.0, 0);
        assert_eq!(mid.first, (total - 20) / 2);
    }
}
