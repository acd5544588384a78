//! `Session`: the state of one worker's loaded inputs and the handler of every
//! [`Request`] (house-style §8.8: `Engine::handle(request, opener, emit)`). A plain
//! function of the core, natively tested with the fs or memory opener; the `worker` edge
//! only moves bytes and `File` handles in and [`Response`]s out.
//!
//! * `Open`: inventory step 1 (paths) and step 2 (side files), no parsing of data files.
//! * `Run`: the memory engine per rank folder; each rank's rows are kept as compact
//!   [`MemoryRows`] for the queries; one rank failing never stops the next.
//! * `Query`: answered from the results held here ([`MemoryRows`] for memory, the anomaly
//!   store and its timeline cache, the snapshot views), in the query's own analysis'
//!   vocabulary ([`Reply`]).
//! * `Export`: memory and anomaly exports run the engine again over every rank folder and the
//!   report writers stream their bytes in chunks, so the bytes are the CLI's bytes; a
//!   snapshot export is written from the snapshot held here.

pub mod anomaly;
pub mod dto;
pub mod memory;
pub mod snapshot;
pub mod snapshot_view;
pub mod timeline;

use std::collections::BTreeMap;

use crate::ingest::inventory::Inventory;
use crate::ingest::{InputFile, Opener};
use crate::parse::metadata::read_side_files;
use crate::protocol::{
    AnalysisKind, AnomalyQuery, Envelope, ExportRequest, Failure, FileMeta, MemoryQuery,
    MemoryReply, Query, Reply, Request, Response, Summary,
};
use crate::views::memory::MemoryRows;

pub use memory::EXPORT_CHUNK;

/// Where responses go (the worker posts them; tests collect them).
pub trait Sink {
    /// Sends one response for request `seq`.
    fn send(&mut self, seq: u32, response: Response);
    /// Sends one response with bytes beside it (export chunks).
    fn send_bytes(&mut self, seq: u32, response: Response, bytes: &[u8]);
}

/// A [`Sink`] that keeps everything it is sent (native tests and tools; the worker edge
/// posts instead): each response with its request's `seq`, in order, and the bytes of every
/// export chunk joined in order.
#[derive(Debug, Default)]
pub struct Collected {
    /// Responses in the order sent, each with its `seq`.
    pub out: Vec<(u32, Response)>,
    /// Bytes sent beside responses ([`Sink::send_bytes`]), concatenated.
    pub bytes: Vec<u8>,
}

impl Sink for Collected {
    fn send(&mut self, seq: u32, response: Response) {
        self.out.push((seq, response));
    }
    fn send_bytes(&mut self, seq: u32, response: Response, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
        self.out.push((seq, response));
    }
}

/// One analysed rank folder.
struct RankResult {
    rows: MemoryRows,
}

/// The loaded inputs of one worker and the analysis results it holds: per analysis, the
/// results of the targets this worker ran (rank folders for memory and anomaly, snapshot
/// files for snapshot).
#[derive(Default)]
pub struct Session {
    files: Vec<FileMeta>,
    inventory: Option<Inventory>,
    ranks: BTreeMap<u32, RankResult>,
    anomaly: anomaly::AnomalyStore,
    snapshot: snapshot::SnapshotStore,
    timeline: timeline::TimelineCache,
}

fn fail(message: impl Into<String>) -> Response {
    Response::Failed(Failure {
        message: message.into(),
    })
}

impl Session {
    /// An empty session.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves one request; every reply goes to `out` with the request's `seq`.
    pub fn handle(&mut self, env: Envelope<Request>, opener: &dyn Opener, out: &mut dyn Sink) {
        let seq = env.seq;
        match env.body {
            Request::Open { files } => {
                let inputs: Vec<InputFile> = files
                    .iter()
                    .map(|f| InputFile {
                        path: f.path.clone(),
                        size: f.size,
                    })
                    .collect();
                let mut inv = Inventory::from_paths(&inputs);
                read_side_files(&mut inv, opener);
                let reply = dto::inventory(&inv, &files);
                self.files = files;
                self.inventory = Some(inv);
                self.ranks.clear();
                self.anomaly = Default::default();
                self.snapshot = Default::default();
                self.timeline = Default::default();
                out.send(seq, Response::Inventory(reply));
            }
            Request::Run { analysis, targets } => self.run(seq, analysis, &targets, opener, out),
            Request::Query(q) => {
                let reply = self.query(q).unwrap_or_else(|e| {
                    if self.inventory.is_none() {
                        fail("nothing is loaded: drop a folder first")
                    } else {
                        fail(e)
                    }
                });
                out.send(seq, reply);
            }
            Request::Export(what) => self.export(seq, what, opener, out),
        }
    }

