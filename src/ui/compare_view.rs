//! The Compare tab: "compare with…" a second folder or file (drop target and
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
use crate::protocol::compare::{CompareExportKind, CompareKind, CompareOptions, CompareViewDto};
use crate::protocol::ExportRequest;
use crate::views::compare_table::{step_from_hash, step_to_hash};
use crate::views::format;

mod controls;
mod overlay;
mod tables;

use controls::Controls;
use overlay::{overlay_columns, OverlayChart};
use tables::{cell_view, Tables};

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
                Ok(line) => state.status.set(line),
                Err(e) => state.status.set(format!("export failed: {e}")),
            }
        })
    };
    view! { <button class="button" data-testid=id on:click=on>{label}</button> }
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
