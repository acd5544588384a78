//! The Ascend DB reader in the browser (docs/rules/ascend-db.md §1.2): SQLite built for
//! wasm32 (feature `db`), reading a real DB fixture through the worker's `FileOpener` over a
//! `File` (exact `Blob` slices, no whole-file copy), in a dedicated Web Worker of headless
//! Chromium, and the worker's `Session` analysing a dropped DB-only rank folder. Run by
//! wasm-bindgen-test-runner:
//! `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner cargo test --target
//! wasm32-unknown-unknown --features db --test wasm_db`.
#![cfg(all(target_arch = "wasm32", feature = "db"))]

use std::ops::ControlFlow;

use js_sys::{Array, Uint8Array};
use proflens::base::Problems;
use proflens::engine::session::{Collected, Session};
use proflens::model::memory_events::MemoryEventTable;
use proflens::model::strings::StringPool;
use proflens::parse::ascend_db::{memory, DbFile};
use proflens::protocol::{AnalysisKind, Envelope, FileMeta, Request, Response, Summary};
use proflens::worker::blob_reader::FileOpener;
use wasm_bindgen_test::*;
use web_sys::File;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

const RANK: &str = "db/level1/rank0_ascend_pt";
const DB: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
));
const ANALYSIS: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/analysis.db"
));
const INFO: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/db/level1/rank0_ascend_pt/profiler_info_0.json"
));

fn file(bytes: &[u8], name: &str) -> File {
    let parts = Array::new();
    parts.push(&Uint8Array::from(bytes));
    File::new_with_u8_array_sequence(&parts, name).unwrap()
}

fn drop_of() -> (Vec<FileMeta>, Vec<File>) {
    let files = [
        (format!("{RANK}/profiler_info_0.json"), INFO),
        (
            format!("{RANK}/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"),
            DB,
        ),
        (
            format!("{RANK}/ASCEND_PROFILER_OUTPUT/analysis.db"),
            ANALYSIS,
        ),
    ];
    let metas = files
        .iter()
        .map(|(p, b)| FileMeta {
            path: p.clone(),
            size: b.len() as u64,
        })
        .collect();
    let handles = files
        .iter()
        .map(|(p, b)| file(b, p.rsplit('/').next().unwrap()))
        .collect();
    (metas, handles)
}

#[wasm_bindgen_test]
fn sqlite_reads_a_wal_flagged_db_from_blob_slices() {
    // The L1r0 fixture is WAL-flagged (MindStudio Insight opened it).
    assert_eq!(&DB[18..20], &[2, 2]);
    let (metas, handles) = drop_of();
    let path = metas[1].path.clone();
    let opener = FileOpener::new(metas, handles, None);
    let f = DbFile::open(&opener, &path, DB.len() as u64).unwrap();
    let mut strings = StringPool::new();
    let mut events = MemoryEventTable::new();
    let mut problems = Problems::new();
    let st = memory::read(&f, &mut strings, &mut events, &mut problems, &mut || {
        ControlFlow::Continue(())
    });
    assert_eq!(st.rows, 184);
    assert!(problems.kept().is_empty(), "{:?}", problems.kept());
    assert!(f.bytes_read() <= DB.len() as u64);
}

#[wasm_bindgen_test]
fn the_session_analyses_a_dropped_db_only_rank() {
    let (metas, handles) = drop_of();
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
    assert_eq!(inv.ranks.len(), 1);
    let mut out = Collected::default();
    s.handle(
        Envelope {
            seq: 2,
            body: Request::run(AnalysisKind::Memory, vec![0]),
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
    assert_eq!(rows, vec![184]);
}
