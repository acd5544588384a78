//! The memory-snapshot tab: one entry per dropped snapshot pickle (several can be
//! open at once, each analysed by a pool worker), and for the selected one: device selector,
//! summary, the curves chart with peaks and OOM marked, the live set at the clicked point
//! (tensors with stacks, contributors with links and call chains, icicle), the peak list,
//! segments and fragmentation, allocator settings and data-quality warnings, the settings
//! panel (project root, path mapping, link style, peak options) and the exports.
//! Every number comes from the worker (`Query::Snapshot`).

mod allocator;
mod bands;
mod chart;
mod icicle;
mod live;
mod panels;

use chart::SnapChart;

use crate::ui::widgets::note::muted;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::client::client;
use super::state::AppState;
use crate::protocol::{
    AnalysisKind, ExportRequest, Query, Reply, SnapAxis, SnapExportKind, SnapLiveDto, SnapQuery,
    SnapshotSummaryDto,
};
use crate::views::format;

/// A point the user picked: a position on an axis (Index: entry index).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Selected {
    /// Axis of `x`.
    pub axis: SnapAxis,
    /// Position.
    pub x: f64,
}

impl Selected {
    /// A position on `axis`.
    pub fn at(axis: SnapAxis, x: f64) -> Self {
        Selected { axis, x }
    }
    /// An entry index.
    pub fn entry(index: u32) -> Self {
        Selected {
            axis: SnapAxis::Index,
            x: index as f64,
        }
    }
}

/// Sends a [`SnapQuery`] to the worker that analysed its target and unwraps its
/// [`crate::protocol::SnapReply`].
pub async fn snap(q: SnapQuery) -> Result<crate::protocol::SnapReply, String> {
    match client().query(Query::Snapshot(q)).await? {
        Reply::Snapshot(r) => Ok(r),
        other => Err(crate::ui::client::unexpected(
            crate::ui::client::query_reply_name(&other),
        )),
    }
}

/// The snapshot tab.
#[component]
pub fn SnapshotTab() -> impl IntoView {
    let state = expect_context::<AppState>();
    let summary = Memo::new(move |_| {
        let t = state.selected_snapshot.get()?;
        state.snapshots.with(|m| m.get(&t).cloned())
    });
    view! {
        <section class="snapshot" data-testid="snapshot-view">
            <FileList/>
            {move || match (state.selected_snapshot.get(), summary.get()) {
                (Some(_), Some(s)) => view! { <SnapshotFile s=s/> }.into_any(),
                (Some(t), None) => {
                    let failed = state.failures.with(|f| f.get(&(AnalysisKind::Snapshot, t)).cloned());
                    match failed {
                        Some(m) => view! { <p class="notice error" data-testid="snap-failed">{format!("This snapshot could not be analysed: {m}")}</p> }.into_any(),
                        None => muted("Decoding and analysing this snapshot…"),
                    }
                }
                (None, _) => muted("Drop a snapshot pickle (.pickle / .pkl) or its JSON form to see its memory curves."),
            }}
        </section>
    }
}

