//! `EngineClient`: the UI side of the protocol (ARCHITECTURE.md: "Web edges"). It owns a pool of
//! Web Workers, posts [`Request`]s, routes replies by `seq`, and writes streamed run
//! messages (progress, rank done, problems) into the [`AppState`] signals.
//!
//! Work: one unit per target — a rank folder with every analysis it can run (memory,
//! anomaly), or a snapshot pickle — so ONE worker reads each input file once for all of the
//! target's analyses ([`Request::Run`] with all of them; the worker's store shares the
//! `trace_view.json` pass). Pool: N = min(`navigator.hardwareConcurrency`, targets,
//! [`MAX_WORKERS`]) workers, each given all `File` handles (cheap: handles, not bytes) and a
//! share of the targets, largest input first to the least loaded worker, one `Run` per
//! target. A target's queries go to the worker that analysed it ([`EngineClient::query`]);
//! every analysis' run replies the same way ([`Response::Done`] with its
//! [`Summary`](crate::protocol::Summary), or [`Response::TargetFailed`]), so routing has one
//! arm per reply shape, not per analysis.
//! One target failing never stops the others: failures are per (analysis, target), and a
//! worker that dies takes only its own jobs down.
//!
//! Exports are written from the results the workers hold, and no file is read again: when
//! one worker holds every rank folder (one rank, or one worker), that worker writes them;
//! when the ranks are spread over the pool, every holder writes its part and one joins them
//! ([`Request::ExportPart`] rounds, then [`Request::ExportJoin`]; the parts travel as
//! `ArrayBuffer`s through this client, which applies no rule to them; see
//! [`EngineClient::export`]). The side files are read once too: the first worker's `Open`
//! reply carries their bytes, posted beside the other workers' `Open`.
//!
//! Cancel terminates every worker (a worker in a synchronous read cannot receive messages)
//! and keeps the file list, so the user can run again.
//!
//! Warm workers: a fresh worker needs ~0.1 s to fetch, compile and instantiate its wasm on an
//! idle machine and several times that beside a running analysis (a two-rank drop of 5.6 MB
//! took 0.9 s, of which the second worker's start-up was 0.44 s). So the page starts up to
//! [`WARM_WORKERS`] workers while it is idle before the first drop, one after the other
//! ([`EngineClient::warm_up`]); they wait unbound (no generation, no slot) until a load adopts
//! them ([`EngineClient::spawn`]). Cancel and a new drop terminate only the adopted ones.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use futures::channel::oneshot;
use js_sys::{Array, Object, Reflect};
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use web_sys::{File, MessageEvent, Worker};

use super::state::{AppState, Phase};
use crate::protocol::{
    AnalysisKind, Envelope, FileMeta, InventoryDto, Query, Reply, Request, Response, Target,
};

mod comm;
mod compare;
mod export;
mod plan;
mod pool;
mod replies;

use export::download;
use plan::{with_meta, work};

/// Upper bound of the pool size (each worker may use up to 4 GiB of wasm memory).
pub const MAX_WORKERS: usize = 4;

/// Workers started when the page opens, before any drop (at most the pool size): one serves
/// the inventory and the first target, the second the next target of a multi-rank drop.
pub const WARM_WORKERS: usize = 2;

/// The worker's loader (`web/worker_loader.js`, copied by index.html).
const WORKER_URL: &str = "./worker_loader.js";

/// The worker name that makes the loader start the DB worker (`worker-db`, with the Ascend DB
/// reader): given only for drops that hold a DB export ([`plan::holds_db`]), so other drops
/// never fetch its wasm. The single file carries no DB worker and ignores the name: there a
/// DB drop gets the worker, which reads the folder's text files and says that the DB export
/// is not read.
const WORKER_DB_NAME: &str = "proflens-db";

/// The worker script to start: the single-file build (scripts/postbuild.py) publishes a
/// `blob:` URL as `window.PROFLENS_WORKER_URL`, since `file://` pages cannot start workers
/// from files; otherwise trunk's loader next to the page.
fn worker_url() -> String {
    web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w, &"PROFLENS_WORKER_URL".into()).ok())
        .and_then(|v| v.as_string())
        .unwrap_or_else(|| WORKER_URL.to_string())
}

