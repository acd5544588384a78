//! The memory tab: rank/role selector and overview, per-rank summary, the curve
//! chart, the virtualised events table with the call-stack panel, the top-sites table and
//! the exports. Every number shown comes from the worker (`MemoryQuery::{Curve, Rows, LiveAt,
//! Sites, Stack}`).

mod chart;
mod sites;
mod table;

use crate::ui::widgets::note::{failed, muted};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::client::client;
use super::keys::use_keys;
use super::route::{use_route, MEM_POOL, MEM_PREFIX, MEM_ROW};
use super::state::AppState;
use crate::protocol::{
    AnalysisKind, ExportRequest, MemoryExportKind, MemoryQuery, MemoryReply, MemorySummaryDto,
    Query, Reply, StackDto,
};
use crate::views::format;

/// Sends a memory query to the worker that analysed its rank folder.
pub async fn query(q: MemoryQuery) -> Result<MemoryReply, String> {
    match client().query(Query::Memory(q)).await? {
        Reply::Memory(r) => Ok(r),
        other => Err(crate::ui::client::unexpected(
            crate::ui::client::query_reply_name(&other),
        )),
    }
}

/// The memory tab.
#[component]
pub fn MemoryView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let selected_row = RwSignal::new(None::<u32>);
    use_route().bind(MEM_ROW, selected_row);
    let pool = RwSignal::new(None::<String>);
    use_route().bind(MEM_POOL, pool);
    // A new rank clears the selected row (not on mount: a restored row stays).
    Effect::new(move |prev: Option<()>| {
        state.selected_rank.track();
        if prev.is_some() {
            selected_row.set(None);
        }
    });
    // Esc (not taken by an overlay) closes the call-stack panel's selection.
    let keys = use_keys();
    Effect::new(move |prev: Option<()>| {
        keys.escape.track();
        if prev.is_some() {
            selected_row.set(None);
        }
    });
    let summary = Memo::new(move |_| {
        let r = state.selected_rank.get()?;
        state.summaries.with(|m| m.get(&r).cloned())
    });
    view! {
        <section class="memory" data-testid="memory-view">
            <RankOverview/>
            <Exports/>
            {move || match (state.selected_rank.get(), summary.get()) {
                (Some(rank), Some(s)) => view! {
                    <SummaryCard s=s.clone() pool=pool/>
                    <chart::MemoryChart rank=rank t0_ms=s.t_range_ms.map(|r| r.0).unwrap_or(0.0) pool=pool/>
                    <div class="table-and-stack">
                        <table::EventsTable rank=rank selected=selected_row t0_ms=s.t_range_ms.map(|r| r.0).unwrap_or(0.0)/>
                        <StackPanel rank=rank selected=selected_row/>
                    </div>
                    <sites::SitesTable rank=rank/>
                }
                .into_any(),
                (Some(rank), None) => match state.no_result(AnalysisKind::Memory, rank) {
                    (true, m) => failed(m),
                    (false, m) => view! { <p class="muted" data-testid="memory-pending">{m}</p> }.into_any(),
                },
                (None, _) => muted("No rank folder with operator_memory.csv."),
            }}
        </section>
    }
}

/// The rows of a rank: how many allocate (size > 0), how many of those the capture saw
/// released (a torch_npu row carries its own release time), and rows with a negative size, named
/// only when there are any (torch_npu writes none; a row is an allocation with its release).
fn event_counts(s: &MemorySummaryDto) -> String {
    let released = s.rows.saturating_sub(s.unreleased_rows);
    let mut t = format!(
        "{} rows: {} allocations (size > 0), {released} released inside the capture",
        s.rows, s.alloc_count
    );
    if s.free_count > 0 {
        t.push_str(&format!(", {} with size < 0", s.free_count));
    }
    t
}

/// Σ positive sizes, and Σ |negative sizes| when any row has one.
fn allocated_text(s: &MemorySummaryDto) -> String {
    match s.free_count {
        0 => format::kib(s.alloc_kb),
        _ => format!(
            "{} (rows with size < 0: {})",
            format::kib(s.alloc_kb),
            format::kib(s.free_kb)
        ),
    }
}

/// Selects rank folder `idx`; a different rank starts from a fresh view (the memory keys of the
/// URL hash are dropped before its chart and table mount).
fn select_rank(state: AppState, idx: u32) {
    if state.selected_rank.get_untracked() != Some(idx) {
        use_route().clear_prefix(MEM_PREFIX);
        state.selected_rank.set(Some(idx));
    }
}

