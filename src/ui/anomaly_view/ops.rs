//! Op tables of one rank: the wait-anchor ranking (anomaly.md §5.12: two rankings, false
//! hotspots flagged), the AICPU classes (§5.14) and the PMU verdicts (§5.15).

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{ask, pct};
use crate::protocol::anomaly::{AnomalyOpsDto, AnomalyQuery, AnomalyReply};
use crate::ui::widgets::table::data_table;
use crate::views::cells::{Cell, Head, Row, Table};

/// The op tables of `rank`.
#[component]
pub fn OpTables(rank: u32) -> impl IntoView {
    let ops = RwSignal::new(None::<Result<AnomalyOpsDto, String>>);
    spawn_local(async move {
        let res = match ask(AnomalyQuery::Ops { rank }).await {
            Ok(AnomalyReply::Ops(o)) => Ok(o),
            Ok(other) => Err(format!(
                "unexpected reply {}",
                crate::ui::client::anomaly_reply_name(&other)
            )),
            Err(e) => Err(e),
        };
        let _ = ops.try_set(Some(res));
    });
    view! {
        <section class="anom-ops">
            {move || match ops.get() {
                None => view! { <p class="muted">"…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="notice error">{e}</p> }.into_any(),
                Some(Ok(o)) => view! {
                    <h3>"Wait anchors"</h3>
                    <p class="muted">{format!(
                        "{} ops ranked by mean total cost (duration + wait); showing {}. A tiny op with a huge wait is flagged as a false hotspot: look upstream, do not optimise it.",
                        o.wait_anchor_total, o.wait_anchors.len()
                    )}</p>
                    <div class="anom-scroll anom-ops-scroll">
                        {data_table(
                            const { &Table::new("grid", const { &[
                                Head::num("cost rank"), Head::num("duration rank"), Head::new("op"), Head::new("task"),
                                Head::num("calls"), Head::num("duration (mean)"), Head::num("wait (mean)"),
                                Head::num("total cost (mean)"), Head::num("wait ratio"), Head::new("flags"),
                            ] }).testid("wait-anchor-table") },
                            o.wait_anchors.into_iter().map(|w| {
                                let mut flags = Vec::new();
                                if w.is_false_hotspot_risk { flags.push("false hotspot"); }
                                if w.wait_pollution { flags.push("wait pollution"); }
                                Row::new(vec![
                                    Cell::num(w.total_cost_rank.to_string()),
                                    Cell::num(w.duration_rank.to_string()),
                                    Cell::code(w.op_name),
                                    Cell::text(w.task_type),
                                    Cell::num(w.call_count.to_string()),
                                    Cell::num(format!("{:.3} µs", w.duration_us_avg)),
                                    Cell::num(format!("{:.3} µs", w.wait_us_avg)),
                                    Cell::num(format!("{:.3} µs", w.total_cost_us_avg)),
                                    Cell::num(format!("{:.4}", w.wait_ratio)),
                                    Cell::text(flags.join(", ")).title("WAIT_ANCHOR_FALSE_HOTSPOT / WAIT_POLLUTION_RISK"),
                                ]).testid("wait-anchor-row").class(w.is_false_hotspot_risk.then_some("flagged"))
                            }).collect(),
                        )}
                    </div>
                    <h3>"AICPU ops"</h3>
                    {if o.aicpu.is_empty() {
                        view! { <p class="muted" data-testid="aicpu-none">"No AI_CPU kernels in this rank."</p> }.into_any()
                    } else {
                        data_table(
                                const { &Table::new("grid", const { &[Head::new("op"), Head::num("calls"), Head::num("duration"), Head::num("masked by AI_CORE"), Head::num("exposed"), Head::new("class")] })
                                    .testid("aicpu-table") },
                                o.aicpu.into_iter().map(|a| Row::new(vec![
                                    Cell::code(a.op_name),
                                    Cell::num(a.call_count.to_string()),
                                    Cell::num(format!("{:.3} ms", a.duration_ms)),
                                    Cell::num(pct(Some(a.masked_ratio))),
                                    Cell::num(format!("{:.3} ms", a.exposed_ms)),
                                    Cell::text(a.class),
                                ])).collect(),
                            ).into_any()
                    }}
                    <h3>"PMU judgement"</h3>
                    {match o.pmu {
                        None => view! { <p class="muted">"PMU judgement unavailable"</p> }.into_any(),
                        Some(v) => data_table(
                                const { &Table::new("grid", const { &[Head::new("op (top 10 by duration)"), Head::new("verdict")] }).testid("pmu-table") },
                                v.into_iter().map(|(n, verdict)| Row::new(vec![Cell::code(n), Cell::text(verdict)])).collect(),
                            ).into_any(),
                    }}
                }
                .into_any(),
            }}
        </section>
    }
}
