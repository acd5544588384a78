//! The rank table of the cluster view: virtualised (only the visible rows and a few below
//! exist in the DOM, `views::virtual_list`), sortable by every column, filtered by role, slow
//! and status (`views::cluster_table`). The order is computed once per sort / filter change
//! from the rows the page holds; a scroll only re-renders the window.

use std::sync::Arc;

use leptos::ev;
use leptos::html::Div;
use leptos::prelude::*;

use crate::protocol::cluster_view::{
    ClusterColumn, ClusterFilter, ClusterRankRow, ClusterSort, ClusterViewDto,
};
use crate::views::cluster_table::{choices, order};
use crate::views::format;
use crate::views::virtual_list::{spacer_height, window};

/// Row height, px (must match `.ct-row` in web/style.css).
pub const ROW_H: f64 = 24.0;
/// Viewport height, px.
const VIEW_H: f64 = 480.0;
/// Rows rendered below the visible ones.
const OVERSCAN: u32 = 6;

/// Columns: sort key, label, numeric (right-aligned, descending first), tooltip.
const COLUMNS: &[(ClusterColumn, &str, bool, &str)] = &[
    (ClusterColumn::Rank, "rank", true, "rank id"),
    (
        ClusterColumn::Role,
        "role",
        false,
        "role (the folder above the rank folders, or the metadata role)",
    ),
    (
        ClusterColumn::Status,
        "status",
        false,
        "ok, partial (some input unusable) or failed",
    ),
    (ClusterColumn::Steps, "steps", true, "steps analysed"),
    (
        ClusterColumn::ServiceMs,
        "service",
        true,
        "mean step service time",
    ),
    (
        ClusterColumn::BusyUnionMs,
        "busy union",
        true,
        "mean device busy union per step",
    ),
    (
        ClusterColumn::UnderfeedRatio,
        "underfeed",
        true,
        "mean underfeed ratio: idle device time in the step's service window",
    ),
    (
        ClusterColumn::CommWait,
        "comm wait",
        true,
        "communication wait ratio (weighted)",
    ),
    (
        ClusterColumn::Bubbles,
        "bubbles",
        true,
        "mean internal bubbles per step",
    ),
    (
        ClusterColumn::RobustZ,
        "robust z",
        true,
        "robust z of the mean service time across ranks: how many median absolute deviations a rank lies from the median",
    ),
    (
        ClusterColumn::Slow,
        "slow",
        true,
        "flagged slow: > 5 % above the median and robust z > 3",
    ),
    (
        ClusterColumn::Pattern,
        "idle pattern",
        false,
        "the rank's dominant idle (bubble) pattern",
    ),
    (ClusterColumn::Peak, "peak", true, "peak allocated memory"),
    (
        ClusterColumn::Problems,
        "problems",
        true,
        "errors / warnings of the rank",
    ),
    (
        ClusterColumn::RankDir,
        "rank folder",
        false,
        "the rank's folder as the summary names it",
    ),
];

fn opt_ms(v: Option<f64>) -> String {
    v.map(format::duration_ms).unwrap_or_else(|| "–".into())
}

fn opt_num(v: Option<f64>, decimals: usize) -> String {
    v.map(|v| format::fixed(v, decimals))
        .unwrap_or_else(|| "–".into())
}