struct Slot {
    worker: Worker,
    /// (generation, slot index) the worker's messages are routed to; `None` while it is a
    /// warm worker no load has adopted yet.
    bind: Rc<Cell<Option<(u32, usize)>>>,
    /// False once the worker died (its results are gone).
    alive: bool,
    ready: bool,
    queue: Vec<JsValue>,
    /// The jobs given to this worker.
    jobs: Vec<Job>,
    /// The `Run` requests posted and not yet answered by `RunDone`, as the jobs each runs, in
    /// the order posted: the worker runs them in turn, so the first is the one running.
    runs: std::collections::VecDeque<Vec<Job>>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::ErrorEvent)>,
}

/// One analysis of one target (rank folder index or snapshot index).
type Job = (AnalysisKind, u32);

/// One unit of the pool's work: a target with the analyses to run on it, and the bytes of
/// its input (for balancing).
struct Work {
    target: Target,
    analyses: Vec<AnalysisKind>,
    bytes: u64,
}

struct ExportAcc {
    parts: Array,
}

struct Inner {
    state: AppState,
    generation: u32,
    slots: Vec<Slot>,
    pending: HashMap<u32, oneshot::Sender<Response>>,
    next_seq: u32,
    files: Vec<(FileMeta, File)>,
    owner: BTreeMap<Job, usize>,
    export: Option<ExportAcc>,
    export_done: Option<oneshot::Sender<Result<String, String>>>,
    /// Buffers that came beside a reply routed by `seq` (a side-file bundle, an export part).
    beside: HashMap<u32, JsValue>,
    /// The side-file bundle of the first worker's `Open`, posted beside the others'.
    side: Option<JsValue>,
    /// The worker that read side B of "Compare with…" and holds the comparison.
    compare_slot: Option<usize>,
    /// `seq` of the running [`Request::Compare`] (its progress is B's, not the drop's).
    compare_seq: Option<u32>,
    /// The worker that joined the ranks' communication tables and holds the report.
    comm_slot: Option<usize>,
    /// Every worker's communication tables (kept for a join in the other mode).
    comm_parts: Option<Array>,
    /// Warm workers started before the drop, not yet adopted (see the module doc).
    warm: Vec<Slot>,
    /// The current load holds a DB export: its workers are DB workers, started for it (warm
    /// workers are plain ones and stay warm for a later drop).
    db: bool,
}

/// Handle to the worker pool (cheap to clone; not `Send`, so kept in a thread-local).
#[derive(Clone)]
pub struct EngineClient {
    inner: Rc<RefCell<Inner>>,
}

thread_local! {
    static CLIENT: RefCell<Option<EngineClient>> = const { RefCell::new(None) };
}

/// The page's client; created by [`install`].
pub fn client() -> EngineClient {
    CLIENT
        .with(|c| c.borrow().clone())
        .expect("client installed at start-up")
}

/// Creates the client for `state` (once, at mount).
pub fn install(state: AppState) {
    let c = EngineClient {
        inner: Rc::new(RefCell::new(Inner {
            state,
            generation: 0,
            slots: Vec::new(),
            pending: HashMap::new(),
            next_seq: 1,
            files: Vec::new(),
            owner: BTreeMap::new(),
            export: None,
            export_done: None,
            beside: HashMap::new(),
            side: None,
            compare_slot: None,
            compare_seq: None,
            comm_slot: None,
            comm_parts: None,
            warm: Vec::new(),
            db: false,
        })),
    };
    CLIENT.with(|slot| *slot.borrow_mut() = Some(c.clone()));
    c.warm_up();
}

/// The most workers this browser's pool runs at once: `navigator.hardwareConcurrency`, at most
/// [`MAX_WORKERS`], at least 1.
fn pool_limit() -> usize {
    web_sys::window()
        .map(|w| w.navigator().hardware_concurrency() as usize)
        .unwrap_or(1)
        .clamp(1, MAX_WORKERS)
}

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or_else(js_sys::Date::now)
}

impl EngineClient {
    fn state(&self) -> AppState {
        self.inner.borrow().state
    }

    /// Loads `files` (relative path + handle): inventory first, then every analysis of every
    /// target it can run on (see [`jobs`]) on the pool.
    pub async fn load(&self, files: Vec<(String, File)>) {
        let state = self.state();
        state.cluster.set(None);
        state.cluster_open_rank.set(None);
        self.load_files(files).await;
    }

    /// "Open this rank" of the cluster view: loads the rank's folder (or trace files) like
    /// [`Self::load`], keeps the cluster view, and shows the rank's steps once analysed.
    /// `rank` is the summary row ([`crate::protocol::cluster_view::ClusterRankRow::index`]).
    pub async fn load_rank(&self, files: Vec<(String, File)>, rank: u32) {
        self.state().cluster_open_rank.set(Some(rank));
        self.load_files(files).await;
    }

