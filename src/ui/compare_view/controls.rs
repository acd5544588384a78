//! The comparison's controls: devices, overlay axis and alignment, step and rank, each a
//! `<select>`; a change asks the worker to compare again.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::protocol::compare::{CompareKind, CompareOptions, CompareStep, CompareViewDto};
use crate::ui::client::client;
use crate::views::compare_table::{step_from_hash, step_to_hash};

/// One `<select>` of the controls: `(value, label)` choices, `current` selected; `pick`
/// receives the chosen value.
pub(super) fn control_select(
    label: &'static str,
    id: &'static str,
    choices: Vec<(String, String)>,
    current: String,
    pick: impl Fn(String) + 'static,
) -> impl IntoView {
    let options = choices
        .into_iter()
        .map(|(value, text)| {
            let selected = value == current;
            view! { <option value=value selected=selected>{text}</option> }
        })
        .collect_view();
    view! {
        <label class="control">
            {label}" "
            <select data-testid=id on:change=move |ev| pick(event_target_value(&ev))>{options}</select>
        </label>
    }
}

/// The options of `proflens diff` for this comparison: devices, overlay axis and alignment
/// (snapshots), step and rank (traces, runs). Each change asks the worker to compute the
/// comparison again from both stores ([`crate::protocol::Request::CompareAgain`]); a refusal
/// is shown beside the controls and the shown comparison stays.
#[component]
pub(super) fn Controls(v: Arc<CompareViewDto>) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let opts = v.options.clone();
    let ask = move |o: CompareOptions| {
        busy.set(true);
        error.set(None);
        spawn_local(async move {
            if let Err(e) = client().compare_again(o).await {
                let _ = error.try_set(Some(e));
                let _ = busy.try_set(false);
            }
        });
    };
    let c = &v.choices;
    let devices = |list: &[u32]| -> Vec<(String, String)> {
        std::iter::once((String::new(), "every device".to_string()))
            .chain(list.iter().map(|d| (d.to_string(), format!("device {d}"))))
            .collect()
    };
    let dev_text = |d: Option<u32>| d.map(|d| d.to_string()).unwrap_or_default();
    let controls = match v.kind {
        CompareKind::Snapshot => {
            let (o1, o2, o3, o4) = (opts.clone(), opts.clone(), opts.clone(), opts.clone());
            let aligns: Vec<(String, String)> =
                std::iter::once((String::new(), "the first entries".to_string()))
                    .chain(c.annotations.iter().map(|a| (a.clone(), a.clone())))
                    .collect();
            view! {
                {control_select("A device", "compare-a-device", devices(&c.a_devices), dev_text(opts.a_device), move |s| {
                    ask(CompareOptions { a_device: s.parse().ok(), ..o1.clone() })
                })}
                {control_select("B device", "compare-b-device", devices(&c.b_devices), dev_text(opts.b_device), move |s| {
                    ask(CompareOptions { b_device: s.parse().ok(), ..o2.clone() })
                })}
                {control_select("Axis", "compare-axis",
                    vec![("index".into(), "entry index".into()), ("time".into(), "time (ms)".into())],
                    if opts.time_axis { "time".into() } else { "index".into() },
                    move |s| ask(CompareOptions { time_axis: s == "time", ..o3.clone() }))}
                {control_select("Align at", "compare-align", aligns, opts.align.clone().unwrap_or_default(), move |s| {
                    ask(CompareOptions { align: (!s.is_empty()).then_some(s), ..o4.clone() })
                })}
            }
            .into_any()
        }
        CompareKind::Trace => {
            let (o1, o2) = (opts.clone(), opts.clone());
            let steps: Vec<(String, String)> =
                std::iter::once(("1".to_string(), "the first".to_string()))
                    .chain((2..=c.steps.max(1)).map(|n| (n.to_string(), format!("step {n}"))))
                    .chain(std::iter::once((
                        "all".to_string(),
                        "all steps".to_string(),
                    )))
                    .collect();
            let ranks: Vec<(String, String)> =
                std::iter::once((String::new(), "the first".to_string()))
                    .chain(c.ranks.iter().map(|r| (r.to_string(), format!("rank {r}"))))
                    .collect();
            let step_now = step_to_hash(opts.step).unwrap_or_else(|| "1".into());
            let rank_now = opts.rank.map(|r| r.to_string()).unwrap_or_default();
            view! {
                {control_select("Ops of step", "compare-step", steps, step_now, move |s| {
                    ask(CompareOptions { step: step_from_hash(&s).unwrap_or(CompareStep::First), ..o1.clone() })
                })}
                {(c.ranks.len() > 1 || opts.rank.is_some()).then(|| control_select("Rank", "compare-rank", ranks, rank_now, move |s| {
                    ask(CompareOptions { rank: s.parse().ok(), ..o2.clone() })
                }))}
            }
            .into_any()
        }
    };
    view! {
        <div class="compare-controls" data-testid="compare-controls" class:busy=move || busy.get()>
            {controls}
            {move || busy.get().then(|| view! { <span class="muted" data-testid="compare-busy">"computing…"</span> })}
            {move || error.get().map(|e| view! { <span class="error" data-testid="compare-control-error">{e}</span> })}
        </div>
    }
}
