//! Browser tests of the File → worker streaming path (house-style §8.10 `wasm_worker.rs`),
//! run in a dedicated Web Worker of headless Chromium by wasm-bindgen-test-runner
//! (`scripts/test.sh`): `BlobReader` over a real `Blob` (FileReaderSync + Blob.slice, several
//! slices), and the worker's `Session` on real `File` objects of the built-in sample.
#![cfg(target_arch = "wasm32")]

use std::cell::RefCell;
use std::io::Read;
use std::rc::Rc;

use js_sys::{Array, Uint8Array};
use proflens::engine::session::{Collected, Session};
use proflens::protocol::{
    AnalysisKind, Envelope, FileMeta, ProgressDto, Request, Response, Summary,
};
use proflens::worker::blob_reader::{BlobReader, FileOpener, DIRECT_MIN_BYTES, SLICE_BYTES};
use wasm_bindgen_test::*;
use web_sys::{Blob, File};

wasm_bindgen_test_configure!(run_in_dedicated_worker);

fn blob_of(bytes: &[u8]) -> Blob {
    let parts = Array::new();
    parts.push(&Uint8Array::from(bytes));
    Blob::new_with_u8_array_sequence(&parts).unwrap()
}

#[wasm_bindgen_test]
fn blob_reader_streams_every_byte_across_slices_with_progress() {
    // 2.5 slices of a pattern whose bytes depend on their offset.
    let n = (SLICE_BYTES * 5 / 2) as usize;
    let data: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    let seen: Rc<RefCell<Vec<ProgressDto>>> = Rc::default();
    let sink = seen.clone();
    let mut r = BlobReader::new(
        blob_of(&data),
        3,
        Some(Rc::new(move |p| sink.borrow_mut().push(p))),
    )
    .unwrap();
    // Odd-sized reads, as a parser asking for "whatever fits" would do.
    let mut got = Vec::with_capacity(n);
    let mut buf = vec![0u8; 1_000_003];
    loop {
        let k = r.read(&mut buf).unwrap();
        if k == 0 {
            break;
        }
        got.extend_from_slice(&buf[..k]);
    }
    assert_eq!(got.len(), n);
    assert!(got == data, "bytes differ");
    let last = seen.borrow().last().cloned().unwrap();
    assert_eq!(
        (last.file, last.bytes_done, last.bytes_total),
        (3, n as u64, n as u64)
    );
}

#[wasm_bindgen_test]
fn blob_reader_from_an_offset_reads_only_the_rest_with_progress_from_the_start() {
    // `Opener::open_from` in the worker (a trace whose head the inventory kept): the bytes from
    // `start` on, progress in file offsets; an offset at or past the end reads nothing.
    let n = (SLICE_BYTES * 3 / 2) as usize;
    let data: Vec<u8> = (0..n).map(|i| (i % 241) as u8).collect();
    for start in [0, 1, 65_538, SLICE_BYTES as usize + 3, n, n + 10] {
        let seen: Rc<RefCell<Vec<ProgressDto>>> = Rc::default();
        let sink = seen.clone();
        let mut r = BlobReader::new_at(
            blob_of(&data),
            start as u64,
            2,
            Some(Rc::new(move |p| sink.borrow_mut().push(p))),
        )
        .unwrap();
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        let from = start.min(n);
        assert!(got == data[from..], "start {start}: {} bytes", got.len());
        let last = seen.borrow().last().cloned();
        if let Some(last) = last {
            assert_eq!((last.bytes_done, last.bytes_total), (n as u64, n as u64));
        }
    }
}

#[wasm_bindgen_test]
fn blob_reader_exact_slices_only_what_each_read_asks() {
    // `Opener::open_head` in the worker: no read-ahead, so what the inventory's sniff took is
    // all that was read. Reads of 1, 7 and 4,096 bytes, then the rest.
    let n = 70_000usize;
    let data: Vec<u8> = (0..n).map(|i| (i % 239) as u8).collect();
    let mut r = BlobReader::exact(blob_of(&data), 0, None).unwrap();
    let mut got = Vec::new();
    for want in [1usize, 7, 4096] {
        let mut buf = vec![0u8; want];
        assert_eq!(r.read(&mut buf).unwrap(), want);
        got.extend_from_slice(&buf);
    }
    r.read_to_end(&mut got).unwrap();
    assert!(got == data);
}

