//! The Active Memory Timeline (MemoryViz's stacked per-allocation chart, torch-snapshot.md
//! §6.1), below the curves and sharing their window and axis: one band per allocation, stacked
//! in allocation order, the small ones in a grey summarised band on top. The layout comes from
//! the worker (`SnapQuery::Bands`, `views::snapshot_bands`) for the current window at the
//! canvas' pixel density; every frame re-projects the last layout through the current window
//! into one `ImageData` (cost per frame: the plot's pixels, whatever the number of entries),
//! so panning never waits for the worker. At most one request is in flight; the newest wins.
//!
//! Hover a band: its size, address, site and call stack (Python frames); click it: the live set
//! there is selected (curves, live panel) and its stack shown in the stack panel.

use std::collections::HashMap;

use crate::ui::widgets::note::failed;
use leptos::ev;
use leptos::html::Canvas;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::Clamped;
use web_sys::{CanvasRenderingContext2d, ImageData};

use crate::protocol::{SnapAxis, SnapBandsDto, SnapBandsQuery, SnapQuery, SnapReply, SnapStackDto};
use crate::ui::widgets::chart::MARGIN;
use crate::ui::widgets::zoom::{self, PanDrag};
use crate::views::band_grid::{column_at, BandGrid, SUMMARISED};
use crate::views::format;

use super::chart::{min_span, x_label};
use super::{snap, Selected};

/// Plot height, CSS px.
const PLOT_H: f64 = 260.0;
/// Band colours (Tableau 10, as MemoryViz), by record id.
const COLORS: [[u8; 3]; 10] = [
    [78, 121, 167],
    [242, 142, 43],
    [225, 87, 89],
    [118, 183, 178],
    [89, 161, 79],
    [237, 201, 72],
    [176, 122, 161],
    [255, 157, 167],
    [156, 117, 95],
    [186, 176, 172],
];
const SUMMARISED_RGB: [u8; 3] = [200, 200, 200];

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// What is under the pointer.
#[derive(Clone, Debug, PartialEq)]
struct Hover {
    x: f64,
    y: f64,
    /// Band index into the layout, or SUMMARISED.
    band: u32,
    col: usize,
}

