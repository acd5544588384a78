//! The page worker's snapshot path (decode, then the analysis a drop runs) compiled to wasm32
//! and run in V8 by node, outside the page: a decoder change measured and profiled in about a
//! minute and a half of build instead of a release page build.
//!
//! ```text
//! cargo rustc --profile wasm-worker --target wasm32-unknown-unknown --example wasm_snap -- \
//!   -C link-arg=--export=buf -C link-arg=--export=run
//! node scripts/wasm_snap.mjs target/wasm32-unknown-unknown/wasm-worker/examples/wasm_snap.wasm \
//!   DIR/snapshot.pickle [RUNS] [CHUNK] [MODE]
//! ```
//!
//! `node --cpu-prof` on the same command gives a profile with the wasm functions named (the
//! example keeps its name section). Natively the exports are plain functions and `main` does
//! nothing.

use std::cell::RefCell;
use std::ops::ControlFlow;

use proflens::engine::read::snapshot::{analyse, SnapshotOptions};
use proflens::ingest::InputFile;
use proflens::parse::pickle::read_snapshot;

thread_local! {
    /// The file's bytes, written by the host into the buffer [`buf`] returned.
    static BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A buffer of `n` bytes for the file; returns its address in the module's memory.
#[no_mangle]
pub extern "C" fn buf(n: usize) -> *mut u8 {
    BUF.with(|b| {
        *b.borrow_mut() = vec![0; n];
        b.borrow_mut().as_mut_ptr()
    })
}

/// Decodes the buffer's pickle read in `chunk`-byte pieces (0: whole), then (`mode` 0) runs
/// the drop's analysis with the settings panel's defaults; `mode` 1 decodes only. Returns the
/// number of trace entries.
#[no_mangle]
pub extern "C" fn run(chunk: usize, mode: u32) -> u32 {
    BUF.with(|b| {
        let bytes = b.borrow();
        let mut src = Chunked(&bytes, if chunk == 0 { usize::MAX } else { chunk });
        let d = read_snapshot("snapshot", &mut src, Some(bytes.len() as u64), &mut |_| {
            ControlFlow::Continue(())
        })
        .expect("decode");
        let entries: usize = d.snapshot.devices.iter().map(|t| t.entries.len()).sum();
        if mode == 0 {
            let file = InputFile {
                path: "snapshot".into(),
                size: bytes.len() as u64,
            };
            let opts = SnapshotOptions::spec_defaults();
            std::hint::black_box(analyse(&file, d.snapshot, d.problems, &opts));
        }
        entries as u32
    })
}

/// `Read` over a byte slice in pieces of at most `.1` bytes (the worker's reader hands the
/// decoder slices of the file).
struct Chunked<'a>(&'a [u8], usize);

impl std::io::Read for Chunked<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = out.len().min(self.1).min(self.0.len());
        out[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

fn main() {}
