//! The paragraphs every panel shows while its query runs ("…"), when it failed (the error
//! in words) and when it has nothing to show yet (a grey sentence): one view each, shared by
//! every panel, where a `view!` per panel held the same
//! DOM code many times over (docs/perf/2026-12-06-wasm-size-4.md).

use leptos::prelude::*;

fn note(class: &'static str, text: String) -> AnyView {
    view! { <p class=class>{text}</p> }.into_any()
}

/// `<p class="muted">…</p>`: the answer is on its way.
pub fn pending() -> AnyView {
    note("muted", "…".to_string())
}

/// `<p class="muted">{text}</p>`: nothing to show yet, and why.
pub fn muted(text: &'static str) -> AnyView {
    note("muted", text.to_string())
}

/// `<p class="notice error">{e}</p>`: what failed.
pub fn failed(e: String) -> AnyView {
    note("notice error", e)
}
