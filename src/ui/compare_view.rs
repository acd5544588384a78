//! The Compare tab (issue 13): "compare with…" a second folder or file (drop target and
//! buttons), then what the worker computed — the headline figures, both sides' curves on one
//! axis (snapshots), the delta tables (one at a time: sort by a header, filter by text), the
//! notes, and the exports (`proflens diff A B --json` / `--md` bytes). Render only: the
//! numbers arrive in [`CompareViewDto`]; the order of a table and the cell texts come from
//! `views::compare_table`.

use std::sync::Arc;

use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::client::client;
use super::files;
use super::route::use_route;
use super::state::{AppState, CompareStatus};
use super::widgets::chart::{context, nice_step, MARGIN};
use super::widgets::palette::{palette, series_css};
use crate::protocol::compare::{
    CompareExportKind, CompareKind, CompareTableDto, CompareViewDto, OverlayDto, UnitDto,
};
use crate::protocol::ExportRequest;
use crate::views::compare_table::{exact, order, sign, text, Sort};
use crate::views::format;

/// URL key: side A's name when a comparison is shown.
pub const CMP_A: &str = "cmp.a";
/// URL key: side B's name.
pub const CMP_B: &str = "cmp.b";
/// URL key: the table shown (its id).
pub const CMP_TABLE: &str = "cmp.t";
/// URL key: the table filter.
pub const CMP_Q: &str = "cmp.q";
/// URL key: the table sort (`3d`: column 3 descending).
pub const CMP_SORT: &str = "cmp.sort";

/// Rows rendered at most (the filter narrows the rest).
const MAX_ROWS: usize = 500;

/// Overlay columns asked for: the plot width of a chart as wide as the window allows.
fn overlay_columns() -> u32 {
    let w = web_sys::window()
        .and_then(|w| w.inner_width().ok())
        .and_then(|v| v.as_f64())
        .unwrap_or(1200.0);
    ((w - 80.0).clamp(400.0, 1600.0) - MARGIN.0 - MARGIN.1) as u32
}

fn start_compare(list: Vec<(String, web_sys::File)>) {
    let cols = overlay_columns();
    spawn_local(async move { client().compare_with(list, cols).await });
}

/// The drop target and the two "compare with" inputs.
#[component]
fn CompareOpen(#[prop(optional)] again: bool) -> impl IntoView {
    let state = expect_context::<AppState>();
    let on_pick = move |ev: ev::Event| {
        if let Some(picked) = files::picked(&ev) {
            start_compare(picked);
        }
    };
    let over = RwSignal::new(false);
    let on_drop = move |ev: ev::DragEvent| {
        ev.prevent_default();
        ev.stop_propagation();
        over.set(false);
        let Some(dt) = ev.data_transfer() else { return };
        let (entries, loose) = files::drop_entries(&dt);
        spawn_local(async move {
            match files::walk_entries(entries).await {
                Ok(mut list) => {
                    list.extend(loose);
                    start_compare(list);
                }
                Err(e) => state.compare.set(CompareStatus::Failed(format!(
                    "could not read the dropped folder: {e}"
                ))),
            }
        });
    };
    let folder_input = NodeRef::<leptos::html::Input>::new();
    Effect::new(move |_| {
        if let Some(el) = folder_input.get() {
            let _ = el.set_attribute("webkitdirectory", "");
        }
    });
    view! {
        <div
            class="drop-zone compare-drop"
            class:dragging=move || over.get()
            class:compact=again
            data-testid="compare-drop"
            on:dragover=move |ev: ev::DragEvent| { ev.prevent_default(); ev.stop_propagation(); over.set(true) }
            on:dragleave=move |_| over.set(false)
            on:drop=on_drop
        >
            <p class:big=!again>
                {if again { "Drop another folder or file here to compare with it instead" } else { "Drop a second folder or file here to compare with what is open" }}
            </p>
            <p class="muted">
                "Two snapshot files, two GPU traces, two rank folders or two runs. The second input is read once, in the worker that holds the first one's results."
            </p>
            <div class="open-buttons">
                <label class="button file-button">
                    "Compare with folder…"
                    <input type="file" class="visually-hidden" data-testid="compare-folder" node_ref=folder_input multiple=true on:change=on_pick/>
                </label>
                <label class="button file-button">
                    "Compare with files…"
                    <input type="file" class="visually-hidden" data-testid="compare-files" multiple=true on:change=on_pick/>
                </label>
            </div>
        </div>
    }
}

