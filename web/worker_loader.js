// proflens worker loader (copied to dist/worker_loader.js by index.html; scripts/postbuild.py
// inlines it into the single-file build, without its first and last line).
//
// Starts the analysis worker's wasm. Where the browser has JavaScript Promise Integration
// (WebAssembly.Suspending / WebAssembly.promising: Chromium 137+), it also starts a tiny
// reader worker that reads the dropped files' slices with its own FileReaderSync, ahead of the
// parser, and transfers them here; the wasm's reads (src/worker/blob_reader.rs, import
// proflensIoNext) suspend the wasm stack until the next slice has arrived. The browser's
// serving of blob bytes then overlaps with the analysis instead of following it. Without JSPI,
// or if anything here fails, the wasm reads synchronously on this thread as before.
importScripts("./worker.js");

self.proflensStart = async function (moduleOrPath) {
  const canJspi =
    typeof WebAssembly.Suspending === "function" &&
    typeof WebAssembly.promising === "function" &&
    typeof Worker === "function" &&
    typeof FileReaderSync === "function";
  let reader = null;
  if (canJspi) {
    try {
      reader = startReader();
    } catch (err) {
      console.warn("proflens: no reader worker, reading on the analysis thread:", err);
    }
  }
  if (!reader) {
    await wasm_bindgen({ module_or_path: moduleOrPath });
    return;
  }
  const orig = { s: WebAssembly.instantiateStreaming, i: WebAssembly.instantiate };
  // Wraps the one suspending import; the flag tells the wasm (src/worker/mod.rs) to use it.
  // Every import module is searched: wasm-bindgen names it `wbg` up to 0.2.106 and after its
  // output file (`./worker_bg.js`) from 0.2.108 on.
  const wrap = (imports) => {
    for (const ns of Object.values(imports || {})) {
      for (const k of Object.keys(ns || {})) {
        if (k.startsWith("__wbg_proflensIoNext_")) {
          ns[k] = new WebAssembly.Suspending(ns[k]);
          self.proflensJspi = true;
        }
      }
    }
    return imports;
  };
  WebAssembly.instantiateStreaming = (src, imports) => orig.s.call(WebAssembly, src, wrap(imports));
  WebAssembly.instantiate = (src, imports) => orig.i.call(WebAssembly, src, wrap(imports));
  let exports;
  try {
    exports = await wasm_bindgen({ module_or_path: moduleOrPath });
  } finally {
    WebAssembly.instantiateStreaming = orig.s;
    WebAssembly.instantiate = orig.i;
  }
  if (!self.proflensJspi) {
    reader.terminate();
    return; // the wasm installed its own synchronous onmessage
  }
  const handle = WebAssembly.promising(exports.proflens_worker_handle);
  // One message at a time: a later one waits while a read has suspended the current one.
  const queue = [];
  let busy = false;
  const pump = async () => {
    busy = true;
    while (queue.length) {
      wasm_bindgen.proflens_worker_accept(queue.shift());
      try {
        await handle();
      } catch (err) {
        // As an exception thrown by a synchronous onmessage would: the page's Worker gets an
        // "error" event.
        setTimeout(() => {
          throw err;
        });
      }
    }
    busy = false;
  };
  self.onmessage = (e) => {
    queue.push(e.data);
    if (!busy) pump();
  };
};

// The reader worker and this side's stream table: proflensIoOpen / proflensIoNext /
// proflensIoClose, the imports of src/worker/blob_reader.rs.
function startReader() {
  const src = `"use strict";
const rs = new FileReaderSync();
const streams = new Map();
onmessage = (e) => {
  const m = e.data;
  if (m.open !== undefined) { streams.set(m.open, { blob: m.blob, pos: m.start, next: m.first, slice: m.slice }); return; }
  if (m.close !== undefined) { streams.delete(m.close); return; }
  const id = m.credit;
  const s = streams.get(id);
  if (!s) return;
  for (let i = 0; i < m.n; i++) {
    if (s.pos >= s.blob.size) { const buf = new ArrayBuffer(0); postMessage({ id, buf }, [buf]); return; }
    const end = Math.min(s.pos + s.next, s.blob.size);
    s.next = s.slice;
    let buf;
    try { buf = rs.readAsArrayBuffer(s.blob.slice(s.pos, end)); }
    catch (err) { streams.delete(id); postMessage({ id, err: String(err) }); return; }
    s.pos = end;
    postMessage({ id, buf }, [buf]);
  }
};`;
  // proflensReaderPrelude: set only by tests (tests/e2e/lib.mjs counts the slices read).
  const prelude = typeof self.proflensReaderPrelude === "string" ? self.proflensReaderPrelude : "";
  const url = URL.createObjectURL(new Blob([prelude, src], { type: "text/javascript" }));
  const reader = new Worker(url);
  URL.revokeObjectURL(url);
  const streams = new Map();
  let nextId = 1;
  const deliver = (s, v) => {
    if (s.waiting) {
      const w = s.waiting;
      s.waiting = null;
      w(v);
    } else {
      s.ready.push(v);
    }
  };
  reader.onmessage = (e) => {
    const { id, buf, err } = e.data;
    const s = streams.get(id);
    if (s) deliver(s, err !== undefined ? err : new Uint8Array(buf));
  };
  reader.onerror = (e) => {
    e.preventDefault();
    const why = "the reader worker failed: " + (e.message || "unknown error");
    for (const s of streams.values()) deliver(s, why);
  };
  self.proflensIoOpen = (blob, start, first, slice, ahead) => {
    const id = nextId++;
    streams.set(id, { ready: [], waiting: null, ahead, started: false });
    reader.postMessage({ open: id, blob, start, first, slice });
    reader.postMessage({ credit: id, n: 1 });
    return id;
  };
  self.proflensIoNext = (id) => {
    const s = streams.get(id);
    if (!s) return Promise.resolve("the file was already closed");
    // Keep `ahead` slices in flight: the first call asks for them, every later one for one more.
    reader.postMessage({ credit: id, n: s.started ? 1 : s.ahead });
    s.started = true;
    if (s.ready.length) return Promise.resolve(s.ready.shift());
    return new Promise((resolve) => {
      s.waiting = resolve;
    });
  };
  self.proflensIoClose = (id) => {
    if (streams.delete(id)) reader.postMessage({ close: id });
  };
  return reader;
}

proflensStart("./worker_bg.wasm");
