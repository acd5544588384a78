// Shared helpers of the browser tests and the browser benchmark: a static server for
// dist/ (no third-party server needed) and a Chromium launch through playwright-core.
// Never downloads a browser: it drives Debian's /usr/bin/chromium.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, '../..');
export const DIST = process.env.PROFLENS_DIST || path.join(REPO, 'dist');
export const OUT = path.join(REPO, 'test-output');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
};

/** Serves `root` on 127.0.0.1 (random port) under the path `prefix` (e.g. '/proflens/', as a
 * GitHub project site would). Returns { url, close, requests }; `requests` lists every path asked. */
// The head of a page <-> worker message, `{ env: Uint8Array }` (src/protocol/codec.rs: a
// presence byte before each struct field, a u32 variant index, u32 counts, little-endian):
// the envelope's body variant by name, and for a Run its targets as [variant, index] pairs
// (variant 0 = Rank). Source text, for scripts injected into a page or a worker loader. The
// variant lists follow the declaration order of `Request` and `Response` in src/protocol/mod.rs.
export const ENVELOPE_JS = `
const PROFLENS_REQUESTS = ['Open', 'Run', 'Query', 'Export', 'ExportPart', 'ExportJoin', 'Compare', 'CompareAgain'];
const PROFLENS_RESPONSES = ['Ready', 'Inventory', 'Progress', 'Done', 'TargetFailed', 'Problems', 'RunDone', 'Reply',
  'ExportChunk', 'ExportDone', 'ExportPart', 'WorkerStats', 'Failed'];
const proflensEnvelope = (data, names) => {
  const b = data && data.env;
  if (!(b instanceof Uint8Array) || b.length < 10 || b[0] !== 1 || b[5] !== 1) return null;
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const variant = dv.getUint32(6, true);
  const out = { name: names[variant] || String(variant), targets: [] };
  if (names === PROFLENS_REQUESTS && out.name === 'Run' && b.length >= 15) {
    // Run { analyses: Vec<AnalysisKind>, targets: Vec<Target> }
    let at = 11;
    at += 4 + 4 * dv.getUint32(at, true) + 1;
    const n = dv.getUint32(at, true);
    at += 4;
    for (let i = 0; i < n && at + 8 <= b.length; i++, at += 8) {
      out.targets.push([dv.getUint32(at, true), dv.getUint32(at + 4, true)]);
    }
  }
  return out;
};
`;

