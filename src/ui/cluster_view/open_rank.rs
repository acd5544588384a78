//! "Open this rank": the selected rank's facts and problems, and two pickers (its folder, or
//! its trace file) that say which folder the summary expects (`rank_dir`). Picking loads the
//! rank like a drop (`EngineClient::load_rank`): its analysis fills the other tabs while the
//! cluster view stays.

use std::sync::Arc;

use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;

use crate::protocol::cluster_view::ClusterViewDto;
use crate::ui::client::client;
use crate::ui::files;
use crate::ui::state::{AppState, Tab};
use crate::views::cluster_table::{expected_folder, picked_matches};

/// The panel of the selected rank.
#[component]
pub fn OpenRank(view: Arc<ClusterViewDto>, selected: RwSignal<Option<u32>>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let warning = RwSignal::new(None::<String>);
    let folder_input = NodeRef::<leptos::html::Input>::new();
    Effect::new(move |_| {
        if let Some(el) = folder_input.get() {
            let _ = el.set_attribute("webkitdirectory", "");
        }
    });
    let v = view.clone();
    let on_pick = move |ev: ev::Event| {
        let Some(input) = ev
            .target()
            .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
        else {
            return;
        };
        let (Some(list), Some(i)) = (input.files(), selected.get_untracked()) else {
            return;
        };
        let picked = files::from_file_list(&list);
        input.set_value("");
        if picked.is_empty() {
            return;
        }
        let dir = v.ranks[i as usize].rank_dir.clone();
        let paths: Vec<String> = picked.iter().map(|(p, _)| p.clone()).collect();
        warning.set((!picked_matches(&dir, &paths)).then(|| {
            format!(
                "The picked files are not in a folder named \"{}\" (the summary's rank_dir {dir}); they are analysed anyway.",
                expected_folder(&dir)
            )
        }));
        spawn_local(async move { client().load_rank(picked, i).await });
    };
    let v = view.clone();
    move || {
        let Some(i) = selected.get() else {
            return view! {
                <div class="open-rank muted" data-testid="open-rank-hint">
                    "Click a rank in the table (or a slow rank above) to see its problems and open its folder."
                </div>
            }
            .into_any();
        };
        let r = v.ranks[i as usize].clone();
        let open = state.cluster_open_rank.get() == Some(i);
        let rank = r
            .rank_id
            .map(|x| x.to_string())
            .unwrap_or_else(|| "?".into());
        let problems = if r.errors + r.warnings == 0 {
            "no problems".to_string()
        } else {
            format!(
                "{} errors, {} warnings{}",
                r.errors,
                r.warnings,
                if r.problems_dropped > 0 {
                    format!(" ({} not kept in the summary)", r.problems_dropped)
                } else {
                    String::new()
                }
            )
        };
        let on_pick = on_pick.clone();
        let on_pick2 = on_pick.clone();
        view! {
            <div class="open-rank" data-testid="open-rank" data-rank=rank.clone()>
                <h3>{format!("Rank {rank}{}", if r.role.is_empty() { String::new() } else { format!(" ({})", r.role) })}</h3>
                <p>
                    {format!("status {} · {} · ", r.status, problems)}
                    {r.first_problem.clone().map(|p| view! { <span class="muted" data-testid="open-rank-problem">{p}</span> })}
                </p>
                <p data-testid="open-rank-expects">
                    "Its folder: "<code>{r.rank_dir.clone()}</code>" — pick the folder named "<b>{expected_folder(&r.rank_dir).to_string()}</b>" (or its trace file)."
                </p>
                <div class="open-buttons">
                    <label class="button file-button">
                        "Open this rank's folder…"
                        <input type="file" class="visually-hidden" data-testid="open-rank-folder" node_ref=folder_input multiple=true on:change=on_pick/>
                    </label>
                    <label class="button file-button">
                        "…or its files"
                        <input type="file" class="visually-hidden" data-testid="open-rank-files" multiple=true on:change=on_pick2/>
                    </label>
                    {open.then(|| view! {
                        <button class="button" data-testid="open-rank-show" on:click=move |_| state.tab.set(Tab::Anomaly)>"Show its steps & bubbles"</button>
                    })}
                </div>
                {move || warning.get().map(|w| view! { <p class="notice" data-testid="open-rank-warning">{w}</p> })}
                {open.then(|| view! { <p class="muted" data-testid="open-rank-loaded">"This rank's folder is open: its analysis is in the Inventory, Steps & bubbles and Memory tabs; this tab stays."</p> })}
            </div>
        }
        .into_any()
    }
}
