//! The inventory tab: every rank folder found (role, rank, level, versions, files with
//! sizes and per-file progress), which analyses can run and what is missing, and the files
//! outside every rank folder. Shown right after the drop, before parsing.

use crate::ui::widgets::note::muted;
use leptos::prelude::*;

use super::state::AppState;
use crate::protocol::{AnalysisKind, FileDto, RankFolderDto};
use crate::views::format;

/// The inventory tab.
#[component]
pub fn InventoryView() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        {move || match state.inventory.get() {
            None => muted("Listing the dropped files…"),
            Some(inv) => {
                let n_files = state.files.with(|f| f.len());
                let ranks = inv.ranks.clone();
                let ignored = inv.ignored.clone();
                let inv_problems = inv.problems.clone();
                let nothing_found =
                    ranks.is_empty() && inv.snapshots.is_empty() && inv.summaries.is_empty();
                view! {
                    <p class="summary" data-testid="inventory-summary">
                        {format!(
                            "{} rank folder(s), {} snapshot pickle(s), {} file(s), {} in total; {} file(s) outside any rank folder.",
                            ranks.len(),
                            inv.snapshots.len(),
                            n_files,
                            format::bytes(inv.total_bytes as f64),
                            ignored.len()
                        )}
                        {(!inv.summaries.is_empty()).then(|| format!(" {} proflens cluster summary file(s): see the Cluster tab.", inv.summaries.len()))}
                    </p>
                    <SnapshotList files=inv.snapshots.clone()/>
                    {inv_problems
                        .into_iter()
                        .map(|p| view! { <p class="notice">{format!("{}: {}", p.code, p.message)}</p> })
                        .collect_view()}
                    <div class="rank-cards">
                        {ranks.into_iter().map(|r| view! { <RankCard rank=r/> }).collect_view()}
                    </div>
                    <Show when={
                        let empty = ignored.is_empty();
                        move || !empty
                    }>
                        // Open when nothing else was found: each file's reason (an archive to
                        // extract, a format not read) is then the whole answer to the drop.
                        <details class="ignored" data-testid="ignored-files" open=nothing_found>
                            <summary>{format!("Ignored files ({})", ignored.len())}</summary>
                            <ul>
                                {ignored
                                    .iter()
                                    .map(|f| view! { <li><code>{f.path.clone()}</code>" — "{f.kind.clone()}</li> })
                                    .collect_view()}
                            </ul>
                        </details>
                    </Show>
                }
                .into_any()
            }
        }}
    }
}

#[component]
fn RankCard(rank: RankFolderDto) -> impl IntoView {
    let state = expect_context::<AppState>();
    let idx = rank.index;
    let title = format!(
        "{} · rank {}",
        rank.role,
        rank.rank_id
            .map(|r| r.to_string())
            .unwrap_or_else(|| "?".into())
    );
    // The platform's own fields only (no Ascend rows on a GPU card, no GPU rows on an Ascend
    // card); a GPU row the head could not fill takes the whole trace's value once the run is done.
    let card = rank.clone();
    let facts = Memo::new(move |_| {
        state.rank_ticks.track(idx);
        state
            .anomaly
            .with_untracked(|m| crate::views::gpu::rank_card_facts(&card, m.get(&idx)))
    });
    // The inventory's notes, the rank number's guess replaced by the run's check once known.
    let card = rank.clone();
    let notes = Memo::new(move |_| {
        state.rank_ticks.track(idx);
        state
            .anomaly
            .with_untracked(|m| crate::views::gpu::rank_card_notes(&card, m.get(&idx)))
    });
    let analyses = rank.analyses.clone();
    let kineto = rank.kineto;
    // Memos, like the file rows': a finished target changes one card, not all of them.
    // Each tracks this rank's notices only (`Ticks`), and reads the shared maps untracked.
    let status = Memo::new(move |_| {
        state.rank_ticks.track(idx);
        let mut parts = Vec::new();
        // A GPU trace cut before its first device event: the card leads with the cut.
        let cut = state.anomaly.with_untracked(|m| {
            m.get(&idx).is_some_and(|s| {
                crate::views::notices::no_device_events(&s.limitations).is_some_and(|c| c.0)
            })
        });
        if cut {
            parts.push("cut trace: the file ends before its first device event (Problems: GPU-TV-001 says where)".to_string());
        }
        if let Some(s) = state
            .summaries
            .with_untracked(|m| m.get(&idx).map(|s| s.rows))
        {
            parts.push(format!("done: {s} memory events"));
        }
        let comm = (crate::protocol::AnalysisKind::Comm, idx);
        if state.finished.with_untracked(|f| f.contains(&comm))
            && state.failures.with_untracked(|f| !f.contains_key(&comm))
        {
            parts.push("communication files read (Communication tab)".into());
        }
        state.failures.with_untracked(|m| {
            for ((analysis, target), f) in m {
                if *target == idx && *analysis != crate::protocol::AnalysisKind::Snapshot {
                    parts.push(format!("{analysis:?} failed: {f}"));
                }
            }
        });
        parts.join(" · ")
    });
    let found = Memo::new(move |_| {
        state.rank_ticks.track(idx);
        found_by_analyses(state, idx)
    });
    view! {
        <section class="rank-card" data-testid="rank-card" data-rank=idx>
            <h3>{title}</h3>
            <p class="rank-status">{move || status.get()}</p>
            <dl class="facts">
                {move || {
                    facts
                        .get()
                        .into_iter()
                        .map(|(k, v)| {
                            view! {
                                <dt>{k}</dt>
                                <dd>{v.unwrap_or_else(|| "—".into())}</dd>
                            }
                        })
                        .collect_view()
                }}
            </dl>
            <ul class="capabilities">{move || capabilities(found.get(), &analyses, kineto)}</ul>
            {move || {
                notes
                    .get()
                    .into_iter()
                    .map(|n| {
                        // What no analysis reads (`DROP-003`) is information, not a warning.
                        let class = if n.starts_with("DROP-003:") { "notice info" } else { "notice" };
                        view! { <p class=class data-testid="rank-note">{n}</p> }
                    })
                    .collect_view()
            }}
            <table class="files">
                <thead>
                    <tr><th>"file"</th><th>"kind"</th><th class="num">"size"</th><th>"read"</th></tr>
                </thead>
                <tbody>
                    {rank.files.into_iter().map(|f| view! { <FileRow file=f dir=rank.dir.clone()/> }).collect_view()}
                </tbody>
            </table>
        </section>
    }
}

