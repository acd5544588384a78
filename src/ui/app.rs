//! `<App/>`: the landing page (drop zone, open buttons, sample, the privacy statement) and,
//! once something is loaded, the run bar and one tab per view of the registry
//! [`VIEWS`].

use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

use super::anomaly_view::AnomalyView;
use super::client::{client, install};
use super::cluster_view::ClusterView;
use super::compare_view::CompareView;
use super::files;
use super::help::{HelpButton, HelpOverlay};
use super::inventory::InventoryView;
use super::memory_view::MemoryView;
use super::problems::ProblemsView;
use super::recent::RecentFolders;
use super::sample::SAMPLE;
use super::snapshot_view::SnapshotTab;
use super::state::{AppState, Phase, Tab};
use super::tabs::{can_compare, shown, VIEWS};
use super::theme::ThemeToggle;
use super::{keys, recent, route, theme};
use crate::views::format;

/// The privacy statement shown on the landing page and in the footer.
pub const PRIVACY: &str = "Your files never leave this browser: they are read locally by WebAssembly in a Web Worker. Nothing is uploaded, and the page makes no network request after it has loaded.";

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let state = AppState::new();
    provide_context(state);
    install(state);
    theme::install();
    keys::install();
    route::install(state);
    recent::install(state);

    // The whole window accepts drops.
    let on_dragover = move |ev: ev::DragEvent| ev.prevent_default();
    let dragging = RwSignal::new(false);
    let on_drop = move |ev: ev::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        let Some(dt) = ev.data_transfer() else { return };
        let (entries, loose) = files::drop_entries(&dt);
        spawn_local(async move {
            match files::walk_entries(entries).await {
                Ok(mut list) => {
                    list.extend(loose);
                    client().load(list).await;
                }
                Err(e) => state.phase.set(Phase::Failed(format!(
                    "could not read the dropped folder: {e}"
                ))),
            }
        });
    };

    view! {
        <div
            class="page"
            class:dragging=move || dragging.get()
            on:dragover=on_dragover
            on:dragenter=move |_| dragging.set(true)
            on:dragleave=move |ev: ev::DragEvent| {
                if ev.related_target().is_none() {
                    dragging.set(false)
                }
            }
            on:drop=on_drop
        >
            <header class="top">
                <h1>"proflens"</h1>
                <span class="tagline">"profiler folders, analysed in your browser"</span>
                <OpenButtons/>
                <ThemeToggle/>
                <HelpButton/>
            </header>
            {move || match state.phase.get() {
                Phase::Empty => view! { <Landing/> }.into_any(),
                _ => view! { <Results/> }.into_any(),
            }}
            <footer class="privacy" data-testid="privacy">{PRIVACY}</footer>
            <HelpOverlay/>
        </div>
    }
}

/// "Open folder", "Open files" and "Load sample".
#[component]
fn OpenButtons() -> impl IntoView {
    let on_pick = move |ev: ev::Event| {
        if let Some(picked) = files::picked(&ev) {
            spawn_local(async move { client().load(picked).await });
        }
    };
    let load_sample = move |_| {
        let state = expect_context::<AppState>();
        match files::files_from_bytes(SAMPLE) {
            Ok(list) => spawn_local(async move { client().load(list).await }),
            Err(e) => state
                .phase
                .set(Phase::Failed(format!("could not build the sample: {e:?}"))),
        }
    };
    // `webkitdirectory` is not a standard attribute: set it on the element once mounted.
    let folder_input = NodeRef::<leptos::html::Input>::new();
    Effect::new(move |_| {
        if let Some(el) = folder_input.get() {
            let _ = el.set_attribute("webkitdirectory", "");
        }
    });
    view! {
        <div class="open-buttons">
            <label class="button file-button">
                "Open folder…"
                <input type="file" class="visually-hidden" data-testid="open-folder" node_ref=folder_input multiple=true on:change=on_pick/>
            </label>
            <label class="button file-button">
                "Open files…"
                <input type="file" class="visually-hidden" data-testid="open-files" multiple=true on:change=on_pick/>
            </label>
            <button class="button" data-testid="load-sample" on:click=load_sample>"Load sample"</button>
        </div>
    }
}

