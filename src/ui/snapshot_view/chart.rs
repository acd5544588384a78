//! The snapshot chart: allocated / active / reserved of one device (min/max per pixel column,
//! computed in the worker for the visible window), the reported points marked (global peak,
//! peaks, OOM, end), the selected point as a vertical line.
//!
//! Interaction: click a point → `selected` (the parent asks the worker for the live set
//! there); wheel = zoom around the cursor; drag = pan; W/S = zoom in/out, A/D = pan
//! (keyboard focus on the chart); double-click or "Reset zoom" = everything. The axis
//! (entry index or time) is a toggle when the trace has `time_us`.

use crate::ui::widgets::note::failed;
use leptos::ev;
use leptos::html::Canvas;
use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::CanvasRenderingContext2d;

use crate::protocol::{SnapAxis, SnapCurveDto, SnapCurveQuery, SnapQuery, SnapReply};
use crate::ui::widgets::chart::{context, plot_columns, stroke_min_max, MARGIN};
use crate::ui::widgets::zoom::{self, PanDrag};
use crate::views::format;

use super::{snap, Selected};

/// Colours: allocated, active, reserved, reserved − active.
pub const SERIES_COLORS: [&str; 4] = ["#2f6fde", "#2a9d55", "#e08a1e", "#9a6fb0"];

