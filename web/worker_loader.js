// proflens worker loader (copied to dist/worker_loader.js by index.html; scripts/postbuild.py
// inlines it into the single-file build, without the three lines that name the bundle).
//
// Starts the analysis worker's wasm (the DB worker's when named "proflens-db"). Where the browser has
// JavaScript Promise Integration (WebAssembly.Suspending / WebAssembly.promising: Chromium
// 137+), it also starts a tiny
// reader worker that reads the dropped files' slices with its own FileReaderSync, ahead of the
// parser, and transfers them here; the wasm's reads (src/worker/blob_reader.rs, import
// proflensIoNext) suspend the wasm stack until the next slice has arrived. The browser's
// serving of blob bytes then overlaps with the analysis instead of following it. Without JSPI,
// or if anything here fails, the wasm reads synchronously on this thread as before.
// The bundle: the DB worker (src/bin/worker_db.rs, cargo feature `db`) when the page names
// this worker "proflens-db" (only for drops that hold a DB export), else the worker. A name,
// not a URL query: a worker served by the service worker gets the cached response's URL.
const proflensBundle = self.name === "proflens-db" ? "./worker-db" : "./worker";
importScripts(proflensBundle + ".js");

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
  // Each stream reads its blob through one \`ReadableStream\` (\`Blob.stream()\`, a BYOB reader
  // filling the slice's buffer in place): in Chromium that costs the browser about 0.6x the CPU
  // of a \`FileReaderSync\` call per slice (ARCHITECTURE.md, "Browser reads overlap the
  // analysis"). Credits from the analysis worker say how many slices may be in flight.
  const src = `"use strict";
const streams = new Map();
async function fill(s, want) {
  let buf = new ArrayBuffer(want);
  let off = 0;
  while (off < want) {
    const { value, done } = await s.reader.read(new Uint8Array(buf, off, want - off));
    if (done) { s.done = true; break; }
    buf = value.buffer;
    off += value.byteLength;
  }
  return off === want ? buf : buf.slice(0, off);
}
async function pump(id, s) {
  if (s.pumping) return;
  s.pumping = true;
  while (s.credits > 0 && streams.get(id) === s) {
    s.credits--;
    let buf;
    try {
      if (s.done || s.pos >= s.size) { buf = new ArrayBuffer(0); }
      else {
        const want = Math.min(s.next, s.size - s.pos);
        s.next = s.slice;
        buf = await fill(s, want);
        s.pos += buf.byteLength;
      }
    } catch (err) { streams.delete(id); postMessage({ id, err: String(err) }); break; }
    if (streams.get(id) !== s) break;
    postMessage({ id, buf }, [buf]);
  }
  s.pumping = false;
}
onmessage = (e) => {
  const m = e.data;
  if (m.open !== undefined) {
    const part = m.blob.slice(m.start);
    streams.set(m.open, { reader: part.stream().getReader({ mode: "byob" }), pos: 0, size: part.size, next: m.first, slice: m.slice, credits: 0, pumping: false, done: false });
    return;
  }
  if (m.close !== undefined) {
    const s = streams.get(m.close);
    streams.delete(m.close);
    if (s) s.reader.cancel().catch(() => {});
    return;
  }
  const s = streams.get(m.credit);
  if (!s) return;
  s.credits += m.n;
  pump(m.credit, s);
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

proflensStart(proflensBundle + "_bg.wasm");
