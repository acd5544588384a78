//! The "Steps & bubbles" tab: the cross-rank table (also the rank selector), the
//! exports, the timeline slot (filled by `timeline/`), the summary cards, notes when the
//! data is thin, the step table, the bubble list with its detail panel, the structure tree and
//! the wait-anchor / AICPU / PMU tables. Every number comes from the worker
//! (`Query::Anomaly`); the selection lives in [`AppState`] (`anomaly_rank`, `anomaly_step`,
//! `anomaly_bubble`) so the timeline follows the same bubble and step.

mod bubbles;
mod gpu;
mod ops;
mod steps;
mod structure;
mod timeline;

use crate::ui::widgets::note::muted;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::client::client;
use super::state::AppState;
use crate::protocol::anomaly::{
    AnomalyExportKind, AnomalyQuery, AnomalyReply, AnomalySummaryDto, CrossRankRowDto,
};
use crate::protocol::{AnalysisKind, ExportRequest, Query, Reply};
use crate::views::cross_rank::{cross_rank_table, robust_z_text};
use crate::views::format;

/// Sends `q` to the worker that ran the anomaly analysis of its rank and waits for the reply.
pub(crate) async fn ask(q: AnomalyQuery) -> Result<AnomalyReply, String> {
    match client().query(Query::Anomaly(q)).await? {
        Reply::Anomaly(r) => Ok(r),
        other => Err(crate::ui::client::unexpected(
            crate::ui::client::query_reply_name(&other),
        )),
    }
}

/// A ratio in [0, 1] as a percentage with one decimal; `–` for null (never `-0.0 %`).
pub(crate) fn pct(x: Option<f64>) -> String {
    format::percent(x, 1)
}

/// A duration in ms with its adaptive unit (never `-0.000 ms`).
pub(crate) fn ms(v: f64) -> String {
    format::duration_ms(v)
}

/// The steps & bubbles tab.
#[component]
pub fn AnomalyView() -> impl IntoView {
    let state = expect_context::<AppState>();
    // A new rank clears the step and bubble selection.
    Effect::new(move |prev: Option<Option<u32>>| {
        let r = state.anomaly_rank.get();
        if prev.is_some_and(|p| p != r) {
            state.anomaly_step.set(None);
            state.anomaly_bubble.set(None);
        }
        r
    });
    // The timeline's stacked mode and its step, kept across rank changes.
    let multi = RwSignal::new(false);
    let align_on = RwSignal::new(None::<String>);
    let summary = Memo::new(move |_| {
        let r = state.anomaly_rank.get()?;
        state.anomaly.with(|m| m.get(&r).cloned())
    });
    view! {
        <section class="anomaly" data-testid="anomaly-view">
            <CrossRank/>
            <Exports/>
            {move || match (state.anomaly_rank.get(), summary.get()) {
                (Some(_), Some(s)) if s.kernels == 0 => view! { <NoKernels s=s.clone()/> }.into_any(),
                (Some(rank), Some(s)) => view! {
                    <timeline::Timeline rank=rank multi=multi align_on=align_on gpu=s.gpu/>
                    <SummaryCards s=s.clone()/>
                    <Notes s=s.clone()/>
                    <steps::StepsTable rank=rank/>
                    <div class="anom-bubbles">
                        <bubbles::BubbleList rank=rank labels=s.labels.clone() t0_us=s.origin_us.unwrap_or(0.0)/>
                        <bubbles::BubblePanel rank=rank t0_us=s.origin_us.unwrap_or(0.0) gpu=s.gpu/>
                    </div>
                    <structure::StructureTree rank=rank/>
                    {if s.gpu { view! { <gpu::GpuPanel rank=rank/> }.into_any() } else { view! { <ops::OpTables rank=rank/> }.into_any() }}
                }
                .into_any(),
                (Some(rank), None) => match state.no_result(AnalysisKind::Anomaly, rank) {
                    (true, m) => view! { <p class="notice error" data-testid="anomaly-failed">{m}</p> }.into_any(),
                    (false, m) => view! { <p class="muted" data-testid="anomaly-pending">{m}</p> }.into_any(),
                },
                (None, _) => muted("No rank folder with kernel_details.csv, op_summary*.csv or trace_view.json device lanes."),
            }}
        </section>
    }
}