export async function serveStatic(root = DIST, prefix = '/') {
  if (!fs.existsSync(path.join(root, 'index.html'))) {
    throw new Error(`${root}/index.html missing: run \`trunk build --release\` first`);
  }
  const requests = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    requests.push(url.pathname);
    if (!url.pathname.startsWith(prefix)) { res.writeHead(404).end('outside the site'); return; }
    const rel = decodeURIComponent(url.pathname.slice(prefix.length));
    let file = path.normalize(path.join(root, rel));
    if (!file.startsWith(root)) { res.writeHead(403).end(); return; }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    fs.readFile(file, (err, data) => {
      if (err) { res.writeHead(404).end('not found'); return; }
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' });
      res.end(data);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}${prefix}`, requests, close: () => new Promise((r) => server.close(r)) };
}

/** Launches Debian's Chromium headless; `extraArgs` are added to the command line (e.g.
 * `--disable-frame-rate-limit` for frame-time measurements), and so is `CHROMIUM_ARGS`
 * (space-separated) from the environment, for experiments such as `--js-flags=--no-liftoff`
 * (docs/perf/2026-12-04-jit-warm-up.md). */
export async function launch(extraArgs = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage',
      ...(process.env.CHROMIUM_ARGS ? process.env.CHROMIUM_ARGS.split(' ') : []), ...extraArgs],
  });
}

/** Page object of proflens (house-style §8.10). */
export class ProflensPage {
  constructor(page, baseUrl) {
    this.page = page;
    this.baseUrl = baseUrl;
    this.offOrigin = [];
    page.on('request', (r) => {
      const u = r.url();
      if (!u.startsWith(baseUrl) && !u.startsWith('blob:') && !u.startsWith('data:')) this.offOrigin.push(u);
    });
    this.consoleErrors = [];
    page.on('console', (m) => { if (m.type() === 'error') this.consoleErrors.push(m.text()); });
    page.on('pageerror', (e) => this.consoleErrors.push(String(e)));
  }
  async open() {
    await this.page.goto(this.baseUrl);
    await this.page.getByTestId('drop-zone').waitFor();
  }
  /** Gives a whole folder to the "Open folder" input (webkitdirectory). */
  async openFolder(dir) {
    await this.page.getByTestId('open-folder').setInputFiles(dir);
  }
  /** Waits until the run is over (done, cancelled or failed); returns the phase. */
  async waitDone(timeout = 120_000, phases = ['Done', 'Cancelled', 'Failed']) {
    await this.page.waitForFunction((want) => {
      const s = document.querySelector('[data-testid=run-status]');
      return s && want.includes(s.dataset.phase);
    }, phases, { timeout });
    return this.page.getByTestId('run-status').getAttribute('data-phase');
  }
  async screenshot(name) {
    fs.mkdirSync(OUT, { recursive: true });
    const file = path.join(OUT, `${name}.png`);
    await this.page.screenshot({ path: file, fullPage: true });
    return file;
  }
}

/** Total size in bytes of every file under `dir` (benchmarks report input MB/s). */
export function folderBytes(dir) {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += e.isDirectory() ? folderBytes(p) : fs.statSync(p).size;
  }
  return total;
}

/** CPU time (s) of this node process's descendants (Chromium's browser, renderer, GPU and
 * utility processes), read from /proc: `{ total_s, worker_s, renderer_main_s, by_comm }`.
 * `worker_s` sums the threads named `DedicatedWorker` (the page's Web Workers run there);
 * `renderer_main_s` the renderer main threads (`chromium` threads of `--type=renderer`).
 * Two readings subtracted give the browser's CPU for what happened between them, so the load
 * of other processes on a shared machine can be factored out. Linux only (empty elsewhere). */
export function browserCpu() {
  const tick = 100; // USER_HZ on Linux
  const out = { total_s: 0, worker_s: 0, renderer_main_s: 0, by_comm: {} };
  let entries;
  try { entries = fs.readdirSync('/proc'); } catch { return out; }
  const parent = new Map();
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const st = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const rest = st.slice(st.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(e), Number(rest[1]));
    } catch { /* exited */ }
  }
  const mine = (pid) => {
    for (let p = pid, n = 0; p > 1 && n < 64; p = parent.get(p), n++) if (p === process.pid) return pid !== process.pid;
    return false;
  };
  for (const pid of parent.keys()) {
    if (!mine(pid)) continue;
    let renderer = false;
    try { renderer = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer'); } catch { continue; }
    try { // the process's own counters include its threads that have exited
      const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      out.total_s += (Number(f[11]) + Number(f[12])) / tick;
    } catch { continue; }
    let tasks = [];
    try { tasks = fs.readdirSync(`/proc/${pid}/task`); } catch { continue; }
    for (const t of tasks) {
      try {
        const st = fs.readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
        const comm = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
        const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
        const s = (Number(f[11]) + Number(f[12])) / tick; // utime + stime
        out.by_comm[comm] = (out.by_comm[comm] || 0) + s;
        if (comm.startsWith('DedicatedWorker')) out.worker_s += s;
        if (renderer && Number(t) === pid) out.renderer_main_s += s;
      } catch { /* thread exited */ }
    }
  }
  return out;
}

/** `b − a` of two [`browserCpu`] readings, seconds rounded to 10 ms; `by_thread` lists the
 * eight thread names (summed over processes) that used the most CPU in between. */
export function cpuDelta(a, b) {
  const r = (x) => +x.toFixed(2);
  const by = Object.entries(b.by_comm).map(([k, v]) => [k, r(v - (a.by_comm[k] || 0))])
    .filter(([, v]) => v > 0).sort((x, y) => y[1] - x[1]).slice(0, 8);
  return { total_s: r(b.total_s - a.total_s), worker_s: r(b.worker_s - a.worker_s),
    renderer_main_s: r(b.renderer_main_s - a.renderer_main_s), by_thread: Object.fromEntries(by) };
}

/** The machine's load average (1, 5, 15 min) from /proc/loadavg. */
export function loadAvg() {
  try { return fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number); } catch { return []; }
}

// Prepended to the worker script: reports every slice as one console message (with who made
// it: `worker` or `reader`), so slices of a worker terminated afterwards (a one-off export
// worker) are counted too.
const sliceHook = (who) => `
  const slice = Blob.prototype.slice;
  Blob.prototype.slice = function (a, b, t) {
    const part = slice.call(this, a, b, t);
    const name = this.webkitRelativePath || this.name || '(blob)';
    console.debug('proflens-slice ' + JSON.stringify([name, part.size, '${who}']));
    return part;
  };
`;
// The analysis worker counts its own slices and hands the same hook to the reader worker that
// prefetches slices where the browser has JSPI (web/worker_loader.js: proflensReaderPrelude).
const SLICE_COUNTER = `(() => {
  console.debug('proflens-worker-start');
  ${sliceHook('worker')}
  self.proflensReaderPrelude = ${JSON.stringify("(() => { console.debug('proflens-reader-start');" + sliceHook('reader') + '})();\n')};
})();
`;

/** A page of `context` whose workers report every `Blob.slice`: `seen.sliced` (file → bytes
 * sliced), `seen.readerBytes` (of those, the bytes reader workers sliced: with JSPI they read
 * ahead for the analysis workers), `seen.workers` (analysis workers started) and `seen.readers`
 * (their reader workers, web/worker_loader.js) fill in as the page runs. `{ jspi: false }`: the
 * workers see no JSPI. */
export async function countingPage(context, { jspi = true } = {}) {
  const page = await context.newPage();
  const seen = { sliced: new Map(), readerBytes: 0, workers: 0, readers: 0 };
  page.on('console', (m) => {
    const t = m.text();
    if (t === 'proflens-worker-start') seen.workers += 1;
    if (t === 'proflens-reader-start') seen.readers += 1;
    if (!t.startsWith('proflens-slice ')) return;
    const [name, n, who] = JSON.parse(t.slice('proflens-slice '.length));
    seen.sliced.set(name, (seen.sliced.get(name) || 0) + n);
    if (who === 'reader') seen.readerBytes += n;
  });
  await page.route('**/worker_loader.js', async (route) => {
    const res = await route.fetch();
    // jspi: false hides JSPI from the worker, as in a browser without it: the wasm then reads
    // synchronously on its own thread (the fallback of web/worker_loader.js).
    const hide = jspi ? '' : 'delete WebAssembly.Suspending;\n';
    route.fulfill({ response: res, body: hide + SLICE_COUNTER + (await res.text()) });
  });
  return { page, seen };
}
