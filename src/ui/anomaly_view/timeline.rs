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
//!
//! Selecting a kernel or host event asks for its launch links (`AnomalyQuery::Flows`,
//! views::timeline_flows) and draws them as arrows from the host lane to the device lane; the
//! detail panel names the other end, a click selects it. "All ranks" stacks the lanes of every
//! analysed rank (views::timeline_multi), each shifted so the chosen step starts at the same
//! x; the same keys, search and selection work there, each request going to its rank's
//! worker with the rank's own window.

use leptos::ev;
use leptos::html::Canvas;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::timeline_detail::{hover_lines, Detail, Legend, MultiBar, Sel};
use super::timeline_draw::{
    self as draw, end_ms, now_ms, Arrow, Found, Geom, Marks, Overlay, XMap, BUBBLE_ROW,
    LABEL_W_RANGE, LANE_H_RANGE, RIGHT, STEP_ROW,
};
use crate::protocol::{
    AnomalyQuery, AnomalyReply, StepBandDto, TimelineDto, TimelineFlowsDto, TimelineItemDto,
};
use crate::ui::state::AppState;
use crate::ui::widgets::zoom::{apply, wheel_factor_smooth, zoom_key, PanDrag};
use crate::views::timeline_axis::{box_at, bubble_at, clamp_view, pan, zoom, MIN_SPAN_MS};
use crate::views::timeline_multi::{align, rank_window, stack, step_ids, Part, Stacked};

/// Hover tooltip: position (CSS px) and lines.
#[derive(Clone, Debug, PartialEq)]
struct Hover {
    x: f64,
    y: f64,
    lines: Vec<String>,
}

/// Search matches over the shown ranks: (rank, item in its rank's times), by shown start.
#[derive(Clone, Debug, PartialEq)]
struct Matches {
    text: String,
    total: u64,
    items: Vec<(u32, TimelineItemDto)>,
}

/// The stacked timeline and, per part, its position in the shown ranks.
type Shown = Option<(Stacked, Vec<usize>)>;

