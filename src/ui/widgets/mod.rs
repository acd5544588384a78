//! Reusable UI pieces: the canvas chart of min/max series, the theme palette for canvases,
//! keyboard/wheel zoom and pan of a chart window (the virtual-scroll math is
//! `views::virtual_list`).
//! The steps and snapshot tabs reuse them for their timelines and tables.

pub mod chart;
pub mod palette;
pub mod zoom;
