//! The GPU panel of a GPU rank, in place of the Ascend op tables: HTA's temporal
//! breakdown and idle-time breakdown per stream (bars and numbers), kernel categories for the
//! capture and per step with communication/computation overlap, the kernel table (filter,
//! sort), the `[memory]` counter chart per device, and the straggler view across the GPU
//! ranks (their collectives come from whichever worker holds each rank). Every number comes
//! from the worker (`views::gpu`); the UI renders.

use crate::ui::widgets::note::{failed, muted, pending};
use leptos::html::Canvas;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{ask, ms, pct};
use crate::protocol::anomaly::{AnomalyQuery, AnomalyReply};
use crate::protocol::gpu::{
    CollectivesDto, GpuMemoryDto, GpuPanelDto, GpuTimeDto, StragglerViewDto, StreamIdleDto,
};
use crate::ui::state::AppState;
use crate::ui::theme::use_theme;
use crate::ui::widgets::chart::{self, plot_columns};
use crate::views::format;
use crate::views::gpu::{kernel_rows, straggler_view, KernelSort};

/// µs as an adaptive duration.
fn us(v: i64) -> String {
    ms(v as f64 / 1000.0)
}

/// The share of `part` in `whole`, as a CSS width.
fn width(part: i64, whole: i64) -> String {
    let f = if whole > 0 {
        (part.max(0) as f64 / whole as f64).min(1.0)
    } else {
        0.0
    };
    format!("width: {:.3}%", f * 100.0)
}

/// The GPU panel of `rank`.
#[component]
pub fn GpuPanel(rank: u32) -> impl IntoView {
    let panel = RwSignal::new(None::<Result<GpuPanelDto, String>>);
    let section = NodeRef::<leptos::html::Section>::new();
    let asked = StoredValue::new(false);
    // Asked once the section is laid out: the memory curves come with one column per pixel of
    // the charts, which are as wide as the section.
    Effect::new(move |_| {
        let Some(el) = section.get() else { return };
        if asked.get_value() {
            return;
        }
        asked.set_value(true);
        let width_px = plot_columns(el.client_width() as f64);
        spawn_local(async move {
            let res = match ask(AnomalyQuery::Gpu { rank, width_px }).await {
                Ok(AnomalyReply::Gpu(p)) => Ok(*p),
                Ok(other) => Err(crate::ui::client::unexpected(
                    crate::ui::client::anomaly_reply_name(&other),
                )),
                Err(e) => Err(e),
            };
            let _ = panel.try_set(Some(res));
        });
    });
    view! {
        <section class="anom-gpu" data-testid="gpu-panel" node_ref=section>
            {move || match panel.get() {
                None => pending(),
                Some(Err(e)) => failed(e),
                Some(Ok(p)) => view! {
                    <h3>"GPU time (HTA temporal breakdown)"</h3>
                    <p class="muted" data-testid="gpu-window">{p.window_note.clone()}</p>
                    {p.time.map(|t| view! { <TimeBreakdown t=t/> })}
                    <h3>"Idle time per stream (HTA idle-time breakdown)"</h3>
                    <IdleByStream rows=p.idle_by_stream.clone()/>
                    <Categories p=p.clone()/>
                    <Kernels p=p.clone()/>
                    <Memory rows=p.memory.clone()/>
                    <Stragglers/>
                    <p class="muted">"Ascend-only rules (AICPU classes, PMU verdicts, HCCL specifics) do not apply to GPU ranks and are not shown."</p>
                }
                .into_any(),
            }}
        </section>
    }
}