/// One row per analysed rank (§13.4): service and busy union per step, underfeed, comm,
/// bubbles, slow-rank flag; clicking a row selects the rank.
#[component]
fn CrossRank() -> impl IntoView {
    let state = expect_context::<AppState>();
    let rows = Memo::new(move |_| {
        // A rank without kernels has no steps to compare: it is listed below, not as zeros.
        let sums: Vec<AnomalySummaryDto> = state
            .anomaly
            .with(|m| m.values().filter(|s| s.kernels > 0).cloned().collect());
        cross_rank_table(&sums)
    });
    let dirs = move |rank: u32| {
        state.anomaly.with(|m| {
            m.get(&rank)
                .map(|s| (s.role.clone(), s.dir.clone()))
                .unwrap_or_default()
        })
    };
    let failed = move || {
        state.failures.with(|f| {
            f.iter()
                .filter(|((a, _), _)| *a == AnalysisKind::Anomaly)
                .map(|((_, r), m)| (*r, m.clone()))
                .collect::<Vec<_>>()
        })
    };
    let row = move |r: CrossRankRowDto| {
        let idx = r.rank;
        let (role, dir) = dirs(idx);
        view! {
            <tr
                data-testid="anomaly-rank-row"
                tabindex="0"
                class:selected=move || state.anomaly_rank.get() == Some(idx)
                class:slow=r.slow
                on:click=move |_| state.anomaly_rank.set(Some(idx))
            >
                <td>{role}</td>
                <td class="num">{r.rank_id.map(|v| v.to_string()).unwrap_or_else(|| "?".into())}</td>
                <td><code>{dir}</code></td>
                <td class="num">{r.steps.to_string()}</td>
                <td class="num">{ms(r.service_ms_avg)}</td>
                <td class="num">{ms(r.busy_union_ms_avg)}</td>
                <td class="num">{pct(Some(r.underfeed_ratio_avg))}</td>
                <td class="num">{format!("{:.1}", r.bubble_count_avg)}</td>
                <td>{r.dominant_idle_pattern.clone()}</td>
                <td class="num">{ms(r.comm_total_ms)}</td>
                <td class="num">{r.comm_wait_ratio_weighted.map(|w| format!("{w:.3}")).unwrap_or_else(|| "–".into())}</td>
                <td class="num" data-testid="robust-z">{robust_z_text(&r)}</td>
                <td data-testid="slow-flag">{if r.slow { "slow" } else { "" }}</td>
            </tr>
        }
    };
    view! {
        <table class="grid overview" data-testid="anomaly-ranks">
            <thead>
                <tr>
                    <th>"role"</th><th class="num">"rank"</th><th>"folder"</th><th class="num">"steps"</th>
                    <th class="num">"step service (mean)"</th><th class="num">"busy union (mean)"</th>
                    <th class="num">"underfeed"</th><th class="num">"bubbles / step"</th><th>"idle pattern"</th>
                    <th class="num">"comm total"</th><th class="num" title="the mean of the ops' own Wait Time Ratio (wait / (wait + transit)), weighted by each op's elapse; the Communication tab's ratio is the group total's wait / (wait + transit), msprof-analyze's">"comm wait ratio (op-weighted)"</th>
                    <th class="num" title="(service − median) / (1.4826 · MAD)">"robust z"</th>
                    <th title="> 5 % above the median service and robust z > 3: a rank is slow when its step service is more than 5 % above the median of the ranks it is compared with and its robust z is above 3; when the run holds several roles, each rank is compared with the ranks of its own role only">"slow rank"</th>
                </tr>
            </thead>
            <tbody>
                {move || rows.get().into_iter().map(row).collect_view()}
                {move || state.anomaly.with(|m| m.values().filter(|s| s.kernels == 0).map(|s| (s.rank, s.dir.clone())).collect::<Vec<_>>()).into_iter().map(|(r, dir)| {
                    // Role and rank as the inventory knows them; a PyTorch profiler trace is a
                    // file, not a rank folder.
                    let (role, rank_id, kineto) = state.inventory.with_untracked(|i| {
                        i.as_ref()
                            .and_then(|i| i.ranks.get(r as usize))
                            .map(|f| (f.role.clone(), f.rank_id, f.kineto))
                            .unwrap_or_default()
                    });
                    let what = if kineto { "trace" } else { "rank folder" };
                    view! {
                        <tr class="muted" data-testid="anomaly-no-kernels-row">
                            <td>{role}</td>
                            <td class="num">{rank_id.map(|r| r.to_string()).unwrap_or_else(|| "?".into())}</td>
                            <td colspan="11">{format!("{what} {dir}: cannot run, no device kernels (see below)")}</td>
                        </tr>
                    }
                }).collect_view()}
                {move || failed().into_iter().map(|(r, m)| view! {
                    <tr class="error"><td colspan="13">{format!("rank folder {r}: {m}")}</td></tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

#[component]
fn SummaryCards(s: AnomalySummaryDto) -> impl IntoView {
    let tags = s
        .tags
        .iter()
        .map(|t| {
            let title = match t.scope.as_str() {
                "step" => format!("{} of {} step(s)", t.steps, s.steps),
                "group" => "dominant step group".to_string(),
                _ => "whole rank".to_string(),
            };
            view! {
                <span class=format!("anom-tag level-{}", t.level) title=title data-testid="anomaly-tag">
                    {t.tag.clone()}
                    {(t.scope == "step").then(|| format!(" ×{}", t.steps))}
                </span>
            }
        })
        .collect_view();
    let card = |label: &'static str, value: String, test: &'static str| {
        view! {
            <div class="anom-card">
                <div class="anom-card-label">{label}</div>
                <div class="anom-card-value" data-testid=test>{value}</div>
            </div>
        }
    };
    view! {
        <section class="anom-summary" data-testid="anomaly-summary">
            <div class="anom-cards">
                {card("steps", format!("{} ({})", s.steps, s.step_detection_method), "card-steps")}
                {card("mean step service", ms(s.service_ms_avg), "card-service")}
                {card("mean device busy union", ms(s.busy_union_ms_avg), "card-busy")}
                {card("mean underfeed", pct(Some(s.underfeed_ratio_avg)), "card-underfeed")}
                {card("dominant idle pattern", s.dominant_idle_pattern.clone(), "card-pattern")}
                {card("severity", format!("{} (host risk {})", s.severity, s.host_risk_level), "card-severity")}
                {card("confidence", s.confidence.clone(), "card-confidence")}
                {card("capture", format!("{} · gaps {}", format::duration_ms(s.capture_span_ms), pct(Some(s.device_gap_ratio))), "card-capture")}
            </div>
            <div class="anom-tags">
                <span class="muted">"tags: "</span>
                {if s.tags.is_empty() { Some(view! { <span class="muted">"none"</span> }) } else { None }}
                {tags}
            </div>
            <p class="muted">
                {format!(
                    "{} kernels on {} stream(s) ({}); {} bubble windows emitted; largest global gap {}.",
                    s.kernels,
                    s.streams.len(),
                    s.streams.join(", "),
                    s.bubbles,
                    ms(s.largest_gap_ms)
                )}
            </p>
        </section>
    }
}

/// The tab on a rank folder without device kernels (a memory-only capture, the sample's
/// memory ranks): what is missing and how to capture it, instead of zero-length steps.
#[component]
fn NoKernels(s: AnomalySummaryDto) -> impl IntoView {
    if s.gpu {
        let (cut, why) = crate::views::notices::no_device_events(&s.limitations)
            .map(|(c, w)| (c, w.to_string()))
            .unwrap_or_default();
        if cut {
            // The file ends before its first device event: the cut leads, no capture advice.
            return view! {
                <section class="notice warning anom-empty" data-testid="anomaly-no-kernels">
                    <h3>"A cut trace: the file ends before its first GPU kernel"</h3>
                    <p>{format!("{}: {why}", s.dir)}</p>
                    <p>"Open the whole file: copy or download it again (a .json.gz must end with its gzip trailer)."</p>
                    <p class="muted">"The Problems tab says where it ends (GPU-TV-001) and lists this as GPU-RUN-001."</p>
                </section>
            }
            .into_any();
        }
        if crate::views::notices::device_records_lost(&why) {
            // Launches recorded, device records missing: the activities were on, so no capture
            // advice; what to check instead (formats.md §8.1).
            return view! {
                <section class="notice warning anom-empty" data-testid="anomaly-no-kernels">
                    <h3>"The GPU kernels' records are missing from this trace"</h3>
                    <p>{format!("{}: {why}", s.dir)}</p>
                    <p>"The GPU was not idle: its records never reached the file. Profile again without another profiler attached (Nsight Systems, DCGM profiling), read the run's log for CUPTI or roctracer errors, and call torch.cuda.synchronize() before the profile stops."</p>
                    <p class="muted">"The Problems tab lists this as GPU-RUN-001."</p>
                </section>
            }
            .into_any();
        }
        // A PyTorch profiler trace without device events: a host-only trace.
        return view! {
            <section class="notice warning anom-empty" data-testid="anomaly-no-kernels">
                <h3>"A host-only trace: no GPU kernels to analyse"</h3>
                <p>{format!("{}: {why}", s.dir)}</p>
                <p>"To capture device activity, profile with torch.profiler and:"</p>
                <ul>
                    <li><code>"activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"</code>" (CUDA and ROCm alike)"</li>
                    <li>"a schedule covering a few training steps, with prof.step() each step (steps are the ProfilerStep#N ranges)"</li>
                </ul>
                <p class="muted">"The Problems tab lists this as GPU-RUN-001."</p>
            </section>
        }
        .into_any();
    }
    view! {
        <section class="notice warning anom-empty" data-testid="anomaly-no-kernels">
            <h3>"Steps & bubbles cannot run on this rank folder"</h3>
            <p>{format!("{} has no device kernels: no kernel_details.csv, no op_summary*.csv and no device events in trace_view.json. Steps, bubbles and underfeed are computed from the kernels' busy time on the device, so there is nothing to show.", s.dir)}</p>
            <p>"To capture them, profile with torch_npu.profiler and:"</p>
            <ul>
                <li><code>"activities=[ProfilerActivity.CPU, ProfilerActivity.NPU]"</code>" (device activity recorded)"</li>
                <li><code>"experimental_config = _ExperimentalConfig(profiler_level=ProfilerLevel.Level0)"</code>" or higher"</li>
                <li><code>"export_type=ExportType.Text"</code>" so that ASCEND_PROFILER_OUTPUT/kernel_details.csv is written"</li>
                <li>"a schedule covering a few training steps (steps are found from the step markers in trace_view.json)"</li>
            </ul>
            <p class="muted">"The Problems tab lists this as ANOM-FILE-002."</p>
        </section>
    }
    .into_any()
}

/// Graceful-degradation notes (anomaly.md §9) when the data is thin.
#[component]
fn Notes(s: AnomalySummaryDto) -> impl IntoView {
    let mut notes: Vec<String> = Vec::new();
    if !s.enabled {
        notes.push("No kernel intervals: bubble analysis is unavailable for this rank.".into());
    }
    if s.steps == 1 {
        notes.push("One step only: step groups, recurrence and step-to-step variation cannot be assessed (capture more steps with a profiler schedule).".into());
    }
    if s.requires_host_followup {
        notes.push(
            "Host evidence is sparse: root causes cannot be narrowed (host follow-up needed)."
                .into(),
        );
    }
    notes.extend(s.limitations.iter().cloned());
    let n = notes.len();
    view! {
        <details class="anom-notes" data-testid="anomaly-notes" open=n <= 3>
            <summary>{format!("{n} note(s) on the data")}</summary>
            <ul>{notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
        </details>
    }
}

/// Export buttons: JSON (all ranks, as the CLI), the two Markdown reports of the selected
/// rank, CSV of steps and of bubbles, and on a GPU rank its kernel table CSV.
#[component]
fn Exports() -> impl IntoView {
    let state = expect_context::<AppState>();
    let busy = RwSignal::new(false);
    let run = move |what: AnomalyExportKind| {
        busy.set(true);
        let rank = state.anomaly_rank.get_untracked();
        state.status.set(format!("Writing {what:?}…"));
        spawn_local(async move {
            match client().export(ExportRequest::Anomaly { what, rank }).await {
                Ok(line) => state.status.set(line),
                Err(e) => state.status.set(format!("Export failed: {e}")),
            }
            busy.set(false);
        });
    };
    // The kernel table is a GPU rank's (`kernels_*.csv`, as `--report-dir` writes it).
    let is_gpu = move || {
        state.anomaly_rank.get().is_some_and(|r| {
            state
                .anomaly
                .with(|m| m.get(&r).is_some_and(|s| s.gpu && s.kernels > 0))
        })
    };
    let button = move |what: AnomalyExportKind, test: &'static str, label: &'static str| {
        view! {
            <button class="button" data-testid=test disabled=move || busy.get() on:click=move |_| run(what)>{label}</button>
        }
    };
    view! {
        <div class="exports">
            <span>"Export: "</span>
            {button(AnomalyExportKind::Json, "anom-export-json", "JSON (all ranks)")}
            {button(AnomalyExportKind::ReportMd, "anom-export-report", "Anomaly report (Markdown)")}
            {button(AnomalyExportKind::ArchitectureMd, "anom-export-arch", "Architecture report (Markdown)")}
            {button(AnomalyExportKind::StepsCsv, "anom-export-steps", "Steps CSV")}
            {button(AnomalyExportKind::BubblesCsv, "anom-export-bubbles", "Bubbles CSV")}
            {move || is_gpu().then(|| button(AnomalyExportKind::KernelsCsv, "anom-export-kernels", "Kernel table CSV (this GPU rank)"))}
        </div>
    }
}
