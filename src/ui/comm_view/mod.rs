//! The Communication tab (docs/rules/communication.md): per step and group, the time summary
//! of each rank (stacked transit / wait / synchronization / idle bars and the ratios), the
//! bandwidth per transport, the link matrix as a heatmap, who arrived last per op, the slow
//! links and slow ranks with their evidence, the GPU collectives, and the exports (the CLI's
//! `comm.json` and CSV tables). Everything shown is in the payloads the worker that joined the
//! ranks sent (`CommOverviewDto`, `CommMatrixDto`); this module only renders.

mod heatmap;
mod heatmap_draw;
mod tables;

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::protocol::comm::{CommExportKind, CommOverviewDto};
use crate::protocol::ExportRequest;
use crate::ui::client::client;
use crate::ui::route::{use_route, COMM_GROUP, COMM_STEP};
use crate::ui::state::{AppState, CommStatus};

/// The tab.
#[component]
pub fn CommView() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        match state.comm.get() {
        CommStatus::None | CommStatus::Joining => view! {
            <p class="muted" data-testid="comm-waiting">"Joining the ranks' communication tables… (after every rank folder is read)"</p>
        }
        .into_any(),
        CommStatus::Failed(e) => view! { <p class="notice" data-testid="comm-failed">{format!("The communication analysis failed: {e}")}</p> }.into_any(),
        CommStatus::Ready(o) => view! { <Comm view=o/> }.into_any(),
    }
    }
}

/// The group's label in the selector: `name (hash) · n ranks`.
fn group_label(o: &CommOverviewDto, g: &str) -> String {
    match o.groups.iter().find(|x| x.group == g) {
        Some(x) => {
            let name = if x.name.is_empty() {
                "group".to_string()
            } else {
                x.name.clone()
            };
            let n = if x.global_ranks.is_empty() {
                x.present.len()
            } else {
                x.global_ranks.len()
            };
            let missing = if x.missing.is_empty() {
                String::new()
            } else {
                format!(", {} missing", x.missing.len())
            };
            format!("{name} ({g}) · {} · {n} ranks{missing}", x.section)
        }
        None => g.to_string(),
    }
}