/// The stacked chart of device slot `dslot` of snapshot `target`.
#[component]
pub fn ActiveTimeline(
    target: u32,
    dslot: u32,
    axis: RwSignal<SnapAxis>,
    window: RwSignal<Option<(f64, f64)>>,
    /// The entry whose live set is shown: (index, time ms), drawn as a line.
    shown: Signal<Option<(u32, Option<f64>)>>,
    selected: RwSignal<Option<Selected>>,
    /// The record shown in the stack panel.
    pick: RwSignal<Option<u32>>,
) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let layout = StoredValue::new(None::<(SnapBandsDto, BandGrid)>);
    let version = RwSignal::new(0u32);
    let hover = RwSignal::new(None::<Hover>);
    let error = RwSignal::new(None::<String>);
    let busy = StoredValue::new(false);
    let pending = StoredValue::new(None::<SnapBandsQuery>);
    let frame_scheduled = StoredValue::new(false);
    let draw_ms = RwSignal::new(0.0f64);
    let drag = StoredValue::new(None::<PanDrag>);
    let stacks = StoredValue::new(HashMap::<u32, SnapStackDto>::new());
    let stack_version = RwSignal::new(0u32);

    let dpr = move || {
        web_sys::window()
            .map(|w| w.device_pixel_ratio())
            .unwrap_or(1.0)
    };
    let plot_w = move || {
        canvas
            .get_untracked()
            .map(|el| el.client_width() as f64 - MARGIN.0 - MARGIN.1)
            .unwrap_or(0.0)
            .max(1.0)
    };
    // The window shown: the shared window, else the layout's full range.
    let current = move || -> Option<((f64, f64), (f64, f64))> {
        let full = layout.with_value(|l| l.as_ref().map(|(d, _)| d.full))?;
        Some((window.get_untracked().unwrap_or(full), full))
    };

    let fetch = move |q: SnapBandsQuery| {
        if busy.get_value() {
            pending.set_value(Some(q));
            return;
        }
        busy.set_value(true);
        spawn_local(async move {
            let mut q = q;
            loop {
                match snap(SnapQuery::Bands(q)).await {
                    Ok(SnapReply::Bands(d)) => {
                        let g = BandGrid::new(&d);
                        if layout.try_set_value(Some((d, g))).is_some() {
                            return;
                        }
                        let _ = error.try_set(None);
                        let _ = version.try_update(|v| *v += 1);
                    }
                    Ok(other) => {
                        let _ = error.try_set(Some(crate::ui::client::unexpected(
                            crate::ui::client::snap_reply_name(&other),
                        )));
                    }
                    Err(e) => {
                        let _ = error.try_set(Some(e));
                    }
                }
                match pending.try_update_value(|p| p.take()).flatten() {
                    Some(next) => q = next,
                    None => break,
                }
            }
            let _ = busy.try_set_value(false);
        });
    };
    Effect::new(move |_| {
        let (a, win) = (axis.get(), window.get());
        let r = dpr();
        let w = canvas
            .get()
            .map(|el| el.client_width() as f64)
            .unwrap_or(0.0);
        let pw = if w > 0.0 {
            w - MARGIN.0 - MARGIN.1
        } else {
            1000.0
        };
        fetch(SnapBandsQuery {
            target,
            slot: dslot,
            axis: a,
            range: win,
            width_px: (pw * r).round().clamp(10.0, 8192.0) as u32,
            height_px: ((PLOT_H - MARGIN.2 - MARGIN.3) * r).round() as u32,
        });
    });

    let redraw = move || {
        if frame_scheduled.get_value() {
            return;
        }
        frame_scheduled.set_value(true);
        request_animation_frame(move || {
            if frame_scheduled.try_get_value().is_none() {
                return;
            }
            frame_scheduled.set_value(false);
            let (Some(el), Some((view, _))) = (canvas.get_untracked(), current()) else {
                return;
            };
            let t0 = now_ms();
            let hot = hover.with_untracked(|h| h.as_ref().map(|h| h.band));
            let picked = pick.get_untracked();
            let sel = shown.get_untracked();
            layout.with_value(|l| {
                if let Some((d, g)) = l {
                    draw(&el, d, g, view, hot, picked, sel);
                }
            });
            let _ = draw_ms.try_set(now_ms() - t0);
        });
    };
    Effect::new(move |_| {
        version.track();
        window.track();
        hover.track();
        pick.track();
        shown.track();
        redraw();
    });

    // Pointer → (axis position, layout column, bytes).
    let locate = move |x: f64, y: f64| -> Option<(f64, Option<usize>, f64)> {
        let ((v0, v1), _) = current()?;
        let pw = plot_w();
        let v = v0 + (x - MARGIN.0).clamp(0.0, pw) / pw * (v1 - v0);
        layout.with_value(|l| {
            let (d, _) = l.as_ref()?;
            let ph = PLOT_H - MARGIN.2 - MARGIN.3;
            let y_max = y_scale(d.y_max);
            let bytes = (MARGIN.2 + ph - y) / ph * y_max;
            Some((v, column_at(d.x0, d.x1, d.reps.len(), v), bytes))
        })
    };
    let set_window = move |w: Option<(f64, f64)>| {
        let Some((_, full)) = current() else { return };
        window.set(w.filter(|w| *w != full));
    };
    let on_wheel = move |ev: ev::WheelEvent| {
        let f = zoom::wheel_factor(&ev);
        let (Some((v, _, _)), Some((cur, full))) = (
            locate(ev.offset_x() as f64, ev.offset_y() as f64),
            current(),
        ) else {
            return;
        };
        set_window(zoom::zoom_around(
            cur,
            full,
            v,
            f,
            min_span(axis.get_untracked()),
        ));
    };
    let on_down = move |ev: ev::MouseEvent| {
        if let Some((cur, _)) = current() {
            drag.set_value(Some(PanDrag::start(ev.offset_x() as f64, cur)));
        }
    };
    let on_move = move |ev: ev::MouseEvent| {
        let (x, y) = (ev.offset_x() as f64, ev.offset_y() as f64);
        if let Some(mut d) = drag.get_value() {
            if d.follow(x).is_some() {
                drag.set_value(Some(d));
                if let Some((_, full)) = current() {
                    set_window(zoom::pan(
                        d.from,
                        full,
                        d.shift(x, plot_w()),
                        min_span(axis.get_untracked()),
                    ));
                }
                return;
            }
        }
        let h = locate(x, y).and_then(|(_, col, bytes)| {
            let col = col?;
            let band = layout.with_value(|l| l.as_ref().and_then(|(_, g)| g.at(col, bytes)))?;
            Some(Hover { x, y, band, col })
        });
        hover.set(h);
    };
    // The stack of the hovered band, asked once per record.
    Effect::new(move |_| {
        let Some(h) = hover.get() else { return };
        let Some(record) = layout.with_value(|l| {
            l.as_ref()
                .and_then(|(d, _)| d.bands.get(h.band as usize))
                .map(|b| b.record)
        }) else {
            return;
        };
        if stacks.with_value(|s| s.contains_key(&record)) {
            return;
        }
        spawn_local(async move {
            if let Ok(SnapReply::Stack(s)) = snap(SnapQuery::Stack {
                target,
                slot: dslot,
                record,
            })
            .await
            {
                let _ = stacks.try_update_value(|m| m.insert(record, s));
                let _ = stack_version.try_update(|v| *v += 1);
            }
        });
    });
    let on_up = move |ev: ev::MouseEvent| {
        let Some(d) = drag.get_value() else {
            return;
        };
        drag.set_value(None);
        if d.moved {
            return;
        }
        let Some((v, col, bytes)) = locate(ev.offset_x() as f64, ev.offset_y() as f64) else {
            return;
        };
        let hit = col.and_then(|c| {
            layout.with_value(|l| {
                let (d, g) = l.as_ref()?;
                let b = g.at(c, bytes)?;
                let rep = *d.reps.get(c)?;
                Some((d.bands.get(b as usize).map(|b| b.record), rep))
            })
        });
        match hit {
            Some((record, rep)) if rep >= 0 => {
                if record.is_some() {
                    pick.set(record);
                }
                selected.set(Some(Selected::entry(rep as u32)));
            }
            _ => selected.set(Some(Selected::at(axis.get_untracked(), v))),
        }
    };
    let on_key = move |ev: ev::KeyboardEvent| {
        let Some((cur, full)) = current() else { return };
        if let Some(w) = zoom::on_key(&ev, cur, full, None, min_span(axis.get_untracked())) {
            set_window(w);
        }
    };

    let tooltip = move || {
        let h = hover.get()?;
        stack_version.track();
        let lines: Vec<(String, &'static str)> = layout.with_value(|l| {
            let (d, g) = l.as_ref()?;
            let mut lines = Vec::new();
            if h.band == SUMMARISED {
                let bytes = g
                    .cells(h.col)
                    .find(|c| c.0 == SUMMARISED)
                    .map(|c| c.2 - c.1)
                    .unwrap_or(0.0);
                lines.push((
                    format!("{} in small allocations (summarised)", format::bytes(bytes)),
                    "head",
                ));
                lines.push((
                    format!(
                        "{} allocations under {} each are drawn as this band",
                        d.summarised_records,
                        format::bytes(d.min_band_bytes as f64)
                    ),
                    "muted",
                ));
                return Some(lines);
            }
            let b = d.bands.get(h.band as usize)?;
            lines.push((
                format!("{} ({} bytes)", format::bytes(b.bytes as f64), b.bytes),
                "head",
            ));
            lines.push((
                format!("address {} · MemoryViz {}", b.addr, b.memoryviz_name),
                "muted",
            ));
            lines.push((
                match b.alloc_index {
                    Some(i) => format!("allocated at entry {i}"),
                    None => "allocated before the recording started".to_string(),
                },
                "muted",
            ));
            lines.push((format::site_label(&b.site), "site"));
            match stacks.with_value(|s| s.get(&b.record).cloned()) {
                Some(s) => {
                    let py: Vec<_> = s.frames.iter().filter(|f| !f.native).collect();
                    let hidden = s.frames.len() - py.len();
                    for f in py.iter().take(10) {
                        lines.push((
                            f.label.clone(),
                            if f.project { "frame user" } else { "frame" },
                        ));
                    }
                    if py.len() > 10 {
                        lines.push((format!("… {} more Python frames", py.len() - 10), "muted"));
                    }
                    if hidden > 0 {
                        lines.push((format!("{hidden} C++ frames hidden"), "muted"));
                    }
                    if s.frames.is_empty() {
                        lines.push(("no stack recorded".into(), "muted"));
                    }
                }
                None => lines.push(("stack…".into(), "muted")),
            }
            Some(lines)
        })?;
        let left = (h.x + 16.0).min(plot_w() + MARGIN.0 - 300.0).max(0.0);
        Some(view! {
            <div class="tooltip band-tooltip" data-testid="band-tooltip" style=format!("left:{left}px;top:{}px", h.y + 14.0)>
                {lines.into_iter().map(|(t, c)| view! { <div class=c>{t}</div> }).collect_view()}
                <div class="muted">"click: select it and what is live there"</div>
            </div>
        })
    };
    let info = move || {
        version.track();
        layout.with_value(|l| {
            l.as_ref().map(|(d, _)| {
                format!(
                    "{} allocations drawn, {} summarised (under {}) · {} entries in view · frame {:.1} ms",
                    d.bands.len(),
                    d.summarised_records,
                    format::bytes(d.min_band_bytes as f64),
                    d.entries_in_window,
                    draw_ms.get()
                )
            })
        })
    };
    view! {
        <section class="chart-box" data-testid="bands-box">
            <div class="chart-bar">
                <b>"Active memory timeline"</b>
                <span class="muted">" one band per live allocation, stacked in allocation order; hover for size and stack, click to select"</span>
                <span class="muted" data-testid="bands-info">{info}</span>
            </div>
            {move || error.get().map(failed)}
            <div class="chart-wrap">
                <canvas
                    node_ref=canvas
                    class="chart bands"
                    style=format!("height:{PLOT_H}px")
                    tabindex="0"
                    data-testid="bands-canvas"
                    data-draw-ms=move || format!("{:.3}", draw_ms.get())
                    data-bands=move || { version.track(); layout.with_value(|l| l.as_ref().map(|(d, _)| d.bands.len()).unwrap_or(0)) }
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

/// Top of the y axis for a layout whose tallest column is `y_max` bytes.
fn y_scale(y_max: f64) -> f64 {
    if y_max > 0.0 {
        y_max * 1.05
    } else {
        1.0
    }
}

/// Draws layout `d` re-projected onto window `view`: the bands into one image (one pass over
/// the plot's device pixels), then the axes. `hot` (hovered) and `picked` bands are lighter.
fn draw(
    el: &web_sys::HtmlCanvasElement,
    d: &SnapBandsDto,
    g: &BandGrid,
    view: (f64, f64),
    hot: Option<u32>,
    picked: Option<u32>,
    sel: Option<(u32, Option<f64>)>,
) {
    let Some((ctx, w, h)) = crate::ui::widgets::chart::context(el) else {
        return;
    };
    let r = web_sys::window()
        .map(|w| w.device_pixel_ratio())
        .unwrap_or(1.0);
    let (ml, mr, mt, mb) = MARGIN;
    let (pw, ph) = (w - ml - mr, h - mt - mb);
    let (iw, ih) = (
        (pw * r).round().max(1.0) as usize,
        (ph * r).round().max(1.0) as usize,
    );
    let y_max = y_scale(d.y_max);
    let span = view.1 - view.0;
    let mut px = vec![0u8; iw * ih * 4];
    let picked_band = picked.and_then(|p| d.bands.iter().position(|b| b.record == p));
    for x in 0..iw {
        let v = view.0 + (x as f64 + 0.5) / iw as f64 * span;
        let Some(col) = column_at(d.x0, d.x1, g.cols, v) else {
            continue;
        };
        for (band, lo, hi) in g.cells(col) {
            let rgb = if band == SUMMARISED {
                SUMMARISED_RGB
            } else {
                COLORS[d.bands[band as usize].record as usize % COLORS.len()]
            };
            let lit = Some(band) == hot || Some(band as usize) == picked_band;
            let y_top = ((1.0 - hi / y_max) * ih as f64).round().max(0.0) as usize;
            let y_bot = ((1.0 - lo / y_max) * ih as f64).round().min(ih as f64) as usize;
            for y in y_top..y_bot {
                let k = (y * iw + x) * 4;
                // A band's top pixel row is darker, so neighbours stay apart.
                let edge = y == y_top && y_bot - y_top > 2;
                for (c, &v) in rgb.iter().enumerate() {
                    px[k + c] = if lit {
                        v / 2 + 127
                    } else if edge {
                        (v as u16 * 3 / 4) as u8
                    } else {
                        v
                    };
                }
                px[k + 3] = 255;
            }
        }
    }
    ctx.clear_rect(0.0, 0.0, w, h);
    if let Ok(img) = ImageData::new_with_u8_clamped_array_and_sh(Clamped(&px), iw as u32, ih as u32)
    {
        let _ = ctx.put_image_data(&img, (ml * r).round(), (mt * r).round());
    }
    axes(&ctx, w, h, y_max, view, d.axis, sel);
}

/// The y grid in binary units, the x ticks, the selection line and the frame.
fn axes(
    ctx: &CanvasRenderingContext2d,
    w: f64,
    h: f64,
    y_max: f64,
    view: (f64, f64),
    axis: SnapAxis,
    sel: Option<(u32, Option<f64>)>,
) {
    let (ml, mr, mt, mb) = MARGIN;
    let (pw, ph) = (w - ml - mr, h - mt - mb);
    let pal = crate::ui::widgets::palette::palette();
    ctx.set_font("11px system-ui, sans-serif");
    ctx.set_fill_style_str(&pal.text);
    ctx.set_stroke_style_str(&pal.grid);
    ctx.set_line_width(1.0);
    let ystep = format::binary_step(y_max / 4.0);
    let mut v = 0.0;
    while v <= y_max && ystep > 0.0 {
        let y = mt + ph - v / y_max * ph;
        ctx.begin_path();
        ctx.move_to(ml - 4.0, y);
        ctx.line_to(ml, y);
        ctx.stroke();
        let _ = ctx.fill_text(&format::bytes(v), 2.0, y + 4.0);
        v += ystep;
    }
    let span = view.1 - view.0;
    if span > 0.0 {
        let xstep = format::nice_step(span / 8.0, format::StepRound::Nearest);
        let mut t = (view.0 / xstep).ceil() * xstep;
        while t <= view.1 {
            let x = ml + (t - view.0) / span * pw;
            let _ = ctx.fill_text(&x_label(axis, t), x - 14.0, h - 8.0);
            t += xstep;
        }
    }
    let sel_x = sel.and_then(|(index, time_ms)| match axis {
        SnapAxis::Index => Some(index as f64),
        SnapAxis::Time => time_ms,
    });
    if let Some(sx) = sel_x.filter(|v| *v >= view.0 && *v <= view.1 && span > 0.0) {
        let x = ml + (sx - view.0) / span * pw;
        ctx.set_stroke_style_str(&pal.text);
        ctx.begin_path();
        ctx.move_to(x, mt);
        ctx.line_to(x, mt + ph);
        ctx.stroke();
    }
    ctx.set_stroke_style_str("#888");
    ctx.stroke_rect(ml, mt, pw, ph);
}
