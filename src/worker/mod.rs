//! Wasm edge: the Web Worker side of the protocol (ARCHITECTURE.md: "Web edges").
//!
//! The worker only moves bytes and `File` handles: it decodes each posted
//! [`Envelope<Request>`](crate::protocol::Envelope), keeps the `File` objects of the last
//! [`Request::Open`] in a [`FileOpener`] (and those of side B of a [`Request::Compare`] in a
//! second one, which serves that request), and hands the request to the core's
//! [`Session`], which runs the analyses and answers with [`Response`]s. Progress comes from
//! the [`BlobReader`] itself while the core reads. A worker busy in a request cannot receive
//! messages, so Cancel is the UI terminating the worker and starting a new one.
//!
//! Wire shape: UI → worker `{ env, files?, bufs? }` with `env` the envelope's bytes
//! (`protocol::codec`, a `Uint8Array`), `files` an `Array` of
//! `File` and `bufs` an `Array` of `ArrayBuffer` (a side-file bundle beside `Open`, export
//! parts beside `ExportPart` / `ExportJoin`); worker → UI `{ env, buf? }` with `buf` a
//! transferred `ArrayBuffer` (export chunks and parts, the side-file bundle).

pub mod blob_reader;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, File, MessageEvent};

pub use blob_reader::{BlobReader, FileOpener};

use crate::engine::session::warmup;
use crate::engine::session::{Session, Sink};
use crate::protocol::{codec, Envelope, Failure, Request, Response};

struct WorkerState {
    session: Session,
    opener: FileOpener,
    /// The files of side B of "Compare with…" ([`Request::Compare`]).
    compare_opener: FileOpener,
    /// `seq` of the request being served (progress messages carry it).
    seq: Rc<Cell<u32>>,
}

thread_local! {
    static STATE: RefCell<Option<WorkerState>> = const { RefCell::new(None) };
}

/// Entry point of the worker binary: installs the message handler and posts `Ready`.
///
/// When the loader (`web/worker_loader.js`) found JavaScript Promise Integration it sets
/// `self.proflensJspi`; then the loader owns `onmessage`, queues the messages and hands them in
/// one at a time through [`accept`] + [`handle`] (exported as `proflens_worker_accept` and
/// `proflens_worker_handle`, the latter wrapped in `WebAssembly.promising`, so a read may suspend
/// it), and every [`BlobReader`] reads slices the reader worker prefetched.
pub fn run() {
    console_error_panic_hook::set_once();
    let seq = Rc::new(Cell::new(0));
    STATE.with(|s| {
        *s.borrow_mut() = Some(WorkerState {
            session: Session::new(),
            opener: FileOpener::new(Vec::new(), Vec::new(), None),
            compare_opener: FileOpener::new(Vec::new(), Vec::new(), None),
            seq,
        })
    });
    let jspi = Reflect::get(&js_sys::global(), &"proflensJspi".into())
        .map(|v| v.is_truthy())
        .unwrap_or(false);
    if jspi {
        blob_reader::enable_prefetch();
    } else {
        let handler =
            Closure::<dyn FnMut(MessageEvent)>::new(|ev: MessageEvent| on_message(ev.data()));
        scope().set_onmessage(Some(handler.as_ref().unchecked_ref()));
        handler.forget();
    }
    post(0, &Response::Ready, None);
    schedule_warm_up(0, WARM_UP_DELAY_MS);
}

/// How long a fresh worker waits after `Ready` before its first warm-up step, in ms. A drop
/// made as the page opens (the tab still compiling the modules and starting the other
/// workers on the same cores) is then not slowed by warm-up work; measured in ARCHITECTURE.md
/// "JIT warm-up of warm workers".
const WARM_UP_DELAY_MS: i32 = 400;

thread_local! {
    /// Set by the first request: the worker is adopted and its warm-up stops.
    static ADOPTED: Cell<bool> = const { Cell::new(false) };
}

/// Runs [`warmup`] step `step` in a later task of the worker's event loop, `delay_ms` from now
/// (so a request that arrives meanwhile is served after at most one step), then schedules the
/// next one, until the steps end or a request came.
fn schedule_warm_up(step: usize, delay_ms: i32) {
    let next = Closure::once_into_js(move || {
        if ADOPTED.with(Cell::get) {
            return;
        }
        if warmup::run_step(step) {
            schedule_warm_up(step + 1, 0);
        }
    });
    let _ = scope()
        .set_timeout_with_callback_and_timeout_and_arguments_0(next.unchecked_ref(), delay_ms);
}

thread_local! {
    /// The message [`proflens_worker_accept`] took, for [`proflens_worker_handle`].
    static ACCEPTED: RefCell<Option<JsValue>> = const { RefCell::new(None) };
}

/// JSPI mode, step 1 (synchronous): takes the `data` of the next message event. Exported by
/// the worker binary as `proflens_worker_accept` (not from here: an export of this library
/// would be linked into the UI's wasm too, and with it the whole engine).
pub fn accept(data: JsValue) {
    ADOPTED.with(|a| a.set(true));
    ACCEPTED.with(|a| *a.borrow_mut() = Some(data));
}

