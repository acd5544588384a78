//! Analyses of one decoded memory snapshot (torch-snapshot.md §7–§8).
//!
//! * [`reference`]: the golden-value quantities of §8 (`in_window_replay`, `memoryviz_like`).
pub mod reference;