/// The chart of device slot `slot` of snapshot `target`.
#[component]
pub fn SnapChart(
    target: u32,
    dslot: u32,
    has_time: bool,
    /// The x axis, shared with the Active Memory Timeline.
    axis: RwSignal<SnapAxis>,
    /// The visible window (None = everything), shared with the Active Memory Timeline.
    window: RwSignal<Option<(f64, f64)>>,
    selected: RwSignal<Option<Selected>>,
    /// The entry whose live set is shown: (index, time ms), drawn as a dashed line.
    shown: Signal<Option<(u32, Option<f64>)>>,
) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    // Kept in the URL hash (`snap.x=scope:a,b`), restored after a reload + re-drop.
    crate::ui::route::use_route().bind_scoped(
        crate::ui::route::SNAP_X,
        target * 100 + dslot,
        window,
    );
    let curve = RwSignal::new(None::<SnapCurveDto>);
    let error = RwSignal::new(None::<String>);
    let hover = RwSignal::new(None::<(f64, usize)>);
    let drag = StoredValue::new(None::<PanDrag>);
    let generation = StoredValue::new(0u32);

    // A new axis shows everything.
    Effect::new(move |prev: Option<SnapAxis>| {
        let a = axis.get();
        if prev.is_some_and(|p| p != a) {
            window.set(None);
        }
        a
    });
    Effect::new(move |_| {
        let (a, win) = (axis.get(), window.get());
        let Some(c) = canvas.get() else { return };
        let width_px = plot_columns(c.client_width() as f64);
        generation.update_value(|g| *g += 1);
        let g = generation.get_value();
        spawn_local(async move {
            let q = SnapCurveQuery {
                target,
                slot: dslot,
                axis: a,
                range: win,
                width_px,
            };
            match snap(SnapQuery::Curve(q)).await {
                Ok(SnapReply::Curve(c)) => {
                    if generation.try_get_value() == Some(g) {
                        error.set(None);
                        curve.set(Some(c));
                    }
                }
                Ok(other) => error.set(Some(crate::ui::client::unexpected(
                    crate::ui::client::snap_reply_name(&other),
                ))),
                Err(e) => {
                    let _ = error.try_set(Some(e));
                }
            }
        });
    });
    Effect::new(move |_| {
        let sel = shown.get();
        curve.with(|c| {
            if let (Some(c), Some(el)) = (c, canvas.get()) {
                let sel_x = sel.and_then(|(index, time_ms)| match c.axis {
                    SnapAxis::Index => Some(index as f64),
                    SnapAxis::Time => time_ms,
                });
                if let Some((ctx, w, h)) = context(&el) {
                    draw(&ctx, w, h, c, sel_x);
                }
            }
        });
    });

    let plot_w = move || {
        canvas
            .get_untracked()
            .map(|el| el.client_width() as f64 - MARGIN.0 - MARGIN.1)
            .unwrap_or(1.0)
            .max(1.0)
    };
    let x_to_axis = move |x: f64| -> Option<(f64, usize)> {
        let c = curve.get_untracked()?;
        let pw = plot_w();
        let col = ((x - MARGIN.0).max(0.0).min(pw - 1.0)) as usize;
        let n = c.series.first().map(|s| s.min.len()).unwrap_or(0).max(1);
        let v = c.x0 + (x - MARGIN.0).clamp(0.0, pw) / pw * (c.x1 - c.x0);
        Some((v, col.min(n - 1)))
    };
    let set_window = move |a: f64, b: f64| {
        let Some(c) = curve.get_untracked() else {
            return;
        };
        window.set(zoom::clamp((a, b), c.full, min_span(c.axis)));
    };
    let zoom_at = move |center: f64, factor: f64| {
        let Some(c) = curve.get_untracked() else {
            return;
        };
        window.set(zoom::zoom_around(
            (c.x0, c.x1),
            c.full,
            center,
            factor,
            min_span(c.axis),
        ));
    };
    let on_wheel = move |ev: ev::WheelEvent| {
        let factor = zoom::wheel_factor(&ev);
        if let Some((v, _)) = x_to_axis(ev.offset_x() as f64) {
            zoom_at(v, factor);
        }
    };
    let on_down = move |ev: ev::MouseEvent| {
        let x = ev.offset_x() as f64;
        drag.set_value(
            curve
                .get_untracked()
                .map(|c| PanDrag::start(x, (c.x0, c.x1))),
        );
    };
    // Drag pans while the pointer is beyond the slop; back within it, the window stays.
    let on_move = move |ev: ev::MouseEvent| {
        let x = ev.offset_x() as f64;
        if let Some(d) = drag.get_value() {
            if d.beyond_slop(x) {
                let s = d.shift(x, plot_w());
                set_window(d.from.0 + s, d.from.1 + s);
            }
        }
        hover.set(x_to_axis(x).map(|(_, col)| (x, col)));
    };
    let on_up = move |ev: ev::MouseEvent| {
        let x = ev.offset_x() as f64;
        let Some(d) = drag.get_value() else {
            return;
        };
        drag.set_value(None);
        if !d.beyond_slop(x) {
            if let (Some((v, _)), Some(c)) = (x_to_axis(x), curve.get_untracked()) {
                selected.set(Some(Selected::at(c.axis, v)));
            }
        }
    };
    // The page's shared chart keys (W/S ↑/↓ zoom, A/D ←/→ pan, 0/Home reset).
    let on_key = move |ev: ev::KeyboardEvent| {
        let Some(c) = curve.get_untracked() else {
            return;
        };
        match zoom::on_key(&ev, (c.x0, c.x1), c.full, None, min_span(c.axis)) {
            Some(Some((a, b))) => set_window(a, b),
            Some(None) => window.set(None),
            None => {}
        }
    };
    let tooltip = move || {
        let (x, col) = hover.get()?;
        let c = curve.get()?;
        let rows = c
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let (lo, hi) = (s.min.get(col).copied()?, s.max.get(col).copied()?);
                let v = if lo == hi {
                    format::bytes(hi)
                } else {
                    format!("{} – {}", format::bytes(lo), format::bytes(hi))
                };
                Some(view! {
                    <div><span class="swatch" style=format!("background:{}", SERIES_COLORS[i % 4])></span>{format!("{}: {v}", s.name.replace("_minus_", " − "))}</div>
                })
            })
            .collect_view();
        Some(view! {
            <div class="tooltip" data-testid="snap-tooltip" style=format!("left:{}px", (x + 16.0).min(900.0))>
                {rows}
                <div class="muted">"click: what is live here"</div>
            </div>
        })
    };
    let legend = ["allocated", "active", "reserved", "reserved − active"]
        .iter()
        .enumerate()
        .map(|(i, n)| view! { <span class="legend-item"><span class="swatch" style=format!("background:{}", SERIES_COLORS[i])></span>{*n}</span> })
        .collect_view();
    view! {
        <section class="chart-box" data-testid="snap-chart-box">
            <div class="chart-bar">
                <span class="legend">{legend}<span class="legend-item muted">"▲ peak · ▼ OOM"</span></span>
                <span class="muted" data-testid="snap-in-view">{move || curve.with(|c| c.as_ref().map(|c| format!("{} entries in view · wheel/W S zoom · drag/A D pan · click a point", c.entries_in_window)))}</span>
                {has_time.then(|| view! {
                    <label class="axis-toggle">
                        <input type="checkbox" data-testid="snap-axis-time" prop:checked=move || axis.get() == SnapAxis::Time
                            on:change=move |_| axis.update(|a| *a = if *a == SnapAxis::Time { SnapAxis::Index } else { SnapAxis::Time })/>
                        "time axis"
                    </label>
                })}
                <button class="button" data-testid="snap-reset-zoom" on:click=move |_| window.set(None)>"Reset zoom"</button>
            </div>
            {move || error.get().map(failed)}
            <div class="chart-wrap">
                <canvas
                    node_ref=canvas
                    class="chart"
                    tabindex="0"
                    data-testid="snap-chart"
                    on:mousemove=on_move
                    on:mouseleave=move |_| { hover.set(None); drag.set_value(None); }
                    on:wheel=on_wheel
                    on:mousedown=on_down
                    on:mouseup=on_up
                    on:keydown=on_key
                    on:dblclick=move |_| window.set(None)
                ></canvas>
                {tooltip}
            </div>
        </section>
    }
}

/// Axis label of a position.
pub(super) fn x_label(axis: SnapAxis, v: f64) -> String {
    match axis {
        SnapAxis::Index => format!("{v:.0}"),
        SnapAxis::Time => format::duration_ms(v),
    }
}

