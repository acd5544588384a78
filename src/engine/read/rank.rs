//! One read per input file of a rank folder, feeding every planned analysis.
//!
//! The files of one rank are read in this order, each at most once:
//!
//! 1. the kernel source (`kernel_details.csv`, else `op_summary*.csv`) — anomaly;
//! 2. `trace_view.json` — ONE streaming pass through [`for_each_indexed_event`]; each event
//!    object is handed to the memory call-stack index ([`HostOpsReader`]), the anomaly
//!    trace tables ([`TimelineBuilder`]) and the HCCL op sizes of the slow links
//!    ([`HcclSizes`], when the communication or anomaly analysis has communication files to
//!    size) in turn. Natively, with spare threads
//!    ([`read_rank_cut`]), the file is cut into byte ranges read on their own threads, each
//!    range once for both consumers (a [`HostOpsReader::range`] and a [`TimelineBuilder`] of
//!    its own), and the ranges' results are merged in file order into exactly what one reader
//!    gives ([`HostOpsReader::absorb`], [`TimelineBuilder::absorb`]; formats.md §8.2). The
//!    state that crosses ranges is replayed at the merge: the timeline's `E`s whose `B` is in
//!    an earlier range, the parity index's stop at its first kept event without a numeric
//!    `ts` (what follows it is dropped). When the cut read cannot be used (gzip, an error or
//!    bytes after the trace in a range), one reader reads the file for both, as without
//!    threads;
//! 3. `operator_memory.csv` — memory;
//! 4. `communication.json` — communication and anomaly (read once by the communication
//!    phase, [`super::comm`], when planned, its ops handed to the anomaly), then
//!    `communication_matrix.json` — communication, `step_trace_time.csv` — anomaly.
//!
//! This order keeps each analysis' own reading order (memory: trace, then CSV; anomaly:
//! kernels, trace, side files), so each analysis' problems come out in the same order as
//! when it runs alone, and `proflens analyze` writes the single commands' bytes. With spare
//! threads and the memory analysis planned, the communication files are read after step 2
//! and the anomaly's side files and analysis then run on a thread of their own beside step 3:
//! the same reading order within each analysis, so the same result.
//! Each analysis keeps its own problem list; a failure of one (a parity trace error, say)
//! never stops the other's use of the same pass. A `Break` from the progress callback
//! cancels the whole rank.

use std::ops::ControlFlow;
use std::sync::Arc;

use super::anomaly::AnomalyPass;
use super::memory::{trace_failure, MemoryPass};
use super::plan::{RankEntry, RankPlan};
use crate::analysis::memory_result::RankStatus;
use crate::engine::contract::{Cancelled, OnProgress, Progress, Target};
use crate::ingest::inventory::RankFile;
use crate::ingest::inventory::{FileKind, RankFolder};
use crate::ingest::{ChunkReader, Opener};
use crate::model::trace_events::HostEventTable;
use crate::parse::trace_json::call_stack_index::{HostOpsReader, TraceMode};
use crate::parse::trace_json::hccl_sizes::HcclSizes;
use crate::parse::trace_json::object::Event;
use crate::parse::trace_json::ranges::{self, RangeSink, Ranges};
use crate::parse::trace_json::timeline::{TimelineBuilder, TimelineInfo};
use crate::parse::trace_json::{for_each_indexed_event, TraceScan};

/// Reads rank folder `folder` (inventory target `target`) once and runs every analysis of
/// `plan` on it. `on_progress` gets every chunk of every file; `Break` cancels the rank
/// (every planned analysis then comes back cancelled, except a memory rank that had
/// already failed before reading).
pub fn read_rank(
    target: Target,
    folder: &RankFolder,
    opener: &dyn Opener,
    plan: &RankPlan<'_>,
    on_progress: &mut OnProgress<'_>,
) -> RankEntry {
    read_rank_cut(target, folder, opener, None, plan, on_progress)
}

/// Byte ranges of one large `trace_view.json` read on several threads (formats.md §8.2;
/// native only: the page passes `None`).
pub type Cut<'a> = Option<(
    &'a (dyn Opener + Sync),
    crate::parse::trace_json::ranges::Ranges,
)>;

