//! The selected point: levels and the entry there, contributors by site (links, call
//! chains), the largest live tensors (click one for its full stack) and the icicle of live
//! bytes by stack. Renders a [`SnapLiveDto`] computed by the worker.

use crate::ui::widgets::note::{failed, muted};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::protocol::{
    SnapContributorDto, SnapFrameDto, SnapLiveDto, SnapQuery, SnapReply, SnapStackDto,
};
use crate::views::format;

use super::icicle::Icicle;
use super::snap;

/// A frame label, as a link when the settings give one. The link opens in a new browsing
/// context (`target=_blank`): an editor link (`vscode://…`) followed in this tab left Chromium
/// delivering no more pointer input to the page, even after a reload ("Load sample
/// stops responding"), and a repository link would replace the analysis.
pub fn frame_link(label: String, link: Option<String>) -> AnyView {
    match link {
        Some(href) => view! { <a href=href target="_blank" rel="noopener noreferrer" class="src-link" title="open in your editor / repository">{label}</a> }.into_any(),
        None => view! { <span>{label}</span> }.into_any(),
    }
}

/// A site label as [`frame_link`] shows a frame, but short ([`format::site_label`]: a C++-only
/// site reads as its autograd node or ATen operator); the full label stays in the title.
pub fn site_link(label: String, link: Option<String>) -> AnyView {
    let short = format::site_label(&label);
    match link {
        Some(href) => {
            let title = format!("{label}\nopen in your editor / repository");
            view! { <a href=href target="_blank" rel="noopener noreferrer" class="src-link" title=title data-testid="snap-site">{short}</a> }.into_any()
        }
        None => view! { <span title=label data-testid="snap-site">{short}</span> }.into_any(),
    }
}

/// A call chain, outermost last, each frame linked and read short like a site ([`site_link`]).
pub fn chain_view(chain: Vec<SnapFrameDto>) -> impl IntoView {
    let n = chain.len();
    chain
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            view! {
                <span class="chain-frame">{site_link(f.label, f.link)}</span>
                {(i + 1 < n).then(|| view! { <span class="muted">" ← "</span> })}
            }
        })
        .collect_view()
}