/// The timeline of rank folder `rank` (and, in the stacked mode, of every analysed rank).
#[component]
pub fn Timeline(
    /// Rank folder index (the reference rank when several are shown).
    rank: u32,
    /// Show every analysed rank stacked (kept by the tab across rank changes).
    multi: RwSignal<bool>,
    /// Step id the stacked ranks are aligned on (`None`: each rank's first step).
    align_on: RwSignal<Option<String>>,
    /// The rank is a GPU (Kineto) trace: the legend names the GPU kernel classes.
    #[prop(optional)]
    gpu: bool,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let canvas = NodeRef::<Canvas>::new();
    // Shown ranks: this one first (the reference), then every other rank with kernels.
    let ranks = Memo::new(move |_| {
        let mut v = vec![rank];
        if multi.get() {
            state.anomaly.with(|m| {
                v.extend(
                    m.values()
                        .filter(|s| s.kernels > 0 && s.rank != rank)
                        .map(|s| s.rank),
                )
            });
        }
        v
    });
    let others = move || {
        state.anomaly.with(|m| {
            m.values()
                .filter(|s| s.kernels > 0 && s.rank != rank)
                .count()
        })
    };
    let rank_label = move |r: u32| {
        state.anomaly.with_untracked(|m| {
            m.get(&r).map_or_else(
                || format!("folder {r}"),
                // Short: it goes before every lane label in a 150 px gutter.
                |s| match s.rank_id {
                    Some(id) => format!("rank {id}"),
                    None => format!("folder {r}"),
                },
            )
        })
    };
    // Per shown rank: its last reply, its steps (from its first, full-range reply), and
    // whether a request is in flight / which one waits.
    let parts = RwSignal::new(Vec::<Option<TimelineDto>>::new());
    let steps_of = RwSignal::new(Vec::<Option<Vec<StepBandDto>>>::new());
    let busy = StoredValue::new(Vec::<bool>::new());
    let pending = StoredValue::new(Vec::<Option<(Option<(f64, f64)>, u32)>>::new());
    let aligns = Memo::new(move |_| {
        let n = ranks.with(|r| r.len());
        steps_of.with(|st| {
            let lists: Vec<&[StepBandDto]> = (0..n)
                .map(|i| st.get(i).and_then(|o| o.as_deref()).unwrap_or(&[]))
                .collect();
            align(&lists, align_on.get().as_deref())
        })
    });
    let offset =
        move |pos: usize| aligns.with_untracked(|a| a.get(pos).map_or(0.0, |a| a.offset_ms));
    let shown: Memo<Shown> = Memo::new(move |_| {
        let rs = ranks.get();
        let al = aligns.get();
        let labels: Vec<String> = rs.iter().map(|&r| rank_label(r)).collect();
        parts.with(|ps| {
            let mut pos = Vec::new();
            let mut list = Vec::new();
            for (i, d) in ps.iter().enumerate() {
                if let (Some(d), Some(label)) = (d, labels.get(i)) {
                    pos.push(i);
                    list.push(Part {
                        label,
                        dto: d,
                        offset_ms: al.get(i).map_or(0.0, |a| a.offset_ms),
                    });
                }
            }
            stack(&list).map(|s| (s, pos))
        })
    });
    let dto = Memo::new(move |_| shown.with(|s| s.as_ref().map(|(s, _)| s.dto.clone())));
    // Stacked lane → (rank, its lane id, its offset).
    let lane_src = move |l: u32| -> Option<(u32, u32, f64)> {
        shown.with_untracked(|s| {
            let (st, pos) = s.as_ref()?;
            let &(p, lane) = st.lanes.get(l as usize)?;
            let pos = *pos.get(p)?;
            Some((ranks.with_untracked(|r| r[pos]), lane, offset(pos)))
        })
    };
    // (rank, its lane id, start, end in its ms) → (stacked lane, shown start, shown end).
    let to_view = move |r: u32, lane: u32, s: f64, e: f64| -> Option<(u32, f64, f64)> {
        let pos = ranks.with_untracked(|v| v.iter().position(|&x| x == r))?;
        let off = offset(pos);
        shown.with_untracked(|st| {
            let (st, pp) = st.as_ref()?;
            let p = pp.iter().position(|&q| q == pos)?;
            Some((st.lane_of(p, lane)?, s - off, e - off))
        })
    };

    // Visible window (shown ms); None = everything.
    let view = RwSignal::new(None::<(f64, f64)>);
    // Kept in the URL hash (`tl.x=rank:a,b`), so a reload + re-drop or a link restores it.
    crate::ui::route::use_route().bind_scoped(crate::ui::route::TL_X, rank, view);
    // Another mode or step shifts the shown times: show everything again.
    Effect::new(move |prev: Option<()>| {
        multi.track();
        align_on.track();
        if prev.is_some() {
            view.set(None);
        }
    });
    let item = RwSignal::new(None::<Sel>);
    let flows = RwSignal::new(None::<(u32, TimelineFlowsDto)>);
    let hover = RwSignal::new(None::<Hover>);
    let error = RwSignal::new(None::<String>);
    let drag = StoredValue::new(None::<PanDrag>);
    let last_t = StoredValue::new(None::<f64>);
    let frame_scheduled = StoredValue::new(false);
    let draw_ms = RwSignal::new(0.0f64);
    // `draw_ms` as the status line shows it: at most twice a second.
    let draw_ms_shown = RwSignal::new(0.0f64);
    let draw_ms_at = StoredValue::new(f64::NEG_INFINITY);
    let boxes_drawn = RwSignal::new(0usize);
    let geom = RwSignal::new(Geom::default());
    // Dragging the gutter's edge: (x at down, label width at down).
    let gutter_drag = StoredValue::new(None::<(f64, f64)>);
    // Dragging the resize handle: (client y at down, lane height at down).
    let resize_drag = StoredValue::new(None::<(f64, f64)>);
    let found = RwSignal::new(None::<Matches>);
    let cur = RwSignal::new(None::<usize>);
    let search_text = RwSignal::new(String::new());
    // Search matches as drawn: (stacked lane, shown start, shown end).
    let found_boxes = Memo::new(move |_| {
        shown.track();
        found.with(|f| {
            f.as_ref().map_or_else(Vec::new, |f| {
                f.items
                    .iter()
                    .filter_map(|(r, m)| to_view(*r, m.lane, m.start_ms, end_ms(m)))
                    .collect::<Vec<_>>()
            })
        })
    });

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

    // The workers: per shown rank one request in flight, the newest wish waits in `pending`.
    let fetch = move |pos: usize, want: Option<(f64, f64)>, width_px: u32| {
        let Some(r) = ranks.with_untracked(|v| v.get(pos).copied()) else {
            return;
        };
        if busy.with_value(|b| b.get(pos).copied().unwrap_or(false)) {
            pending.update_value(|p| {
                if let Some(slot) = p.get_mut(pos) {
                    *slot = Some((want, width_px));
                }
            });
            return;
        }
        busy.update_value(|b| {
            if let Some(x) = b.get_mut(pos) {
                *x = true;
            }
        });
        spawn_local(async move {
            let (mut want, mut width_px) = (want, width_px);
            loop {
                let req = AnomalyQuery::Timeline {
                    rank: r,
                    x_range_ms: want,
                    width_px,
                };
                match super::ask(req).await {
                    Ok(AnomalyReply::Timeline(d)) => {
                        let _ = error.try_set(None);
                        // The shown ranks may have changed meanwhile.
                        if ranks.try_with_untracked(|v| v.get(pos) == Some(&d.rank)) == Some(true) {
                            if want.is_none() {
                                let _ = steps_of.try_update(|s| {
                                    if let Some(x @ None) = s.get_mut(pos) {
                                        *x = Some(d.steps.clone());
                                    }
                                });
                            }
                            let _ = parts.try_update(|p| {
                                if let Some(x) = p.get_mut(pos) {
                                    *x = Some(d);
                                }
                            });
                        }
                    }
                    Ok(other) => {
                        let _ = error.try_set(Some(format!("unexpected reply {other:?}")));
                    }
                    Err(e) => {
                        let _ = error.try_set(Some(e));
                    }
                }
                match pending
                    .try_update_value(|p| p.get_mut(pos).and_then(Option::take))
                    .flatten()
                {
                    Some((w, px)) => (want, width_px) = (w, px),
                    None => break,
                }
            }
            let _ = busy.try_update_value(|b| {
                if let Some(x) = b.get_mut(pos) {
                    *x = false;
                }
            });
        });
    };
    // New shown ranks: fresh slots, and everything of each rank first (its steps align it).
    Effect::new(move |_| {
        let n = ranks.with(|r| r.len());
        parts.set(vec![None; n]);
        steps_of.set(vec![None; n]);
        busy.set_value(vec![false; n]);
        pending.set_value(vec![None; n]);
        let w = width_of();
        let pw = if w > 0.0 {
            (w - geom.get_untracked().label_w - RIGHT).max(10.0) as u32
        } else {
            1200
        };
        for pos in 0..n {
            fetch(pos, None, pw);
        }
    });
    // Ask each rank for the view plus half a view on each side, at the view's pixel density,
    // in its own (shifted) times.
    Effect::new(move |prev: Option<()>| {
        let v = view.get();
        let n = ranks.with(|r| r.len());
        aligns.track();
        let w = width_of();
        let pw = (w - geom.get().label_w - RIGHT).max(10.0);
        if prev.is_none() || w <= 0.0 {
            return; // the first requests are the full ranges above
        }
        let full = dto.with_untracked(|d| d.as_ref().map(|d| d.full_range_ms));
        for pos in 0..n {
            match (v, full) {
                (Some(v), Some(full)) => {
                    let v = clamp_view(v, full);
                    let span = v.1 - v.0;
                    let want = clamp_view((v.0 - span / 2.0, v.1 + span / 2.0), full);
                    let px = (pw * (want.1 - want.0) / span)
                        .round()
                        .clamp(10.0, 20_000.0) as u32;
                    fetch(pos, Some(rank_window(want, offset(pos))), px);
                }
                _ => fetch(pos, None, pw as u32),
            }
        }
    });
    // The selection's launch links (one question per selection, never per frame).
    Effect::new(move |_| {
        let Some(s) = item.get() else {
            flows.set(None);
            return;
        };
        spawn_local(async move {
            let req = AnomalyQuery::Flows {
                rank: s.rank,
                lane: s.item.lane,
                index: s.item.index,
                limit: 50,
            };
            match super::ask(req).await {
                Ok(AnomalyReply::Flows(f)) => {
                    let _ = flows.try_set(Some((s.rank, f)));
                }
                Ok(other) => {
                    let _ = error.try_set(Some(format!("unexpected reply {other:?}")));
                }
                Err(e) => {
                    let _ = error.try_set(Some(e));
                }
            }
        });
    });
    // The selection's arrows in shown lanes and times (only the selection's own links).
    let arrows = move || -> Vec<Arrow> {
        let Some(sel) = item.get_untracked() else {
            return Vec::new();
        };
        let device = sel.item.kind == crate::protocol::LaneKind::Device;
        flows.with_untracked(|f| {
            let Some((r, f)) = f.as_ref().filter(|(r, f)| {
                *r == sel.rank && f.lane == sel.item.lane && f.index == sel.item.index
            }) else {
                return Vec::new();
            };
            f.flows
                .iter()
                .filter_map(|l| {
                    let h = to_view(*r, l.host.lane, l.host.start_ms, end_ms(&l.host))?;
                    let d = to_view(*r, l.device.lane, l.device.start_ms, end_ms(&l.device))?;
                    let shift = h.1 - l.host.start_ms;
                    Some(Arrow {
                        from_lane: h.0,
                        from_ms: l.from_ms + shift,
                        to_lane: d.0,
                        to_ms: l.to_ms + shift,
                        partner: if device { h } else { d },
                    })
                })
                .collect()
        })
    };

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
                    i.as_ref().and_then(|s| {
                        to_view(s.rank, s.item.lane, s.item.start_ms, end_ms(&s.item))
                    })
                }),
            };
            let t0 = now_ms();
            let g = geom.get_untracked();
            let current = cur.get_untracked();
            let arrows = arrows();
            let groups = shown
                .with_untracked(|s| s.as_ref().map_or_else(Vec::new, |(s, _)| s.groups.clone()));
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

    let set_view = move |v: (f64, f64)| {
        if let Some(full) = dto.with_untracked(|d| d.as_ref().map(|d| d.full_range_ms)) {
            let v = clamp_view(v, full);
            view.set(if v == full { None } else { Some(v) });
        }
    };
    let xmap = move || current().map(|v| XMap::new(v, width_of(), geom.get_untracked().label_w));
    // Selects `s` and centres the view on it (search steps, links in the detail panel).
    let show = move |s: Sel| {
        let shown_span = to_view(s.rank, s.item.lane, s.item.start_ms, end_ms(&s.item));
        item.set(Some(s));
        if let (Some((_, a, b)), Some(v)) = (shown_span, current()) {
            let span = v.1 - v.0;
            let span = if b - a > span * 0.5 {
                (b - a) * 4.0
            } else {
                span
            };
            let c = (a + b) / 2.0;
            set_view((c - span / 2.0, c + span / 2.0));
        }
    };
    let on_wheel = move |ev: ev::WheelEvent| {
        let factor = wheel_factor_smooth(&ev);
        let (Some(v), Some(xm), Some(full)) = (
            current(),
            xmap(),
            dto.with_untracked(|d| d.as_ref().map(|d| d.full_range_ms)),
        ) else {
            return;
        };
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
            drag.set_value(Some(PanDrag::start(ev.offset_x() as f64, v)));
        }
    };
    let describe = move |x: f64, y: f64| -> Option<Hover> {
        let xm = xmap()?;
        let g = geom.get_untracked();
        let lines = dto.with_untracked(|d| {
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
    };
    let on_move = move |ev: ev::MouseEvent| {
        let (x, y) = (ev.offset_x() as f64, ev.offset_y() as f64);
        if let Some((x_down, w0)) = gutter_drag.get_value() {
            let lw = (w0 + x - x_down).clamp(LABEL_W_RANGE.0, LABEL_W_RANGE.1);
            geom.update(|g| g.label_w = lw);
            return;
        }
        if let Some(mut d) = drag.get_value() {
            if let Some(dx) = d.follow(x) {
                drag.set_value(Some(d));
                if let Some(full) = dto.with_untracked(|d| d.as_ref().map(|d| d.full_range_ms)) {
                    let per_px =
                        XMap::new(d.from, width_of(), geom.get_untracked().label_w).ms_per_px();
                    set_view(pan(d.from, full, -dx * per_px));
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
            Some(Hit::Lane(lane)) => {
                let Some((r, l, off)) = lane_src(lane) else {
                    return;
                };
                spawn_local(async move {
                    let req = AnomalyQuery::KernelAt {
                        rank: r,
                        t_ms: t + off,
                        lane: l,
                        slop_ms: slop,
                    };
                    match super::ask(req).await {
                        Ok(AnomalyReply::KernelAt(k)) => {
                            let _ = item.try_set(k.map(|item| Sel { rank: r, item }));
                        }
                        Ok(other) => {
                            let _ = error.try_set(Some(format!("unexpected reply {other:?}")));
                        }
                        Err(e) => {
                            let _ = error.try_set(Some(e));
                        }
                    }
                })
            }
            None => {}
        }
    };
    let on_up = move |ev: ev::MouseEvent| {
        if gutter_drag.get_value().is_some() {
            gutter_drag.set_value(None);
            return;
        }
        let moved = drag.get_value().is_some_and(|d| d.moved);
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
        // The page's chart keys (widgets::zoom; unlike `on_key`, whatever the modifiers): W/S
        // zoom around the pointer, A/D pan.
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
        let Some((r, m)) =
            found.with_untracked(|f| f.as_ref().and_then(|f| f.items.get(k).cloned()))
        else {
            return;
        };
        cur.set(Some(k));
        show(Sel { rank: r, item: m });
    };
    let step = move |dir: i64| {
        let n = found.with_untracked(|f| f.as_ref().map_or(0, |f| f.items.len()));
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
            // Every shown rank, merged by shown start.
            let Some(rs) = ranks.try_get_untracked() else {
                return;
            };
            let mut items = Vec::new();
            let mut total = 0;
            for (pos, r) in rs.into_iter().enumerate() {
                let q = AnomalyQuery::Search {
                    rank: r,
                    text: text.clone(),
                    limit: 1000,
                };
                match super::ask(q).await {
                    Ok(AnomalyReply::Search(f)) => {
                        total += f.total;
                        let off = aligns
                            .try_with_untracked(|a| a.get(pos).map_or(0.0, |a| a.offset_ms))
                            .unwrap_or(0.0);
                        items.extend(f.matches.into_iter().map(|m| (m.start_ms - off, r, m)));
                    }
                    Ok(other) => {
                        let _ = error.try_set(Some(format!("unexpected reply {other:?}")));
                        return;
                    }
                    Err(e) => {
                        let _ = error.try_set(Some(e));
                        return;
                    }
                }
            }
            items.sort_by(|a, b| a.0.total_cmp(&b.0));
            let items = items.into_iter().map(|(_, r, m)| (r, m)).collect();
            let _ = cur.try_set(None);
            let _ = found.try_set(Some(Matches { text, total, items }));
            step(dir);
        });
    };
    let clear_search = move || {
        found.set(None);
        cur.set(None);
        search_text.set(String::new());
    };
    let search_count = move || {
        found.with(|f| {
            f.as_ref().map(|f| match (f.total, cur.get()) {
                (0, _) => format!("no match for “{}”", f.text),
                (t, Some(k)) if t as usize > f.items.len() => format!(
                    "{} / {} (first {} of {t})",
                    k + 1,
                    f.items.len(),
                    f.items.len()
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

    // The status line and the element attributes are memos: a frame or a worker reply that
    // leaves them as they were writes nothing to the DOM (a written attribute or text makes the
    // renderer restyle and lay out the page again: the main cost of a panning frame).
    let stats = Memo::new(move |_| {
        dto.with(|d| {
            d.as_ref().map(|d| {
                let items: u64 = d.lanes.iter().map(|l| l.in_window).sum();
                let boxes: usize = d.lanes.iter().map(|l| l.boxes.count.len()).sum();
                format!("{items} items → {boxes} boxes · frame {:.1} ms · wheel/W S zoom, drag/A D pan, double-click resets", draw_ms_shown.get())
            })
        })
    });
    let attr = move |f: fn(&TimelineDto) -> String| {
        Memo::new(move |_| dto.with(|d| d.as_ref().map(f).unwrap_or_default()))
    };
    let tooltip = move || {
        hover.get().map(|h| {
            let lines = h.lines.into_iter().map(|l| view! { <div>{l}</div> }).collect_view();
            view! { <div class="tooltip" data-testid="timeline-tooltip" style=format!("left:{}px;top:{}px", (h.x + 14.0).min(900.0), h.y + 14.0)>{lines}</div> }
        })
    };
    let pick = Callback::new(show);
    // The stacked mode's step list and the ranks without the chosen step.
    let ids = Signal::derive(move || {
        steps_of.with(|st| {
            let lists: Vec<&[StepBandDto]> =
                st.iter().map(|o| o.as_deref().unwrap_or(&[])).collect();
            step_ids(&lists)
        })
    });
    let missing = Signal::derive(move || {
        let id = align_on.get()?;
        let names: Vec<String> = ranks.with(|rs| {
            aligns.with(|a| {
                rs.iter()
                    .zip(a.iter())
                    .filter(|(_, a)| !a.found)
                    .map(|(&r, _)| rank_label(r))
                    .collect()
            })
        });
        (!names.is_empty())
            .then(|| format!("no {id} in {}: shown from its first step", names.join(", ")))
    });

    let canvas_style = Memo::new(move |_| {
        let g = geom.get();
        let lanes = dto.with(|d| d.as_ref().map_or(0, |d| d.lanes.len()));
        let edge = if gutter_drag.get_value().is_some() {
            "col-resize"
        } else {
            "default"
        };
        format!(
            "height:{}px;cursor:{edge}",
            draw::css_height(lanes, g.lane_h)
        )
    });
    let selected_attr = Memo::new(move |_| {
        item.track();
        shown.track();
        item.with_untracked(|i| {
            i.as_ref()
                .and_then(|s| to_view(s.rank, s.item.lane, s.item.start_ms, end_ms(&s.item)))
        })
        .map(|(l, a, b)| format!("{l},{a:.6},{b:.6}"))
        .unwrap_or_default()
    });
    let arrows_attr = Memo::new(move |_| {
        item.track();
        flows.track();
        shown.track();
        arrows().len().to_string()
    });
    let parts_attr = Memo::new(move |_| {
        shown
            .with(|s| s.as_ref().map_or(0, |(_, p)| p.len()))
            .to_string()
    });
    let view_attr = Memo::new(move |_| {
        view.track();
        dto.track();
        current()
            .map(|v| format!("{:.6},{:.6}", v.0, v.1))
            .unwrap_or_default()
    });
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
                {move || (others() > 0).then(|| view! { <MultiBar multi=multi align_on=align_on ids=ids missing=missing/> })}
                <span class="muted" data-testid="timeline-stats">{stats}</span>
                <button class="button" data-testid="timeline-reset" on:click=move |_| view.set(None)>"Reset"</button>
            </div>
            <div class="timeline-legend"><Legend gpu=gpu/></div>
            {move || error.get().map(|e| view! { <p class="notice error">{e}</p> })}
            // Test hooks of the stacked mode and the selection (the canvas holds the rest; an
            // element takes at most 26 attributes).
            <div class="chart-wrap" data-testid="timeline-state"
                data-ranks=move || ranks.with(|r| r.len()).to_string()
                data-offsets=move || aligns.with(|a| a.iter().map(|a| format!("{:.6}", a.offset_ms)).collect::<Vec<_>>().join(","))
                data-selected=selected_attr
                data-parts=parts_attr
                data-arrows=arrows_attr>
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
                    data-view=view_attr
                    data-draw-ms=move || format!("{:.2}", draw_ms.get())
                    data-drawn=move || boxes_drawn.get().to_string()
                    style=canvas_style
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
            <Detail sel=item flows=flows pick=pick/>
        </section>
    }
}
