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
use super::route::{use_route, Route};
use super::state::{AppState, CompareStatus};
use super::widgets::chart::{context, MARGIN};
use super::widgets::palette::{palette, series_css};
use crate::protocol::compare::{
    CompareExportKind, CompareKind, CompareOptions, CompareStep, CompareTableDto, CompareViewDto,
    OverlayDto, UnitDto,
};
use crate::protocol::ExportRequest;
use crate::views::compare_table::{exact, order, sign, text, Sort};
use crate::views::compare_table::{step_from_hash, step_to_hash};
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
/// URL key: side A's compared device (`--a-device`).
pub const CMP_A_DEVICE: &str = "cmp.ad";
/// URL key: side B's compared device (`--b-device`).
pub const CMP_B_DEVICE: &str = "cmp.bd";
/// URL key: side B is side A's own snapshot file (two devices of one file).
pub const CMP_SELF: &str = "cmp.self";
/// URL key: the overlay's axis is time (`--overlay-axis time`).
pub const CMP_TIME: &str = "cmp.time";
/// URL key: the annotation the overlay is aligned at (`--align`).
pub const CMP_ALIGN: &str = "cmp.align";
/// URL key: the compared step (`--step N`, `all`: `--all-steps`).
pub const CMP_STEP: &str = "cmp.step";
/// URL key: the compared rank (`--rank`).
pub const CMP_RANK: &str = "cmp.rank";

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

/// The options a link asks for (the `cmp.*` control keys), used by the page's first
/// comparison (a link being restored); a later "compare with…" starts from the defaults.
fn linked_options(state: AppState, route: Route) -> CompareOptions {
    if !matches!(state.compare.get_untracked(), CompareStatus::None) {
        return CompareOptions::default();
    }
    CompareOptions {
        a_device: route.read(CMP_A_DEVICE),
        b_device: route.read(CMP_B_DEVICE),
        time_axis: route.read(CMP_TIME).unwrap_or(false),
        align: route.read(CMP_ALIGN),
        step: route
            .read::<String>(CMP_STEP)
            .and_then(|s| step_from_hash(&s))
            .unwrap_or_default(),
        rank: route.read(CMP_RANK),
    }
}

fn start_compare(state: AppState, route: Route, list: Vec<(String, web_sys::File)>) {
    let cols = overlay_columns();
    let options = linked_options(state, route);
    spawn_local(async move { client().compare_with(list, cols, false, options).await });
}

/// "Compare devices of this file": side B is side A's snapshot file, its first two devices
/// compared (the controls choose others).
fn start_compare_devices(state: AppState, route: Route, devices: (u32, u32)) {
    let cols = overlay_columns();
    let mut options = linked_options(state, route);
    if options.a_device.is_none() && options.b_device.is_none() {
        options.a_device = Some(devices.0);
        options.b_device = Some(devices.1);
    }
    spawn_local(async move { client().compare_with(Vec::new(), cols, true, options).await });
}