#[component]
fn Landing() -> impl IntoView {
    view! {
        <main class="landing">
            <div class="drop-zone" data-testid="drop-zone">
                <p class="big">"Drop a profiler output folder here"</p>
                <p>
                    "Any depth works: a run root with many "<code>"*_ascend_pt"</code>
                    " rank folders, one rank folder, or its "<code>"ASCEND_PROFILER_OUTPUT"</code>" folder."
                </p>
                <p>"Or use " <b>"Open folder…"</b> ", " <b>"Open files…"</b> " or " <b>"Load sample"</b> " above."</p>
            </div>
            <p class="privacy-statement" data-testid="privacy-statement">{PRIVACY}</p>
            <RecentFolders/>
            <section class="help">
                <h2>"What it shows"</h2>
                <ul>
                    <li>
                        <b>"Memory events"</b>
                        ": every row of "<code>"operator_memory.csv"</code>" matched to the Python call stack of the operator that allocated it ("<code>"trace_view.json"</code>"), with the allocator curves, the peak and what was live at it."
                    </li>
                    <li data-testid="landing-snapshots">
                        <b>"Memory snapshots"</b>
                        ": drop one or more PyTorch allocator snapshot pickles ("<code>"torch.cuda.memory._dump_snapshot"</code>" or torch_npu's, "<code>".pickle"</code>" / "<code>".pkl"</code>") to see the allocated / active / reserved curves, the peaks and what holds memory at each, the live set at any point you click (with stacks and an icicle by call stack), segments and fragmentation, and a Markdown peak report with links to your source lines."
                    </li>
                </ul>
                <p>
                    "Capture with the torch_npu profiler, "<code>"profile_memory=True"</code>" and "
                    <code>"with_stack=True"</code>", exported as text."
                </p>
            </section>
        </main>
    }
}