/// One line per dropped snapshot: name, size, status, peak; click to select.
#[component]
fn FileList() -> impl IntoView {
    let state = expect_context::<AppState>();
    let rows = move || {
        let inv = state.inventory.get().unwrap_or_default();
        inv.snapshots
            .into_iter()
            .enumerate()
            .map(|(i, f)| {
                let t = i as u32;
                let s = state.snapshots.with(|m| m.get(&t).cloned());
                let failed = state
                    .failures
                    .with(|m| m.get(&(AnalysisKind::Snapshot, t)).cloned());
                let (status, peak) = match (&s, &failed) {
                    (Some(s), _) => {
                        let e: u64 = s.devices.iter().map(|d| d.entries).sum();
                        let peak = s
                            .devices
                            .iter()
                            .map(|d| d.max_active.bytes.max(d.baseline_bytes.1))
                            .max()
                            .unwrap_or(0);
                        (
                            format!("{e} entries, {} device(s)", s.devices.len()),
                            format::bytes(peak as f64),
                        )
                    }
                    (None, Some(m)) => (format!("failed: {m}"), String::new()),
                    (None, None) => ("analysing…".to_string(), String::new()),
                };
                view! {
                    <tr
                        data-testid="snap-file"
                        tabindex="0"
                        class:selected=move || state.selected_snapshot.get() == Some(t)
                        class:error=failed.is_some()
                        on:click=move |_| state.selected_snapshot.set(Some(t))
                    >
                        <td><code>{f.path.clone()}</code></td>
                        <td class="num">{format::bytes(f.size as f64)}</td>
                        <td>{status}</td>
                        <td class="num">{peak}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <table class="grid overview" data-testid="snap-files">
            <thead><tr><th>"snapshot"</th><th class="num">"size"</th><th>"status"</th><th class="num">"peak active"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// Everything about one analysed snapshot.
#[component]
fn SnapshotFile(s: SnapshotSummaryDto) -> impl IntoView {
    let target = s.target;
    let slot = RwSignal::new(0u32);
    let n_dev = s.devices.len();
    let devices = s.devices.clone();
    let dev_options = s
        .devices
        .iter()
        .map(|d| {
            let v = d.slot;
            let label = if d.entries > 0 {
                format!("device {} ({} entries)", d.device, d.entries)
            } else {
                format!("device {} (end state only)", d.device)
            };
            view! { <option value=v.to_string() selected=move || slot.get() == v>{label}</option> }
        })
        .collect_view();
    let s2 = s.clone();
    view! {
        <div class="snap-file" data-testid="snap-file-view">
            <div class="snap-toolbar">
                <b>{s.file.clone()}</b>
                <span class="muted">{format!("{} · {} · {}", format::bytes(s.bytes as f64), s.encoding, s.top_level)}</span>
                <label>
                    "Device "
                    <select data-testid="snap-device" disabled=n_dev < 2
                        on:change=move |ev| slot.set(event_target_value(&ev).parse().unwrap_or(0))>
                        {dev_options}
                    </select>
                </label>
                <Exports target=target/>
            </div>
            {move || {
                let sl = slot.get();
                match devices.iter().find(|d| d.slot == sl).cloned() {
                    Some(d) => view! { <DeviceView target=target s=s2.clone() d=d/> }.into_any(),
                    None => muted("This snapshot has no trace and no segments."),
                }
            }}
            <panels::SettingsPanel target=target current=s.settings.clone()/>
            <panels::FileFacts s=s.clone()/>
        </div>
    }
}

/// One device: chart, selected point, peak list, segments, warnings.
#[component]
fn DeviceView(
    target: u32,
    s: SnapshotSummaryDto,
    d: crate::protocol::SnapDeviceDto,
) -> impl IntoView {
    let dslot = d.slot;
    // The global peak is selected first, so its live set shows without a click.
    let first = d.points.first().map(|p| Selected::entry(p.index));
    let selected = RwSignal::new(first);
    let live = RwSignal::new(None::<Result<SnapLiveDto, String>>);
    let generation = StoredValue::new(0u32);
    Effect::new(move |_| {
        let Some(sel) = selected.get() else { return };
        generation.update_value(|g| *g += 1);
        let g = generation.get_value();
        spawn_local(async move {
            let q = crate::protocol::SnapLiveQuery {
                target,
                slot: dslot,
                axis: sel.axis,
                x: sel.x,
                limit: 200,
            };
            let res = match snap(SnapQuery::Live(q)).await {
                Ok(crate::protocol::SnapReply::Live(l)) => Ok(l),
                Ok(other) => Err(crate::ui::client::unexpected(
                    crate::ui::client::snap_reply_name(&other),
                )),
                Err(e) => Err(e),
            };
            if generation.try_get_value() == Some(g) {
                let _ = live.try_set(Some(res));
            }
        });
    });
    let shown = Signal::derive(move || {
        live.with(|l| match l {
            Some(Ok(l)) => Some((l.index, l.time_ms)),
            _ => None,
        })
    });
    let has_trace = d.entries > 0;
    let axis = RwSignal::new(if d.has_time {
        SnapAxis::Time
    } else {
        SnapAxis::Index
    });
    let window = RwSignal::new(None::<(f64, f64)>);
    let pick = RwSignal::new(None::<u32>);
    let has_time = d.has_time;
    view! {
        <panels::DeviceFacts d=d.clone()/>
        {has_trace.then(|| view! {
            <SnapChart target=target dslot=dslot has_time=has_time axis=axis window=window selected=selected shown=shown/>
            <bands::ActiveTimeline target=target dslot=dslot axis=axis window=window shown=shown selected=selected pick=pick/>
        })}
        <div class="snap-columns">
            <panels::PeakList d=d.clone() selected=selected/>
            <panels::Warnings d=d.clone() s=s.clone()/>
        </div>
        <live::LivePanel target=target dslot=dslot live=live record=pick/>
        <allocator::AllocatorPanel target=target dslot=dslot has_trace=has_trace shown=shown selected=selected/>
        <panels::SegmentsPanel target=target dslot=dslot/>
    }
}

/// Export buttons: the Markdown report and the JSON, as `proflens snapshot` writes them
/// with the current settings.
#[component]
fn Exports(target: u32) -> impl IntoView {
    let state = expect_context::<AppState>();
    let busy = RwSignal::new(false);
    let run = move |what: SnapExportKind| {
        busy.set(true);
        state.status.set(format!("Writing {what:?}…"));
        spawn_local(async move {
            match client()
                .export(ExportRequest::Snapshot { target, what })
                .await
            {
                Ok(line) => state.status.set(line),
                Err(e) => state.status.set(format!("Export failed: {e}")),
            }
            let _ = busy.try_set(false);
        });
    };
    view! {
        <span class="exports">
            <button class="button" data-testid="snap-export-md" disabled=move || busy.get() on:click=move |_| run(SnapExportKind::ReportMd)>"Report (Markdown)"</button>
            <button class="button" data-testid="snap-export-json" disabled=move || busy.get() on:click=move |_| run(SnapExportKind::Json)>"JSON"</button>
        </span>
    }
}