#[component]
fn TimeBreakdown(t: GpuTimeDto) -> impl IntoView {
    let part = |cls: &'static str, label: &'static str, v: i64| {
        view! {
            <div class=format!("gpu-seg {cls}") style=width(v, t.span_us) title=format!("{label}: {} ({})", us(v), pct(Some(v as f64 / t.span_us.max(1) as f64)))></div>
        }
    };
    let cell = |label: &'static str, v: i64, test: &'static str| {
        view! {
            <div class="anom-card">
                <div class="anom-card-label">{label}</div>
                <div class="anom-card-value" data-testid=test data-us=v.to_string()>
                    {format!("{} · {}", us(v), pct(Some(v as f64 / t.span_us.max(1) as f64)))}
                </div>
            </div>
        }
    };
    view! {
        <div class="gpu-bar" data-testid="gpu-time-bar">
            {part("compute", "compute", t.compute_us)}
            {part("non-compute", "non-compute", t.non_compute_us)}
            {part("idle", "idle", t.idle_us)}
        </div>
        <div class="anom-cards">
            {cell("span (HTA kernel_time)", t.span_us, "gpu-span")}
            {cell("compute", t.compute_us, "gpu-compute")}
            {cell("non-compute (communication, memory)", t.non_compute_us, "gpu-non-compute")}
            {cell("idle", t.idle_us, "gpu-idle")}
        </div>
    }
}

