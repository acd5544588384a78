//! The timeline's detail panel: the selected kernel or host event, and its launch links
//! (`AnomalyQuery::Flows`): a kernel names the host call that launched it, a host event the
//! kernels launched from inside it; each link is a button that selects the other end.

use leptos::prelude::*;

use crate::protocol::{LaneKind, TimelineFlowsDto, TimelineItemDto};
use crate::views::format;

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
            let row = |t: &'static str, v: String| view! { <dt>{t}</dt><dd>{v}</dd> };
            view! {
                <section class="anom-timeline-item" data-testid="timeline-item">
                    <h4>{if device { "Kernel" } else { "Host event" }}" "<code data-testid="timeline-item-name">{k.name.clone()}</code></h4>
                    <dl class="kv">
                        {row(if device { "stream" } else { "thread" }, k.stream.clone())}
                        {row("start", format!("+{} ({} µs)", format::duration_ms(k.start_ms), k.start_us))}
                        {row("duration", format!("{:.3} µs", k.dur_us))}
                        {row("type", k.op_type.clone())}
                        {row("core / class", format!("{} / {}", k.core, k.class))}
                        {(k.wait_us > 0.0).then(|| row("wait", format!("{:.3} µs", k.wait_us)))}
                        {(!k.shapes.is_empty()).then(|| row("input shapes", k.shapes.clone()))}
                        {(k.source_row > 0).then(|| row("kernel_details.csv line", k.source_row.to_string()))}
                        {k.step_id.clone().map(|s| row("step", s))}
                    </dl>
                    {links}
                </section>
            }
        })
    }
}
