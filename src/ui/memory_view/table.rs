//! The virtualised events table: only the visible rows exist in the DOM; each scroll, sort
//! or filter change asks the worker for one page (`MemoryQuery::Rows`), the worker keeps the
//! sorted/filtered order of all rows. Works the same for 184 or 1M rows. Filters, sort and the
//! selected row are kept in the URL hash (`mem.q`, `mem.kmin`, `mem.kmax`, `mem.sort`, `mem.row`).

use crate::ui::widgets::note::failed;
use leptos::ev;
use leptos::html::Div;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::protocol::{
    MemColumn, MemoryQuery, MemoryReply, RowFilter, RowsPage, RowsQuery, SortKey,
};
use crate::ui::route::{use_route, MEM_KMAX, MEM_KMIN, MEM_Q, MEM_SORT};
use crate::views::format;
use crate::views::virtual_list::{first_row, fit_columns, fit_width_ch, spacer_height, FitColumn};

/// Row height, px (must match `.vt-row` in web/style.css).
const ROW_H: f64 = 24.0;
/// Viewport height, px.
const VIEW_H: f64 = 480.0;

const COLUMNS: &[(MemColumn, &str, bool)] = &[
    (MemColumn::Row, "#", true),
    (MemColumn::Name, "name", false),
    (MemColumn::SizeKb, "size", true),
    (MemColumn::StartTimeMs, "start", true),
    (MemColumn::DurationMs, "duration", true),
    (MemColumn::TotalAllocatedMb, "allocated", true),
    (MemColumn::TotalReservedMb, "reserved", true),
    (MemColumn::MatchQuality, "match", false),
    (MemColumn::UserFrame, "user frame", false),
    (MemColumn::CallStackTop, "first listed frame", false),
];

/// Width bounds of the columns (ch) and which share the free width, in [`COLUMNS`] order:
/// columns size to their content (`views::virtual_list::fit_columns`).
const FIT: [(u32, u32, bool); 10] = [
    (4, 10, false),
    (16, 48, true),
    (8, 14, false),
    (9, 16, false),
    (9, 16, false),
    (9, 14, false),
    (9, 14, false),
    (7, 16, false),
    (16, 60, true),
    (16, 80, true),
];

/// The texts of one row's cells, in [`COLUMNS`] order.
fn cells(r: &crate::protocol::MemoryRowDto, t0_ms: f64) -> [String; 10] {
    [
        r.row.to_string(),
        r.name.clone(),
        format::kib(r.size_kb),
        format::offset_ms(r.start_time_ms, t0_ms),
        if r.duration_ms == 0.0 {
            "not released".to_string()
        } else {
            format::duration_ms(r.duration_ms)
        },
        format::mib(r.total_allocated_mb),
        format::mib(r.total_reserved_mb),
        r.match_quality.clone(),
        format::short_frame(&r.user_frame).to_string(),
        format::short_frame(&r.call_stack_top).to_string(),
    ]
}

