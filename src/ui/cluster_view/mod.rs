//! The Cluster tab: a cluster summary's ranks at a glance — what the file is, the
//! slow ranks with their robust z, the bubble (idle) pattern across ranks, the rank × step
//! heatmap, the rank table, the largest outliers — and "open this rank", which asks for the
//! selected rank's folder and shows its full analysis in the other tabs while this tab stays.
//! Everything shown is in the [`ClusterViewDto`] the worker sent; this module only renders.

mod heatmap;
mod open_rank;
mod table;

use std::sync::Arc;

use leptos::prelude::*;

use crate::protocol::cluster_view::ClusterViewDto;
use crate::ui::state::AppState;
use crate::views::format;

use heatmap::Heatmap;
use open_rank::OpenRank;
use table::RankTable;

/// Slow ranks listed by name at most (the rest counted).
const SLOW_SHOWN: usize = 24;
/// Outliers listed at most.
const OUTLIERS_SHOWN: usize = 20;

/// The tab.
#[component]
pub fn ClusterView() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        match state.cluster.get() {
        None => view! { <p class="muted" data-testid="cluster-waiting">"Reading the cluster summary…"</p> }.into_any(),
        Some(v) => view! { <Cluster view=v/> }.into_any(),
    }
    }
}

#[component]
fn Cluster(view: Arc<ClusterViewDto>) -> impl IntoView {
    let selected = RwSignal::new(None::<u32>);
    let v = view.clone();
    let slow: Vec<_> = v.ranks.iter().filter(|r| r.slow).cloned().collect();
    let n_slow = slow.len();
    let slow_chips = slow
        .into_iter()
        .take(SLOW_SHOWN)
        .map(|r| {
            let id = r.index;
            let label = format!(
                "rank {}{} · z {} · {}",
                r.rank_id.map(|x| x.to_string()).unwrap_or_else(|| "?".into()),
                if r.role.is_empty() { String::new() } else { format!(" ({})", r.role) },
                r.robust_z.map(|z| format::fixed(z, 1)).unwrap_or_else(|| "∞".into()),
                r.service_ms_avg.map(format::duration_ms).unwrap_or_default(),
            );
            view! { <button class="chip slow" data-testid="slow-rank" on:click=move |_| selected.set(Some(id))>{label}</button> }
        })
        .collect_view();
    let more_slow = (n_slow > SLOW_SHOWN).then(|| format!(" and {} more", n_slow - SLOW_SHOWN));
    let total_ranks = v.ranks.len().max(1) as f64;
    let patterns = v
        .patterns
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let pct = p.ranks as f64 / total_ranks * 100.0;
            view! {
                <div class="pattern" data-testid="pattern" title=format!("{} ranks", p.ranks)>
                    <span class="swatch" style=format!("background:{}", crate::ui::widgets::palette::series_css(i))></span>
                    <span>{p.pattern.clone()}</span>
                    <span class="muted">{format!(" {} ({})", format::thousands(p.ranks as i64), format::percent(Some(pct / 100.0), 1))}</span>
                </div>
            }
        })
        .collect_view();
    let strip = v
        .patterns
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let w = p.ranks as f64 / total_ranks * 100.0;
            view! { <span style=format!("width:{w}%;background:{}", crate::ui::widgets::palette::series_css(i)) title=format!("{}: {} ranks", p.pattern, p.ranks)></span> }
        })
        .collect_view();
    let outliers = v
        .outliers
        .iter()
        .take(OUTLIERS_SHOWN)
        .map(|o| {
            let unit = crate::views::heatmap::Unit::of_metric(&o.metric);
            view! {
                <tr data-testid="outlier">
                    <td class="num">{o.rank_id.map(|x| x.to_string()).unwrap_or_else(|| "?".into())}</td>
                    <td>{o.role.clone()}</td>
                    <td>{o.step_id.clone()}</td>
                    <td>{o.metric.clone()}</td>
                    <td class="num">{unit.label(o.value)}</td>
                    <td class="num">{unit.label(o.median)}</td>
                    <td class="num">{o.robust_z.map(|z| format::fixed(z, 1)).unwrap_or_else(|| "∞".into())}</td>
                </tr>
            }
        })
        .collect_view();
    let n_outliers = v.outliers_total;
    view! {
        <section class="cluster" data-testid="cluster-view">
            <div class="cluster-head">
                <h2>"Cluster summary"</h2>
                <p data-testid="cluster-facts">
                    <b>{format::thousands(v.ranks.len() as i64)}" ranks"</b>
                    {format!(" × {} steps · {} · {} · version {} · {}", v.step_ids.len(), v.file, v.generator, v.version, v.run)}
                </p>
                <p class="muted">{format!("roots: {}", v.roots.join(", "))}</p>
                <p data-testid="cluster-problems">
                    {format!("Problems over every rank: {} errors, {} warnings (per rank in the table's problems column).", format::thousands(v.problems_errors as i64), format::thousands(v.problems_warnings as i64))}
                </p>
            </div>
            <div class="cluster-grid">
                <div>
                    <h3>{format!("Slow ranks ({n_slow})")}</h3>
                    {if n_slow == 0 {
                        view! { <p class="muted" data-testid="no-slow">"No rank is slow: none is more than 5 % above the median service time with a robust z above 3."</p> }.into_any()
                    } else {
                        view! { <div class="chips">{slow_chips}{more_slow}</div> }.into_any()
                    }}
                </div>
                <div>
                    <h3>"Bubble pattern across ranks"</h3>
                    <div class="pattern-strip" data-testid="pattern-strip">{strip}</div>
                    <div class="patterns">{patterns}</div>
                </div>
            </div>
            <Heatmap view=view.clone()/>
            <OpenRank view=view.clone() selected=selected/>
            <h3>"Ranks"</h3>
            <RankTable view=view.clone() selected=selected/>
            <h3>{format!("Outliers ({n_outliers}): one metric of one step far above the other ranks (robust z > 3)")}</h3>
            <table class="plain outliers">
                <thead><tr><th>"rank"</th><th>"role"</th><th>"step"</th><th>"metric"</th><th>"value"</th><th>"median"</th><th>"robust z"</th></tr></thead>
                <tbody>{outliers}</tbody>
            </table>
        </section>
    }
}
