//! The parts of the timeline around its canvas: the detail panel of the selected kernel or
//! host event with its launch links (`AnomalyQuery::Flows`: a kernel names the host call that
//! launched it, a host event the kernels launched from inside it; each link is a button that
//! selects the other end), the legend, and the stacked mode's switch and step choice.

use leptos::prelude::*;

use super::draw::{CLASS_COLORS, STEP_ROW};
use crate::protocol::{LaneKind, TimelineDto, TimelineFlowsDto, TimelineItemDto};
use crate::views::format;
use crate::views::timeline_axis::{box_at, bubble_at, LaneLayout, LABEL_COLORS};

/// The colours of kernel classes and bubble labels. On a GPU (Kineto) rank the classes are
/// named for what they hold there (`model::kernels::TaskClass::classify`: compute kernels,
/// NCCL/RCCL collectives, memcpy/memset and the rest); AI_CPU never occurs and is left out.
#[component]
pub fn Legend(
    /// The rank is a GPU trace.
    gpu: bool,
) -> impl IntoView {
    let classes = CLASS_COLORS
        .iter()
        .filter_map(|&(n, c)| {
            let name = if !gpu {
                n
            } else if n == "AI_CPU" {
                return None;
            } else {
                gpu_class(n)
            };
            Some(view! { <span class="legend-item"><span class="swatch" style=format!("background:{c}")></span>{name}</span> })
        })
        .collect_view();
    let labels = LABEL_COLORS
        .iter()
        .map(|(n, c)| view! { <span class="legend-item"><span class="swatch" style=format!("background:{c};opacity:.8")></span>{n.trim_start_matches("possible_").replace('_', " ")}</span> })
        .collect_view();
    view! { <div class="legend">"kernels: "{classes}</div><div class="legend">"bubbles: "{labels}</div> }
}

/// A kernel class as GPU users name it (the legend and the selected kernel of a GPU rank):
/// the Ascend task classes the GPU pipeline reuses are not shown as such (`HCCL` on an NCCL
/// kernel reads as a bug).
fn gpu_class(n: &str) -> &str {
    match n {
        "AI_CORE" => "compute",
        "HCCL" => "communication",
        "OTHER" => "memcpy / memset / other",
        other => other,
    }
}

/// The stacked mode: "all ranks", the step to align on, and the ranks without that step.
#[component]
pub fn MultiBar(
    /// Stacked mode on.
    multi: RwSignal<bool>,
    /// The step id aligned on (`None`: each rank's first step).
    align_on: RwSignal<Option<String>>,
    /// Step ids of the shown ranks.
    ids: Signal<Vec<String>>,
    /// What to say about ranks without the chosen step.
    missing: Signal<Option<String>>,
) -> impl IntoView {
    view! {
        <span class="timeline-multi">
            <label title="stack the lanes of every analysed rank, each shifted so the chosen step starts at the same time">
                <input type="checkbox" data-testid="timeline-multi"
                    prop:checked=move || multi.get()
                    on:change=move |ev| multi.set(event_target_checked(&ev))/>
                " all ranks"
            </label>
            {move || multi.get().then(|| view! {
                <label>" aligned on "
                    <select data-testid="timeline-align" on:change=move |ev| {
                        let v = event_target_value(&ev);
                        align_on.set((!v.is_empty()).then_some(v));
                    }>
                        <option value="" selected=move || align_on.get().is_none()>"first step"</option>
                        {move || ids.get().into_iter().map(|id| {
                            let sel = align_on.get().as_deref() == Some(id.as_str());
                            view! { <option value=id.clone() selected=sel>{id.clone()}</option> }
                        }).collect_view()}
                    </select>
                </label>
                <span class="muted" data-testid="timeline-align-missing">{move || missing.get()}</span>
            })}
        </span>
    }
}

/// A selected item: its rank folder and the item in that rank's times.
#[derive(Clone, Debug, PartialEq)]
pub struct Sel {
    /// Rank folder index.
    pub rank: u32,
    /// The item as the rank's worker described it.
    pub item: TimelineItemDto,
}

/// Where a linked item lies from the selected one, in words (`+13.407 µs later`).
fn lead(from: f64, to: f64) -> String {
    let d = to - from;
    if d >= 0.0 {
        format!("{} later", format::duration_ms(d))
    } else {
        format!("{} earlier", format::duration_ms(-d))
    }
}

