//! Canvas drawing of downsampled series ([`crate::protocol::CurveDto`]): one vertical
//! min–max bar per pixel column plus a line through the column maxima, axes with units,
//! the peak marker and a drag-selection band. Pure drawing; the component owns the state.
//! Colours come from the theme ([`super::palette`]), read at each draw.

use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use crate::protocol::CurveDto;
use crate::views::format;

/// Light-theme colours of the series, in the order the worker sends them (fallbacks: the
/// drawing uses the theme's `--chart-N` variables, see [`super::palette`]).
pub const COLORS: &[&str] = &["#2f6fde", "#e08a1e", "#2a9d55", "#9b4dca", "#d6336c"];

/// Plot margins, px: left, right, top, bottom.
pub const MARGIN: (f64, f64, f64, f64) = (64.0, 12.0, 12.0, 28.0);

/// The 2-D context of `canvas`, sized to its CSS box × device pixel ratio.
pub fn context(canvas: &HtmlCanvasElement) -> Option<(CanvasRenderingContext2d, f64, f64)> {
    let dpr = web_sys::window()
        .map(|w| w.device_pixel_ratio())
        .unwrap_or(1.0);
    let w = canvas.client_width() as f64;
    let h = canvas.client_height() as f64;
    if w <= 0.0 || h <= 0.0 {
        return None;
    }
    canvas.set_width((w * dpr) as u32);
    canvas.set_height((h * dpr) as u32);
    let ctx: CanvasRenderingContext2d = canvas.get_context("2d").ok()??.dyn_into().ok()?;
    let _ = ctx.scale(dpr, dpr);
    Some((ctx, w, h))
}

/// Plot width in columns for a canvas `css_width` px wide.
pub fn plot_columns(css_width: f64) -> u32 {
    (css_width - MARGIN.0 - MARGIN.1).max(10.0) as u32
}

/// Draws `curve` on `canvas`; `t0_ms` is the time shown as 0 on the x axis; `band` is a
/// drag selection in CSS px (x from, x to).
pub fn draw(canvas: &HtmlCanvasElement, curve: &CurveDto, t0_ms: f64, band: Option<(f64, f64)>) {
    let Some((ctx, w, h)) = context(canvas) else {
        return;
    };
    let (ml, mr, mt, mb) = MARGIN;
    let pw = w - ml - mr;
    let ph = h - mt - mb;
    ctx.clear_rect(0.0, 0.0, w, h);
    let y_max = if curve.y_max_mb > 0.0 {
        curve.y_max_mb * 1.05
    } else {
        1.0
    };
    let y_of = |v: f64| mt + ph - v / y_max * ph;
    let pal = super::palette::palette();
    // Grid and y axis labels (binary sizes; the values are MiB).
    ctx.set_font("11px system-ui, sans-serif");
    ctx.set_stroke_style_str(&pal.grid);
    ctx.set_fill_style_str(&pal.text);
    // Binary steps (256 MiB, 512 MiB, …), the values being MiB.
    let ystep = format::binary_step(y_max * 1048576.0 / 5.0) / 1048576.0;
    let mut v = 0.0;
    while v <= y_max {
        let y = y_of(v);
        ctx.begin_path();
        ctx.move_to(ml, y);
        ctx.line_to(ml + pw, y);
        ctx.stroke();
        let _ = ctx.fill_text(&format::mib(v), 4.0, y + 4.0);
        v += ystep;
    }
    // x axis labels (offsets from t0, adaptive unit).
    let span = curve.x1_ms - curve.x0_ms;
    if span > 0.0 {
        let xstep = format::nice_step(span / 8.0, format::StepRound::Nearest);
        let mut t = ((curve.x0_ms - t0_ms) / xstep).ceil() * xstep;
        while t + t0_ms <= curve.x1_ms {
            let x = ml + (t + t0_ms - curve.x0_ms) / span * pw;
            ctx.begin_path();
            ctx.move_to(x, mt);
            ctx.line_to(x, mt + ph);
            ctx.stroke();
            let _ = ctx.fill_text(&format::duration_ms(t), x - 18.0, h - 8.0);
            t += xstep;
        }
    }
    // Series: min–max bars per column, and a line through the maxima.
    // Drawn last-to-first so the first series (allocated) is on top; active is dashed
    // because it often equals allocated.
    for (i, s) in curve.series.iter().enumerate().rev() {
        let color = pal
            .series
            .get(i % pal.series.len().max(1))
            .map(String::as_str)
            .unwrap_or(COLORS[0]);
        ctx.set_stroke_style_str(color);
        ctx.set_line_width(if i == 0 { 1.75 } else { 1.0 });
        let dash = js_sys::Array::new();
        if i == 2 {
            dash.push(&4.into());
            dash.push(&3.into());
        }
        let _ = ctx.set_line_dash(&dash);
        stroke_min_max(&ctx, &s.min, &s.max, ml, &y_of);
    }
    let _ = ctx.set_line_dash(&js_sys::Array::new());
    // Peak marker.
    if let Some((t, mb_v)) = curve.peak {
        if t >= curve.x0_ms && t <= curve.x1_ms && span > 0.0 {
            let x = ml + (t - curve.x0_ms) / span * pw;
            ctx.set_stroke_style_str(&pal.peak);
            ctx.set_line_width(1.5);
            ctx.begin_path();
            ctx.move_to(x, mt);
            ctx.line_to(x, mt + ph);
            ctx.stroke();
            ctx.set_fill_style_str(&pal.peak);
            let _ = ctx.fill_text(
                &format!("peak {}", format::mib(mb_v)),
                (x + 4.0).min(w - 110.0),
                mt + 12.0,
            );
        }
    }
    if let Some((a, b)) = band {
        ctx.set_fill_style_str(&pal.band);
        ctx.fill_rect(a.min(b), mt, (a - b).abs(), ph);
    }
    // Frame.
    ctx.set_stroke_style_str(&pal.frame);
    ctx.set_line_width(1.0);
    ctx.stroke_rect(ml, mt, pw, ph);
}

/// Strokes one downsampled series: per pixel column `c` (at `x_left + c + 0.5`) a vertical
/// bar from `min[c]` to `max[c]`, joined through the maxima; `NaN` columns lift the pen.
pub fn stroke_min_max(
    ctx: &CanvasRenderingContext2d,
    min: &[f64],
    max: &[f64],
    x_left: f64,
    y_of: &dyn Fn(f64) -> f64,
) {
    ctx.begin_path();
    let mut pen = false;
    for (c, (lo, hi)) in min.iter().zip(max).enumerate() {
        let x = x_left + c as f64 + 0.5;
        if lo.is_nan() || hi.is_nan() {
            pen = false;
            continue;
        }
        if pen {
            ctx.line_to(x, y_of(*hi));
        } else {
            ctx.move_to(x, y_of(*hi));
            pen = true;
        }
        if hi != lo {
            ctx.line_to(x, y_of(*lo));
            ctx.move_to(x, y_of(*hi));
        }
    }
    ctx.stroke();
}
