//! Recently opened folders on the landing page: **names only** — the dropped
//! root folder's name (or the file names of a loose drop), the number of files, their total
//! size and when — kept in `localStorage` under [`STORAGE_KEY`]. Never any file content, path
//! below the root, or result. "Forget" removes one entry, "Forget all" every entry.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use super::local_store;
use super::state::AppState;
use crate::protocol::FileMeta;
use crate::views::format;

/// `localStorage` key of the list (JSON array, most recent first).
pub const STORAGE_KEY: &str = "proflens.recent";
/// Most entries kept.
pub const MAX_ENTRIES: usize = 8;

/// One remembered load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecentEntry {
    /// Root folder name (`level1/`) or the file names of a loose drop.
    pub name: String,
    /// Number of files.
    pub files: u64,
    /// Total size, bytes.
    pub bytes: u64,
    /// When it was opened, ms since the Unix epoch.
    pub when_ms: f64,
}

/// The name shown for a load: the common first path component as `name/`, else up to three
/// file names (`a.pickle, b.pickle (+2 more)`).
pub fn display_name(files: &[FileMeta]) -> String {
    let first = |p: &str| p.split('/').next().unwrap_or("").to_string();
    if let Some(f) = files.first() {
        let root = first(&f.path);
        if f.path.contains('/')
            && files
                .iter()
                .all(|m| m.path.contains('/') && first(&m.path) == root)
        {
            return format!("{root}/");
        }
    }
    let names: Vec<&str> = files
        .iter()
        .take(3)
        .map(|m| m.path.rsplit('/').next().unwrap_or(&m.path))
        .collect();
    let more = files.len().saturating_sub(3);
    if more > 0 {
        format!("{} (+{more} more)", names.join(", "))
    } else {
        names.join(", ")
    }
}

/// The stored list (empty when absent or unreadable).
pub fn load() -> Vec<RecentEntry> {
    local_store::get(STORAGE_KEY)
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default()
}

fn save(list: &[RecentEntry]) {
    if list.is_empty() {
        local_store::remove(STORAGE_KEY);
    } else if let Ok(s) = serde_json::to_string(list) {
        local_store::set(STORAGE_KEY, &s);
    }
}

/// Puts `entry` first (replacing an entry of the same name) and keeps [`MAX_ENTRIES`].
pub fn remember(list: &mut Vec<RecentEntry>, entry: RecentEntry) {
    list.retain(|e| e.name != entry.name);
    list.insert(0, entry);
    list.truncate(MAX_ENTRIES);
}

/// The recent list as a signal, updated after each load. Call once in `<App/>`.
pub fn install(app: AppState) -> RwSignal<Vec<RecentEntry>> {
    let list = RwSignal::new(load());
    provide_context(list);
    Effect::new(move |_| {
        let entry = app.files.with(|f| {
            (!f.is_empty()).then(|| RecentEntry {
                name: display_name(f),
                files: f.len() as u64,
                bytes: f.iter().map(|m| m.size).sum(),
                when_ms: js_sys::Date::now(),
            })
        });
        if let Some(entry) = entry {
            list.update(|l| {
                // Re-read: another tab may have changed the list meanwhile.
                *l = load();
                remember(l, entry);
                save(l);
            });
        }
    });
    list
}

fn when(ms: f64) -> String {
    let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms));
    String::from(d.to_locale_string("default", &wasm_bindgen::JsValue::UNDEFINED))
}

/// The landing page list with its "Forget" buttons (nothing when empty).
#[component]
pub fn RecentFolders() -> impl IntoView {
    let list = expect_context::<RwSignal<Vec<RecentEntry>>>();
    let forget = move |name: Option<String>| {
        list.update(|l| {
            match &name {
                Some(n) => l.retain(|e| &e.name != n),
                None => l.clear(),
            }
            save(l);
        })
    };
    let rows = move || {
        list.get()
            .into_iter()
            .map(|e| {
                let name = e.name.clone();
                view! {
                    <tr data-testid="recent-row">
                        <td><code data-testid="recent-name">{e.name.clone()}</code></td>
                        <td class="num">{format!("{} file(s)", e.files)}</td>
                        <td class="num">{format::bytes(e.bytes as f64)}</td>
                        <td class="muted">{when(e.when_ms)}</td>
                        <td>
                            <button class="button small" data-testid="recent-forget" aria-label=format!("Forget {}", e.name) on:click=move |_| forget(Some(name.clone()))>"Forget"</button>
                        </td>
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <Show when=move || list.with(|l| !l.is_empty())>
            <section class="recent" data-testid="recent">
                <h2>"Recently opened"</h2>
                <p class="muted">
                    "Names only, kept in this browser (never any content). Drop the folder again to reopen it; a link ending in "
                    <code>"#tab=…"</code>" returns to the same view."
                </p>
                <table class="grid">
                    <tbody>{rows}</tbody>
                </table>
                <button class="button small" data-testid="recent-forget-all" on:click=move |_| forget(None)>"Forget all"</button>
            </section>
        </Show>
    }
}
