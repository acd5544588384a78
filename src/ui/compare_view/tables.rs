//! The delta tables: one at a time (a selector), sorted by a header, filtered by text; cell
//! texts and row order from `views::compare_table`.

use std::sync::Arc;

use leptos::prelude::*;

use super::{CMP_Q, CMP_SORT, CMP_TABLE, MAX_ROWS};
use crate::protocol::compare::{CompareTableDto, CompareViewDto, UnitDto};
use crate::ui::route::use_route;
use crate::views::compare_table::{exact, order, sign, text, Sort};

pub(super) fn cell_view(
    c: &crate::protocol::compare::CellDto,
    unit: UnitDto,
    delta: bool,
) -> impl IntoView {
    let class = if delta {
        format!("num delta {}", sign(c))
    } else if matches!(unit, UnitDto::Text | UnitDto::Site) {
        "text".to_string()
    } else {
        "num".to_string()
    };
    // Text cells hold at most three lines (C++ kernel names run to a screenful); the title
    // keeps the whole value.
    view! { <td class=class title=exact(c)><span class="cell">{text(c, unit, delta)}</span></td> }
}

/// The table selector, filter and the selected table.
#[component]
pub(super) fn Tables(v: Arc<CompareViewDto>) -> impl IntoView {
    let route = use_route();
    let first = v.tables.first().map(|t| t.id.clone()).unwrap_or_default();
    let selected = RwSignal::new(first.clone());
    let filter = RwSignal::new(String::new());
    let sort = RwSignal::new(None::<String>);
    route.bind(CMP_TABLE, selected);
    route.bind(CMP_Q, filter);
    route.bind(CMP_SORT, sort);
    if !v.tables.iter().any(|t| t.id == selected.get_untracked()) {
        selected.set(first);
    }
    let tables = v.tables.clone();
    let buttons = tables
        .iter()
        .map(|t| {
            let id = t.id.clone();
            let id2 = id.clone();
            let n = t.rows.len();
            let title = t.title.clone();
            view! {
                <button
                    class="chip"
                    class:active=move || selected.get() == id
                    data-testid="compare-table-pick"
                    data-table=id2.clone()
                    title=title
                    on:click=move |_| {
                        selected.set(id2.clone());
                        sort.set(None);
                    }
                >
                    {format!("{} ({n})", short_title(&t.id))}
                </button>
            }
        })
        .collect_view();
    let current = move || {
        let id = selected.get();
        tables.iter().find(|t| t.id == id).cloned()
    };
    view! {
        <div class="compare-tables">
            <div class="chips" role="group" aria-label="Delta tables">{buttons}</div>
            <label class="filter">
                "Filter "
                <input
                    type="search"
                    data-testid="compare-filter"
                    placeholder="site, name, step, new / gone…"
                    prop:value=move || filter.get()
                    on:input=move |ev| filter.set(event_target_value(&ev))
                />
            </label>
            {move || current().map(|t| view! { <DeltaTable t=Arc::new(t) filter=filter sort=sort/> })}
        </div>
    }
}

/// A short label of a table id for its chip (`dev0.sites_at_peak` → `device 0 · sites at peak`).
pub(super) fn short_title(id: &str) -> String {
    let (head, rest) = id.split_once('.').unwrap_or(("", id));
    let rest = rest
        .replace("live_by_user_frame", "live by user frame")
        .replace("live_by_name", "live by op name")
        .replace('_', " ")
        .replace('.', " · ");
    match head.strip_prefix("dev") {
        Some(n) => format!("device {n} · {rest}"),
        None if head.is_empty() => rest,
        None => format!("{head} · {rest}"),
    }
}

#[component]
pub(super) fn DeltaTable(
    t: Arc<CompareTableDto>,
    filter: RwSignal<String>,
    sort: RwSignal<Option<String>>,
) -> impl IntoView {
    let t2 = t.clone();
    let rows = Memo::new(move |_| {
        let s = sort.get().as_deref().and_then(Sort::parse);
        filter.with(|q| order(&t2, s, q))
    });
    let headers = t
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let arrow = move || match sort.get().as_deref().and_then(Sort::parse) {
                Some(s) if s.column == i => if s.desc { " ▼" } else { " ▲" },
                _ => "",
            };
            let click = move |_| {
                let next = match sort.get_untracked().as_deref().and_then(Sort::parse) {
                    Some(s) if s.column == i && s.desc => Some(Sort { column: i, desc: false }),
                    Some(s) if s.column == i => None,
                    _ => Some(Sort { column: i, desc: true }),
                };
                sort.set(next.map(Sort::to_token));
            };
            let class = if matches!(c.unit, UnitDto::Text | UnitDto::Site) { "text sortable" } else { "num sortable" };
            view! {
                <th class=class tabindex="0" data-testid="compare-th" on:click=click>{c.title.clone()}{arrow}</th>
            }
        })
        .collect_view();
    let t3 = t.clone();
    let body = move || {
        let ids = rows.get();
        ids.iter()
            .take(MAX_ROWS)
            .map(|&r| {
                let row = &t3.rows[r];
                let cells = t3
                    .columns
                    .iter()
                    .zip(row)
                    .map(|(c, v)| cell_view(v, c.unit, c.delta))
                    .collect_view();
                view! { <tr data-testid="compare-row">{cells}</tr> }
            })
            .collect_view()
    };
    let total = t.rows.len();
    let footer = move || {
        let n = rows.with(Vec::len);
        let q = filter.get();
        if total == 0 {
            "Nothing to compare in this table (both sides are empty).".to_string()
        } else if n == 0 {
            format!("No row matches “{}” (of {total}).", q.trim())
        } else if n > MAX_ROWS {
            format!("Showing the first {MAX_ROWS} of {n} rows; filter to narrow.")
        } else if n < total {
            format!("{n} of {total} rows match.")
        } else {
            format!("{total} rows.")
        }
    };
    view! {
        <h3 data-testid="compare-table-title">{t.title.clone()}</h3>
        <div class="table-scroll">
            <table class="grid compare-table" data-testid="compare-table" data-table=t.id.clone()>
                <thead><tr>{headers}</tr></thead>
                <tbody>{body}</tbody>
            </table>
        </div>
        <p class="muted" data-testid="compare-table-footer">{footer}</p>
    }
}
