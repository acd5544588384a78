//! The bubble list (sorted and filtered in the worker: label, scope, the selected step) and
//! the bubble panel: window, the three overlap ratios, labels with the rule that gave each,
//! `evidence_ops` and the kernels just before and after. The selected bubble is
//! `AppState::anomaly_bubble`, shared with the timeline.

use crate::ui::widgets::note::{failed, muted};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{ask, ms, pct};
use crate::protocol::anomaly::{
    AnomalyQuery, AnomalyReply, BubbleColumn, BubbleDetailDto, BubblePage, BubbleQuery, KernelDto,
};
use crate::ui::state::AppState;
use crate::views::format;

/// Tooltip of a relative time: the absolute instant on the profiler's clock.
fn absolute_title(us: f64) -> String {
    format!("absolute: {us:.3} µs on the profiler clock (epoch-based)")
}

/// Rows per page.
const PAGE: u32 = 50;

const COLUMNS: &[(BubbleColumn, &str, bool)] = &[
    (BubbleColumn::Order, "#", true),
    (BubbleColumn::Scope, "scope", false),
    (BubbleColumn::Start, "start (from capture start)", true),
    (BubbleColumn::Duration, "duration", true),
    (BubbleColumn::Host, "host", true),
    (BubbleColumn::Sync, "sync", true),
    (BubbleColumn::Comm, "comm", true),
];

/// The bubble list of `rank`; `labels` are the filter choices with their counts; starts are
/// shown relative to `t0_us` (the capture start).
#[component]
pub fn BubbleList(rank: u32, labels: Vec<(String, u32)>, t0_us: f64) -> impl IntoView {
    let state = expect_context::<AppState>();
    let sort = RwSignal::new((BubbleColumn::Duration, true));
    let label = RwSignal::new(String::new());
    let scope = RwSignal::new(String::new());
    let only_step = RwSignal::new(false);
    let offset = RwSignal::new(0u32);
    let page = RwSignal::new(None::<Result<BubblePage, String>>);
    let generation = StoredValue::new(0u32);
    // Filters and sort restart at the first page.
    Effect::new(move |_| {
        sort.track();
        label.track();
        scope.track();
        only_step.track();
        offset.set(0);
    });
    Effect::new(move |_| {
        let q = BubbleQuery {
            rank,
            sort: sort.get().0,
            descending: sort.get().1,
            label: label.get(),
            scope: scope.get(),
            step: if only_step.get() {
                state.anomaly_step.get()
            } else {
                None
            },
            offset: offset.get(),
            limit: PAGE,
        };
        generation.update_value(|g| *g += 1);
        let g = generation.get_value();
        spawn_local(async move {
            let res = match ask(AnomalyQuery::Bubbles(q)).await {
                Ok(AnomalyReply::Bubbles(p)) => Ok(p),
                Ok(other) => Err(crate::ui::client::unexpected(
                    crate::ui::client::anomaly_reply_name(&other),
                )),
                Err(e) => Err(e),
            };
            if generation.try_get_value() == Some(g) {
                page.set(Some(res));
            }
        });
    });
    let header = COLUMNS
        .iter()
        .map(|&(col, name, num)| {
            let arrow = move || match sort.get() {
                (c, d) if c == col => {
                    if d {
                        " ▼"
                    } else {
                        " ▲"
                    }
                }
                _ => "",
            };
            view! {
                <th class:num=num class="sortable" tabindex="0" data-col=format!("{col:?}")
                    on:click=move |_| sort.update(|s| *s = if s.0 == col { (col, !s.1) } else { (col, num) })>
                    {name}{arrow}
                </th>
            }
        })
        .collect_view();
    let label_options = labels
        .into_iter()
        .map(|(l, n)| {
            let text = format!("{l} ({n})");
            view! { <option value=l>{text}</option> }
        })
        .collect_view();
    let rows = move || {
        let Some(Ok(p)) = page.get() else {
            return Vec::new();
        };
        p.rows
            .into_iter()
            .map(|b| {
                let idx = b.index;
                view! {
                    <tr
                        data-testid="bubble-row"
                        tabindex="0"
                        class:selected=move || state.anomaly_bubble.get() == Some(idx)
                        class:significant=b.significant
                        on:click=move |_| state.anomaly_bubble.set(Some(idx))
                    >
                        <td class="num">{idx.to_string()}</td>
                        <td>{b.scope.clone()}</td>
                        <td class="num" title=absolute_title(b.start_us)>{format::offset_ms(b.start_us / 1000.0, t0_us / 1000.0)}</td>
                        <td class="num">{ms(b.duration_ms)}</td>
                        <td class="num">{pct(b.host_ratio)}</td>
                        <td class="num">{pct(b.sync_ratio)}</td>
                        <td class="num">{pct(b.comm_ratio)}</td>
                        <td><code>{b.step_id.clone()}</code></td>
                        <td class="labels">{b.labels.join(", ")}</td>
                    </tr>
                }
            })
            .collect::<Vec<_>>()
    };
    let pager = move || {
        let Some(Ok(p)) = page.get() else {
            return None;
        };
        let (o, m) = (p.offset, p.matching);
        // Computed outside `view!`: a `>` inside an attribute closure ends the tag there.
        let at_end = o + PAGE >= m;
        Some(view! {
            <span class="muted" data-testid="bubble-count">
                {format!("{}–{} of {} ({} emitted)", if m == 0 { 0 } else { o + 1 }, (o + PAGE).min(m), m, p.total)}
            </span>
            <button class="button" data-testid="bubble-prev" disabled=move || { o == 0 } on:click=move |_| offset.set(o.saturating_sub(PAGE))>"‹"</button>
            <button class="button" data-testid="bubble-next" disabled=at_end on:click=move |_| offset.set(o + PAGE)>"›"</button>
        })
    };
    view! {
        <section class="anom-bubble-list" data-testid="bubble-list">
            <h3>"Bubbles"</h3>
            <div class="filters">
                <select data-testid="bubble-label" on:change=move |ev| label.set(event_target_value(&ev))>
                    <option value="">"all labels"</option>
                    {label_options}
                </select>
                <select data-testid="bubble-scope" on:change=move |ev| scope.set(event_target_value(&ev))>
                    <option value="">"all scopes"</option>
                    <option value="global">"global"</option>
                    <option value="prelaunch">"prelaunch"</option>
                    <option value="step_internal">"step internal"</option>
                    <option value="tail">"tail"</option>
                </select>
                <label title="only the bubbles of the step selected in the step table">
                    <input type="checkbox" on:change=move |ev| only_step.set(event_target_checked(&ev))/>
                    " selected step only"
                </label>
                {pager}
            </div>
            {move || match page.get() {
                Some(Err(e)) => Some(failed(e)),
                _ => None,
            }}
            <div class="anom-scroll">
                <table class="grid overview">
                    <thead><tr>{header}<th>"step"</th><th>"labels"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </section>
    }
}