/// The detail panel of `sel`, with the links of `flows` (when they are the selection's);
/// `pick` selects a linked item.
#[component]
pub fn Detail(
    /// The selection.
    sel: RwSignal<Option<Sel>>,
    /// Links of the selection (rank, reply).
    flows: RwSignal<Option<(u32, TimelineFlowsDto)>>,
    /// Selects a linked item (and brings it into view).
    pick: Callback<Sel>,
) -> impl IntoView {
    let links = move || {
        let s = sel.get()?;
        let k = s.item.clone();
        let f = flows
            .get()
            .filter(|(r, f)| *r == s.rank && f.lane == k.lane && f.index == k.index)?;
        let device = k.kind == LaneKind::Device;
        let title = if device { "launched by" } else { "launches" };
        if f.1.total == 0 {
            return Some(
                view! {
                    <p class="muted" data-testid="timeline-flows-none">{if device {
                        "No launch link for this kernel in the trace (no correlation id or flow)."
                    } else {
                        "No kernel launched from inside this event (no launch link in the trace)."
                    }}</p>
                }
                .into_any(),
            );
        }
        let rank = s.rank;
        let rows =
            f.1.flows
                .iter()
                .map(|l| {
                    let other = if device {
                        l.host.clone()
                    } else {
                        l.device.clone()
                    };
                    let label = format!(
                        "{} · {} ({} {}) · {}",
                        other.name,
                        lead(k.start_ms, other.start_ms),
                        l.kind,
                        l.id,
                        other.stream
                    );
                    let target = Sel {
                        rank,
                        item: other.clone(),
                    };
                    view! {
                        <li>
                            <button class="link" data-testid="timeline-flow-link" title="select it"
                                on:click=move |_| pick.run(target.clone())>{label}</button>
                        </li>
                    }
                })
                .collect_view();
        let more = (f.1.total as usize > f.1.flows.len()).then(|| {
            view! { <li class="muted">{format!("… and {} more", f.1.total as usize - f.1.flows.len())}</li> }
        });
        Some(
            view! {
                <div class="timeline-flows" data-testid="timeline-flows">
                    <h5>{title}" ("{f.1.total}")"</h5>
                    <ul>{rows}{more}</ul>
                </div>
            }
            .into_any(),
        )
    };
    move || {
        sel.get().map(|s| {
            let k = s.item;
            let device = k.kind == LaneKind::Device;
            // GPU kernels (engine::read::gpu cores) come from the trace: no CSV line to show.
            let gpu = matches!(k.core.as_str(), "KERNEL" | "NCCL" | "GPU_MEMCPY" | "GPU_MEMSET");
            let row = |t: &'static str, v: String| view! { <dt>{t}</dt><dd>{v}</dd> };
            view! {
                <section class="anom-timeline-item" data-testid="timeline-item">
                    <h4>{if device { "Kernel" } else { "Host event" }}" "<code data-testid="timeline-item-name">{k.name.clone()}</code></h4>
                    <dl class="kv">
                        {row(if device { "stream" } else { "thread" }, k.stream.clone())}
                        {row("start", format!("+{} ({} µs)", format::duration_ms(k.start_ms), k.start_us))}
                        {row("duration", format!("{:.3} µs", k.dur_us))}
                        {(!k.op_type.is_empty()).then(|| row("type", k.op_type.clone()))}
                        {row("core / class", format!("{} / {}", k.core, if gpu { gpu_class(&k.class) } else { k.class.as_str() }))}
                        {(k.wait_us > 0.0).then(|| row("wait", format!("{:.3} µs", k.wait_us)))}
                        {(!k.shapes.is_empty()).then(|| row("input shapes", k.shapes.clone()))}
                        {(k.source_row > 0 && !gpu).then(|| row("kernel_details.csv line", k.source_row.to_string()))}
                        {k.step_id.clone().map(|s| row("step", s))}
                    </dl>
                    {links}
                </section>
            }
        })
    }
}

/// `+1.5 ms` / `−1.5 ms`: a time from the origin (negative before the aligned step).
fn signed(t: f64) -> String {
    if t < 0.0 {
        format!("−{}", format::duration_ms(-t))
    } else {
        format!("+{}", format::duration_ms(t))
    }
}

/// The tooltip lines at `(x, y)` (time `t`, hit slop `slop` ms): a lane label in the gutter,
/// a box, a bubble or a step; empty when nothing is there.
pub fn hover_lines(
    d: &TimelineDto,
    lay: &LaneLayout,
    label_w: f64,
    (x, y): (f64, f64),
    t: f64,
    slop: f64,
) -> Vec<String> {
    let mut lines = Vec::new();
    // The label gutter: the full lane label.
    if x < label_w {
        let Some(l) = lay.lane_at(y).and_then(|i| d.lanes.get(i)) else {
            return lines;
        };
        let kind = if l.kind == LaneKind::Device {
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
        return lines;
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
            lines.push(format!("at {}", signed(b.start_ms[j])));
        }
    }
    if lines.is_empty() && y >= STEP_ROW.0 {
        if let Some(k) = bubble_at(&d.bubbles, t, slop) {
            let b = &d.bubbles[k];
            lines.push(format!("bubble {}", b.bubble_id));
            lines.push(format!(
                "{} · at {}",
                format::duration_ms(b.end_ms - b.start_ms),
                signed(b.start_ms)
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
    lines
}
