// Browser benchmark, side by side with the native CLI (not a timed test). For one input — a
// folder (Ascend rank folders, PyTorch profiler traces) or a file (a snapshot pickle, a trace) —
// each run prints one JSON line per side:
//   {"side":"native", …}: `proflens analyze INPUT --out-dir TMP` under /usr/bin/time -v: wall,
//     CPU (user + sys), peak RSS, MB/s of wall and of CPU;
//   {"side":"browser", …}: Chromium, the input given to the page → every result: wall, MB/s,
//     wasm memory (sum over workers, largest worker, ÷ input), and the browser's own CPU time
//     from /proc (every Chromium process; the threads of the Web Workers), so the MB/s per CPU
//     second is comparable with the native one however loaded the shared machine is;
//   {"side":"ratio", …}: browser ÷ native, by wall and by CPU.
// Every line carries the load average (/proc/loadavg) at its start.
//
// Usage: bash scripts/build-release.sh && cargo build --release --bin proflens &&
//   node tests/e2e/bench.mjs <folder|file> [--runs N] [--native target/release/proflens]
//        [--profile OUT.cpuprofile] [--views] [--no-jspi] [--settle MS]
// --settle MS: wait MS after the page opened before dropping, as a user who opens the page and
//   then picks a folder does (the page starts its warm workers meanwhile, src/ui/client.rs);
//   the default 0 drops at once, while they are still starting.
// --profile: a CDP Profiler session on every Web Worker of the first run, the busiest kept (sampling every
//   100 µs); the profile is written for Chrome DevTools and its top functions by self time are
//   printed as one JSON line. --views: also time the memory views afterwards (table page, sort,
//   scroll, filter, chart zoom) as before. --no-jspi: the worker sees no JSPI, so it reads
//   synchronously instead of through its reader worker (web/worker_loader.js), for an A/B.
// read_wait_ms: the time the analysis workers spent waiting for file bytes (summed over them). `scripts/bench_browser.sh` generates the three
//   inputs and runs this on each.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { serveStatic, launch, ProflensPage, folderBytes, browserCpu, cpuDelta, loadAvg } from './lib.mjs';

const args = process.argv.slice(2);
const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const valued = new Set(['--runs', '--native', '--profile', '--settle', '--warm']);
const input = args.find((a, i) => !a.startsWith('--') && !valued.has(args[i - 1]));
const runs = Number(opt('--runs')) || 1;
const native = opt('--native');
const profileOut = opt('--profile');
const views = args.includes('--views');
const noJspi = args.includes('--no-jspi');
const settleMs = Number(opt('--settle')) || 0;
// --warm DIR: drop DIR first (a small input) and wait for its results, then measure the drop of
// the input in the same page — a second drop, after the wasm has run once in this tab.
const warmDir = opt('--warm');
if (!input || !fs.existsSync(input)) {
  console.error('usage: node tests/e2e/bench.mjs <folder|file> [--runs N] [--native BIN] [--profile OUT] [--views] [--no-jspi] [--settle MS]');
  process.exit(2);
}
const isDir = fs.statSync(input).isDirectory();
const bytes = isDir ? folderBytes(input) : fs.statSync(input).size;
const mb = bytes / 1048576;
const name = path.basename(input);
const r1 = (x) => +x.toFixed(1);
const r2 = (x) => +x.toFixed(2);

/** One native `proflens analyze` of the input: `/usr/bin/time -v` figures. */
function runNative(run) {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'proflens-bench-'));
  const load = loadAvg();
  // /usr/bin/time prints its figures on stderr, whatever the exit code
  const res = spawnSync('/usr/bin/time', ['-v', native, 'analyze', input, '--out-dir', out, '--quiet'],
    { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 64 << 20 });
  fs.rmSync(out, { recursive: true, force: true });
  const text = res.stderr || '';
  const field = (re) => { const m = text.match(re); return m ? m[1] : '0'; };
  const user = Number(field(/User time \(seconds\): ([\d.]+)/));
  const sys = Number(field(/System time \(seconds\): ([\d.]+)/));
  const wallText = field(/Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)/);
  const wall = wallText.split(':').reduce((acc, x) => acc * 60 + Number(x), 0);
  const rssKb = Number(field(/Maximum resident set size \(kbytes\): (\d+)/));
  const cpu = user + sys;
  return { side: 'native', input: name, run, load, exit: res.status, input_mb: r1(mb),
    command: `proflens analyze ${name} --out-dir TMP`,
    wall_s: r2(wall), cpu_s: r2(cpu), mb_per_s_wall: r1(mb / wall), mb_per_s_cpu: r1(mb / cpu),
    peak_rss_mb: r1(rssKb / 1024) };
}

/** A CDP Profiler on every Web Worker of the page (the warm pool exists before the drop, and
 * which worker gets the job is not known in advance), through the page's own CDP session
 * (auto-attach without flattening; messages go through Target.sendMessageToTarget). `stop`
 * returns the profile of the busiest worker (most non-idle time). */
