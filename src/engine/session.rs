//! `Session`: the state of one worker's loaded inputs and the handler of every
//! [`Request`] (`Engine::handle(request, opener, emit)`). A plain
//! function of the core, natively tested with the fs or memory opener; the `worker` edge
//! only moves bytes and `File` handles in and [`Response`]s out.
//!
//! * `Open`: inventory step 1 (paths) and step 2 (side files), no parsing of data files. The
//!   side files are read through a recording opener and their bytes go back beside the
//!   inventory ([`SideBundle`]); a bundle beside the `Open` (the other pool workers) is read
//!   instead of the files, so each side file is read once per drop.
//! * `Run`: every requested analysis of a rank folder from ONE read of each of its files
//!   ([`Store::run_target_only`]: memory and anomaly share the `trace_view.json` pass); the
//!   results stay in the session's [`Store`]; the memory view keeps compact [`MemoryRows`]
//!   built from the stored rank. Snapshot files: one read each, the run in the same store
//!   and the snapshot tab's state beside it ([`snapshot::SnapshotViews`]).
//!   One target failing never stops the next.
//! * `Query`: answered from the results held here (the store's analysis types, the memory
//!   rows, the timeline cache, the snapshot views), in the query's own analysis' vocabulary
//!   ([`Reply`]).
//! * `Compare`: side B's files read once into a store of their own, compared with the
//!   results held here ([`compare`]); its exports are the CLI's `diff` documents.
//! * `Export`: written from the store by the report writers, streamed in chunks, so the bytes
//!   are the CLI's bytes; no file is read again. It covers the rank folders this session
//!   holds (the UI sends it to a worker that holds every one).
//! * `ExportPart` / `ExportJoin`: the same exports gathered over workers that each hold some
//!   rank folders ([`gather`]): each writes its part from its store, one joins them; no file
//!   is read.

pub mod anomaly;
pub mod cluster;
pub mod comm;
pub mod compare;
pub mod dto;
pub mod memory;
pub mod snapshot;
pub mod snapshot_view;
pub mod timeline;
pub mod warmup;

use std::collections::BTreeMap;

use crate::base::Problems;
use crate::engine::contract::no_progress;
use crate::engine::export::gather;
use crate::engine::read::Plan;
use crate::engine::store::Store;
use crate::ingest::inventory::Inventory;
use crate::ingest::replay::{Heads, Recording, Replay, Resume, SideBundle};
use crate::ingest::Opener;
use crate::parse::metadata::{heads_of_traces, read_side_files};
use crate::protocol::{
    AnalysisKind, AnomalyQuery, Envelope, ExportRequest, Failure, MemoryQuery, MemoryReply, Query,
    Reply, Request, Response, Summary, Target,
};
use crate::views::memory::MemoryRows;

pub mod inventory;
pub mod sink;

pub use inventory::inventory_of;
pub use sink::{send_export, ChunkWriter, Collected, Sink, EXPORT_CHUNK};

/// The loaded inputs of one worker and the analysis results it holds: the [`Store`] of the
/// rank folders this worker ran (memory and anomaly, [`Session::plan`]), the memory view's
/// rows per rank, the timeline cache, and the snapshot files it ran.
pub struct Session {
    inventory: Option<Inventory>,
    store: Store,
    memory_rows: BTreeMap<u32, MemoryRows>,
    snapshot: snapshot::SnapshotViews,
    timeline: timeline::TimelineCache,
    /// Side B of "Compare with…" and the comparison, once asked ([`Request::Compare`]).
    compare: Option<compare::CompareState>,
    /// The Communication tab's report joined across ranks, once asked ([`Query::Comm`]).
    comm: Option<comm::CommHeld>,
    /// The heads of the drop's traces and summary files that `Open` read (or got in the
    /// side-file bundle), handed to the run of their target so no byte is read twice
    /// ([`Resume`]); each is released once its target has run.
    heads: Heads,
}

impl Default for Session {
    fn default() -> Self {
        Session {
            inventory: None,
            store: Store::new(Session::plan()),
            memory_rows: BTreeMap::new(),
            snapshot: Default::default(),
            timeline: Default::default(),
            compare: None,
            comm: None,
            heads: Heads::new(),
        }
    }
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

