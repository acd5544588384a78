// End-to-end test of the timeline's flow arrows and stacked ranks:
// 1. HTA's nccl trace: select an NCCL kernel (search), its launch is drawn as an arrow and
//    named in the detail panel (`cudaLaunchKernelExC`, correlation 25941 — read from the JSON:
//    kernel ts 4458676524716.094, call ts 4458676524703.113); the link jumps to the call, whose
//    panel names the kernel back.
// 2. HTA's trace_filter pair: "all ranks" stacks both ranks' lanes; aligned on
//    ProfilerStep#552 the offsets are the step's start in each rank (607.361 ms and
//    607.954 ms after each rank's ProfilerStep#551: the markers' ts in the JSON); keys and
//    search work across ranks.
// Screenshots go to test-output/timeline-flows-*.png.
//
// Run: scripts/build-release.sh, then `node --test tests/e2e/timeline_flows.test.mjs`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO, serveStatic, launch, ProflensPage } from './lib.mjs';

const HTA = path.join(REPO, '../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data');
const NCCL = path.join(HTA, 'nccl_parser_config');
const TF = path.join(HTA, 'trace_filter');
const KERNEL = 'ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)';

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

const span = (s) => { const [a, b] = s.split(',').map(Number); return [a, b, b - a]; };
const STATE = ['data-ranks', 'data-offsets', 'data-selected', 'data-parts', 'data-arrows'];
const attr = (page, name) => page.getByTestId(STATE.includes(name) ? 'timeline-state' : 'timeline-canvas').getAttribute(name);
/** Polls a canvas attribute until `pred` holds (node-side: the page's CSP forbids eval). */
async function waitAttr(page, name, pred, timeout = 30_000) {
  const t0 = Date.now();
  for (;;) {
    const v = await attr(page, name);
    if (v !== null && pred(v)) return v;
    if (Date.now() - t0 > timeout) throw new Error(`${name} = ${v}`);
    await page.waitForTimeout(50);
  }
}

async function openTimeline(p, dir) {
  await p.open();
  await p.openFolder(dir);
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('tab-anomaly').click();
  await p.page.waitForFunction(() => Number(document.querySelector('[data-testid=timeline-canvas]')?.dataset.drawn) > 0);
}

test('GPU rank: a kernel shows its launch as an arrow, named and clickable', async () => {
  const context = await browser.newContext({ viewport: { width: 1500, height: 1100 } });
  const p = new ProflensPage(await context.newPage(), server.url);
  const page = p.page;
  await openTimeline(p, NCCL);
  const search = page.getByTestId('timeline-search');
  await search.fill('ncclKernel_AllReduce_RING_LL_Sum_float');
  await search.press('Enter');
  const count = page.getByTestId('timeline-search-count');
  await count.filter({ hasText: '1 / 15' }).waitFor();
  const name = page.getByTestId('timeline-item-name');
  assert.equal(await name.innerText(), KERNEL);
  assert.match(await page.getByTestId('timeline-item').innerText(), /4458676524716\.094 µs/);
  assert.doesNotMatch(await page.getByTestId('timeline-item').innerText(), /kernel_details\.csv/);
  // Kernel classes in GPU terms (as the legend): an NCCL kernel is communication, not HCCL.
  assert.match(await page.getByTestId('timeline-item').innerText(), /core \/ class\s+NCCL \/ communication/);
  assert.doesNotMatch(await page.getByTestId('timeline-item').innerText(), /HCCL/);
  // The launch: one link, named, and one arrow drawn.
  const flows = page.getByTestId('timeline-flows');
  await flows.filter({ hasText: 'launched by (1)' }).waitFor();
  const link = page.getByTestId('timeline-flow-link');
  assert.equal(await link.count(), 1);
  const text = await link.innerText();
  assert.match(text, /^cudaLaunchKernelExC · 13\.0 µs earlier \(ac2g 25941\) · 2910249\/2919752$/);
  await waitAttr(page, 'data-arrows', (v) => v === '1');
  // Zoom in around the kernel's start (the pointer on it; W zooms around the pointer) until
  // the 13 µs arrow is long.
  const canvas = page.getByTestId('timeline-canvas');
  await canvas.focus();
  const [, , full] = span(await attr(page, 'data-view'));
  const [lane, ks] = (await attr(page, 'data-selected')).split(',').map(Number);
  const box = await canvas.boundingBox();
  const lw = Number(await attr(page, 'data-label-w'));
  const laneH = Number(await attr(page, 'data-lane-h'));
  // The pointer is placed to the pixel: place it again before each key, halfway between the
  // launch (13 µs before) and the kernel's start.
  const at = ks - 0.0065;
  for (let i = 0; i < 60; i++) {
    const [v0, v1, s] = span(await attr(page, 'data-view'));
    if (s < 0.06) break;
    await page.mouse.move(box.x + lw + (at - v0) / (v1 - v0) * (box.width - lw - 10), box.y + 58 + laneH * (lane + 0.5));
    await page.keyboard.press('w');
  }
  const [z0, z1, zoomed] = span(await attr(page, 'data-view'));
  assert.ok(zoomed < 0.1, `${zoomed} of ${full}`);
  assert.ok(z0 < ks - 0.013 && ks < z1, `the launch and the kernel start in view: ${z0},${z1} ∌ ${ks}`);
  await page.mouse.move(box.x + box.width / 2, box.y + box.height + 40);
  await page.waitForTimeout(400);
  await page.getByTestId('timeline').screenshot({ path: path.join(REPO, 'test-output/timeline-flows-01-kernel-launch.png') });
  assert.ok(Number(await attr(page, 'data-draw-ms')) < 16);
  // Jump to the call: its panel names the kernel it launched.
  await link.click();
  await name.filter({ hasText: 'cudaLaunchKernelExC' }).waitFor();
  assert.match(await page.getByTestId('timeline-item').innerText(), /4458676524703\.113 µs/);
  await flows.filter({ hasText: 'launches (1)' }).waitFor();
  assert.match(await link.innerText(), /^ncclKernel_AllReduce_RING_LL_Sum_float.* · 13\.0 µs later \(ac2g 25941\) · 40$/);
  await waitAttr(page, 'data-arrows', (v) => v === '1');
  await page.waitForTimeout(300);
  await page.getByTestId('timeline').screenshot({ path: path.join(REPO, 'test-output/timeline-flows-02-call-selected.png') });
  assert.deepEqual(p.consoleErrors, []);
  await context.close();
});

