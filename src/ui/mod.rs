//! Wasm edge: leptos components only. They render what the worker
//! computed ([`crate::protocol`] payloads) and never parse: every number comes from the core.
//!
//! * [`app`]: `<App/>`, the landing page and the tab layout; [`tabs`]: the view registry.
//! * [`client`]: the worker pool and request routing.
//! * [`state`]: page signals.
//! * [`files`], [`sample`]: getting `File` handles in (input, drop, built-in sample).
//! * [`inventory`], [`problems`], [`memory_view`], [`anomaly_view`], [`compare_view`]: the tabs; [`widgets`]:
//!   canvas chart, palette, zoom/pan keys, virtual table.
//! * [`route`]: the view in the URL hash; [`recent`]: recently opened folder names;
//!   [`theme`]: light/dark; [`keys`], [`help`]: keyboard shortcuts and the `?` overlay;
//!   [`local_store`]: `localStorage`.

pub mod anomaly_view;
pub mod app;
pub mod client;
pub mod cluster_view;
pub mod comm_view;
pub mod compare_view;
pub mod files;
pub mod help;
pub mod inventory;
pub mod keys;
pub mod local_store;
pub mod memory_view;
pub mod problems;
pub mod recent;
pub mod route;
pub mod sample;
pub mod snapshot_view;
pub mod state;
pub mod tabs;
pub mod theme;
pub mod widgets;

/// Mounts the app on `<body>` (called by the `app` binary).
pub fn mount() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(app::App);
}
