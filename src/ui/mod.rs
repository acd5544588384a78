//! Wasm edge: leptos components only; they render what the worker computed.
