//! Side panels of the snapshot tab: device facts, peak list, warnings / leaks / delayed frees
//! / allocator settings, segments and fragmentation, the settings form, file facts.

use crate::ui::widgets::note::{failed, muted, pending};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::protocol::{
    SnapDeviceDto, SnapQuery, SnapReply, SnapSegmentsDto, SnapshotSettingsDto, SnapshotSummaryDto,
};
use crate::ui::state::AppState;
use crate::views::format;

use super::live::contributors_table;
use super::{snap, Selected};

fn level(l: &crate::protocol::SnapLevelDto) -> String {
    let at = match (l.index, l.time_ms) {
        (Some(i), Some(t)) => format!(" at entry {i} (t = {})", format::duration_ms(t)),
        (Some(i), None) => format!(" at entry {i}"),
        _ => String::new(),
    };
    format!("{}{at}", format::bytes(l.bytes as f64))
}

/// Levels and counts of one device.
#[component]
pub fn DeviceFacts(d: SnapDeviceDto) -> impl IntoView {
    let actions = if d.actions.is_empty() {
        "no history recorded".to_string()
    } else {
        d.actions
            .iter()
            .map(|(a, n)| format!("{a} {n}"))
            .collect::<Vec<_>>()
            .join(" · ")
    };
    let (ba, bc, br) = d.baseline_bytes;
    view! {
        <dl class="facts" data-testid="snap-device-facts">
            <dt>"entries"</dt><dd>{format!("{} ({actions}); {} stream(s){}", d.entries, d.streams, d.duration_ms.map(|m| format!("; {} recorded", format::duration_ms(m))).unwrap_or_default())}</dd>
            <dt>"peak active"</dt><dd data-testid="snap-peak-active">{level(&d.max_active)}</dd>
            <dt>"peak allocated"</dt><dd>{level(&d.max_allocated)}</dd>
            <dt>"peak reserved"</dt><dd>{level(&d.max_reserved)}</dd>
            <dt>"before recording"</dt><dd>{format!("allocated {} · active {} · reserved {} ({} records alive before the window)", format::bytes(ba as f64), format::bytes(bc as f64), format::bytes(br as f64), d.pre_records)}</dd>
            {(d.unmatched_free_completed > 0).then(|| view! {
                <dt>"ring buffer"</dt><dd class="warn">{format!("{} frees of blocks allocated before the window: the trace is likely truncated (ring buffer)", d.unmatched_free_completed)}</dd>
            })}
        </dl>
    }
}