    /// Answers one query from the results this session holds.
    fn query(&mut self, q: Query) -> Result<Response, String> {
        let target = q.target();
        Ok(Response::Reply(match q {
            Query::Memory(q) => {
                let Some(r) = self.ranks.get_mut(&target) else {
                    return Err(format!("rank folder {target} has not been analysed here"));
                };
                Reply::Memory(match q {
                    MemoryQuery::Rows(q) => MemoryReply::Rows(r.rows.rows(&q)),
                    MemoryQuery::Curve {
                        x_range,
                        width_px,
                        pool,
                        ..
                    } => MemoryReply::Curve(r.rows.curve(x_range, width_px, pool_of(&pool))),
                    MemoryQuery::LiveAt {
                        t_ms, limit, pool, ..
                    } => MemoryReply::LiveAt(r.rows.live_at(t_ms, limit, pool_of(&pool))),
                    MemoryQuery::Sites {
                        group_by, limit, ..
                    } => MemoryReply::Sites(r.rows.sites(group_by, limit)),
                    MemoryQuery::Stack { row, .. } => MemoryReply::Stack(
                        r.rows
                            .stack(row)
                            .ok_or_else(|| format!("rank folder {target} has no row {row}"))?,
                    ),
                })
            }
            Query::Anomaly(
                q @ (AnomalyQuery::Timeline { .. }
                | AnomalyQuery::KernelAt { .. }
                | AnomalyQuery::Search { .. }),
            ) => Reply::Anomaly(
                self.timeline
                    .handle(&self.anomaly, &q)
                    .ok_or_else(|| format!("rank folder {target} has not been analysed here"))?,
            ),
            Query::Anomaly(q) => Reply::Anomaly(self.anomaly.query(&q)?),
            Query::Snapshot(q) => Reply::Snapshot(self.snapshot.query(q)?),
        }))
    }

    /// Writes one export as chunks, then `ExportDone` (or `Failed`).
    fn export(&mut self, seq: u32, what: ExportRequest, opener: &dyn Opener, out: &mut dyn Sink) {
        if let ExportRequest::Snapshot { target, what } = what {
            return self.snapshot.export(seq, target, what, out);
        }
        let Some(inv) = &self.inventory else {
            out.send(seq, fail("Export before Open: nothing is loaded"));
            return;
        };
        let mut w = memory::ChunkWriter::new(seq, out);
        let res = match &what {
            ExportRequest::Memory(kind) => memory::export(*kind, inv, opener, &mut w),
            ExportRequest::Anomaly { what, rank } => {
                anomaly::export(*what, *rank, inv, opener, &mut w)
            }
            ExportRequest::Snapshot { .. } => Err(std::io::Error::other("snapshot export")),
        };
        let flushed = std::io::Write::flush(&mut w);
        drop(w);
        match res.and_then(|x| flushed.map(|_| x)) {
            Ok((file_name, mime)) => out.send(seq, Response::ExportDone { file_name, mime }),
            Err(e) => out.send(seq, fail(format!("export {what:?} failed: {e}"))),
        }
    }

    fn run(
        &mut self,
        seq: u32,
        analysis: AnalysisKind,
        targets: &[u32],
        opener: &dyn Opener,
        out: &mut dyn Sink,
    ) {
        let Some(inv) = &self.inventory else {
            out.send(seq, fail("Run before Open: nothing is loaded"));
            return;
        };
        let (mut done, mut failed) = (0, 0);
        let mut problems = crate::base::Problems::new();
        for &target in targets {
            let outcome = match analysis {
                AnalysisKind::Memory | AnalysisKind::Anomaly => {
                    match inv.ranks.get(target as usize) {
                        None => Err(format!("no rank folder {target} in the inventory")),
                        Some(folder) if analysis == AnalysisKind::Memory => run_memory(
                            &mut self.ranks,
                            seq,
                            target,
                            folder,
                            opener,
                            out,
                            &mut problems,
                        ),
                        Some(folder) => {
                            self.anomaly
                                .run_rank(seq, target, folder, opener, out, &mut problems)
                        }
                    }
                }
                AnalysisKind::Snapshot => match inv.snapshots.get(target as usize) {
                    None => Err(format!("no snapshot file {target} in the inventory")),
                    Some(file) => {
                        self.snapshot
                            .run_file(seq, target, file, opener, out, &mut problems)
                    }
                },
            };
            match outcome {
                Ok(()) => done += 1,
                Err(message) => {
                    failed += 1;
                    out.send(
                        seq,
                        Response::TargetFailed {
                            analysis,
                            target,
                            message,
                        },
                    );
                }
            }
        }
        out.send(seq, Response::Problems(dto::problems(&problems)));
        out.send(
            seq,
            Response::RunDone {
                analysis,
                done,
                failed,
            },
        );
    }
}

/// Runs the memory analysis of one rank folder, keeps its rows and sends its summary.
fn run_memory(
    store: &mut BTreeMap<u32, RankResult>,
    seq: u32,
    rank: u32,
    folder: &crate::ingest::inventory::RankFolder,
    opener: &dyn Opener,
    out: &mut dyn Sink,
    problems: &mut crate::base::Problems,
) -> Result<(), String> {
    let o = memory::run_rank(rank, folder, opener);
    problems.extend(o.problems);
    match (o.rows, o.summary, o.failure) {
        (Some(rows), Some(summary), None) => {
            store.insert(rank, RankResult { rows });
            out.send(
                seq,
                Response::Done {
                    target: rank,
                    summary: Summary::Memory(summary),
                },
            );
            Ok(())
        }
        (_, _, why) => Err(why.unwrap_or_else(|| "no result".into())),
    }
}

/// The pool a query names (`PTA`, `GE`, `OTHER`); `None` or an unknown name: the first pool.
fn pool_of(pool: &Option<String>) -> Option<crate::analysis::memory_pool::Component> {
    pool.as_deref()
        .and_then(crate::analysis::memory_pool::Component::parse)
}
