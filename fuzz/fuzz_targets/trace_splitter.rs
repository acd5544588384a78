//! `trace_view.json` splitter and key scanner (src/parse/trace_json/{splitter,scan}.rs).
//!
//! Input: byte 0 picks the read-chunk size (1–64 bytes, or 4 MiB), the rest is the file.
//! Checks beyond "no panic": the events and the outcome do not depend on the chunk size
//! (compared with one 4 MiB read), and every event that serde_json reads as an object is
//! also read by `scan::fields`; the indexed split (one strict pass that also records the
//! top-level members) hands out the same events, and its keys equal `scan::fields_dup`'s
//! (those of its `args` object `object::fields_fast`'s).
#![no_main]

use std::ops::ControlFlow;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use proflens::ingest::ChunkReader;
use proflens::parse::trace_json::object::fields_fast;
use proflens::parse::trace_json::scan::{as_str, decimal_text, fields, fields_dup, time_ns};
use proflens::parse::trace_json::{
    for_each_event, for_each_member_and_indexed_event, TraceScan,
};
use proflens_fuzz::{chunk_of, go_on};

type Outcome = (Vec<(Vec<u8>, u64)>, Result<TraceScan, String>);

fn split(file: &[u8], chunk: usize) -> Outcome {
    let mut rdr = ChunkReader::with_sizes(file, Some(file.len() as u64), chunk, 16 << 20);
    let name: Arc<str> = "trace_view.json".into();
    let mut events = Vec::new();
    let res = for_each_event(&mut rdr, &name, &mut go_on, &mut |ev, at| {
        events.push((ev.to_vec(), at));
        ControlFlow::Continue(())
    });
    // `bytes` is how far the reader got, which depends on the chunk size by design.
    let res = res
        .map(|s| TraceScan { bytes: 0, ..s })
        .map_err(|e| e.to_string());
    (events, res)
}

const KEYS: [&str; 8] = ["ph", "name", "cat", "ts", "dur", "pid", "tid", "args"];

/// The indexed split: the same events as [`split`], and each event's keys as `fields_dup`.
fn split_indexed(file: &[u8], chunk: usize) -> Outcome {
    let mut rdr = ChunkReader::with_sizes(file, Some(file.len() as u64), chunk, 16 << 20);
    let name: Arc<str> = "trace_view.json".into();
    let mut events = Vec::new();
    let res = for_each_member_and_indexed_event(
        &mut rdr,
        &name,
        &mut go_on,
        &mut |_, _, _| {},
        &mut |ev, at| {
            assert_eq!(ev.fields_dup(KEYS), fields_dup(ev.bytes(), KEYS));
            if let Some(([Some(args)], _)) = ev.fields_dup(["args"]) {
                assert_eq!(ev.args_fields(args, KEYS), fields_fast(args, KEYS));
            }
            events.push((ev.bytes().to_vec(), at));
            ControlFlow::Continue(())
        },
    );
    let res = res
        .map(|s| TraceScan { bytes: 0, ..s })
        .map_err(|e| e.to_string());
    (events, res)
}

fn scan_keys(ev: &[u8]) {
    assert_eq!(fields_fast(ev, KEYS), fields(ev, KEYS));
    let got = fields(ev, ["ph", "name", "cat", "ts", "dur", "pid", "tid", "args"]);
    if let Some(vals) = got {
        for v in vals.into_iter().flatten() {
            let _ = as_str(v);
            let _ = decimal_text(v);
            let _ = time_ns(v);
        }
    }
    if let Ok(serde_json::Value::Object(_)) = serde_json::from_slice::<serde_json::Value>(ev) {
        assert!(
            got.is_some(),
            "serde_json reads an object that scan::fields rejects"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&b, file)) = data.split_first() else {
        return;
    };
    let chunk = chunk_of(b);
    let small = split(file, chunk);
    assert_eq!(split_indexed(file, chunk), small, "the indexed split differs");
    for (ev, _) in &small.0 {
        scan_keys(ev);
    }
    if chunk != proflens::ingest::chunk_reader::DEFAULT_CHUNK {
        let whole = split(file, proflens::ingest::chunk_reader::DEFAULT_CHUNK);
        assert_eq!(small, whole, "chunk size {chunk} changes the split");
    }
});
