//! The timeline under the pointer and the keys: the wheel zooms around the cursor, a drag
//! pans (or, on the gutter's edge, widens the labels), a click selects the bubble, step or
//! box under the pointer (a box asks the worker for the kernel or host event there,
//! `AnomalyQuery::KernelAt`), hovering describes it, the page's chart keys zoom and pan
//! (`ui::widgets::zoom`), and the handle below the canvas makes the lanes taller.

use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::detail::{hover_lines, Sel};
use super::draw::{self, XMap, BUBBLE_ROW, LABEL_W_RANGE, LANE_H_RANGE, STEP_ROW};
use super::state::{Hover, Tl};
use crate::protocol::{AnomalyQuery, AnomalyReply};
use crate::ui::widgets::zoom::{apply, wheel_factor_smooth, zoom_key, PanDrag};
use crate::views::timeline_axis::{box_at, bubble_at, pan, zoom, MIN_SPAN_MS};

/// Wheel: zoom around the time under the cursor.
pub(super) fn on_wheel(tl: Tl, ev: ev::WheelEvent) {
    let factor = wheel_factor_smooth(&ev);
    let (Some(v), Some(xm), Some(full)) = (tl.current(), tl.xmap(), tl.full()) else {
        return;
    };
    tl.set_view(zoom(v, full, xm.t(ev.offset_x() as f64), factor));
}

/// Mouse down: on the gutter's edge a label-width drag, else a pan drag.
pub(super) fn on_down(tl: Tl, ev: ev::MouseEvent) {
    let x = ev.offset_x() as f64;
    let lw = tl.geom.get_untracked().label_w;
    if (x - lw).abs() <= 5.0 {
        tl.gutter_drag.set_value(Some((x, lw)));
        return;
    }
    if let Some(v) = tl.current() {
        tl.drag
            .set_value(Some(PanDrag::start(ev.offset_x() as f64, v)));
    }
}

/// The tooltip at `(x, y)`: what lies under the pointer.
fn describe(tl: Tl, x: f64, y: f64) -> Option<Hover> {
    let xm = tl.xmap()?;
    let g = tl.geom.get_untracked();
    let lines = tl.dto.with_untracked(|d| {
        let d = d.as_ref()?;
        let lay = draw::layout(d.lanes.len(), g.lane_h);
        Some(hover_lines(
            d,
            &lay,
            g.label_w,
            (x, y),
            xm.t(x),
            3.0 * xm.ms_per_px(),
        ))
    })?;
    (!lines.is_empty()).then_some(Hover { x, y, lines })
}

/// Mouse move: widen the gutter, pan, or describe what is under the pointer.
pub(super) fn on_move(tl: Tl, ev: ev::MouseEvent) {
    let (x, y) = (ev.offset_x() as f64, ev.offset_y() as f64);
    if let Some((x_down, w0)) = tl.gutter_drag.get_value() {
        let lw = (w0 + x - x_down).clamp(LABEL_W_RANGE.0, LABEL_W_RANGE.1);
        tl.geom.update(|g| g.label_w = lw);
        return;
    }
    if let Some(mut d) = tl.drag.get_value() {
        if let Some(dx) = d.follow(x) {
            tl.drag.set_value(Some(d));
            if let Some(full) = tl.full() {
                let per_px =
                    XMap::new(d.from, tl.width_of(), tl.geom.get_untracked().label_w).ms_per_px();
                tl.set_view(pan(d.from, full, -dx * per_px));
            }
            tl.hover.set(None);
            return;
        }
    }
    if let Some(xm) = tl.xmap() {
        tl.last_t.set_value(Some(xm.t(x)));
    }
    tl.hover.set(describe(tl, x, y));
}

/// A click at `(x, y)`: selects the bubble or step there, or asks for the box's item.
fn click(tl: Tl, x: f64, y: f64) {
    let Some(xm) = tl.xmap() else { return };
    let t = xm.t(x);
    let slop = 3.0 * xm.ms_per_px();
    enum Hit {
        Lane(u32),
        Bubble(u32),
        Step(u32),
    }
    let hit = tl.dto.with_untracked(|d| {
        let d = d.as_ref()?;
        let lay = draw::layout(d.lanes.len(), tl.geom.get_untracked().lane_h);
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
        Some(Hit::Bubble(i)) => tl.state.anomaly_bubble.set(Some(i)),
        Some(Hit::Step(i)) => tl.state.anomaly_step.set(Some(i)),
        Some(Hit::Lane(lane)) => {
            let Some((r, l, off)) = tl.lane_src(lane) else {
                return;
            };
            let Tl { item, error, .. } = tl;
            spawn_local(async move {
                let req = AnomalyQuery::KernelAt {
                    rank: r,
                    t_ms: t + off,
                    lane: l,
                    slop_ms: slop,
                };
                match crate::ui::anomaly_view::ask(req).await {
                    Ok(AnomalyReply::KernelAt(k)) => {
                        let _ = item.try_set(k.map(|item| Sel { rank: r, item }));
                    }
                    Ok(other) => {
                        let _ = error.try_set(Some(crate::ui::client::unexpected(
                            crate::ui::client::anomaly_reply_name(&other),
                        )));
                    }
                    Err(e) => {
                        let _ = error.try_set(Some(e));
                    }
                }
            })
        }
        None => {}
    }
}

/// Mouse up: ends a drag; without a move it was a click.
pub(super) fn on_up(tl: Tl, ev: ev::MouseEvent) {
    if tl.gutter_drag.get_value().is_some() {
        tl.gutter_drag.set_value(None);
        return;
    }
    let moved = tl.drag.get_value().is_some_and(|d| d.moved);
    tl.drag.set_value(None);
    if !moved {
        click(tl, ev.offset_x() as f64, ev.offset_y() as f64);
    }
}

/// The pointer left the canvas: no tooltip, no drag.
pub(super) fn on_leave(tl: Tl) {
    tl.hover.set(None);
    tl.drag.set_value(None);
    tl.gutter_drag.set_value(None);
}

/// A key on the focused canvas.
pub(super) fn on_key(tl: Tl, ev: ev::KeyboardEvent) {
    let (Some(v), Some(full)) = (tl.current(), tl.full()) else {
        return;
    };
    let at = tl
        .last_t
        .get_value()
        .filter(|t| *t >= v.0 && *t <= v.1)
        .unwrap_or((v.0 + v.1) / 2.0);
    // The page's chart keys (widgets::zoom; unlike `on_key`, whatever the modifiers): W/S
    // zoom around the pointer, A/D pan.
    let Some(key) = zoom_key(&ev.key()) else {
        return;
    };
    let next = apply(key, v, full, Some(at), MIN_SPAN_MS).unwrap_or(full);
    ev.prevent_default();
    tl.set_view(next);
}

/// Mouse down on the resize handle: starts a lane-height drag.
pub(super) fn on_resize_down(tl: Tl, ev: ev::MouseEvent) {
    ev.prevent_default();
    tl.resize_drag
        .set_value(Some((ev.client_y() as f64, tl.geom.get_untracked().lane_h)));
}

/// The resize handle's drag: window listeners, so the pointer may leave the handle; removed
/// with the timeline.
pub(super) fn install_resize(tl: Tl) {
    let Tl {
        resize_drag,
        dto,
        geom,
        ..
    } = tl;
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
}
