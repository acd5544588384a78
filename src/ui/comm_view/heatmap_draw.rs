//! Drawing the link matrix heatmap and naming its cells (the hover and the keyboard's cell):
//! pure functions of one window ([`CommMatrixDto`]) and the canvas.

use crate::protocol::comm::{CommMatrixDto, CommMetric};
use crate::ui::widgets::chart::context;
use crate::ui::widgets::palette::palette;
use crate::views::comm_table::{block_ranks, cell_px, labels_shown};
use crate::views::format;
use crate::views::heatmap::ramp;

use super::heatmap::{MARGIN, PLOT_MAX};

/// The unit of `m`'s values.
pub(super) fn unit(m: CommMetric) -> &'static str {
    match m {
        CommMetric::Bandwidth => "GB/s",
        CommMetric::Size => "MB",
        CommMetric::Time => "ms",
    }
}

/// The value a block is coloured by: its worst link, so a slow link is never averaged away
/// (the lowest bandwidth, the longest time; sizes: the mean). One link: its value.
pub(super) fn shade(m: &CommMatrixDto, i: usize, metric: CommMetric) -> f64 {
    match metric {
        _ if m.block == 1 => m.mean[i],
        CommMetric::Bandwidth => m.min[i],
        CommMetric::Time => m.max[i],
        CommMetric::Size => m.mean[i],
    }
}

/// A cell's value: 4 decimals (MindStudio Insight's `ROUND(x, 4)`), 6 below 0.01 so a
/// small size is not shown as 0.0001.
pub(super) fn value_text(v: f64) -> String {
    if v != 0.0 && v.abs() < 0.01 {
        format::fixed(v, 6)
    } else {
        format::fixed(v, 4)
    }
}

/// The hover of the keyboard's cell `(col, row)` of `m` on a plot `w` px wide: its centre and
/// its text.
pub(super) fn cursor_hover(
    m: &CommMatrixDto,
    col: u32,
    row: u32,
    w: f64,
    metric: CommMetric,
) -> (f64, f64, String) {
    let cell = cell_px(m, w, w);
    let (x, y) = (
        MARGIN.0 + (col as f64 + 0.5) * cell,
        MARGIN.1 + (row as f64 + 0.5) * cell,
    );
    (x, y, describe(m, col, row, metric))
}

/// The plot's side for a canvas `w` px wide.
pub(super) fn plot_side(w: f64) -> f64 {
    (w - MARGIN.0 - 8.0).clamp(40.0, PLOT_MAX)
}

/// The hover text of block `(col, row)`.
pub(super) fn describe(m: &CommMatrixDto, col: u32, row: u32, metric: CommMetric) -> String {
    let i = (row * m.cols + col) as usize;
    let u = unit(metric);
    let (s, d) = (block_ranks(m, m.x0, col), block_ranks(m, m.y0, row));
    let range = |r: Option<(i64, i64)>| match r {
        Some((a, b)) if a == b => a.to_string(),
        Some((a, b)) => format!("{a}–{b}"),
        None => "?".into(),
    };
    let mut t = format!("rank {} → rank {}", range(s), range(d));
    if m.count[i] == 0 {
        t.push_str(" · no link");
    } else if m.block == 1 {
        if let Some((size, time, bw, tr)) = m.detail.get(i) {
            t.push_str(&format!(
                " · {tr} · size (MB) {} · time (ms) {} · bandwidth (GB/s) {}",
                format::fixed(*size, 6),
                format::fixed(*time, 5),
                format::fixed(*bw, 4)
            ));
        }
    } else {
        t.push_str(&format!(
            " · {} links · {u}: mean {} · min {} · max {}",
            m.count[i],
            format::fixed(m.mean[i], 4),
            format::fixed(m.min[i], 4),
            format::fixed(m.max[i], 4)
        ));
    }
    if m.recovered[i] > 0 {
        t.push_str(&format!(
            " · {} recovered from parallel_group_info",
            m.recovered[i]
        ));
    }
    if m.missing_cell[i] {
        t.push_str(" · a rank missing from the input");
    }
    t
}

