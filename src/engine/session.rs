//! `Session`: the state of one worker's loaded inputs and the handler of every
//! [`Request`] (house-style §8.8: `Engine::handle(request, opener, emit)`). A plain
//! function of the core, natively tested with the fs or memory opener; the `worker` edge
//! only moves bytes and `File` handles in and [`Response`]s out.
//!
//! * `Open`: inventory step 1 (paths) and step 2 (side files), no parsing of data files.
//! * `Run`: the memory engine per rank folder; each rank's rows are kept as compact
//!   [`MemoryRows`] for the queries; one rank failing never stops the next.
//! * `Rows`, `Curve`, `LiveAt`, `Sites`, `Stack`: answered from [`MemoryRows`].
//! * `Export`: the engine runs again over the analysed ranks and the report writer streams
//!   its bytes in chunks, so the bytes are the CLI's bytes.

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
use crate::protocol::{AnalysisKind, Envelope, Failure, FileMeta, Request, Response};
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
            Request::Rows(q) => {
                let reply = match self.ranks.get_mut(&q.rank) {
                    Some(r) => Response::Rows(r.rows.rows(&q)),
                    None => self.unknown_rank(q.rank),
                };
                out.send(seq, reply);
            }
            Request::Curve {
                rank,
                x_range,
                width_px,
            } => {
                let reply = match self.ranks.get(&rank) {
                    Some(r) => Response::Curve(r.rows.curve(x_range, width_px)),
                    None => self.unknown_rank(rank),
                };
                out.send(seq, reply);
            }
            Request::LiveAt { rank, t_ms, limit } => {
                let reply = match self.ranks.get(&rank) {
                    Some(r) => Response::LiveAt(r.rows.live_at(t_ms, limit)),
                    None => self.unknown_rank(rank),
                };
                out.send(seq, reply);
            }
            Request::Sites {
                rank,
                group_by,
                limit,
            } => {
                let reply = match self.ranks.get(&rank) {
                    Some(r) => Response::Sites(r.rows.sites(group_by, limit)),
                    None => self.unknown_rank(rank),
                };
                out.send(seq, reply);
            }
            Request::Stack { rank, row } => {
                let reply = match self.ranks.get(&rank).map(|r| r.rows.stack(row)) {
                    Some(Some(s)) => Response::Stack(s),
                    Some(None) => fail(format!("rank folder {rank} has no row {row}")),
                    None => self.unknown_rank(rank),
                };
                out.send(seq, reply);
            }
            Request::Snapshot(q) => self.snapshot.handle(seq, q, out),
            Request::Timeline { .. } | Request::KernelAt { .. } => {
                let reply = self
                    .timeline
                    .handle(&self.anomaly, &env.body)
                    .unwrap_or_else(|| self.unknown_rank(timeline::rank_of(&env.body)));
                out.send(seq, reply);
            }
            Request::Export { what } => {
                let Some(inv) = &self.inventory else {
                    out.send(seq, fail("Export before Open: nothing is loaded"));
                    return;
                };
                match memory::export(seq, what, inv, opener, out) {
                    Ok((file_name, mime)) => {
                        out.send(seq, Response::ExportDone { file_name, mime })
                    }
                    Err(e) => out.send(seq, fail(format!("export {what:?} failed: {e}"))),
                }
            }
            Request::Anomaly(q) => {
                let reply = match self.anomaly.query(&q) {
                    Ok(r) => Response::Anomaly(r),
                    Err(_) if self.inventory.is_none() => {
                        fail("nothing is loaded: drop a folder first")
                    }
                    Err(e) => fail(e),
                };
                out.send(seq, reply);
            }
            Request::AnomalyExport { what, rank } => {
                let Some(inv) = &self.inventory else {
                    out.send(seq, fail("Export before Open: nothing is loaded"));
                    return;
                };
                let mut w = memory::ChunkWriter::new(seq, out);
                let res = anomaly::export(what, rank, inv, opener, &mut w);
                let flushed = std::io::Write::flush(&mut w);
                drop(w);
                match res.and_then(|x| flushed.map(|_| x)) {
                    Ok((file_name, mime)) => {
                        out.send(seq, Response::ExportDone { file_name, mime })
                    }
                    Err(e) => out.send(seq, fail(format!("export {what:?} failed: {e}"))),
                }
            }
        }
    }

    fn unknown_rank(&self, rank: u32) -> Response {
        if self.inventory.is_none() {
            fail("nothing is loaded: drop a folder first")
        } else {
            fail(format!("rank folder {rank} has not been analysed here"))
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
                        Response::RankFailed {
                            analysis,
                            rank: target,
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
            out.send(seq, Response::RankDone(summary));
            Ok(())
        }
        (_, _, why) => Err(why.unwrap_or_else(|| "no result".into())),
    }
}
