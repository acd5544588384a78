//! Theme colours for canvases: canvas drawing cannot use CSS variables directly, so a chart
//! reads them here at draw time (`getComputedStyle(<html>)`). Redraw when
//! [`crate::ui::theme::Theme::dark`] changes (track it in the drawing effect).
//!
//! Variables (web/style.css): `--chart-1` … `--chart-5` (series), `--chart-grid`,
//! `--chart-text`, `--chart-frame`, `--chart-peak`, `--chart-band`, `--panel`.

/// Colours of one draw.
#[derive(Clone, Debug)]
pub struct Palette {
    /// Series colours, in series order.
    pub series: Vec<String>,
    /// Grid lines.
    pub grid: String,
    /// Axis labels.
    pub text: String,
    /// Plot frame.
    pub frame: String,
    /// Peak marker.
    pub peak: String,
    /// Drag-selection band (translucent).
    pub band: String,
    /// Background of the panel the canvas sits on.
    pub background: String,
}

/// The value of the CSS custom property `name` (e.g. `"--chart-1"`) on `<html>`, trimmed;
/// `None` when unset.
pub fn css_var(name: &str) -> Option<String> {
    let w = web_sys::window()?;
    let root = w.document()?.document_element()?;
    let style = w.get_computed_style(&root).ok()??;
    let v = style.get_property_value(name).ok()?;
    let v = v.trim();
    (!v.is_empty()).then(|| v.to_string())
}

/// Reads the palette of the current theme (light fallbacks when a variable is missing).
pub fn palette() -> Palette {
    let var = |n: &str, fallback: &str| css_var(n).unwrap_or_else(|| fallback.to_string());
    Palette {
        series: super::chart::COLORS
            .iter()
            .enumerate()
            .map(|(i, c)| var(&format!("--chart-{}", i + 1), c))
            .collect(),
        grid: var("--chart-grid", "rgba(128,128,128,0.25)"),
        text: var("--chart-text", "#6b7280"),
        frame: var("--chart-frame", "#888"),
        peak: var("--chart-peak", "#d6336c"),
        band: var("--chart-band", "rgba(47,111,222,0.15)"),
        background: var("--panel", "#fff"),
    }
}

/// The CSS colour of series `i` for HTML swatches (`var(--chart-N)`, follows the theme).
pub fn series_css(i: usize) -> String {
    format!("var(--chart-{})", i % super::chart::COLORS.len() + 1)
}
