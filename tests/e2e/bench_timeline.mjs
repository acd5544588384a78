// Browser benchmark of the Steps & bubbles timeline while panning ("timeline pan
// under 16 ms a frame at 1M kernels"); not a timed test. Gives the input (a folder, e.g. one
// rank's `examples/kineto_gen` trace) to the release page, opens the Steps & bubbles tab and,
// at each zoom level, drags the timeline continuously: a requestAnimationFrame loop moves the
// pointer `--px` CSS px per frame (a new drag from the right edge when it reaches the gutter),
// with Chromium's frame-rate limit and vsync off, so a rAF delta is the time a frame took
// (input handling, the view's re-projection and canvas drawing, worker replies decoded on the
// main thread), not the display's 16.7 ms. Prints one JSON line: drop → results, then per zoom
// level the frame-time quantiles, the timeline's own draw time (`data-draw-ms`, read every
// frame), the boxes drawn and how many worker replies (new `data-range`) arrived while panning;
// the load average at the start and the end, and the browser's CPU time over the pans.
//
// Usage: bash scripts/build-release.sh &&
//   cargo run --release --example kineto_gen -- DIR/tl1m/rank0.pt.trace.json --kernels 1000000 &&
//   node tests/e2e/bench_timeline.mjs DIR/tl1m [--frames 300] [--px 6] [--zoom-steps 10,21]
// --zoom-steps: W presses from the full view for each level (each ×0.8 of the span: 10 → 10.7 %,
// 21 → 0.92 % of the capture). --profile OUT.cpuprofile: a CDP profile of the page's main
// thread over the pans (written for DevTools; its top functions by self time go into the JSON
// line as `main_thread_top`). --trace OUT.json: a Chromium trace of the pans (devtools.timeline,
// blink, cc; open it in Perfetto) and, in the JSON line as `main_thread_trace_ms`, the renderer
// main thread's time by event name (style, layout, paint, script…). BENCH_CSS='…' (environment)
// adds that CSS to the page before the pans: try a style change without a rebuild. The page must
// end its run in "Done".
import fs from 'node:fs';
import path from 'node:path';
import { serveStatic, launch, ProflensPage, folderBytes, browserCpu, cpuDelta, loadAvg } from './lib.mjs';

const args = process.argv.slice(2);
const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const valued = new Set(['--frames', '--px', '--zoom-steps', '--profile', '--trace']);
const profileOut = opt('--profile');
const traceOut = opt('--trace');
const input = args.find((a, i) => !a.startsWith('--') && !valued.has(args[i - 1]));
if (!input || !fs.existsSync(input) || !fs.statSync(input).isDirectory()) {
  console.error('usage: node tests/e2e/bench_timeline.mjs <folder> [--frames N] [--px P] [--zoom-steps A,B]');
  process.exit(2);
}
const frames = Number(opt('--frames')) || 300;
const px = Number(opt('--px')) || 6;
const zoomSteps = (opt('--zoom-steps') || '10,21').split(',').map(Number);
const mb = folderBytes(input) / 1048576;
const r1 = (x) => +x.toFixed(1);
const r2 = (x) => +x.toFixed(2);
const LANES_TOP = 58; // ui/anomaly_view/timeline/draw.rs: first lane row (CSS px)

/** Renderer main-thread time by trace event name over the pans (inclusive ms, top `n`):
 * where a frame's time goes between input, script, style, layout, paint and compositing. */
function traceTop(file, n = 20) {
  const { traceEvents } = JSON.parse(fs.readFileSync(file, 'utf8'));
  const main = new Set(traceEvents.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
    .map((e) => `${e.pid}:${e.tid}`));
  const by = new Map();
  for (const e of traceEvents) {
    if (e.ph !== 'X' || !main.has(`${e.pid}:${e.tid}`)) continue;
    by.set(e.name, (by.get(e.name) || 0) + (e.dur || 0) / 1000);
  }
  return [...by.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, ms]) => [k, Math.round(ms)]);
}

