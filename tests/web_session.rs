//! The worker's request handler (`engine::session::Session`) driven natively, as the worker
//! drives it in the browser: `Open` with the file list, then `Run` and the view queries,
//! on the real msinsight level1 fixture through the fs opener.

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::session::{Session, Sink};
use proflens::protocol::{AnalysisKind, Envelope, FileMeta, Request, Response};

fn fixture(rel: &str) -> std::path::PathBuf {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures")
        .join(rel);
    assert!(p.exists(), "fixture missing: {}", p.display());
    p
}

#[derive(Default)]
struct Collect {
    out: Vec<(u32, Response)>,
    bytes: Vec<u8>,
}

impl Sink for Collect {
    fn send(&mut self, seq: u32, response: Response) {
        self.out.push((seq, response));
    }
    fn send_bytes(&mut self, seq: u32, response: Response, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
        self.out.push((seq, response));
    }
}

const LEVEL1: &str = "ascend/Ascend__msinsight/test/data/pytorch/text/level1";

fn open(session: &mut Session, rel: &str) -> (FsOpener, Collect) {
    let (opener, files) = FsOpener::walk(&fixture(rel)).unwrap();
    let metas = files
        .iter()
        .map(|f| FileMeta {
            path: f.path.clone(),
            size: f.size,
        })
        .collect();
    let mut out = Collect::default();
    session.handle(
        Envelope {
            seq: 1,
            body: Request::Open { files: metas },
        },
        &opener,
        &mut out,
    );
    (opener, out)
}

#[test]
fn open_gives_the_inventory_of_level1() {
    let mut s = Session::new();
    let (_opener, out) = open(&mut s, LEVEL1);
    assert_eq!(out.out.len(), 1);
    let Response::Inventory(inv) = &out.out[0].1 else {
        panic!("expected an inventory, got {:?}", out.out[0].1);
    };
    assert_eq!(inv.ranks.len(), 2);
    let r0 = &inv.ranks[0];
    assert_eq!(r0.dir, "level1/rank0_ascend_pt");
    assert_eq!(r0.role, "level1");
    assert_eq!(r0.rank_id, Some(0));
    assert_eq!(r0.level.as_deref(), Some("Level1"));
    assert_eq!(r0.export_type.as_deref(), Some("text"));
    let mem = r0
        .analyses
        .iter()
        .find(|a| a.analysis == AnalysisKind::Memory)
        .unwrap();
    assert!(mem.can_run && mem.missing.is_empty());
    // Every file of the card carries its index in the Open list, for progress bars.
    let csv = r0
        .files
        .iter()
        .find(|f| f.kind == "operator_memory.csv")
        .unwrap();
    assert_eq!(
        csv.path,
        "level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv"
    );
    assert_ne!(csv.file, u32::MAX);
    assert!(inv.ignored.is_empty());
    assert_eq!(inv.ranks[1].rank_id, Some(1));
}

#[test]
fn queries_before_a_run_fail_with_a_message() {
    let mut s = Session::new();
    let (opener, _) = FsOpener::walk(&fixture(LEVEL1)).unwrap();
    let mut out = Collect::default();
    s.handle(
        Envelope {
            seq: 9,
            body: Request::Stack { rank: 0, row: 0 },
        },
        &opener,
        &mut out,
    );
    match &out.out[0] {
        (9, Response::Failed(f)) => assert!(f.message.contains("nothing is loaded")),
        other => panic!("unexpected {other:?}"),
    }
}
