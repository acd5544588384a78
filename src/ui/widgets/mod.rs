//! Reusable UI pieces: the pending and failed notes of every panel, the canvas chart of min/max series, the theme palette for canvases,
//! keyboard/wheel zoom and pan of a chart window (the virtual-scroll math is
//! `views::virtual_list`).
//! The steps and snapshot tabs reuse them for their timelines and tables.

pub mod chart;
pub mod note;
pub mod palette;
pub mod zoom;
