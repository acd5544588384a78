//! Zoom and pan of a chart's x window (issue 5 item 5), shared by every chart: the wheel
//! ([`zoom_around`]) and the keyboard ([`on_key`]: W/S or ↑/↓ zoom in/out around the middle,
//! A/D or ←/→ pan by a fifth of the window, 0 or Home shows everything). Pure window math on
//! `(start, end)` pairs in the chart's x unit; `None` means "the full range".
//!
//! ```ignore
//! on:keydown=move |ev| if let Some(w) = zoom::on_key(&ev, shown_window, full_range) { window.set(w) }
//! ```

/// Zoom factor of one key press or wheel notch (window × 0.8 in, ÷ 0.8 out).
pub const STEP: f64 = 0.8;
/// Fraction of the window one pan key moves.
pub const PAN: f64 = 0.2;
/// Narrowest window, as a fraction of the full range.
pub const MIN_FRACTION: f64 = 1e-6;

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

/// Clamps a window into `full`, keeping its width; `None` when it covers all of `full`.
pub fn clamp(a: f64, b: f64, full: (f64, f64)) -> Option<(f64, f64)> {
    let (f0, f1) = full;
    let span = f1 - f0;
    if span.is_nan() || span <= 0.0 || !(b - a).is_finite() || b - a >= span {
        return None;
    }
    let w = (b - a).max(span * MIN_FRACTION);
    let (mut a, mut b) = (a, a + w);
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

/// The window after zooming `cur` by `factor` (< 1 zooms in) around `center`.
pub fn zoom_around(
    cur: (f64, f64),
    full: (f64, f64),
    center: f64,
    factor: f64,
) -> Option<(f64, f64)> {
    let a = center - (center - cur.0) * factor;
    let b = center + (cur.1 - center) * factor;
    clamp(a, b, full)
}

/// The window after moving `cur` by `fraction` of its width (negative = earlier).
pub fn pan(cur: (f64, f64), full: (f64, f64), fraction: f64) -> Option<(f64, f64)> {
    let d = (cur.1 - cur.0) * fraction;
    clamp(cur.0 + d, cur.1 + d, full)
}

/// The window after `key`; `cur` is the window shown now (the full range when not zoomed).
pub fn apply(key: ZoomKey, cur: (f64, f64), full: (f64, f64)) -> Option<(f64, f64)> {
    let mid = (cur.0 + cur.1) / 2.0;
    match key {
        ZoomKey::In => zoom_around(cur, full, mid, STEP),
        ZoomKey::Out => zoom_around(cur, full, mid, 1.0 / STEP),
        ZoomKey::Left => pan(cur, full, -PAN),
        ZoomKey::Right => pan(cur, full, PAN),
        ZoomKey::Reset => None,
    }
}

/// Handles a keydown on a focused chart: `Some(new window)` when it was a chart key (the
/// event's default — scrolling — is prevented), `None` for other keys and with Ctrl/Alt/Meta.
pub fn on_key(
    ev: &web_sys::KeyboardEvent,
    cur: (f64, f64),
    full: (f64, f64),
) -> Option<Option<(f64, f64)>> {
    if ev.ctrl_key() || ev.alt_key() || ev.meta_key() {
        return None;
    }
    let k = zoom_key(&ev.key())?;
    ev.prevent_default();
    Some(apply(k, cur, full))
}
