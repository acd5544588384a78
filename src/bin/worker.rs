//! Web Worker entry (wasm32): installs the message loop ([`proflens::worker::run`]).
//! Natively it only says how to run it.

#[cfg(target_arch = "wasm32")]
fn main() {
    proflens::worker::run();
}

/// JSPI mode (web/worker_loader.js): takes the next message's data ([`proflens::worker::accept`]).
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn proflens_worker_accept(data: wasm_bindgen::JsValue) {
    proflens::worker::accept(data);
}

/// JSPI mode: serves it; called through `WebAssembly.promising` ([`proflens::worker::handle`]).
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn proflens_worker_handle() {
    proflens::worker::handle();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("the worker runs in the browser: see README.md (scripts/dev.sh)");
}
