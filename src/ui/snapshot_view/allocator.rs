//! The allocator state at the selected entry (MemoryViz's "Allocator State
//! History"): the entries around it (click one, or ↑/↓, to move), an address-ordered strip
//! per segment with its blocks coloured by state (hover a block for its size, stream, pool,
//! site and frames), and the fragmentation classes beside it; at an `oom` entry, the OOM
//! explanation. Renders a [`SnapAllocatorDto`] from the worker; the strips' layout is
//! [`crate::views::snapshot_segmap`].

use crate::ui::widgets::note::{failed, muted};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::protocol::{
    SnapAllocatorDto, SnapAllocatorQuery, SnapBlockDto, SnapQuery, SnapReply, SnapSegmentMapDto,
    SnapStackDto,
};
use crate::views::format;
use crate::views::snapshot_segmap::strip;

use super::{snap, Selected};

/// Strip width in layout units (rectangles are placed in percent of it).
const UNITS: f64 = 1000.0;
/// Blocks narrower than this many units are merged (≈ 1 px on a 1000 px strip).
const MIN_UNITS: f64 = 1.0;
/// Entries listed on each side of the selected one.
const CONTEXT: u32 = 8;

fn b(n: u64) -> String {
    format::bytes(n as f64)
}

/// The allocator panel; follows `shown` (the entry whose live set is displayed).
#[component]
pub fn AllocatorPanel(
    target: u32,
    dslot: u32,
    has_trace: bool,
    shown: Signal<Option<(u32, Option<f64>)>>,
    selected: RwSignal<Option<Selected>>,
) -> impl IntoView {
    let data = RwSignal::new(None::<Result<SnapAllocatorDto, String>>);
    let hovered = RwSignal::new(None::<(SnapSegmentMapDto, SnapBlockDto)>);
    let stack = RwSignal::new(None::<SnapStackDto>);
    let generation = StoredValue::new(0u32);
    Effect::new(move |_| {
        let index = if has_trace {
            match shown.get() {
                Some((i, _)) => Some(i),
                None => return,
            }
        } else {
            None
        };
        generation.update_value(|g| *g += 1);
        let g = generation.get_value();
        spawn_local(async move {
            let q = SnapAllocatorQuery {
                target,
                slot: dslot,
                index,
                context: CONTEXT,
            };
            let res = match snap(SnapQuery::Allocator(q)).await {
                Ok(SnapReply::Allocator(a)) => Ok(a),
                Ok(other) => Err(crate::ui::client::unexpected(
                    crate::ui::client::snap_reply_name(&other),
                )),
                Err(e) => Err(e),
            };
            if generation.try_get_value() == Some(g) {
                let _ = data.try_set(Some(res));
            }
        });
    });
    let hover = move |seg: SnapSegmentMapDto, blk: SnapBlockDto| {
        let rec = blk.record;
        hovered.set(Some((seg, blk)));
        stack.set(None);
        if let Some(record) = rec {
            spawn_local(async move {
                if let Ok(SnapReply::Stack(s)) = snap(SnapQuery::Stack {
                    target,
                    slot: dslot,
                    record,
                })
                .await
                {
                    if hovered.with_untracked(|h| h.as_ref().and_then(|h| h.1.record))
                        == Some(record)
                    {
                        let _ = stack.try_set(Some(s));
                    }
                }
            });
        }
    };
    let step = move |d: i64, a: &SnapAllocatorDto| {
        let Some(i) = a.index else { return };
        let j = (i as i64 + d).clamp(0, a.entries_total.saturating_sub(1) as i64);
        selected.set(Some(Selected::entry(j as u32)));
    };
    view! {
        <section class="snap-allocator" data-testid="snap-allocator">
            <h3>"Allocator state"</h3>
            {move || match data.get() {
                None => muted("Click an entry (the curve, the timeline or the entry list) to see the allocator's segments at that moment."),
                Some(Err(e)) => failed(e),
                Some(Ok(a)) => {
                    let a2 = a.clone();
                    let keys = move |ev: leptos::ev::KeyboardEvent| match ev.key().as_str() {
                        "ArrowUp" => { ev.prevent_default(); step(-1, &a2) }
                        "ArrowDown" => { ev.prevent_default(); step(1, &a2) }
                        _ => {}
                    };
                    let title = match a.index {
                        Some(i) => format!("after entry {i} of {}", a.entries_total),
                        None if a.entries_total == 0 => "end state (no trace for this device)".to_string(),
                        None => "before the first entry".to_string(),
                    };
                    let segs = a.segments.clone();
                    view! {
                        <p data-testid="snap-alloc-title"><b>{title}</b>{format!(" · {} segments", a.segments.len())}
                            {(a.orphan_blocks > 0).then(|| view! { <span class="warn">{format!(" · {} blocks outside any segment", a.orphan_blocks)}</span> })}
                            {(a.replay_mismatches > 0).then(|| view! { <span class="warn">{format!(" · {} trace entries contradict the replayed state (skipped)", a.replay_mismatches)}</span> })}
                        </p>
                        {a.oom.clone().map(|o| view! {
                            <div class="notice error" data-testid="snap-oom">
                                <b>{format!("OOM: requested {}, the driver had {} free; the allocator held {} free in its segments on this stream (largest contiguous block {}), highest reserved {}.",
                                    b(o.requested_bytes), o.device_free_bytes.map(b).unwrap_or_else(|| "an unknown amount".into()),
                                    b(o.cached_free_bytes), b(o.largest_free_bytes), b(o.peak_reserved_bytes))}</b>
                                <p data-testid="snap-oom-verdict">{o.sentence}</p>
                            </div>
                        })}
                        <div class="snap-alloc-grid">
                            <div>
                                <table class="grid snap-entries" data-testid="snap-entries" tabindex="0" on:keydown=keys>
                                    <tbody>{a.entries.iter().map(|e| {
                                        let i = e.index;
                                        let cur = a.index == Some(i);
                                        view! {
                                            <tr data-testid="snap-entry" class:selected=cur on:click=move |_| selected.set(Some(Selected::entry(i)))>
                                                <td class="num">{i}</td><td><code>{e.text.clone()}</code></td>
                                            </tr>
                                        }
                                    }).collect_view()}</tbody>
                                </table>
                                <Fragmentation a=a.clone()/>
                            </div>
                            <div>
                                <div class="segmap-legend muted">
                                    <span class="sw allocated"></span>"allocated "
                                    <span class="sw pending_free"></span>"pending free (waiting on other streams) "
                                    <span class="sw inactive"></span>"inactive (cached free)"
                                </div>
                                <div class="segmap" data-testid="snap-segmap" data-segments=a.segments.len().to_string()>
                                    {segs.into_iter().map(|s| view! { <Strip s=s hover=hover/> }).collect_view()}
                                </div>
                                <BlockInfo hovered=hovered stack=stack/>
                            </div>
                        </div>
                    }.into_any()
                }
            }}
        </section>
    }
}

