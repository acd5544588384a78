//! The keyboard end of chart zoom (issue 5 item 5): a focused chart's keydown becomes a new x
//! window through [`crate::views::zoom`], the one copy of the window math (natively tested).
//!
//! ```ignore
//! on:keydown=move |ev| if let Some(w) = zoom::on_key(&ev, shown_window, full_range, None, min_span) { window.set(w) }
//! ```

pub use crate::views::zoom::{apply, zoom_around, zoom_key, ZoomKey, PAN, STEP};

/// Narrowest window of the memory chart, as a fraction of the full range.
pub const MIN_FRACTION: f64 = 1e-6;

/// Handles a keydown on a focused chart: `Some(new window)` when it was a chart key (the
/// event's default — scrolling — is prevented), `None` for other keys and with Ctrl/Alt/Meta.
/// `at` is the pointer's x (zoom keeps it in place; `None` = the middle of `cur`).
pub fn on_key(
    ev: &web_sys::KeyboardEvent,
    cur: (f64, f64),
    full: (f64, f64),
    at: Option<f64>,
    min_span: f64,
) -> Option<Option<(f64, f64)>> {
    if ev.ctrl_key() || ev.alt_key() || ev.meta_key() {
        return None;
    }
    let k = zoom_key(&ev.key())?;
    ev.prevent_default();
    Some(apply(k, cur, full, at, min_span))
}
