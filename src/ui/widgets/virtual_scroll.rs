//! Virtual scrolling with a synthetic scroll height (peers.md §5: Chrome caps element
//! heights around a few million pixels, so 1M rows × 24 px cannot be a real spacer).
//!
//! The spacer is at most [`MAX_SPACER_PX`] tall; the scroll position maps linearly to the
//! first visible row. Only the visible rows exist in the DOM.

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
