//! The pool's workers: started (warm ones before the first drop, adopted by a load), and
//! terminated (cancel, a new drop) or dead (only their own jobs fail).

use std::cell::Cell;
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker};

use super::{pool_limit, worker_url, EngineClient, Slot, WARM_WORKERS, WORKER_DB_NAME};
use crate::protocol::{AnalysisKind, Envelope, Response};
use crate::ui::state::{AppState, Phase};

impl EngineClient {
    pub(super) fn terminate_all(&self) {
        let mut inner = self.inner.borrow_mut();
        inner.generation += 1;
        for s in inner.slots.drain(..) {
            s.worker.terminate();
        }
        inner.pending.clear();
        inner.owner.clear();
        inner.beside.clear();
        inner.side = None;
        inner.compare_slot = None;
        inner.compare_seq = None;
        inner.comm_slot = None;
        inner.comm_parts = None;
        inner.export = None;
        if let Some(tx) = inner.export_done.take() {
            let _ = tx.send(Err("cancelled".into()));
        }
    }

    /// A worker for the current load: a warm one if any is left, else a new one. Returns its
    /// slot index (`usize::MAX` if no worker could be started; the phase says why).
    /// A load that holds a DB export starts DB workers instead (`Inner::db`).
    pub(super) fn spawn(&self) -> usize {
        let db = self.inner.borrow().db;
        let warm = if db {
            None
        } else {
            self.inner.borrow_mut().warm.pop()
        };
        let slot = match warm.map_or_else(|| self.start_worker(db), Ok) {
            Ok(slot) => slot,
            Err(e) => {
                self.state().phase.set(Phase::Failed(e));
                return usize::MAX;
            }
        };
        let mut inner = self.inner.borrow_mut();
        let idx = inner.slots.len();
        // Nothing is posted to a worker before it is bound, so its queue is empty here.
        slot.bind.set(Some((inner.generation, idx)));
        inner.slots.push(slot);
        idx
    }

    /// Starts the next warm worker, one at a time (called at install and when a warm worker is
    /// ready): only while the page is idle — before the first load, with none still starting —
    /// and up to [`WARM_WORKERS`] and the pool size this browser allows. So warm workers never
    /// compete with each other, nor with an analysis, for the CPU (on 2 cores a second start-up
    /// beside a one-rank analysis made it 0.3–0.5 s slower).
    pub(super) fn warm_up(&self) {
        {
            let inner = self.inner.borrow();
            let starting = inner.warm.iter().any(|s| !s.ready);
            let busy = !inner.slots.is_empty() || !inner.files.is_empty();
            if starting || busy || inner.warm.len() >= pool_limit().min(WARM_WORKERS) {
                return;
            }
        }
        // A failure is not shown here: the first load tries again and says why.
        if let Ok(slot) = self.start_worker(false) {
            self.inner.borrow_mut().warm.push(slot);
        }
    }

    /// A new worker (a DB worker when `db`), not yet bound to a load (its messages go to
    /// [`Self::on_warm_message`] until [`Self::spawn`] binds it).
    pub(super) fn start_worker(&self, db: bool) -> Result<Slot, String> {
        let worker = if db {
            let opts = web_sys::WorkerOptions::new();
            opts.set_name(WORKER_DB_NAME);
            Worker::new_with_options(&worker_url(), &opts)
        } else {
            Worker::new(&worker_url())
        }
        .map_err(|e| format!("cannot start a Web Worker: {e:?}"))?;
        let bind: Rc<Cell<Option<(u32, usize)>>> = Rc::new(Cell::new(None));
        let (this, b) = (self.clone(), bind.clone());
        let on_message =
            Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| match b.get() {
                Some((generation, idx)) => this.on_message(generation, idx, ev),
                None => this.on_warm_message(&b, ev),
            });
        let (this, b) = (self.clone(), bind.clone());
        let on_error =
            Closure::<dyn FnMut(web_sys::ErrorEvent)>::new(move |ev: web_sys::ErrorEvent| {
                match b.get() {
                    Some((generation, idx)) => this.on_worker_died(generation, idx, ev.message()),
                    // A warm worker that failed to start is dropped; a load starts a new one.
                    None => {
                        let mut inner = this.inner.borrow_mut();
                        if let Some(i) = inner.warm.iter().position(|s| Rc::ptr_eq(&s.bind, &b)) {
                            inner.warm.swap_remove(i).worker.terminate();
                        }
                    }
                }
            });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Ok(Slot {
            worker,
            bind,
            alive: true,
            ready: false,
            queue: Vec::new(),
            jobs: Vec::new(),
            runs: Default::default(),
            _on_message: on_message,
            _on_error: on_error,
        })
    }

    /// A message from a warm worker no load has adopted: only its `Ready` matters.
    pub(super) fn on_warm_message(&self, bind: &Rc<Cell<Option<(u32, usize)>>>, ev: MessageEvent) {
        if let Ok(Envelope {
            body: Response::Ready,
            ..
        }) = super::read_envelope(&ev.data())
        {
            {
                let mut inner = self.inner.borrow_mut();
                if let Some(s) = inner.warm.iter_mut().find(|s| Rc::ptr_eq(&s.bind, bind)) {
                    s.ready = true;
                }
            }
            self.warm_up();
        }
    }

    pub(super) fn on_worker_died(&self, generation: u32, idx: usize, message: String) {
        let state = self.state();
        let jobs = {
            let mut inner = self.inner.borrow_mut();
            if inner.generation != generation {
                return;
            }
            let Some(s) = inner.slots.get_mut(idx) else {
                return;
            };
            s.runs.clear();
            s.alive = false;
            s.jobs.clone()
        };
        let held = state.wasm_memory.with_untracked(|m| m.get(&idx).copied());
        state.failures.update(|f| {
            for job in &jobs {
                if !state.finished.with_untracked(|s| s.contains(job)) {
                    let input = job_input_bytes(&state, *job);
                    f.insert(
                        *job,
                        crate::views::notices::worker_stopped(&message, input, held),
                    );
                }
            }
        });
        for (_, target) in &jobs {
            state.rank_ticks.notify(*target);
        }
        self.count_running();
        self.check_all_done();
    }
}

/// The bytes of the files job `(kind, target)` reads: its snapshot file, or its rank folder's
/// files (0 when the inventory does not name it).
fn job_input_bytes(state: &AppState, (kind, target): (AnalysisKind, u32)) -> u64 {
    state.inventory.with_untracked(|inv| {
        let Some(inv) = inv else { return 0 };
        match kind {
            AnalysisKind::Snapshot => inv.snapshots.get(target as usize).map_or(0, |f| f.size),
            _ => inv
                .ranks
                .iter()
                .find(|r| r.index == target)
                .map_or(0, |r| r.files.iter().map(|f| f.size).sum()),
        }
    })
}
