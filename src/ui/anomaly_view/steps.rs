//! The step table: every §5.4 metric, the §3.4 inventory, the §4.5 perspectives, tags and
//! labels of each step. Clicking a row selects the step (`AppState::anomaly_step`): the bubble
//! list, the structure tree and the timeline follow it.

use crate::ui::widgets::note::{failed, pending};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{ask, ms, pct};
use crate::protocol::anomaly::{AnomalyQuery, AnomalyReply, StepRowDto};
use crate::ui::state::AppState;

/// Steps shown at once (the rest behind "show all").
const FIRST_ROWS: usize = 200;

/// The step table of `rank`.
#[component]
pub fn StepsTable(rank: u32) -> impl IntoView {
    let state = expect_context::<AppState>();
    let steps = RwSignal::new(None::<Result<Vec<StepRowDto>, String>>);
    let show_all = RwSignal::new(false);
    spawn_local(async move {
        let res = match ask(AnomalyQuery::Steps { rank }).await {
            Ok(AnomalyReply::Steps { steps, .. }) => Ok(steps),
            Ok(other) => Err(crate::ui::client::unexpected(
                crate::ui::client::anomaly_reply_name(&other),
            )),
            Err(e) => Err(e),
        };
        // `try_`: the table may have been unmounted while the query ran.
        let _ = steps.try_set(Some(res));
    });
    let row = move |s: StepRowDto| {
        let idx = s.index;
        let [aic, aicpu, hccl, other] = s.class_counts;
        let tags = s
            .tags
            .iter()
            .map(|t| view! { <span class="anom-tag small">{t.clone()}</span> })
            .collect_view();
        view! {
            <tr
                data-testid="step-row"
                tabindex="0"
                class:selected=move || state.anomaly_step.get() == Some(idx)
                class:truncated=s.truncated
                on:click=move |_| {
                    state.anomaly_step.set(Some(idx));
                    state.anomaly_bubble.set(None);
                }
            >
                <td><code>{s.step_id.clone()}</code></td>
                <td>{s.group_id.clone()}</td>
                <td class="num" data-testid="step-service">{ms(s.service_ms)}</td>
                <td class="num">{ms(s.device_busy_union_ms)}</td>
                <td class="num">{ms(s.underfeed_ms)}</td>
                <td class="num" data-testid="step-underfeed">{pct(Some(s.underfeed_ratio))}</td>
                <td class="num">{ms(s.prelaunch_gap_ms)}</td>
                <td class="num">{ms(s.tail_gap_ms)}</td>
                <td class="num">{ms(s.internal_bubble_total_ms)}</td>
                <td class="num">{ms(s.largest_internal_bubble_ms)}</td>
                <td class="num" data-testid="step-bubbles">{s.bubble_count.to_string()}</td>
                <td class="num" title=format!("AI_CORE {aic} · AI_CPU {aicpu} · HCCL {hccl} · OTHER {other}")>{s.kernel_count.to_string()}</td>
                <td class="num">{ms(s.kernel_wait_sum_ms)}</td>
                <td class="num" title=s.main_stream.clone().map(|m| format!("main compute stream {m}")).unwrap_or_default()>{s.stream_count.to_string()}</td>
                <td class="num">{ms(s.wall_ms)}</td>
                <td class="num">{ms(s.kernel_sum_ms)}</td>
                <td class="num">{ms(s.total_cost_ms)}</td>
                <td class="num" title=s.small_ops.1.clone()>{s.small_ops.0.to_string()}</td>
                <td>{tags}</td>
                <td class="labels">{s.labels.join(", ")}</td>
            </tr>
        }
    };
    view! {
        <section class="anom-steps" data-testid="steps-table">
            <h3>"Steps"</h3>
            {move || match steps.get() {
                None => pending(),
                Some(Err(e)) => failed(e),
                Some(Ok(rows)) => {
                    let n = rows.len();
                    let shown: Vec<StepRowDto> = if show_all.get() { rows } else { rows.into_iter().take(FIRST_ROWS).collect() };
                    view! {
                        <div class="anom-scroll">
                            <table class="grid anom-steps-grid">
                                <thead>
                                    <tr>
                                        <th>"step"</th><th>"group"</th><th class="num">"service"</th><th class="num">"busy union"</th>
                                        <th class="num">"underfeed"</th><th class="num">"underfeed ratio"</th><th class="num">"prelaunch"</th>
                                        <th class="num">"tail"</th><th class="num">"internal bubbles"</th><th class="num">"largest bubble"</th>
                                        <th class="num">"bubbles"</th><th class="num">"kernels"</th><th class="num">"kernel wait"</th>
                                        <th class="num">"streams"</th><th class="num">"wall"</th><th class="num">"kernel sum"</th>
                                        <th class="num">"total cost"</th><th class="num" title="kernels < 10 µs">"small ops"</th>
                                        <th>"tags"</th><th>"labels"</th>
                                    </tr>
                                </thead>
                                <tbody>{shown.into_iter().map(row).collect_view()}</tbody>
                            </table>
                        </div>
                        {(n > FIRST_ROWS && !show_all.get()).then(|| view! {
                            <button class="button" on:click=move |_| show_all.set(true)>{format!("Show all {n} steps")}</button>
                        })}
                    }
                    .into_any()
                }
            }}
        </section>
    }
}
