//! Every bad input gets a clear error or a counted problem, never a panic
//! (torch-snapshot.md §5.2, §5.4).

mod snapshot_common;

use proflens::parse::pickle::writer::PickleWriter;
use proflens::parse::pickle::{Decoded, PickleError, PickleErrorKind};
use snapshot_common::{decode_bytes, fixture_dir, snapshot_with, Trickle};

fn err(bytes: &[u8]) -> PickleError {
    match decode_bytes("bad.pickle", bytes) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

fn ok(bytes: &[u8]) -> Decoded {
    decode_bytes("x.pickle", bytes).unwrap_or_else(|e| panic!("{e}"))
}

fn entry(w: &mut PickleWriter<Vec<u8>>, action: &str, addr: i128, size: i128) {
    w.dict().unwrap();
    w.mark().unwrap();
    w.str("action").unwrap();
    w.str(action).unwrap();
    w.str("addr").unwrap();
    w.int(addr).unwrap();
    w.str("size").unwrap();
    w.int(size).unwrap();
    w.str("stream").unwrap();
    w.int(0).unwrap();
    w.setitems().unwrap();
}

#[test]
fn refused_opcodes_name_the_opcode_and_offset() {
    for (bytes, name) in [
        (&b"\x80\x04cos\nsystem\n"[..], "GLOBAL"),
        (&b"\x80\x04\x93"[..], "STACK_GLOBAL"),
        (&b"\x80\x04R"[..], "REDUCE"),
        (&b"\x80\x04b"[..], "BUILD"),
        (&b"\x80\x04i"[..], "INST"),
        (&b"\x80\x04o"[..], "OBJ"),
        (&b"\x80\x04\x81"[..], "NEWOBJ"),
        (&b"\x80\x04\x92"[..], "NEWOBJ_EX"),
        (&b"\x80\x04\x82\x01"[..], "EXT1"),
        (&b"\x80\x04P"[..], "PERSID"),
        (&b"\x80\x04Q"[..], "BINPERSID"),
        (&b"\x80\x05\x96"[..], "BYTEARRAY8"),
        (&b"\x80\x05\x97"[..], "NEXT_BUFFER"),
    ] {
        let e = err(bytes);
        assert_eq!(e.kind, PickleErrorKind::Refused { opcode: name });
        assert_eq!(e.offset(), 2);
        let msg = e.to_string();
        assert!(msg.contains(&format!("({name} at byte 2)")), "{msg}");
        assert!(msg.contains("never executes code"), "{msg}");
    }
    // A refused opcode deep inside a real snapshot stops decoding at its offset.
    let mut b = snapshot_with(|w| entry(w, "alloc", 4096, 512));
    let at = b.len() - 3;
    b.insert(at, b'R');
    let e = err(&b);
    assert_eq!(
        (e.kind.clone(), e.offset()),
        (PickleErrorKind::Refused { opcode: "REDUCE" }, at as u64)
    );
}

#[test]
fn unsupported_and_protocol_errors() {
    let e = err(b"\x80\x04\xff");
    assert_eq!(
        e.to_string(),
        "bad.pickle: Unsupported pickle instruction 0xff at byte 2."
    );
    let e = err(b"\x80\x04I1\n.");
    assert_eq!(e.kind, PickleErrorKind::Unsupported { byte: b'I' });
    let e = err(b"\x80\x06N.");
    assert!(e
        .to_string()
        .contains("Pickle protocol 6 is newer than this version of proflens supports (2–5)."));
}

#[test]
fn wrong_file_types() {
    for (bytes, what) in [
        (&b"\x1f\x8b\x08\x00"[..], "gzip"),
        (&b"PK\x03\x04rest"[..], "zip archive"),
        (&b"<html>"[..], "HTML"),
        (&b""[..], "empty"),
        (&b"hello"[..], "0x68"),
    ] {
        let e = err(bytes);
        assert!(matches!(e.kind, PickleErrorKind::WrongFileType { .. }));
        assert!(e.to_string().contains(what), "{e}");
    }
    // JSON is no longer a wrong file type: the snapshot's JSON form (torch-snapshot.md §2.6).
    let d = ok(b"  {\"segments\": []}");
    assert_eq!(d.snapshot.top_keys, ["segments"]);
}

#[test]
fn truncated_at_every_cut_of_a_real_file_is_a_clear_error() {
    let name = "jogregoire_How-Diffusion-Models-Work__my_snapshot.pickle";
    let bytes = std::fs::read(fixture_dir().join(name)).unwrap();
    for cut in (2..bytes.len() - 1).step_by(3) {
        let e = err(&bytes[..cut]);
        match e.kind {
            PickleErrorKind::Truncated { total } => {
                assert_eq!(total, cut as u64);
                assert!(e.offset() <= cut as u64);
                assert!(
                    e.to_string()
                        .contains(&format!("of {cut}). It may have been cut off")),
                    "{e}"
                );
            }
            other => panic!("cut {cut}: {other:?}"),
        }
    }
}

#[test]
fn corrupted_bytes_never_panic() {
    let name = "shreyansh26_MLSys-Experiments__model_memory_usage_profile_grad.pkl";
    let bytes = std::fs::read(fixture_dir().join(name)).unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..400 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut b = bytes.clone();
        let i = 2 + (seed as usize) % (b.len() - 2);
        b[i] = (seed >> 32) as u8;
        // Either decodes (possibly with problems) or fails cleanly.
        let _ = decode_bytes(name, &b);
    }
}