/// Draws the curve, the marks and the selection line.
fn draw(ctx: &CanvasRenderingContext2d, w: f64, h: f64, c: &SnapCurveDto, sel_x: Option<f64>) {
    let (ml, mr, mt, mb) = MARGIN;
    let (pw, ph) = (w - ml - mr, h - mt - mb);
    ctx.clear_rect(0.0, 0.0, w, h);
    let y_max = if c.y_max > 0.0 { c.y_max * 1.08 } else { 1.0 };
    let y_of = |v: f64| mt + ph - v / y_max * ph;
    let span = c.x1 - c.x0;
    let x_of = |v: f64| ml + (v - c.x0) / span * pw;
    ctx.set_font("11px system-ui, sans-serif");
    ctx.set_stroke_style_str("rgba(128,128,128,0.25)");
    ctx.set_fill_style_str("#888");
    ctx.set_line_width(1.0);
    // y grid in binary units.
    let ystep = format::binary_step(y_max / 5.0);
    let mut v = 0.0;
    while v <= y_max && ystep > 0.0 {
        let y = y_of(v);
        ctx.begin_path();
        ctx.move_to(ml, y);
        ctx.line_to(ml + pw, y);
        ctx.stroke();
        let _ = ctx.fill_text(&format::bytes(v), 2.0, y + 4.0);
        v += ystep;
    }
    if span > 0.0 {
        let xstep = format::nice_step(span / 8.0, format::StepRound::Nearest);
        let mut t = (c.x0 / xstep).ceil() * xstep;
        while t <= c.x1 {
            let x = x_of(t);
            ctx.begin_path();
            ctx.move_to(x, mt);
            ctx.line_to(x, mt + ph);
            ctx.stroke();
            let _ = ctx.fill_text(&x_label(c.axis, t), x - 14.0, h - 8.0);
            t += xstep;
        }
    }
    // Reserved first (back), then reserved − active, allocated last (front).
    for i in [2usize, 3, 1, 0] {
        let Some(s) = c.series.get(i) else { continue };
        ctx.set_stroke_style_str(SERIES_COLORS[i]);
        ctx.set_line_width(if i == 1 { 1.75 } else { 1.25 });
        stroke_min_max(ctx, &s.min, &s.max, ml, &y_of);
    }
    // Marks.
    let mut n_peak = 0;
    for m in &c.marks {
        if m.x < c.x0 || m.x > c.x1 || span <= 0.0 {
            if m.kind == "peak" || m.kind == "global_peak" {
                n_peak += 1;
            }
            continue;
        }
        let x = x_of(m.x);
        let y = y_of(m.bytes as f64);
        let (color, label, up) = match m.kind.as_str() {
            "global_peak" => {
                n_peak += 1;
                (
                    "#d6336c",
                    format!("P{n_peak} max {}", format::bytes(m.bytes as f64)),
                    true,
                )
            }
            "peak" => {
                n_peak += 1;
                ("#9b4dca", format!("P{n_peak}"), true)
            }
            "oom" => ("#b00020", "OOM".to_string(), false),
            _ => ("#888", "end".to_string(), true),
        };
        ctx.set_fill_style_str(color);
        ctx.begin_path();
        if up {
            ctx.move_to(x, y - 3.0);
            ctx.line_to(x - 5.0, y - 12.0);
            ctx.line_to(x + 5.0, y - 12.0);
        } else {
            ctx.move_to(x, y + 3.0);
            ctx.line_to(x - 5.0, y + 12.0);
            ctx.line_to(x + 5.0, y + 12.0);
        }
        ctx.close_path();
        ctx.fill();
        let ly = if up {
            (y - 15.0).max(mt + 10.0)
        } else {
            y + 24.0
        };
        let _ = ctx.fill_text(&label, (x + 6.0).min(w - 120.0), ly);
    }
    if let Some(sx) = sel_x.filter(|v| *v >= c.x0 && *v <= c.x1 && span > 0.0) {
        let x = x_of(sx);
        ctx.set_stroke_style_str("#111");
        ctx.set_line_width(1.0);
        let dash = js_sys::Array::new();
        dash.push(&3.into());
        dash.push(&3.into());
        let _ = ctx.set_line_dash(&dash);
        ctx.begin_path();
        ctx.move_to(x, mt);
        ctx.line_to(x, mt + ph);
        ctx.stroke();
        let _ = ctx.set_line_dash(&js_sys::Array::new());
    }
    ctx.set_stroke_style_str("#888");
    ctx.stroke_rect(ml, mt, pw, ph);
}

/// Narrowest window of the snapshot chart: 4 entries on the index axis, 1 µs on the time axis.
pub(super) fn min_span(axis: SnapAxis) -> f64 {
    match axis {
        SnapAxis::Index => 4.0,
        SnapAxis::Time => 1e-3,
    }
}