    /// What the page runs on rank folders: the defaults of `proflens memory`, `proflens
    /// anomaly` and `proflens comm` (so its exports are those commands' bytes). Snapshot files run through
    /// [`snapshot::SnapshotViews`] with the settings panel's options.
    pub fn plan() -> Plan {
        Plan {
            snapshot: None,
            anomaly: Some(anomaly::config()),
            comm: Some(Default::default()),
            ..Plan::defaults()
        }
    }

    /// Serves one request; every reply goes to `out` with the request's `seq`.
    pub fn handle(&mut self, env: Envelope<Request>, opener: &dyn Opener, out: &mut dyn Sink) {
        self.handle_with(env, &[], opener, out);
    }

    /// [`Session::handle`] with the byte buffers that travelled beside the request: a
    /// side-file bundle beside `Open`, export parts beside `ExportPart` / `ExportJoin`
    /// (ignored beside other requests).
    pub fn handle_with(
        &mut self,
        env: Envelope<Request>,
        beside: &[Vec<u8>],
        opener: &dyn Opener,
        out: &mut dyn Sink,
    ) {
        let seq = env.seq;
        match env.body {
            Request::Open { files } => {
                let mut inv = inventory::inventory_of_paths(&files);
                // A readable bundle from another worker replaces the side files; otherwise
                // they are read here, and their bytes recorded for the other workers.
                let bundle = beside.first().and_then(|b| SideBundle::decode(b).ok());
                let (recorded, bundle) = match bundle {
                    Some(b) => {
                        read_side_files(&mut inv, &Replay::new(&b, opener));
                        (None, b)
                    }
                    None => {
                        let rec = Recording::new(opener);
                        read_side_files(&mut inv, &rec);
                        let b = rec.bundle();
                        (Some(b.encode()), b)
                    }
                };
                let reply = Response::Inventory(dto::inventory(&inv, &files));
                *self = Session {
                    heads: heads_of_traces(bundle, &inv),
                    inventory: Some(inv),
                    ..Session::default()
                };
                match recorded {
                    Some(b) => out.send_bytes(seq, reply, &b),
                    None => out.send(seq, reply),
                }
            }
            Request::Run { analyses, targets } => self.run(seq, &analyses, &targets, opener, out),
            Request::Query(Query::Comm(q)) => {
                let reply = self.comm_query(q, beside);
                out.send(seq, reply.unwrap_or_else(fail));
            }
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
            Request::Export(what) => self.export(seq, what, out),
            Request::ExportPart { what, round } => {
                let Some(inv) = &self.inventory else {
                    out.send(seq, fail("ExportPart before Open: nothing is loaded"));
                    return;
                };
                match gather::part(&what, round, beside, inv, &self.store) {
                    Ok(b) => out.send_bytes(
                        seq,
                        Response::ExportPart {
                            round,
                            bytes: b.len() as u64,
                        },
                        &b,
                    ),
                    Err(e) => out.send(seq, fail(format!("export part {what:?}: {e}"))),
                }
            }
            Request::ExportJoin(what) => {
                let Some(inv) = &self.inventory else {
                    out.send(seq, fail("ExportJoin before Open: nothing is loaded"));
                    return;
                };
                let mut w = ChunkWriter::new(seq, out);
                let res = gather::join(&what, beside, inv, &mut w);
                w.finish(&what, res);
            }
            Request::Compare(req) => self.compare(seq, &req, opener, out),
            Request::CompareAgain(options) => self.compare_again(seq, &options, out),
        }
    }

    /// The Compare tab's controls: the comparison held here computed again with `options`
    /// from both sides' stored results ([`compare::recompute`]); nothing is read. On failure
    /// the previous comparison (and its exports) stays.
    fn compare_again(
        &mut self,
        seq: u32,
        options: &crate::protocol::compare::CompareOptions,
        out: &mut dyn Sink,
    ) {
        let (Some(inv), Some(state)) = (&self.inventory, &mut self.compare) else {
            out.send(
                seq,
                fail("nothing is compared here: use Compare with… first"),
            );
            return;
        };
        let a = compare::SideA {
            inv,
            store: &self.store,
            snapshots: &self.snapshot,
        };
        match compare::recompute(&a, state, options) {
            Ok(view) => out.send(seq, Response::Reply(Reply::Compare(Box::new(view)))),
            Err(e) => out.send(seq, fail(e)),
        }
    }

