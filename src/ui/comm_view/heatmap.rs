//! The link matrix heatmap (src × dst global ranks) of one step, group and op kind: the
//! worker sends one window at a time with its level of detail (`views::comm::matrix`: at
//! most [`MAX_BLOCKS`]² blocks with the mean, min, max and count of their links; a block is
//! coloured by its worst link: the lowest bandwidth, the longest time, the mean size), so
//! 1024 × 1024 ranks draw as fast as 16 × 16. Wheel zooms around the pointer, drag pans,
//! double-click resets. Links recovered from `parallel_group_info` are outlined (dashed),
//! ranks missing from the input are hatched; values are written in the cells when at most 16
//! ranks are visible. The hover names the cell or block with its values; `data-cells` on the
//! canvas holds the window's links (`src,dst,value;…`) when one link is one cell.

use std::sync::Arc;

use leptos::ev;
use leptos::html::Canvas;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::protocol::comm::{
    CommMatrixDto, CommMatrixQuery, CommMetric, CommOverviewDto, CommQuery, CommReply,
};
use crate::ui::client::client;
use crate::ui::route::{use_route, COMM_KIND, COMM_METRIC, COMM_WIN};
use crate::ui::widgets::chart::context;
use crate::ui::widgets::palette::palette;
use crate::views::comm_table::{block_ranks, cell_px, hit, labels_shown};
use crate::views::format;
use crate::views::heatmap::ramp;

/// Most blocks a side.
pub const MAX_BLOCKS: u32 = 128;
/// Plot margins, px: left (dst ranks), top, bottom (src ranks).
const MARGIN: (f64, f64, f64) = (64.0, 8.0, 36.0);
/// Largest plot side, px.
const PLOT_MAX: f64 = 520.0;

fn metric_of(s: &str) -> CommMetric {
    match s {
        "size" => CommMetric::Size,
        "time" => CommMetric::Time,
        _ => CommMetric::Bandwidth,
    }
}

