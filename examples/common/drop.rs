//! One drop through the worker's `Session`, as the page's worker runs it: `Open` the files,
//! then `Run` the given analyses over every rank and snapshot the inventory found. Shared by
//! `session_bench` (natively, over the fs opener) and `wasm_session` (in V8, over memory);
//! included by those two with `#[path]`, not by every example.

use proflens::engine::session::{Session, Sink};
use proflens::ingest::Opener;
use proflens::protocol::{AnalysisKind, Envelope, FileMeta, Request, Response, Target};

/// What the drop answered: targets found, analysed, and the messages of those that failed.
#[derive(Default)]
pub struct Answered {
    /// Rank targets of the inventory.
    pub ranks: u32,
    /// Snapshot targets of the inventory.
    pub snapshots: u32,
    /// Targets done (`RunDone`).
    pub done: u32,
    /// The messages of the targets that failed.
    pub failed: Vec<String>,
}

impl Sink for Answered {
    fn send(&mut self, _seq: u32, response: Response) {
        match response {
            Response::Inventory(inv) => {
                self.ranks = inv.ranks.len() as u32;
                self.snapshots = inv.snapshots.len() as u32;
            }
            Response::TargetFailed { message, .. } => self.failed.push(message),
            Response::RunDone { done, .. } => self.done = done,
            _ => {}
        }
    }
    // `Inventory` comes with the side-file bundle beside it.
    fn send_bytes(&mut self, seq: u32, response: Response, _bytes: &[u8]) {
        self.send(seq, response);
    }
}

/// Opens `files` and runs `analyses` over every target, as a drop does.
pub fn run(opener: &dyn Opener, files: Vec<FileMeta>, analyses: Vec<AnalysisKind>) -> Answered {
    let mut session = Session::new();
    let mut sink = Answered::default();
    session.handle(
        Envelope {
            seq: 1,
            body: Request::Open { files },
        },
        opener,
        &mut sink,
    );
    let targets: Vec<Target> = (0..sink.ranks)
        .map(Target::Rank)
        .chain((0..sink.snapshots).map(Target::Snapshot))
        .collect();
    session.handle(
        Envelope {
            seq: 2,
            body: Request::Run { analyses, targets },
        },
        opener,
        &mut sink,
    );
    sink
}
