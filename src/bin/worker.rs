//! Web Worker entry (wasm32): installs the message loop ([`proflens::worker::run`]).
//! Natively it only says how to run it.

#[cfg(target_arch = "wasm32")]
fn main() {
    proflens::worker::run();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("the worker runs in the browser: see README.md (scripts/dev.sh)");
}
