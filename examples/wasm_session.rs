//! The page worker's whole path for one drop (the `Session`'s `Open`, then `Run` of every
//! analysis over every target, as the worker runs it) compiled to wasm32 and run in V8 by
//! node, outside the page: a change to the read or the analyses measured in wasm, where the
//! page's users run it, without a release page build and without the browser's own noise
//! (its reads, the app, the other workers).
//!
//! ```text
//! cargo rustc --profile wasm-worker --target wasm32-unknown-unknown --example wasm_session -- \
//!   -C link-arg=--export=path -C link-arg=--export=file -C link-arg=--export=run \
//!   -C link-arg=--export=failed -C link-arg=--export=failed_len
//! node scripts/wasm_session.mjs \
//!   target/wasm32-unknown-unknown/wasm-worker/examples/wasm_session.wasm DIR [RUNS]
//! ```
//!
//! The host writes each file's path into the buffer [`path`] returns and its bytes into the
//! one [`file`] returns, then calls [`run`]. `node --cpu-prof` on the same command gives a
//! profile with the wasm functions named. Natively the exports are plain functions and `main`
//! does nothing.

use std::cell::RefCell;

use proflens::ingest::MemOpener;
use proflens::protocol::{AnalysisKind, FileMeta};

#[path = "common/drop.rs"]
mod drop;

thread_local! {
    /// The dropped files: their paths and bytes.
    static FILES: RefCell<Vec<(String, Vec<u8>)>> = const { RefCell::new(Vec::new()) };
    /// The next file's path, as the host wrote it.
    static PATH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The messages of the targets that failed in the last run, one per line.
    static FAILED: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Address of the last run's failure messages (UTF-8, one per line); their length is
/// [`failed_len`].
#[no_mangle]
pub extern "C" fn failed() -> *const u8 {
    FAILED.with(|f| f.borrow().as_ptr())
}

/// Length in bytes of the text [`failed`] points at.
#[no_mangle]
pub extern "C" fn failed_len() -> usize {
    FAILED.with(|f| f.borrow().len())
}

/// A buffer of `n` bytes for the next file's path (UTF-8, relative, `/`-separated).
#[no_mangle]
pub extern "C" fn path(n: usize) -> *mut u8 {
    PATH.with(|p| {
        *p.borrow_mut() = vec![0; n];
        p.borrow_mut().as_mut_ptr()
    })
}

/// A buffer of `n` bytes for the file whose path was written into [`path`]'s buffer;
/// returns its address in the module's memory.
#[no_mangle]
pub extern "C" fn file(n: usize) -> *mut u8 {
    let name = PATH.with(|p| String::from_utf8_lossy(&p.borrow()).into_owned());
    FILES.with(|f| {
        let mut f = f.borrow_mut();
        f.push((name, vec![0; n]));
        f.last_mut()
            .map_or(std::ptr::null_mut(), |(_, b)| b.as_mut_ptr())
    })
}

/// Opens the written files and runs every analysis over every target, as a drop does; the
/// files are let go after. Returns `done × 1000 + failed` (targets analysed, targets failed).
#[no_mangle]
pub extern "C" fn run() -> u32 {
    let files = FILES.with(|f| std::mem::take(&mut *f.borrow_mut()));
    let metas: Vec<FileMeta> = files
        .iter()
        .map(|(p, b)| FileMeta {
            path: p.clone(),
            size: b.len() as u64,
        })
        .collect();
    let mut opener = MemOpener::new();
    for (p, b) in files {
        opener.add(p, b);
    }
    let sink = drop::run(&opener, metas, AnalysisKind::ALL.to_vec());
    FAILED.with(|f| *f.borrow_mut() = sink.failed.join("\n"));
    sink.done * 1000 + sink.failed.len() as u32
}

fn main() {}