/// `gpu`: a PyTorch profiler rank, whose kernels come from the trace (no CSV line to show).
fn kernel_line(title: &'static str, k: Option<KernelDto>, t0_us: f64, gpu: bool) -> impl IntoView {
    view! {
        <dt>{title}</dt>
        <dd>
            {match k {
                None => view! { <span class="muted">"none"</span> }.into_any(),
                Some(k) => view! {
                    <code>{k.name.clone()}</code>
                    <span title=absolute_title(k.start_us)>{format!(
                        " · {} · {} (wait {}) · stream {} · starts {}{}",
                        k.task_type, format::duration_ms(k.dur_us / 1000.0), format::duration_ms(k.wait_us / 1000.0), k.stream,
                        format::offset_ms(k.start_us / 1000.0, t0_us / 1000.0),
                        if k.row > 0 && !gpu { format!(" · CSV line {}", k.row) } else { String::new() }
                    )}</span>
                }.into_any(),
            }}
        </dd>
    }
}

/// The selected bubble in full. `gpu`: a PyTorch profiler rank, whose `h2d_flow_count` counts
/// the launches issued inside the window (ARCHITECTURE.md, GPU decisions) rather than
/// Ascend's `HostToDevice` / `torch_to_npu` flow ends (anomaly.md §5.6).
#[component]
pub fn BubblePanel(rank: u32, t0_us: f64, gpu: bool) -> impl IntoView {
    let (flow_label, flow_title) = if gpu {
        (
            "launches inside",
            "h2d_flow_count on a GPU rank: device ops whose launching runtime call (same correlation, the ac2g flow) started inside this window — launched while the device was idle",
        )
    } else {
        (
            "H2D flows",
            "h2d_flow_count: HostToDevice / torch_to_npu flow end points inside this window",
        )
    };
    let state = expect_context::<AppState>();
    let detail = RwSignal::new(None::<Result<BubbleDetailDto, String>>);
    Effect::new(move |_| {
        let Some(index) = state.anomaly_bubble.get() else {
            detail.set(None);
            return;
        };
        spawn_local(async move {
            let res = match ask(AnomalyQuery::Bubble { rank, index }).await {
                Ok(AnomalyReply::Bubble(d)) => Ok(d),
                Ok(other) => Err(crate::ui::client::unexpected(
                    crate::ui::client::anomaly_reply_name(&other),
                )),
                Err(e) => Err(e),
            };
            if state.anomaly_bubble.try_get_untracked() == Some(Some(index)) {
                let _ = detail.try_set(Some(res));
            }
        });
    });
    view! {
        <aside class="anom-bubble-panel" data-testid="bubble-panel">
            <h4>"Bubble"</h4>
            {move || match detail.get() {
                None => muted("Click a bubble (in the list or on the timeline) to see its window, ratios, labels, evidence and the kernels around it."),
                Some(Err(e)) => failed(e),
                Some(Ok(d)) => {
                    let b = d.bubble.clone();
                    let rel = d.step_window_us.map(|(s, e)| format!(" · {} into the step window ({} long)", format::offset_ms(b.start_us / 1000.0, s / 1000.0), format::duration_ms((e - s) / 1000.0))).unwrap_or_default();
                    view! {
                        <p data-testid="bubble-id"><code>{b.bubble_id.clone()}</code>{if b.significant { " · significant" } else { "" }}</p>
                        <dl class="facts">
                            <dt>"window"</dt>
                            <dd data-testid="bubble-window" title=format!("{} – {}", absolute_title(b.start_us), absolute_title(b.end_us))>{format!("{} – {} · {}{}", format::offset_ms(b.start_us / 1000.0, t0_us / 1000.0), format::offset_ms(b.end_us / 1000.0, t0_us / 1000.0), ms(b.duration_ms), rel)}</dd>
                            <dt>"scope"</dt><dd>{format!("{} · step {}", b.scope, b.step_id)}</dd>
                            <dt>"structure"</dt>
                            <dd>{match (&b.structure_id, b.between_structures) {
                                (_, true) => "between two structures".to_string(),
                                (Some(s), _) => format!("inside {s}"),
                                (None, _) => "–".to_string(),
                            }}</dd>
                            <dt>"host coverage"</dt><dd data-testid="ratio-host">{pct(b.host_ratio)}</dd>
                            <dt>"sync / copy overlap"</dt><dd data-testid="ratio-sync">{pct(b.sync_ratio)}</dd>
                            <dt>"comm marker overlap"</dt><dd data-testid="ratio-comm">{pct(b.comm_ratio)}</dd>
                            <dt>"host parallelism"</dt><dd>{d.host_parallelism_hint.map(|h| format::fixed(h, 2)).unwrap_or_else(|| "–".into())}</dd>
                            <dt title=flow_title>{flow_label}</dt><dd data-testid="bubble-flows">{d.h2d_flow_count.to_string()}</dd>
                            {kernel_line("before", d.before.clone(), t0_us, gpu)}
                            {kernel_line("after", d.after.clone(), t0_us, gpu)}
                            {kernel_line("before (main stream)", d.before_main.clone(), t0_us, gpu)}
                            {kernel_line("after (main stream)", d.after_main.clone(), t0_us, gpu)}
                            {(!b.tags.is_empty()).then(|| view! { <dt>"tags"</dt><dd>{b.tags.join(", ")}</dd> })}
                        </dl>
                        <h4>"Candidate labels (possible causes, never certain)"</h4>
                        <ul data-testid="bubble-labels">{d.reasons.iter().map(|r| view! { <li>{r.clone()}</li> }).collect_view()}</ul>
                        <h4>"Evidence"</h4>
                        <ul>{d.evidence_ops.iter().map(|e| view! { <li><code>{e.clone()}</code></li> }).collect_view()}</ul>
                    }
                    .into_any()
                }
            }}
        </aside>
    }
}
