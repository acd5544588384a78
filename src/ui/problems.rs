//! The problems tab: every warning and error with its file, line or byte offset, and what
//! was expected (ascend-memory.md §10.3 "Data checks").

use leptos::prelude::*;

use super::state::AppState;
use crate::protocol::{AnalysisKind, ProblemDto, SeverityDto};

/// Problem code of an analysis that stopped for a whole target (a worker that died — out of
/// memory, a trap — or a target the worker refused): listed beside the file problems.
pub const TARGET_FAILED: &str = "TARGET-FAILED";

/// One error row per failed (analysis, target), on the rank folder or snapshot file it is
/// about (a worker that fails is reported for its rank while the others finish).
pub fn failure_problems(state: &AppState) -> Vec<ProblemDto> {
    let inv = state.inventory.get().unwrap_or_default();
    state.failures.with(|f| {
        f.iter()
            .map(|((kind, target), why)| {
                let (what, file) = match kind {
                    AnalysisKind::Snapshot => (
                        "snapshot analysis",
                        inv.snapshots.get(*target as usize).map(|s| s.path.clone()),
                    ),
                    AnalysisKind::Cluster => (
                        "cluster summary",
                        inv.summaries.get(*target as usize).map(|s| s.path.clone()),
                    ),
                    k => (
                        if *k == AnalysisKind::Memory {
                            "memory analysis"
                        } else if *k == AnalysisKind::Comm {
                            "communication read"
                        } else {
                            "steps & bubbles analysis"
                        },
                        inv.ranks
                            .iter()
                            .find(|r| r.index == *target)
                            .map(|r| r.dir.clone()),
                    ),
                };
                ProblemDto {
                    severity: SeverityDto::Error,
                    code: TARGET_FAILED.to_string(),
                    file: file.unwrap_or_else(|| format!("target {target}")),
                    line: None,
                    byte: None,
                    column: None,
                    message: format!("the {what} did not finish: {why}; the other targets went on"),
                }
            })
            .collect()
    })
}

/// The problems tab.
#[component]
pub fn ProblemsView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let filter = RwSignal::new(String::new());
    let rows = move || {
        let needle = filter.get().to_lowercase();
        let mut list = state.problems.get();
        if let Some(inv) = state.inventory.get() {
            list.splice(0..0, inv.problems);
        }
        list.extend(failure_problems(&state));
        crate::base::sort::sort_by(&mut list, |a, b| {
            b.severity.cmp(&a.severity).then(a.file.cmp(&b.file))
        });
        list.into_iter()
            .filter(|p| {
                needle.is_empty()
                    || p.message.to_lowercase().contains(&needle)
                    || p.file.to_lowercase().contains(&needle)
                    || p.code.to_lowercase().contains(&needle)
            })
            .map(|p| {
                let sev = match p.severity {
                    SeverityDto::Error => "error",
                    SeverityDto::Warning => "warning",
                    SeverityDto::Info => "info",
                };
                let mut place = String::new();
                if let Some(l) = p.line {
                    place.push_str(&format!("line {l}"));
                }
                if let Some(b) = p.byte {
                    if !place.is_empty() {
                        place.push_str(", ");
                    }
                    place.push_str(&format!("byte {b}"));
                }
                if let Some(c) = &p.column {
                    if !place.is_empty() {
                        place.push_str(", ");
                    }
                    place.push_str(&format!("column '{c}'"));
                }
                view! {
                    <tr class=sev>
                        <td class="sev">{sev}</td>
                        <td><code>{p.code}</code></td>
                        <td><code>{p.file}</code></td>
                        <td>{place}</td>
                        <td>{p.message}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <section class="problems" data-testid="problems">
            <p class="summary">
                {move || {
                    let inv = state.inventory.with(|i| i.as_ref().map(|i| i.problems.len() as u64).unwrap_or(0));
                    let failed = state.failures.with(|f| f.len()) as u64;
                    let total = state.problems_total.get() + inv + failed;
                    let kept = state.problems.with(|p| p.len()) as u64 + inv + failed;
                    if total > kept {
                        format!("{total} problem(s); the first {kept} are listed.")
                    } else {
                        format!("{total} problem(s).")
                    }
                }}
            </p>
            <input
                type="search"
                placeholder="filter problems"
                on:input=move |ev| filter.set(event_target_value(&ev))
            />
            <table class="grid">
                <thead>
                    <tr><th>"severity"</th><th>"code"</th><th>"file"</th><th>"where"</th><th>"message"</th></tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}
