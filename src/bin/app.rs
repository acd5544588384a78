//! UI entry (wasm32): mounts the leptos app ([`proflens::ui::mount`]). Natively it only says
//! how to run it.

#[cfg(target_arch = "wasm32")]
fn main() {
    proflens::ui::mount();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("the UI runs in the browser: see README.md (scripts/dev.sh)");
}