/// The events table of one rank; clicking a row sets `selected`.
#[component]
pub fn EventsTable(rank: u32, selected: RwSignal<Option<u32>>, t0_ms: f64) -> impl IntoView {
    let sort = RwSignal::new(None::<SortKey>);
    let text = RwSignal::new(String::new());
    let min_kb = RwSignal::new(None::<f64>);
    let max_kb = RwSignal::new(None::<f64>);
    let scroll_top = RwSignal::new(0.0f64);
    let page = RwSignal::new(None::<RowsPage>);
    let error = RwSignal::new(None::<String>);
    let total = RwSignal::new(0u32);
    let viewport = NodeRef::<Div>::new();
    let generation = StoredValue::new(0u32);
    // Debounced text filter: the query uses `applied_text`.
    let applied_text = RwSignal::new(String::new());
    let route = use_route();
    route.bind(MEM_Q, text);
    route.bind(MEM_KMIN, min_kb);
    route.bind(MEM_KMAX, max_kb);
    applied_text.set(text.get_untracked());
    if let Some(k) = route.read::<String>(MEM_SORT).and_then(|v| parse_sort(&v)) {
        sort.set(Some(k));
    }
    Effect::new(move |_| {
        let v = sort
            .get()
            .map(|k| format!("{:?}{}", k.column, if k.descending { ",desc" } else { "" }));
        route.write(MEM_SORT, v.as_ref());
    });
    let timer = StoredValue::new_local(None::<gloo::timers::callback::Timeout>);
    Effect::new(move |_| {
        let t = text.get();
        let h = gloo::timers::callback::Timeout::new(200, move || applied_text.set(t));
        timer.set_value(Some(h));
    });

    let visible = (VIEW_H / ROW_H).ceil() as u32 + 2;
    Effect::new(move |_| {
        let filter = RowFilter {
            text: applied_text.get(),
            min_kb: min_kb.get(),
            max_kb: max_kb.get(),
        };
        let sort = sort.get();
        let first = first_row(scroll_top.get(), VIEW_H, total.get(), ROW_H);
        generation.update_value(|g| *g += 1);
        let g = generation.get_value();
        spawn_local(async move {
            let q = RowsQuery {
                rank,
                offset: first,
                limit: visible,
                sort,
                filter,
            };
            match super::query(MemoryQuery::Rows(q)).await {
                Ok(MemoryReply::Rows(p)) => {
                    // `try_`: the table may have been unmounted while the query ran.
                    if generation.try_get_value() == Some(g) {
                        error.set(None);
                        if total.get_untracked() != p.matching_rows {
                            total.set(p.matching_rows);
                        }
                        page.set(Some(p));
                    }
                }
                Ok(other) => error.set(Some(crate::ui::client::unexpected(
                    crate::ui::client::memory_reply_name(&other),
                ))),
                Err(e) => error.set(Some(e)),
            }
        });
    });
    // A new filter or sort starts at the top.
    Effect::new(move |_| {
        applied_text.track();
        min_kb.track();
        max_kb.track();
        sort.track();
        if let Some(el) = viewport.get_untracked() {
            el.set_scroll_top(0);
        }
        scroll_top.set(0.0);
    });

    let header = COLUMNS
        .iter()
        .map(|&(col, label, num)| {
            let arrow = move || match sort.get() {
                Some(k) if k.column == col => {
                    if k.descending {
                        " ▼"
                    } else {
                        " ▲"
                    }
                }
                _ => "",
            };
            view! {
                <div
                    class="vt-cell vt-head"
                    class:num=num
                    data-col=format!("{col:?}")
                    role="button"
                    tabindex="0"
                    title="Sort by this column (Enter)"
                    aria-sort=move || match sort.get() {
                        Some(k) if k.column == col => if k.descending { "descending" } else { "ascending" },
                        _ => "none",
                    }
                    on:click=move |_| cycle_sort(sort, col, num)
                >
                    {label}
                    {arrow}
                </div>
            }
        })
        .collect_view();

    // Keyboard: ↑/↓ move the selected row, scrolling at the page edges; Esc clears.
    let on_key = move |ev: ev::KeyboardEvent| {
        let key = ev.key();
        if key == "Escape" {
            selected.set(None);
            return;
        }
        let step: i64 = match key.as_str() {
            "ArrowDown" => 1,
            "ArrowUp" => -1,
            _ => return,
        };
        ev.prevent_default();
        let Some(p) = page.get_untracked() else {
            return;
        };
        let ids: Vec<u32> = p.rows.iter().map(|r| r.row).collect();
        let pos = selected
            .get_untracked()
            .and_then(|s| ids.iter().position(|&r| r == s));
        let next = match pos {
            None => 0,
            Some(k) => k as i64 + step,
        };
        let visible_rows = (VIEW_H / ROW_H).floor() as i64;
        if next >= 0 && next < visible_rows.min(ids.len() as i64) {
            selected.set(ids.get(next as usize).copied());
        } else if let Some(el) = viewport.get_untracked() {
            // Past the visible rows: scroll one row; the selection follows on the next page.
            el.set_scroll_top(el.scroll_top() + (step as f64 * ROW_H) as i32);
            if let Some(&id) = ids.get((next.clamp(0, ids.len() as i64 - 1)) as usize) {
                selected.set(Some(id));
            }
        }
    };
    let parse_kb = |s: String| s.trim().parse::<f64>().ok();
    // Column widths follow the widest text seen (header with its sort arrow, every page shown
    // since the table opened): they only grow, so scrolling never makes them jump back.
    let widest = RwSignal::new(
        COLUMNS
            .iter()
            .map(|c| c.1.chars().count() + 2)
            .collect::<Vec<usize>>(),
    );
    Effect::new(move |_| {
        page.with(|p| {
            let Some(p) = p else { return };
            let mut w = widest.get_untracked();
            let mut grew = false;
            for r in &p.rows {
                for (i, c) in cells(r, t0_ms).iter().enumerate() {
                    let n = c.chars().count();
                    if n > w[i] {
                        w[i] = n;
                        grew = true;
                    }
                }
            }
            if grew {
                widest.set(w);
            }
        })
    });
    let fit = move || -> Vec<FitColumn> {
        widest.with(|w| {
            w.iter()
                .zip(FIT)
                .map(|(&chars, (min_ch, max_ch, flex))| FitColumn {
                    chars,
                    min_ch,
                    max_ch,
                    flex,
                })
                .collect()
        })
    };
    let cols = move || format!("grid-template-columns:{}", fit_columns(&fit()));
    // Header and rows at least as wide as their columns (the box scrolls sideways).
    let least = move || format!("min-width:max(980px, {}ch)", fit_width_ch(&fit()));
    let rows = move || {
        let Some(p) = page.get() else {
            return Vec::new();
        };
        p.rows
            .into_iter()
            .map(|r| {
                let id = r.row;
                let [c_id, c_name, c_size, c_start, c_dur, c_alloc, c_res, c_match, c_site, c_top] =
                    cells(&r, t0_ms);
                view! {
                    <div
                        class="vt-row"
                        data-testid="event-row"
                        style=cols
                        class:selected=move || selected.get() == Some(id)
                        class:free=r.size_kb < 0.0
                        on:click=move |_| selected.set(Some(id))
                    >
                        <div class="vt-cell num">{c_id}</div>
                        <div class="vt-cell" title=r.name.clone()>{c_name}</div>
                        <div class="vt-cell num">{c_size}</div>
                        <div class="vt-cell num">{c_start}</div>
                        <div class="vt-cell num">{c_dur}</div>
                        <div class="vt-cell num">{c_alloc}</div>
                        <div class="vt-cell num">{c_res}</div>
                        <div class="vt-cell">{c_match}</div>
                        <div class="vt-cell" title=r.user_frame.clone()>{c_site}</div>
                        <div class="vt-cell" title=r.call_stack_top.clone()>{c_top}</div>
                    </div>
                }
            })
            .collect::<Vec<_>>()
    };
    view! {
        <section class="events">
            <div class="filters">
                <input
                    type="search"
                    data-testid="row-filter"
                    aria-label="Filter rows by name or stack frame"
                    placeholder="filter: name or any stack frame"
                    prop:value=move || text.get()
                    on:input=move |ev| text.set(event_target_value(&ev))
                />
                <label>"size ≥ "<input type="number" class="kb" data-testid="min-kb" placeholder="KiB" prop:value=move || min_kb.get().map(|v| v.to_string()).unwrap_or_default() on:input=move |ev| min_kb.set(parse_kb(event_target_value(&ev)))/>" KiB"</label>
                <label>"size ≤ "<input type="number" class="kb" data-testid="max-kb" placeholder="KiB" prop:value=move || max_kb.get().map(|v| v.to_string()).unwrap_or_default() on:input=move |ev| max_kb.set(parse_kb(event_target_value(&ev)))/>" KiB"</label>
                <span class="muted" data-testid="row-count">
                    {move || page.get().map(|p| format!("{} of {} rows", p.matching_rows, p.total_rows))}
                </span>
            </div>
            {move || error.get().map(failed)}
            {move || page.get().filter(|p| p.matching_rows == 0 && p.total_rows > 0).map(|p| view! {
                <p class="notice" data-testid="row-filter-empty">{format!("No row matches this filter (of {} rows). Change or clear the filter above.", p.total_rows)}</p>
            })}
            <div class="vt" data-testid="events-table">
                <div class="vt-row vt-header" style=move || format!("{};{}", cols(), least())>{header}</div>
                <div
                    class="vt-viewport"
                    tabindex="0"
                    title="↑/↓ move the selection, Esc clears it"
                    on:keydown=on_key
                    node_ref=viewport
                    style=move || format!("height:{VIEW_H}px;{}", least())
                    on:scroll=move |ev: ev::Event| {
                        let el: web_sys::Element = event_target(&ev);
                        scroll_top.set(el.scroll_top() as f64);
                    }
                >
                    <div class="vt-spacer" style=move || format!("height:{}px", spacer_height(total.get(), ROW_H))></div>
                    <div class="vt-rows" style=move || format!("top:{}px", scroll_top.get())>{rows}</div>
                </div>
            </div>
        </section>
    }
}

/// Next sort on a header click: descending (numbers) or ascending first, then the other way,
/// then unsorted.
fn cycle_sort(sort: RwSignal<Option<SortKey>>, col: MemColumn, num: bool) {
    sort.update(|s| {
        *s = match *s {
            Some(k) if k.column == col && !k.descending => Some(SortKey {
                column: col,
                descending: true,
            }),
            Some(k) if k.column == col => None,
            _ => Some(SortKey {
                column: col,
                descending: num,
            }),
        }
    })
}

/// Reads `Column` or `Column,desc` (the `mem.sort` hash value); unknown columns give `None`.
fn parse_sort(v: &str) -> Option<SortKey> {
    let (name, desc) = match v.split_once(',') {
        Some((n, d)) => (n, d == "desc"),
        None => (v, false),
    };
    COLUMNS
        .iter()
        .find(|(c, _, _)| format!("{c:?}") == name)
        .map(|&(column, _, _)| SortKey {
            column,
            descending: desc,
        })
}