    async fn load_files(&self, files: Vec<(String, File)>) {
        let state = self.state();
        self.terminate_all();
        state.reset();
        state.started_ms.set(now_ms());
        let files = with_meta(files);
        state
            .files
            .set(files.iter().map(|(m, _)| m.clone()).collect());
        {
            let mut inner = self.inner.borrow_mut();
            inner.db = plan::holds_db(&files);
            inner.files = files;
        }
        self.start().await;
    }

    /// Runs the analysis again on the files of the last load (after a Cancel).
    pub async fn restart(&self) {
        let state = self.state();
        self.terminate_all();
        state.reset();
        state.started_ms.set(now_ms());
        self.start().await;
    }

    async fn start(&self) {
        let state = self.state();
        if self.inner.borrow().files.is_empty() {
            state.phase.set(Phase::Failed(
                "No files were given: the folder is empty.".into(),
            ));
            return;
        }
        let first = self.spawn();
        let inventory = match self.open(first).await {
            Some(inv) => inv,
            None => return,
        };
        let runnable = work(&inventory);
        let rank_drill = state.cluster_open_rank.get_untracked().is_some()
            && state.cluster.with_untracked(|c| c.is_some());
        if rank_drill && !inventory.ranks.is_empty() {
            // "open this rank": its steps, as soon as the tab applies (the inventory's Steps
            // tab needs a rank folder with a kernel source or a trace)
            let steps = inventory.ranks.iter().any(|r| {
                r.analyses
                    .iter()
                    .any(|a| a.analysis == AnalysisKind::Anomaly && a.can_run)
            });
            if steps {
                state.tab.set(super::state::Tab::Anomaly);
            }
        }
        state.inventory.set(Some(inventory));
        if runnable.is_empty() {
            state.phase.set(Phase::Done {
                elapsed_ms: now_ms() - state.started_ms.get_untracked(),
            });
            return;
        }
        state.phase.set(Phase::Running);
        state
            .selected_rank
            .set(runnable.iter().find_map(|w| match w.target {
                Target::Rank(i) => Some(i),
                Target::Snapshot(_) | Target::Summary(_) => None,
            }));
        // The steps & bubbles view starts on the first rank folder it can show, whichever
        // worker finishes first (it was the first rank done, so a 2-rank drop showed rank 1
        // when its worker won the race; a link in the address bar may pick another rank later).
        state
            .anomaly_rank
            .set(runnable.iter().find_map(|w| match w.target {
                Target::Rank(i) if w.analyses.contains(&AnalysisKind::Anomaly) => Some(i),
                _ => None,
            }));
        let n = pool_limit().min(runnable.len()).max(1);
        let mut slots = vec![first];
        for _ in 1..n {
            let s = self.spawn();
            self.post_open(s);
            slots.push(s);
        }
        // Largest inputs first, each to the least loaded worker.
        let mut order = runnable;
        crate::base::sort::sort_by(&mut order, |a, b| {
            b.bytes.cmp(&a.bytes).then(a.target.cmp(&b.target))
        });
        let mut load = vec![0u64; n];
        let mut assign: Vec<Vec<Work>> = (0..n).map(|_| Vec::new()).collect();
        for w in order {
            let k = (0..n).min_by_key(|&k| (load[k], k)).unwrap_or(0);
            load[k] += w.bytes;
            assign[k].push(w);
        }
        for (k, mut work) in assign.into_iter().enumerate() {
            let slot = slots[k];
            crate::base::sort::sort_by_key(&mut work, |w| w.target);
            {
                let mut inner = self.inner.borrow_mut();
                let jobs: Vec<Job> = work
                    .iter()
                    .flat_map(|w| w.analyses.iter().map(|&a| (a, w.target.index())))
                    .collect();
                for j in &jobs {
                    inner.owner.insert(*j, slot);
                }
                if let Some(s) = inner.slots.get_mut(slot) {
                    s.jobs = jobs;
                    s.runs = work
                        .iter()
                        .map(|w| w.analyses.iter().map(|&a| (a, w.target.index())).collect())
                        .collect();
                }
            }
            for w in work {
                let run = Request::Run {
                    analyses: w.analyses,
                    targets: vec![w.target],
                };
                self.post(slot, run, None);
            }
        }
        self.count_running();
    }

    /// Stops everything now: terminates the workers; results so far stay visible.
    pub fn cancel(&self) {
        let state = self.state();
        self.terminate_all();
        if matches!(
            state.phase.get_untracked(),
            Phase::Running | Phase::Inventory
        ) {
            state.phase.set(Phase::Cancelled);
        }
    }

