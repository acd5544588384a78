//! One read of a rank folder's DB export (ascend-db.md §7): `ascend_pytorch_profiler_{rank}.db`
//! opened once, read-only, its tables feeding every planned analysis — `PYTORCH_API` scanned
//! once for the memory match's host ops and the timeline's host events — then `analysis.db`
//! beside it. The passes and their rules are the text path's ([`MemoryPass`], [`AnomalyPass`]);
//! only the readers differ. When the DB cannot be opened, [`read_rank`] gives it back with the
//! problem, and the caller reads the text export instead when there is one. `analysis.db` is
//! opened once too: its communication tables feed the communication analysis and the anomaly's
//! comm ops from one read when both run.

use std::sync::Arc;

use super::anomaly::{AnomalyPass, DbSide};
use super::memory::MemoryPass;
use super::plan::{RankEntry, RankPlan};
use crate::base::{Problem, Problems};
use crate::engine::contract::{Cancelled, OnProgress, Progress, Target};
use crate::ingest::inventory::{FileKind, RankFolder};
use crate::ingest::Opener;
use crate::model::kernels::KernelTableBuilder;
use crate::model::memory_events::MemoryEventTable;
use crate::parse::ascend_db::{analysis_db, comm as db_comm, host, kernels, memory, DbFile};