/// What the analyses of rank folder `idx` found that corrects the inventory's capabilities:
/// the memory rows and those matched to an op (once memory ran), and whether the anomaly
/// analysis found no device kernel (`Some((gpu, cut))`: `gpu` for a PyTorch profiler trace,
/// `cut` when its file ends before its first device event).
fn found_by_analyses(state: AppState, idx: u32) -> (Option<(u64, u64)>, Option<(bool, bool)>) {
    let memory = state
        .summaries
        .with_untracked(|m| m.get(&idx).map(|s| (s.rows, s.rows - s.matches.none)));
    let no_kernels = state.anomaly.with_untracked(|m| {
        m.get(&idx).filter(|s| s.kernels == 0).map(|s| {
            let cut = crate::views::notices::no_device_events(&s.limitations).is_some_and(|c| c.0);
            (s.gpu, cut)
        })
    });
    (memory, no_kernels)
}

/// The analyses of a rank folder as the inventory read them, corrected by what the analyses
/// found once they ran (`found`, from [`found_by_analyses`]): a trace without device kernels
/// makes "Steps and anomalies" unable to run; call stacks found in the trace overrule a
/// `with_stack=False` in the metadata. On a GPU rank (`kineto`) the Ascend memory events are
/// not a missing input but another platform's analysis: said in grey, not as an error.
fn capabilities(
    (memory, no_kernels): (Option<(u64, u64)>, Option<(bool, bool)>),
    analyses: &[crate::protocol::CapabilityDto],
    kineto: bool,
) -> Vec<AnyView> {
    analyses
        .iter()
        .map(|a| {
            if kineto && a.analysis == AnalysisKind::Memory && !a.can_run {
                let text = format!("Memory events: Ascend only ({})", a.missing.join("; "));
                return view! { <li class="na" data-testid="capability">{text}</li> }.into_any();
            }
            let name = match a.analysis {
                AnalysisKind::Memory => "Memory events",
                AnalysisKind::Anomaly => "Steps and anomalies",
                AnalysisKind::Snapshot => "Memory snapshot",
                AnalysisKind::Cluster => "Cluster summary",
                AnalysisKind::Comm => "Communication",
            };
            let mut ok = a.can_run;
            let mut missing = a.missing.clone();
            let mut degraded = a.degraded.clone();
            if let (AnalysisKind::Anomaly, true, Some((gpu, cut))) = (a.analysis, ok, no_kernels) {
                ok = false;
                missing.push(if cut {
                    // The file ends before its first device event: how it was captured is unknown.
                    "device events: the trace is cut before its first one (Problems: GPU-TV-001 says where the file ends); open the whole file"
                } else if gpu {
                    // A PyTorch profiler trace has no trace_view.json or kernel_details.csv.
                    "device events: a host-only trace, no kernel, gpu_memcpy or gpu_memset (Problems: GPU-RUN-001; the Steps tab says how to capture them)"
                } else {
                    "device kernels: trace_view.json has none and there is no kernel_details.csv (Problems: ANOM-FILE-002; the Steps tab says how to capture them)"
                }.into());
                degraded.clear();
            }
            if a.analysis == AnalysisKind::Memory {
                if let Some((rows, with_stack)) = memory.filter(|m| m.1 > 0) {
                    for d in degraded.iter_mut().filter(|d| d.contains("with_stack=False")) {
                        *d = format!("profiler_info says with_stack=False, yet {with_stack} of {rows} rows matched an op with a call stack in trace_view.json");
                    }
                }
            }
            let mut text = if ok {
                format!("{name}: can run")
            } else {
                format!("{name}: cannot run — missing {}", missing.join("; "))
            };
            if !degraded.is_empty() {
                text.push_str(&format!(" (but: {})", degraded.join("; ")));
            }
            view! { <li class:ok=ok class:missing=!ok data-testid="capability">{text}</li> }.into_any()
        })
        .collect()
}