    /// Posts `Open` with every file handle to `slot`, and the first worker's side-file
    /// bundle beside it when there is one (so the side files are not read again).
    fn post_open(&self, slot: usize) -> u32 {
        let side = self.inner.borrow().side.clone().map(|b| Array::of1(&b));
        let (metas, handles) = {
            let inner = self.inner.borrow();
            let handles = Array::new();
            for (_, f) in &inner.files {
                handles.push(f);
            }
            (
                inner.files.iter().map(|(m, _)| m.clone()).collect(),
                handles,
            )
        };
        self.post_with(
            slot,
            Request::Open { files: metas },
            Some(handles),
            side,
            false,
        )
    }

    async fn open(&self, slot: usize) -> Option<InventoryDto> {
        let seq = self.post_open(slot);
        let rx = self.wait(seq);
        match rx.await {
            Ok(Response::Inventory(inv)) => {
                let mut inner = self.inner.borrow_mut();
                inner.side = inner.beside.remove(&seq);
                Some(inv)
            }
            Ok(Response::Failed(f)) => {
                self.state().phase.set(Phase::Failed(f.message));
                None
            }
            Ok(other) => {
                self.state().phase.set(Phase::Failed(format!(
                    "unexpected reply to Open: {}",
                    reply_name(&other)
                )));
                None
            }
            Err(_) => None,
        }
    }

    fn wait(&self, seq: u32) -> oneshot::Receiver<Response> {
        let (tx, rx) = oneshot::channel();
        self.inner.borrow_mut().pending.insert(seq, tx);
        rx
    }

    fn post(&self, slot: usize, body: Request, files: Option<Array>) -> u32 {
        self.post_with(slot, body, files, None, false)
    }

    /// Posts `body` to `slot` with `File` handles and byte buffers beside it: copied by the
    /// structured clone (one buffer may go to several workers), or, with `transfer`, moved
    /// to the worker (the buffers are unusable here afterwards).
    fn post_with(
        &self,
        slot: usize,
        body: Request,
        files: Option<Array>,
        bufs: Option<Array>,
        transfer: bool,
    ) -> u32 {
        let mut inner = self.inner.borrow_mut();
        let seq = inner.next_seq;
        inner.next_seq += 1;
        let Some(s) = inner.slots.get_mut(slot) else {
            return seq;
        };
        let msg = Object::new();
        // The envelope as bytes (`protocol::codec`): one `Uint8Array`.
        let env: JsValue = match crate::protocol::codec::to_bytes(&Envelope { seq, body }) {
            Ok(b) => js_sys::Uint8Array::from(b.as_slice()).into(),
            Err(_) => JsValue::NULL,
        };
        let _ = Reflect::set(&msg, &"env".into(), &env);
        if let Some(f) = files {
            let _ = Reflect::set(&msg, &"files".into(), &f);
        }
        let moved = match bufs {
            Some(b) => {
                let _ = Reflect::set(&msg, &"bufs".into(), &b);
                transfer.then_some(b)
            }
            None => None,
        };
        if s.ready {
            let _ = match moved {
                Some(b) => s.worker.post_message_with_transfer(&msg, &b),
                None => s.worker.post_message(&msg),
            };
        } else {
            s.queue.push(msg.into());
        }
        seq
    }

    /// Sends `q` to the worker that ran its analysis on its target ([`Query::analysis`],
    /// [`Query::target`]) and waits for the reply.
    pub async fn query(&self, q: Query) -> Result<Reply, String> {
        let (analysis, target) = (q.analysis(), q.target());
        let slot = self.inner.borrow().owner.get(&(analysis, target)).copied();
        let Some(slot) = slot else {
            return Err(format!("{analysis:?} target {target} is not loaded"));
        };
        let seq = self.post(slot, Request::Query(q), None);
        match self.wait(seq).await {
            Ok(Response::Reply(r)) => Ok(r),
            Ok(Response::Failed(f)) => Err(f.message),
            Ok(other) => Err(format!(
                "unexpected reply to a query: {}",
                reply_name(&other)
            )),
            Err(_) => Err("the worker stopped (cancelled or reloaded)".into()),
        }
    }
}

