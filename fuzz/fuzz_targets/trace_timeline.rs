//! The anomaly analysis' trace reader (src/parse/trace_json/timeline.rs): `X`/`B`/`E`/`M`
//! events into the host event table, step markers with and without a custom prefix.
//!
//! Input: the bytes of `trace_view.json`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proflens::parse::trace_json::timeline;
use proflens_fuzz::go_on;

fuzz_target!(|data: &[u8]| {
    for prefix in ["", "Step"] {
        match timeline::read(
            data,
            "trace_view.json",
            Some(data.len() as u64),
            prefix,
            &mut go_on,
        ) {
            Ok((_table, info)) => {
                assert!(info.skipped <= info.scan.events);
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
});
