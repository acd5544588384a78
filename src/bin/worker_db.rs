//! The Web Worker with the Ascend DB reader (wasm32, feature `db`): the same message loop as
//! `worker` ([`proflens::worker::run`]), built with SQLite, loaded only for drops that hold a
//! DB export.

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
    eprintln!("the DB worker runs in the browser: see README.md (scripts/dev.sh)");
}
