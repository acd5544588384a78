// End-to-end tests of the snapshot views people expect from MemoryViz ("Views people
// expect"): the Active Memory Timeline (stacked per-allocation bands: hover shows the size and
// the stack, click selects the allocation and the live set there), hex addresses, the C++
// frame toggle, and the frame time of the stacked chart on a 1M-entry snapshot.
//
// Run: `node --test tests/e2e/snapshot_views.test.mjs` after scripts/build-release.sh. The
// 1M-entry file is written once (os.tmpdir()) by the snapshot_gen example (a release build when
// present, else target/debug/examples/snapshot_gen, built by the test when missing).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO, OUT, serveStatic, launch, ProflensPage } from './lib.mjs';

const FIXTURES = path.join(REPO, '../shared/fixtures/torch_snapshots');
const ZIDONG = path.join(FIXTURES, 'ZidongLiu_DeComFL__memory.pickle');
const CRANBERRII = path.join(FIXTURES, 'cranberrii_ftcourse__memory_snapshot.pickle');
const BIG = path.join(os.tmpdir(), 'proflens-e2e-snapshot-1m.pickle');
const MARGIN_L = 64;

let server;
let browser;

before(async () => {
  server = await serveStatic();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function open(files) {
  const context = await browser.newContext({ viewport: { width: 1500, height: 1100 } });
  const p = new ProflensPage(await context.newPage(), server.url);
  await p.open();
  await p.page.getByTestId('open-files').setInputFiles(files);
  assert.equal(await p.waitDone(600_000), 'Done');
  await p.page.getByTestId('snap-live-title').waitFor({ timeout: 600_000 });
  await p.page.waitForFunction(() => Number(document.querySelector('[data-testid=bands-canvas]')?.dataset.bands) > 0,
    null, { timeout: 600_000 });
  return p;
}

/** Moves over the stacked chart from the bottom up at `fx` of its width until a band (not the
 * summarised one) is under the pointer; returns the pointer position and the tooltip text. */
async function hoverBand(p, fx = 0.5) {
  const box = await p.page.getByTestId('bands-canvas').boundingBox();
  const x = box.x + MARGIN_L + (box.width - MARGIN_L - 12) * fx;
  for (let dy = 30; dy < box.height - 14; dy += 3) {
    const y = box.y + box.height - dy;
    await p.page.mouse.move(x, y);
    const tip = p.page.getByTestId('band-tooltip');
    if (await tip.count() === 0) continue;
    const text = await tip.innerText();
    if (/\(\d+ bytes\)/.test(text)) return { x, y, text };
  }
  throw new Error('no band found under the pointer');
}

test('stacked timeline: hover shows size and stack, click selects', async () => {
  const p = await open([ZIDONG]);
  const info = await p.page.getByTestId('bands-info').innerText();
  assert.match(info, /^\d+ allocations drawn, \d+ summarised \(under [\d.]+ (KiB|MiB|GiB|B)\)/);
  await p.page.waitForTimeout(300);
  await p.screenshot('snapshot-views-01-bands');
  const { x, y, text } = await hoverBand(p, 0.45);
  const [, size, bytes] = text.match(/^(.+?) \((\d+) bytes\)/m);
  assert.match(text, /address 0x[0-9a-f]+ · MemoryViz b'[0-9a-f]+_\d+'/);
  // The stack arrives from the worker: Python frames, `function @ file:line`.
  await p.page.waitForFunction(() => !document.querySelector('[data-testid=band-tooltip]')?.innerText.includes('stack…'));
  const withStack = await p.page.getByTestId('band-tooltip').innerText();
  assert.match(withStack, /\.py:\d+/);
  assert.ok(!withStack.includes('torch::unwind'), withStack);
  await p.screenshot('snapshot-views-02-hover');
  const before = await p.page.getByTestId('snap-live-title').innerText();
  await p.page.mouse.click(x, y);
  // The stack panel shows the clicked allocation, the live set moves to that column's entry.
  const head = p.page.getByTestId('snap-stack-head');
  await head.filter({ hasText: `(${bytes} bytes)` }).waitFor();
  assert.ok((await head.innerText()).startsWith(size), await head.innerText());
  await p.page.waitForFunction((b) => document.querySelector('[data-testid=snap-live-title]')?.innerText !== b, before);
  assert.ok(await p.page.locator('[data-testid=snap-stack] ol.frames li').count() > 0);
  // Wheel over the stacked chart zooms both charts (shared window).
  const inView = async () => Number((await p.page.getByTestId('snap-in-view').innerText()).match(/^(\d+) entries/)[1]);
  const all = await inView();
  await p.page.mouse.move(x, y);
  await p.page.mouse.wheel(0, -400);
  await p.page.waitForFunction((n) => Number(document.querySelector('[data-testid=snap-in-view]').innerText.match(/^(\d+)/)[1]) < n, all);
  await p.page.waitForTimeout(400);
  await p.screenshot('snapshot-views-03-clicked-zoomed');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('addresses are hex and C++ frames are hidden behind a toggle', async () => {
  const p = await open([CRANBERRII]);
  const addrs = await p.page.locator('[data-testid=snap-tensors] tbody tr td:nth-child(2)').allInnerTexts();
  assert.ok(addrs.length > 0);
  for (const a of addrs) assert.match(a, /^0x[0-9a-f]+$/);
  assert.ok(!(await p.page.getByTestId('snap-live').innerText()).includes("b'"));
  // The first tensor allocated in the trace from Python (recorded with stacks="all").
  await p.page.getByTestId('snap-tensor').filter({ hasText: '.py:' }).first().locator('td').first().click();
  const frames = p.page.getByTestId('snap-frame');
  await frames.first().waitFor();
  const python = await frames.allInnerTexts();
  assert.ok(python.every((f) => /\.py:\d+|<[^>]+>/.test(f)), python.join('\n'));
  assert.ok(!python.some((f) => f.includes('CapturedTraceback')));
  const runs = await p.page.getByTestId('snap-native-run').allInnerTexts();
  assert.ok(runs.length > 0 && runs.every((r) => /^… \d+ C\+\+ frame\(s\)$/.test(r)), runs.join('|'));
  const hidden = runs.reduce((n, r) => n + Number(r.match(/\d+/)[0]), 0);
  await p.page.getByTestId('snap-cpp-toggle').check();
  await p.page.waitForFunction((n) => document.querySelectorAll('[data-testid=snap-frame]').length === n, python.length + hidden);
  const everything = await frames.allInnerTexts();
  assert.ok(everything.some((f) => f.includes('CapturedTraceback')), 'C++ frames shown after the toggle');
  assert.equal(await p.page.getByTestId('snap-native-run').count(), 0);
  await p.screenshot('snapshot-views-04-cpp-frames');
  await p.page.getByTestId('snap-cpp-toggle').uncheck();
  await p.page.waitForFunction((n) => document.querySelectorAll('[data-testid=snap-frame]').length === n, python.length);
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

/** The snapshot_gen binary (a release build when present), built in debug when missing
 * (seconds once the library is built, as after `cargo test`); None when cargo fails. */
function generator() {
  const bins = () => ['target/release/examples/snapshot_gen', 'target/debug/examples/snapshot_gen']
    .map((b) => path.join(REPO, b))
    .filter((b) => fs.existsSync(b));
  if (bins().length === 0) {
    try {
      execFileSync('cargo', ['build', '--example', 'snapshot_gen'], { cwd: REPO, stdio: 'ignore' });
    } catch {
      return undefined;
    }
  }
  return bins()[0];
}

/** p50 / p95 / max of frame times, ms (nearest rank). */
function stats(v) {
  const s = [...v].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
  return { p50: at(0.5), p95: at(0.95), max: s[s.length - 1] };
}

// Runs by default (PROFLENS_E2E_1M=0 skips it): it decodes a generated 75 MB snapshot in the
// page, ~25 s in all on the shared 2-core machine at load 16 (phases in
// test-output/snapshot-bands-frame-ms.txt and docs/perf/2026-12-02-snapshot.md). The generated file's allocations are all under a quarter pixel at the
// plot's scale (2,000 weights of ≤ 8 MiB under ~9 GiB), so every column is the summarised band
// and "0 allocations drawn" is the correct layout: readiness is the layout's arrival
// (`bands-info`), never "at least one band" (that wait never ended: the old 10-minute "stall").
test('stacked timeline frame time at 1M entries (pan and hover median under 16 ms)', { timeout: 1_800_000 }, async (t) => {
  if (process.env.PROFLENS_E2E_1M === '0') {
    t.skip('PROFLENS_E2E_1M=0: the 1M-entry frame-time check is skipped');
    return;
  }
  if (!fs.existsSync(BIG)) {
    const gen = generator();
    if (!gen) {
      t.skip('snapshot_gen could not be built: cargo build --example snapshot_gen');
      return;
    }
    execFileSync(gen, [BIG, '1000000'], { stdio: 'ignore' });
  }
  const load = fs.readFileSync('/proc/loadavg', 'utf8').trim();
  const context = await browser.newContext({ viewport: { width: 1500, height: 1100 } });
  const p = new ProflensPage(await context.newPage(), server.url);
  await p.open();
  const t0 = Date.now();
  await p.page.getByTestId('open-files').setInputFiles([BIG]);
  assert.equal(await p.waitDone(1_200_000), 'Done');
  const tDone = Date.now();
  await p.page.getByTestId('snap-live-title').waitFor({ timeout: 600_000 });
  const tLive = Date.now();
  const info = p.page.getByTestId('bands-info');
  await p.page.waitForFunction(() => /allocations drawn/.test(document.querySelector('[data-testid=bands-info]')?.innerText ?? ''),
    null, { timeout: 600_000 });
  const tBands = Date.now();
  const layoutInfo = await info.innerText();
  const m = layoutInfo.match(/^(\d+) allocations drawn, (\d+) summarised \(under ([^)]+)\) · (\d+) entries in view/);
  assert.ok(m, layoutInfo);
  assert.equal(Number(m[4]), 1000000, layoutInfo);
  assert.ok(Number(m[1]) + Number(m[2]) > 1000, layoutInfo);
  const canvas = p.page.getByTestId('bands-canvas');
  const box = await canvas.boundingBox();
  const frame = async () => Number(await canvas.getAttribute('data-draw-ms'));
  const frames = { hover: [], pan: [] };
  // Hover: 24 positions across the chart, each redraws the plot with the cell under the
  // pointer lit (the summarised band here).
  for (let i = 0; i < 24; i++) {
    await p.page.mouse.move(box.x + MARGIN_L + 20 + i * 50, box.y + box.height - 60 - (i % 4) * 30);
    await p.page.waitForTimeout(60);
    frames.hover.push(await frame());
  }
  assert.ok(await p.page.getByTestId('band-tooltip').count() > 0, 'a tooltip over the chart');
  // Pan with the keys (each frame re-projects the last layout; the worker answers after).
  await canvas.focus();
  await p.page.keyboard.press('w');
  await p.page.keyboard.press('w');
  for (let i = 0; i < 24; i++) {
    await p.page.keyboard.press(i % 2 ? 'a' : 'd');
    await p.page.waitForTimeout(60);
    frames.pan.push(await frame());
  }
  await p.screenshot('snapshot-views-05-1m');
  const s = { hover: stats(frames.hover), pan: stats(frames.pan) };
  const phases = `load ${load}\ndrop→Done ${(tDone - t0) / 1000} s, →live set ${(tLive - tDone) / 1000} s, →stacked layout ${(tBands - tLive) / 1000} s\n`;
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(path.join(OUT, 'snapshot-bands-frame-ms.txt'),
    `${phases}hover ${frames.hover.join(' ')}\npan ${frames.pan.join(' ')}\n${JSON.stringify(s)}\n${layoutInfo}\n`);
  for (const [k, v] of Object.entries(s)) {
    // The median: single frames catch GC pauses and the other tenants of the shared machine
    // (as tests/e2e/cluster.test.mjs); p95 and max are reported.
    assert.ok(v.p50 < 16, `${k} frame times ${frames[k]}`);
  }
  assert.deepEqual(p.consoleErrors, []);
  await context.close();
});