    /// "Compare with…": reads side B through `opener` (B's files) once, compares it with the
    /// results held here ([`compare::compare`]) and keeps both for the exports.
    fn compare(
        &mut self,
        seq: u32,
        req: &crate::protocol::compare::CompareRequest,
        opener: &dyn Opener,
        out: &mut dyn Sink,
    ) {
        let Some(inv) = &self.inventory else {
            out.send(seq, fail("nothing is loaded: drop a folder first"));
            return;
        };
        self.compare = None;
        let a = compare::SideA {
            inv,
            store: &self.store,
            snapshots: &self.snapshot,
        };
        let mut problems = Problems::new();
        match compare::compare(&a, req, opener, &mut problems) {
            Ok((state, view)) => {
                self.compare = Some(state);
                out.send(seq, Response::Reply(Reply::Compare(Box::new(view))));
            }
            Err(e) => out.send(seq, fail(e)),
        }
    }

    /// Answers one query from the results this session holds.
    fn query(&mut self, q: Query) -> Result<Response, String> {
        let target = q.target();
        Ok(Response::Reply(match q {
            Query::Memory(q) => {
                let Some(rows) = self.memory_rows.get_mut(&target) else {
                    return Err(format!("rank folder {target} has not been analysed here"));
                };
                Reply::Memory(match q {
                    MemoryQuery::Rows(q) => MemoryReply::Rows(rows.rows(&q)),
                    MemoryQuery::Curve {
                        x_range,
                        width_px,
                        pool,
                        ..
                    } => MemoryReply::Curve(rows.curve(x_range, width_px, pool_of(&pool))),
                    MemoryQuery::LiveAt {
                        t_ms, limit, pool, ..
                    } => MemoryReply::LiveAt(rows.live_at(t_ms, limit, pool_of(&pool))),
                    MemoryQuery::Sites {
                        group_by, limit, ..
                    } => MemoryReply::Sites(rows.sites(group_by, limit)),
                    MemoryQuery::Stack { row, .. } => MemoryReply::Stack(
                        rows.stack(row)
                            .ok_or_else(|| format!("rank folder {target} has no row {row}"))?,
                    ),
                })
            }
            Query::Anomaly(
                q @ (AnomalyQuery::Timeline { .. }
                | AnomalyQuery::KernelAt { .. }
                | AnomalyQuery::Search { .. }
                | AnomalyQuery::Flows { .. }),
            ) => Reply::Anomaly(
                self.timeline
                    .handle(&self.store, &q)
                    .ok_or_else(|| format!("rank folder {target} has not been analysed here"))?,
            ),
            Query::Anomaly(q) => Reply::Anomaly(anomaly::query(&self.store, &q)?),
            Query::Snapshot(q) => Reply::Snapshot(self.snapshot.query(&mut self.store, q)?),
            Query::Comm(q) => return self.comm_query(q, &[]),
        }))
    }

    /// The Communication tab: `Join` analyses every worker's per-rank tables (`beside`) and
    /// keeps the report here; `Matrix` answers a heatmap window from it.
    fn comm_query(
        &mut self,
        q: crate::protocol::comm::CommQuery,
        beside: &[Vec<u8>],
    ) -> Result<Response, String> {
        use crate::protocol::comm::{CommQuery, CommReply};
        if self.inventory.is_none() {
            return Err("nothing is loaded: drop a folder first".into());
        }
        let reply = match q {
            CommQuery::Join { parity } => {
                let held = comm::CommHeld::join(beside, parity)?;
                let o = held.overview();
                self.comm = Some(held);
                CommReply::Overview(Box::new(o))
            }
            CommQuery::Matrix(m) => {
                let held = self
                    .comm
                    .as_ref()
                    .ok_or("the ranks' communication tables are not joined here")?;
                CommReply::Matrix(held.matrix(&m))
            }
        };
        Ok(Response::Reply(Reply::Comm(reply)))
    }

