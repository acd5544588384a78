//! The timeline's search box: Enter asks every shown rank's worker (`AnomalyQuery::Search`,
//! new text) or steps to the next match, Shift+Enter back, Esc clears; the view centres on the
//! match and selects it (the item panel shows it). Matches are merged by shown start.

use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::detail::Sel;
use super::state::{Matches, Tl};
use crate::protocol::{AnomalyQuery, AnomalyReply};

/// Selects match `k` and centres the view on it.
fn go_to(tl: Tl, k: usize) {
    let Some((r, m)) = tl
        .found
        .with_untracked(|f| f.as_ref().and_then(|f| f.items.get(k).cloned()))
    else {
        return;
    };
    tl.cur.set(Some(k));
    tl.show(Sel { rank: r, item: m });
}

/// The next (`dir` 1) or previous (−1) match, wrapping around.
fn step(tl: Tl, dir: i64) {
    let n = tl
        .found
        .with_untracked(|f| f.as_ref().map_or(0, |f| f.items.len()));
    if n == 0 {
        return;
    }
    let k = match tl.cur.get_untracked() {
        Some(k) => (k as i64 + dir).rem_euclid(n as i64) as usize,
        None if dir < 0 => n - 1,
        None => 0,
    };
    go_to(tl, k);
}

/// Enter (`dir` 1) or Shift+Enter (−1) with `text` in the box.
fn submit(tl: Tl, text: String, dir: i64) {
    let text = text.trim().to_string();
    if text.is_empty() {
        return;
    }
    if tl
        .found
        .with_untracked(|f| f.as_ref().is_some_and(|f| f.text == text))
    {
        step(tl, dir);
        return;
    }
    let Tl {
        ranks,
        aligns,
        error,
        cur,
        found,
        ..
    } = tl;
    spawn_local(async move {
        // Every shown rank, merged by shown start.
        let Some(rs) = ranks.try_get_untracked() else {
            return;
        };
        let mut items = Vec::new();
        let mut total = 0;
        for (pos, r) in rs.into_iter().enumerate() {
            let q = AnomalyQuery::Search {
                rank: r,
                text: text.clone(),
                limit: 1000,
            };
            match crate::ui::anomaly_view::ask(q).await {
                Ok(AnomalyReply::Search(f)) => {
                    total += f.total;
                    let off = aligns
                        .try_with_untracked(|a| a.get(pos).map_or(0.0, |a| a.offset_ms))
                        .unwrap_or(0.0);
                    items.extend(f.matches.into_iter().map(|m| (m.start_ms - off, r, m)));
                }
                Ok(other) => {
                    let _ = error.try_set(Some(crate::ui::client::unexpected(
                        crate::ui::client::anomaly_reply_name(&other),
                    )));
                    return;
                }
                Err(e) => {
                    let _ = error.try_set(Some(e));
                    return;
                }
            }
        }
        crate::base::sort::sort_by(&mut items, |a, b| a.0.total_cmp(&b.0));
        let items = items.into_iter().map(|(_, r, m)| (r, m)).collect();
        let _ = cur.try_set(None);
        let _ = found.try_set(Some(Matches { text, total, items }));
        step(tl, dir);
    });
}

/// The search box, its ▲/▼ buttons and the match count.
#[component]
pub(super) fn SearchBar(tl: Tl) -> impl IntoView {
    let search_text = RwSignal::new(String::new());
    let submit = move |dir: i64| submit(tl, search_text.get_untracked(), dir);
    let clear_search = move || {
        tl.found.set(None);
        tl.cur.set(None);
        search_text.set(String::new());
    };
    let search_count = move || {
        tl.found.with(|f| {
            f.as_ref().map(|f| match (f.total, tl.cur.get()) {
                (0, _) => format!("no match for “{}”", f.text),
                (t, Some(k)) if t as usize > f.items.len() => format!(
                    "{} / {} (first {} of {t})",
                    k + 1,
                    f.items.len(),
                    f.items.len()
                ),
                (t, Some(k)) => format!("{} / {t}", k + 1),
                (t, None) => format!("{t} matches"),
            })
        })
    };
    view! {
        <span class="timeline-search">
            <input type="search" data-testid="timeline-search" placeholder="Find a kernel or event (Enter ▼, Shift+Enter ▲)"
                prop:value=move || search_text.get()
                on:input=move |ev| search_text.set(event_target_value(&ev))
                on:keydown=move |ev: ev::KeyboardEvent| {
                    if ev.key() == "Enter" {
                        ev.prevent_default();
                        submit(if ev.shift_key() { -1 } else { 1 });
                    } else if ev.key() == "Escape" {
                        clear_search();
                    }
                }/>
            <button class="button" data-testid="timeline-search-prev" title="previous match (Shift+Enter)" on:click=move |_| submit(-1)>"▲"</button>
            <button class="button" data-testid="timeline-search-next" title="next match (Enter)" on:click=move |_| submit(1)>"▼"</button>
            <span class="muted" data-testid="timeline-search-count">{search_count}</span>
        </span>
    }
}
