//! The link matrix heatmap (src × dst global ranks) of one step, group and op kind: the
//! worker sends one window at a time with its level of detail (`views::comm::matrix`: at
//! most [`MAX_BLOCKS`]² blocks with the mean, min, max and count of their links; a block is
//! coloured by its worst link: the lowest bandwidth, the longest time, the mean size), so
//! 1024 × 1024 ranks draw as fast as 16 × 16. Wheel zooms around the pointer, drag pans,
//! double-click resets; from the keyboard (the canvas is a tab stop) arrows move a cell shown
//! as the hover, panning at the window's edge, + and − zoom around it, Home resets. Links recovered from `parallel_group_info` are outlined (dashed),
//! ranks missing from the input are hatched; values are written in the cells when at most 16
//! ranks are visible. The hover names the cell or block with its values; `data-cells` on the
//! canvas holds the window's links (`src,dst,value;…`) when one link is one cell.

use std::sync::Arc;

use leptos::ev;
use leptos::html::Canvas;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::heatmap_draw::{cursor_hover, describe, draw, plot_side, unit, value_text};
use crate::protocol::comm::{
    CommMatrixDto, CommMatrixQuery, CommMetric, CommOverviewDto, CommQuery, CommReply,
};
use crate::ui::client::client;
use crate::ui::route::{use_route, COMM_KIND, COMM_METRIC, COMM_WIN};
use crate::views::comm_table::{cell_px, hit};
use crate::views::format;
use crate::views::heatmap::ramp;

/// Most blocks a side.
pub const MAX_BLOCKS: u32 = 128;
/// Plot margins, px: left (dst ranks), top, bottom (src ranks).
pub(super) const MARGIN: (f64, f64, f64) = (64.0, 8.0, 36.0);
/// Largest plot side, px.
pub(super) const PLOT_MAX: f64 = 520.0;

fn metric_of(s: &str) -> CommMetric {
    match s {
        "size" => CommMetric::Size,
        "time" => CommMetric::Time,
        _ => CommMetric::Bandwidth,
    }
}

/// `x0,y0,span` of the window signal (`None`: the whole axis).
fn parse_win(s: &str) -> Option<(u32, u32, u32)> {
    let mut it = s.split(',').map(|x| x.trim().parse::<u32>().ok());
    Some((it.next()??, it.next()??, it.next()??))
}