/// The rank table; clicking a row selects it (`selected` holds the row's summary index).
#[component]
pub fn RankTable(view: Arc<ClusterViewDto>, selected: RwSignal<Option<u32>>) -> impl IntoView {
    let rows: Arc<Vec<ClusterRankRow>> = Arc::new(view.ranks.clone());
    let sort = RwSignal::new(None::<ClusterSort>);
    let filter = RwSignal::new(ClusterFilter::default());
    let scroll_top = RwSignal::new(0.0f64);
    let viewport = NodeRef::<Div>::new();
    let ids = {
        let rows = rows.clone();
        Memo::new(move |_| Arc::new(order(&rows, sort.get(), &filter.get())))
    };
    // a new sort or filter starts at the top
    Effect::new(move |_| {
        sort.track();
        filter.track();
        if let Some(el) = viewport.get_untracked() {
            el.set_scroll_top(0);
        }
        scroll_top.set(0.0);
    });
    let roles = choices(&rows, |r| &r.role);
    let statuses = choices(&rows, |r| &r.status);
    let header = COLUMNS
        .iter()
        .map(|&(col, label, num, tip)| {
            let arrow = move || match sort.get() {
                Some(k) if k.column == col => if k.descending { " ▼" } else { " ▲" },
                _ => "",
            };
            view! {
                <div
                    class="vt-cell vt-head"
                    class:num=num
                    data-col=format!("{col:?}")
                    role="button"
                    tabindex="0"
                    title=format!("{tip}. Click to sort.")
                    aria-sort=move || match sort.get() {
                        Some(k) if k.column == col => if k.descending { "descending" } else { "ascending" },
                        _ => "none",
                    }
                    on:click=move |_| cycle_sort(sort, col, num)
                    on:keydown=move |ev: ev::KeyboardEvent| if ev.key() == "Enter" { cycle_sort(sort, col, num) }
                >
                    {label}
                    {arrow}
                </div>
            }
        })
        .collect_view();
    let total = move || ids.with(|i| i.len() as u32);
    let win = Memo::new(move |_| window(scroll_top.get(), VIEW_H, total(), ROW_H, OVERSCAN));
    // Keyed by rank: a scroll by a few rows creates only the rows that come into view and
    // keeps the others (no text is laid out again), so a frame costs the new rows only.
    let visible = move || {
        let w = win.get();
        ids.with(|i| i[w.first as usize..(w.first + w.count) as usize].to_vec())
    };
    let body = {
        let rows = rows.clone();
        view! {
            <For each=visible key=|i| *i let:i>
                {row_view(&rows[i as usize], selected)}
            </For>
        }
    };
    let role_options = roles
        .into_iter()
        .map(|r| {
            let label = if r.is_empty() {
                "(no role)".to_string()
            } else {
                r.clone()
            };
            view! { <option value=r>{label}</option> }
        })
        .collect_view();
    let status_options = statuses
        .into_iter()
        .map(|s| {
            let label = s.clone();
            view! { <option value=s>{label}</option> }
        })
        .collect_view();
    let pick = |v: String| (v != "*").then_some(v);
    let n_all = rows.len();
    view! {
        <section class="cluster-table">
            <div class="filters">
                <label>"role "
                    <select data-testid="cluster-role" on:change=move |ev| { let v = pick(event_target_value(&ev)); filter.update(|f| f.role = v) }>
                        <option value="*">"all"</option>
                        {role_options}
                    </select>
                </label>
                <label>"status "
                    <select data-testid="cluster-status" on:change=move |ev| { let v = pick(event_target_value(&ev)); filter.update(|f| f.status = v) }>
                        <option value="*">"all"</option>
                        {status_options}
                    </select>
                </label>
                <label>
                    <input type="checkbox" data-testid="cluster-slow-only" on:change=move |ev| { let on = event_target_checked(&ev); filter.update(|f| f.slow_only = on) }/>
                    " slow ranks only"
                </label>
                <span class="muted" data-testid="cluster-row-count">
                    {move || format!("{} of {} ranks", format::thousands(total() as i64), format::thousands(n_all as i64))}
                </span>
            </div>
            <div class="vt ct" data-testid="cluster-table">
                <div class="ct-row vt-header">{header}</div>
                <div
                    class="vt-viewport"
                    tabindex="0"
                    data-testid="cluster-viewport"
                    node_ref=viewport
                    style=format!("height:{VIEW_H}px")
                    on:scroll=move |ev: ev::Event| {
                        let el: web_sys::Element = event_target(&ev);
                        scroll_top.set(el.scroll_top() as f64);
                    }
                >
                    <div class="vt-spacer" style=move || format!("height:{}px", spacer_height(total(), ROW_H))></div>
                    <div class="vt-rows" style=move || format!("transform:translateY({}px)", win.get().top_px)>{body}</div>
                </div>
            </div>
        </section>
    }
}

fn row_view(r: &ClusterRankRow, selected: RwSignal<Option<u32>>) -> impl IntoView {
    let id = r.index;
    let problems = if r.errors + r.warnings + r.problems_dropped == 0 {
        "–".to_string()
    } else {
        format!("{} / {}", r.errors, r.warnings)
    };
    let rank_attr = r.rank_id.map(|v| v.to_string()).unwrap_or_default();
    let rank_text = r
        .rank_id
        .map(|v| v.to_string())
        .unwrap_or_else(|| "?".into());
    view! {
        <div
            class=if r.slow { "ct-row slow" } else if r.status == "failed" { "ct-row failed" } else { "ct-row" }
            data-testid="cluster-row"
            data-rank=rank_attr
            data-slow=r.slow.to_string()
            class:selected=move || selected.get() == Some(id)
            on:click=move |_| selected.set(Some(id))
        >
            <div class="vt-cell num">{rank_text}</div>
            <div class="vt-cell" title=r.role.clone()>{r.role.clone()}</div>
            <div class="vt-cell">{r.status.clone()}</div>
            <div class="vt-cell num">{r.steps.to_string()}</div>
            <div class="vt-cell num" data-testid="cluster-service">{opt_ms(r.service_ms_avg)}</div>
            <div class="vt-cell num">{opt_ms(r.busy_union_ms_avg)}</div>
            <div class="vt-cell num">{format::percent(r.underfeed_ratio_avg, 1)}</div>
            <div class="vt-cell num">{format::percent(r.comm_wait_ratio, 1)}</div>
            <div class="vt-cell num">{opt_num(r.bubble_count_avg, 1)}</div>
            <div class="vt-cell num" data-testid="cluster-z">{opt_num(r.robust_z, 2)}</div>
            <div class="vt-cell" data-testid="cluster-slow">{if r.slow { "slow" } else { "" }}</div>
            <div class="vt-cell" title=r.tags.clone()>{r.idle_pattern.clone().unwrap_or_else(|| "–".into())}</div>
            <div class="vt-cell num">{r.peak_bytes.map(|b| format::bytes(b as f64)).unwrap_or_else(|| "–".into())}</div>
            <div class="vt-cell num" title=r.first_problem.clone().unwrap_or_default()>{problems}</div>
            <div class="vt-cell" title=r.rank_dir.clone()>{r.rank_dir.clone()}</div>
        </div>
    }
}

/// Next sort on a header click: descending (numbers) or ascending first, then the other way,
/// then unsorted.
fn cycle_sort(sort: RwSignal<Option<ClusterSort>>, column: ClusterColumn, num: bool) {
    sort.update(|s| {
        *s = match *s {
            Some(k) if k.column == column && k.descending == num => Some(ClusterSort {
                column,
                descending: !num,
            }),
            Some(k) if k.column == column => None,
            _ => Some(ClusterSort {
                column,
                descending: num,
            }),
        }
    })
}