/// The run bar and the tabs.
#[component]
fn Results() -> impl IntoView {
    let state = expect_context::<AppState>();
    let status = move || match state.phase.get() {
        Phase::Empty => String::new(),
        Phase::Inventory => "Reading the folder listing…".into(),
        Phase::Running => {
            let done = state.finished.with(|s| s.len());
            let running = state.running.get();
            format!("Analysing… {running} analysis job(s) running, {done} finished")
        }
        Phase::Done { elapsed_ms } => {
            let n = state.finished.with(|s| s.len());
            let failed = state.failures.with(|f| f.len());
            let failed = if failed > 0 {
                format!(" ({failed} failed)")
            } else {
                String::new()
            };
            format!(
                "Done: {n} analysis job(s){failed} in {}",
                format::elapsed_ms(elapsed_ms)
            )
        }
        Phase::Cancelled => "Cancelled: workers stopped. Results so far are kept.".into(),
        Phase::Failed(m) => format!("Failed: {m}"),
    };
    let running = move || matches!(state.phase.get(), Phase::Running | Phase::Inventory);
    let tabs = move || {
        let inv = state.inventory.get().unwrap_or_default();
        VIEWS
            .iter()
            .filter(|v| shown(v, &inv, &state))
            .map(|v| {
                let tab = v.tab;
                let label = if tab == Tab::Problems {
                    let inv = state
                        .inventory
                        .with(|i| i.as_ref().map(|i| i.problems.len() as u64).unwrap_or(0));
                    let failed = state.failures.with(|f| f.len()) as u64;
                    format!(
                        "{} ({})",
                        v.label,
                        state.problems_total.get() + inv + failed
                    )
                } else {
                    v.label.to_string()
                };
                let id = format!("tab-{tab:?}").to_lowercase();
                view! {
                    <button
                        class="tab"
                        role="tab"
                        id=id.clone()
                        aria-controls="tab-panel"
                        aria-selected=move || (state.tab.get() == tab).to_string()
                        class:active=move || state.tab.get() == tab
                        data-testid=id
                        on:click=move |_| state.tab.set(tab)
                        on:keydown=move |ev: ev::KeyboardEvent| tab_arrow(&ev, tab)
                    >
                        {label}
                    </button>
                }
            })
            .collect_view()
    };
    view! {
        <div class="run-bar">
            <span class="status" data-testid="run-status" data-phase=move || format!("{:?}", state.phase.get()).split(['(', ' ', '{']).next().unwrap_or("").to_string()>
                {status}
            </span>
            <Show when=running>
                <button class="button danger" data-testid="cancel" on:click=move |_| client().cancel()>"Cancel"</button>
            </Show>
            <Show when=move || matches!(state.phase.get(), Phase::Cancelled | Phase::Done { .. })>
                <button class="button" on:click=move |_| spawn_local(async move { client().restart().await })>"Run again"</button>
            </Show>
            <Show when=move || state.inventory.with(|i| i.as_ref().is_some_and(can_compare)) && state.tab.get() != Tab::Compare>
                <button class="button" data-testid="compare-with" title="Open a second folder or file and compare it with this one" on:click=move |_| state.tab.set(Tab::Compare)>"Compare with…"</button>
            </Show>
            <span class="status-line">{move || state.status.get()}</span>
            <span
                class="memory-meter muted"
                data-testid="wasm-memory"
                data-bytes=move || state.wasm_memory.with(|m| m.values().sum::<u64>()).to_string()
                data-max-bytes=move || state.wasm_memory.with(|m| m.values().copied().max().unwrap_or(0)).to_string()
                title="WebAssembly memory of the workers (each is limited to 4 GiB)"
            >
                {move || {
                    let (sum, max, n) = state.wasm_memory.with(|m| (m.values().sum::<u64>(), m.values().copied().max().unwrap_or(0), m.len()));
                    if n == 0 { String::new() } else {
                        format!("wasm memory: {} in {n} worker(s), largest {} of 4 GiB", format::bytes(sum as f64), format::bytes(max as f64))
                    }
                }}
            </span>
        </div>
        <nav class="tabs" role="tablist" aria-label="Views">{tabs}</nav>
        <main
            class="tab-body"
            id="tab-panel"
            role="tabpanel"
            aria-labelledby=move || format!("tab-{:?}", state.tab.get()).to_lowercase()
        >
            {move || match state.tab.get() {
                Tab::Inventory => view! { <InventoryView/> }.into_any(),
                Tab::Memory => view! { <MemoryView/> }.into_any(),
                Tab::Problems => view! { <ProblemsView/> }.into_any(),
                Tab::Snapshot => view! { <SnapshotTab/> }.into_any(),
                Tab::Anomaly => view! { <AnomalyView/> }.into_any(),
                Tab::Cluster => view! { <ClusterView/> }.into_any(),
                Tab::Compare => view! { <CompareView/> }.into_any(),
                Tab::Comm => view! { <crate::ui::comm_view::CommView/> }.into_any(),
            }}
        </main>
    }
}

/// ←/→ on a focused tab: select and focus the previous / next tab that applies.
fn tab_arrow(ev: &ev::KeyboardEvent, tab: Tab) {
    let step: i32 = match ev.key().as_str() {
        "ArrowLeft" => -1,
        "ArrowRight" => 1,
        _ => return,
    };
    ev.prevent_default();
    let state = expect_context::<AppState>();
    let inv = state.inventory.get_untracked().unwrap_or_default();
    let tabs: Vec<Tab> = VIEWS
        .iter()
        .filter(|v| shown(v, &inv, &state))
        .map(|v| v.tab)
        .collect();
    let Some(i) = tabs.iter().position(|t| *t == tab) else {
        return;
    };
    let n = tabs.len() as i32;
    let next = tabs[((i as i32 + step).rem_euclid(n)) as usize];
    state.tab.set(next);
    let id = format!("tab-{next:?}").to_lowercase();
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(&id))
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}
