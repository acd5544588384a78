//! `<Timeline rank/>`: the canvas timeline of the steps/bubbles view (issue 3). One lane per
//! device stream and host thread, step shading, bubbles coloured by their first soft label,
//! a time ruler. Wheel zooms around the cursor, drag pans, the page's chart keys
//! (`widgets::zoom`: W/S or ↑/↓ zoom around the pointer, A/D or ←/→ pan, 0/Home), double-click
//! or "Reset" fits everything. Clicking a bubble selects it
//! (`AppState::anomaly_bubble`, shared with the bubble list and panel); clicking a box asks
//! the worker for the kernel or host event under the pointer (`AnomalyQuery::KernelAt`).
//!
//! The worker merges items closer than a pixel (`AnomalyQuery::Timeline`, views::timeline) for a
//! window half a view wider on each side; at most one request is in flight (the latest view
//! wins) and every frame re-projects the last boxes through the current view, so panning and
//! zooming never wait for the worker. Frames are coalesced with `requestAnimationFrame`.

use leptos::ev;
use leptos::html::Canvas;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::timeline_draw::{
    self as draw, Found, Geom, Marks, XMap, BUBBLE_ROW, CLASS_COLORS, LABEL_W_RANGE, LANE_H_RANGE,
    RIGHT, STEP_ROW,
};
use crate::protocol::{
    AnomalyQuery, AnomalyReply, TimelineDto, TimelineItemDto, TimelineSearchDto,
};
use crate::ui::state::AppState;
use crate::views::format;
use crate::views::timeline_axis::{
    box_at, bubble_at, clamp_view, pan, zoom, LABEL_COLORS, MIN_SPAN_MS,
};
use crate::views::zoom::{apply, zoom_key};

