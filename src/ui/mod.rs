//! Wasm edge: leptos components only (house-style §8.9). They render what the worker
//! computed ([`crate::protocol`] payloads) and never parse: every number comes from the core.
//!
//! * [`app`]: `<App/>`, the landing page, the tab layout and the view registry.
//! * [`client`]: the worker pool and request routing.
//! * [`state`]: page signals.
//! * [`files`], [`sample`]: getting `File` handles in (input, drop, built-in sample).
//! * [`inventory`], [`problems`], [`memory_view`], [`anomaly_view`]: the tabs; [`widgets`]: canvas chart, virtual table.

pub mod anomaly_view;
pub mod app;
pub mod client;
pub mod files;
pub mod inventory;
pub mod memory_view;
pub mod problems;
pub mod sample;
pub mod state;
pub mod widgets;

/// Mounts the app on `<body>` (called by the `app` binary).
pub fn mount() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(app::App);
}
