//! What the native session tests share (the worker's request handler driven as the browser
//! drives it): the `Request::Open` file list of a walked folder, one request through the
//! session, a folder opened.
#![allow(dead_code)]

pub mod counting;

use std::path::Path;

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::session::{Collected, Session};
use proflens::ingest::InputFile;
use proflens::protocol::anomaly::AnomalySummaryDto;
use proflens::protocol::InventoryDto;
use proflens::protocol::{Envelope, FileMeta, Request, Response, Summary};

/// The names and sizes the page sends in `Request::Open` for `files`, in their order.
pub fn metas(files: &[InputFile]) -> Vec<FileMeta> {
    files
        .iter()
        .map(|f| FileMeta {
            path: f.path.clone(),
            size: f.size,
        })
        .collect()
}

/// `body` handled by `s` as the worker handles it, with sequence number `seq`.
pub fn send(s: &mut Session, opener: &FsOpener, seq: u32, body: Request) -> Collected {
    let mut out = Collected::default();
    s.handle(Envelope { seq, body }, opener, &mut out);
    out
}

/// `dir` walked and opened in `s` (`Request::Open`, sequence 1): its opener and the replies.
pub fn open_dir(s: &mut Session, dir: &Path) -> (FsOpener, Collected) {
    let (opener, files) = FsOpener::walk(dir).unwrap();
    let out = send(
        s,
        &opener,
        1,
        Request::Open {
            files: metas(&files),
        },
    );
    (opener, out)
}

/// The anomaly summaries of the `Done` replies in `out`, in reply order.
pub fn anomaly_summaries(out: &Collected) -> Vec<AnomalySummaryDto> {
    out.out
        .iter()
        .filter_map(|(_, r)| match r {
            Response::Done {
                summary: Summary::Anomaly(a),
                ..
            } => Some(a.clone()),
            _ => None,
        })
        .collect()
}

/// The inventory reply in `out` (the answer to `Request::Open`).
pub fn inventory(out: &Collected) -> InventoryDto {
    out.out
        .iter()
        .find_map(|(_, r)| match r {
            Response::Inventory(i) => Some(i.clone()),
            _ => None,
        })
        .expect("an inventory")
}
