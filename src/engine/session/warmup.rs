//! JIT warm-up of an idle worker: small synthetic inputs ([`crate::engine::synth`]) run through the
//! same [`Session`] path a drop takes (`Open`, then `Run` of every analysis), answers thrown
//! away.
//!
//! Why: Chromium compiles wasm first with its baseline compiler (Liftoff) and recompiles a
//! function with the optimising one (TurboFan) only once it is hot, and V8 has no on-stack
//! replacement for wasm: a function already running keeps its baseline code until it returns.
//! The reader's and the analyses' loops run once per file, so on a first drop they ran their
//! whole file in baseline code. Measured on the 197.5 MiB Kineto trace (ARCHITECTURE.md,
//! "Performance in Chromium"): a second drop in the same tab took 0.71–0.77x the time of the
//! first. The warm-up makes every drop a second one. The worker runs one step at a time while
//! it waits unadopted, and stops at the first real request, so a drop waits at most one step.
//!
//! One step per input kind, so every analysis the page runs is warmed ([`STEPS`]): a Kineto
//! trace (the GPU analyses), a torch_npu rank folder (memory and anomaly: `trace_view.json`,
//! `operator_memory.csv`, `kernel_details.csv`) and a memory-snapshot pickle. Each input is
//! 2–2.5 MiB — thousands of events, rows and trace entries, so the hot loops (trace
//! splitter and key scans, CSV readers, matching, the pickle VM, the analyses) reach V8's
//! tier-up budget — and a step takes 11–32 ms natively in release
//! (`examples/warmup_bench`).

use crate::engine::session::{Session, Sink};
use crate::engine::synth::ascend::{
    memory_rng, profiler_info_json, write_anomaly_rank, write_memory_trace, write_operator_memory,
    AnomalySpec, MemoryTraceSpec, PROFILER_METADATA_JSON,
};
use crate::engine::synth::snapshot::{write_snapshot, SnapshotSpec, SNAPSHOT_SEED};
use crate::engine::synth::{write_kineto_trace, KinetoSpec};
use crate::ingest::MemOpener;
use crate::protocol::{AnalysisKind, Envelope, FileMeta, Request, Response, Target};

/// Kernels of the warm-up's Kineto trace (~690 bytes each: ~2 MiB of JSON, tens of ms once
/// optimised) — enough for every hot function of the reader and the GPU analyses to reach
/// V8's tier-up budget.
pub const KINETO_KERNELS: u64 = 3_000;

/// Bytes the warm-up rank's `trace_view.json` reaches (whole steps of ~0.7 MB: two steps).
pub const ASCEND_TRACE_BYTES: u64 = 1_000_000;
/// Rows of the warm-up rank's `operator_memory.csv` (~190 bytes each).
pub const ASCEND_MEMORY_ROWS: u64 = 4_000;
/// Kernels of the warm-up rank's `kernel_details.csv` (~210 bytes each).
pub const ASCEND_KERNELS: u64 = 4_000;
/// Trace entries of the warm-up's snapshot pickle (~80 bytes each).
pub const SNAPSHOT_EVENTS: u64 = 30_000;

/// The warm-up steps, in order: each is one synthetic drop — 0: a Kineto trace (GPU
/// analyses), 1: a torch_npu rank folder (memory and anomaly), 2: a memory-snapshot pickle.
pub const STEPS: usize = 3;

/// A sink that drops every answer.
struct Discard;

impl Sink for Discard {
    fn send(&mut self, _seq: u32, _response: Response) {}
    fn send_bytes(&mut self, _seq: u32, _response: Response, _bytes: &[u8]) {}
}

/// Runs warm-up step `step` (`0..STEPS`): builds its input in memory and runs it through a
/// fresh [`Session`] (`Open`, then `Run` of [`AnalysisKind::ALL`] but the communication read,
/// which the generated inputs have no files for, over every target). Returns
/// `false` when `step` is past the last one (nothing ran).
pub fn run_step(step: usize) -> bool {
    let Some(opener) = input(step) else {
        return false;
    };
    drive(&opener, &mut Discard);
    true
}

/// The input of step `step` (what [`run_step`] analyses), `None` past the last one.
pub fn input(step: usize) -> Option<MemOpener> {
    let mut opener = MemOpener::new();
    // Writing to a Vec cannot fail (nor to a sink).
    match step {
        0 => {
            let mut trace = Vec::with_capacity(KINETO_KERNELS as usize * 700);
            let spec = KinetoSpec {
                kernels: KINETO_KERNELS,
                steps: 5,
                rank: 0,
            };
            let _ = write_kineto_trace(&mut trace, &spec);
            opener.add("warmup/rank0.pt.trace.json", trace);
        }
        1 => ascend_rank(&mut opener),
        2 => {
            let mut pickle = Vec::with_capacity(SNAPSHOT_EVENTS as usize * 90);
            let spec = SnapshotSpec {
                events: SNAPSHOT_EVENTS,
                seed: SNAPSHOT_SEED,
            };
            let _ = write_snapshot(&mut pickle, &spec);
            opener.add("warmup/snapshot.pickle", pickle);
        }
        _ => return None,
    }
    Some(opener)
}