/// The Compare tab.
#[component]
pub fn CompareView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let route = use_route();
    // A link that compared with a side B: name it until B is opened again.
    let linked_b: Option<String> = route.read(CMP_B);
    let body = move || {
        match state.compare.get() {
        CompareStatus::None => view! {
            {linked_b.clone().map(|b| view! {
                <p class="note" data-testid="compare-link-hint">
                    "This link compared with “" <b>{b}</b> "”: open it again with Compare with… to see the comparison."
                </p>
            })}
            <CompareOpen/>
        }
        .into_any(),
        CompareStatus::Loading { b_name, bytes } => {
            let read = move || {
                let done: u64 = state.compare_read.with(|m| m.values().map(|v| v.0).sum());
                format!(
                    "Reading and comparing {b_name}… {} of {}",
                    format::bytes(done as f64),
                    format::bytes(bytes as f64)
                )
            };
            view! { <p class="status" data-testid="compare-loading">{read}</p> }.into_any()
        }
        CompareStatus::Failed(m) => view! {
            <p class="error" data-testid="compare-error">{m}</p>
            <CompareOpen again=true/>
        }
        .into_any(),
        CompareStatus::Ready(v) => view! { <Comparison v=v/> }.into_any(),
    }
    };
    view! { <section class="compare-view" data-testid="compare-view">{body}</section> }
}

fn export_button(kind: CompareExportKind, label: &'static str, id: &'static str) -> impl IntoView {
    let state = expect_context::<AppState>();
    let on = move |_| {
        spawn_local(async move {
            match client().export(ExportRequest::Compare(kind)).await {
                Ok(()) => state.status.set(format!("{label} downloaded")),
                Err(e) => state.status.set(format!("export failed: {e}")),
            }
        })
    };
    view! { <button class="button" data-testid=id on:click=on>{label}</button> }
}

fn cell_view(c: &crate::protocol::compare::CellDto, unit: UnitDto, delta: bool) -> impl IntoView {
    let class = if delta {
        format!("num delta {}", sign(c))
    } else if unit == UnitDto::Text {
        "text".to_string()
    } else {
        "num".to_string()
    };
    // Text cells hold at most three lines (C++ kernel names run to a screenful); the title
    // keeps the whole value.
    view! { <td class=class title=exact(c)><span class="cell">{text(c, unit, delta)}</span></td> }
}

#[component]
fn Comparison(v: Arc<CompareViewDto>) -> impl IntoView {
    let route = use_route();
    route.write(CMP_A, Some(&v.a_name));
    route.write(CMP_B, Some(&v.b_name));
    let kind = match v.kind {
        CompareKind::Snapshot => "two snapshots",
        CompareKind::Trace => "two traces / runs",
    };
    let facts = v
        .facts
        .iter()
        .map(|f| {
            view! {
                <tr data-testid="compare-fact">
                    <th>{f.label.clone()}</th>
                    {cell_view(&f.a, f.unit, false)}
                    {cell_view(&f.b, f.unit, false)}
                    {cell_view(&f.delta, f.unit, true)}
                </tr>
            }
        })
        .collect_view();
    let has_facts = !v.facts.is_empty();
    let overlays = v
        .overlays
        .iter()
        .cloned()
        .map(|o| view! { <OverlayChart o=o a=v.a_name.clone() b=v.b_name.clone()/> })
        .collect_view();
    let notes = v
        .notes
        .iter()
        .map(|n| view! { <li data-testid="compare-note">{n.clone()}</li> })
        .collect_view();
    let problems = v.b_problems.total;
    let problem_list = v
        .b_problems
        .kept
        .iter()
        .take(20)
        .map(|p| {
            let at = match (p.line, p.byte) {
                (Some(l), _) => format!("{}:{l}", p.file),
                (None, Some(b)) => format!("{} byte {b}", p.file),
                _ => p.file.clone(),
            };
            view! { <li><code>{p.code.clone()}</code>" "{at}": "{p.message.clone()}</li> }
        })
        .collect_view();
    let sides = v
        .sides
        .iter()
        .map(|s| view! { <li>{s.clone()}</li> })
        .collect_view();
    view! {
        <div class="compare-head">
            <h2 data-testid="compare-title">"Compare " <b>{v.a_name.clone()}</b> " (A) with " <b>{v.b_name.clone()}</b> " (B) — " {kind}</h2>
            <div class="exports">
                {export_button(CompareExportKind::Json, "Diff JSON", "compare-export-json")}
                {export_button(CompareExportKind::Md, "Diff Markdown", "compare-export-md")}
            </div>
        </div>
        <ul class="compare-sides muted">{sides}</ul>
        {has_facts.then(|| view! {
            <table class="grid compare-facts" data-testid="compare-facts">
                <thead><tr><th></th><th>"A"</th><th>"B"</th><th>"Δ B − A"</th></tr></thead>
                <tbody>{facts}</tbody>
            </table>
        })}
        {overlays}
        <Tables v=v.clone()/>
        <ul class="compare-notes">{notes}</ul>
        {(problems != 0).then(|| view! {
            <details class="compare-problems" data-testid="compare-b-problems">
                <summary>{format!("Side B: {problems} problem(s) found while reading it; the comparison uses what was read")}</summary>
                <ul>{problem_list}</ul>
            </details>
        })}
        <CompareOpen again=true/>
    }
}