/// The reported points; a click selects the point.
#[component]
pub fn PeakList(d: SnapDeviceDto, selected: RwSignal<Option<Selected>>) -> impl IntoView {
    let mut n_peak = 0;
    let rows = d
        .points
        .iter()
        .map(|p| {
            let idx = p.index;
            let name = match p.kind.as_str() {
                "global_peak" | "peak" => {
                    n_peak += 1;
                    if p.kind == "global_peak" {
                        format!("P{n_peak} (global max)")
                    } else {
                        format!("P{n_peak}")
                    }
                }
                "oom" => "OOM".to_string(),
                _ => "end state".to_string(),
            };
            let is_sel = move || selected.get() == Some(Selected::entry(idx));
            view! {
                <tr data-testid="snap-peak" class:selected=is_sel on:click=move |_| selected.set(Some(Selected::entry(idx)))>
                    <td>{name}</td>
                    <td class="num" title=format!("{} bytes", p.height_bytes)>{format::bytes(p.height_bytes as f64)}</td>
                    <td class="num">{idx}</td>
                    <td class="num">{p.time_ms.map(format::duration_ms).unwrap_or_default()}</td>
                    <td class="num">{p.prominence_bytes.map(|b| format::bytes(b as f64)).unwrap_or_default()}</td>
                    <td class="num">{p.recurring.map(|k| format!("×{k}")).unwrap_or_default()}</td>
                    <td title=p.top_site.clone().unwrap_or_default() data-testid="snap-peak-site">{p.top_site.as_deref().map(format::site_label).unwrap_or_default()}</td>
                    <td>{p.annotations.join(" › ")}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="snap-peaks">
            <h4>"Peaks (click to see what is live)"</h4>
            <table class="grid" data-testid="snap-peaks">
                <thead><tr><th>"point"</th><th class="num">"bytes"</th><th class="num">"entry"</th><th class="num">"time"</th><th class="num">"prominence"</th><th class="num">"recurring"</th><th>"largest site"</th><th>"annotations"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}

/// Data-quality warnings, leaks, delayed frees, allocator settings, reference quantities.
#[component]
pub fn Warnings(d: SnapDeviceDto, s: SnapshotSummaryDto) -> impl IntoView {
    let warnings = d
        .warnings
        .iter()
        .map(|w| view! { <li><code>{w.code.clone()}</code>" "{w.message.clone()}</li> })
        .collect_view();
    let delayed = d
        .delayed_frees
        .iter()
        .map(|w| view! { <li>{w.code.clone()}": "{w.message.clone()}</li> })
        .collect_view();
    let settings = match &s.allocator_settings {
        None => muted("No allocator settings in this snapshot."),
        Some(v) => view! {
            <dl class="facts">{v.iter().map(|(k, val)| view! { <dt><code>{k.clone()}</code></dt><dd>{val.clone()}</dd> }).collect_view()}</dl>
        }.into_any(),
    };
    let reference = d
        .reference
        .iter()
        .map(|(k, v)| view! { <dt>{k.clone()}</dt><dd>{v.clone()}</dd> })
        .collect_view();
    let n_warn = d.warnings.len();
    let leaks = d.leaks.clone();
    view! {
        <section class="snap-warnings" data-testid="snap-warnings">
            <h4>{format!("Data quality ({n_warn} warning(s))")}</h4>
            {if n_warn == 0 { muted("No warnings: the trace and the end state agree.") } else { view! { <ul>{warnings}</ul> }.into_any() }}
            <h4>"Allocator settings"</h4>
            {settings}
            <details>
                <summary>{format!("Leaks: {} site(s) allocated in the window and never freed", leaks.len())}</summary>
                {contributors_table(leaks, "snap-leaks")}
            </details>
            <details>
                <summary>{format!("Delayed frees: {} site(s)", d.delayed_frees.len())}</summary>
                <ul>{delayed}</ul>
            </details>
            <details>
                <summary>"Reference quantities (EXPECTED.json definitions)"</summary>
                <dl class="facts">{reference}</dl>
            </details>
        </section>
    }
}

/// End-state segments and fragmentation.
#[component]
pub fn SegmentsPanel(target: u32, dslot: u32) -> impl IntoView {
    let data = RwSignal::new(None::<Result<SnapSegmentsDto, String>>);
    spawn_local(async move {
        let res = match snap(SnapQuery::Segments {
            target,
            slot: dslot,
            limit: 200,
        })
        .await
        {
            Ok(SnapReply::Segments(s)) => Ok(s),
            Ok(other) => Err(crate::ui::client::unexpected(
                crate::ui::client::snap_reply_name(&other),
            )),
            Err(e) => Err(e),
        };
        let _ = data.try_set(Some(res));
    });
    view! {
        <details class="snap-segments" data-testid="snap-segments">
            <summary>"Segments and fragmentation (end state)"</summary>
            {move || match data.get() {
                None => pending(),
                Some(Err(e)) => failed(e),
                Some(Ok(s)) => {
                    let rows = s.segments.iter().map(|g| view! {
                        <tr>
                            <td><code>{g.address.clone()}</code></td>
                            <td class="num">{format::bytes(g.total_bytes as f64)}</td>
                            <td class="num">{format::bytes(g.allocated_bytes as f64)}</td>
                            <td class="num">{format::bytes(g.inactive_bytes as f64)}</td>
                            <td class="num">{format::bytes(g.largest_inactive_bytes as f64)}</td>
                            <td class="num">{g.blocks}</td>
                            <td class="num">{g.stream}</td>
                            <td>{format!("{}{}{}", g.segment_type, if g.expandable { " expandable" } else { "" }, if g.pool != (0, 0) { format!(" pool {:?}", g.pool) } else { String::new() })}</td>
                        </tr>
                    }).collect_view();
                    view! {
                        <p>{format!("{} segments: reserved {}, allocated {}, inactive {} (largest free block {}), external fragmentation {:.1}%, rounding waste {}",
                            s.total_segments, format::bytes(s.reserved_bytes as f64), format::bytes(s.allocated_bytes as f64),
                            format::bytes(s.inactive_bytes as f64), format::bytes(s.largest_inactive_bytes as f64),
                            s.external_fragmentation * 100.0, format::bytes(s.internal_waste_bytes as f64))}</p>
                        <div class="snap-scroll">
                            <table class="grid">
                                <thead><tr><th>"address"</th><th class="num">"reserved"</th><th class="num">"allocated"</th><th class="num">"inactive"</th><th class="num">"largest inactive"</th><th class="num">"blocks"</th><th class="num">"stream"</th><th>"type"</th></tr></thead>
                                <tbody>{rows}</tbody>
                            </table>
                        </div>
                    }.into_any()
                }
            }}
        </details>
    }
}

fn opt(s: String) -> Option<String> {
    let t = s.trim().to_string();
    (!t.is_empty()).then_some(t)
}

/// Project root, path mapping, link style and peak options; Apply re-analyses in the worker
/// (no second decode) and the report and exports follow.
#[component]
pub fn SettingsPanel(target: u32, current: SnapshotSettingsDto) -> impl IntoView {
    let state = expect_context::<AppState>();
    let root = RwSignal::new(current.project_root.clone().unwrap_or_default());
    let map = RwSignal::new(
        current
            .path_map
            .iter()
            .map(|(a, b)| format!("{a}={b}"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    let style = RwSignal::new(current.link_style.clone());
    let repo = RwSignal::new(current.repo_url.clone().unwrap_or_default());
    let commit = RwSignal::new(current.commit.clone().unwrap_or_default());
    let top_n = RwSignal::new(current.top_n.to_string());
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let base = StoredValue::new(current);
    let apply = move |_| {
        let mut s = base.get_value();
        s.project_root = opt(root.get_untracked());
        s.link_style = style.get_untracked();
        s.repo_url = opt(repo.get_untracked());
        s.commit = opt(commit.get_untracked());
        s.top_n = top_n.get_untracked().trim().parse().unwrap_or(s.top_n);
        let mut pairs = Vec::new();
        for line in map.get_untracked().lines().filter(|l| !l.trim().is_empty()) {
            match line.split_once('=') {
                Some((a, b)) => pairs.push((a.trim().to_string(), b.trim().to_string())),
                None => {
                    error.set(Some(format!(
                        "path mapping: expected RECORDED=LOCAL, got {line:?}"
                    )));
                    return;
                }
            }
        }
        s.path_map = pairs;
        busy.set(true);
        spawn_local(async move {
            match snap(SnapQuery::Settings {
                target,
                settings: s,
            })
            .await
            {
                Ok(SnapReply::Summary(sum)) => {
                    // The page shows the re-computed summary (the reply replaces the old one).
                    crate::ui::client::client().set_snapshot(target, sum);
                    let _ = error.try_set(None);
                    state
                        .status
                        .set("Settings applied: report re-computed.".into());
                }
                Ok(other) => {
                    let _ = error.try_set(Some(crate::ui::client::unexpected(
                        crate::ui::client::snap_reply_name(&other),
                    )));
                }
                Err(e) => {
                    let _ = error.try_set(Some(e));
                }
            }
            let _ = busy.try_set(false);
        });
    };
    let input = |sig: RwSignal<String>, testid: &'static str, ph: &'static str| {
        view! { <input type="text" data-testid=testid placeholder=ph prop:value=move || sig.get() on:input=move |ev| sig.set(event_target_value(&ev))/> }
    };
    view! {
        <details class="snap-settings" data-testid="snap-settings">
            <summary>"Settings: project root, path mapping, links, peaks"</summary>
            <div class="settings-grid">
                <label>"Project root"</label>{input(root, "snap-project-root", "/home/me/project (frames under it are project code; paths shown relative)")}
                <label>"Path mapping"</label>
                <textarea data-testid="snap-path-map" rows="2" placeholder="/recorded/prefix/=/local/checkout/ (one per line)"
                    prop:value=move || map.get() on:input=move |ev| map.set(event_target_value(&ev))></textarea>
                <label>"Link style"</label>
                <select data-testid="snap-link-style" on:change=move |ev| style.set(event_target_value(&ev))>
                    {["vscode", "cursor", "github", "file", "none"].into_iter().map(|v| view! { <option value=v selected=move || style.get() == v>{v}</option> }).collect_view()}
                </select>
                <label>"Repository URL"</label>{input(repo, "snap-repo-url", "https://github.com/owner/repo (github links)")}
                <label>"Commit"</label>{input(commit, "snap-commit", "main")}
                <label>"Peaks (top N)"</label>{input(top_n, "snap-top-n", "6")}
            </div>
            <button class="button" data-testid="snap-apply-settings" disabled=move || busy.get() on:click=apply>"Apply"</button>
            {move || error.get().map(failed)}
        </details>
    }
}

/// Format features and the invisible-memory note.
#[component]
pub fn FileFacts(s: SnapshotSummaryDto) -> impl IntoView {
    let (count, total, alloc, exp, pools) = s.segments;
    let states = s
        .block_states
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(" · ");
    view! {
        <details class="snap-facts">
            <summary>"About this file"</summary>
            <dl class="facts">
                <dt>"format"</dt><dd>{if s.features.is_empty() { "—".to_string() } else { s.features.join(", ") }}</dd>
                <dt>"end state"</dt><dd>{format!("{count} segments, reserved {}, allocated {}; {exp} expandable, {pools} in private pools; blocks: {states}", format::bytes(total as f64), format::bytes(alloc as f64))}</dd>
            </dl>
            <p class="muted">{s.note.clone()}</p>
        </details>
    }
}