#[test]
fn trailing_nul_padding_after_stop_is_ignored() {
    let name = "shreyansh26_MLSys-Experiments__model_memory_usage_profile_grad.pkl";
    let mut bytes = std::fs::read(fixture_dir().join(name)).unwrap();
    bytes.extend_from_slice(&[0, 0, 0]);
    assert_eq!(ok(&bytes).snapshot.devices[0].entries.len(), 33);
}

#[test]
fn not_a_snapshot() {
    let mut w = PickleWriter::new(Vec::new(), 4).unwrap();
    w.dict().unwrap();
    w.str("weights").unwrap();
    w.int(1).unwrap();
    w.setitem().unwrap();
    let e = err(&w.stop().unwrap());
    assert_eq!(
        e.to_string(),
        "bad.pickle: This pickle does not look like a PyTorch memory snapshot (no \"segments\" or \"device_traces\"). Top-level type: dict."
    );
    let mut w = PickleWriter::new(Vec::new(), 4).unwrap();
    w.int(7).unwrap();
    assert!(err(&w.stop().unwrap())
        .to_string()
        .ends_with("Top-level type: int."));
    let mut w = PickleWriter::new(Vec::new(), 4).unwrap();
    w.list().unwrap();
    w.int(7).unwrap();
    w.append().unwrap();
    assert!(err(&w.stop().unwrap())
        .to_string()
        .ends_with("Top-level type: list."));
}

/// Chrome traces are not snapshots: a JSON list of events (a C profiler's `B`/`E` events,
/// the Chrome trace's array form) was read as a list of 2 segments of 0 bytes with no error
/// (exit 0); a PyTorch profiler trace (an object with `traceEvents`) names the command that
/// reads it.
#[test]
fn chrome_traces_are_not_snapshots() {
    let list = br#"[
{"name": "main", "ph": "B", "ts": 343, "pid": 1, "tid": 1},
{"name": "main", "ph": "E", "ts": 900, "pid": 1, "tid": 1}
]"#;
    let e = match decode_bytes("trace.json", list) {
        Ok(d) => panic!("read as {} segments", d.snapshot.segments.len()),
        Err(e) => e,
    };
    assert_eq!(
        e.to_string(),
        "trace.json: This JSON file does not look like a PyTorch memory snapshot (no \"segments\" \
         or \"device_traces\"). Top-level type: array."
    );
    let kineto = br#"{"schemaVersion": 1, "traceEvents": [
{"name": "thread_name", "ph": "M", "ts": 0, "pid": 9, "tid": 9, "args": {"name": "thread 9"}}
], "traceName": "w.pt.trace.json"}"#;
    let e = match decode_bytes("w.pt.trace.json", kineto) {
        Ok(_) => panic!("read as a snapshot"),
        Err(e) => e,
    };
    assert_eq!(
        e.to_string(),
        "w.pt.trace.json: This JSON file does not look like a PyTorch memory snapshot (no \
         \"segments\" or \"device_traces\"). Top-level type: object. It is a Chrome trace (it has \
         \"traceEvents\"): a PyTorch profiler trace is read by `proflens anomaly` or `proflens \
         analyze`."
    );
}