/// The table selector, filter and the selected table.
#[component]
fn Tables(v: Arc<CompareViewDto>) -> impl IntoView {
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
fn short_title(id: &str) -> String {
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
fn DeltaTable(
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
            let class = if c.unit == UnitDto::Text { "text sortable" } else { "num sortable" };
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

/// Both sides' allocated and reserved curves of one device on one axis.
#[component]
fn OverlayChart(o: OverlayDto, a: String, b: String) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let dark = super::theme::use_theme().dark;
    let o2 = o.clone();
    Effect::new(move |_| {
        dark.track();
        if let Some(c) = canvas.get() {
            draw_overlay(&c, &o2);
        }
    });
    // The series in drawing order: A allocated, A reserved, B allocated, B reserved.
    let legend = [
        (0, format!("A allocated ({a})"), false),
        (0, format!("A reserved ({a})"), true),
        (1, format!("B allocated ({b})"), false),
        (1, format!("B reserved ({b})"), true),
    ]
    .into_iter()
    .map(|(i, label, dashed)| {
        let style = format!(
            "border-top: 3px {} {}",
            if dashed { "dashed" } else { "solid" },
            series_css(i)
        );
        view! { <span class="legend-item"><span class="swatch-line" style=style></span>{label}</span> }
    })
    .collect_view();
    let axis = if o.axis == "index" {
        "entry index"
    } else {
        "ms since the first entry"
    };
    view! {
        <figure class="compare-overlay" data-testid="compare-overlay" data-device=o.device.to_string()>
            <figcaption>{format!("Device {}: both sides on one axis ({axis}, aligned at the first entry)", o.device)}</figcaption>
            <canvas class="chart" node_ref=canvas data-testid="compare-overlay-canvas"></canvas>
            <div class="legend">{legend}</div>
        </figure>
    }
}

fn draw_overlay(canvas: &web_sys::HtmlCanvasElement, o: &OverlayDto) {
    let Some((ctx, w, h)) = context(canvas) else {
        return;
    };
    let (ml, mr, mt, mb) = MARGIN;
    let (pw, ph) = (w - ml - mr, h - mt - mb);
    ctx.clear_rect(0.0, 0.0, w, h);
    let all = o.a.iter().chain(&o.b);
    let y_max = all
        .flat_map(|s| s.max.iter().flatten())
        .copied()
        .max()
        .unwrap_or(0)
        .max(1) as f64
        * 1.05;
    let y_of = |v: f64| mt + ph - v / y_max * ph;
    let pal = palette();
    ctx.set_font("11px system-ui, sans-serif");
    ctx.set_stroke_style_str(&pal.grid);
    ctx.set_fill_style_str(&pal.text);
    let ystep = nice_step(y_max, 5.0);
    let mut v = 0.0;
    while v <= y_max {
        let y = y_of(v);
        ctx.begin_path();
        ctx.move_to(ml, y);
        ctx.line_to(ml + pw, y);
        ctx.stroke();
        let _ = ctx.fill_text(&format::bytes(v), 4.0, y + 4.0);
        v += ystep;
    }
    let span = o.x1 - o.x0;
    if span > 0.0 {
        let xstep = nice_step(span, 8.0).max(1.0);
        let mut x = (o.x0 / xstep).ceil() * xstep;
        while x <= o.x1 {
            let px = ml + (x - o.x0) / span * pw;
            ctx.begin_path();
            ctx.move_to(px, mt);
            ctx.line_to(px, mt + ph);
            ctx.stroke();
            let _ = ctx.fill_text(&format::thousands(x as i64), px - 14.0, h - 8.0);
            x += xstep;
        }
    }
    for (side, series) in [(0usize, &o.a), (1usize, &o.b)] {
        let color = pal.series.get(side).cloned().unwrap_or_default();
        for s in series {
            let n = s.max.len().max(1) as f64;
            let dash = js_sys::Array::new();
            if s.curve == "reserved" {
                dash.push(&5.into());
                dash.push(&3.into());
            }
            let _ = ctx.set_line_dash(&dash);
            ctx.set_stroke_style_str(&color);
            ctx.set_line_width(if s.curve == "reserved" { 1.0 } else { 1.75 });
            ctx.begin_path();
            let mut pen = false;
            for (c, (lo, hi)) in s.min.iter().zip(&s.max).enumerate() {
                let (Some(lo), Some(hi)) = (lo, hi) else {
                    pen = false;
                    continue;
                };
                let x = ml + (c as f64 + 0.5) / n * pw;
                let (ylo, yhi) = (y_of(*lo as f64), y_of(*hi as f64));
                if pen {
                    ctx.line_to(x, yhi);
                } else {
                    ctx.move_to(x, yhi);
                    pen = true;
                }
                if lo != hi {
                    ctx.line_to(x, ylo);
                    ctx.move_to(x, yhi);
                }
            }
            ctx.stroke();
        }
    }
    let _ = ctx.set_line_dash(&js_sys::Array::new());
    ctx.set_stroke_style_str(&pal.frame);
    ctx.set_line_width(1.0);
    ctx.stroke_rect(ml, mt, pw, ph);
}