/// The dropped snapshot pickles: file, size and, once analysed, devices and trace entries.
#[component]
fn SnapshotList(files: Vec<FileDto>) -> impl IntoView {
    let state = expect_context::<AppState>();
    (!files.is_empty()).then(|| {
        let rows = files
            .into_iter()
            .enumerate()
            .map(|(i, f)| {
                let i = i as u32;
                let detail = move || {
                    let done = state.snapshots.with(|m| {
                        m.get(&i).map(|s| {
                            s.devices
                                .iter()
                                .map(|d| format!("device {}: {} entries", d.device, d.entries))
                                .collect::<Vec<_>>()
                                .join(" · ")
                        })
                    });
                    let failed = state
                        .failures
                        .with(|m| m.get(&(AnalysisKind::Snapshot, i)).cloned());
                    match (done, failed) {
                        (_, Some(f)) => format!("failed: {f}"),
                        (Some(d), _) if d.is_empty() => "no device with entries".to_string(),
                        (Some(d), _) => d,
                        (None, None) => "…".to_string(),
                    }
                };
                view! {
                    <tr data-testid="snapshot-file">
                        <td><code>{f.path.clone()}</code></td>
                        <td class="num">{format::bytes(f.size as f64)}</td>
                        <td>{detail}</td>
                    </tr>
                }
            })
            .collect_view();
        view! {
            <section class="rank-card" data-testid="snapshot-inventory">
                <h3>"Memory snapshots"</h3>
                <table class="files">
                    <thead><tr><th>"file"</th><th class="num">"size"</th><th>"devices and entries"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </section>
        }
    })
}

#[component]
fn FileRow(file: FileDto, dir: String) -> impl IntoView {
    let shown = file
        .path
        .strip_prefix(&format!("{dir}/"))
        .unwrap_or(&file.path)
        .to_string();
    let state = expect_context::<AppState>();
    let idx = file.file;
    // A memo per file, tracking this file's notices only (`Ticks`): a progress report re-runs
    // one row. (A plain closure made every row of every rank rebuild its cell on every report,
    // and a memo over the whole map still re-ran every row's memo.)
    let progress = Memo::new(move |_| {
        state.file_ticks.track(idx);
        state
            .progress
            .with_untracked(|m| m.get(&idx).map(|p| p.last.clone()))
    });
    view! {
        <tr data-kind=file.kind.clone()>
            <td title=file.path.clone()><code>{shown}</code></td>
            <td>{file.kind.clone()}</td>
            <td class="num">{format::bytes(file.size as f64)}</td>
            <td class="progress-cell">
                {move || match progress.get() {
                    None => view! { <span class="muted">"—"</span> }.into_any(),
                    Some(p) => {
                        let pct = if p.bytes_total == 0 {
                            100.0
                        } else {
                            p.bytes_done as f64 * 100.0 / p.bytes_total as f64
                        };
                        view! {
                            <progress max="100" value=pct data-testid="file-progress"></progress>
                            <br/>
                            <span class="progress-text">
                                {if p.bytes_done >= 1 << 20 {
                                    format!(
                                        "{} / {} · {}",
                                        format::bytes(p.bytes_done as f64),
                                        format::bytes(p.bytes_total as f64),
                                        format::rate_mb_s(p.mb_per_s)
                                    )
                                } else {
                                    format!(
                                        "{} / {}",
                                        format::bytes(p.bytes_done as f64),
                                        format::bytes(p.bytes_total as f64)
                                    )
                                }}
                            </span>
                        }
                        .into_any()
                    }
                }}
            </td>
        </tr>
    }
}
