//! Reusable UI pieces: the canvas chart of min/max series and the virtual-scroll math.
//! Issues 3 and 4 reuse them for their timelines and tables.

pub mod chart;
pub mod virtual_scroll;