/// One segment: its label and its strip.
#[component]
fn Strip(
    s: SnapSegmentMapDto,
    hover: impl Fn(SnapSegmentMapDto, SnapBlockDto) + Copy + 'static,
) -> impl IntoView {
    let rects = strip(&s, UNITS, MIN_UNITS);
    let pool = match s.pool {
        Some((0, 0)) => String::new(),
        Some(p) => format!(" · pool {p:?}"),
        None => " · pool ?".into(),
    };
    let label = format!(
        "{} · {} · stream {}{}{} · free {} (largest {})",
        s.address,
        b(s.total_bytes),
        s.stream,
        pool,
        if s.expandable { " · expandable" } else { "" },
        b(s.inactive_bytes),
        b(s.largest_free_bytes)
    );
    let cells = rects
        .into_iter()
        .map(|r| {
            let blk = s.blocks[r.first].clone();
            let seg = s.clone();
            let style = format!(
                "left:{:.3}%;width:{:.3}%",
                r.x / UNITS * 100.0,
                (r.w / UNITS * 100.0).max(0.1)
            );
            view! {
                <div class=format!("blk {}", r.state) style=style data-testid="snap-block"
                    on:mouseenter=move |_| hover(seg.clone(), blk.clone())></div>
            }
        })
        .collect_view();
    view! {
        <div class="segrow">
            <div class="seglabel muted">{label}</div>
            <div class="segstrip">{cells}</div>
        </div>
    }
}