    /// Writes one export as chunks, then `ExportDone` (or `Failed`), from the rank folders
    /// this session holds; it reads no file.
    fn export(&mut self, seq: u32, what: ExportRequest, out: &mut dyn Sink) {
        if let ExportRequest::Snapshot { target, what } = what {
            return self.snapshot.export(&self.store, seq, target, what, out);
        }
        if let ExportRequest::Compare(what) = what {
            let Some(c) = &self.compare else {
                out.send(
                    seq,
                    fail("nothing is compared here: use Compare with… first"),
                );
                return;
            };
            let (file_name, mime, bytes) = c.export(what);
            return send_export(seq, file_name, mime, bytes, out);
        }
        if let ExportRequest::Comm(what) = &what {
            let Some(c) = &self.comm else {
                out.send(
                    seq,
                    fail("the ranks' communication tables are not joined here"),
                );
                return;
            };
            match c.export(what) {
                Ok((bytes, name, mime)) => send_export(seq, name, mime, &bytes, out),
                Err(e) => out.send(seq, fail(e)),
            }
            return;
        }
        let (Some(inv), store) = (&self.inventory, &self.store) else {
            out.send(seq, fail("Export before Open: nothing is loaded"));
            return;
        };
        let held = match &what {
            ExportRequest::Memory(_) => !store.memory_indexed().is_empty(),
            _ => !store.anomaly_indexed().is_empty(),
        };
        if !held {
            let m = format!("export {what:?}: no rank folder has been analysed here (Run first)");
            out.send(seq, fail(m));
            return;
        }
        let mut w = ChunkWriter::new(seq, out);
        let res = match &what {
            ExportRequest::Memory(kind) => memory::export(*kind, inv, store, &mut w),
            ExportRequest::Anomaly { what, rank } => {
                anomaly::export(*what, *rank, inv, store, &mut w)
            }
            ExportRequest::Snapshot { .. } | ExportRequest::Compare(_) | ExportRequest::Comm(_) => {
                Err(std::io::Error::other(
                    "snapshot, compare or communication export",
                ))
            }
        };
        w.finish(&what, res);
    }