/// Adds the warm-up's torch_npu rank folder to `opener`: `warmup/rank0_ascend_pt/` with the
/// side files, the memory generator's `trace_view.json` and `operator_memory.csv`
/// (allocations inside the trace's ops) and the anomaly generator's `kernel_details.csv`
/// (its own trace not written: one trace feeds both analyses, as in a real rank folder).
fn ascend_rank(opener: &mut MemOpener) {
    const DIR: &str = "warmup/rank0_ascend_pt";
    opener.add(format!("{DIR}/profiler_info_0.json"), profiler_info_json(0));
    opener.add(
        format!("{DIR}/profiler_metadata.json"),
        PROFILER_METADATA_JSON,
    );
    let mut rng = memory_rng(1);
    let mut ops = Vec::new();
    let mut trace = Vec::with_capacity(ASCEND_TRACE_BYTES as usize * 3 / 2);
    let spec = MemoryTraceSpec {
        target_bytes: ASCEND_TRACE_BYTES,
        rank: 0,
    };
    let _ = write_memory_trace(&mut trace, &spec, &mut rng, &mut ops);
    let mut csv = Vec::with_capacity(ASCEND_MEMORY_ROWS as usize * 200);
    let _ = write_operator_memory(&mut csv, ASCEND_MEMORY_ROWS, &ops, &mut rng);
    let mut kernels = Vec::with_capacity(ASCEND_KERNELS as usize * 220);
    let spec = AnomalySpec {
        kernels: ASCEND_KERNELS,
        steps: 2,
    };
    let _ = write_anomaly_rank(&mut kernels, &mut std::io::sink(), &spec);
    let out = format!("{DIR}/ASCEND_PROFILER_OUTPUT");
    opener.add(format!("{out}/trace_view.json"), trace);
    opener.add(format!("{out}/operator_memory.csv"), csv);
    opener.add(format!("{out}/kernel_details.csv"), kernels);
}

/// `Open` of every file of `opener`, then `Run` of every analysis over every target; every
/// answer goes to `out`.
fn drive(opener: &MemOpener, out: &mut dyn Sink) {
    let files: Vec<FileMeta> = opener
        .list()
        .into_iter()
        .map(|f| FileMeta {
            path: f.path,
            size: f.size,
        })
        .collect();
    let mut session = Session::new();
    let mut inventory = Inventory {
        ranks: 0,
        snapshots: 0,
        out,
    };
    session.handle(
        Envelope {
            seq: 1,
            body: Request::Open { files },
        },
        opener,
        &mut inventory,
    );
    let targets: Vec<Target> = (0..inventory.ranks)
        .map(Target::Rank)
        .chain((0..inventory.snapshots).map(Target::Snapshot))
        .collect();
    session.handle(
        Envelope {
            seq: 2,
            body: Request::Run {
                analyses: AnalysisKind::ALL
                    .into_iter()
                    .filter(|&k| k != AnalysisKind::Comm)
                    .collect(),
                targets,
            },
        },
        opener,
        inventory.out,
    );
}

/// Counts the targets of the `Inventory` answer, passing every answer on to `out`.
struct Inventory<'a> {
    ranks: u32,
    snapshots: u32,
    out: &'a mut dyn Sink,
}

