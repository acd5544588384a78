//! Top allocation sites of one rank, grouped by user frame, first listed frame or name.

use crate::ui::widgets::note::{failed, pending};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::protocol::{MemoryQuery, MemoryReply, SiteKey, SitesDto};
use crate::views::format;

/// The top-sites table.
#[component]
pub fn SitesTable(rank: u32) -> impl IntoView {
    let group_by = RwSignal::new(SiteKey::UserFrame);
    let sites = RwSignal::new(None::<Result<SitesDto, String>>);
    Effect::new(move |_| {
        let g = group_by.get();
        spawn_local(async move {
            let res = match super::query(MemoryQuery::Sites {
                rank,
                group_by: g,
                limit: 50,
            })
            .await
            {
                Ok(MemoryReply::Sites(s)) => Ok(s),
                Ok(other) => Err(crate::ui::client::unexpected(
                    crate::ui::client::memory_reply_name(&other),
                )),
                Err(e) => Err(e),
            };
            // `try_`: the view may have been unmounted while the query ran.
            if group_by.try_get_untracked() == Some(g) {
                sites.set(Some(res));
            }
        });
    });
    let choice = move |key: SiteKey, label: &'static str| {
        view! {
            <label>
                <input type="radio" name="site-key" checked=move || group_by.get() == key on:change=move |_| group_by.set(key)/>
                {label}
            </label>
        }
    };
    view! {
        <section class="sites" data-testid="sites">
            <h4>"Top allocation sites"</h4>
            <div class="choices">
                "Group by: "
                {choice(SiteKey::UserFrame, "user frame")}
                {choice(SiteKey::CallStackTop, "first listed frame (innermost)")}
                {choice(SiteKey::Name, "operator name")}
            </div>
            {move || match sites.get() {
                None => pending(),
                Some(Err(e)) => failed(e),
                Some(Ok(s)) => {
                    let total = s.total_kb;
                    view! {
                        <p class="muted">{format!("{} distinct; allocations only (size > 0)", s.distinct)}</p>
                        <table class="grid">
                            <thead><tr><th class="num">"allocated"</th><th class="num">"share"</th><th class="num">"count"</th><th>"site"</th></tr></thead>
                            <tbody>
                                {s.groups.into_iter().map(|g| {
                                    let key = if g.key.is_empty() { "(none: no stack or no user frame)".to_string() } else { g.key };
                                    let share = if total > 0.0 { g.size_kb / total * 100.0 } else { 0.0 };
                                    view! {
                                        <tr>
                                            <td class="num">{format::kib(g.size_kb)}</td>
                                            <td class="num">{format::percent(Some(share / 100.0), 1)}</td>
                                            <td class="num">{g.count.to_string()}</td>
                                            <td><code>{key}</code></td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    }
                    .into_any()
                }
            }}
        </section>
    }
}