async function workerProfiler(context, page) {
  const cdp = await context.newCDPSession(page);
  let nextId = 1;
  const waiting = new Map();
  const workers = [];
  let started = false;
  const sendTo = (sessionId, method, params = {}) => new Promise((resolve) => {
    const id = nextId++;
    waiting.set(id, resolve);
    cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) });
  });
  const startOn = async (sessionId) => {
    await sendTo(sessionId, 'Profiler.enable');
    await sendTo(sessionId, 'Profiler.setSamplingInterval', { interval: 100 });
    await sendTo(sessionId, 'Profiler.start');
    await sendTo(sessionId, 'Runtime.runIfWaitingForDebugger');
  };
  cdp.on('Target.attachedToTarget', (ev) => {
    if (ev.targetInfo.type === 'worker') {
      workers.push(ev.sessionId);
      if (started) startOn(ev.sessionId);
    } else {
      sendTo(ev.sessionId, 'Runtime.runIfWaitingForDebugger');
    }
  });
  cdp.on('Target.receivedMessageFromTarget', (ev) => {
    const msg = JSON.parse(ev.message);
    if (msg.id && waiting.has(msg.id)) { waiting.get(msg.id)(msg); waiting.delete(msg.id); }
  });
  await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: false });
  return {
    /** Starts sampling on every worker that exists, and on each new one as it starts. */
    async start() {
      started = true;
      await Promise.all(workers.map(startOn));
    },
    async stop() {
      const profiles = (await Promise.all(workers.map((w) => sendTo(w, 'Profiler.stop'))))
        .map((r) => r.result?.profile).filter(Boolean);
      const busy = (prof) => {
        const idle = new Set(prof.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
        return prof.samples.reduce((a, id, i) => a + (idle.has(id) ? 0 : prof.timeDeltas[i] || 0), 0);
      };
      return profiles.sort((a, b) => busy(b) - busy(a))[0];
    },
  };
}

