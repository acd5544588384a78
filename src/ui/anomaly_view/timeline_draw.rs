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

/// The lane layout for `lanes` lanes.
pub fn layout(lanes: usize) -> LaneLayout {
    LaneLayout {
        top: BUBBLE_ROW.0 + BUBBLE_ROW.1 + 4.0,
        lane_h: LANE_H,
        lanes,
    }
}

/// Canvas CSS height for `lanes` lanes.
pub fn css_height(lanes: usize) -> f64 {
    layout(lanes).bottom() + 6.0
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

/// Maps relative ms to CSS px for the view `(v0, v1)` on a canvas `w` px wide.
#[derive(Clone, Copy, Debug)]
pub struct XMap {
    v0: f64,
    scale: f64,
}

impl XMap {
    /// For view `(v0, v1)` and canvas width `w`.
    pub fn new(view: (f64, f64), w: f64) -> Self {
        let pw = (w - LABEL_W - RIGHT).max(1.0);
        XMap {
            v0: view.0,
            scale: pw / (view.1 - view.0).max(1e-12),
        }
    }
    /// x of time `t`.
    pub fn x(&self, t: f64) -> f64 {
        LABEL_W + (t - self.v0) * self.scale
    }
    /// Time at x.
    pub fn t(&self, x: f64) -> f64 {
        self.v0 + (x - LABEL_W) / self.scale
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

/// Draws `d` through view `view` (relative ms). Returns the number of boxes drawn.
pub fn draw(canvas: &HtmlCanvasElement, d: &TimelineDto, view: (f64, f64), marks: Marks) -> usize {
    let lay = layout(d.lanes.len());
    let h = css_height(d.lanes.len());
    let Some((ctx, w)) = context(canvas, h) else {
        return 0;
    };
    let xm = XMap::new(view, w);
    let right = w - RIGHT;
    ctx.clear_rect(0.0, 0.0, w, h);
    ctx.set_font("11px system-ui, sans-serif");
    // Lane backgrounds and labels (labels clipped to the gutter).
    ctx.save();
    ctx.begin_path();
    ctx.rect(0.0, 0.0, LABEL_W - 4.0, h);
    ctx.clip();
    for (i, lane) in d.lanes.iter().enumerate() {
        let y = lay.lane_top(i);
        ctx.set_fill_style_str(if i % 2 == 0 {
            "rgba(128,128,128,0.06)"
        } else {
            "rgba(128,128,128,0.0)"
        });
        ctx.fill_rect(0.0, y, w, LANE_H);
        ctx.set_fill_style_str(if lane.kind == LaneKind::Host {
            "#6c757d"
        } else {
            "#444"
        });
        let _ = ctx.fill_text(&lane.label, 6.0, y + LANE_H / 2.0 + 4.0);
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
        ctx.fill_rect(LABEL_W - 4.0, lay.lane_top(i), w - LABEL_W + 4.0, LANE_H);
    }
    ctx.save();
    ctx.begin_path();
    ctx.rect(LABEL_W, 0.0, right - LABEL_W, h);
    ctx.clip();
    // Steps: shading over every row, id in the step row.
    for (k, s) in d.steps.iter().enumerate() {
        let (x0, x1) = (
            xm.x(s.start_ms).max(LABEL_W - 1.0),
            xm.x(s.end_ms).min(right + 1.0),
        );
        if x1 < LABEL_W || x0 > right {
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
            let _ = ctx.fill_text(&s.step_id, x0.max(LABEL_W) + 4.0, STEP_ROW.0 + 13.0);
        }
    }
    // Bubbles: a band across the device lanes and a mark in the bubble row, by first label.
    for b in &d.bubbles {
        let (x0, x1) = (xm.x(b.start_ms), xm.x(b.end_ms));
        if x1 < LABEL_W || x0 > right {
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
        let bh = LANE_H - 6.0;
        let b = &lane.boxes;
        let mut last_style = u8::MAX;
        for j in 0..b.start_ms.len() {
            let (x0, x1) = (xm.x(b.start_ms[j]), xm.x(b.end_ms[j]));
            if x1 < LABEL_W || x0 > right {
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
    }
    if let Some((lane, s, e)) = marks.item {
        let y = lay.lane_top(lane as usize) + 1.0;
        ctx.set_stroke_style_str("#d6336c");
        ctx.set_line_width(2.0);
        ctx.stroke_rect(
            xm.x(s) - 1.0,
            y,
            (xm.x(e) - xm.x(s)).max(1.0) + 2.0,
            LANE_H - 2.0,
        );
    }
    ctx.restore();
    // Ruler.
    ctx.set_fill_style_str("rgba(255,255,255,0.0)");
    ctx.set_stroke_style_str("rgba(128,128,128,0.35)");
    ctx.set_line_width(1.0);
    ctx.set_fill_style_str("#666");
    for t in ticks(view.0, view.1, right - LABEL_W, 90.0) {
        let x = xm.x(t.t_ms).round() + 0.5;
        ctx.begin_path();
        ctx.move_to(x, RULER_H - 6.0);
        ctx.line_to(x, lay.bottom());
        ctx.stroke();
        let _ = ctx.fill_text(&t.label, x + 3.0, 12.0);
    }
    ctx.begin_path();
    ctx.move_to(LABEL_W, RULER_H - 0.5);
    ctx.line_to(right, RULER_H - 0.5);
    ctx.stroke();
    drawn
}