/** Self time by function (top `n`) of a CDP profile: [name file, ms, share %]. */
function topSelf(profile, n = 15) {
  const byId = new Map(profile.nodes.map((x) => [x.id, x]));
  const self = new Map();
  profile.samples.forEach((id, i) => {
    const f = byId.get(id).callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url ? path.basename(f.url) : ''}`.trim();
    self.set(key, (self.get(key) || 0) + (profile.timeDeltas[i] || 0) / 1000);
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  return [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([k, ms]) => [k, Math.round(ms), +(100 * ms / total).toFixed(1)]);
}

const server = await serveStatic();
// Frames as fast as they are made (as tests/e2e/cluster.test.mjs).
const browser = await launch(['--disable-frame-rate-limit', '--disable-gpu-vsync']);
const out = { side: 'timeline_pan', input: path.basename(input), input_mb: r1(mb), load_start: loadAvg() };
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const p = new ProflensPage(await context.newPage(), server.url);
  const page = p.page;
  await p.open();
  const t0 = Date.now();
  await p.openFolder(input);
  out.phase = await p.waitDone(3_600_000);
  out.drop_to_results_ms = Date.now() - t0;
  out.mb_per_s_wall = r1(mb / (out.drop_to_results_ms / 1000));
  await page.getByTestId('tab-anomaly').click();
  if (process.env.BENCH_CSS) await page.addStyleTag({ content: process.env.BENCH_CSS });
  const canvas = page.getByTestId('timeline-canvas');
  await canvas.waitFor({ timeout: 600_000 });
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=timeline-canvas]')?.dataset.drawn) > 0,
    null, { timeout: 600_000 });
  out.lanes = Number(await canvas.getAttribute('data-lanes'));
  const full = (await canvas.getAttribute('data-view')).split(',').map(Number);
  out.full_range_ms = r2(full[1] - full[0]);
  out.levels = [];
  let cdp;
  if (profileOut) {
    cdp = await context.newCDPSession(page);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
    await cdp.send('Profiler.start');
  }
  if (traceOut) {
    await browser.startTracing(page, { path: traceOut, screenshots: false,
      categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink', 'cc', 'v8.execute', 'toplevel'] });
  }
  const cpu0 = browserCpu();
  for (const steps of zoomSteps) {
    await canvas.focus();
    await page.keyboard.press('0');
    for (let i = 0; i < steps; i++) await page.keyboard.press('w');
    const view = (await canvas.getAttribute('data-view')).split(',').map(Number);
    const span = view[1] - view[0];
    // Wait for the worker's answer for this view (view ± half a view) before panning.
    await page.waitForFunction((want) => {
      const r = document.querySelector('[data-testid=timeline-canvas]').dataset.range.split(',').map(Number);
      return Math.abs((r[1] - r[0]) - want) < want * 1e-6 + 1e-6;
    }, 2 * span, { timeout: 600_000 });
    await page.waitForTimeout(300);
    const level = await page.evaluate(async ({ frames, px, top }) => {
      const c = document.querySelector('[data-testid=timeline-canvas]');
      const rect = c.getBoundingClientRect();
      const labelW = Number(c.dataset.labelW) || 150;
      const left = rect.left + labelW + 20;
      const right = rect.right - 30;
      const y = rect.top + top + 5;
      const fire = (type, x) => c.dispatchEvent(new MouseEvent(type, { clientX: x, clientY: y, bubbles: true, button: 0, buttons: type === 'mouseup' ? 0 : 1 }));
      const deltas = [];
      const draws = [];
      const boxes = [];
      let ranges = 0;
      let lastRange = c.dataset.range;
      let x = right;
      fire('mousedown', x);
      await new Promise((done) => {
        let last = 0;
        let n = 0;
        const tick = (t) => {
          if (n > 0) deltas.push(t - last);
          last = t;
          draws.push(Number(c.dataset.drawMs));
          boxes.push(Number(c.dataset.drawn));
          if (c.dataset.range !== lastRange) { ranges++; lastRange = c.dataset.range; }
          if (n++ >= frames) { fire('mouseup', x); return done(); }
          if (x - px < left) { fire('mouseup', x); x = right; fire('mousedown', x); }
          x -= px;
          fire('mousemove', x);
          requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      });
      const q = (arr, f) => { const s = [...arr].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(f * s.length))]; };
      const stats = (arr) => ({ p50: q(arr, 0.5), p95: q(arr, 0.95), max: Math.max(...arr) });
      return { frames: deltas.length, frame_ms: stats(deltas), draw_ms: stats(draws.slice(1)),
        boxes_drawn: stats(boxes), worker_replies: ranges, view_after: c.dataset.view };
    }, { frames, px, top: LANES_TOP });
    const round = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, r2(v)]));
    const after = level.view_after.split(',').map(Number);
    out.levels.push({ zoom_steps: steps, view_ms: r2(span), view_share: +(span / (full[1] - full[0])).toFixed(4),
      px_per_frame: px, frames: level.frames, frame_ms: round(level.frame_ms), draw_ms: round(level.draw_ms),
      boxes_drawn: level.boxes_drawn, worker_replies: level.worker_replies,
      panned_ms: r2(after[0] - view[0]) });
  }
  const cpu = cpuDelta(cpu0, browserCpu());
  if (traceOut) {
    await browser.stopTracing();
    out.main_thread_trace_ms = traceTop(traceOut);
  }
  if (cdp) {
    const { profile } = await cdp.send('Profiler.stop');
    fs.writeFileSync(profileOut, JSON.stringify(profile));
    out.main_thread_top = topSelf(profile);
  }
  out.pan_browser_cpu_s = cpu.total_s;
  out.pan_renderer_main_cpu_s = cpu.renderer_main_s;
  out.pan_worker_cpu_s = cpu.worker_s;
  out.load_end = loadAvg();
  console.log(JSON.stringify(out));
  await p.screenshot('bench-timeline-pan');
  await context.close();
} finally {
  await browser.close();
  await server.close();
}