    fn run(
        &mut self,
        seq: u32,
        analyses: &[AnalysisKind],
        targets: &[Target],
        opener: &dyn Opener,
        out: &mut dyn Sink,
    ) {
        if self.inventory.is_none() {
            out.send(seq, fail("Run before Open: nothing is loaded"));
            return;
        }
        let (mut done, mut failed) = (0, 0);
        let mut problems = Problems::new();
        let heads = std::mem::take(&mut self.heads);
        let resume = Resume::new(&heads, opener);
        let opener: &dyn Opener = &resume;
        for &t in targets {
            let kinds: Vec<AnalysisKind> = AnalysisKind::ALL
                .into_iter()
                .filter(|k| analyses.contains(k) && k.applies_to(t))
                .collect();
            let outcomes = match t {
                Target::Rank(i) => self.run_rank(i, &kinds, opener, &mut problems),
                Target::Snapshot(i) if !kinds.is_empty() => {
                    vec![(
                        t.index(),
                        AnalysisKind::Snapshot,
                        self.run_snapshot(i, opener, &mut problems),
                    )]
                }
                Target::Snapshot(_) => Vec::new(),
                Target::Summary(i) if !kinds.is_empty() => {
                    vec![(
                        t.index(),
                        AnalysisKind::Cluster,
                        self.run_summary(i, opener, &mut problems),
                    )]
                }
                Target::Summary(_) => Vec::new(),
            };
            for (target, analysis, outcome) in outcomes {
                match outcome {
                    Ok(summary) => {
                        done += 1;
                        out.send(seq, Response::Done { target, summary });
                    }
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
        }
        out.send(seq, Response::Problems(dto::problems(&problems)));
        // The heads of targets not run here stay for a later Run.
        self.heads = heads;
        out.send(seq, Response::RunDone { done, failed });
    }

    /// Runs the analyses `kinds` (memory, anomaly) of rank folder `i` from one read of each
    /// of its files and keeps them; per analysis its view index, its summary or why it failed
    /// (the other ranks of a split merged trace each get their own view index and summary,
    /// `store::part_index`; gpu-traces.md §6).
    fn run_rank(
        &mut self,
        i: u32,
        kinds: &[AnalysisKind],
        opener: &dyn Opener,
        problems: &mut Problems,
    ) -> Vec<(u32, AnalysisKind, Result<Summary, String>)> {
        let Some(inv) = &self.inventory else {
            return Vec::new();
        };
        let Some(folder) = inv.ranks.get(i as usize) else {
            let why = format!("no rank folder {i} in the inventory");
            return kinds.iter().map(|&k| (i, k, Err(why.clone()))).collect();
        };
        let plan = self.store.plan().for_rank(folder);
        let runs = |k: &AnalysisKind| match k {
            AnalysisKind::Memory => plan.memory.is_some(),
            AnalysisKind::Anomaly => plan.anomaly.is_some(),
            AnalysisKind::Comm => plan.comm,
            AnalysisKind::Snapshot | AnalysisKind::Cluster => false,
        };
        let run: Vec<AnalysisKind> = kinds.iter().copied().filter(runs).collect();
        self.store
            .run_target_only(inv, Target::Rank(i), &run, opener, &mut no_progress);
        let (mut out, mut parts) = (Vec::new(), Vec::new());
        // Each analysis reports the folder's own findings: the run's list says each once.
        let mut said = std::collections::HashSet::new();
        for &k in kinds {
            let outcome = match k {
                _ if !run.contains(&k) => Err(format!(
                    "{}: the {} analysis has nothing to read here (needs {})",
                    folder.label(),
                    crate::engine::contract::kind_name(k),
                    match k {
                        AnalysisKind::Memory => "operator_memory.csv",
                        AnalysisKind::Comm => "communication.json or communication_matrix.json",
                        _ => "kernel_details.csv, op_summary*.csv or trace_view.json",
                    }
                )),
                AnalysisKind::Comm => match self.store.comm_of(i) {
                    None | Some(Err(_)) => Err("cancelled".into()),
                    Some(Ok(c)) => {
                        problems.extend_unsaid(c.problems.clone(), &mut said);
                        Ok(Summary::Comm(crate::protocol::comm::CommRankDto {
                            rank: c.tables.rank,
                            ops: c.tables.ops.len() as u64,
                            links: c.tables.links.len() as u64,
                            has_time: c.tables.has_time,
                            has_matrix: c.tables.has_matrix,
                        }))
                    }
                },
                AnalysisKind::Memory => match self.store.memory_shared(i) {
                    None => Err("no result".into()),
                    Some(m) => {
                        problems.extend_unsaid(m.problems.clone(), &mut said);
                        memory::rank_view(i, &m).map(|(rows, summary)| {
                            self.memory_rows.insert(i, rows);
                            Summary::Memory(summary)
                        })
                    }
                },
                _ => match self.store.anomaly(i) {
                    None => Err("cancelled".into()),
                    Some(a) => {
                        problems.extend_unsaid(a.problems.clone(), &mut said);
                        for (n, p) in a.parts.iter().enumerate() {
                            if let Some(v) = crate::engine::store::part_index(i, n + 1) {
                                let s = anomaly::summary_of(v, folder, p);
                                parts.push((v, k, Ok(Summary::Anomaly(s))));
                            }
                        }
                        Ok(Summary::Anomaly(anomaly::summary_of(i, folder, a)))
                    }
                },
            };
            out.push((i, k, outcome));
        }
        // The folder's own rank first (the page opens it), then the others of a split trace.
        out.extend(parts);
        out
    }

    /// Runs snapshot file `i` (one read) and keeps it.
    fn run_snapshot(
        &mut self,
        i: u32,
        opener: &dyn Opener,
        problems: &mut Problems,
    ) -> Result<Summary, String> {
        let inv = self.inventory.as_ref().ok_or("nothing is loaded")?;
        let file = inv
            .snapshots
            .get(i as usize)
            .ok_or_else(|| format!("no snapshot file {i} in the inventory"))?;
        self.snapshot
            .run_file(&mut self.store, i, file, opener, problems)
    }

    /// Reads cluster summary file `i` into the cluster view's payload ([`cluster::read`]);
    /// nothing of it is kept here (the page holds the view).
    fn run_summary(
        &mut self,
        i: u32,
        opener: &dyn Opener,
        problems: &mut Problems,
    ) -> Result<Summary, String> {
        let inv = self.inventory.as_ref().ok_or("nothing is loaded")?;
        let file = inv
            .summaries
            .get(i as usize)
            .ok_or_else(|| format!("no cluster summary {i} in the inventory"))?;
        cluster::read(file, opener, problems).map(|v| Summary::Cluster(Box::new(v)))
    }
}

/// The pool a query names (`PTA`, `GE`, `OTHER`); `None` or an unknown name: the first pool.
fn pool_of(pool: &Option<String>) -> Option<crate::analysis::memory_pool::Component> {
    pool.as_deref()
        .and_then(crate::analysis::memory_pool::Component::parse)
}
