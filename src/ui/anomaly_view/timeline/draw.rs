//! Canvas drawing of the steps/bubbles timeline ([`TimelineDto`]): time ruler, step row,
//! bubble row, one row per lane. Boxes are drawn through the *current* view window, so while
//! a new reply is pending the last boxes are simply re-projected (pan and zoom feel instant).
//! Pure drawing: the component owns the state; geometry comes from `views::timeline_axis`.

use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use crate::protocol::{LaneKind, TimelineDto};
use crate::views::timeline_axis::{label_color, ticks, LaneLayout};

/// Left gutter for lane labels, px.
pub const LABEL_W: f64 = 150.0;
/// Right margin, px.
pub const RIGHT: f64 = 10.0;
/// Ruler height, px.
pub const RULER_H: f64 = 22.0;
/// Step row: top and height, px.
pub const STEP_ROW: (f64, f64) = (22.0, 18.0);
/// Bubble row: top and height, px.
pub const BUBBLE_ROW: (f64, f64) = (40.0, 14.0);
/// Height of one lane, px.
pub const LANE_H: f64 = 22.0;

/// Colours of box classes (AI_CORE, AI_CPU, HCCL, OTHER, host) and their legend names.
pub const CLASS_COLORS: &[(&str, &str)] = &[
    ("AI_CORE", "#2f6fde"),
    ("AI_CPU", "#e08a1e"),
    ("HCCL", "#2a9d55"),
    ("OTHER", "#9b4dca"),
    ("host", "#6c757d"),
];

/// Label gutter width and lane height, px (the user widens the gutter and makes the timeline
/// taller by dragging).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geom {
    /// Left gutter for lane labels, px.
    pub label_w: f64,
    /// Height of one lane, px.
    pub lane_h: f64,
}

impl Default for Geom {
    fn default() -> Self {
        Geom {
            label_w: LABEL_W,
            lane_h: LANE_H,
        }
    }
}

/// Narrowest and widest label gutter, px.
pub const LABEL_W_RANGE: (f64, f64) = (80.0, 600.0);
/// Lowest and highest lane, px.
pub const LANE_H_RANGE: (f64, f64) = (16.0, 160.0);

/// The lane layout for `lanes` lanes `lane_h` px high.
pub fn layout(lanes: usize, lane_h: f64) -> LaneLayout {
    LaneLayout {
        top: BUBBLE_ROW.0 + BUBBLE_ROW.1 + 4.0,
        lane_h,
        lanes,
    }
}

/// Canvas CSS height for `lanes` lanes `lane_h` px high.
pub fn css_height(lanes: usize, lane_h: f64) -> f64 {
    layout(lanes, lane_h).bottom() + 6.0
}

/// Search matches to outline: (lane id, start ms, end ms), and the current one.
#[derive(Clone, Copy, Debug, Default)]
pub struct Found<'a> {
    /// Matches in time order.
    pub matches: &'a [(u32, f64, f64)],
    /// Index of the current match.
    pub current: Option<usize>,
}

/// What is highlighted.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Marks {
    /// Selected bubble ([`crate::protocol::BubbleMarkDto::index`]).
    pub bubble: Option<u32>,
    /// Selected step index.
    pub step: Option<u32>,
    /// Selected item: (lane, start ms, end ms).
    pub item: Option<(u32, f64, f64)>,
}

/// A launch → kernel arrow in stacked lanes and view ms (`AnomalyQuery::Flows`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arrow {
    /// Lane of the host end.
    pub from_lane: u32,
    /// Tail time (the launch), ms.
    pub from_ms: f64,
    /// Lane of the device end.
    pub to_lane: u32,
    /// Head time (the kernel's start), ms.
    pub to_ms: f64,
    /// The other end of the link (not the selected item): lane, start ms, end ms.
    pub partner: (u32, f64, f64),
}

/// What is drawn over the boxes besides the marks: flow arrows of the selection, and the
/// rank groups of a stacked timeline ((first lane, lane count) per rank; a line between).
#[derive(Clone, Copy, Debug, Default)]
pub struct Overlay<'a> {
    /// Arrows of the selected item.
    pub arrows: &'a [Arrow],
    /// Rank groups (empty or one group: nothing drawn).
    pub groups: &'a [(usize, usize)],
}

/// Maps relative ms to CSS px for the view `(v0, v1)` on a canvas `w` px wide.
#[derive(Clone, Copy, Debug)]
pub struct XMap {
    v0: f64,
    scale: f64,
    label_w: f64,
}

