//! The rank × step heatmap of the cluster view: one canvas, the raster computed by
//! `views::heatmap::raster` (each pixel row the largest value of the ranks it covers), slow
//! ranks marked on the left edge, step ids below, a colour legend with units, and a hover
//! read-out (rank, role, step, value) from `views::heatmap::hit`.

use std::sync::Arc;

use leptos::ev;
use leptos::html::Canvas;
use leptos::prelude::*;
use wasm_bindgen::Clamped;
use web_sys::ImageData;

use crate::protocol::cluster_view::{ClusterViewDto, HeatmapDto};
use crate::ui::widgets::chart::context;
use crate::ui::widgets::palette::palette;
use crate::views::heatmap::{hit, ramp, raster, row_y, Scale};

/// Canvas height, px.
const HEIGHT: f64 = 360.0;
/// Plot margins, px: left (slow-rank marks and the rank axis), right, top, bottom (steps).
const MARGIN: (f64, f64, f64, f64) = (72.0, 8.0, 6.0, 34.0);

/// Which matrix is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// `service_ms`.
    Service,
    /// `underfeed_ratio`.
    Underfeed,
}

impl Metric {
    fn of(self, v: &ClusterViewDto) -> &HeatmapDto {
        match self {
            Metric::Service => &v.service_ms,
            Metric::Underfeed => &v.underfeed_ratio,
        }
    }
    fn title(self) -> &'static str {
        match self {
            Metric::Service => "service time per step",
            Metric::Underfeed => "underfeed ratio per step",
        }
    }
}

/// The heatmap with its metric switch and legend.
#[component]
pub fn Heatmap(view: Arc<ClusterViewDto>) -> impl IntoView {
    let metric = RwSignal::new(Metric::Service);
    let canvas = NodeRef::<Canvas>::new();
    let hover = RwSignal::new(None::<String>);
    let hover_at = RwSignal::new((0.0f64, 0.0f64));
    let dark = crate::ui::theme::use_theme().dark;
    let v = view.clone();
    Effect::new(move |_| {
        let m = metric.get();
        dark.track();
        if let Some(c) = canvas.get() {
            draw(&c, &v, m);
        }
    });
    // redraw when the window is resized (the canvas is as wide as the page)
    let v = view.clone();
    let _resize = StoredValue::new_local(gloo::events::EventListener::new(
        &web_sys::window().expect("window"),
        "resize",
        move |_| {
            if let Some(c) = canvas.get_untracked() {
                draw(&c, &v, metric.get_untracked());
            }
        },
    ));
    let v = view.clone();
    let on_move = move |ev: ev::MouseEvent| {
        let Some(c) = canvas.get_untracked() else {
            return;
        };
        let (ml, mr, mt, mb) = MARGIN;
        let (w, h) = (c.client_width() as f64 - ml - mr, HEIGHT - mt - mb);
        let (x, y) = (ev.offset_x() as f64 - ml, ev.offset_y() as f64 - mt);
        let m = metric.get_untracked();
        let mat = m.of(&v);
        let text = hit(mat, x, y, w.max(1.0) as u32, h.max(1.0) as u32).map(|hit| {
            let r = &v.ranks[hit.row as usize];
            let step = v
                .step_ids
                .get(hit.col as usize)
                .cloned()
                .unwrap_or_default();
            let value = match hit.value {
                Some(x) => Scale::of(mat).unit.label(x),
                None => "no such step".into(),
            };
            let covers = hit.rows.1 - hit.rows.0;
            let bin = if covers > 1 {
                format!(" · largest of the {covers} ranks in this pixel row")
            } else {
                String::new()
            };
            let rank = r
                .rank_id
                .map(|x| x.to_string())
                .unwrap_or_else(|| "?".into());
            let role = if r.role.is_empty() {
                String::new()
            } else {
                format!(" ({})", r.role)
            };
            let slow = if r.slow { " · slow" } else { "" };
            format!(
                "rank {rank}{role} · {step} · {} {value}{slow}{bin}",
                mat.metric
            )
        });
        hover_at.set((ev.offset_x() as f64, ev.offset_y() as f64));
        hover.set(text);
    };
    let legend = {
        let v = view.clone();
        move || {
            let s = Scale::of(metric.get().of(&v));
            let stops: Vec<String> = (0..=8)
                .map(|i| {
                    let [r, g, b] = ramp(i as f64 / 8.0);
                    format!("rgb({r},{g},{b}) {}%", i * 100 / 8)
                })
                .collect();
            let ticks = s
                .legend(3)
                .into_iter()
                .map(|(f, label)| view! { <span class="hm-tick" style=format!("left:{}%", f * 100.0)>{label}</span> })
                .collect_view();
            view! {
                <div class="hm-legend" data-testid="heatmap-legend">
                    <span class="muted">{metric.get().title()}</span>
                    <div class="hm-bar" style=format!("background: linear-gradient(to right, {})", stops.join(", "))></div>
                    <div class="hm-ticks">{ticks}</div>
                    <span class="muted hm-empty">"▢ no such step"</span>
                </div>
            }
        }
    };
    let radio = move |m: Metric, label: &'static str, id: &'static str| {
        view! {
            <label>
                <input type="radio" name="hm-metric" data-testid=id prop:checked=move || metric.get() == m on:change=move |_| metric.set(m)/>
                {label}
            </label>
        }
    };
    view! {
        <section class="heatmap">
            <h3>"Ranks × steps"</h3>
            <div class="filters">
                {radio(Metric::Service, " service time", "hm-service")}
                {radio(Metric::Underfeed, " underfeed ratio", "hm-underfeed")}
                <span class="muted">"Each pixel row shows the largest value of the ranks it covers; red marks on the left are the slow ranks."</span>
            </div>
            <div class="hm-wrap">
                <canvas
                    class="heatmap-canvas"
                    data-testid="heatmap"
                    node_ref=canvas
                    style=format!("height:{HEIGHT}px")
                    on:mousemove=on_move
                    on:mouseleave=move |_| hover.set(None)
                ></canvas>
                {move || hover.get().map(|t| {
                    let (x, y) = hover_at.get();
                    view! { <div class="hm-hover" data-testid="heatmap-hover" style=format!("left:{}px;top:{}px", x + 12.0, y + 12.0)>{t}</div> }
                })}
            </div>
            {legend}
        </section>
    }
}