/// JSPI mode, step 2: serves the message taken by [`accept`]. Exported by the worker binary as
/// `proflens_worker_handle`, which the loader calls through `WebAssembly.promising`, so the reads
/// inside may suspend it; the loader queues messages, so no second one enters while this one is
/// suspended.
pub fn handle() {
    if let Some(data) = ACCEPTED.with(|a| a.borrow_mut().take()) {
        on_message(data);
    }
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

/// Posts one response; `bytes` travel as a transferred `ArrayBuffer`.
fn post(seq: u32, body: &Response, bytes: Option<&[u8]>) {
    // The envelope as bytes (`protocol::codec`), one `Uint8Array` copied out of wasm memory.
    let encoded = codec::to_bytes(&Envelope { seq, body }).or_else(|e| {
        let body = Response::Failed(Failure {
            message: format!("worker could not encode its reply: {e}"),
        });
        codec::to_bytes(&Envelope { seq, body })
    });
    let msg = Object::new();
    let value: JsValue = match encoded {
        Ok(b) => Uint8Array::from(b.as_slice()).into(),
        Err(_) => JsValue::NULL,
    };
    let _ = Reflect::set(&msg, &"env".into(), &value);
    match bytes {
        Some(b) => {
            let array = Uint8Array::new_with_length(b.len() as u32);
            array.copy_from(b);
            let buffer = array.buffer();
            let _ = Reflect::set(&msg, &"buf".into(), &buffer);
            let transfer = Array::of1(&buffer);
            let _ = scope().post_message_with_transfer(&msg, &transfer);
        }
        None => {
            let _ = scope().post_message(&msg);
        }
    }
}

struct PostSink;

impl Sink for PostSink {
    fn send(&mut self, seq: u32, response: Response) {
        post(seq, &response, None);
    }
    fn send_bytes(&mut self, seq: u32, response: Response, bytes: &[u8]) {
        post(seq, &response, Some(bytes));
    }
}

/// Growth of the wasm memory between two reports during a read (bytes): a 2 GiB read sends
/// about 32 of them.
const MEMORY_STEP: u64 = 64 << 20;

/// Current size of this instance's wasm linear memory, bytes.
fn wasm_memory_bytes() -> u64 {
    let mem: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
    let buf: js_sys::ArrayBuffer = mem.buffer().unchecked_into();
    buf.byte_length() as u64
}

fn on_message(data: JsValue) {
    ADOPTED.with(|a| a.set(true));
    let env = Reflect::get(&data, &"env".into()).unwrap_or(JsValue::UNDEFINED);
    let env = env.dyn_ref::<Uint8Array>().map(Uint8Array::to_vec);
    let env: Envelope<Request> = match codec::from_bytes(env.as_deref().unwrap_or_default()) {
        Ok(env) => env,
        Err(e) => {
            post(
                0,
                &Response::Failed(Failure {
                    message: format!("worker received a message it does not understand: {e}"),
                }),
                None,
            );
            return;
        }
    };
    STATE.with(|s| {
        let mut guard = s.borrow_mut();
        let Some(state) = guard.as_mut() else { return };
        state.seq.set(env.seq);
        let listed = match &env.body {
            Request::Open { files } => Some(files),
            Request::Compare(c) => Some(&c.files),
            _ => None,
        };
        if let Some(files) = listed {
            let handles: Vec<File> = Reflect::get(&data, &"files".into())
                .ok()
                .and_then(|v| v.dyn_into::<Array>().ok())
                .map(|a| a.iter().filter_map(|f| f.dyn_into::<File>().ok()).collect())
                .unwrap_or_default();
            if handles.len() != files.len() {
                post(
                    env.seq,
                    &Response::Failed(Failure {
                        message: format!(
                            "the request lists {} files but {} File objects arrived",
                            files.len(),
                            handles.len()
                        ),
                    }),
                    None,
                );
                return;
            }
            let seq = state.seq.clone();
            // The page's memory meter moves during a long read too: with a progress report,
            // the wasm memory whenever it grew by MEMORY_STEP since the last report.
            let reported = Cell::new(wasm_memory_bytes());
            let progress: blob_reader::ProgressSink = Rc::new(move |p| {
                post(seq.get(), &Response::Progress(p), None);
                let now = wasm_memory_bytes();
                if now >= reported.get() + MEMORY_STEP {
                    reported.set(now);
                    let stats = Response::WorkerStats {
                        wasm_memory_bytes: now,
                    };
                    post(seq.get(), &stats, None);
                }
            });
            let opener = FileOpener::new(files.clone(), handles, Some(progress));
            if matches!(env.body, Request::Compare(_)) {
                state.compare_opener = opener;
            } else {
                state.opener = opener;
            }
        }
        let beside: Vec<Vec<u8>> = Reflect::get(&data, &"bufs".into())
            .ok()
            .and_then(|v| v.dyn_into::<Array>().ok())
            .map(|a| a.iter().map(|b| Uint8Array::new(&b).to_vec()).collect())
            .unwrap_or_default();
        let WorkerState {
            session,
            opener,
            compare_opener,
            ..
        } = state;
        let seq = env.seq;
        // Side B's requests read B's files; every other request reads the drop's.
        let opener = if matches!(env.body, Request::Compare(_)) {
            &*compare_opener
        } else {
            &*opener
        };
        session.handle_with(env, &beside, opener, &mut PostSink);
        drop(beside);
        post(
            seq,
            &Response::WorkerStats {
                wasm_memory_bytes: wasm_memory_bytes(),
            },
            None,
        );
    });
}