#[component]
fn IdleByStream(rows: Vec<StreamIdleDto>) -> impl IntoView {
    let longest = rows.iter().map(|r| r.idle_us).max().unwrap_or(0);
    let opt = |v: Option<i64>| v.map(us).unwrap_or_else(|| "–".into());
    view! {
        <table class="grid gpu-idle" data-testid="gpu-idle-table">
            <thead><tr>
                <th class="num">"stream"</th><th>"idle (bar: host wait · kernel wait · other)"</th>
                <th class="num" title="the next op was launched after the previous one ended">"host wait"</th>
                <th class="num" title="gaps shorter than HTA's consecutive-kernel delay">"kernel wait"</th>
                <th class="num">"other"</th><th class="num">"idle total"</th>
            </tr></thead>
            <tbody>
                {rows.into_iter().map(|r| view! {
                    <tr data-testid="gpu-idle-row">
                        <td class="num">{r.stream.to_string()}</td>
                        <td class="gpu-idle-cell">
                            <div class="gpu-bar small" style=width(r.idle_us, longest)>
                                <div class="gpu-seg host" style=width(r.host_wait_us.unwrap_or(0), r.idle_us)></div>
                                <div class="gpu-seg kernel" style=width(r.kernel_wait_us.unwrap_or(0), r.idle_us)></div>
                                <div class="gpu-seg other" style=width(r.other_us, r.idle_us)></div>
                            </div>
                        </td>
                        <td class="num">{opt(r.host_wait_us)}</td>
                        <td class="num">{opt(r.kernel_wait_us)}</td>
                        <td class="num">{us(r.other_us)}</td>
                        <td class="num">{us(r.idle_us)}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

#[component]
fn Categories(p: GpuPanelDto) -> impl IntoView {
    view! {
        <h3>"Kernel categories"</h3>
        <p class="muted" data-testid="gpu-categories-note">{p.categories_note.clone()}</p>
        <table class="grid" data-testid="gpu-category-table">
            <thead><tr><th>"category"</th><th class="num">"kernels"</th><th class="num">"Σ duration"</th><th class="num">"busy union"</th></tr></thead>
            <tbody>
                {p.categories.into_iter().map(|c| view! {
                    <tr data-testid="gpu-category-row">
                        <td>{c.category}</td>
                        <td class="num">{format::thousands(c.count as i64)}</td>
                        <td class="num">{ms(c.sum_ms)}</td>
                        <td class="num">{ms(c.busy_ms)}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
        {(!p.steps.is_empty()).then(|| view! {
            <h4>"Per step: busy union per category and communication overlap"</h4>
            <div class="anom-scroll">
                <table class="grid" data-testid="gpu-step-table">
                    <thead><tr>
                        <th>"step"</th><th class="num">"compute"</th><th class="num">"communication"</th><th class="num">"memory"</th>
                        <th class="num" title="communication union ∩ compute union">"comm hidden under compute"</th>
                        <th class="num" title="communication not overlapped by compute">"exposed comm"</th>
                    </tr></thead>
                    <tbody>
                        {p.steps.into_iter().map(|s| view! {
                            <tr data-testid="gpu-step-row">
                                <td><code>{s.step_id}</code></td>
                                <td class="num">{ms(s.busy_ms[0])}</td>
                                <td class="num">{ms(s.busy_ms[1])}</td>
                                <td class="num">{ms(s.busy_ms[2])}</td>
                                <td class="num">{ms(s.comm_compute_overlap_ms)}</td>
                                <td class="num">{ms(s.exposed_comm_ms)}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
        })}
    }
}

#[component]
fn Kernels(p: GpuPanelDto) -> impl IntoView {
    let filter = RwSignal::new(String::new());
    let sort = RwSignal::new(KernelSort::Total);
    // Kept in the URL hash (`gpu.q`, `gpu.sort`), so a link or a reload restores them.
    let route = crate::ui::route::use_route();
    route.bind(crate::ui::route::GPU_Q, filter);
    route.bind(crate::ui::route::GPU_SORT, sort);
    let all = StoredValue::new(p.kernels);
    let rows = Memo::new(move |_| all.with_value(|k| kernel_rows(k, &filter.get(), sort.get())));
    let head = move |label: &'static str, by: KernelSort, num: bool| {
        view! {
            <th class:num=num class:sorted=move || sort.get() == by>
                <button class="linklike" on:click=move |_| sort.set(by)>{label}</button>
            </th>
        }
    };
    let shown = move || all.with_value(|k| k.len());
    view! {
        <h3>"Kernels"</h3>
        <p class="muted">
            {move || format!("{} of {} kernel names (by Σ duration{}); filter: ", rows.with(|r| r.len()), p.kernel_names, if p.kernel_names as usize > shown() { ", the longest first" } else { "" })}
            <input type="search" data-testid="gpu-kernel-filter" placeholder="name contains…"
                prop:value=move || filter.get()
                on:input=move |e| filter.set(event_target_value(&e))/>
        </p>
        <div class="anom-scroll anom-ops-scroll">
            <table class="grid" data-testid="gpu-kernel-table">
                <thead><tr>
                    {head("kernel", KernelSort::Name, false)}<th>"category"</th>
                    {head("count", KernelSort::Count, true)}{head("Σ duration", KernelSort::Total, true)}
                    {head("mean", KernelSort::Mean, true)}<th class="num">"share"</th>
                </tr></thead>
                <tbody>
                    {move || rows.get().into_iter().map(|k| view! {
                        <tr data-testid="gpu-kernel-row">
                            <td class="gpu-kernel-name"><code title=k.name.clone()>{k.name.clone()}</code></td>
                            <td>{k.category}</td>
                            <td class="num">{format::thousands(k.count as i64)}</td>
                            <td class="num">{ms(k.total_ms)}</td>
                            <td class="num">{ms(k.mean_us / 1000.0)}</td>
                            <td class="num">{pct(Some(k.share_ratio))}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

#[component]
fn Memory(rows: Vec<GpuMemoryDto>) -> impl IntoView {
    if rows.is_empty() {
        return view! {
            <h3>"Memory counters"</h3>
            <p class="muted" data-testid="gpu-memory-none">"No [memory] events in this trace: profile with profile_memory=True to record allocated and reserved bytes per device."</p>
        }
        .into_any();
    }
    view! {
        <h3>"Memory counters"</h3>
        {rows.into_iter().map(|m| view! { <MemoryChart m=m/> }).collect_view()}
    }
    .into_any()
}

#[component]
fn MemoryChart(m: GpuMemoryDto) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let theme = use_theme();
    let curve = m.curve.clone();
    Effect::new(move |_| {
        theme.dark.track();
        if let Some(el) = canvas.get() {
            chart::draw(&el, &curve, 0.0, None);
        }
    });
    let source = if m.allocated_source == "total_allocated" {
        "allocated = the allocator's Total Allocated".to_string()
    } else {
        "allocated = Σ Bytes since the capture started (this trace has no Total Allocated: what was live before the capture is not counted)".to_string()
    };
    view! {
        <div class="gpu-memory" data-testid="gpu-memory">
            <p>
                <strong>{m.device.clone()}</strong>
                {format!(
                    ": peak allocated {} at {}{}; {} samples. {source}.",
                    format::bytes_i(m.peak_allocated_bytes),
                    ms(m.peak_allocated_at_ms),
                    m.peak_reserved_bytes.map(|r| format!(", peak reserved {}", format::bytes_i(r))).unwrap_or_default(),
                    format::thousands(m.samples as i64),
                )}
            </p>
            <canvas class="chart gpu-memory-chart" node_ref=canvas data-testid="gpu-memory-chart"></canvas>
        </div>
    }
}

/// The straggler view across every analysed GPU rank (≥ 2; one view per role when the ranks
/// hold several): each rank's collectives are asked from the worker that holds it, then
/// matched by `views::gpu::straggler_view`.
#[component]
fn Stragglers() -> impl IntoView {
    let state = expect_context::<AppState>();
    let ranks = Memo::new(move |_| {
        state.anomaly.with(|m| {
            m.values()
                .filter(|s| s.gpu && s.kernels > 0)
                .map(|s| s.rank)
                .collect::<Vec<u32>>()
        })
    });
    let view_ = RwSignal::new(None::<Result<StragglerViewDto, String>>);
    Effect::new(move |_| {
        let rs = ranks.get();
        if rs.len() < 2 {
            return;
        }
        spawn_local(async move {
            let mut got: Vec<CollectivesDto> = Vec::new();
            for r in rs {
                match ask(AnomalyQuery::Collectives { rank: r }).await {
                    Ok(AnomalyReply::Collectives(c)) => got.push(c),
                    Ok(other) => {
                        let _ = view_.try_set(Some(Err(crate::ui::client::unexpected(
                            crate::ui::client::anomaly_reply_name(&other),
                        ))));
                        return;
                    }
                    Err(e) => {
                        let _ = view_.try_set(Some(Err(e)));
                        return;
                    }
                }
            }
            let _ = view_.try_set(Some(Ok(straggler_view(&got))));
        });
    });
    view! {
        <h3>"Straggler view across GPU ranks"</h3>
        {move || match (ranks.with(|r| r.len()), view_.get()) {
            (n, _) if n < 2 => view! { <p class="muted" data-testid="gpu-straggler-none">"One GPU rank: the straggler view compares the collectives of two or more ranks."</p> }.into_any(),
            (_, None) => muted("Matching the collectives of every GPU rank…"),
            (_, Some(Err(e))) => failed(e),
            (_, Some(Ok(v))) => view! {
                <p class="muted">{if v.grouped {
                    "Grouped by role (ranks of different roles run different collectives): each role's ranks are matched with each other by order and name; the rank of a role that starts them last most often is its straggler (the others wait for it inside the collective).".to_string()
                } else {
                    format!("{} collectives matched on every rank by order and name; the rank that starts them last most often is the straggler (the others wait for it inside the collective).", v.matched)
                }}</p>
                <table class="grid" data-testid="gpu-straggler-table">
                    <thead><tr><th>"role"</th><th class="num">"rank"</th><th class="num">"collectives"</th><th class="num">"matched"</th><th class="num">"started last"</th><th class="num">"mean start delay"</th><th class="num">"max start delay"</th><th></th></tr></thead>
                    <tbody>
                        {v.rows.into_iter().map(|r| view! {
                            <tr data-testid="gpu-straggler-row" class:slow=r.is_straggler>
                                <td>{state.anomaly.with_untracked(|m| m.get(&r.rank).map(|s| s.role.clone())).unwrap_or_default()}</td>
                                <td class="num">{r.rank_id.to_string()}</td>
                                <td class="num">{format::thousands(r.collectives as i64)}</td>
                                <td class="num">{format::thousands(r.matched as i64)}</td>
                                <td class="num">{format::thousands(r.started_last as i64)}</td>
                                <td class="num">{ms(r.mean_start_delay_ms)}</td>
                                <td class="num">{ms(r.max_start_delay_ms)}</td>
                                <td>{if r.is_straggler { "straggler" } else { "" }}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            }
            .into_any(),
        }}
    }
}
