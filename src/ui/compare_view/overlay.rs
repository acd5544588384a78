//! Both sides' curves of one device on one axis, drawn on a canvas (snapshots).

use leptos::prelude::*;

use crate::protocol::compare::OverlayDto;
use crate::ui::widgets::chart::{context, MARGIN};
use crate::ui::widgets::palette::{palette, series_css};
use crate::views::format;

/// Overlay columns asked for: the plot width of a chart as wide as the window allows.
pub(super) fn overlay_columns() -> u32 {
    let w = web_sys::window()
        .and_then(|w| w.inner_width().ok())
        .and_then(|v| v.as_f64())
        .unwrap_or(1200.0);
    ((w - 80.0).clamp(400.0, 1600.0) - MARGIN.0 - MARGIN.1) as u32
}

/// The options a link asks for (the `cmp.*` control keys), used by the page's first
/// comparison (a link being restored); a later "compare with…" starts from the defaults.
/// Both sides' allocated and reserved curves of one device on one axis.
#[component]
pub(super) fn OverlayChart(o: OverlayDto, a: String, b: String) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let dark = crate::ui::theme::use_theme().dark;
    let o2 = o.clone();
    Effect::new(move |_| {
        dark.track();
        if let Some(c) = canvas.get() {
            draw_overlay(&c, &o2);
        }
    });
    // The series in drawing order: A allocated, A reserved, B allocated, B reserved.
    let legend = [
        (0, format!("A allocated ({a})"), false),
        (0, format!("A reserved ({a})"), true),
        (1, format!("B allocated ({b})"), false),
        (1, format!("B reserved ({b})"), true),
    ]
    .into_iter()
    .map(|(i, label, dashed)| {
        let style = format!(
            "border-top: 3px {} {}",
            if dashed { "dashed" } else { "solid" },
            series_css(i)
        );
        view! { <span class="legend-item"><span class="swatch-line" style=style></span>{label}</span> }
    })
    .collect_view();
    let axis = if o.axis == "index" {
        "entry index"
    } else {
        "ms since the first entry"
    };
    let at = o.align.as_ref().map_or("the first entry".to_string(), |a| {
        format!("the first start of “{a}”")
    });
    view! {
        <figure class="compare-overlay" data-testid="compare-overlay" data-device=o.device.to_string()>
            <figcaption>{format!("Device {}: both sides on one axis ({axis}, aligned at {at})", o.device)}</figcaption>
            <canvas class="chart" node_ref=canvas data-testid="compare-overlay-canvas"></canvas>
            <div class="legend">{legend}</div>
        </figure>
    }
}

pub(super) fn draw_overlay(canvas: &web_sys::HtmlCanvasElement, o: &OverlayDto) {
    let Some((ctx, w, h)) = context(canvas) else {
        return;
    };
    let (ml, mr, mt, mb) = MARGIN;
    let (pw, ph) = (w - ml - mr, h - mt - mb);
    ctx.clear_rect(0.0, 0.0, w, h);
    let all = o.a.iter().chain(&o.b);
    let y_max = all
        .flat_map(|s| s.max.iter().flatten())
        .copied()
        .max()
        .unwrap_or(0)
        .max(1) as f64
        * 1.05;
    let y_of = |v: f64| mt + ph - v / y_max * ph;
    let pal = palette();
    ctx.set_font("11px system-ui, sans-serif");
    ctx.set_stroke_style_str(&pal.grid);
    ctx.set_fill_style_str(&pal.text);
    let ystep = format::binary_step(y_max / 5.0);
    let mut v = 0.0;
    while v <= y_max {
        let y = y_of(v);
        ctx.begin_path();
        ctx.move_to(ml, y);
        ctx.line_to(ml + pw, y);
        ctx.stroke();
        let _ = ctx.fill_text(&format::bytes(v), 4.0, y + 4.0);
        v += ystep;
    }
    let span = o.x1 - o.x0;
    if span > 0.0 {
        let xstep = format::nice_step(span / 8.0, format::StepRound::Nearest).max(1.0);
        let mut x = (o.x0 / xstep).ceil() * xstep;
        while x <= o.x1 {
            let px = ml + (x - o.x0) / span * pw;
            ctx.begin_path();
            ctx.move_to(px, mt);
            ctx.line_to(px, mt + ph);
            ctx.stroke();
            let _ = ctx.fill_text(&format::thousands(x as i64), px - 14.0, h - 8.0);
            x += xstep;
        }
    }
    for (side, series) in [(0usize, &o.a), (1usize, &o.b)] {
        let color = pal.series.get(side).cloned().unwrap_or_default();
        for s in series {
            let n = s.max.len().max(1) as f64;
            let dash = js_sys::Array::new();
            if s.curve == "reserved" {
                dash.push(&5.into());
                dash.push(&3.into());
            }
            let _ = ctx.set_line_dash(&dash);
            ctx.set_stroke_style_str(&color);
            ctx.set_line_width(if s.curve == "reserved" { 1.0 } else { 1.75 });
            ctx.begin_path();
            let mut pen = false;
            for (c, (lo, hi)) in s.min.iter().zip(&s.max).enumerate() {
                let (Some(lo), Some(hi)) = (lo, hi) else {
                    pen = false;
                    continue;
                };
                let x = ml + (c as f64 + 0.5) / n * pw;
                let (ylo, yhi) = (y_of(*lo as f64), y_of(*hi as f64));
                if pen {
                    ctx.line_to(x, yhi);
                } else {
                    ctx.move_to(x, yhi);
                    pen = true;
                }
                if lo != hi {
                    ctx.line_to(x, ylo);
                    ctx.move_to(x, yhi);
                }
            }
            ctx.stroke();
        }
    }
    let _ = ctx.set_line_dash(&js_sys::Array::new());
    ctx.set_stroke_style_str(&pal.frame);
    ctx.set_line_width(1.0);
    ctx.stroke_rect(ml, mt, pw, ph);
}