#[test]
fn zero_entry_trace_is_usable_with_a_warning() {
    let d = ok(&snapshot_with(|_| {}));
    assert_eq!(d.snapshot.devices.len(), 1);
    assert!(d.snapshot.devices[0].entries.is_empty());
}

#[test]
fn bad_entries_are_skipped_and_counted() {
    let b = snapshot_with(|w| {
        w.mark().unwrap();
        entry(w, "alloc", 4096, 512);
        entry(w, "alloc", 8192, -5); // negative size
        entry(w, "free_completed", 1 << 70, 512); // address wider than u64
        w.dict().unwrap(); // action not a string
        w.str("action").unwrap();
        w.int(3).unwrap();
        w.setitem().unwrap();
        entry(w, "free_completed", 4096, 512);
        w.appends().unwrap();
        // close the list with a no-op: the helper's APPEND adds the list to device_traces
    });
    let d = ok(&b);
    let dev = &d.snapshot.devices[0];
    assert_eq!(dev.entries.len(), 2);
    assert_eq!(dev.bad_entries, 3);
    let msgs: Vec<&str> = d
        .problems
        .kept()
        .iter()
        .filter(|p| p.code == "SNAP-ENTRY")
        .map(|p| p.message.as_str())
        .collect();
    assert_eq!(msgs.len(), 3);
    assert!(msgs[0].contains("`size` is -5, not ≥ 0"), "{msgs:?}");
    assert!(
        msgs[1].contains("`addr` is 1180591620717411303424, not ≥ 0"),
        "{msgs:?}"
    );
    assert!(msgs[2].contains("`action` is not a string"), "{msgs:?}");
}

#[test]
fn reference_to_a_stored_trace_entry_is_an_error() {
    let b = snapshot_with(|w| {
        w.mark().unwrap();
        entry(w, "alloc", 4096, 512); // memo 4
        w.appends().unwrap();
        w.get(4).unwrap();
        w.raw(b"0").unwrap(); // POP
    });
    let e = err(&b);
    assert!(
        e.to_string()
            .contains("unexpected reference to a trace entry"),
        "{e}"
    );
}

#[test]
fn chunk_boundaries_never_change_results() {
    for name in [
        "cranberrii_ftcourse__memory_snapshot.pickle",
        "Yiyi-philosophy_LLM-inference__1.3b_snapshot.pickle",
    ] {
        let bytes = std::fs::read(fixture_dir().join(name)).unwrap();
        let whole = ok(&bytes).snapshot;
        for n in [1usize, 7, 4093] {
            let mut src = Trickle { data: &bytes, n };
            let d = proflens::parse::pickle::read_snapshot(
                name,
                &mut src,
                Some(bytes.len() as u64),
                &mut |_| std::ops::ControlFlow::Continue(()),
            )
            .unwrap();
            let s = d.snapshot;
            assert_eq!(s.devices.len(), whole.devices.len());
            for (a, b) in s.devices.iter().zip(&whole.devices) {
                assert_eq!(a.entries.action(), b.entries.action(), "{name} {n}");
                assert_eq!(a.entries.addr(), b.entries.addr());
                assert_eq!(a.entries.size(), b.entries.size());
                assert_eq!(a.entries.stack(), b.entries.stack());
            }
            assert_eq!(s.segments, whole.segments);
            assert_eq!(s.blocks, whole.blocks);
            assert_eq!(s.opcode_histogram, whole.opcode_histogram);
        }
    }
}

#[test]
fn cancel_stops_decoding() {
    let name = "cranberrii_ftcourse__memory_snapshot.pickle";
    let bytes = std::fs::read(fixture_dir().join(name)).unwrap();
    let mut src = Trickle {
        data: &bytes,
        n: 65536,
    };
    let mut calls = 0;
    let r = proflens::parse::pickle::read_snapshot(name, &mut src, None, &mut |_| {
        calls += 1;
        if calls > 2 {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    });
    assert_eq!(r.err().map(|e| e.kind), Some(PickleErrorKind::Cancelled));
}
