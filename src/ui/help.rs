//! The keyboard help overlay (`?`): every shortcut of the page. A view that adds keys adds
//! its lines to [`SHORTCUTS`].

use leptos::html::Button;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::keys::use_keys;

/// (section, keys, what they do), in display order.
pub const SHORTCUTS: &[(&str, &str, &str)] = &[
    ("Page", "?", "Open or close this help"),
    (
        "Page",
        "Esc",
        "Close this help, the call-stack panel or the selection",
    ),
    (
        "Page",
        "Tab / Shift+Tab",
        "Move between buttons, tabs, charts and tables (focus is outlined)",
    ),
    (
        "Page",
        "Enter / Space",
        "Press the focused button, tab, row or column header",
    ),
    ("Page", "← / → on a tab", "Previous / next tab"),
    (
        "Charts (focused)",
        "W or ↑, S or ↓",
        "Zoom in / out around the middle",
    ),
    ("Charts (focused)", "A or ←, D or →", "Pan earlier / later"),
    ("Charts (focused)", "0 or Home", "Show the whole range"),
    (
        "Charts",
        "Wheel, drag, double-click",
        "Zoom at the cursor, zoom to a range, reset",
    ),
    (
        "Tables (focused)",
        "↑ / ↓",
        "Select the previous / next row",
    ),
    ("Tables (focused)", "Esc", "Clear the selection"),
    (
        "Timeline search box",
        "Enter / Shift+Enter",
        "Find the text, then the next / previous match (the view centres on it)",
    ),
    ("Timeline search box", "Esc", "Clear the search"),
    (
        "Timeline",
        "Drag the gutter's edge / the ⋯ handle",
        "Widen the lane labels / make the lanes taller",
    ),
];

/// The `?` button in the header.
#[component]
pub fn HelpButton() -> impl IntoView {
    let keys = use_keys();
    view! {
        <button
            class="button icon"
            data-testid="help-button"
            title="Keyboard shortcuts (?)"
            aria-label="Keyboard shortcuts"
            aria-haspopup="dialog"
            on:click=move |_| keys.help.set(true)
        >
            "?"
        </button>
    }
}

fn active_element() -> Option<web_sys::HtmlElement> {
    web_sys::window()?
        .document()?
        .active_element()?
        .dyn_into()
        .ok()
}

/// The overlay (shown while [`super::keys::Keys::help`] is set). Focus moves to its close
/// button on open and back where it was on close.
#[component]
pub fn HelpOverlay() -> impl IntoView {
    let keys = use_keys();
    let close_btn = NodeRef::<Button>::new();
    let return_to = StoredValue::new_local(None::<web_sys::HtmlElement>);
    Effect::new(move |prev: Option<bool>| {
        let open = keys.help.get();
        if open && prev != Some(true) {
            return_to.set_value(active_element());
        }
        if !open && prev == Some(true) {
            if let Some(el) = return_to.get_value() {
                let _ = el.focus();
            }
        }
        open
    });
    Effect::new(move |_| {
        if let Some(b) = close_btn.get() {
            let _ = b.focus();
        }
    });
    let rows = || {
        SHORTCUTS
            .iter()
            .map(|(section, k, what)| {
                view! { <tr><td class="muted">{*section}</td><td><kbd>{*k}</kbd></td><td>{*what}</td></tr> }
            })
            .collect_view()
    };
    view! {
        <Show when=move || keys.help.get()>
            <div class="overlay-backdrop" on:click=move |_| keys.help.set(false)>
                <div
                    class="overlay"
                    role="dialog"
                    aria-modal="true"
                    aria-labelledby="help-title"
                    data-testid="help-overlay"
                    on:click=move |ev| ev.stop_propagation()
                >
                    <div class="overlay-head">
                        <h2 id="help-title">"Keyboard shortcuts"</h2>
                        <button class="button" node_ref=close_btn data-testid="help-close" on:click=move |_| keys.help.set(false)>"Close (Esc)"</button>
                    </div>
                    <table class="grid shortcuts">
                        <thead><tr><th>"where"</th><th>"keys"</th><th>"action"</th></tr></thead>
                        <tbody>{rows()}</tbody>
                    </table>
                </div>
            </div>
        </Show>
    }
}
