//! `<Timeline rank/>`: the canvas timeline of the steps/bubbles view . One lane per
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
//!
//! Files, one concept each: [`state`] (the signals of one timeline and where a rank's lane is
//! shown), [`fetch`] (the requests to the workers), [`frame`] (redrawing), [`links`] (the
//! selection's launch links), [`pointer`] (wheel, drag, click, hover, keys, resize), [`search`]
//! (the search box), [`draw`] (canvas drawing), [`detail`] (the panels around the canvas).

mod detail;
mod draw;
mod fetch;
mod frame;
mod links;
mod pointer;
mod search;
mod state;

use crate::ui::widgets::note::failed;
use leptos::prelude::*;

use self::detail::{Detail, Legend, MultiBar};
use self::links::arrows;
use self::search::SearchBar;
use self::state::Tl;
use crate::protocol::{StepBandDto, TimelineDto};
use crate::views::timeline_multi::step_ids;

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
    let tl = Tl::new(rank, multi, align_on);
    fetch::install(tl);
    links::install(tl);
    frame::install(tl);
    pointer::install_resize(tl);
    let Tl {
        canvas,
        ranks,
        steps_of,
        aligns,
        shown,
        dto,
        view,
        item,
        flows,
        hover,
        error,
        draw_ms,
        draw_ms_shown,
        boxes_drawn,
        geom,
        gutter_drag,
        ..
    } = tl;

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
    let pick = Callback::new(move |s| tl.show(s));
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
                    .map(|(&r, _)| tl.rank_label(r))
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
            i.as_ref().and_then(|s| {
                tl.to_view(s.rank, s.item.lane, s.item.start_ms, draw::end_ms(&s.item))
            })
        })
        .map(|(l, a, b)| format!("{l},{a:.6},{b:.6}"))
        .unwrap_or_default()
    });
    let arrows_attr = Memo::new(move |_| {
        item.track();
        flows.track();
        shown.track();
        arrows(tl).len().to_string()
    });
    let parts_attr = Memo::new(move |_| {
        shown
            .with(|s| s.as_ref().map_or(0, |(_, p)| p.len()))
            .to_string()
    });
    let view_attr = Memo::new(move |_| {
        view.track();
        dto.track();
        tl.current()
            .map(|v| format!("{:.6},{:.6}", v.0, v.1))
            .unwrap_or_default()
    });
    view! {
        <section class="chart-box anom-timeline" data-testid="timeline">
            <div class="chart-bar">
                <SearchBar tl=tl/>
                {move || (tl.others() > 0).then(|| view! { <MultiBar multi=multi align_on=align_on ids=ids missing=missing/> })}
                <span class="muted" data-testid="timeline-stats">{stats}</span>
                <button class="button" data-testid="timeline-reset" on:click=move |_| view.set(None)>"Reset"</button>
            </div>
            <div class="timeline-legend"><Legend gpu=gpu/></div>
            {move || error.get().map(failed)}
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
                    on:wheel=move |ev| pointer::on_wheel(tl, ev)
                    on:mousedown=move |ev| pointer::on_down(tl, ev)
                    on:mousemove=move |ev| pointer::on_move(tl, ev)
                    on:mouseup=move |ev| pointer::on_up(tl, ev)
                    on:mouseleave=move |_| pointer::on_leave(tl)
                    on:dblclick=move |_| view.set(None)
                    on:keydown=move |ev| pointer::on_key(tl, ev)
                ></canvas>
                {tooltip}
            </div>
            <div class="timeline-resize" data-testid="timeline-resize" title="drag to make the lanes taller or lower"
                on:mousedown=move |ev| pointer::on_resize_down(tl, ev)>"⋯"</div>
            <Detail sel=item flows=flows pick=pick/>
        </section>
    }
}