/// The name of a reply the caller did not expect, for its error message: the variant, not its
/// contents (a `{:?}` of the whole reply puts every protocol type's `Debug` into the page's
/// wasm).
pub fn reply_name(r: &Response) -> &'static str {
    match r {
        Response::Ready => "Ready",
        Response::Inventory(_) => "Inventory",
        Response::Progress(_) => "Progress",
        Response::Done { .. } => "Done",
        Response::TargetFailed { .. } => "TargetFailed",
        Response::Problems(_) => "Problems",
        Response::RunDone { .. } => "RunDone",
        Response::Reply(r) => query_reply_name(r),
        Response::ExportChunk { .. } => "ExportChunk",
        Response::ExportDone { .. } => "ExportDone",
        Response::ExportPart { .. } => "ExportPart",
        Response::WorkerStats { .. } => "WorkerStats",
        Response::Failed(_) => "Failed",
    }
}

/// The error message of a reply the caller did not expect, named by [`reply_name`] or one of
/// its helpers (one formatting for every panel).
pub fn unexpected(name: &str) -> String {
    format!("unexpected reply {name}")
}

/// [`reply_name`] for the answer to a query.
pub fn query_reply_name(r: &Reply) -> &'static str {
    match r {
        Reply::Memory(m) => memory_reply_name(m),
        Reply::Anomaly(a) => anomaly_reply_name(a),
        Reply::Snapshot(s) => snap_reply_name(s),
        Reply::Compare(_) => "Reply(Compare)",
        Reply::Comm(_) => "Reply(Comm)",
    }
}

/// [`reply_name`] for the answer to a memory query.
pub fn memory_reply_name(r: &crate::protocol::memory::MemoryReply) -> &'static str {
    use crate::protocol::memory::MemoryReply;
    match r {
        MemoryReply::Rows(_) => "Reply(Memory(Rows))",
        MemoryReply::Curve(_) => "Reply(Memory(Curve))",
        MemoryReply::LiveAt(_) => "Reply(Memory(LiveAt))",
        MemoryReply::Sites(_) => "Reply(Memory(Sites))",
        MemoryReply::Stack(_) => "Reply(Memory(Stack))",
    }
}

/// [`reply_name`] for the answer to an anomaly query.
pub fn anomaly_reply_name(r: &crate::protocol::anomaly::AnomalyReply) -> &'static str {
    use crate::protocol::anomaly::AnomalyReply;
    match r {
        AnomalyReply::Steps { .. } => "Reply(Anomaly(Steps))",
        AnomalyReply::Bubbles(_) => "Reply(Anomaly(Bubbles))",
        AnomalyReply::Bubble(_) => "Reply(Anomaly(Bubble))",
        AnomalyReply::Structure(_) => "Reply(Anomaly(Structure))",
        AnomalyReply::Ops(_) => "Reply(Anomaly(Ops))",
        AnomalyReply::Gpu(_) => "Reply(Anomaly(Gpu))",
        AnomalyReply::Collectives(_) => "Reply(Anomaly(Collectives))",
        AnomalyReply::Timeline(_) => "Reply(Anomaly(Timeline))",
        AnomalyReply::KernelAt(_) => "Reply(Anomaly(KernelAt))",
        AnomalyReply::Search(_) => "Reply(Anomaly(Search))",
        AnomalyReply::Flows(_) => "Reply(Anomaly(Flows))",
    }
}

/// [`reply_name`] for the answer to a snapshot query.
pub fn snap_reply_name(r: &crate::protocol::snapshot::SnapReply) -> &'static str {
    use crate::protocol::snapshot::SnapReply;
    match r {
        SnapReply::Summary(_) => "Reply(Snapshot(Summary))",
        SnapReply::Curve(_) => "Reply(Snapshot(Curve))",
        SnapReply::Live(_) => "Reply(Snapshot(Live))",
        SnapReply::Bands(_) => "Reply(Snapshot(Bands))",
        SnapReply::Stack(_) => "Reply(Snapshot(Stack))",
        SnapReply::Segments(_) => "Reply(Snapshot(Segments))",
        SnapReply::Allocator(_) => "Reply(Snapshot(Allocator))",
    }
}

/// The envelope of a worker message (`env`, bytes of `protocol::codec`).
pub fn read_envelope(data: &JsValue) -> Result<Envelope<Response>, String> {
    let env = Reflect::get(data, &"env".into()).unwrap_or(JsValue::UNDEFINED);
    let bytes = env
        .dyn_ref::<js_sys::Uint8Array>()
        .map(js_sys::Uint8Array::to_vec);
    crate::protocol::codec::from_bytes(bytes.as_deref().unwrap_or_default()).map_err(|e| e.0)
}
