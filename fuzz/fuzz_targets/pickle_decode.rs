//! The pickle decoder (src/parse/pickle: opcodes, VM, memo, slab) and the snapshot schema
//! (schema.rs, fields.rs) that turns pickled dicts into the snapshot model.
//!
//! Input: the bytes of a snapshot pickle. Refused opcodes (GLOBAL, REDUCE, …) must stay
//! errors: no code is ever run.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proflens::parse::pickle::read_snapshot;
use proflens_fuzz::{go_on, render_problems};

fuzz_target!(|data: &[u8]| {
    let mut src = data;
    match read_snapshot(
        "snapshot.pickle",
        &mut src,
        Some(data.len() as u64),
        &mut go_on,
    ) {
        Ok(d) => {
            render_problems(&d.problems);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