/// Hover tooltip: position (CSS px) and lines.
#[derive(Clone, Debug, PartialEq)]
struct Hover {
    x: f64,
    y: f64,
    lines: Vec<String>,
}

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// The timeline of rank folder `rank`.
#[component]
pub fn Timeline(
    /// Rank folder index.
    rank: u32,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let canvas = NodeRef::<Canvas>::new();
    let dto = RwSignal::new(None::<TimelineDto>);
    // Visible window (relative ms); None = everything.
    let view = RwSignal::new(None::<(f64, f64)>);
    // Kept in the URL hash (`tl.x=rank:a,b`), so a reload + re-drop or a link restores it.
    crate::ui::route::use_route().bind_scoped(crate::ui::route::TL_X, rank, view);
    let item = RwSignal::new(None::<TimelineItemDto>);
    let hover = RwSignal::new(None::<Hover>);
    let error = RwSignal::new(None::<String>);
    let drag = StoredValue::new(None::<(f64, (f64, f64), bool)>); // (x at down, view at down, moved)
    let last_t = StoredValue::new(None::<f64>);
    let busy = StoredValue::new(false);
    let pending = StoredValue::new(None::<(Option<(f64, f64)>, u32)>);
    let frame_scheduled = StoredValue::new(false);
    let draw_ms = RwSignal::new(0.0f64);
    let boxes_drawn = RwSignal::new(0usize);
    let geom = RwSignal::new(Geom::default());
    // Dragging the gutter's edge: (x at down, label width at down).
    let gutter_drag = StoredValue::new(None::<(f64, f64)>);
    // Dragging the resize handle: (client y at down, lane height at down).
    let resize_drag = StoredValue::new(None::<(f64, f64)>);
    let found = RwSignal::new(None::<TimelineSearchDto>);
    let found_boxes = StoredValue::new(Vec::<(u32, f64, f64)>::new());
    let cur = RwSignal::new(None::<usize>);
    let search_text = RwSignal::new(String::new());

    let current = move || -> Option<(f64, f64)> {
        let full = dto.with_untracked(|d| d.as_ref().map(|d| d.full_range_ms))?;
        Some(view.get_untracked().map_or(full, |v| clamp_view(v, full)))
    };
    let width_of = move || {
        canvas
            .get_untracked()
            .map(|c| c.client_width() as f64)
            .unwrap_or(0.0)
    };

    // The worker: one request in flight, the newest wish waits in `pending`.
    let fetch = move |want: Option<(f64, f64)>, width_px: u32| {
        if busy.get_value() {
            pending.set_value(Some((want, width_px)));
            return;
        }
        busy.set_value(true);
        spawn_local(async move {
            let (mut want, mut width_px) = (want, width_px);
            loop {
                let req = AnomalyQuery::Timeline {
                    rank,
                    x_range_ms: want,
                    width_px,
                };
                match super::ask(req).await {
                    Ok(AnomalyReply::Timeline(d)) => {
                        let _ = error.try_set(None);
                        let _ = dto.try_set(Some(d));
                    }
                    Ok(other) => {
                        let _ = error.try_set(Some(format!("unexpected reply {other:?}")));
                    }
                    Err(e) => {
                        let _ = error.try_set(Some(e));
                    }
                }
                match pending.try_update_value(|p| p.take()).flatten() {
                    Some((w, px)) => (want, width_px) = (w, px),
                    None => break,
                }
            }
            let _ = busy.try_set_value(false);
        });
    };
    // Ask for the view plus half a view on each side, at the view's pixel density.
    Effect::new(move |_| {
        let v = view.get();
        let w = width_of();
        if w <= 0.0 {
            // Not laid out yet: the first request asks for everything at a default width.
            fetch(None, 1200);
            return;
        }
        let pw = (w - geom.get().label_w - RIGHT).max(10.0);
        let full = dto.with_untracked(|d| d.as_ref().map(|d| d.full_range_ms));
        match (v, full) {
            (Some(v), Some(full)) => {
                let v = clamp_view(v, full);
                let span = v.1 - v.0;
                let want = clamp_view((v.0 - span / 2.0, v.1 + span / 2.0), full);
                let px = (pw * (want.1 - want.0) / span)
                    .round()
                    .clamp(10.0, 20_000.0) as u32;
                fetch(Some(want), px);
            }
            _ => fetch(None, pw as u32),
        }
    });

    // Drawing, coalesced to one frame.
    let redraw = move || {
        if frame_scheduled.get_value() {
            return;
        }
        frame_scheduled.set_value(true);
        request_animation_frame(move || {
            // The timeline may have been unmounted (another rank chosen) before this frame:
            // its signals are disposed then, and reading them would panic.
            if frame_scheduled.try_get_value().is_none() {
                return;
            }
            frame_scheduled.set_value(false);
            let (Some(el), Some(v)) = (canvas.get_untracked(), current()) else {
                return;
            };
            let marks = Marks {
                bubble: state.anomaly_bubble.get_untracked(),
                step: state.anomaly_step.get_untracked(),
                item: item.with_untracked(|i| {
                    i.as_ref()
                        .map(|i| (i.lane, i.start_ms, i.start_ms + i.dur_us / 1e3))
                }),
            };
            let t0 = now_ms();
            let g = geom.get_untracked();
            let current = cur.get_untracked();
            let n = found_boxes.with_value(|m| {
                let f = Found {
                    matches: m,
                    current,
                };
                dto.with_untracked(|d| {
                    d.as_ref()
                        .map(|d| draw::draw(&el, d, v, marks, g, f))
                        .unwrap_or(0)
                })
            });
            let _ = draw_ms.try_set(now_ms() - t0);
            let _ = boxes_drawn.try_set(n);
        });
    };
    Effect::new(move |_| {
        dto.track();
        view.track();
        item.track();
        geom.track();
        found.track();
        cur.track();
        state.anomaly_bubble.track();
        state.anomaly_step.track();
        redraw();
    });

    let set_view = move |v: (f64, f64)| {
        if let Some(full) = dto.with_untracked(|d| d.as_ref().map(|d| d.full_range_ms)) {
            let v = clamp_view(v, full);
            view.set(if v == full { None } else { Some(v) });
        }
    };
    let xmap = move || current().map(|v| XMap::new(v, width_of(), geom.get_untracked().label_w));

    let on_wheel = move |ev: ev::WheelEvent| {
        ev.prevent_default();
        let (Some(v), Some(xm), Some(full)) = (
            current(),
            xmap(),
            dto.with_untracked(|d| d.as_ref().map(|d| d.full_range_ms)),
        ) else {
            return;
        };
        let factor = (ev.delta_y() * 0.002).exp().clamp(0.2, 5.0);
        set_view(zoom(v, full, xm.t(ev.offset_x() as f64), factor));
    };
    let on_down = move |ev: ev::MouseEvent| {
        let x = ev.offset_x() as f64;
        let lw = geom.get_untracked().label_w;
        if (x - lw).abs() <= 5.0 {
            gutter_drag.set_value(Some((x, lw)));
            return;
        }
        if let Some(v) = current() {
            drag.set_value(Some((ev.offset_x() as f64, v, false)));
        }
    };
    let describe = move |x: f64, y: f64| -> Option<Hover> {
        let xm = xmap()?;
        let t = xm.t(x);
        let slop = 3.0 * xm.ms_per_px();
        dto.with_untracked(|d| {
            let d = d.as_ref()?;
            let lay = draw::layout(d.lanes.len(), geom.get_untracked().lane_h);
            let mut lines = Vec::new();
            // The label gutter: the full lane label.
            if x < geom.get_untracked().label_w {
                let l = &d.lanes[lay.lane_at(y)?];
                let kind = if l.kind == crate::protocol::LaneKind::Device {
                    "device stream"
                } else {
                    "host thread"
                };
                lines.push(l.label.clone());
                lines.push(format!(
                    "{kind} · {} items, {} in view",
                    l.total, l.in_window
                ));
                lines.push("drag the gutter's edge to widen the labels".into());
                return Some(Hover { x, y, lines });
            }
            if let Some(l) = lay.lane_at(y) {
                let lane = &d.lanes[l];
                if let Some(j) = box_at(&lane.boxes, t, slop) {
                    let b = &lane.boxes;
                    let name = d.names.get(b.name[j] as usize).cloned().unwrap_or_default();
                    let len = b.end_ms[j] - b.start_ms[j];
                    if b.count[j] == 1 {
                        lines.push(name);
                        lines.push(format!("{} · {}", lane.label, format::duration_ms(len)));
                    } else {
                        lines.push(format!(
                            "{} items · busy {:.0} %",
                            b.count[j],
                            b.busy[j] * 100.0
                        ));
                        lines.push(format!("longest: {name}"));
                        lines.push(format!("{} · {}", lane.label, format::duration_ms(len)));
                    }
                    lines.push(format!("at +{}", format::duration_ms(b.start_ms[j])));
                }
            }
            if lines.is_empty() && y >= STEP_ROW.0 {
                if let Some(k) = bubble_at(&d.bubbles, t, slop) {
                    let b = &d.bubbles[k];
                    lines.push(format!("bubble {}", b.bubble_id));
                    lines.push(format!(
                        "{} · at +{}",
                        format::duration_ms(b.end_ms - b.start_ms),
                        format::duration_ms(b.start_ms)
                    ));
                    lines.push(b.labels.join(", "));
                    if b.merged > 1 {
                        lines.push(format!(
                            "longest of {} bubbles closer than a pixel",
                            b.merged
                        ));
                    }
                }
            }
            if lines.is_empty() && y >= STEP_ROW.0 && y < STEP_ROW.0 + STEP_ROW.1 {
                if let Some(s) = d.steps.iter().find(|s| s.start_ms <= t && t < s.end_ms) {
                    lines.push(s.step_id.clone());
                    lines.push(format!(
                        "service {} · busy {} · underfeed {:.1} %",
                        format::duration_ms(s.end_ms - s.start_ms),
                        format::duration_ms(s.busy_union_ms),
                        s.underfeed_ratio * 100.0
                    ));
                }
            }
            (!lines.is_empty()).then_some(Hover { x, y, lines })
        })
    };
    let on_move = move |ev: ev::MouseEvent| {
        let (x, y) = (ev.offset_x() as f64, ev.offset_y() as f64);
        if let Some((x_down, w0)) = gutter_drag.get_value() {
            let lw = (w0 + x - x_down).clamp(LABEL_W_RANGE.0, LABEL_W_RANGE.1);
            geom.update(|g| g.label_w = lw);
            return;
        }
        if let Some((x_down, v0, moved)) = drag.get_value() {
            let dx = x - x_down;
            if moved || dx.abs() > 3.0 {
                drag.set_value(Some((x_down, v0, true)));
                if let Some(full) = dto.with_untracked(|d| d.as_ref().map(|d| d.full_range_ms)) {
                    let per_px =
                        XMap::new(v0, width_of(), geom.get_untracked().label_w).ms_per_px();
                    set_view(pan(v0, full, -dx * per_px));
                }
                hover.set(None);
                return;
            }
        }
        if let Some(xm) = xmap() {
            last_t.set_value(Some(xm.t(x)));
        }
        hover.set(describe(x, y));
    };
    let click = move |x: f64, y: f64| {
        let Some(xm) = xmap() else { return };
        let t = xm.t(x);
        let slop = 3.0 * xm.ms_per_px();
        enum Hit {
            Lane(u32),
            Bubble(u32),
            Step(u32),
        }
        let hit = dto.with_untracked(|d| {
            let d = d.as_ref()?;
            let lay = draw::layout(d.lanes.len(), geom.get_untracked().lane_h);
            if let Some(l) = lay.lane_at(y) {
                if box_at(&d.lanes[l].boxes, t, slop).is_some() {
                    return Some(Hit::Lane(d.lanes[l].id));
                }
            }
            if y >= BUBBLE_ROW.0 {
                if let Some(k) = bubble_at(&d.bubbles, t, slop) {
                    return Some(Hit::Bubble(d.bubbles[k].index));
                }
            }
            if y >= STEP_ROW.0 && y < STEP_ROW.0 + STEP_ROW.1 {
                return d
                    .steps
                    .iter()
                    .find(|s| s.start_ms <= t && t < s.end_ms)
                    .map(|s| Hit::Step(s.index));
            }
            None
        });
        match hit {
            Some(Hit::Bubble(i)) => state.anomaly_bubble.set(Some(i)),
            Some(Hit::Step(i)) => state.anomaly_step.set(Some(i)),
            Some(Hit::Lane(lane)) => spawn_local(async move {
                let req = AnomalyQuery::KernelAt {
                    rank,
                    t_ms: t,
                    lane,
                    slop_ms: slop,
                };
                match super::ask(req).await {
                    Ok(AnomalyReply::KernelAt(k)) => {
                        let _ = item.try_set(k);
                    }
                    Ok(other) => {
                        let _ = error.try_set(Some(format!("unexpected reply {other:?}")));
                    }
                    Err(e) => {
                        let _ = error.try_set(Some(e));
                    }
                }
            }),
            None => {}
        }
    };
    let on_up = move |ev: ev::MouseEvent| {
        if gutter_drag.get_value().is_some() {
            gutter_drag.set_value(None);
            return;
        }
        let moved = drag.get_value().is_some_and(|d| d.2);
        drag.set_value(None);
        if !moved {
            click(ev.offset_x() as f64, ev.offset_y() as f64);
        }
    };
    let on_key = move |ev: ev::KeyboardEvent| {
        let (Some(v), Some(full)) = (
            current(),
            dto.with_untracked(|d| d.as_ref().map(|d| d.full_range_ms)),
        ) else {
            return;
        };
        let at = last_t
            .get_value()
            .filter(|t| *t >= v.0 && *t <= v.1)
            .unwrap_or((v.0 + v.1) / 2.0);
        // The page's chart keys (views::zoom): W/S zoom around the pointer, A/D pan.
        let Some(key) = zoom_key(&ev.key()) else {
            return;
        };
        let next = apply(key, v, full, Some(at), MIN_SPAN_MS).unwrap_or(full);
        ev.prevent_default();
        set_view(next);
    };

    // Search: Enter asks the worker (new text) or steps to the next match, Shift+Enter back;
    // the view centres on the match and selects it (the item panel shows it).
    let go_to = move |k: usize| {
        let Some(m) = found.with_untracked(|f| f.as_ref().and_then(|f| f.matches.get(k).cloned()))
        else {
            return;
        };
        cur.set(Some(k));
        let (s, e) = (m.start_ms, m.start_ms + m.dur_us / 1e3);
        item.set(Some(m));
        if let Some(v) = current() {
            let span = v.1 - v.0;
            let span = if e - s > span * 0.5 {
                (e - s) * 4.0
            } else {
                span
            };
            let c = (s + e) / 2.0;
            set_view((c - span / 2.0, c + span / 2.0));
        }
    };
    let step = move |dir: i64| {
        let n = found.with_untracked(|f| f.as_ref().map_or(0, |f| f.matches.len()));
        if n == 0 {
            return;
        }
        let k = match cur.get_untracked() {
            Some(k) => (k as i64 + dir).rem_euclid(n as i64) as usize,
            None if dir < 0 => n - 1,
            None => 0,
        };
        go_to(k);
    };
    let submit = move |dir: i64| {
        let text = search_text.get_untracked().trim().to_string();
        if text.is_empty() {
            return;
        }
        if found.with_untracked(|f| f.as_ref().is_some_and(|f| f.text == text)) {
            step(dir);
            return;
        }
        spawn_local(async move {
            match super::ask(AnomalyQuery::Search {
                rank,
                text,
                limit: 1000,
            })
            .await
            {
                Ok(AnomalyReply::Search(f)) => {
                    let boxes = f
                        .matches
                        .iter()
                        .map(|m| (m.lane, m.start_ms, m.start_ms + m.dur_us / 1e3))
                        .collect();
                    let _ = found_boxes.try_set_value(boxes);
                    let _ = cur.try_set(None);
                    let _ = found.try_set(Some(f));
                    step(dir);
                }
                Ok(other) => {
                    let _ = error.try_set(Some(format!("unexpected reply {other:?}")));
                }
                Err(e) => {
                    let _ = error.try_set(Some(e));
                }
            }
        });
    };
    let clear_search = move || {
        found_boxes.set_value(Vec::new());
        found.set(None);
        cur.set(None);
        search_text.set(String::new());
    };
    let search_count = move || {
        found.with(|f| {
            f.as_ref().map(|f| match (f.total, cur.get()) {
                (0, _) => format!("no match for “{}”", f.text),
                (t, Some(k)) if t as usize > f.matches.len() => format!(
                    "{} / {} (first {} of {t})",
                    k + 1,
                    f.matches.len(),
                    f.matches.len()
                ),
                (t, Some(k)) => format!("{} / {t}", k + 1),
                (t, None) => format!("{t} matches"),
            })
        })
    };
    // The resize handle: dragging changes the lane height (window listeners, so the pointer
    // may leave the handle).
    let mv = window_event_listener(ev::mousemove, move |ev: web_sys::MouseEvent| {
        let Some((y0, h0)) = resize_drag.try_get_value().flatten() else {
            return;
        };
        let lanes = dto.with_untracked(|d| d.as_ref().map_or(1, |d| d.lanes.len().max(1)));
        let lh =
            (h0 + (ev.client_y() as f64 - y0) / lanes as f64).clamp(LANE_H_RANGE.0, LANE_H_RANGE.1);
        geom.update(|g| g.lane_h = lh);
    });
    let up = window_event_listener(ev::mouseup, move |_| {
        let _ = resize_drag.try_set_value(None);
    });
    on_cleanup(move || {
        mv.remove();
        up.remove();
    });

    let legend = move || {
        let classes = CLASS_COLORS
            .iter()
            .map(|(n, c)| view! { <span class="legend-item"><span class="swatch" style=format!("background:{c}")></span>{*n}</span> })
            .collect_view();
        let labels = LABEL_COLORS
            .iter()
            .map(|(n, c)| view! { <span class="legend-item"><span class="swatch" style=format!("background:{c};opacity:.8")></span>{n.trim_start_matches("possible_").replace('_', " ")}</span> })
            .collect_view();
        view! { <div class="legend">"kernels: "{classes}</div><div class="legend">"bubbles: "{labels}</div> }
    };
    let stats = move || {
        dto.with(|d| {
            d.as_ref().map(|d| {
                let items: u64 = d.lanes.iter().map(|l| l.in_window).sum();
                let boxes: usize = d.lanes.iter().map(|l| l.boxes.count.len()).sum();
                format!("{items} items → {boxes} boxes · frame {:.1} ms · wheel/W S zoom, drag/A D pan, double-click resets", draw_ms.get())
            })
        })
    };
    let attr = move |f: fn(&TimelineDto) -> String| {
        move || dto.with(|d| d.as_ref().map(f).unwrap_or_default())
    };
    let tooltip = move || {
        hover.get().map(|h| {
            let lines = h.lines.into_iter().map(|l| view! { <div>{l}</div> }).collect_view();
            view! { <div class="tooltip" data-testid="timeline-tooltip" style=format!("left:{}px;top:{}px", (h.x + 14.0).min(900.0), h.y + 14.0)>{lines}</div> }
        })
    };
    let detail = move || {
        item.get().map(|k| {
            let row = |t: &'static str, v: String| view! { <dt>{t}</dt><dd>{v}</dd> };
            view! {
                <section class="anom-timeline-item" data-testid="timeline-item">
                    <h4>{if k.kind == crate::protocol::LaneKind::Device { "Kernel" } else { "Host event" }}" "<code data-testid="timeline-item-name">{k.name.clone()}</code></h4>
                    <dl class="kv">
                        {row(if k.kind == crate::protocol::LaneKind::Device { "stream" } else { "thread" }, k.stream.clone())}
                        {row("start", format!("+{} ({} µs)", format::duration_ms(k.start_ms), k.start_us))}
                        {row("duration", format!("{:.3} µs", k.dur_us))}
                        {row("type", k.op_type.clone())}
                        {row("core / class", format!("{} / {}", k.core, k.class))}
                        {(k.wait_us > 0.0).then(|| row("wait", format!("{:.3} µs", k.wait_us)))}
                        {(!k.shapes.is_empty()).then(|| row("input shapes", k.shapes.clone()))}
                        {(k.source_row > 0).then(|| row("kernel_details.csv line", k.source_row.to_string()))}
                        {k.step_id.clone().map(|s| row("step", s))}
                    </dl>
                </section>
            }
        })
    };

    view! {
        <section class="chart-box anom-timeline" data-testid="timeline">
            <div class="chart-bar">
                <span class="timeline-search">
                    <input type="search" data-testid="timeline-search" placeholder="Find a kernel or event (Enter: next, Shift+Enter: previous)"
                        prop:value=move || search_text.get()
                        on:input=move |ev| search_text.set(event_target_value(&ev))
                        on:keydown=move |ev: ev::KeyboardEvent| {
                            if ev.key() == "Enter" {
                                ev.prevent_default();
                                submit(if ev.shift_key() { -1 } else { 1 });
                            } else if ev.key() == "Escape" {
                                clear_search();
                            }
                        }/>
                    <button class="button" data-testid="timeline-search-prev" title="previous match (Shift+Enter)" on:click=move |_| submit(-1)>"▲"</button>
                    <button class="button" data-testid="timeline-search-next" title="next match (Enter)" on:click=move |_| submit(1)>"▼"</button>
                    <span class="muted" data-testid="timeline-search-count">{search_count}</span>
                </span>
                <span class="muted" data-testid="timeline-stats">{stats}</span>
                <button class="button" data-testid="timeline-reset" on:click=move |_| view.set(None)>"Reset"</button>
            </div>
            <div class="timeline-legend">{legend}</div>
            {move || error.get().map(|e| view! { <p class="notice error">{e}</p> })}
            <div class="chart-wrap">
                <canvas
                    node_ref=canvas
                    class="timeline"
                    tabindex="0"
                    data-testid="timeline-canvas"
                    data-lanes=attr(|d| d.lanes.len().to_string())
                    data-boxes=attr(|d| d.lanes.iter().map(|l| l.boxes.count.len()).sum::<usize>().to_string())
                    data-bubbles=attr(|d| d.bubbles.len().to_string())
                    data-steps=attr(|d| d.steps.len().to_string())
                    data-range=attr(|d| format!("{:.6},{:.6}", d.x_range_ms.0, d.x_range_ms.1))
                    data-view=move || { view.track(); dto.track(); current().map(|v| format!("{:.6},{:.6}", v.0, v.1)).unwrap_or_default() }
                    data-draw-ms=move || format!("{:.2}", draw_ms.get())
                    data-drawn=move || boxes_drawn.get().to_string()
                    style=move || {
                        let g = geom.get();
                        let lanes = dto.with(|d| d.as_ref().map_or(0, |d| d.lanes.len()));
                        let edge = if gutter_drag.get_value().is_some() { "col-resize" } else { "default" };
                        format!("height:{}px;cursor:{edge}", draw::css_height(lanes, g.lane_h))
                    }
                    data-label-w=move || geom.get().label_w.to_string()
                    data-lane-h=move || geom.get().lane_h.to_string()
                    on:wheel=on_wheel
                    on:mousedown=on_down
                    on:mousemove=on_move
                    on:mouseup=on_up
                    on:mouseleave=move |_| { hover.set(None); drag.set_value(None); gutter_drag.set_value(None); }
                    on:dblclick=move |_| view.set(None)
                    on:keydown=on_key
                ></canvas>
                {tooltip}
            </div>
            <div class="timeline-resize" data-testid="timeline-resize" title="drag to make the lanes taller or lower"
                on:mousedown=move |ev: ev::MouseEvent| {
                    ev.prevent_default();
                    resize_drag.set_value(Some((ev.client_y() as f64, geom.get_untracked().lane_h)));
                }>"⋯"</div>
            {detail}
        </section>
    }
}
