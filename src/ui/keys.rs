//! Page-wide keyboard shortcuts: `?` opens the help overlay
//! ([`super::help`]), Esc closes it, or else asks open panels to close ([`Keys::escape`]).
//! Chart keys (W/A/S/D, arrows) are handled by the focused chart itself
//! ([`super::widgets::zoom::on_key`]); table keys by the focused table. Shortcuts never fire
//! while typing in a text field. Enter or Space on a focused row (`tr`/`li`/`div` with
//! `tabindex`, not a native control) clicks it: clickable rows only need `tabindex="0"`.

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// The keyboard context (cheap to copy).
#[derive(Clone, Copy)]
pub struct Keys {
    /// Whether the help overlay is open.
    pub help: RwSignal<bool>,
    /// Incremented by each Esc that no overlay took: views close their panels on a change
    /// (track it in an effect and skip the first run).
    pub escape: RwSignal<u32>,
}

/// The page's keyboard context.
pub fn use_keys() -> Keys {
    expect_context::<Keys>()
}

/// Whether the event comes from a place where keys are text (inputs, selects, editable).
pub fn typing(ev: &web_sys::KeyboardEvent) -> bool {
    let Some(el) = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
    else {
        return false;
    };
    let tag = el.tag_name().to_ascii_lowercase();
    matches!(tag.as_str(), "input" | "textarea" | "select")
        || el.get_attribute("contenteditable").is_some()
}

/// A focused clickable element that is not a native control (a table row or a cell with
/// `tabindex`, or `role="button"`): Enter and Space click it, so a view only has to add
/// `tabindex="0"` to its clickable rows to make them keyboard-reachable.
fn activatable(ev: &web_sys::KeyboardEvent) -> Option<web_sys::HtmlElement> {
    let el: web_sys::HtmlElement = ev.target()?.dyn_into().ok()?;
    let tag = el.tag_name().to_ascii_lowercase();
    if matches!(
        tag.as_str(),
        "button" | "a" | "input" | "select" | "textarea" | "summary" | "canvas"
    ) {
        return None;
    }
    let row_like = matches!(tag.as_str(), "tr" | "th" | "li" | "td" | "div" | "span")
        && el.has_attribute("tabindex");
    let role = el.get_attribute("role").unwrap_or_default();
    (row_like && (role.is_empty() || role == "button" || role == "row" || role == "option"))
        .then_some(el)
}

/// Installs the window key listener and provides [`Keys`]. Call once in `<App/>`.
pub fn install() -> Keys {
    let keys = Keys {
        help: RwSignal::new(false),
        escape: RwSignal::new(0),
    };
    provide_context(keys);
    let handle = window_event_listener(ev::keydown, move |ev: web_sys::KeyboardEvent| {
        match ev.key().as_str() {
            "?" if !typing(&ev) && !ev.ctrl_key() && !ev.meta_key() && !ev.alt_key() => {
                ev.prevent_default();
                keys.help.update(|h| *h = !*h);
            }
            "Enter" | " " if !ev.default_prevented() => {
                if let Some(el) = activatable(&ev) {
                    ev.prevent_default();
                    el.click();
                }
            }
            "Escape" => {
                if keys.help.get_untracked() {
                    keys.help.set(false);
                } else {
                    keys.escape.update(|n| *n = n.wrapping_add(1));
                }
            }
            _ => {}
        }
    });
    // The listener lives as long as the page.
    std::mem::forget(handle);
    keys
}