/// The matrix of the selected step and group.
#[component]
pub fn Matrix(
    view: Arc<CommOverviewDto>,
    step: RwSignal<String>,
    group: RwSignal<String>,
) -> impl IntoView {
    let route = use_route();
    let kind = RwSignal::new(String::new());
    let metric = RwSignal::new(String::new());
    let win = RwSignal::new(String::new());
    route.bind(COMM_KIND, kind);
    route.bind(COMM_METRIC, metric);
    route.bind(COMM_WIN, win);
    let canvas = NodeRef::<Canvas>::new();
    let data = RwSignal::new(None::<CommMatrixDto>);
    let error = RwSignal::new(None::<String>);
    let hover = RwSignal::new(None::<(f64, f64, String)>);
    // The keyboard's cell (column, row of the window), shown as the hover.
    let cursor = RwSignal::new(None::<(u32, u32)>);
    // The hover of the keyboard's cell, when it is inside the window shown.
    let cursor_text = move || {
        let (col, row) = cursor.get_untracked()?;
        let w = plot_side(canvas.get_untracked()?.client_width() as f64);
        let metric = metric_of(&metric.get_untracked());
        data.with_untracked(|m| {
            let m = m.as_ref()?;
            (col < m.cols && row < m.rows).then(|| cursor_hover(m, col, row, w, metric))
        })
    };
    let draw_ms = RwSignal::new(0.0f64);
    let dark = crate::ui::theme::use_theme().dark;
    let v = view.clone();
    let entry = move || {
        let (s, g) = (step.get(), group.get());
        v.matrices
            .iter()
            .find(|m| m.step == s && m.group == g)
            .cloned()
    };
    let kinds = {
        let entry = entry.clone();
        move || entry().map(|e| e.kinds).unwrap_or_default()
    };
    let axis_len = {
        let entry = entry.clone();
        move || entry().map_or(0, |e| e.axis_len)
    };
    // The window asked of the worker; a new step, group or kind keeps a window that fits.
    let query = {
        let kinds = kinds.clone();
        let axis_len = axis_len.clone();
        move || -> Option<CommMatrixQuery> {
            let ks = kinds();
            let k = kind.get();
            let k = if ks.contains(&k) {
                k
            } else {
                ks.first()?.clone()
            };
            let n = axis_len().max(1);
            let (x0, y0, span) = parse_win(&win.get()).unwrap_or((0, 0, n));
            let span = span.clamp(1, n);
            let side = canvas
                .get()
                .map_or(PLOT_MAX, |c| plot_side(c.client_width() as f64));
            Some(CommMatrixQuery {
                step: step.get(),
                group: group.get(),
                kind: k,
                metric: metric_of(&metric.get()),
                x0: x0.min(n - span),
                y0: y0.min(n - span),
                span,
                max_blocks: ((side / 4.0) as u32).clamp(1, MAX_BLOCKS),
            })
        }
    };
    Effect::new(move |_| {
        let Some(q) = query() else {
            data.set(None);
            return;
        };
        spawn_local(async move {
            match client().comm_query(CommQuery::Matrix(q)).await {
                Ok(CommReply::Matrix(m)) => {
                    error.set(None);
                    data.set(Some(m));
                    // The keyboard's cell stays shown over the new window (it moved with it).
                    hover.set(cursor_text());
                }
                Ok(_) => error.set(Some("unexpected reply".into())),
                Err(e) => error.set(Some(e)),
            }
        });
    });
    Effect::new(move |_| {
        dark.track();
        let m = data.get();
        let metric = metric_of(&metric.get_untracked());
        if let (Some(c), Some(m)) = (canvas.get(), m) {
            let t0 = now();
            draw(&c, &m, metric, cursor.get());
            draw_ms.set(now() - t0);
        }
    });
    // Wheel: zoom around the pointer; drag: pan; double-click: the whole axis.
    let drag = StoredValue::new(None::<(f64, f64, u32, u32)>);
    let win_of = move || {
        data.with_untracked(|m| {
            m.as_ref().map(|m| {
                (
                    m.x0,
                    m.y0,
                    m.block * m.cols.max(m.rows),
                    m.axis.len() as u32,
                    m.block,
                )
            })
        })
    };
    let side_of = move || {
        let c = canvas.get_untracked()?;
        let w = plot_side(c.client_width() as f64);
        data.with_untracked(|m| m.as_ref().map(|m| cell_px(m, w, w)))
    };
    let on_wheel = move |ev: ev::WheelEvent| {
        let (Some((x0, y0, span, n, block)), Some(cell)) = (win_of(), side_of()) else {
            return;
        };
        ev.prevent_default();
        let (px, py) = (
            ev.offset_x() as f64 - MARGIN.0,
            ev.offset_y() as f64 - MARGIN.1,
        );
        let at =
            |p: f64, o: u32| (o as f64 + (p / cell.max(1e-9)) * block as f64).clamp(0.0, n as f64);
        let (ax, ay) = (at(px, x0), at(py, y0));
        let f = if ev.delta_y() < 0.0 { 0.7 } else { 1.0 / 0.7 };
        let new = ((span as f64 * f).round() as u32).clamp(1, n.max(1));
        let keep = |a: f64, o: u32| -> u32 {
            let frac = (a - o as f64) / span.max(1) as f64;
            (a - frac * new as f64).round().clamp(0.0, (n - new) as f64) as u32
        };
        win.set(format!("{},{},{new}", keep(ax, x0), keep(ay, y0)));
    };
    let on_down = move |ev: ev::MouseEvent| {
        if let Some((x0, y0, _, _, _)) = win_of() {
            drag.set_value(Some((ev.client_x() as f64, ev.client_y() as f64, x0, y0)));
        }
    };
    let on_up = move |_| drag.set_value(None);
    let on_move = move |ev: ev::MouseEvent| {
        if let (Some((sx, sy, x0, y0)), Some((_, _, span, n, block)), Some(cell)) =
            (drag.get_value(), win_of(), side_of())
        {
            if ev.buttons() & 1 == 1 {
                let shift = |d: f64, o: u32| -> u32 {
                    let moved = (-d / cell.max(1e-9) * block as f64).round();
                    (o as f64 + moved).clamp(0.0, n.saturating_sub(span) as f64) as u32
                };
                let (nx, ny) = (
                    shift(ev.client_x() as f64 - sx, x0),
                    shift(ev.client_y() as f64 - sy, y0),
                );
                if (nx, ny) != (x0, y0) {
                    win.set(format!("{nx},{ny},{span}"));
                }
                return;
            }
        }
        let Some(c) = canvas.get_untracked() else {
            return;
        };
        let w = plot_side(c.client_width() as f64);
        let (x, y) = (ev.offset_x() as f64, ev.offset_y() as f64);
        let text = data.with_untracked(|m| {
            let m = m.as_ref()?;
            let (col, row) = hit(m, x - MARGIN.0, y - MARGIN.1, w, w)?;
            Some(describe(m, col, row, metric_of(&metric.get_untracked())))
        });
        hover.set(text.map(|t| (x, y, t)));
    };
    // Keyboard (the canvas is a tab stop): arrows move a cell cursor, shown as the hover
    // (at an edge they pan the window by a block); + and − zoom around it; Home shows the
    // whole matrix; Escape hides the cursor.
    let show_cursor = move |col: u32, row: u32| {
        cursor.set(Some((col, row)));
        hover.set(cursor_text());
    };
    let on_key = move |ev: ev::KeyboardEvent| {
        let (Some((x0, y0, span, n, block)), Some((cols, rows))) = (
            win_of(),
            data.with_untracked(|m| m.as_ref().map(|m| (m.cols, m.rows))),
        ) else {
            return;
        };
        let (col, row) = cursor.get_untracked().unwrap_or((0, 0));
        let (col, row) = (
            col.min(cols.saturating_sub(1)),
            row.min(rows.saturating_sub(1)),
        );
        let pan = |o: u32, d: i64| {
            (o as i64 + d * block as i64).clamp(0, n.saturating_sub(span) as i64) as u32
        };
        let mv = |c: u32, last: u32, d: i64| (c as i64 + d).clamp(0, last as i64) as u32;
        let step = |dc: i64, dr: i64| {
            let (nc, nr) = (
                mv(col, cols.saturating_sub(1), dc),
                mv(row, rows.saturating_sub(1), dr),
            );
            let (px, py) = (
                if nc == col && dc != 0 {
                    pan(x0, dc)
                } else {
                    x0
                },
                if nr == row && dr != 0 {
                    pan(y0, dr)
                } else {
                    y0
                },
            );
            if (px, py) != (x0, y0) {
                win.set(format!("{px},{py},{span}"));
            }
            show_cursor(nc, nr);
        };
        let zoom = |f: f64| {
            let new = ((span as f64 * f).round() as u32).clamp(1, n.max(1));
            let at = |o: u32, c: u32| o as f64 + (c as f64 + 0.5) * block as f64;
            let keep = |a: f64| (a - new as f64 / 2.0).round().clamp(0.0, (n - new) as f64) as u32;
            if new != span {
                cursor.set(None);
                win.set(format!("{},{},{new}", keep(at(x0, col)), keep(at(y0, row)),));
            }
        };
        match ev.key().as_str() {
            "ArrowLeft" => step(-1, 0),
            "ArrowRight" => step(1, 0),
            "ArrowUp" => step(0, -1),
            "ArrowDown" => step(0, 1),
            "+" | "=" => zoom(0.7),
            "-" | "_" => zoom(1.0 / 0.7),
            "Home" => {
                cursor.set(None);
                win.set(String::new());
            }
            "Escape" => {
                cursor.set(None);
                hover.set(None);
            }
            _ => return,
        }
        ev.prevent_default();
    };
    // No link of this step and group (no rank has communication_matrix.json for it): a line
    // saying so instead of an empty canvas.
    let no_links = {
        let kinds = kinds.clone();
        move || kinds().is_empty()
    };
    let no_links2 = no_links.clone();
    let kind_options = move || {
        let k = kind.get();
        let ks = kinds();
        let sel = if ks.contains(&k) {
            k
        } else {
            ks.first().cloned().unwrap_or_default()
        };
        ks.into_iter()
            .map(|x| {
                let s = x == sel;
                view! { <option value=x.clone() selected=s>{x.clone()}</option> }
            })
            .collect_view()
    };
    let radio = move |m: &'static str, label: &'static str| {
        view! {
            <label>
                <input type="radio" name="comm-metric" data-testid=format!("comm-metric-{m}")
                    prop:checked=move || metric_of(&metric.get()) == metric_of(m)
                    on:change=move |_| metric.set(if m == "bandwidth" { String::new() } else { m.to_string() })/>
                {label}
            </label>
        }
    };
    let cells_attr = move || {
        data.with(|m| {
            let m = m.as_ref()?;
            (m.block == 1).then(|| {
                let mut out = Vec::new();
                for r in 0..m.rows {
                    for c in 0..m.cols {
                        let i = (r * m.cols + c) as usize;
                        if m.count[i] > 0 {
                            let (src, dst) =
                                (m.axis[(m.x0 + c) as usize], m.axis[(m.y0 + r) as usize]);
                            out.push(format!("{src},{dst},{}", m.mean[i]));
                        }
                    }
                }
                out.join(";")
            })
        })
    };
    let caption = move || {
        data.with(|m| {
            m.as_ref().map(|m| {
                let (a, b) = (
                    m.axis.first().copied().unwrap_or(0),
                    m.axis.last().copied().unwrap_or(0),
                );
                let span = (m.block * m.cols).min(m.axis.len() as u32 - m.x0);
                format!(
                    "{} ranks on the axis ({a}–{b}), {span} shown a side, {}{}",
                    format::thousands(m.axis.len() as i64),
                    if m.block == 1 {
                        "one link a cell".to_string()
                    } else {
                        format!(
                            "{0}×{0} links a block, coloured by its {1}",
                            m.block,
                            match metric_of(&metric.get_untracked()) {
                                CommMetric::Bandwidth => "lowest bandwidth",
                                CommMetric::Time => "longest time",
                                CommMetric::Size => "mean size",
                            }
                        )
                    },
                    if m.missing.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " · {} rank(s) missing from the input (hatched)",
                            m.missing.len()
                        )
                    },
                )
            })
        })
    };
    view! {
        <section class="heatmap comm-matrix">
            <h3>"Link matrix (source rank → destination rank, global ranks)"</h3>
            {move || no_links().then(|| view! {
                <p class="muted" data-testid="comm-no-matrix">"No links for this step and group: no rank of the input holds a communication_matrix.json (or analysis.db matrix) entry for it."</p>
            })}
            <div style=move || if no_links2() { "display:none" } else { "" }>
            <div class="filters">
                <label>"Op kind "<select data-testid="comm-kind" on:change=move |ev| kind.set(event_target_value(&ev))>{kind_options}</select></label>
                {radio("bandwidth", " bandwidth GB/s")}
                {radio("size", " size MB")}
                {radio("time", " time ms")}
                <button class="button" data-testid="comm-matrix-reset" on:click=move |_| win.set(String::new())>"Whole matrix"</button>
                <span class="muted">"Wheel or + and − to zoom, drag or arrow keys to move, double-click or Home to reset. Dashed outline: a link recovered from parallel_group_info; hatched: a rank missing from the input."</span>
            </div>
            <div class="hm-wrap">
                <canvas
                    class="heatmap-canvas comm-canvas"
                    data-testid="comm-heatmap"
                    data-cells=cells_attr
                    data-block=move || data.with(|m| m.as_ref().map(|m| m.block.to_string()))
                    data-draw-ms=move || format!("{:.2}", draw_ms.get())
                    node_ref=canvas
                    style=format!("height:{}px", PLOT_MAX + MARGIN.1 + MARGIN.2)
                    on:wheel=on_wheel
                    on:mousedown=on_down
                    on:mouseup=on_up
                    on:mousemove=on_move
                    on:dblclick=move |_| win.set(String::new())
                    on:mouseleave=move |_| { hover.set(None); drag.set_value(None); }
                    tabindex="0"
                    aria-label="Communication matrix: arrow keys move between cells, + and − zoom, Home shows the whole matrix"
                    on:keydown=on_key
                    on:focus=move |_| { let (c, r) = cursor.get_untracked().unwrap_or((0, 0)); show_cursor(c, r); }
                    on:blur=move |_| { cursor.set(None); hover.set(None); }
                ></canvas>
                {move || hover.get().map(|(x, y, t)| view! {
                    <div class="hm-hover" data-testid="comm-heatmap-hover" style=format!("left:{}px;top:{}px", x + 12.0, y + 12.0)>{t}</div>
                })}
            </div>
            <p class="muted" data-testid="comm-matrix-caption">
                {move || data.with(|m| m.as_ref().map(|m| format!("{}: {} ", unit(metric_of(&metric.get())), value_text(m.scale.0))))}
                <span class="comm-legend" style=legend_css()></span>
                {move || data.with(|m| m.as_ref().map(|m| format!(" {} · ", value_text(m.scale.1))))}
                {caption}
            </p>
            {move || error.get().map(|e| view! { <p class="notice">{e}</p> })}
            </div>
        </section>
    }
}

/// The colour ramp as a CSS gradient.
fn legend_css() -> String {
    let stops: Vec<String> = (0..=8)
        .map(|i| {
            let [r, g, b] = ramp(i as f64 / 8.0);
            format!("rgb({r},{g},{b}) {}%", i * 100 / 8)
        })
        .collect();
    format!(
        "background: linear-gradient(to right, {})",
        stops.join(", ")
    )
}

fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}