#[component]
fn Comm(view: Arc<CommOverviewDto>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let route = use_route();
    let step = RwSignal::new(String::new());
    let group = RwSignal::new(String::new());
    route.bind(COMM_STEP, step);
    route.bind(COMM_GROUP, group);
    // Defaults: the first step; the group with the most ranks (its matrix says most).
    let v = view.clone();
    if !v.steps.contains(&step.get_untracked()) {
        step.set(v.steps.first().cloned().unwrap_or_default());
    }
    let groups_of = {
        let v = view.clone();
        move |s: &str| -> Vec<String> {
            let mut out: Vec<String> = Vec::new();
            for g in v
                .time
                .iter()
                .filter(|t| t.step == s)
                .map(|t| &t.group)
                .chain(v.matrices.iter().filter(|m| m.step == s).map(|m| &m.group))
            {
                if !out.contains(g) {
                    out.push(g.clone());
                }
            }
            out
        }
    };
    let pick_group = {
        let v = view.clone();
        let groups_of = groups_of.clone();
        move |s: &str| -> String {
            let gs = groups_of(s);
            gs.iter()
                .max_by_key(|g| {
                    let n = v
                        .groups
                        .iter()
                        .find(|x| &x.group == *g)
                        .map_or(0, |x| x.global_ranks.len().max(x.present.len()));
                    (n, std::cmp::Reverse(gs.iter().position(|y| y == *g)))
                })
                .cloned()
                .unwrap_or_default()
        }
    };
    if !groups_of(&step.get_untracked()).contains(&group.get_untracked()) {
        group.set(pick_group(&step.get_untracked()));
    }
    let on_step = {
        let groups_of = groups_of.clone();
        let pick_group = pick_group.clone();
        move |s: String| {
            if !groups_of(&s).contains(&group.get_untracked()) {
                group.set(pick_group(&s));
            }
            step.set(s);
        }
    };
    let step_options = view
        .steps
        .iter()
        .map(|s| {
            let s2 = s.clone();
            view! { <option value=s.clone() selected=move || step.get() == s2>{s.clone()}</option> }
        })
        .collect_view();
    let group_options = {
        let v = view.clone();
        move || {
            groups_of(&step.get())
                .into_iter()
                .map(|g| {
                    let g2 = g.clone();
                    view! { <option value=g.clone() selected=move || group.get() == g2>{group_label(&v, &g)}</option> }
                })
                .collect_view()
        }
    };
    let v = view.clone();
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    // At most 16 rank ids spelled out; more as a count.
    let ids = match v.ranks.len() {
        0..=16 => v
            .ranks
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        _ => format!("{} … {}", v.ranks[0], v.ranks[v.ranks.len() - 1]),
    };
    let facts = match v.ranks.is_empty() {
        // GPU traces only: the NCCL collectives are the whole tab.
        true => format!(
            "GPU traces: {} across ranks (TraceLens' NCCL rules)",
            plural(v.collectives.len(), "collective", "collectives")
        ),
        false => format!(
            "{} ({}) · {} · {} step(s) · {} matrix links ({} recovered from parallel_group_info, {} dropped) · {} ops on part of their group · mode: {}",
            plural(v.ranks.len(), "rank", "ranks"),
            ids,
            plural(v.groups.len(), "group", "groups"),
            v.steps.len(),
            v.matrix_links,
            v.recovered_links,
            v.dropped_links,
            v.partial_ops,
            if v.parity { "msprof-analyze parity" } else { "default" },
        ),
    };
    let parity = v.parity;
    let toggle_parity = move |_| {
        spawn_local(async move { client().join_comm(!parity).await });
    };
    let busy = RwSignal::new(false);
    let export = move |what: CommExportKind| {
        busy.set(true);
        let label = match &what {
            CommExportKind::Json => "comm.json".to_string(),
            CommExportKind::Csv(t) => format!("{t}.csv"),
        };
        state.status.set(format!("Writing {label}…"));
        spawn_local(async move {
            match client().export(ExportRequest::Comm(what)).await {
                Ok(line) => state.status.set(line),
                Err(e) => state.status.set(format!("Export failed: {e}")),
            }
            busy.set(false);
        });
    };
    let csv_button = move |table: String| {
        let name = table.clone();
        view! {
            <button class="button" data-testid=format!("comm-export-{table}") disabled=move || busy.get()
                on:click=move |_| export(CommExportKind::Csv(name.clone()))>{format!("{table}.csv")}</button>
        }
    };
    let has_ascend = !view.ranks.is_empty();
    let has_gpu = !view.collectives.is_empty();
    view! {
        <section class="comm" data-testid="comm-view">
            <div class="cluster-head">
                <h2>"Communication across ranks"</h2>
                <p data-testid="comm-facts">{facts}</p>
                <p class="muted">
                    "The numbers are those of "<code>"proflens comm"</code>" (msprof-analyze's time and bandwidth summaries and matrix; docs/rules/communication.md). "
                    {has_ascend.then(|| view! {
                        <label title="msprof-analyze drops the links whose end has no self link; the default maps them from parallel_group_info">
                            <input type="checkbox" data-testid="comm-parity" prop:checked=parity on:change=toggle_parity/>
                            " msprof-analyze parity (drop unmapped links)"
                        </label>
                    })}
                </p>
            </div>
            {(!has_ascend && !has_gpu).then(|| view! {
                <p class="notice" data-testid="comm-nothing">"No communication data could be read from this drop: no rank's communication.json, communication_matrix.json or analysis.db communication tables, and no NCCL collective with its arguments in a GPU trace. The Problems tab says what each file lacked."</p>
            })}
            {(has_ascend || has_gpu).then(|| view! {
                <div class="exports">
                    <span>"Export: "</span>
                    <button class="button" data-testid="comm-export-json" disabled=move || busy.get() on:click=move |_| export(CommExportKind::Json)>"comm.json (as the CLI)"</button>
                    {view.csv_tables.iter().map(|t| csv_button(t.clone())).collect_view()}
                </div>
            })}
            {has_ascend.then(|| view! {
                <div class="filters">
                    <label>"Step "
                        <select data-testid="comm-step" on:change=move |ev| on_step(event_target_value(&ev))>{step_options}</select>
                    </label>
                    <label>" Group "
                        <select data-testid="comm-group" on:change=move |ev| group.set(event_target_value(&ev))>{group_options}</select>
                    </label>
                </div>
            })}
            {has_ascend.then(|| view! {
                <tables::TimeTable view=view.clone() step=step group=group/>
                <tables::BandTable view=view.clone() step=step group=group/>
                <heatmap::Matrix view=view.clone() step=step group=group/>
                <tables::Arrivals view=view.clone() step=step group=group/>
                <tables::Slow view=view.clone()/>
            })}
            <tables::Collectives view=view.clone()/>
        </section>
    }
}
