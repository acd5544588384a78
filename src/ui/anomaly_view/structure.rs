//! The structure breakdown tree of the selected step (anomaly.md §4): step → structure →
//! block / side → op, each with the four timing perspectives of §4.5; nodes expand and
//! collapse (the step open; its structures open when there are at most
//! [`OPEN_STRUCTURES_MAX`]; ops closed), and a node lists its first [`FIRST_CHILDREN`] children
//! with a "show all" row for the rest.

use crate::ui::widgets::note::{failed, pending};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{ask, ms};
use crate::protocol::anomaly::{AnomalyQuery, AnomalyReply, StructureTreeDto, TreeNodeDto};
use crate::ui::state::AppState;

/// Children a node lists before a "show all" row: a GPU step can hold hundreds of structures
/// or blocks, which listed in full made the tab tens of thousands of pixels long.
const FIRST_CHILDREN: usize = 40;

/// The step's structures start expanded only when there are at most this many; more start
/// closed, so the first screen shows the step's outline, not one structure's blocks.
const OPEN_STRUCTURES_MAX: usize = 8;

fn node_view(n: TreeNodeDto, depth: usize, open_at_first: bool) -> AnyView {
    let open = RwSignal::new(open_at_first);
    let show_all = RwSignal::new(false);
    let has_children = !n.children.is_empty();
    let children = n.children.clone();
    let kids_open = depth == 0 && children.len() <= OPEN_STRUCTURES_MAX;
    let more = n.more;
    let toggle = move |_| open.update(|o| *o = !*o);
    view! {
        <div class="anom-tree-node" data-testid="tree-node" data-kind=n.kind.clone()>
            <div class="anom-tree-row" tabindex="0" style=format!("padding-left:{}px", depth * 18) on:click=toggle>
                <span class="anom-tree-toggle">{move || if !has_children { "·" } else if open.get() { "▾" } else { "▸" }}</span>
                <span class=format!("anom-tree-label kind-{}", n.kind)><code>{n.label.clone()}</code></span>
                <span class="anom-tree-detail muted">{n.detail.clone()}</span>
                <span class="num">{n.kernel_count.to_string()}</span>
                <span class="num">{ms(n.wall_ms)}</span>
                <span class="num">{ms(n.busy_union_ms)}</span>
                <span class="num">{ms(n.kernel_sum_ms)}</span>
                <span class="num">{ms(n.total_cost_ms)}</span>
            </div>
            {move || open.get().then(|| {
                let total = children.len();
                let shown = if show_all.get() { total } else { total.min(FIRST_CHILDREN) };
                let kids = children
                    .iter()
                    .take(shown)
                    .map(|c| node_view(c.clone(), depth + 1, kids_open))
                    .collect_view();
                view! {
                    {kids}
                    {(shown < total).then(|| view! {
                        <div class="anom-tree-row anom-tree-more" data-testid="tree-show-all" tabindex="0"
                            style=format!("padding-left:{}px", (depth + 1) * 18)
                            on:click=move |_| show_all.set(true)>
                            <span class="anom-tree-toggle">"▸"</span>
                            <span>{format!("{} more — show all {}", total - shown, total)}</span>
                        </div>
                    })}
                    {(more.0 > 0).then(|| view! {
                        <div class="anom-tree-row muted" style=format!("padding-left:{}px", (depth + 1) * 18)>
                            {format!("… {} more ops ({} kernels)", more.0, more.1)}
                        </div>
                    })}
                }
            })}
        </div>
    }
    .into_any()
}

/// The tree of the selected step of `rank` (the first step when none is selected).
#[component]
pub fn StructureTree(rank: u32) -> impl IntoView {
    let state = expect_context::<AppState>();
    let tree = RwSignal::new(None::<Result<StructureTreeDto, String>>);
    Effect::new(move |_| {
        let step = state.anomaly_step.get().unwrap_or(0);
        spawn_local(async move {
            let res = match ask(AnomalyQuery::Structure { rank, step }).await {
                Ok(AnomalyReply::Structure(t)) => Ok(t),
                Ok(other) => Err(crate::ui::client::unexpected(
                    crate::ui::client::anomaly_reply_name(&other),
                )),
                Err(e) => Err(e),
            };
            if state
                .anomaly_step
                .try_get_untracked()
                .map(|s| s.unwrap_or(0))
                == Some(step)
            {
                let _ = tree.try_set(Some(res));
            }
        });
    });
    view! {
        <section class="anom-structure" data-testid="structure-tree">
            <h3>"Structure breakdown"</h3>
            {move || match tree.get() {
                None => pending(),
                Some(Err(e)) => failed(e),
                Some(Ok(t)) => view! {
                    <p class="muted">{format!("segmentation: {} · wall = first start to last end; busy union = merged kernel time over all streams; kernel sum = Σ durations; total cost = Σ (duration + wait)", t.method)}</p>
                    <div class="anom-tree">
                        <div class="anom-tree-row anom-tree-head">
                            <span></span><span>"node"</span><span></span>
                            <span class="num">"kernels"</span><span class="num">"wall"</span><span class="num">"busy union"</span>
                            <span class="num">"kernel sum"</span><span class="num">"total cost"</span>
                        </div>
                        {node_view(t.root, 0, true)}
                    </div>
                }
                .into_any(),
            }}
        </section>
    }
}