/// The drop target and the two "compare with" inputs.
#[component]
fn CompareOpen(#[prop(optional)] again: bool) -> impl IntoView {
    let state = expect_context::<AppState>();
    let route = use_route();
    let on_pick = move |ev: ev::Event| {
        if let Some(picked) = files::picked(&ev) {
            start_compare(state, route, picked);
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
                    start_compare(state, route, list);
                }
                Err(e) => state.compare.set(CompareStatus::Failed(format!(
                    "could not read the dropped folder: {e}"
                ))),
            }
        });
    };
    // Side A's first two devices, when it is one snapshot file with two or more.
    let two_devices = move || -> Option<(u32, u32)> {
        let inv = state.inventory.get()?;
        if inv.snapshots.is_empty() || !inv.ranks.is_empty() {
            return None;
        }
        let at = state.selected_snapshot.get().unwrap_or(0);
        state
            .snapshots
            .with(|m| match m.get(&at)?.devices.as_slice() {
                [a, b, ..] => Some((a.device, b.device)),
                _ => None,
            })
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
                {move || two_devices().map(|d| view! {
                    <button class="button" data-testid="compare-devices" on:click=move |_| start_compare_devices(state, route, d)>
                        {format!("Compare devices of this file (device {} with {})", d.0, d.1)}
                    </button>
                })}
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
    let o = &v.options;
    route.write(CMP_A_DEVICE, o.a_device.as_ref());
    route.write(CMP_B_DEVICE, o.b_device.as_ref());
    route.write(CMP_SELF, v.choices.b_is_a.then_some(&true));
    route.write(CMP_TIME, o.time_axis.then_some(&true));
    route.write(CMP_ALIGN, o.align.as_ref());
    route.write(CMP_STEP, step_to_hash(o.step).as_ref());
    route.write(CMP_RANK, o.rank.as_ref());
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
        <Controls v=v.clone()/>
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

/// One `<select>` of the controls: `(value, label)` choices, `current` selected; `pick`
/// receives the chosen value.
fn control_select(
    label: &'static str,
    id: &'static str,
    choices: Vec<(String, String)>,
    current: String,
    pick: impl Fn(String) + 'static,
) -> impl IntoView {
    let options = choices
        .into_iter()
        .map(|(value, text)| {
            let selected = value == current;
            view! { <option value=value selected=selected>{text}</option> }
        })
        .collect_view();
    view! {
        <label class="control">
            {label}" "
            <select data-testid=id on:change=move |ev| pick(event_target_value(&ev))>{options}</select>
        </label>
    }
}

/// The options of `proflens diff` for this comparison: devices, overlay axis and alignment
/// (snapshots), step and rank (traces, runs). Each change asks the worker to compute the
/// comparison again from both stores ([`crate::protocol::Request::CompareAgain`]); a refusal
/// is shown beside the controls and the shown comparison stays.
#[component]
fn Controls(v: Arc<CompareViewDto>) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let opts = v.options.clone();
    let ask = move |o: CompareOptions| {
        busy.set(true);
        error.set(None);
        spawn_local(async move {
            if let Err(e) = client().compare_again(o).await {
                let _ = error.try_set(Some(e));
                let _ = busy.try_set(false);
            }
        });
    };
    let c = &v.choices;
    let devices = |list: &[u32]| -> Vec<(String, String)> {
        std::iter::once((String::new(), "every device".to_string()))
            .chain(list.iter().map(|d| (d.to_string(), format!("device {d}"))))
            .collect()
    };
    let dev_text = |d: Option<u32>| d.map(|d| d.to_string()).unwrap_or_default();
    let controls = match v.kind {
        CompareKind::Snapshot => {
            let (o1, o2, o3, o4) = (opts.clone(), opts.clone(), opts.clone(), opts.clone());
            let aligns: Vec<(String, String)> =
                std::iter::once((String::new(), "the first entries".to_string()))
                    .chain(c.annotations.iter().map(|a| (a.clone(), a.clone())))
                    .collect();
            view! {
                {control_select("A device", "compare-a-device", devices(&c.a_devices), dev_text(opts.a_device), move |s| {
                    ask(CompareOptions { a_device: s.parse().ok(), ..o1.clone() })
                })}
                {control_select("B device", "compare-b-device", devices(&c.b_devices), dev_text(opts.b_device), move |s| {
                    ask(CompareOptions { b_device: s.parse().ok(), ..o2.clone() })
                })}
                {control_select("Axis", "compare-axis",
                    vec![("index".into(), "entry index".into()), ("time".into(), "time (ms)".into())],
                    if opts.time_axis { "time".into() } else { "index".into() },
                    move |s| ask(CompareOptions { time_axis: s == "time", ..o3.clone() }))}
                {control_select("Align at", "compare-align", aligns, opts.align.clone().unwrap_or_default(), move |s| {
                    ask(CompareOptions { align: (!s.is_empty()).then_some(s), ..o4.clone() })
                })}
            }
            .into_any()
        }
        CompareKind::Trace => {
            let (o1, o2) = (opts.clone(), opts.clone());
            let steps: Vec<(String, String)> =
                std::iter::once(("1".to_string(), "the first".to_string()))
                    .chain((2..=c.steps.max(1)).map(|n| (n.to_string(), format!("step {n}"))))
                    .chain(std::iter::once((
                        "all".to_string(),
                        "all steps".to_string(),
                    )))
                    .collect();
            let ranks: Vec<(String, String)> =
                std::iter::once((String::new(), "the first".to_string()))
                    .chain(c.ranks.iter().map(|r| (r.to_string(), format!("rank {r}"))))
                    .collect();
            let step_now = step_to_hash(opts.step).unwrap_or_else(|| "1".into());
            let rank_now = opts.rank.map(|r| r.to_string()).unwrap_or_default();
            view! {
                {control_select("Ops of step", "compare-step", steps, step_now, move |s| {
                    ask(CompareOptions { step: step_from_hash(&s).unwrap_or(CompareStep::First), ..o1.clone() })
                })}
                {(c.ranks.len() > 1 || opts.rank.is_some()).then(|| control_select("Rank", "compare-rank", ranks, rank_now, move |s| {
                    ask(CompareOptions { rank: s.parse().ok(), ..o2.clone() })
                }))}
            }
            .into_any()
        }
    };
    view! {
        <div class="compare-controls" data-testid="compare-controls" class:busy=move || busy.get()>
            {controls}
            {move || busy.get().then(|| view! { <span class="muted" data-testid="compare-busy">"computing…"</span> })}
            {move || error.get().map(|e| view! { <span class="error" data-testid="compare-control-error">{e}</span> })}
        </div>
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
    let at = o.align.as_ref().map_or("the first entry".to_string(), |a| {
        format!("the first start of “{a}”")
    });
    view! {
        <figure class="compare-overlay" data-testid="compare-overlay" data-device=o.device.to_string()>
            <figcaption>{format!("Device {}: both sides on one axis ({axis}, aligned at {at})", o.device)}</figcaption>
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
    let ystep = format::binary_step(y_max / 5.0);
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
        let xstep = format::nice_step(span / 8.0, format::StepRound::Nearest).max(1.0);
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