fn unit(m: CommMetric) -> &'static str {
    match m {
        CommMetric::Bandwidth => "GB/s",
        CommMetric::Size => "MB",
        CommMetric::Time => "ms",
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
                    hover.set(None);
                    data.set(Some(m));
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
            draw(&c, &m, metric);
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
                <span class="muted">"Wheel to zoom, drag to pan, double-click to reset. Dashed outline: a link recovered from parallel_group_info; hatched: a rank missing from the input."</span>
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

/// The value a block is coloured by: its worst link, so a slow link is never averaged away
/// (the lowest bandwidth, the longest time; sizes: the mean). One link: its value.
fn shade(m: &CommMatrixDto, i: usize, metric: CommMetric) -> f64 {
    match metric {
        _ if m.block == 1 => m.mean[i],
        CommMetric::Bandwidth => m.min[i],
        CommMetric::Time => m.max[i],
        CommMetric::Size => m.mean[i],
    }
}

/// A cell's value: 4 decimals (MindStudio Insight's `ROUND(x, 4)`), 6 below 0.01 so a
/// small size is not shown as 0.0001.
fn value_text(v: f64) -> String {
    if v != 0.0 && v.abs() < 0.01 {
        format::fixed(v, 6)
    } else {
        format::fixed(v, 4)
    }
}

/// The plot's side for a canvas `w` px wide.
fn plot_side(w: f64) -> f64 {
    (w - MARGIN.0 - 8.0).clamp(40.0, PLOT_MAX)
}

/// The hover text of block `(col, row)`.
fn describe(m: &CommMatrixDto, col: u32, row: u32, metric: CommMetric) -> String {
    let i = (row * m.cols + col) as usize;
    let u = unit(metric);
    let (s, d) = (block_ranks(m, m.x0, col), block_ranks(m, m.y0, row));
    let range = |r: Option<(i64, i64)>| match r {
        Some((a, b)) if a == b => a.to_string(),
        Some((a, b)) => format!("{a}–{b}"),
        None => "?".into(),
    };
    let mut t = format!("rank {} → rank {}", range(s), range(d));
    if m.count[i] == 0 {
        t.push_str(" · no link");
    } else if m.block == 1 {
        if let Some((size, time, bw, tr)) = m.detail.get(i) {
            t.push_str(&format!(
                " · {tr} · size (MB) {} · time (ms) {} · bandwidth (GB/s) {}",
                format::fixed(*size, 6),
                format::fixed(*time, 5),
                format::fixed(*bw, 4)
            ));
        }
    } else {
        t.push_str(&format!(
            " · {} links · {u}: mean {} · min {} · max {}",
            m.count[i],
            format::fixed(m.mean[i], 4),
            format::fixed(m.min[i], 4),
            format::fixed(m.max[i], 4)
        ));
    }
    if m.recovered[i] > 0 {
        t.push_str(&format!(
            " · {} recovered from parallel_group_info",
            m.recovered[i]
        ));
    }
    if m.missing_cell[i] {
        t.push_str(" · a rank missing from the input");
    }
    t
}

/// Draws window `m` on `canvas`.
fn draw(canvas: &web_sys::HtmlCanvasElement, m: &CommMatrixDto, metric: CommMetric) {
    let Some((ctx, w, h)) = context(canvas) else {
        return;
    };
    let pal = palette();
    ctx.clear_rect(0.0, 0.0, w, h);
    let side = plot_side(w);
    let cell = cell_px(m, side, side);
    let (ml, mt, _) = MARGIN;
    let (lo, hi) = m.scale;
    let frac = |v: f64| {
        if hi > lo {
            ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
        } else {
            0.5
        }
    };
    let labels = labels_shown(m);
    ctx.set_font("11px system-ui, sans-serif");
    ctx.set_text_align("center");
    ctx.set_text_baseline("middle");
    for r in 0..m.rows {
        for c in 0..m.cols {
            let i = (r * m.cols + c) as usize;
            let (x, y) = (ml + c as f64 * cell, mt + r as f64 * cell);
            if m.missing_cell[i] {
                ctx.set_fill_style_str(&pal.grid);
                ctx.fill_rect(x, y, cell, cell);
                ctx.set_stroke_style_str(&pal.frame);
                ctx.save();
                ctx.begin_path();
                ctx.rect(x, y, cell, cell);
                ctx.clip();
                ctx.begin_path();
                let mut k = -cell;
                while k < cell {
                    ctx.move_to(x + k, y + cell);
                    ctx.line_to(x + k + cell, y);
                    k += 5.0;
                }
                ctx.stroke();
                ctx.restore();
            }
            if m.count[i] == 0 {
                continue;
            }
            let [rr, gg, bb] = ramp(frac(shade(m, i, metric)));
            ctx.set_fill_style_str(&format!("rgb({rr},{gg},{bb})"));
            let gap = if cell >= 6.0 { 1.0 } else { 0.0 };
            ctx.fill_rect(x, y, cell - gap, cell - gap);
            if m.recovered[i] > 0 && cell >= 4.0 {
                ctx.set_stroke_style_str(&pal.peak);
                ctx.set_line_width(if cell >= 12.0 { 2.0 } else { 1.0 });
                let _ = ctx.set_line_dash(&js_sys::Array::of2(&4.0.into(), &3.0.into()));
                ctx.stroke_rect(x + 1.5, y + 1.5, cell - 4.0, cell - 4.0);
                let _ = ctx.set_line_dash(&js_sys::Array::new());
                ctx.set_line_width(1.0);
            }
            if labels && cell >= 28.0 {
                let light = 0.299 * rr as f64 + 0.587 * gg as f64 + 0.114 * bb as f64 > 140.0;
                ctx.set_fill_style_str(if light { "#111" } else { "#fff" });
                let _ = ctx.fill_text(&value_text(m.mean[i]), x + cell / 2.0, y + cell / 2.0);
            }
        }
    }
    // axes: every rank when few are shown, else every few blocks' first rank; a rank missing
    // from the input is marked (its links, recovered from another rank's file, still show)
    let every = ((28.0 / cell.max(1e-9)).ceil() as u32).max(1);
    let missing = |start: u32, k: u32| {
        m.missing
            .iter()
            .any(|&p| p >= start + k * m.block && p < start + (k + 1) * m.block)
    };
    let label = |start: u32, k: u32| {
        let (a, _) = block_ranks(m, start, k)?;
        Some(match (m.block == 1, missing(start, k)) {
            (true, true) => (format!("{a} missing"), true),
            (_, miss) => (a.to_string(), miss),
        })
    };
    for k in (0..m.cols).step_by(every as usize) {
        if let Some((t, miss)) = label(m.x0, k) {
            ctx.set_fill_style_str(if miss { &pal.peak } else { &pal.text });
            let _ = ctx.fill_text(
                &t,
                ml + (k as f64 + 0.5) * cell,
                mt + m.rows as f64 * cell + 10.0,
            );
        }
    }
    ctx.set_text_align("right");
    for k in (0..m.rows).step_by(every as usize) {
        if let Some((t, miss)) = label(m.y0, k) {
            ctx.set_fill_style_str(if miss { &pal.peak } else { &pal.text });
            let _ = ctx.fill_text(&t, ml - 6.0, mt + (k as f64 + 0.5) * cell);
        }
    }
    ctx.set_fill_style_str(&pal.text);
    ctx.set_text_align("center");
    let _ = ctx.fill_text(
        &format!(
            "source rank →   (colour: {} {})",
            match metric {
                CommMetric::Bandwidth => "bandwidth",
                CommMetric::Size => "size",
                CommMetric::Time => "time",
            },
            unit(metric)
        ),
        ml + m.cols as f64 * cell / 2.0,
        mt + m.rows as f64 * cell + 26.0,
    );
    let _ = ctx.save();
    let _ = ctx.translate(12.0, mt + m.rows as f64 * cell / 2.0);
    let _ = ctx.rotate(-std::f64::consts::FRAC_PI_2);
    let _ = ctx.fill_text("destination rank →", 0.0, 0.0);
    ctx.restore();
    let _ = h;
}
