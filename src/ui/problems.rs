//! The problems tab: every warning and error with its file, line or byte offset, and what
//! was expected (ascend-memory.md §10.3 "Data checks").

use leptos::prelude::*;

use super::state::AppState;
use crate::protocol::SeverityDto;

/// The problems tab.
#[component]
pub fn ProblemsView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let filter = RwSignal::new(String::new());
    let rows = move || {
        let needle = filter.get().to_lowercase();
        let mut list = state.problems.get();
        if let Some(inv) = state.inventory.get() {
            list.splice(0..0, inv.problems);
        }
        list.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.file.cmp(&b.file)));
        list.into_iter()
            .filter(|p| {
                needle.is_empty()
                    || p.message.to_lowercase().contains(&needle)
                    || p.file.to_lowercase().contains(&needle)
                    || p.code.to_lowercase().contains(&needle)
            })
            .map(|p| {
                let sev = match p.severity {
                    SeverityDto::Error => "error",
                    SeverityDto::Warning => "warning",
                    SeverityDto::Info => "info",
                };
                let mut place = String::new();
                if let Some(l) = p.line {
                    place.push_str(&format!("line {l}"));
                }
                if let Some(b) = p.byte {
                    if !place.is_empty() {
                        place.push_str(", ");
                    }
                    place.push_str(&format!("byte {b}"));
                }
                if let Some(c) = &p.column {
                    if !place.is_empty() {
                        place.push_str(", ");
                    }
                    place.push_str(&format!("column '{c}'"));
                }
                view! {
                    <tr class=sev>
                        <td class="sev">{sev}</td>
                        <td><code>{p.code}</code></td>
                        <td><code>{p.file}</code></td>
                        <td>{place}</td>
                        <td>{p.message}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <section class="problems" data-testid="problems">
            <p class="summary">
                {move || {
                    let inv = state.inventory.with(|i| i.as_ref().map(|i| i.problems.len() as u64).unwrap_or(0));
                    let total = state.problems_total.get() + inv;
                    let kept = state.problems.with(|p| p.len()) as u64 + inv;
                    if total > kept {
                        format!("{total} problem(s); the first {kept} are listed.")
                    } else {
                        format!("{total} problem(s).")
                    }
                }}
            </p>
            <input
                type="search"
                placeholder="filter problems"
                on:input=move |ev| filter.set(event_target_value(&ev))
            />
            <table class="grid">
                <thead>
                    <tr><th>"severity"</th><th>"code"</th><th>"file"</th><th>"where"</th><th>"message"</th></tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}