impl XMap {
    /// For view `(v0, v1)`, canvas width `w` and a label gutter `label_w` px wide.
    pub fn new(view: (f64, f64), w: f64, label_w: f64) -> Self {
        let pw = (w - label_w - RIGHT).max(1.0);
        XMap {
            v0: view.0,
            scale: pw / (view.1 - view.0).max(1e-12),
            label_w,
        }
    }
    /// x of time `t`.
    pub fn x(&self, t: f64) -> f64 {
        self.label_w + (t - self.v0) * self.scale
    }
    /// Time at x.
    pub fn t(&self, x: f64) -> f64 {
        self.v0 + (x - self.label_w) / self.scale
    }
    /// ms per px.
    pub fn ms_per_px(&self) -> f64 {
        1.0 / self.scale
    }
}

fn context(canvas: &HtmlCanvasElement, css_h: f64) -> Option<(CanvasRenderingContext2d, f64)> {
    let dpr = web_sys::window()
        .map(|w| w.device_pixel_ratio())
        .unwrap_or(1.0);
    let w = canvas.client_width() as f64;
    if w <= 0.0 {
        return None;
    }
    let (pw, ph) = ((w * dpr).round() as u32, (css_h * dpr).round() as u32);
    if canvas.width() != pw || canvas.height() != ph {
        canvas.set_width(pw);
        canvas.set_height(ph);
    }
    let ctx: CanvasRenderingContext2d = canvas.get_context("2d").ok()??.dyn_into().ok()?;
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    Some((ctx, w))
}

/// A name cut to about `px` pixels of 11 px text (≈ 6.2 px per character), with an ellipsis.
fn fit(name: &str, px: f64) -> Option<String> {
    let n = (px / 6.2).floor() as usize;
    if n < 3 {
        return None;
    }
    let count = name.chars().count();
    Some(if count <= n {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(n.saturating_sub(1)).collect();
        s.push('…');
        s
    })
}

