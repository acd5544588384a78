//! Zoom and pan of a chart's x window, the one copy every chart uses: the
//! memory chart, the snapshot chart and the steps/bubbles timeline, by wheel, drag and keys
//! (W/S or ↑/↓ zoom in/out, A/D or ←/→ pan by a fifth of the window, 0 or Home shows
//! everything). Pure window math on `(start, end)` pairs in the chart's x unit (ms, or entry
//! index for the snapshot chart); `None` means "the full range". The UI only turns events
//! into these calls (`ui::widgets::zoom::on_key`).

/// Zoom factor of one key press or wheel notch (window × 0.8 in, ÷ 0.8 out).
pub const STEP: f64 = 0.8;
/// Fraction of the window one pan key moves.
pub const PAN: f64 = 0.2;

/// What a key does to a chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoomKey {
    /// W, ↑, `+`: narrower window.
    In,
    /// S, ↓, `-`: wider window.
    Out,
    /// A, ←: earlier.
    Left,
    /// D, →: later.
    Right,
    /// 0, Home: the full range.
    Reset,
}

/// The action of `key` (a `KeyboardEvent.key`), if it is a chart key.
pub fn zoom_key(key: &str) -> Option<ZoomKey> {
    Some(match key {
        "w" | "W" | "ArrowUp" | "+" | "=" => ZoomKey::In,
        "s" | "S" | "ArrowDown" | "-" | "_" => ZoomKey::Out,
        "a" | "A" | "ArrowLeft" => ZoomKey::Left,
        "d" | "D" | "ArrowRight" => ZoomKey::Right,
        "0" | "Home" => ZoomKey::Reset,
        _ => return None,
    })
}

/// `view` made valid inside `full`: narrower than `min_span` it grows to it around its
/// centre, then it is shifted (never shrunk) inside `full`. `None` when it covers all of
/// `full` (or is not finite, or `full` is empty): the chart shows everything.
///
/// ```
/// # use proflens::views::zoom::clamp;
/// assert_eq!(clamp((-5.0, 5.0), (0.0, 100.0), 1.0), Some((0.0, 10.0)));
/// assert_eq!(clamp((50.0, 50.0), (0.0, 100.0), 2.0), Some((49.0, 51.0)));
/// assert_eq!(clamp((-10.0, 200.0), (0.0, 100.0), 1.0), None);
/// ```
pub fn clamp(view: (f64, f64), full: (f64, f64), min_span: f64) -> Option<(f64, f64)> {
    let (f0, f1) = full;
    let span = f1 - f0;
    let (mut a, mut b) = view;
    if !(span > 0.0) || !(a.is_finite() && b.is_finite()) || b - a >= span {
        return None;
    }
    if b - a < min_span {
        let c = (a + b) / 2.0;
        a = c - min_span / 2.0;
        b = c + min_span / 2.0;
        if b - a >= span {
            return None;
        }
    }
    if a < f0 {
        b += f0 - a;
        a = f0;
    }
    if b > f1 {
        a -= b - f1;
        b = f1;
    }
    Some((a.max(f0), b))
}

/// `cur` zoomed by `factor` (< 1 zooms in) keeping `at` (clamped into `cur`) under the same
/// pixel, then [`clamp`]ed.
pub fn zoom_around(
    cur: (f64, f64),
    full: (f64, f64),
    at: f64,
    factor: f64,
    min_span: f64,
) -> Option<(f64, f64)> {
    let at = if at.is_nan() {
        (cur.0 + cur.1) / 2.0
    } else {
        at.clamp(cur.0.min(cur.1), cur.1.max(cur.0))
    };
    clamp(
        (at - (at - cur.0) * factor, at + (cur.1 - at) * factor),
        full,
        min_span,
    )
}

/// `cur` moved by `delta` x units (positive = later), then [`clamp`]ed.
pub fn pan(cur: (f64, f64), full: (f64, f64), delta: f64, min_span: f64) -> Option<(f64, f64)> {
    clamp((cur.0 + delta, cur.1 + delta), full, min_span)
}

/// The window after `key`: zoom around `at` (the pointer; `None` = the middle of `cur`), pan
/// by [`PAN`] of the window, or the full range.
pub fn apply(
    key: ZoomKey,
    cur: (f64, f64),
    full: (f64, f64),
    at: Option<f64>,
    min_span: f64,
) -> Option<(f64, f64)> {
    let at = at.unwrap_or((cur.0 + cur.1) / 2.0);
    let w = cur.1 - cur.0;
    match key {
        ZoomKey::In => zoom_around(cur, full, at, STEP, min_span),
        ZoomKey::Out => zoom_around(cur, full, at, 1.0 / STEP, min_span),
        ZoomKey::Left => pan(cur, full, -PAN * w, min_span),
        ZoomKey::Right => pan(cur, full, PAN * w, min_span),
        ZoomKey::Reset => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: (f64, f64) = (0.0, 100.0);

    #[test]
    fn keys_zoom_around_the_middle_or_the_pointer_and_pan_a_fifth() {
        assert_eq!(
            apply(ZoomKey::In, FULL, FULL, None, 1e-6),
            Some((10.0, 90.0))
        );
        assert_eq!(
            apply(ZoomKey::In, (0.0, 50.0), FULL, Some(0.0), 1e-6),
            Some((0.0, 40.0))
        );
        assert_eq!(
            apply(ZoomKey::Out, (40.0, 60.0), FULL, None, 1e-6),
            Some((37.5, 62.5))
        );
        assert_eq!(
            apply(ZoomKey::Right, (10.0, 20.0), FULL, None, 1e-6),
            Some((12.0, 22.0))
        );
        // Panning past an edge stops at it, keeping the width.
        assert_eq!(
            apply(ZoomKey::Left, (1.0, 11.0), FULL, None, 1e-6),
            Some((0.0, 10.0))
        );
        assert_eq!(apply(ZoomKey::Reset, (1.0, 11.0), FULL, None, 1e-6), None);
        // Zooming out past the data shows everything.
        assert_eq!(apply(ZoomKey::Out, (5.0, 95.0), FULL, None, 1e-6), None);
        assert_eq!(zoom_key("W"), Some(ZoomKey::In));
        assert_eq!(zoom_key("ArrowLeft"), Some(ZoomKey::Left));
        assert_eq!(zoom_key("x"), None);
    }

    #[test]
    fn the_window_never_gets_narrower_than_the_minimum_nor_leaves_the_data() {
        // 4 entries minimum (the snapshot chart's index axis), at the right edge.
        assert_eq!(
            zoom_around((96.0, 100.0), FULL, 99.0, 0.5, 4.0),
            Some((96.0, 100.0))
        );
        assert_eq!(clamp((f64::NAN, 3.0), FULL, 1.0), None);
        assert_eq!(clamp((0.0, 1.0), (5.0, 5.0), 1.0), None);
        // A minimum wider than the data: everything.
        assert_eq!(clamp((1.0, 2.0), (0.0, 3.0), 4.0), None);
        // An anchor outside the window is clamped into it.
        assert_eq!(
            zoom_around((10.0, 20.0), FULL, 500.0, 0.5, 1e-6),
            Some((15.0, 20.0))
        );
    }
}