/// Contributors table (shared by the live panel and the leaks list).
pub fn contributors_table(rows: Vec<SnapContributorDto>, testid: &'static str) -> impl IntoView {
    let body = rows
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            view! {
                <tr data-testid="snap-contributor">
                    <td class="num">{i + 1}</td>
                    <td class="num" title=format!("{} bytes", c.bytes)>{format::bytes(c.bytes as f64)}</td>
                    <td class="num">{format::percent(Some(c.percent / 100.0), 1)}</td>
                    <td class="num">{c.tensors}</td>
                    <td class="site">{site_link(c.site, c.link)}<span class=format!("kind {}", c.site_kind)>{format!(" {}", c.site_kind.replace('_', " "))}</span></td>
                    <td class="chain">{chain_view(c.chain)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="grid snap-contributors" data-testid=testid>
            <thead><tr><th class="num">"#"</th><th class="num">"bytes"</th><th class="num">"%"</th><th class="num">"tensors"</th><th>"site"</th><th>"call chain (innermost first)"</th></tr></thead>
            <tbody>{body}</tbody>
        </table>
    }
}

/// The live set at the selected point.
#[component]
pub fn LivePanel(
    target: u32,
    dslot: u32,
    live: RwSignal<Option<Result<SnapLiveDto, String>>>,
    /// The record whose stack is shown (a tensor row or a band of the Active Memory Timeline).
    record: RwSignal<Option<u32>>,
) -> impl IntoView {
    let stack = RwSignal::new(None::<Result<SnapStackDto, String>>);
    Effect::new(move |_| {
        let Some(r) = record.get() else {
            stack.set(None);
            return;
        };
        spawn_local(async move {
            let res = match snap(SnapQuery::Stack {
                target,
                slot: dslot,
                record: r,
            })
            .await
            {
                Ok(SnapReply::Stack(s)) => Ok(s),
                Ok(other) => Err(crate::ui::client::unexpected(
                    crate::ui::client::snap_reply_name(&other),
                )),
                Err(e) => Err(e),
            };
            if record.try_get_untracked() == Some(Some(r)) {
                let _ = stack.try_set(Some(res));
            }
        });
    });
    view! {
        <section class="snap-live" data-testid="snap-live">
            {move || match live.get() {
                None => muted("Click a point of the curve to see what is live there."),
                Some(Err(e)) => failed(e),
                Some(Ok(l)) => {
                    let when = match l.time_ms {
                        _ if l.entry.starts_with("end state") => "the end state".to_string(),
                        Some(t) => format!("entry {} · t = {}", l.index, format::duration_ms(t)),
                        None => format!("entry {}", l.index),
                    };
                    let tensors = l.tensors.clone().into_iter().map(|t| {
                        let r = t.record;
                        view! {
                            <tr data-testid="snap-tensor" class:selected=move || record.get() == Some(r) on:click=move |_| record.set(Some(r))>
                                <td class="num" title=format!("{} bytes", t.bytes)>{format::bytes(t.bytes as f64)}</td>
                                <td><code title=format!("MemoryViz name {}", t.memoryviz_name)>{t.addr.clone()}</code></td>
                                <td class="num">{t.alloc_index.map(|i| i.to_string()).unwrap_or_else(|| "before".into())}</td>
                                <td class="num">{t.alloc_time_ms.map(format::duration_ms).unwrap_or_default()}</td>
                                <td class="site">{site_link(t.site.clone(), t.link.clone())}</td>
                            </tr>
                        }
                    }).collect_view();
                    let more = if l.more_sites.0 > 0 {
                        format!("… {} more sites, {}", l.more_sites.0, format::bytes(l.more_sites.1 as f64))
                    } else {
                        String::new()
                    };
                    view! {
                        <h3 data-testid="snap-live-title">{format!("Live at {when}: {} in {} tensors", format::bytes(l.live_bytes as f64), l.live_tensors)}</h3>
                        <p class="muted">
                            {format!("{} · allocated {} · active {} · reserved {} · fragmentation (reserved − active) {}",
                                l.entry, format::bytes(l.allocated_bytes as f64), format::bytes(l.active_bytes as f64),
                                format::bytes(l.reserved_bytes as f64), format::bytes((l.reserved_bytes - l.active_bytes) as f64))}
                        </p>
                        {(!l.annotations.is_empty()).then(|| view! { <p>"Open annotations: "<code>{l.annotations.join(" › ")}</code></p> })}
                        <h4>"Contributors by site"</h4>
                        {contributors_table(l.contributors.clone(), "snap-contributors")}
                        <p class="muted">{more}</p>
                        <Icicle nodes=l.tree.clone()/>
                        <div class="table-and-stack">
                            <div>
                                <h4>{format!("Largest live tensors ({} of {})", l.tensors.len(), l.live_tensors)}</h4>
                                <div class="snap-scroll">
                                    <table class="grid" data-testid="snap-tensors">
                                        <thead><tr><th class="num">"bytes"</th><th>"address"</th><th class="num">"alloc entry"</th><th class="num">"alloc time"</th><th>"site"</th></tr></thead>
                                        <tbody>{tensors}</tbody>
                                    </table>
                                </div>
                            </div>
                            <StackPanel stack=stack/>
                        </div>
                    }.into_any()
                }
            }}
        </section>
    }
}

/// The selected record's stack, Python frames first: native (C++) frames are hidden unless
/// "C++ frames" is ticked, each run of hidden frames shown as one "… N C++ frames" line.
#[component]
fn StackPanel(stack: RwSignal<Option<Result<SnapStackDto, String>>>) -> impl IntoView {
    let show_native = RwSignal::new(false);
    view! {
        <aside class="stack-panel" data-testid="snap-stack">
            <h4>"Call stack "
                <label class="muted cpp-toggle">
                    <input type="checkbox" data-testid="snap-cpp-toggle" prop:checked=move || show_native.get()
                        on:change=move |_| show_native.update(|v| *v = !*v)/>
                    " C++ frames"
                </label>
            </h4>
            {move || match stack.get() {
                None => muted("Click a tensor or a band of the timeline to see its full stack (innermost frame first)."),
                Some(Err(e)) => failed(e),
                Some(Ok(s)) => {
                    let head = format!("{} ({} bytes) at {} · stack from: {}", format::bytes(s.bytes as f64), s.bytes, s.addr, s.stack_kind.replace('_', " "));
                    if s.frames.is_empty() {
                        return view! { <p class="muted" data-testid="snap-stack-head">{head}</p><p class="muted">"No stack recorded."</p> }.into_any();
                    }
                    let all = show_native.get();
                    let mut items = Vec::new();
                    let mut skipped = 0usize;
                    let flush = |skipped: &mut usize, items: &mut Vec<AnyView>| {
                        if *skipped > 0 {
                            items.push(view! { <li class="muted native-run" data-testid="snap-native-run">{format!("… {} C++ frame(s)", *skipped)}</li> }.into_any());
                            *skipped = 0;
                        }
                    };
                    for f in s.frames {
                        if f.native && !all {
                            skipped += 1;
                            continue;
                        }
                        flush(&mut skipped, &mut items);
                        items.push(view! {
                            <li class:user=f.project class:hidden-frame=f.hidden class:native=f.native data-testid="snap-frame">{frame_link(f.label, f.link)}</li>
                        }.into_any());
                    }
                    flush(&mut skipped, &mut items);
                    view! {
                        <p class="muted" data-testid="snap-stack-head" title=s.memoryviz_name.clone()>{head}</p>
                        <ol class="frames">{items}</ol>
                    }.into_any()
                }
            }}
        </aside>
    }
}
