//! The Communication tab's tables: the time summary per rank with its stacked bars, the
//! bandwidth per transport, who arrived last per op, slow links and slow ranks, GPU
//! collectives. Each cell shows the payload's number in the page's units (ms with 3
//! decimals, ratios as % with 2, docs/rules/communication.md §8) and keeps the exact value in
//! `data-v`.

use std::sync::Arc;

use leptos::prelude::*;

use crate::protocol::comm::CommOverviewDto;
use crate::ui::route::{use_route, COMM_OSORT, COMM_Q, COMM_SORT};
use crate::ui::widgets::palette::series_css;
use crate::views::comm_table::{arrival_order, stack, time_order, STACK_NAMES};
use crate::views::format;

/// Per-op rows shown at most (the rest counted).
const OPS_SHOWN: usize = 200;

fn ms(v: f64) -> String {
    format::fixed(v, 3)
}

fn pct(v: f64) -> String {
    format::percent(Some(v), 2)
}

/// A numeric cell: shown text, exact value in `data-v`.
fn num(text: String, v: f64) -> impl IntoView {
    view! { <td class="num" data-v=v.to_string()>{text}</td> }
}

/// `(key, desc)` of a sort signal (`key` or `key,desc`; empty: `default`, descending when
/// it starts with `-`).
fn parse_sort(s: &str, default: &str) -> (String, bool) {
    match s.split_once(',') {
        Some((k, d)) => (k.to_string(), d == "desc"),
        None if s.is_empty() => match default.strip_prefix('-') {
            Some(k) => (k.to_string(), true),
            None => (default.to_string(), false),
        },
        None => (s.to_string(), false),
    }
}

/// A sortable header: click sorts by `key`, a second click reverses.
fn header(
    sort: RwSignal<String>,
    default: &'static str,
    key: &'static str,
    label: &'static str,
) -> impl IntoView {
    let mark = move || {
        let (k, d) = parse_sort(&sort.get(), default);
        if k == key {
            if d {
                " ▼"
            } else {
                " ▲"
            }
        } else {
            ""
        }
    };
    view! {
        <th class="sortable" data-testid=format!("sort-{key}") on:click=move |_| {
            let (k, d) = parse_sort(&sort.get_untracked(), default);
            sort.set(if k == key && !d { format!("{key},desc") } else { key.to_string() });
        }>{label}{mark}</th>
    }
}

