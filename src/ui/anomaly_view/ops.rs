//! Op tables of one rank: the wait-anchor ranking (anomaly.md §5.12: two rankings, false
//! hotspots flagged), the AICPU classes (§5.14) and the PMU verdicts (§5.15).

use crate::ui::widgets::note::{failed, muted, pending};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{ask, pct};
use crate::protocol::anomaly::{AnomalyOpsDto, AnomalyQuery, AnomalyReply};

/// The op tables of `rank`.
#[component]
pub fn OpTables(rank: u32) -> impl IntoView {
    let ops = RwSignal::new(None::<Result<AnomalyOpsDto, String>>);
    spawn_local(async move {
        let res = match ask(AnomalyQuery::Ops { rank }).await {
            Ok(AnomalyReply::Ops(o)) => Ok(o),
            Ok(other) => Err(crate::ui::client::unexpected(
                crate::ui::client::anomaly_reply_name(&other),
            )),
            Err(e) => Err(e),
        };
        let _ = ops.try_set(Some(res));
    });
    view! {
        <section class="anom-ops">
            {move || match ops.get() {
                None => pending(),
                Some(Err(e)) => failed(e),
                Some(Ok(o)) => view! {
                    <h3>"Wait anchors"</h3>
                    <p class="muted">{format!(
                        "{} ops ranked by mean total cost (duration + wait); showing {}. A tiny op with a huge wait is flagged as a false hotspot: look upstream, do not optimise it.",
                        o.wait_anchor_total, o.wait_anchors.len()
                    )}</p>
                    <div class="anom-scroll anom-ops-scroll">
                        <table class="grid" data-testid="wait-anchor-table">
                            <thead><tr>
                                <th class="num">"cost rank"</th><th class="num">"duration rank"</th><th>"op"</th><th>"task"</th>
                                <th class="num">"calls"</th><th class="num">"duration (mean)"</th><th class="num">"wait (mean)"</th>
                                <th class="num">"total cost (mean)"</th><th class="num">"wait ratio"</th><th>"flags"</th>
                            </tr></thead>
                            <tbody>
                                {o.wait_anchors.into_iter().map(|w| {
                                    let mut flags = Vec::new();
                                    if w.is_false_hotspot_risk { flags.push("false hotspot"); }
                                    if w.wait_pollution { flags.push("wait pollution"); }
                                    view! {
                                        <tr data-testid="wait-anchor-row" class:flagged=w.is_false_hotspot_risk>
                                            <td class="num">{w.total_cost_rank.to_string()}</td>
                                            <td class="num">{w.duration_rank.to_string()}</td>
                                            <td><code>{w.op_name}</code></td>
                                            <td>{w.task_type}</td>
                                            <td class="num">{w.call_count.to_string()}</td>
                                            <td class="num">{format!("{:.3} µs", w.duration_us_avg)}</td>
                                            <td class="num">{format!("{:.3} µs", w.wait_us_avg)}</td>
                                            <td class="num">{format!("{:.3} µs", w.total_cost_us_avg)}</td>
                                            <td class="num">{format!("{:.4}", w.wait_ratio)}</td>
                                            <td title="WAIT_ANCHOR_FALSE_HOTSPOT / WAIT_POLLUTION_RISK">{flags.join(", ")}</td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    </div>
                    <h3>"AICPU ops"</h3>
                    {if o.aicpu.is_empty() {
                        view! { <p class="muted" data-testid="aicpu-none">"No AI_CPU kernels in this rank."</p> }.into_any()
                    } else {
                        view! {
                            <table class="grid" data-testid="aicpu-table">
                                <thead><tr><th>"op"</th><th class="num">"calls"</th><th class="num">"duration"</th><th class="num">"masked by AI_CORE"</th><th class="num">"exposed"</th><th>"class"</th></tr></thead>
                                <tbody>
                                    {o.aicpu.into_iter().map(|a| view! {
                                        <tr>
                                            <td><code>{a.op_name}</code></td>
                                            <td class="num">{a.call_count.to_string()}</td>
                                            <td class="num">{format!("{:.3} ms", a.duration_ms)}</td>
                                            <td class="num">{pct(Some(a.masked_ratio))}</td>
                                            <td class="num">{format!("{:.3} ms", a.exposed_ms)}</td>
                                            <td>{a.class}</td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any()
                    }}
                    <h3>"PMU judgement"</h3>
                    {match o.pmu {
                        None => muted("PMU judgement unavailable"),
                        Some(v) => view! {
                            <table class="grid" data-testid="pmu-table">
                                <thead><tr><th>"op (top 10 by duration)"</th><th>"verdict"</th></tr></thead>
                                <tbody>{v.into_iter().map(|(n, verdict)| view! { <tr><td><code>{n}</code></td><td>{verdict}</td></tr> }).collect_view()}</tbody>
                            </table>
                        }.into_any(),
                    }}
                }
                .into_any(),
            }}
        </section>
    }
}