/// Draws `d` through view `view` (relative ms) with geometry `g`, search matches outlined.
/// Returns the number of boxes drawn.
pub fn draw(
    canvas: &HtmlCanvasElement,
    d: &TimelineDto,
    view: (f64, f64),
    marks: Marks,
    g: Geom,
    found: Found<'_>,
    over: Overlay<'_>,
) -> usize {
    let (lw, lh) = (g.label_w, g.lane_h);
    let lay = layout(d.lanes.len(), lh);
    let h = css_height(d.lanes.len(), lh);
    let Some((ctx, w)) = context(canvas, h) else {
        return 0;
    };
    let xm = XMap::new(view, w, lw);
    let right = w - RIGHT;
    ctx.clear_rect(0.0, 0.0, w, h);
    ctx.set_font("11px system-ui, sans-serif");
    // Lane backgrounds and labels (labels clipped to the gutter).
    ctx.save();
    ctx.begin_path();
    ctx.rect(0.0, 0.0, lw - 4.0, h);
    ctx.clip();
    for (i, lane) in d.lanes.iter().enumerate() {
        let y = lay.lane_top(i);
        ctx.set_fill_style_str(if i % 2 == 0 {
            "rgba(128,128,128,0.06)"
        } else {
            "rgba(128,128,128,0.0)"
        });
        ctx.fill_rect(0.0, y, w, lh);
        ctx.set_fill_style_str(if lane.kind == LaneKind::Host {
            "#6c757d"
        } else {
            "#444"
        });
        let _ = ctx.fill_text(&lane.label, 6.0, y + lh / 2.0 + 4.0);
    }
    let _ = ctx.fill_text("steps", 6.0, STEP_ROW.0 + 13.0);
    let _ = ctx.fill_text("bubbles", 6.0, BUBBLE_ROW.0 + 11.0);
    ctx.restore();
    for i in 0..d.lanes.len() {
        ctx.set_fill_style_str(if i % 2 == 0 {
            "rgba(128,128,128,0.06)"
        } else {
            "rgba(128,128,128,0.0)"
        });
        ctx.fill_rect(lw - 4.0, lay.lane_top(i), w - lw + 4.0, lh);
    }
    ctx.save();
    ctx.begin_path();
    ctx.rect(lw, 0.0, right - lw, h);
    ctx.clip();
    // Steps: shading over every row, id in the step row.
    for (k, s) in d.steps.iter().enumerate() {
        let (x0, x1) = (
            xm.x(s.start_ms).max(lw - 1.0),
            xm.x(s.end_ms).min(right + 1.0),
        );
        if x1 < lw || x0 > right {
            continue;
        }
        let sel = marks.step == Some(s.index);
        ctx.set_fill_style_str(match (sel, k % 2) {
            (true, _) => "rgba(47,111,222,0.14)",
            (false, 0) => "rgba(47,111,222,0.05)",
            _ => "rgba(42,157,85,0.05)",
        });
        ctx.fill_rect(x0, STEP_ROW.0, x1 - x0, lay.bottom() - STEP_ROW.0);
        ctx.set_fill_style_str("rgba(47,111,222,0.35)");
        ctx.fill_rect(x0, STEP_ROW.0 + 2.0, (x1 - x0).max(1.0), STEP_ROW.1 - 4.0);
        if x1 - x0 > 60.0 {
            ctx.set_fill_style_str("#1d3f80");
            let _ = ctx.fill_text(&s.step_id, x0.max(lw) + 4.0, STEP_ROW.0 + 13.0);
        }
    }
    // Bubbles: a band across the device lanes and a mark in the bubble row, by first label.
    for b in &d.bubbles {
        let (x0, x1) = (xm.x(b.start_ms), xm.x(b.end_ms));
        if x1 < lw || x0 > right {
            continue;
        }
        let wpx = (x1 - x0).max(2.0);
        let color = label_color(&b.labels);
        let _ = ctx.set_global_alpha(0.16);
        ctx.set_fill_style_str(color);
        ctx.fill_rect(x0, lay.top, wpx, lay.bottom() - lay.top);
        let _ = ctx.set_global_alpha(if b.significant { 1.0 } else { 0.6 });
        ctx.fill_rect(x0, BUBBLE_ROW.0 + 1.0, wpx, BUBBLE_ROW.1 - 2.0);
        let _ = ctx.set_global_alpha(1.0);
        if marks.bubble == Some(b.index) {
            ctx.set_stroke_style_str("#111");
            ctx.set_line_width(2.0);
            ctx.stroke_rect(
                x0 - 1.0,
                BUBBLE_ROW.0,
                wpx + 2.0,
                lay.bottom() - BUBBLE_ROW.0,
            );
        }
    }
    // Boxes: colour by class, opacity by busy fraction.
    let mut drawn = 0;
    for (i, lane) in d.lanes.iter().enumerate() {
        let y = lay.lane_top(i) + 3.0;
        let bh = lh - 6.0;
        let b = &lane.boxes;
        let mut last_style = u8::MAX;
        for j in 0..b.start_ms.len() {
            let (x0, x1) = (xm.x(b.start_ms[j]), xm.x(b.end_ms[j]));
            if x1 < lw || x0 > right {
                continue;
            }
            let c = b.class.get(j).copied().unwrap_or(0);
            if c != last_style {
                ctx.set_fill_style_str(CLASS_COLORS.get(c as usize).map_or("#888", |p| p.1));
                last_style = c;
            }
            let busy = b.busy.get(j).copied().unwrap_or(1.0) as f64;
            let _ = ctx.set_global_alpha(0.3 + 0.7 * busy);
            ctx.fill_rect(x0, y, (x1 - x0).max(1.0), bh);
            drawn += 1;
        }
        let _ = ctx.set_global_alpha(1.0);
        // Names inside the boxes wide enough to hold a few characters.
        ctx.set_fill_style_str("#fff");
        for j in 0..b.start_ms.len() {
            let (x0, x1) = (xm.x(b.start_ms[j]).max(lw), xm.x(b.end_ms[j]).min(right));
            if x1 - x0 < 24.0 {
                continue;
            }
            let name = d.names.get(b.name[j] as usize).map_or("", |n| n.as_str());
            let text = match b.count[j] {
                1 => name.to_string(),
                n => format!("{n} items · {name}"),
            };
            if let Some(t) = fit(&text, x1 - x0 - 6.0) {
                let _ = ctx.fill_text(&t, x0 + 3.0, y + bh / 2.0 + 4.0);
            }
        }
    }
    // Search matches: outlined, the current one thicker.
    if !found.matches.is_empty() {
        let row: std::collections::HashMap<u32, usize> =
            d.lanes.iter().enumerate().map(|(i, l)| (l.id, i)).collect();
        for (k, &(lane, s, e)) in found.matches.iter().enumerate() {
            let (x0, x1) = (xm.x(s), xm.x(e));
            let Some(&i) = row.get(&lane) else { continue };
            if x1 < lw || x0 > right {
                continue;
            }
            let cur = found.current == Some(k);
            ctx.set_stroke_style_str(if cur { "#e8590c" } else { "#f59f00" });
            ctx.set_line_width(if cur { 3.0 } else { 1.5 });
            ctx.stroke_rect(
                x0 - 1.0,
                lay.lane_top(i) + 1.5,
                (x1 - x0).max(1.0) + 2.0,
                lh - 3.0,
            );
        }
    }
    if let Some((lane, s, e)) = marks.item {
        let y = lay.lane_top(lane as usize) + 1.0;
        ctx.set_stroke_style_str("#d6336c");
        ctx.set_line_width(2.0);
        ctx.stroke_rect(
            xm.x(s) - 1.0,
            y,
            (xm.x(e) - xm.x(s)).max(1.0) + 2.0,
            lh - 2.0,
        );
    }
    draw_arrows(&ctx, &lay, &xm, lh, over.arrows, d.lanes.len());
    ctx.restore();
    // Rank groups of a stacked timeline: a line between ranks, across the gutter too.
    if over.groups.len() > 1 {
        ctx.set_stroke_style_str("rgba(29,63,128,0.7)");
        ctx.set_line_width(2.0);
        for &(first, _) in &over.groups[1..] {
            let y = lay.lane_top(first).round();
            ctx.begin_path();
            ctx.move_to(0.0, y);
            ctx.line_to(right, y);
            ctx.stroke();
        }
        ctx.set_line_width(1.0);
    }
    // Ruler.
    ctx.set_fill_style_str("rgba(255,255,255,0.0)");
    ctx.set_stroke_style_str("rgba(128,128,128,0.35)");
    ctx.set_line_width(1.0);
    ctx.set_fill_style_str("#666");
    for t in ticks(view.0, view.1, right - lw, 90.0) {
        let x = xm.x(t.t_ms).round() + 0.5;
        ctx.begin_path();
        ctx.move_to(x, RULER_H - 6.0);
        ctx.line_to(x, lay.bottom());
        ctx.stroke();
        let _ = ctx.fill_text(&t.label, x + 3.0, 12.0);
    }
    // The gutter's edge (drag it to widen the labels).
    ctx.set_stroke_style_str("rgba(128,128,128,0.5)");
    ctx.begin_path();
    ctx.move_to(lw - 2.5, RULER_H);
    ctx.line_to(lw - 2.5, lay.bottom());
    ctx.stroke();
    ctx.set_stroke_style_str("rgba(128,128,128,0.35)");
    ctx.begin_path();
    ctx.move_to(lw, RULER_H - 0.5);
    ctx.line_to(right, RULER_H - 0.5);
    ctx.stroke();
    drawn
}