/// Draws matrix `m` of `v` on `canvas`: raster, slow-rank marks, axes.
fn draw(canvas: &web_sys::HtmlCanvasElement, v: &ClusterViewDto, m: Metric) {
    let Some((ctx, w, h)) = context(canvas) else {
        return;
    };
    let dpr = web_sys::window()
        .map(|w| w.device_pixel_ratio())
        .unwrap_or(1.0);
    let (ml, mr, mt, mb) = MARGIN;
    let (pw, ph) = (w - ml - mr, h - mt - mb);
    let pal = palette();
    ctx.clear_rect(0.0, 0.0, w, h);
    let mat = m.of(v);
    let scale = Scale::of(mat);
    // the raster at device pixels (ImageData ignores the context's scale)
    let (iw, ih) = (
        (pw * dpr).round().max(1.0) as u32,
        (ph * dpr).round().max(1.0) as u32,
    );
    let px = raster(mat, &scale, iw, ih);
    // cells without a value stay transparent: the page background shows through
    if let Ok(img) = ImageData::new_with_u8_clamped_array_and_sh(Clamped(&px), iw, ih) {
        let _ = ctx.put_image_data(&img, (ml * dpr).round(), (mt * dpr).round());
    }
    // slow ranks: a red mark on the left edge at the rank's row
    ctx.set_fill_style_str(&pal.peak);
    for r in v.ranks.iter().filter(|r| r.slow) {
        let y = mt + row_y(r.index, mat.rows, ph as u32).min(ph - 1.0);
        let band = (ph / mat.rows.max(1) as f64).max(3.0);
        ctx.fill_rect(ml - 8.0, y, 6.0, band);
    }
    // axes: ranks on the left (first and last rank of the order), steps below
    ctx.set_font("11px system-ui, sans-serif");
    ctx.set_fill_style_str(&pal.text);
    ctx.set_text_align("right");
    let rank_label = |i: usize| {
        v.ranks
            .get(i)
            .map(|r| {
                format!(
                    "rank {}",
                    r.rank_id
                        .map(|x| x.to_string())
                        .unwrap_or_else(|| "?".into())
                )
            })
            .unwrap_or_default()
    };
    let _ = ctx.fill_text(&rank_label(0), ml - 10.0, mt + 10.0);
    if v.ranks.len() > 1 {
        let _ = ctx.fill_text(&rank_label(v.ranks.len() - 1), ml - 10.0, mt + ph);
    }
    ctx.set_text_align("center");
    let cols = mat.cols.max(1) as f64;
    let every = ((cols * 90.0 / pw).ceil() as usize).max(1);
    for (j, id) in v.step_ids.iter().enumerate().step_by(every) {
        let x = ml + (j as f64 + 0.5) * pw / cols;
        let short = id
            .rsplit('#')
            .next()
            .filter(|_| id.contains('#'))
            .map(|n| format!("#{n}"))
            .unwrap_or_else(|| id.clone());
        let _ = ctx.fill_text(&short, x, mt + ph + 14.0);
    }
    let _ = ctx.fill_text(
        &format!(
            "{} ranks × {} steps",
            crate::views::format::thousands(mat.rows as i64),
            mat.cols
        ),
        ml + pw / 2.0,
        mt + ph + 28.0,
    );
}
