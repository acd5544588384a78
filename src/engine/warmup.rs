//! JIT warm-up of an idle worker: small synthetic inputs ([`super::synth`]) run through the
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

use crate::engine::session::{Session, Sink};
use crate::engine::synth::{write_kineto_trace, KinetoSpec};
use crate::ingest::MemOpener;
use crate::protocol::{AnalysisKind, Envelope, FileMeta, Request, Response, Target};

/// Kernels of the warm-up's Kineto trace (~690 bytes each: ~2 MiB of JSON, tens of ms once
/// optimised) — enough for every hot function of the reader and the GPU analyses to reach
/// V8's tier-up budget.
pub const KINETO_KERNELS: u64 = 3_000;

/// The warm-up steps, in order: each is one synthetic drop.
pub const STEPS: usize = 1;

/// A sink that drops every answer.
struct Discard;

impl Sink for Discard {
    fn send(&mut self, _seq: u32, _response: Response) {}
    fn send_bytes(&mut self, _seq: u32, _response: Response, _bytes: &[u8]) {}
}

/// Runs warm-up step `step` (`0..STEPS`): builds its input in memory and runs it through a
/// fresh [`Session`] (`Open`, then `Run` of [`AnalysisKind::ALL`] over every target). Returns
/// `false` when `step` is past the last one (nothing ran).
pub fn run_step(step: usize) -> bool {
    let mut opener = MemOpener::new();
    match step {
        0 => {
            let mut trace = Vec::with_capacity(KINETO_KERNELS as usize * 700);
            let spec = KinetoSpec {
                kernels: KINETO_KERNELS,
                steps: 5,
                rank: 0,
            };
            // Writing to a Vec cannot fail.
            let _ = write_kineto_trace(&mut trace, &spec);
            opener.add("warmup/rank0.pt.trace.json", trace);
        }
        _ => return false,
    }
    drive(&opener);
    true
}

/// `Open` of every file of `opener`, then `Run` of every analysis over every target.
fn drive(opener: &MemOpener) {
    let files: Vec<FileMeta> = opener
        .list()
        .into_iter()
        .map(|f| FileMeta {
            path: f.path,
            size: f.size,
        })
        .collect();
    let mut session = Session::new();
    let mut inventory = Inventory::default();
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
                analyses: AnalysisKind::ALL.to_vec(),
                targets,
            },
        },
        opener,
        &mut Discard,
    );
}

/// Counts the targets of the `Inventory` answer.
#[derive(Default)]
struct Inventory {
    ranks: u32,
    snapshots: u32,
}

impl Sink for Inventory {
    fn send(&mut self, _seq: u32, response: Response) {
        if let Response::Inventory(inv) = response {
            self.ranks = inv.ranks.len() as u32;
            self.snapshots = inv.snapshots.len() as u32;
        }
    }
    fn send_bytes(&mut self, seq: u32, response: Response, _bytes: &[u8]) {
        self.send(seq, response);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::session::Collected;

    /// The Kineto step's trace is a real input: one rank, and the anomaly run of it ends done
    /// with the step markers the generator wrote.
    #[test]
    fn the_kineto_step_analyses_its_input() {
        assert!(run_step(0));
        assert!(!run_step(STEPS));
        let mut trace = Vec::new();
        let spec = KinetoSpec {
            kernels: KINETO_KERNELS,
            steps: 5,
            rank: 0,
        };
        write_kineto_trace(&mut trace, &spec).unwrap();
        let mut opener = MemOpener::new();
        opener.add("warmup/rank0.pt.trace.json", trace);
        let files = opener
            .list()
            .into_iter()
            .map(|f| FileMeta {
                path: f.path,
                size: f.size,
            })
            .collect();
        let mut session = Session::new();
        let mut out = Collected::default();
        let open = Request::Open { files };
        session.handle(Envelope { seq: 1, body: open }, &opener, &mut out);
        let run = Request::Run {
            analyses: vec![AnalysisKind::Anomaly],
            targets: vec![Target::Rank(0)],
        };
        session.handle(Envelope { seq: 2, body: run }, &opener, &mut out);
        let ranks = out.out.iter().find_map(|(_, r)| match r {
            Response::Inventory(inv) => Some(inv.ranks.len()),
            _ => None,
        });
        assert_eq!(ranks, Some(1));
        let done = out.out.iter().find_map(|(_, r)| match r {
            Response::RunDone { done, .. } => Some(*done),
            _ => None,
        });
        assert_eq!(done, Some(1));
    }
}