/// Reads rank folder `folder` from its DB export. `Err` is the `ASC-DB-003` problem when the
/// DB cannot be opened at all (nothing was analysed).
pub fn read_rank(
    target: Target,
    folder: &RankFolder,
    opener: &dyn Opener,
    plan: &RankPlan<'_>,
    on_progress: &mut OnProgress<'_>,
) -> Result<RankEntry, Problem> {
    let Some(dbf) = folder.ascend_db() else {
        return Err(Problem::new(
            crate::base::Severity::Error,
            crate::parse::ascend_db::codes::UNREADABLE,
            crate::base::Position::file(folder.label()),
            "no ascend_pytorch_profiler_<rank>.db in this folder",
        ));
    };
    let f = DbFile::open(opener, &dbf.path, dbf.size)?;
    let label = folder.dir.as_str();
    let cancelled = std::cell::Cell::new(false);
    // One progress sink for the DB's own scans (`tick`) and the communication read (`prog`).
    let sink = std::cell::RefCell::new(on_progress);
    let send = |file: &str, bytes: crate::ingest::Progress| {
        (*sink.borrow_mut())(&Progress {
            target,
            label,
            file,
            bytes,
        })
    };
    let mut tick = || {
        let c = send(
            &dbf.path,
            crate::ingest::Progress {
                bytes_done: f.bytes_read().min(dbf.size),
                bytes_total: Some(dbf.size),
            },
        );
        cancelled.set(cancelled.get() | c.is_break());
        c
    };
    let _ = tick();
    // Problems of reading the DB, shared by both analyses.
    let mut shared = Problems::new();
    let mut mem = plan.memory.map(|o| MemoryPass::start_db(folder, o));
    let mut timeline = plan
        .anomaly
        .map(|cfg| host::Timeline::new(&cfg.custom_step_prefix));
    // PYTORCH_API (+ call chains), once for both.
    let mut host_res = None;
    match &mut mem {
        Some(Ok(m)) => {
            let (strings, stacks, _, parity) = m.db_parts();
            let mut ops = host::HostOps::new(strings, stacks, parity);
            let st = host::read(
                &f,
                Some(&mut ops),
                timeline.as_mut(),
                &mut shared,
                &mut tick,
            );
            host_res = Some((st.present, ops.host, ops.cpu_ops, ops.with_stack));
        }
        _ => {
            if timeline.is_some() {
                host::read(&f, None, timeline.as_mut(), &mut shared, &mut tick);
            }
        }
    }
    let memory = mem.map(|m| match m {
        Err(done) => done,
        Ok(m) if cancelled.get() => m.cancelled(),
        Ok(mut m) => {
            m.db_parts().2.extend(shared.clone());
            let (present, table, cpu_ops, with_stack) = host_res.unwrap_or_default();
            match m.after_db_host(present, table, cpu_ops, with_stack) {
                Err(done) => done,
                Ok(mut m) => {
                    let mut events = MemoryEventTable::new();
                    let (strings, _, problems, _) = m.db_parts();
                    let st = memory::read(&f, strings, &mut events, problems, &mut tick);
                    if st.stopped || cancelled.get() {
                        m.cancelled()
                    } else {
                        m.finish_db(events)
                    }
                }
            }
        }
    });
    // `analysis.db`, opened once: the communication tables (for the communication analysis and
    // the anomaly's comm ops) and the step trace.
    let adb = folder
        .file(FileKind::AnalysisDb)
        .map(|a| (a, DbFile::open(opener, &a.path, a.size)));
    let open_adb = adb.as_ref().and_then(|(_, r)| r.as_ref().ok());
    let _ = tick();
    // The communication analysis reads the rank's `analysis.db` communication tables
    // (communication.md §1.5; the text files when the folder has no `analysis.db`).
    let mut prog = |file: &str, bytes: crate::ingest::Progress| send(file, bytes);
    let mut comm = super::comm::planned(
        plan.comm,
        cancelled.get(),
        folder,
        opener,
        open_adb,
        &mut prog,
    );
    let mut comm_ops = match &mut comm {
        Some(Ok(c)) if open_adb.is_some() => c.comm_ops.take().map(|r| r.ok()),
        _ => None,
    };
    if comm.as_ref().is_some_and(|c| c.is_err()) {
        cancelled.set(true);
    }
    // The ops' data sizes for the slow links: from the kernel read's `COMMUNICATION_OP` scan
    // when the anomaly runs, else from a scan of their own.
    let mut sizes: Option<kernels::OpSizes> = None;
    let anomaly = plan.anomaly.map(|cfg| {
        if cancelled.get() {
            return Err(Cancelled);
        }
        let mut problems = Problems::new();
        problems.extend(shared.clone());
        let mut builder = KernelTableBuilder::new();
        if kernels::read(&f, &mut builder, &mut problems, &mut tick, Some(&mut sizes)).stopped
            || cancelled.get()
        {
            return Err(Cancelled);
        }
        let mut inputs = vec![dbf.path.clone()];
        let side = match &adb {
            None => DbSide::default(),
            Some((_, Err(p))) => {
                problems.push(p.clone());
                DbSide::default()
            }
            Some((a, Ok(f))) => {
                inputs.push(a.path.clone());
                let ops = match comm_ops.take() {
                    Some(ops) => ops,
                    None => match db_comm::ops(f, &mut problems, &mut tick) {
                        std::ops::ControlFlow::Break(()) => return Err(Cancelled),
                        std::ops::ControlFlow::Continue(ops) => ops,
                    },
                };
                DbSide {
                    comm_ops: ops,
                    step_trace: analysis_db::step_trace(f, &mut problems),
                }
            }
        };
        if side.step_trace.as_ref().is_some_and(|v| !v.is_empty()) {
            // The one value where the exports differ, and the DB is the exact one (§6).
            problems.push(Problem::new(
                crate::base::Severity::Info,
                crate::parse::ascend_db::codes::PRECISE,
                crate::base::Position::file(inputs.last().map_or("", |p| p.as_str())),
                "step trace times from analysis.db (StepTraceTime): computed from integer ns, they can differ from a step_trace_time.csv of the same run by up to 0.25 µs, the text's float rounding",
            ));
        }
        let trace = timeline.take().map(|t| t.table);
        let mut pass = AnomalyPass::from_db(folder, cfg, inputs, builder, trace, side, problems);
        if let Some(s) = &sizes {
            pass.use_op_sizes(s.clone());
        }
        Ok(pass.finish(opener))
    });
    let mut comm = comm;
    if let Some(Ok(c)) = &mut comm {
        if plan.anomaly.is_none() && !cancelled.get() {
            let mut problems = Problems::new();
            match kernels::op_sizes(&f, &mut problems, &mut tick) {
                std::ops::ControlFlow::Break(()) => cancelled.set(true),
                std::ops::ControlFlow::Continue(s) => sizes = s,
            }
            c.problems.extend(problems);
        }
        if let Some(s) = sizes {
            c.tables.op_bytes = s;
            c.tables.has_sizes = true;
        }
    }
    let comm = match comm {
        Some(Ok(_)) if cancelled.get() => Some(Err(Cancelled)),
        c => c.map(|r| r.map(Arc::new)),
    };
    Ok(RankEntry {
        memory: memory.map(Arc::new),
        anomaly,
        comm,
    })
}