/// The hovered block: size, state, stream, pool, site and frames.
#[component]
fn BlockInfo(
    hovered: RwSignal<Option<(SnapSegmentMapDto, SnapBlockDto)>>,
    stack: RwSignal<Option<SnapStackDto>>,
) -> impl IntoView {
    view! {
        <div class="snap-blockinfo" data-testid="snap-block-info">
            {move || match hovered.get() {
                None => muted("Hover a block for its size, stream, pool and frames."),
                Some((s, k)) => {
                    let size = if k.exact { b(k.bytes) } else { format!("≥ {} (request rounded to 512 B; the block may be larger)", b(k.bytes)) };
                    let frames = stack.get().map(|st| st.frames.into_iter().filter(|f| !f.hidden && !f.native).take(12).map(|f| view! { <li><code>{f.label}</code></li> }).collect_view());
                    view! {
                        <dl class="facts">
                            <dt>"block"</dt><dd>{format!("{} {}{}", k.address, k.memoryviz_name.clone().unwrap_or_default(), if k.state == "pending_free" { " · freed, waiting due to record_stream" } else { "" })}</dd>
                            <dt>"state"</dt><dd>{k.state.replace('_', " ")}</dd>
                            <dt>"size"</dt><dd>{format!("{size} ({} bytes), requested {} bytes", k.bytes, k.requested_bytes)}</dd>
                            <dt>"stream · pool"</dt><dd>{format!("{} · {}", k.stream, s.pool.map_or("unknown".into(), |p| format!("{p:?}")))}</dd>
                            <dt>"segment"</dt><dd>{format!("{} ({}) at offset {}", s.address, b(s.total_bytes), b(k.offset))}</dd>
                            {k.site.clone().map(|site| view! { <dt>"site"</dt><dd title=site.clone()>{format::site_label(&site)}</dd> })}
                        </dl>
                        {frames.map(|f| view! { <ul class="snap-frames">{f}</ul> })}
                    }.into_any()
                }
            }}
        </div>
    }
}

/// The fragmentation classes beside the map.
#[component]
fn Fragmentation(a: SnapAllocatorDto) -> impl IntoView {
    let f = a.fragmentation;
    view! {
        <dl class="facts" data-testid="snap-fragmentation">
            <dt>"reserved"</dt><dd>{b(f.reserved_bytes)}</dd>
            <dt>"allocated · active"</dt><dd>{format!("{} · {}", b(f.allocated_bytes), b(f.active_bytes))}</dd>
            <dt>"largest recent request"</dt><dd>{b(f.largest_recent_request_bytes)}</dd>
            <dt>"hard"</dt><dd data-testid="snap-frag-hard">{format!("{} free in blocks too small for it", b(f.hard_bytes))}</dd>
            <dt>"soft"</dt><dd>{format!("{} cached, reusable", b(f.soft_bytes))}</dd>
            <dt>"stream"</dt><dd>{format!("{} pending frees on other streams", b(f.stream_bytes))}</dd>
            <dt>"largest free block"</dt><dd>{format!("{} (external fragmentation {:.1}%)", b(f.largest_inactive_bytes), f.external_ratio * 100.0)}</dd>
            <dt>"rounding waste"</dt><dd>{b(f.internal_waste_bytes)}</dd>
        </dl>
    }
}