test('two GPU ranks stacked on one timeline, aligned on a step', async () => {
  const context = await browser.newContext({ viewport: { width: 1500, height: 1100 } });
  const p = new ProflensPage(await context.newPage(), server.url);
  const page = p.page;
  await openTimeline(p, TF);
  assert.equal(await attr(page, 'data-ranks'), '1');
  const lanes1 = Number(await attr(page, 'data-lanes'));
  await page.getByTestId('timeline-multi').check();
  await waitAttr(page, 'data-parts', (v) => v === '2');
  const lanes2 = Number(await attr(page, 'data-lanes'));
  assert.ok(lanes2 > lanes1, `${lanes2} lanes stacked, ${lanes1} alone`);
  // Each rank's lanes are labelled with the rank in the gutter (tooltip of the last lane).
  const box = await page.getByTestId('timeline-canvas').boundingBox();
  const laneH = Number(await attr(page, 'data-lane-h'));
  await page.mouse.move(box.x + 20, box.y + 58 + laneH * (lanes2 - 1) + laneH / 2);
  const tip = page.getByTestId('timeline-tooltip');
  await tip.waitFor();
  assert.match(await tip.innerText(), /rank 1 · /);
  await page.mouse.move(box.x + 20, box.y + 58 + laneH / 2);
  await tip.filter({ hasText: /rank 0 · / }).waitFor();
  // Aligned on ProfilerStep#552: its start in each rank (relative to the rank's first step).
  assert.equal(await attr(page, 'data-offsets'), '0.000000,0.000000');
  await page.getByTestId('timeline-align').selectOption('ProfilerStep#552');
  await waitAttr(page, 'data-offsets', (v) => v === '607.361000,607.954000');
  await page.mouse.move(box.x + box.width / 2, box.y + box.height + 50);
  // Keys: zoom around the aligned step start, then pan; both ranks keep boxes in view.
  await page.getByTestId('timeline-reset').click();
  const canvas = page.getByTestId('timeline-canvas');
  await canvas.focus();
  for (let i = 0; i < 4; i++) await page.keyboard.press('w');
  await page.keyboard.press('d');
  await page.waitForTimeout(500);
  const [v0, v1] = span(await attr(page, 'data-view'));
  assert.ok(v1 - v0 < 660, `${v0},${v1}`);
  await waitAttr(page, 'data-boxes', (v) => Number(v) > 0);
  await page.getByTestId('timeline').screenshot({ path: path.join(REPO, 'test-output/timeline-flows-03-two-ranks-aligned.png') });
  // Search finds kernels of both ranks.
  const search = page.getByTestId('timeline-search');
  await search.fill('ncclKernel');
  await search.press('Enter');
  const count = page.getByTestId('timeline-search-count');
  await count.filter({ hasText: /^1 \/ \d+$/ }).waitFor();
  assert.ok(Number(await attr(page, 'data-arrows')) >= 0);
  // Back to one rank.
  await page.getByTestId('timeline-multi').uncheck();
  await waitAttr(page, 'data-ranks', (v) => v === '1');
  await waitAttr(page, 'data-lanes', (v) => Number(v) === lanes1);
  assert.deepEqual(p.consoleErrors, []);
  await context.close();
});