/// [`read_rank`] with `cut`: the rank's plain `trace_view.json` is cut into byte ranges read
/// on `cut`'s threads for the memory call-stack index and the anomaly's trace tables alike
/// (formats.md §8.2), with the same result.
pub fn read_rank_cut(
    target: Target,
    folder: &RankFolder,
    opener: &dyn Opener,
    cut: Cut<'_>,
    plan: &RankPlan<'_>,
    on_progress: &mut OnProgress<'_>,
) -> RankEntry {
    // The page reads one reader (it passes `None`); a constant `None` there lets a wasm build
    // leave out the cut read, its merges and the anomaly beside the matching.
    let cut = cut.filter(|_| cfg!(not(target_arch = "wasm32")));
    let label = folder.dir.as_str();
    let mut prog = |file: &str, bytes: crate::ingest::Progress| {
        on_progress(&Progress {
            target,
            label,
            file,
            bytes,
        })
    };
    if folder.kind == crate::ingest::rank::CaptureKind::Kineto {
        // A GPU rank: one trace, read once, anomaly only (`engine::read::gpu`).
        return RankEntry {
            memory: None,
            comm: None,
            anomaly: plan
                .anomaly
                .map(|cfg| super::gpu::read_rank(folder, opener, cfg, &mut prog)),
        };
    }
    // A rank with its DB export reads the DB (ascend-db.md §7); the text files only when the
    // DB cannot be opened and there are some.
    let db_failed;
    let folder = match db_first(target, folder, opener, plan, on_progress) {
        Ok(entry) => return entry,
        Err(None) => folder,
        Err(Some(f)) => {
            db_failed = f;
            &db_failed
        }
    };
    let label = folder.dir.as_str();
    let mut prog = |file: &str, bytes: crate::ingest::Progress| {
        on_progress(&Progress {
            target,
            label,
            file,
            bytes,
        })
    };
    let mut cancelled = false;
    let mut mem = plan.memory.map(|o| MemoryPass::start(folder, o));
    let mut anom = plan.anomaly.map(|c| AnomalyPass::new(folder, c));
    // 1. kernel source
    if let Some(a) = &mut anom {
        cancelled |= a.read_kernels(opener, &mut prog).is_break();
    }
    // 2. trace_view.json, one pass for every consumer: the call-stack index, the timeline, and
    // the HCCL op sizes of the communication analysis' slow links (a rank with communication
    // data; a rank read from its DB export takes them from `COMMUNICATION_OP`, `super::db`).
    let has_trace = folder.file(FileKind::TraceView).is_some();
    let wants = plan.comm || anom.is_some();
    let mut sizes = (wants && has_trace && super::comm::usable(folder)).then(HcclSizes::default);
    match folder.file(FileKind::TraceView) {
        _ if cancelled => {}
        None => mem = mem.map(|m| m.and_then(MemoryPass::no_trace)),
        Some(f) if matches!(mem, Some(Ok(_))) || anom.is_some() || sizes.is_some() => {
            let path = f.path.as_str();
            let threads = cut.map_or(1, |(_, r)| r.count(f.size));
            // In at least two byte ranges, each read once for both consumers.
            let mut one_reader = true;
            if let Some((opener, ranges)) = cut.filter(|_| threads > 1) {
                let stop = std::sync::atomic::AtomicBool::new(false);
                let ranges = Ranges { threads, ..ranges };
                let mut on = |p: crate::ingest::Progress| {
                    let c = prog(path, p);
                    if c.is_break() {
                        stop.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                    c
                };
                let host_mode = match &mem {
                    Some(Ok(m)) => Some(m.trace_mode()),
                    _ => None,
                };
                let pre = anom.as_ref().map(AnomalyPass::custom_prefix);
                let want_sizes = sizes.is_some();
                let read = trace_cut(host_mode, pre, want_sizes, (opener, ranges), f, &mut on);
                let stopped = stop.load(std::sync::atomic::Ordering::Relaxed);
                cancelled |= stopped;
                one_reader = read.is_none() && !stopped;
                if let Some((hosts, tl, s, scan)) = read {
                    sizes = s;
                    if let (Some(a), Some(t)) = (&mut anom, tl) {
                        a.after_trace(f, Ok(Ok(t)));
                    }
                    let r = match &mut mem {
                        Some(Ok(m)) => {
                            let mut h = m.trace_reader(path);
                            hosts.into_iter().for_each(|p| h.absorb(p));
                            Some(h.finish(Ok(scan)).map_err(|e| trace_failure(path, &e)))
                        }
                        _ => None,
                    };
                    if let Some(r) = r {
                        mem = mem.map(|m| m.and_then(|m| m.after_trace(path, r)));
                    }
                }
            }
            if one_reader {
                match opener.open(path) {
                    Err(e) => {
                        sizes = None;
                        let msg = (
                            crate::base::Position::file(path),
                            format!("cannot open: {e}"),
                        );
                        mem = mem.map(|m| m.and_then(|m| m.after_trace(path, Err(msg))));
                        if let Some(a) = &mut anom {
                            a.after_trace(f, Err(e));
                        }
                    }
                    Ok(src) => {
                        let mut rdr = ChunkReader::new(src, Some(f.size));
                        let file: Arc<str> = path.into();
                        let mut host = match &mut mem {
                            Some(Ok(m)) => Some(m.trace_reader(path)),
                            _ => None,
                        };
                        let mut tl = anom.as_ref().map(AnomalyPass::trace_builder);
                        let mut host_live = host.is_some();
                        let res = for_each_indexed_event(
                            &mut rdr,
                            &file,
                            &mut |p| {
                                let c = prog(path, p);
                                cancelled |= c.is_break();
                                c
                            },
                            &mut |ev, at| {
                                if host_live {
                                    if let Some(h) = &mut host {
                                        host_live = h.indexed_event(ev, at).is_continue();
                                    }
                                }
                                if let Some(s) = &mut sizes {
                                    let _ = s.indexed_event(ev, at);
                                }
                                if let Some(t) = &mut tl {
                                    let _ = t.indexed_event(ev, at);
                                } else if !host_live && sizes.is_none() {
                                    return ControlFlow::Break(());
                                }
                                ControlFlow::Continue(())
                            },
                        );
                        if let (Some(a), Some(t)) = (&mut anom, tl) {
                            a.after_trace(f, Ok(res.as_ref().map(|s| t.finish(s.clone()))));
                        }
                        if let Some(h) = host {
                            let r = h.finish(res).map_err(|e| trace_failure(path, &e));
                            mem = mem.map(|m| m.and_then(|m| m.after_trace(path, r)));
                        }
                    }
                }
            }
        }
        Some(_) => {}
    }
    // The op sizes go to the anomaly's comm ops now (it may finish on a thread of its own) and
    // to the communication tables when they are read.
    if let (Some(a), Some(s)) = (&mut anom, &sizes) {
        a.use_op_sizes(s.bytes.clone());
    }
    let sizes = sizes.as_ref();
    // With spare threads (and both analyses to finish), the anomaly's side files and analysis
    // run on a thread of their own beside operator_memory.csv and the matching (each analysis
    // keeps its own problems; the communication files, which the anomaly takes, are read
    // first).
    let beside = cut
        .filter(|(_, r)| r.threads > 1 && !cancelled && matches!(mem, Some(Ok(_))))
        .filter(|_| anom.is_some())
        .map(|(o, _)| o);
    let (memory, comm, anomaly) = match beside {
        Some(sync) => {
            // 4. (the communication files first), then the anomaly beside 3.
            let comm = comm_phase(
                plan,
                &mut cancelled,
                folder,
                opener,
                &mut anom,
                sizes,
                &mut prog,
            );
            match anom.take().filter(|_| !cancelled) {
                None => {
                    let memory = finish_memory(mem, opener, &mut cancelled, &mut prog);
                    (memory, comm, Some(Err(Cancelled)))
                }
                Some(a) => {
                    let (r, memory) = crate::base::par::join(
                        move || a.finish(sync),
                        || finish_memory(mem, opener, &mut cancelled, &mut prog),
                    );
                    let anomaly = Some(if cancelled { Err(Cancelled) } else { Ok(r) });
                    (memory, comm, anomaly)
                }
            }
        }
        None => {
            let memory = finish_memory(mem, opener, &mut cancelled, &mut prog);
            // 4. side files, analysis
            let comm = comm_phase(
                plan,
                &mut cancelled,
                folder,
                opener,
                &mut anom,
                sizes,
                &mut prog,
            );
            let anomaly = anom.map(|a| match cancelled {
                true => Err(Cancelled),
                false => Ok(a.finish(opener)),
            });
            (memory, comm, anomaly)
        }
    };
    RankEntry {
        memory: memory.map(Arc::new),
        anomaly,
        comm,
    }
}

/// 3. `operator_memory.csv` and the matching, unless the rank has failed or is cancelled.
fn finish_memory(
    mem: Option<Result<MemoryPass<'_>, crate::analysis::memory_result::RankMemory>>,
    opener: &dyn Opener,
    cancelled: &mut bool,
    prog: &mut dyn FnMut(&str, crate::ingest::Progress) -> ControlFlow<()>,
) -> Option<crate::analysis::memory_result::RankMemory> {
    mem.map(|m| match m {
        Err(done) => done,
        Ok(m) if *cancelled => m.cancelled(),
        Ok(m) => {
            let r = m.finish(opener, prog);
            *cancelled |= r.status == RankStatus::Cancelled;
            r
        }
    })
}

/// The communication files of the rank when planned (their ops handed to the anomaly, the
/// trace pass's op `sizes` added to the tables), or a cancelled result.
fn comm_phase(
    plan: &RankPlan<'_>,
    cancelled: &mut bool,
    folder: &RankFolder,
    opener: &dyn Opener,
    anom: &mut Option<AnomalyPass<'_>>,
    sizes: Option<&HcclSizes>,
    prog: &mut dyn FnMut(&str, crate::ingest::Progress) -> ControlFlow<()>,
) -> Option<Result<Arc<super::comm::RankCommRead>, Cancelled>> {
    super::comm::planned(plan.comm, *cancelled, folder, opener, None, prog).map(|r| {
        *cancelled |= r.is_err();
        r.map(|mut c| {
            if let (Some(a), Some(ops)) = (anom.as_mut(), c.comm_ops.take()) {
                a.use_comm_read(ops);
            }
            if let Some(s) = sizes {
                c.tables.op_bytes = s.bytes.clone();
                c.tables.has_sizes = true;
            }
            Arc::new(c)
        })
    })
}

/// The consumers of one byte range of the trace pass: the call-stack index's reader, the
/// anomaly's trace tables and the HCCL op sizes, each of its own, fed the range's events in
/// turn.
struct RangeReaders {
    host: Option<HostOpsReader<'static>>,
    tl: Option<TimelineBuilder>,
    sizes: Option<HcclSizes>,
}

impl RangeSink for RangeReaders {
    fn member(&mut self, _: &[u8], _: &[u8], _: u64) {}
    fn indexed_event(&mut self, ev: Event<'_>, at: u64) -> ControlFlow<()> {
        if let Some(h) = &mut self.host {
            let _ = RangeSink::indexed_event(h, ev, at);
        }
        if let Some(t) = &mut self.tl {
            let _ = t.indexed_event(ev, at);
        }
        if let Some(s) = &mut self.sizes {
            let _ = s.indexed_event(ev, at);
        }
        ControlFlow::Continue(())
    }
}

/// The trace pass over `f` in byte ranges (formats.md §8.2), each range read once for both
/// consumers: the call-stack index's range readers in file order (when `host_mode` is
/// given), to be absorbed into the rank's reader, the anomaly's trace tables merged (with
/// `prefix`), the HCCL op sizes merged (with `sizes`), and the splitter's report of the whole
/// pass. `None`: one reader reads it.
type TraceCut = (
    Vec<HostOpsReader<'static>>,
    Option<(HostEventTable, TimelineInfo)>,
    Option<HcclSizes>,
    TraceScan,
);

fn trace_cut(
    host_mode: Option<TraceMode>,
    prefix: Option<&str>,
    sizes: bool,
    (opener, ranges): (&(dyn Opener + Sync), Ranges),
    f: &RankFile,
    prog: &mut dyn FnMut(crate::ingest::Progress) -> ControlFlow<()>,
) -> Option<TraceCut> {
    let n = ranges.count(f.size).max(1);
    let starts = ranges::even_starts(f.size, n);
    let path = f.path.as_str();
    let make = |start: Option<u64>, _: u64| RangeReaders {
        host: host_mode.map(|m| HostOpsReader::range(path, m)),
        tl: prefix.map(|p| match start {
            None => TimelineBuilder::new(p),
            Some(_) => TimelineBuilder::new(p).deferring(),
        }),
        sizes: sizes.then(HcclSizes::default),
    };
    let (parts, scan) = ranges::read_cut(opener, path, f.size, &starts, &make, prog)?;
    let mut hosts = Vec::with_capacity(parts.len());
    let mut tl: Option<TimelineBuilder> = None;
    let mut merged: Option<HcclSizes> = None;
    for p in parts {
        hosts.extend(p.host);
        match (&mut tl, p.tl) {
            (Some(t), Some(next)) => t.absorb(next),
            (t, next) => *t = t.take().or(next),
        }
        match (&mut merged, p.sizes) {
            (Some(m), Some(next)) => m.absorb(next),
            (m, next) => *m = m.take().or(next),
        }
    }
    let tl = tl.map(|t| t.finish(scan.clone()));
    Some((hosts, tl, merged, scan))
}

/// The DB export of `folder` when it has one: `Ok` is the rank read from it; `Err(None)` no
/// DB (read the text files); `Err(Some(folder))` the DB could not be opened: the folder with
/// that problem among its notes and without the DB, so the text files are read (or, when
/// there are none, the analyses say what is missing).
#[cfg(any(not(target_arch = "wasm32"), feature = "db"))]
fn db_first(
    target: Target,
    folder: &RankFolder,
    opener: &dyn Opener,
    plan: &RankPlan<'_>,
    on_progress: &mut OnProgress<'_>,
) -> Result<RankEntry, Option<RankFolder>> {
    if folder.ascend_db().is_none() {
        return Err(None);
    }
    match super::db::read_rank(target, folder, opener, plan, on_progress) {
        Ok(e) => Ok(e),
        Err(p) => {
            let mut f = folder.clone();
            f.files.retain(|x| x.kind != FileKind::AscendDb);
            f.notes
                .retain(|n| n.code != crate::parse::ascend_db::codes::BOTH);
            f.notes.push(crate::ingest::inventory::Note {
                severity: p.severity,
                code: p.code,
                file: p.at.file.to_string(),
                message: p.message.clone(),
            });
            Err(Some(f))
        }
    }
}

/// Builds without the DB reader (a wasm32 bundle without feature `db`) read the text files,
/// and say so when the folder holds a DB export.
#[cfg(not(any(not(target_arch = "wasm32"), feature = "db")))]
fn db_first(
    _: Target,
    folder: &RankFolder,
    _: &dyn Opener,
    _: &RankPlan<'_>,
    _: &mut OnProgress<'_>,
) -> Result<RankEntry, Option<RankFolder>> {
    let Some(db) = folder.ascend_db() else {
        return Err(None);
    };
    let mut f = folder.clone();
    let path = db.path.clone();
    f.files.retain(|x| x.kind != FileKind::AscendDb);
    f.notes.retain(|n| n.code != "ASC-DB-001");
    f.notes.push(crate::ingest::inventory::Note {
        severity: crate::base::Severity::Error,
        code: "ASC-DB-003",
        file: path.clone(),
        message: format!("this page (the single file `proflens.html`) does not read the DB export: open the hosted page or use the CLI (`proflens analyze`) to read it; the folder's text files are read if there are any"),
    });
    Err(Some(f))
}