/// Time summary of the step and group: one row per rank with a stacked bar.
#[component]
pub fn TimeTable(
    view: Arc<CommOverviewDto>,
    step: RwSignal<String>,
    group: RwSignal<String>,
) -> impl IntoView {
    let sort = RwSignal::new(String::new());
    use_route().bind(COMM_SORT, sort);
    let rows = move || {
        let (s, g) = (step.get(), group.get());
        let rows: Vec<_> = view
            .time
            .iter()
            .filter(|t| t.step == s && t.group == g)
            .collect();
        let (key, desc) = parse_sort(&sort.get(), "rank");
        let longest = rows
            .iter()
            .map(|t| t.elapse_ms)
            .fold(0.0f64, f64::max)
            .max(1e-12);
        time_order(&rows, &key, desc)
            .into_iter()
            .map(|i| {
                let t = rows[i];
                let parts = stack(t);
                let bar = parts
                    .iter()
                    .enumerate()
                    .map(|(k, p)| {
                        let w = p / longest * 100.0;
                        view! { <span style=format!("width:{w}%;background:{}", series_css(k)) title=format!("{}: {} ms", STACK_NAMES[k], ms(*p))></span> }
                    })
                    .collect_view();
                view! {
                    <tr data-testid="comm-time-row" data-rank=t.rank>
                        <td class="num">{t.rank}</td>
                        <td class="num">{t.n_ops}</td>
                        <td class="comm-bar-cell"><div class="comm-bar">{bar}</div></td>
                        {num(ms(t.elapse_ms), t.elapse_ms)}
                        {num(ms(t.transit_ms), t.transit_ms)}
                        {num(ms(t.wait_ms), t.wait_ms)}
                        {num(ms(t.sync_ms), t.sync_ms)}
                        {num(ms(t.idle_ms), t.idle_ms)}
                        {num(pct(t.wait_ratio), t.wait_ratio)}
                        {num(pct(t.sync_ratio), t.sync_ratio)}
                    </tr>
                }
            })
            .collect_view()
    };
    let legend = STACK_NAMES
        .iter()
        .enumerate()
        .map(|(k, n)| view! { <span class="pattern"><span class="swatch" style=format!("background:{}", series_css(k))></span>{*n}</span> })
        .collect_view();
    let h = move |key, label| header(sort, "rank", key, label);
    view! {
        <h3>"Time per rank (msprof-analyze's Total Op Info of the group)"</h3>
        <div class="patterns">{legend}<span class="muted">" bars: share of the longest elapse in the group; transit + wait + idle = elapse, synchronization is part of the wait"</span></div>
        <table class="plain comm-time" data-testid="comm-time">
            <thead><tr>
                {h("rank", "rank")}{h("ops", "ops")}<th>"elapse split"</th>
                {h("elapse", "elapse ms")}{h("transit", "transit ms")}{h("wait", "wait ms")}
                {h("sync", "sync ms")}{h("idle", "idle ms")}{h("wait_ratio", "wait ratio")}{h("sync_ratio", "sync ratio")}
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// Bandwidth per rank and transport of the step and group.
#[component]
pub fn BandTable(
    view: Arc<CommOverviewDto>,
    step: RwSignal<String>,
    group: RwSignal<String>,
) -> impl IntoView {
    let rows = move || {
        let (s, g) = (step.get(), group.get());
        view.bandwidth
            .iter()
            .filter(|b| b.step == s && b.group == g)
            .map(|b| {
                let transport = if b.transport == "SDMA" {
                    "SDMA (on-chip total of HCCS + PCIE + SIO)".to_string()
                } else {
                    b.transport.clone()
                };
                view! {
                    <tr data-testid="comm-band-row">
                        <td class="num">{b.rank}</td>
                        <td>{transport}</td>
                        {num(format::fixed(b.size_mb, 6), b.size_mb)}
                        {num(ms(b.time_ms), b.time_ms)}
                        {num(format::fixed(b.bandwidth_gbps, 4), b.bandwidth_gbps)}
                        {match b.large_packet_ratio {
                            Some(r) => num(pct(r), r).into_any(),
                            None => view! { <td class="num muted">"—"</td> }.into_any(),
                        }}
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <h3>"Bandwidth per transport"</h3>
        <table class="plain" data-testid="comm-band">
            <thead><tr><th>"rank"</th><th>"transport"</th><th>"size MB"</th><th>"time ms"</th><th>"GB/s"</th><th title="packets above 0.5 MB (RDMA) or 32 MB (HCCS/PCIE/SIO): computed by proflens">"large-packet ratio (proflens)"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// Per op across ranks: who arrived last (shortest elapse), sortable and filtered by name.
#[component]
pub fn Arrivals(
    view: Arc<CommOverviewDto>,
    step: RwSignal<String>,
    group: RwSignal<String>,
) -> impl IntoView {
    let sort = RwSignal::new(String::new());
    let q = RwSignal::new(String::new());
    let route = use_route();
    route.bind(COMM_OSORT, sort);
    route.bind(COMM_Q, q);
    let body = move || {
        let (s, g) = (step.get(), group.get());
        let (key, desc) = parse_sort(&sort.get(), "-spread");
        let ix = arrival_order(&view.arrivals, &s, &g, &q.get(), &key, desc);
        let n = ix.len();
        let rows = ix
            .into_iter()
            .take(OPS_SHOWN)
            .map(|i| {
                let a = &view.arrivals[i];
                view! {
                    <tr data-testid="comm-op-row">
                        <td><code>{a.op.clone()}</code></td>
                        <td class="num">{a.n_ranks}</td>
                        <td class="num" data-testid="comm-op-last">{a.last_rank}</td>
                        {num(ms(a.last_elapse_ms), a.last_elapse_ms)}
                        <td class="num">{a.first_rank}</td>
                        {num(ms(a.max_elapse_ms), a.max_elapse_ms)}
                        {num(ms(a.mean_elapse_ms), a.mean_elapse_ms)}
                        {num(ms(a.spread_ms), a.spread_ms)}
                        {match a.start_spread_us {
                            Some(x) => num(format::fixed(x, 3), x).into_any(),
                            None => view! { <td class="num muted">"—"</td> }.into_any(),
                        }}
                    </tr>
                }
            })
            .collect_view();
        let more = (n > OPS_SHOWN)
            .then(|| format!("{} more ops (filter by name to see them)", n - OPS_SHOWN));
        (rows, more)
    };
    let h = move |key, label| header(sort, "-spread", key, label);
    view! {
        <h3>"Per op across ranks: who arrived last"</h3>
        <p class="muted">"An op ends together on its ranks, so the rank that arrived last has the shortest elapse, and the others waited up to the spread for it (a proflens view, not in comm.json)."</p>
        <div class="filters">
            <input type="search" placeholder="filter op names" data-testid="comm-op-filter" prop:value=move || q.get() on:input=move |ev| q.set(event_target_value(&ev))/>
        </div>
        <table class="plain" data-testid="comm-ops">
            <thead><tr>
                {h("op", "op")}{h("ranks", "ranks")}{h("last", "arrived last")}{h("last_elapse", "elapse ms (arrived last)")}
                <th>"waited most"</th>{h("max_elapse", "elapse ms (waited most)")}{h("mean", "mean ms")}{h("spread", "spread ms")}{h("start_spread", "start spread µs")}
            </tr></thead>
            {move || { let (rows, more) = body(); view! { <tbody>{rows}</tbody><caption class="muted">{more}</caption> } }}
        </table>
    }
}

/// Slow links and slow ranks with the evidence that flagged them.
#[component]
pub fn Slow(view: Arc<CommOverviewDto>) -> impl IntoView {
    let links = view
        .slow_links
        .iter()
        .map(|s| {
            view! {
                <tr data-testid="comm-slow-link">
                    <td><code>{s.name.clone()}</code></td>
                    <td class="num">{s.count}</td>
                    <td class="num">{format::duration_ns(s.mean_ns as i64)}</td>
                    <td class="num">{format::duration_ns(s.std_ns as i64)}</td>
                    <td class="num">{format::duration_ns(s.min_ns as i64)}</td>
                    <td class="num">{format::duration_ns(s.median_ns as i64)}</td>
                    <td class="num">{format::duration_ns(s.max_ns as i64)}</td>
                    {num(format::fixed(s.offset_ratio, 4), s.offset_ratio)}
                    <td>{s.ops.join(", ")}</td>
                </tr>
            }
        })
        .collect_view();
    let ranks = view
        .slow_ranks
        .iter()
        .map(|s| {
            view! {
                <tr data-testid="comm-slow-rank">
                    <td class="num">{s.rank}</td>
                    <td><code>{s.op.clone()}</code></td>
                    <td>{s.group.clone()}</td>
                    <td class="num">{s.n}</td>
                    <td>{s.test.clone()}</td>
                    {num(format::fixed(s.statistic, 4), s.statistic)}
                    {num(format::fixed(s.threshold, 4), s.threshold)}
                    {num(format::fixed(s.time_us, 3), s.time_us)}
                    {num(format::fixed(s.mean_us, 3), s.mean_us)}
                </tr>
            }
        })
        .collect_view();
    let (nl, nr, tested) = (
        view.slow_links.len(),
        view.slow_ranks.len(),
        view.slow_rank_ops_tested,
    );
    let (rows, sized) = (view.slow_link_rows, view.slow_link_rows_sized);
    // Votes per rank, most first: "rank 5: 6 of 6 ops".
    let votes = {
        let mut per: std::collections::BTreeMap<i64, usize> = Default::default();
        for s in &view.slow_ranks {
            *per.entry(s.rank).or_default() += 1;
        }
        let mut v: Vec<(i64, usize)> = per.into_iter().collect();
        crate::base::sort::sort_by(&mut v, |a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let parts: Vec<String> = v
            .iter()
            .map(|(r, n)| format!("rank {r}: {n} of {tested} ops"))
            .collect();
        format!("Arrived last: {}.", parts.join(", "))
    };
    let rule = "The rule groups op rows by op type, data size and rank count; a group of 11 rows or more is flagged when an op's time (the minimum over its ranks) lies beyond 3σ of the group's mean.";
    let no_link = if sized == 0 {
        format!("Not computable: none of the {rows} op rows has a data size. {rule} The size of an op is its HCCL op event's count × element size in trace_view.json, or its COMMUNICATION_OP row in the profiler DB; these ranks have neither (or only element types without a size).")
    } else {
        format!("No slow link flagged over {sized} of {rows} op rows with a data size. {rule}")
    };
    view! {
        <h3>{format!("Slow links ({nl})")}</h3>
        {if nl == 0 {
            view! { <p class="muted" data-testid="comm-no-slow-link">{no_link}</p> }.into_any()
        } else {
            view! {
                <p class="muted" data-testid="comm-slow-link-rule">{format!("Over {sized} of {rows} op rows with a data size. {rule}")}</p>
                <table class="plain" data-testid="comm-slow-links">
                    <thead><tr><th>"group"</th><th>"rows"</th><th>"mean"</th><th>"std"</th><th>"min"</th><th>"median"</th><th>"max"</th><th>"offset / std"</th><th>"ops"</th></tr></thead>
                    <tbody>{links}</tbody>
                </table>
            }.into_any()
        }}
        <MsiSlowRanks view=view.clone()/>
        <h3>{format!("Slow ranks, msprof-analyze ({nr} vote(s); {tested} ops tested)")}</h3>
        <p class="muted">"Per op across ranks: the ops of one collective end together, so the rank with the shortest time arrived last and the others waited for it; that rank gets the op's vote (Dixon's test up to 100 ranks, 3σ above)."</p>
        {(nr > 0).then(|| view! { <p data-testid="comm-slow-rank-votes">{votes}</p> })}
        {if nr == 0 {
            view! { <p class="muted" data-testid="comm-no-slow-rank">{format!("No slow rank over the {tested} ops tested (Dixon's test up to 100 ranks, 3σ above; an op needs more than 3 distinct times).")}</p> }.into_any()
        } else {
            view! {
                <table class="plain" data-testid="comm-slow-ranks">
                    <thead><tr><th>"rank"</th><th>"op"</th><th>"group"</th><th>"ranks tested"</th><th>"test"</th><th>"statistic"</th><th>"threshold"</th><th>"its time µs"</th><th>"mean µs"</th></tr></thead>
                    <tbody>{ranks}</tbody>
                </table>
            }.into_any()
        }}
    }
}

/// GPU collectives (NCCL kernels of the ranks' traces).
#[component]
pub fn Collectives(view: Arc<CommOverviewDto>) -> impl IntoView {
    (!view.collectives.is_empty()).then(|| {
        let rows = view
            .collectives
            .iter()
            .map(|c| {
                let bw = |x: Option<f64>| x.map(|v| format::fixed(v, 3)).unwrap_or_else(|| "—".into());
                view! {
                    <tr data-testid="comm-collective">
                        <td><code>{c.collective_id.clone()}</code></td>
                        <td>{c.collective.clone()}</td>
                        <td class="num">{c.group_size}</td>
                        <td>{c.ranks.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ")}</td>
                        {num(format::fixed(c.full_msg_mb, 3), c.full_msg_mb)}
                        {num(format::fixed(c.comm_latency_us, 3), c.comm_latency_us)}
                        {num(format::fixed(c.skew_start_us, 3), c.skew_start_us)}
                        {num(format::fixed(c.skew_end_us, 3), c.skew_end_us)}
                        <td class="num">{c.earliest_arrival_rank}</td>
                        <td class="num">{bw(c.algo_bw_gbps)}</td>
                        <td class="num">{bw(c.bus_bw_gbps)}</td>
                    </tr>
                }
            })
            .collect_view();
        view! {
            <h3>{format!("GPU collectives ({})", view.collectives.len())}</h3>
            <table class="plain" data-testid="comm-collectives">
                <thead><tr><th>"collective"</th><th>"kind"</th><th>"group size"</th><th>"ranks"</th><th>"message MiB"</th><th>"latency µs"</th><th>"start skew µs"</th><th>"end skew µs"</th><th>"first to arrive"</th><th>"algbw GiB/s"</th><th>"busbw GiB/s"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        }
    })
}

/// MindStudio Insight's slow rank list (communication.md §3): per step and group, the ranks
/// that spent at least 10 % less time in the group's collectives than the rank that waited most.
#[component]
fn MsiSlowRanks(view: Arc<CommOverviewDto>) -> impl IntoView {
    let n = view.msi_slow_ranks.len();
    let rows = view
        .msi_slow_ranks
        .iter()
        .map(|m| {
            let ops = m
                .ops
                .iter()
                .map(|(o, d)| format!("{o} ({} µs)", format::fixed(*d, 3)))
                .collect::<Vec<_>>()
                .join(", ");
            view! {
                <tr data-testid="comm-msi-slow-rank">
                    <td>{m.step.clone()}</td>
                    <td>{m.group.clone()}</td>
                    <td class="num">{m.rank}</td>
                    {num(format::fixed(m.time_us, 3), m.time_us)}
                    <td class="num">{m.fast_rank}</td>
                    {num(format::fixed(m.fast_us, 3), m.fast_us)}
                    {num(format::fixed(m.diff_us, 3), m.diff_us)}
                    {num(format::fixed(m.threshold_us, 3), m.threshold_us)}
                    <td>{ops}</td>
                </tr>
            }
        })
        .collect_view();
    let rule = "MindStudio Insight's rule, per step and group (not pp groups, nor groups with send/receive or all-to-all-v ops): the rank with the largest total op time waited most; each of the three ranks with the smallest time is slow when it spent at least 10 % less.";
    view! {
        <h3>{format!("Slow rank list, MindStudio Insight ({n})")}</h3>
        <p class="muted">{rule}</p>
        {(n > 0).then(|| view! {
            <table class="plain" data-testid="comm-msi-slow-ranks">
                <thead><tr><th>"step"</th><th>"group"</th><th>"slow rank"</th><th>"its time µs"</th><th>"waited most"</th><th>"its time µs"</th><th>"difference µs"</th><th>"≥ 10 % µs"</th><th>"ops with the largest difference"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        })}
    }
}