impl Sink for Inventory<'_> {
    fn send(&mut self, seq: u32, response: Response) {
        if let Response::Inventory(inv) = &response {
            self.ranks = inv.ranks.len() as u32;
            self.snapshots = inv.snapshots.len() as u32;
        }
        self.out.send(seq, response);
    }
    fn send_bytes(&mut self, seq: u32, response: Response, bytes: &[u8]) {
        if let Response::Inventory(inv) = &response {
            self.ranks = inv.ranks.len() as u32;
            self.snapshots = inv.snapshots.len() as u32;
        }
        self.out.send_bytes(seq, response, bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::session::Collected;
    use crate::protocol::Summary;

    /// What a step's drive answered.
    #[derive(Debug)]
    struct Outcome {
        /// `(dir, kineto)` of each rank folder of the inventory.
        ranks: Vec<(String, bool)>,
        /// Paths of the snapshot files of the inventory.
        snapshots: Vec<String>,
        /// `RunDone { done, failed }`.
        run_done: (u32, u32),
        /// `(analysis, target, message)` of each `TargetFailed`.
        failed: Vec<(AnalysisKind, u32, String)>,
        /// The summary of each `Done`, in order.
        done: Vec<Summary>,
        /// Problem counts by code.
        problems: Vec<(String, u64)>,
        /// Input bytes.
        bytes: u64,
    }

    /// Runs step `step`'s input through [`drive`] (what [`run_step`] does) and collects the
    /// answers.
    fn outcome(step: usize) -> Outcome {
        let opener = input(step).expect("a step");
        let bytes = opener.list().iter().map(|f| f.size).sum();
        let mut out = Collected::default();
        drive(&opener, &mut out);
        let mut o = Outcome {
            ranks: Vec::new(),
            snapshots: Vec::new(),
            run_done: (u32::MAX, u32::MAX),
            failed: Vec::new(),
            done: Vec::new(),
            problems: Vec::new(),
            bytes,
        };
        for (_, r) in out.out {
            match r {
                Response::Inventory(inv) => {
                    o.ranks = inv
                        .ranks
                        .iter()
                        .map(|r| (r.dir.clone(), r.kineto))
                        .collect();
                    o.snapshots = inv.snapshots.iter().map(|f| f.path.clone()).collect();
                }
                Response::TargetFailed {
                    analysis,
                    target,
                    message,
                } => o.failed.push((analysis, target, message)),
                Response::RunDone { done, failed } => o.run_done = (done, failed),
                Response::Done { summary, .. } => o.done.push(summary),
                Response::Problems(p) => o.problems = p.by_code,
                _ => {}
            }
        }
        o
    }

    #[test]
    fn there_are_three_steps() {
        assert_eq!(STEPS, 3);
        assert!(input(STEPS).is_none());
        assert!(!run_step(STEPS));
    }

    /// The Kineto step's trace is a real input: one GPU rank; its anomaly (GPU) run ends
    /// done; memory has nothing to read in a Kineto trace and fails as such.
    #[test]
    fn the_kineto_step_analyses_its_input() {
        let o = outcome(0);
        assert_eq!(
            o.ranks,
            vec![("warmup/rank0.pt.trace.json".to_string(), true)],
            "{o:?}"
        );
        assert!(o.snapshots.is_empty());
        assert_eq!(o.run_done, (1, 1), "{o:?}");
        assert_eq!(o.failed.len(), 1);
        assert_eq!(o.failed[0].0, AnalysisKind::Memory);
        assert!(o.failed[0].2.contains("nothing to read"), "{o:?}");
        let [Summary::Anomaly(a)] = &o.done[..] else {
            panic!("{o:?}")
        };
        assert!(a.gpu);
        assert_eq!((a.kernels, a.steps), (KINETO_KERNELS, 5));
        assert!(o.problems.is_empty(), "{:?}", o.problems);
    }

    /// The Ascend step's rank folder is found as one torch_npu rank, and both of its
    /// analyses (memory, anomaly) end done.
    #[test]
    fn the_ascend_step_runs_memory_and_anomaly() {
        let o = outcome(1);
        assert_eq!(
            o.ranks,
            vec![("warmup/rank0_ascend_pt".to_string(), false)],
            "{o:?}"
        );
        assert!(o.snapshots.is_empty());
        assert_eq!(o.run_done, (2, 0), "{o:?}");
        assert!(o.problems.is_empty(), "{:?}", o.problems);
        let [Summary::Memory(m), Summary::Anomaly(a)] = &o.done[..] else {
            panic!("{o:?}")
        };
        assert_eq!(m.rows, ASCEND_MEMORY_ROWS);
        let c = &m.matches;
        let matched = c.exact + c.enclosing + c.nearest_before + c.via_forward;
        assert_eq!(matched + c.none, ASCEND_MEMORY_ROWS);
        // Only the 1-in-50 `cann::` rows find no stack; the matching ran over every other row.
        assert!(matched >= ASCEND_MEMORY_ROWS * 95 / 100, "{c:?}");
        assert!(
            c.enclosing > 0 && c.nearest_before > 0 && c.via_forward > 0,
            "{c:?}"
        );
        assert!(!m.no_stacks);
        assert!(!a.gpu);
        assert_eq!(a.kernels, ASCEND_KERNELS);
        assert!(a.steps >= 2, "{}", a.steps);
        assert!(a.bubbles > 0);
        assert!((1_000_000..=3_500_000).contains(&o.bytes), "{}", o.bytes);
    }

    /// The snapshot step's pickle is found as one snapshot and its analysis ends done.
    #[test]
    fn the_snapshot_step_runs_the_snapshot_analysis() {
        let o = outcome(2);
        assert!(o.ranks.is_empty(), "{o:?}");
        assert_eq!(o.snapshots, vec!["warmup/snapshot.pickle".to_string()]);
        assert_eq!(o.run_done, (1, 0), "{o:?}");
        // The generator's end state adds up with its trace (its one segment reserved first, its
        // blocks the allocations live at the cut and the gaps between them): the quality checks
        // run and find nothing.
        let codes: Vec<&str> = o.problems.iter().map(|(c, _)| c.as_str()).collect();
        assert!(codes.is_empty(), "{codes:?}");
        let [Summary::Snapshot(snap)] = &o.done[..] else {
            panic!("{o:?}")
        };
        assert_eq!(snap.protocol, 4);
        assert_eq!(snap.devices.len(), 1);
        let d = &snap.devices[0];
        assert_eq!(d.entries, SNAPSHOT_EVENTS);
        assert!(d.has_time);
        let actions: Vec<&str> = d.actions.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(
            actions,
            ["alloc", "free_completed", "free_requested", "segment_alloc"]
        );
        assert_eq!(d.actions.iter().map(|a| a.1).sum::<u64>(), SNAPSHOT_EVENTS);
        assert!((1_000_000..=3_500_000).contains(&o.bytes), "{}", o.bytes);
    }
}