/// One line per rank folder: role, rank, rows, matches, peak; click (or Enter) to select.
#[component]
fn RankOverview() -> impl IntoView {
    let state = expect_context::<AppState>();
    let rows = move || {
        let inv = state.inventory.get().unwrap_or_default();
        inv.ranks
            .into_iter()
            .filter(|r| {
                r.analyses
                    .iter()
                    .any(|a| a.analysis == crate::protocol::AnalysisKind::Memory && a.can_run)
            })
            .map(|r| {
                let idx = r.index;
                let s = state.summaries.with(|m| m.get(&idx).cloned());
                let failed = state.failures.with(|m| m.get(&(AnalysisKind::Memory, idx)).cloned());
                let (rows, matched, peak, live) = match &s {
                    Some(s) => (
                        s.rows.to_string(),
                        (s.rows - s.matches.none).to_string(),
                        s.peak_allocated_mb
                            .map(|p| format!("{} ({})", format::mib(p), s.pools.first().map(|p| p.pool.as_str()).unwrap_or("")))
                            .unwrap_or_else(|| "—".into()),
                        format::kib(s.live_at_peak_kb),
                    ),
                    None => {
                        let t = if failed.is_some() { "failed" } else { "…" };
                        (t.to_string(), String::new(), String::new(), String::new())
                    }
                };
                view! {
                    <tr
                        data-testid="rank-summary-row"
                        data-rank-index=idx.to_string()
                        tabindex="0"
                        aria-selected=move || (state.selected_rank.get() == Some(idx)).to_string()
                        class:selected=move || state.selected_rank.get() == Some(idx)
                        on:click=move |_| select_rank(state, idx)
                        title=failed.unwrap_or_default()
                    >
                        <td>{r.role.clone()}</td>
                        <td class="num">{r.rank_id.map(|v| v.to_string()).unwrap_or_else(|| "?".into())}</td>
                        <td><code>{r.dir.clone()}</code></td>
                        <td class="num" data-testid="rank-rows">{rows}</td>
                        <td class="num">{matched}</td>
                        <td class="num">{peak}</td>
                        <td class="num">{live}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <table class="grid overview" data-testid="rank-overview">
            <thead>
                <tr>
                    <th>"role"</th><th class="num">"rank"</th><th>"folder"</th><th class="num">"events"</th>
                    <th class="num">"with stack"</th><th class="num">"peak allocated"</th><th class="num">"live at peak"</th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

#[component]
fn SummaryCard(s: MemorySummaryDto, pool: RwSignal<Option<String>>) -> impl IntoView {
    let t0 = s.t_range_ms.map(|r| r.0).unwrap_or(0.0);
    let m = &s.matches;
    let matches = format!(
        "exact {} · enclosing {} · nearest before {} · via forward {} · none {}",
        m.exact, m.enclosing, m.nearest_before, m.via_forward, m.none
    );
    let first_pool = s.pools.first().map(|p| p.pool.clone()).unwrap_or_default();
    let shown = {
        let first_pool = first_pool.clone();
        move || pool.get().unwrap_or_else(|| first_pool.clone())
    };
    let pool_rows = s
        .pools
        .iter()
        .map(|p| {
            let name = p.pool.clone();
            let key = p.pool.clone();
            let shown = shown.clone();
            let peak = match (p.peak_allocated_mb, p.peak_time_ms) {
                (Some(v), Some(t)) => format!("{} at {}", format::mib(v), format::offset_ms(t, t0)),
                _ => "—".into(),
            };
            view! {
                <tr
                    data-testid="pool-row"
                    data-pool=p.pool.clone()
                    tabindex="0"
                    class:selected=move || shown() == key
                    on:click=move |_| pool.set(Some(name.clone()))
                    title="Show this pool's curves, peak and live set in the chart"
                >
                    <td><b>{p.pool.clone()}</b>" "{p.label.clone()}</td>
                    <td class="num">{p.rows.to_string()}</td>
                    <td>{p.rule.clone()}</td>
                    <td class="num" data-testid="pool-peak">{peak}</td>
                    <td class="num">{p.reserved_at_peak_mb.map(format::mib).unwrap_or_else(|| "—".into())}</td>
                    <td class="num" data-testid="pool-live">{format!("{} row{}, {}", p.live_at_peak_rows, if p.live_at_peak_rows == 1 { "" } else { "s" }, format::kib(p.live_at_peak_kb))}</td>
                </tr>
            }
        })
        .collect_view();
    let groups = s
        .live_at_peak_by_user_frame
        .iter()
        .take(8)
        .map(|g| {
            let key = if g.key.is_empty() { "(no user frame)".to_string() } else { g.key.clone() };
            view! { <li><span class="num">{format::kib(g.size_kb)}</span>" "{format!("({}×) ", g.count)}<code>{key}</code></li> }
        })
        .collect_view();
    view! {
        <section class="summary-card" data-testid="memory-summary">
            {s.no_stacks.then(|| view! {
                <p class="notice warning">"No call stacks: re-profile with "<code>"with_stack=True"</code>" to see where memory was allocated."</p>
            })}
            <dl class="facts">
                <dt>"events"</dt><dd>{event_counts(&s)}</dd>
                <dt>"allocated"</dt><dd>{allocated_text(&s)}</dd>
                <dt>"match quality"</dt><dd>{matches}</dd>
                <dt>"operator rows' own live peak"</dt><dd>{format!("{}{}", format::mib(s.peak_live_mb), s.peak_live_time_ms.map(|t| format!(" at {}", format::offset_ms(t, t0))).unwrap_or_default())}</dd>
                <dt>"never released"</dt><dd>{s.unreleased_rows.to_string()}</dd>
            </dl>
            <h4>"Allocator pools"</h4>
            <p class="muted" data-testid="pool-note">"Each row's Total Allocated / Reserved / Active columns are the totals of the allocator that served it, and a run can have several. Rows are assigned by op name: aten:: and npu:: to the PyTorch allocator (PTA), cann:: to the CANN graph engine workspace (GE), any other name to OTHER. Each pool has its own curves, peak and live set; click a pool to chart it."</p>
            <div class="table-scroll">
                <table class="grid overview" data-testid="pool-table">
                    <thead><tr><th>"pool"</th><th class="num">"rows"</th><th>"which rows"</th><th class="num">"peak allocated"</th><th class="num">"reserved at peak"</th><th class="num">"live at peak"</th></tr></thead>
                    <tbody>{pool_rows}</tbody>
                </table>
            </div>
            <h4>{format!("Live at the {first_pool} peak, by user frame")}</h4>
            <ul class="groups">{groups}</ul>
        </section>
    }
}

#[component]
fn Exports() -> impl IntoView {
    let state = expect_context::<AppState>();
    let busy = RwSignal::new(false);
    let run = move |what: MemoryExportKind| {
        busy.set(true);
        state.status.set(format!("Writing {what:?}…"));
        spawn_local(async move {
            match client().export(ExportRequest::Memory(what)).await {
                Ok(line) => state.status.set(line),
                Err(e) => state.status.set(format!("Export failed: {e}")),
            }
            busy.set(false);
        });
    };
    view! {
        <div class="exports">
            <span>"Export all ranks: "</span>
            <button class="button" data-testid="export-csv" disabled=move || busy.get() on:click=move |_| run(MemoryExportKind::MemoryCsv)>"CSV"</button>
            <button class="button" data-testid="export-json" disabled=move || busy.get() on:click=move |_| run(MemoryExportKind::MemoryJson)>"JSON"</button>
            <button class="button" data-testid="export-md" disabled=move || busy.get() on:click=move |_| run(MemoryExportKind::MemorySummaryMd)>"Summary (Markdown)"</button>
        </div>
    }
}

/// The full call stack of the selected row, one frame per line, the user frame highlighted.
#[component]
fn StackPanel(rank: u32, selected: RwSignal<Option<u32>>) -> impl IntoView {
    let stack = RwSignal::new(None::<Result<StackDto, String>>);
    Effect::new(move |_| {
        let Some(row) = selected.get() else {
            stack.set(None);
            return;
        };
        spawn_local(async move {
            let res = match query(MemoryQuery::Stack { rank, row }).await {
                Ok(MemoryReply::Stack(s)) => Ok(s),
                Ok(other) => Err(crate::ui::client::unexpected(
                    crate::ui::client::memory_reply_name(&other),
                )),
                Err(e) => Err(e),
            };
            // `try_`: the panel may have been unmounted while the query ran.
            if selected.try_get_untracked() == Some(Some(row)) {
                stack.set(Some(res));
                // Bring the highlighted user frame into view inside the panel.
                if let Some(el) = web_sys::window().and_then(|w| w.document()).and_then(|d| {
                    d.query_selector("[data-testid=stack-panel] li.user")
                        .ok()
                        .flatten()
                }) {
                    let opts = web_sys::ScrollIntoViewOptions::new();
                    opts.set_block(web_sys::ScrollLogicalPosition::Nearest);
                    el.scroll_into_view_with_scroll_into_view_options(&opts);
                }
            }
        });
    });
    view! {
        <aside class="stack-panel" data-testid="stack-panel">
            <h4>"Call stack"</h4>
            {move || match stack.get() {
                None => muted("Click a row to see its full call stack (innermost frame first)."),
                Some(Err(e)) => failed(e),
                Some(Ok(s)) => {
                    let origin = if s.stack_origin.starts_with("forward:") {
                        format!("inherited from the forward op {}", &s.stack_origin["forward:".len()..])
                    } else {
                        String::new()
                    };
                    view! {
                        <p>
                            <b>{s.row.name.clone()}</b>
                            {format!(" · {} · match {} · CSV line {}", format::kib(s.row.size_kb), s.row.match_quality, s.row.source_line)}
                        </p>
                        <p class="muted">{origin}</p>
                        {if s.frames.is_empty() {
                            muted("No call stack matched this row.")
                        } else {
                            view! {
                                <ol class="frames">
                                    {s.frames.into_iter().map(|f| view! { <li class:user=f.user><code>{f.text}</code></li> }).collect_view()}
                                </ol>
                            }.into_any()
                        }}
                    }
                    .into_any()
                }
            }}
        </aside>
    }
}
