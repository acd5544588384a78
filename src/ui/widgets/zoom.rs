//! The UI end of chart zoom and pan, the one place every canvas chart (memory
//! chart, snapshot chart, active memory timeline, steps/bubbles timeline) turns its wheel, drag
//! and key events into a new x window; the window math itself is [`crate::views::zoom`]
//! (natively tested).
//!
//! * wheel: [`wheel_factor`] (one [`STEP`] per event) or [`wheel_factor_smooth`] (by the
//!   wheel's distance), then `zoom_around` the pointer;
//! * drag: a [`PanDrag`] from mouse down to mouse up; a drag shorter than [`DRAG_SLOP_PX`]
//!   is a click;
//! * keys: [`on_key`] on a focused chart.
//!
//! ```ignore
//! on:keydown=move |ev| if let Some(w) = zoom::on_key(&ev, shown_window, full_range, None, min_span) { window.set(w) }
//! ```

pub use crate::views::zoom::{apply, clamp, pan, zoom_around, zoom_key, ZoomKey, PAN, STEP};

/// Narrowest window of the memory chart, as a fraction of the full range.
pub const MIN_FRACTION: f64 = 1e-6;

/// How far (CSS px) the pointer must move between mouse down and up for a drag (else a click).
pub const DRAG_SLOP_PX: f64 = 4.0;

/// The zoom factor of a wheel event: [`STEP`] (in) when the wheel turns up, else its inverse
/// (out). Prevents the page from scrolling.
pub fn wheel_factor(ev: &web_sys::WheelEvent) -> f64 {
    ev.prevent_default();
    if ev.delta_y() < 0.0 {
        STEP
    } else {
        1.0 / STEP
    }
}

/// The zoom factor of a wheel event in proportion to its distance (`e^(Δy/500)`, within
/// 0.2–5, so a trackpad zooms smoothly). Prevents the page from scrolling.
pub fn wheel_factor_smooth(ev: &web_sys::WheelEvent) -> f64 {
    ev.prevent_default();
    (ev.delta_y() * 0.002).exp().clamp(0.2, 5.0)
}

/// A drag that pans a chart, from mouse down: where it started, the window then, and whether
/// it has moved [`DRAG_SLOP_PX`] (from then on it pans, and the release is not a click).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PanDrag {
    /// Pointer x at mouse down, CSS px.
    pub x0: f64,
    /// The window at mouse down.
    pub from: (f64, f64),
    /// Moved at least [`DRAG_SLOP_PX`] at some point.
    pub moved: bool,
}

impl PanDrag {
    /// A drag starting at pointer `x` over window `from`.
    pub fn start(x: f64, from: (f64, f64)) -> Self {
        PanDrag {
            x0: x,
            from,
            moved: false,
        }
    }

    /// Whether pointer `x` is at least [`DRAG_SLOP_PX`] from the start.
    pub fn beyond_slop(&self, x: f64) -> bool {
        (x - self.x0).abs() >= DRAG_SLOP_PX
    }

    /// The pointer moved to `x`: once the drag has moved [`DRAG_SLOP_PX`] (then it stays
    /// moved), `Some(x − x0)` in px, else `None`.
    pub fn follow(&mut self, x: f64) -> Option<f64> {
        if self.moved || self.beyond_slop(x) {
            self.moved = true;
            Some(x - self.x0)
        } else {
            None
        }
    }

    /// The x units the window moves for pointer `x` on a plot `plot_w` px wide showing
    /// [`Self::from`]: the point under the pointer at mouse down stays under it.
    pub fn shift(&self, x: f64, plot_w: f64) -> f64 {
        (self.x0 - x) / plot_w * (self.from.1 - self.from.0)
    }
}

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
