//! Analyses of one decoded memory snapshot (torch-snapshot.md §7–§8).
//!
//! Data flow per device: [`lifetimes::build`] (one forward pass, §7.2) →
//! [`curves::build`] (§7.3) → [`peaks`] (§7.4) → [`live::live_sets`] at all
//! reported points in one pass (§7.6) → [`attribution`] (§7.5, §7.7) and
//! [`quality`] (leaks, delayed frees, warnings). [`device::analyze`] runs the
//! whole chain; [`reference`] computes the golden-value quantities of §8.

pub mod allocator;
pub mod attribution;
pub mod axis;
pub mod curves;
pub mod device;
pub mod frame_filter;
pub mod labels;
pub mod lifetimes;
pub mod links;
pub mod live;
pub mod peaks;
pub mod quality;
pub mod reference;
