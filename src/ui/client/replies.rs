//! The routing of worker replies by `seq` and kind into the page signals: progress, rank
//! done, problems, snapshot summaries, and the end of the run.

use js_sys::Reflect;
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use web_sys::MessageEvent;

use super::{download, now_ms, EngineClient};
use crate::protocol::{Envelope, Response, Summary};
use crate::ui::state::{FileProgress, Phase};

impl EngineClient {
    /// Sets [`AppState::running`]: the jobs of each live worker's current `Run` (the first
    /// not answered by `RunDone`) that have no result or failure yet.
    ///
    /// [`AppState::running`]: crate::ui::state::AppState::running
    pub(super) fn count_running(&self) {
        let state = self.state();
        let n = {
            let inner = self.inner.borrow();
            state.finished.with_untracked(|done| {
                inner
                    .slots
                    .iter()
                    .filter(|s| s.alive)
                    .filter_map(|s| s.runs.front())
                    .flatten()
                    .filter(|j| !done.contains(j))
                    .count()
            })
        };
        state.running.set(n as u32);
    }

    pub(super) fn check_all_done(&self) {
        let state = self.state();
        let done = {
            let inner = self.inner.borrow();
            inner.slots.iter().all(|s| s.runs.is_empty())
        };
        if done && state.phase.get_untracked() == Phase::Running {
            state.phase.set(Phase::Done {
                elapsed_ms: now_ms() - state.started_ms.get_untracked(),
            });
            self.start_comm_join();
        }
    }

    /// A snapshot's summary: its first one (the `Run`'s done reply) or a new one after a
    /// settings change ([`crate::protocol::SnapReply::Summary`], see [`Self::set_snapshot`]).
    pub(super) fn snapshot_done(&self, target: u32, s: crate::protocol::SnapshotSummaryDto) {
        let state = self.state();
        state.snapshots.update(|m| {
            m.insert(target, s);
        });
        if state.selected_snapshot.get_untracked().is_none() {
            state.selected_snapshot.set(Some(target));
            // Only snapshots dropped: show them rather than the inventory.
            let no_ranks = state
                .inventory
                .with_untracked(|i| i.as_ref().is_some_and(|i| i.ranks.is_empty()));
            if no_ranks && state.tab.get_untracked() == crate::ui::state::Tab::Inventory {
                state.tab.set(crate::ui::state::Tab::Snapshot);
            }
        }
    }

    /// Records the summary a snapshot settings change replied with.
    pub fn set_snapshot(&self, target: u32, s: crate::protocol::SnapshotSummaryDto) {
        self.snapshot_done(target, s);
    }

    pub(super) fn on_message(&self, generation: u32, idx: usize, ev: MessageEvent) {
        if self.inner.borrow().generation != generation {
            return;
        }
        let data = ev.data();
        let env: Envelope<Response> = match super::read_envelope(&data) {
            Ok(e) => e,
            Err(e) => {
                self.state()
                    .status
                    .set(format!("unreadable message from a worker: {e}"));
                return;
            }
        };
        if self.inner.borrow().slots.get(idx).is_none() {
            return;
        }
        let state = self.state();
        match env.body {
            Response::Ready => {
                let mut inner = self.inner.borrow_mut();
                if let Some(s) = inner.slots.get_mut(idx) {
                    s.ready = true;
                    for msg in s.queue.drain(..) {
                        let _ = s.worker.post_message(&msg);
                    }
                }
            }
            Response::WorkerStats { wasm_memory_bytes } => {
                state.wasm_memory.update(|m| {
                    m.insert(idx, wasm_memory_bytes);
                });
            }
            Response::Progress(p) if self.inner.borrow().compare_seq == Some(env.seq) => {
                state.compare_read.update(|m| {
                    m.insert(p.file, (p.bytes_done, p.bytes_total));
                });
            }
            Response::Progress(p) => {
                let file = p.file;
                state.progress.update(|m| {
                    m.insert(file, FileProgress { last: p });
                });
                state.file_ticks.notify(file);
            }
            Response::Done { target, summary } => {
                state.finished.update(|f| {
                    f.insert((summary.analysis(), target));
                });
                self.count_running();
                // A rank this worker found beyond the targets it was given (the other ranks of
                // a split merged trace, gpu-traces.md §6) is asked of this worker.
                self.inner
                    .borrow_mut()
                    .owner
                    .entry((summary.analysis(), target))
                    .or_insert(idx);
                match summary {
                    Summary::Memory(s) => state.summaries.update(|m| {
                        m.insert(target, s);
                    }),
                    Summary::Anomaly(s) => {
                        if state.anomaly_rank.get_untracked().is_none() {
                            state.anomaly_rank.set(Some(target));
                        }
                        state.anomaly.update(|m| {
                            m.insert(target, s);
                        });
                    }
                    Summary::Snapshot(s) => self.snapshot_done(target, s),
                    Summary::Comm(_) => {}
                    Summary::Cluster(s) => {
                        state.cluster.set(Some(std::sync::Arc::new(*s)));
                        if state.tab.get_untracked() == crate::ui::state::Tab::Inventory {
                            state.tab.set(crate::ui::state::Tab::Cluster);
                        }
                    }
                }
                // The target's rank card reads what was just stored.
                state.rank_ticks.notify(target);
            }
            Response::TargetFailed {
                analysis,
                target,
                message,
            } => {
                state.finished.update(|f| {
                    f.insert((analysis, target));
                });
                state.failures.update(|m| {
                    m.insert((analysis, target), message);
                });
                self.count_running();
                state.rank_ticks.notify(target);
            }
            Response::Problems(p) => {
                state.problems.update(|v| v.extend(p.kept));
                state.problems_total.update(|t| *t += p.total);
            }
            Response::RunDone { .. } => {
                if let Some(s) = self.inner.borrow_mut().slots.get_mut(idx) {
                    s.runs.pop_front();
                }
                self.count_running();
                self.check_all_done();
            }
            Response::ExportChunk { .. } => {
                let buf = Reflect::get(&data, &"buf".into()).unwrap_or(JsValue::UNDEFINED);
                if let Some(acc) = self.inner.borrow().export.as_ref() {
                    acc.parts.push(&buf);
                }
            }
            Response::ExportDone { file_name, mime } => {
                let (acc, tx) = {
                    let mut inner = self.inner.borrow_mut();
                    (inner.export.take(), inner.export_done.take())
                };
                let res = match acc {
                    Some(acc) => download(&acc.parts, &file_name, &mime),
                    None => Err("export chunks lost".into()),
                };
                if let Some(tx) = tx {
                    let _ = tx.send(res);
                }
            }
            body => {
                let tx = self.inner.borrow_mut().pending.remove(&env.seq);
                let buf = Reflect::get(&data, &"buf".into()).unwrap_or(JsValue::UNDEFINED);
                if tx.is_some() && !buf.is_undefined() {
                    self.inner.borrow_mut().beside.insert(env.seq, buf);
                }
                match (tx, body) {
                    (Some(tx), body) => {
                        // Nobody waits any more (e.g. a gather that failed on another part):
                        // drop the buffer that came beside.
                        if tx.send(body).is_err() {
                            self.inner.borrow_mut().beside.remove(&env.seq);
                        }
                    }
                    (None, Response::Failed(f)) => {
                        state.status.set(f.message);
                    }
                    (None, _) => {}
                }
            }
        }
    }
}
