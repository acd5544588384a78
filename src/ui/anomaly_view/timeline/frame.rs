//! The timeline's frames: any change of what is drawn (a reply, the view, the selection and
//! its links, the geometry, the search matches, the selected step or bubble) asks for one
//! redraw, coalesced with `requestAnimationFrame`; every frame re-projects the last boxes
//! through the current view, so panning and zooming never wait for the worker.

use leptos::prelude::*;

use super::draw::{self, end_ms, now_ms, Found, Marks, Overlay};
use super::links::arrows;
use super::state::Tl;

/// Redraws the canvas whenever what it shows changes.
pub(super) fn install(tl: Tl) {
    let Tl {
        state,
        shown,
        dto,
        view,
        item,
        flows,
        frame_scheduled,
        geom,
        found,
        cur,
        ..
    } = tl;
    // Search matches as drawn: (stacked lane, shown start, shown end).
    let found_boxes = Memo::new(move |_| {
        shown.track();
        found.with(|f| {
            f.as_ref().map_or_else(Vec::new, |f| {
                f.items
                    .iter()
                    .filter_map(|(r, m)| tl.to_view(*r, m.lane, m.start_ms, end_ms(m)))
                    .collect::<Vec<_>>()
            })
        })
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
            draw_frame(tl, found_boxes);
        });
    };
    Effect::new(move |_| {
        dto.track();
        view.track();
        item.track();
        flows.track();
        geom.track();
        found_boxes.track();
        cur.track();
        state.anomaly_bubble.track();
        state.anomaly_step.track();
        redraw();
    });
}

/// Draws one frame: the last boxes through the current view, with the marks, the search
/// matches and the selection's arrows; records the frame time and the boxes drawn.
fn draw_frame(tl: Tl, found_boxes: Memo<Vec<(u32, f64, f64)>>) {
    let Tl {
        state,
        canvas,
        shown,
        dto,
        item,
        draw_ms,
        draw_ms_shown,
        draw_ms_at,
        boxes_drawn,
        geom,
        cur,
        ..
    } = tl;
    let (Some(el), Some(v)) = (canvas.get_untracked(), tl.current()) else {
        return;
    };
    let marks = Marks {
        bubble: state.anomaly_bubble.get_untracked(),
        step: state.anomaly_step.get_untracked(),
        item: item.with_untracked(|i| {
            i.as_ref()
                .and_then(|s| tl.to_view(s.rank, s.item.lane, s.item.start_ms, end_ms(&s.item)))
        }),
    };
    let t0 = now_ms();
    let g = geom.get_untracked();
    let current = cur.get_untracked();
    let arrows = arrows(tl);
    let groups =
        shown.with_untracked(|s| s.as_ref().map_or_else(Vec::new, |(s, _)| s.groups.clone()));
    let over = Overlay {
        arrows: &arrows,
        groups: &groups,
    };
    let n = found_boxes.with_untracked(|m| {
        let f = Found {
            matches: m,
            current,
        };
        dto.with_untracked(|d| {
            d.as_ref()
                .map(|d| draw::draw(&el, d, v, marks, g, f, over))
                .unwrap_or(0)
        })
    });
    let t1 = now_ms();
    let _ = draw_ms.try_set(t1 - t0);
    if t1 - draw_ms_at.try_get_value().unwrap_or(t1) >= 500.0 {
        draw_ms_at.set_value(t1);
        let _ = draw_ms_shown.try_set(t1 - t0);
    }
    if boxes_drawn.try_get_untracked() != Some(n) {
        let _ = boxes_drawn.try_set(n);
    }
}
