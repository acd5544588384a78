//! Reusable UI pieces: the canvas chart of min/max series, the theme palette for canvases,
//! keyboard/wheel zoom and pan of a chart window, and the virtual-scroll math.
//! Issues 3 and 4 reuse them for their timelines and tables.

pub mod chart;
pub mod palette;
pub mod virtual_scroll;
pub mod zoom;