#[wasm_bindgen_test]
fn blob_reader_reads_large_requests_straight_into_the_callers_buffer() {
    // Reads of more than a slice (the first: capped at one whole slice), of 4 MiB + 7 (served
    // straight into `buf`, no intermediate copy) and small ones (from the reader's buffer),
    // interleaved, over 3.3 slices: every byte once, in order, and progress ends at the size.
    let n = (SLICE_BYTES * 33 / 10) as usize + 5;
    let data: Vec<u8> = (0..n).map(|i| (i % 253) as u8).collect();
    let seen: Rc<RefCell<Vec<ProgressDto>>> = Rc::default();
    let sink = seen.clone();
    let mut r = BlobReader::new(
        blob_of(&data),
        1,
        Some(Rc::new(move |p| sink.borrow_mut().push(p))),
    )
    .unwrap();
    let sizes = [
        (SLICE_BYTES as usize) * 2,
        (4 << 20) + 7,
        100,
        3 << 20,
        DIRECT_MIN_BYTES,
        DIRECT_MIN_BYTES - 1,
    ];
    let mut got = Vec::with_capacity(n);
    let mut buf = vec![0u8; (SLICE_BYTES as usize) * 2];
    let mut direct_max = 0;
    for i in 0.. {
        let want = sizes[i % sizes.len()];
        let k = r.read(&mut buf[..want]).unwrap();
        if k == 0 {
            break;
        }
        assert!(k <= want && k as u64 <= SLICE_BYTES, "read {k} of {want}");
        direct_max = direct_max.max(k);
        got.extend_from_slice(&buf[..k]);
    }
    assert_eq!(got.len(), n);
    assert!(got == data, "bytes differ");
    assert_eq!(
        direct_max as u64, SLICE_BYTES,
        "a 16 MiB read gets one whole slice"
    );
    let last = seen.borrow().last().cloned().unwrap();
    assert_eq!((last.bytes_done, last.bytes_total), (n as u64, n as u64));
}

#[wasm_bindgen_test]
fn session_analyses_file_objects_of_the_sample() {
    let files = proflens::ui::files::files_from_bytes(proflens::ui::sample::SAMPLE).unwrap();
    let metas: Vec<FileMeta> = files
        .iter()
        .map(|(p, f)| FileMeta {
            path: p.clone(),
            size: f.size() as u64,
        })
        .collect();
    let handles: Vec<File> = files.into_iter().map(|(_, f)| f).collect();
    let opener = FileOpener::new(metas.clone(), handles, None);
    let mut s = Session::new();
    let mut out = Collected::default();
    s.handle(
        Envelope {
            seq: 1,
            body: Request::Open { files: metas },
        },
        &opener,
        &mut out,
    );
    let Some((_, Response::Inventory(inv))) = out.out.first() else {
        panic!("no inventory: {:?}", out.out);
    };
    assert_eq!(inv.ranks.len(), 2);
    let mut out = Collected::default();
    s.handle(
        Envelope {
            seq: 2,
            body: Request::run(AnalysisKind::Memory, vec![0, 1]),
        },
        &opener,
        &mut out,
    );
    let rows: Vec<u64> = out
        .out
        .iter()
        .filter_map(|(_, r)| match r {
            Response::Done {
                summary: Summary::Memory(d),
                ..
            } => Some(d.rows),
            _ => None,
        })
        .collect();
    // make_sample.py writes 8 ops × 3 steps per rank (7 of the 8 carry a stack) and one
    // cann:: workspace row per step.
    assert_eq!(rows, vec![27, 27]);
    let with_stack = out.out.iter().find_map(|(_, r)| match r {
        Response::Done {
            summary: Summary::Memory(d),
            ..
        } => Some(d.rows - d.matches.none),
        _ => None,
    });
    assert_eq!(with_stack, Some(21));
}