/** Self time by function (top `n`) of a CDP profile, ms and share. */
function topSelf(profile, n = 25) {
  const byId = new Map(profile.nodes.map((x) => [x.id, x]));
  const self = new Map();
  const dt = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    const f = node.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url ? path.basename(f.url) : ''}`.trim();
    self.set(key, (self.get(key) || 0) + (dt[i] || 0) / 1000);
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  return { total_ms: Math.round(total), top: [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([k, ms]) => [k, Math.round(ms), +(100 * ms / total).toFixed(1)]) };
}

// Injected in front of each analysis worker's loader: sums the time the worker waited for file
// bytes — inside FileReaderSync.readAsArrayBuffer (synchronous reads) or between asking its
// reader worker for the next slice and getting it (JSPI) — and reports it twice a second.
const READ_PROBE = `(() => {
  const worker = Math.random().toString(36).slice(2);
  let calls = 0, waited = 0, said = '';
  let next = null;
  Object.defineProperty(self, 'proflensIoNext', { configurable: true, get() { return next; },
    set(f) { next = (id) => { const t = performance.now(); calls++;
      return f(id).then((v) => { waited += performance.now() - t; return v; }); }; } });
  const read = FileReaderSync.prototype.readAsArrayBuffer;
  FileReaderSync.prototype.readAsArrayBuffer = function (b) {
    const t = performance.now(); calls++; const r = read.call(this, b); waited += performance.now() - t; return r; };
  setInterval(() => { const now = JSON.stringify({ worker, calls, waited_ms: Math.round(waited) });
    if (calls && now !== said) { said = now; console.debug('proflens-read-wait ' + now); } }, 500);
})();
`;

const server = await serveStatic();
const browser = await launch();
try {
  for (let i = 0; i < runs; i++) {
    let nat;
    if (native) {
      nat = runNative(i + 1);
      console.log(JSON.stringify(nat));
    }
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    // Every analysis worker reports the time it waited for file bytes (READ_PROBE); --no-jspi
    // also hides JSPI from it, as in a browser without it: it reads synchronously.
    const waits = new Map();
    page.on('console', (m) => {
      const t = m.text();
      if (t.startsWith('proflens-read-wait ')) {
        const w = JSON.parse(t.slice('proflens-read-wait '.length));
        waits.set(w.worker, w);
      }
    });
    await page.route('**/worker_loader.js', async (route) => {
      const res = await route.fetch();
      const hide = noJspi ? 'delete WebAssembly.Suspending;\n' : '';
      route.fulfill({ response: res, body: hide + READ_PROBE + (await res.text()) });
    });
    const p = new ProflensPage(page, server.url);
    await p.open();
    if (settleMs) await p.page.waitForTimeout(settleMs);
    if (warmDir) {
      await p.openFolder(warmDir);
      await p.waitDone(600_000);
      await p.page.waitForTimeout(500);
    }
    const prof = profileOut && i === 0 ? await workerProfiler(context, page) : null;
    const load = loadAvg();
    const cpu0 = browserCpu();
    const t0 = Date.now();
    const statusBefore = warmDir ? await p.page.getByTestId('run-status').textContent() : null;
    if (isDir) await p.openFolder(input);
    else await p.page.getByTestId('open-files').setInputFiles(input);
    if (warmDir) {
      // The first drop's "Done" is still shown: wait for this drop's status first.
      await p.page.waitForFunction((b) => {
        const s = document.querySelector('[data-testid=run-status]');
        return s && s.textContent !== b;
      }, statusBefore, { timeout: 600_000 });
    }
    if (prof) await prof.start();
    const phase = await p.waitDone(3_600_000);
    const ms = Date.now() - t0;
    const cpu = cpuDelta(cpu0, browserCpu());
    let profile;
    if (prof) profile = await prof.stop();
    await p.page.waitForTimeout(1200); // the workers' last read-wait reports
    const readWaitMs = [...waits.values()].reduce((a, w) => a + w.waited_ms, 0);
    const mem = p.page.getByTestId('wasm-memory');
    await mem.waitFor({ timeout: 60_000 });
    const sum = Number(await mem.getAttribute('data-bytes'));
    const max = Number(await mem.getAttribute('data-max-bytes'));
    const status = await p.page.getByTestId('run-status').innerText();
    const br = {
      side: 'browser', input: name, run: i + 1, reads: noJspi ? 'sync' : 'reader worker (JSPI)', load, phase, status, settle_ms: settleMs, warm: warmDir ? path.basename(warmDir) : null, input_mb: r1(mb), drop_to_results_ms: ms,
      mb_per_s_wall: r1(mb / (ms / 1000)), browser_cpu_s: cpu.total_s, worker_cpu_s: cpu.worker_s,
      renderer_main_cpu_s: cpu.renderer_main_s, mb_per_s_browser_cpu: r1(mb / cpu.total_s),
      mb_per_s_worker_cpu: r1(mb / cpu.worker_s), wasm_memory_total_mb: r1(sum / 1048576),
      wasm_memory_largest_worker_mb: r1(max / 1048576), wasm_memory_per_input: r2(sum / bytes),
      read_wait_ms: readWaitMs, browser_cpu_by_thread: cpu.by_thread,
    };
    console.log(JSON.stringify(br));
    if (nat) {
      console.log(JSON.stringify({ side: 'ratio', input: name, run: i + 1,
        browser_over_native_wall: r2(nat.wall_s / (ms / 1000)),
        browser_over_native_cpu: r2(nat.cpu_s / cpu.total_s) }));
    }
    if (profile) {
      fs.writeFileSync(profileOut, JSON.stringify(profile));
      console.log(JSON.stringify({ side: 'profile', input: name, file: profileOut, worker: topSelf(profile) }));
    }
    if (views) await timeViews(p, i + 1);
    await context.close();
  }
} finally {
  await browser.close();
  await server.close();
}

/** The memory views on the result: table page, sort over all rows, scroll, filter, chart zoom. */
async function timeViews(p, run) {
  const timed = async (label, action, until) => {
    const t = Date.now();
    await action();
    await p.page.waitForFunction(until, null, { timeout: 600_000 });
    return [label, Date.now() - t];
  };
  const out = [];
  out.push(await timed('memory tab first page', () => p.page.getByTestId('tab-memory').click(),
    () => document.querySelectorAll('[data-testid=event-row]').length > 0));
  const rowCount = await p.page.getByTestId('row-count').innerText();
  out.push(await timed('sort by size (all rows)', () => p.page.locator('.vt-head[data-col=SizeKb]').click(),
    () => document.querySelector('.vt-head[data-col=SizeKb]')?.innerText.includes('▼')
      && document.querySelector('[data-testid=event-row] .num:nth-child(3)') !== null));
  await p.page.waitForTimeout(500);
  out.push(await timed('scroll to the middle', () => p.page.locator('.vt-viewport').evaluate((el) => { el.scrollTop = el.scrollHeight / 2; }),
    () => Number(document.querySelector('[data-testid=event-row] .num')?.innerText) > 1000));
  out.push(await timed('text filter', () => p.page.getByTestId('row-filter').fill('forward'),
    () => !/^(\d+) of \1 rows$/.test(document.querySelector('[data-testid=row-count]')?.innerText || '')));
  const box = await p.page.getByTestId('memory-chart').boundingBox();
  out.push(await timed('chart wheel zoom', async () => {
    await p.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await p.page.mouse.wheel(0, -300);
  }, () => true));
  await p.page.waitForTimeout(1000);
  await p.screenshot(`bench-run${run}`);
  console.log(JSON.stringify({ side: 'views', run, rows: rowCount, view_ms: Object.fromEntries(out) }));
}
