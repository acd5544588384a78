//! Colour theme: light and dark follow `prefers-color-scheme` unless the user
//! picks one with the header toggle (System / Light / Dark), remembered in `localStorage`
//! under [`STORAGE_KEY`].
//!
//! Every colour is a CSS variable in `web/style.css`; `<html data-theme="light|dark">` forces
//! a theme, no attribute follows the system. `<html data-theme-resolved>` always says which
//! one is shown. Canvas charts read the variables through [`crate::ui::widgets::palette`] and
//! redraw when [`Theme::dark`] changes (track it in the drawing effect).

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::local_store;

/// `localStorage` key of the choice.
pub const STORAGE_KEY: &str = "proflens.theme";

/// What the user picked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThemeChoice {
    /// Follow the operating system (`prefers-color-scheme`).
    System,
    /// Always light.
    Light,
    /// Always dark.
    Dark,
}

impl ThemeChoice {
    /// The stored / `<select>` value.
    pub fn as_str(self) -> &'static str {
        match self {
            ThemeChoice::System => "system",
            ThemeChoice::Light => "light",
            ThemeChoice::Dark => "dark",
        }
    }
    /// Reads a stored value; anything unknown is `System`.
    pub fn parse(s: &str) -> Self {
        match s {
            "light" => ThemeChoice::Light,
            "dark" => ThemeChoice::Dark,
            _ => ThemeChoice::System,
        }
    }
}

/// The theme context (cheap to copy).
#[derive(Clone, Copy)]
pub struct Theme {
    /// The user's choice.
    pub choice: RwSignal<ThemeChoice>,
    /// Whether the dark theme is shown now (choice or system); canvases track this.
    pub dark: RwSignal<bool>,
    system_dark: RwSignal<bool>,
}

/// The page's theme context.
pub fn use_theme() -> Theme {
    expect_context::<Theme>()
}

fn media() -> Option<web_sys::MediaQueryList> {
    web_sys::window()?
        .match_media("(prefers-color-scheme: dark)")
        .ok()
        .flatten()
}

impl Theme {
    /// Sets and remembers the choice; the page restyles at once.
    pub fn set_choice(&self, c: ThemeChoice) {
        match c {
            ThemeChoice::System => local_store::remove(STORAGE_KEY),
            _ => local_store::set(STORAGE_KEY, c.as_str()),
        }
        self.choice.set(c);
        self.apply();
    }

    /// Writes the `<html>` attributes, then updates [`Theme::dark`] (so a canvas redrawing on
    /// that signal already sees the new CSS variables).
    fn apply(&self) {
        let c = self.choice.get_untracked();
        let dark = match c {
            ThemeChoice::System => self.system_dark.get_untracked(),
            ThemeChoice::Light => false,
            ThemeChoice::Dark => true,
        };
        if let Some(root) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.document_element())
        {
            let _ = match c {
                ThemeChoice::System => root.remove_attribute("data-theme"),
                _ => root.set_attribute("data-theme", c.as_str()),
            };
            let _ = root.set_attribute("data-theme-resolved", if dark { "dark" } else { "light" });
        }
        if self.dark.get_untracked() != dark {
            self.dark.set(dark);
        }
    }
}

/// Creates the theme context from the stored choice and the system setting, and follows
/// changes of the system setting. Call once in `<App/>`.
pub fn install() -> Theme {
    let choice = local_store::get(STORAGE_KEY)
        .map(|s| ThemeChoice::parse(&s))
        .unwrap_or(ThemeChoice::System);
    let mq = media();
    let theme = Theme {
        choice: RwSignal::new(choice),
        dark: RwSignal::new(false),
        system_dark: RwSignal::new(mq.as_ref().map(|m| m.matches()).unwrap_or(false)),
    };
    theme.apply();
    if let Some(mq) = mq {
        let target: web_sys::EventTarget = mq.clone().unchecked_into();
        let listener = gloo::events::EventListener::new(&target, "change", move |_| {
            theme.system_dark.set(mq.matches());
            theme.apply();
        });
        // The page lives as long as the listener: keep it for the page's lifetime.
        listener.forget();
    }
    provide_context(theme);
    theme
}

/// The header toggle: System / Light / Dark.
#[component]
pub fn ThemeToggle() -> impl IntoView {
    let theme = use_theme();
    view! {
        <label class="theme-toggle">
            <span class="visually-hidden">"Colour theme"</span>
            <select
                data-testid="theme"
                aria-label="Colour theme"
                title="Colour theme"
                prop:value=move || theme.choice.get().as_str()
                on:change=move |ev| theme.set_choice(ThemeChoice::parse(&event_target_value(&ev)))
            >
                <option value="system">"Theme: system"</option>
                <option value="light">"Theme: light"</option>
                <option value="dark">"Theme: dark"</option>
            </select>
        </label>
    }
}