/// Draws window `m` on `canvas`, with the keyboard's cell `at` (column, row) outlined.
pub(super) fn draw(
    canvas: &web_sys::HtmlCanvasElement,
    m: &CommMatrixDto,
    metric: CommMetric,
    at: Option<(u32, u32)>,
) {
    let Some((ctx, w, h)) = context(canvas) else {
        return;
    };
    let pal = palette();
    ctx.clear_rect(0.0, 0.0, w, h);
    let side = plot_side(w);
    let cell = cell_px(m, side, side);
    let (ml, mt, _) = MARGIN;
    let (lo, hi) = m.scale;
    let frac = |v: f64| {
        if hi > lo {
            ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
        } else {
            0.5
        }
    };
    let labels = labels_shown(m);
    ctx.set_font("11px system-ui, sans-serif");
    ctx.set_text_align("center");
    ctx.set_text_baseline("middle");
    for r in 0..m.rows {
        for c in 0..m.cols {
            let i = (r * m.cols + c) as usize;
            let (x, y) = (ml + c as f64 * cell, mt + r as f64 * cell);
            if m.missing_cell[i] {
                ctx.set_fill_style_str(&pal.grid);
                ctx.fill_rect(x, y, cell, cell);
                ctx.set_stroke_style_str(&pal.frame);
                ctx.save();
                ctx.begin_path();
                ctx.rect(x, y, cell, cell);
                ctx.clip();
                ctx.begin_path();
                let mut k = -cell;
                while k < cell {
                    ctx.move_to(x + k, y + cell);
                    ctx.line_to(x + k + cell, y);
                    k += 5.0;
                }
                ctx.stroke();
                ctx.restore();
            }
            if m.count[i] == 0 {
                continue;
            }
            let [rr, gg, bb] = ramp(frac(shade(m, i, metric)));
            ctx.set_fill_style_str(&format!("rgb({rr},{gg},{bb})"));
            let gap = if cell >= 6.0 { 1.0 } else { 0.0 };
            ctx.fill_rect(x, y, cell - gap, cell - gap);
            if m.recovered[i] > 0 && cell >= 4.0 {
                ctx.set_stroke_style_str(&pal.peak);
                ctx.set_line_width(if cell >= 12.0 { 2.0 } else { 1.0 });
                let _ = ctx.set_line_dash(&js_sys::Array::of2(&4.0.into(), &3.0.into()));
                ctx.stroke_rect(x + 1.5, y + 1.5, cell - 4.0, cell - 4.0);
                let _ = ctx.set_line_dash(&js_sys::Array::new());
                ctx.set_line_width(1.0);
            }
            if labels && cell >= 28.0 {
                let light = 0.299 * rr as f64 + 0.587 * gg as f64 + 0.114 * bb as f64 > 140.0;
                ctx.set_fill_style_str(if light { "#111" } else { "#fff" });
                let _ = ctx.fill_text(&value_text(m.mean[i]), x + cell / 2.0, y + cell / 2.0);
            }
        }
    }
    // the keyboard's cell: a frame in the text colour, inside the cell
    if let Some((c, r)) = at.filter(|&(c, r)| c < m.cols && r < m.rows) {
        ctx.set_stroke_style_str(&pal.text);
        ctx.set_line_width(2.0);
        let inset = (cell / 8.0).min(3.0);
        ctx.stroke_rect(
            ml + c as f64 * cell + inset,
            mt + r as f64 * cell + inset,
            (cell - 2.0 * inset - 1.0).max(1.0),
            (cell - 2.0 * inset - 1.0).max(1.0),
        );
        ctx.set_line_width(1.0);
    }
    // axes: every rank when few are shown, else every few blocks' first rank; a rank missing
    // from the input is marked (its links, recovered from another rank's file, still show)
    let every = ((28.0 / cell.max(1e-9)).ceil() as u32).max(1);
    let missing = |start: u32, k: u32| {
        m.missing
            .iter()
            .any(|&p| p >= start + k * m.block && p < start + (k + 1) * m.block)
    };
    let label = |start: u32, k: u32| {
        let (a, _) = block_ranks(m, start, k)?;
        Some(match (m.block == 1, missing(start, k)) {
            (true, true) => (format!("{a} missing"), true),
            (_, miss) => (a.to_string(), miss),
        })
    };
    for k in (0..m.cols).step_by(every as usize) {
        if let Some((t, miss)) = label(m.x0, k) {
            ctx.set_fill_style_str(if miss { &pal.peak } else { &pal.text });
            let _ = ctx.fill_text(
                &t,
                ml + (k as f64 + 0.5) * cell,
                mt + m.rows as f64 * cell + 10.0,
            );
        }
    }
    ctx.set_text_align("right");
    for k in (0..m.rows).step_by(every as usize) {
        if let Some((t, miss)) = label(m.y0, k) {
            ctx.set_fill_style_str(if miss { &pal.peak } else { &pal.text });
            let _ = ctx.fill_text(&t, ml - 6.0, mt + (k as f64 + 0.5) * cell);
        }
    }
    ctx.set_fill_style_str(&pal.text);
    ctx.set_text_align("center");
    let _ = ctx.fill_text(
        &format!(
            "source rank →   (colour: {} {})",
            match metric {
                CommMetric::Bandwidth => "bandwidth",
                CommMetric::Size => "size",
                CommMetric::Time => "time",
            },
            unit(metric)
        ),
        ml + m.cols as f64 * cell / 2.0,
        mt + m.rows as f64 * cell + 26.0,
    );
    let _ = ctx.save();
    let _ = ctx.translate(12.0, mt + m.rows as f64 * cell / 2.0);
    let _ = ctx.rotate(-std::f64::consts::FRAC_PI_2);
    let _ = ctx.fill_text("destination rank →", 0.0, 0.0);
    ctx.restore();
    let _ = h;
}
