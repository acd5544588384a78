//! The memory chart of one allocator pool (PTA / GE / OTHER): its allocated / reserved /
//! active totals and the reconstructed live bytes of its rows over time, its peak marked. Hover shows time, values and the largest live
//! allocations; the wheel zooms around the cursor, a drag zooms to the selected range,
//! double-click, "Reset zoom" or the 0 key shows everything; when focused, W/S (↑/↓) zoom and
//! A/D (←/→) pan ([`crate::ui::widgets::zoom`]). The zoom window is kept in the URL hash
//! (`mem.x`). Curves are min/max per pixel column, computed in the worker for the visible window.

use crate::ui::widgets::note::failed;
use leptos::ev;
use leptos::html::Canvas;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::protocol::{CurveDto, LiveAtDto, MemoryQuery, MemoryReply};
use crate::ui::route::{use_route, MEM_X};
use crate::ui::theme::use_theme;
use crate::ui::widgets::chart::{self, plot_columns, MARGIN};
use crate::ui::widgets::palette::series_css;
use crate::ui::widgets::zoom;
use crate::views::format;

/// The chart of one rank and one allocator pool (`pool`: `None` = the rank's first pool);
/// `t0_ms` is shown as time 0.
#[component]
pub fn MemoryChart(rank: u32, t0_ms: f64, pool: RwSignal<Option<String>>) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let window = RwSignal::new(None::<(f64, f64)>);
    let curve = RwSignal::new(None::<CurveDto>);
    let error = RwSignal::new(None::<String>);
    let hover = RwSignal::new(None::<(f64, f64, usize)>); // (x px, t ms, column)
    let live = RwSignal::new(None::<LiveAtDto>);
    let drag = RwSignal::new(None::<(f64, f64)>);
    let generation = StoredValue::new(0u32);
    use_route().bind(MEM_X, window);
    let theme = use_theme();

    // Fetch the curve whenever the window changes (and once the canvas has a size).
    Effect::new(move |_| {
        let win = window.get();
        let pool = pool.get();
        let Some(c) = canvas.get() else { return };
        let width_px = plot_columns(c.client_width() as f64);
        generation.update_value(|g| *g += 1);
        let g = generation.get_value();
        spawn_local(async move {
            let req = MemoryQuery::Curve {
                rank,
                x_range: win,
                width_px,
                pool,
            };
            match super::query(req).await {
                // `try_`: the view may have been unmounted while the query ran.
                Ok(MemoryReply::Curve(c)) if generation.try_get_value() == Some(g) => {
                    error.set(None);
                    curve.set(Some(c));
                }
                Ok(MemoryReply::Curve(_)) => {}
                Ok(other) => error.set(Some(crate::ui::client::unexpected(
                    crate::ui::client::memory_reply_name(&other),
                ))),
                Err(e) => error.set(Some(e)),
            }
        });
    });
    // Redraw on new data, a drag band or a theme change.
    Effect::new(move |_| {
        theme.dark.track();
        let band = drag.get();
        curve.with(|c| {
            if let (Some(c), Some(el)) = (c, canvas.get()) {
                chart::draw(&el, c, t0_ms, band);
            }
        });
    });

    let x_to_t = move |x: f64| -> Option<(f64, usize)> {
        let c = curve.get_untracked()?;
        let el = canvas.get_untracked()?;
        let pw = el.client_width() as f64 - MARGIN.0 - MARGIN.1;
        let col = ((x - MARGIN.0).max(0.0).min(pw - 1.0)) as usize;
        let n = c.series.first().map(|s| s.min.len()).unwrap_or(0).max(1);
        let t = c.x0_ms + (col as f64 + 0.5) / n as f64 * (c.x1_ms - c.x0_ms);
        Some((t, col.min(n - 1)))
    };
    // At most one LiveAt in flight: mouse moves during a query only remember the latest time,
    // so a 1M-row live-set scan never queues up behind the pointer.
    let live_busy = StoredValue::new(false);
    let live_next = StoredValue::new(None::<f64>);
    let on_move = move |ev: ev::MouseEvent| {
        let x = ev.offset_x() as f64;
        if let Some((a, _)) = drag.get_untracked() {
            drag.set(Some((a, x)));
        }
        let Some((t, col)) = x_to_t(x) else { return };
        hover.set(Some((x, t, col)));
        if live_busy.get_value() {
            live_next.set_value(Some(t));
            return;
        }
        live_busy.set_value(true);
        spawn_local(async move {
            let mut t = t;
            loop {
                if let Ok(MemoryReply::LiveAt(l)) = super::query(MemoryQuery::LiveAt {
                    rank,
                    t_ms: t,
                    limit: 5,
                    pool: pool.get_untracked(),
                })
                .await
                {
                    live.set(Some(l));
                }
                match live_next.try_update_value(|n| n.take()).flatten() {
                    Some(next) => t = next,
                    None => break,
                }
            }
            // The view may be gone by now (rank switched): then there is nothing to reset.
            let _ = live_busy.try_set_value(false);
        });
    };
    let on_wheel = move |ev: ev::WheelEvent| {
        let factor = zoom::wheel_factor(&ev);
        let Some(c) = curve.get_untracked() else {
            return;
        };
        let Some((t, _)) = x_to_t(ev.offset_x() as f64) else {
            return;
        };
        window.set(zoom::zoom_around(
            (c.x0_ms, c.x1_ms),
            c.full_range_ms,
            t,
            factor,
            min_span(c.full_range_ms),
        ));
    };
    let on_key = move |ev: ev::KeyboardEvent| {
        let Some(c) = curve.get_untracked() else {
            return;
        };
        let shown = window.get_untracked().unwrap_or(c.full_range_ms);
        if let Some(w) = zoom::on_key(&ev, shown, c.full_range_ms, None, min_span(c.full_range_ms))
        {
            window.set(w);
        }
    };
    let on_down = move |ev: ev::MouseEvent| {
        let x = ev.offset_x() as f64;
        drag.set(Some((x, x)));
    };
    let on_up = move |_ev: ev::MouseEvent| {
        let Some((a, b)) = drag.get_untracked() else {
            return;
        };
        drag.set(None);
        if (a - b).abs() < 5.0 {
            return;
        }
        if let (Some((ta, _)), Some((tb, _))) = (x_to_t(a.min(b)), x_to_t(a.max(b))) {
            if tb > ta {
                window.set(Some((ta, tb)));
            }
        }
    };
    let tooltip = move || {
        let (x, t, col) = hover.get()?;
        let c = curve.get()?;
        let values = c
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let (lo, hi) = (s.min.get(col).copied()?, s.max.get(col).copied()?);
                let v = if (hi - lo).abs() < 1e-9 {
                    format::mib(hi)
                } else {
                    format!("{} – {}", format::mib(lo), format::mib(hi))
                };
                Some(view! {
                    <div><span class="swatch" style=format!("background:{}", series_css(i))></span>{format!("{}: {v}", s.name)}</div>
                })
            })
            .collect_view();
        let largest = live.get().map(|l| {
            let rows = l
                .largest
                .into_iter()
                .map(|r| {
                    let site = if r.user_frame.is_empty() { r.call_stack_top.clone() } else { r.user_frame.clone() };
                    view! { <li>{format!("{} {} ", format::kib(r.size_kb), r.name)}<code>{site}</code></li> }
                })
                .collect_view();
            view! {
                <div class="muted">{format!("{} live rows of {}, {}", l.live_rows, l.pool.clone().unwrap_or_default(), format::mib(l.live_mb))}</div>
                <ol class="live">{rows}</ol>
            }
        });
        Some(view! {
            <div class="tooltip" data-testid="chart-tooltip" style=format!("left:{}px", (x + 16.0).min(700.0))>
                <div><b>{format::offset_ms(t, t0_ms)}</b></div>
                {values}
                {largest}
            </div>
        })
    };
    let legend = move || {
        curve.with(|c| {
            c.as_ref().map(|c| {
                c.series
                    .iter()
                    .enumerate()
                    .map(|(i, s)| view! {
                        <span class="legend-item"><span class="swatch" style=format!("background:{}", series_css(i))></span>{s.name.clone()}</span>
                    })
                    .collect_view()
            })
        })
    };
    view! {
        <section class="chart-box">
            <div class="chart-bar">
                <span class="legend" data-testid="chart-legend">{legend}</span>
                <span class="muted">{move || curve.with(|c| c.as_ref().map(|c| format!("{} samples · wheel or W/S to zoom, A/D to pan, drag to select, double-click or 0 to reset", c.samples)))}</span>
                <button class="button" data-testid="reset-zoom" on:click=move |_| window.set(None)>"Reset zoom"</button>
            </div>
            {move || error.get().map(failed)}
            <div class="chart-wrap">
                <canvas
                    node_ref=canvas
                    class="chart"
                    data-testid="memory-chart"
                    tabindex="0"
                    role="img"
                    aria-label="Memory over time. Keys: W or up zooms in, S or down zooms out, A or left and D or right pan, 0 resets."
                    data-x0=move || curve.with(|c| c.as_ref().map(|c| c.x0_ms.to_string()))
                    data-x1=move || curve.with(|c| c.as_ref().map(|c| c.x1_ms.to_string()))
                    data-zoomed=move || window.get().is_some().to_string()
                    on:keydown=on_key
                    on:mousemove=on_move
                    on:mouseleave=move |_| { hover.set(None); drag.set(None); }
                    on:wheel=on_wheel
                    on:mousedown=on_down
                    on:mouseup=on_up
                    on:dblclick=move |_| window.set(None)
                ></canvas>
                {tooltip}
            </div>
        </section>
    }
}

/// Narrowest window of the memory chart: a millionth of the full range.
fn min_span(full: (f64, f64)) -> f64 {
    (full.1 - full.0) * zoom::MIN_FRACTION
}