/// Flow arrows: a curve from the host box to the device box with a head, the partner box
/// outlined dashed.
fn draw_arrows(
    ctx: &CanvasRenderingContext2d,
    lay: &LaneLayout,
    xm: &XMap,
    lh: f64,
    arrows: &[Arrow],
    lanes: usize,
) {
    if arrows.is_empty() {
        return;
    }
    ctx.set_stroke_style_str("#d6336c");
    ctx.set_fill_style_str("#d6336c");
    for a in arrows {
        if a.from_lane as usize >= lanes || a.to_lane as usize >= lanes {
            continue;
        }
        let (pl, ps, pe) = a.partner;
        let dash = js_sys::Array::of2(&4.0.into(), &3.0.into());
        let _ = ctx.set_line_dash(&dash);
        ctx.set_line_width(1.5);
        ctx.stroke_rect(
            xm.x(ps) - 1.0,
            lay.lane_top(pl as usize) + 1.0,
            (xm.x(pe) - xm.x(ps)).max(1.0) + 2.0,
            lh - 2.0,
        );
        let _ = ctx.set_line_dash(&js_sys::Array::new());
        let (t0, t1) = (
            lay.lane_top(a.from_lane as usize),
            lay.lane_top(a.to_lane as usize),
        );
        let up = t1 < t0;
        let (x0, x1) = (xm.x(a.from_ms), xm.x(a.to_ms));
        let y0 = if up { t0 + 3.0 } else { t0 + lh - 3.0 };
        let y1 = if up { t1 + lh - 3.0 } else { t1 + 3.0 };
        let ym = (y0 + y1) / 2.0;
        ctx.set_line_width(1.8);
        ctx.begin_path();
        ctx.move_to(x0, y0);
        ctx.bezier_curve_to(x0, ym, x1, ym, x1, y1);
        ctx.stroke();
        // The head, pointing along the curve's last (vertical) direction.
        let dir = if up { -1.0 } else { 1.0 };
        ctx.begin_path();
        ctx.move_to(x1, y1);
        ctx.line_to(x1 - 4.5, y1 - dir * 8.0);
        ctx.line_to(x1 + 4.5, y1 - dir * 8.0);
        ctx.close_path();
        ctx.fill();
        // The tail: a dot on the launch.
        ctx.begin_path();
        let _ = ctx.arc(x0, y0, 2.5, 0.0, std::f64::consts::TAU);
        ctx.fill();
    }
}

/// The page clock, ms (`performance.now()`; 0 without a window).
pub(super) fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// End of an item, its rank's ms.
pub(super) fn end_ms(k: &crate::protocol::TimelineItemDto) -> f64 {
    k.start_ms + k.dur_us / 1e3
}
