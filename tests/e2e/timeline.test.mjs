// End-to-end test of the steps/bubbles timeline on the real msinsight level1 folder:
// lanes and boxes drawn, W/S/A/D keys, wheel and drag change the view and the worker answers
// for it, a bubble clicked on the canvas is selected in the shared bubble panel, a kernel
// clicked shows its row; frame times stay under 16 ms. Screenshots go to test-output/.
//
// Run: scripts/build-release.sh, then `cd tests/e2e && node --test timeline.test.mjs`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO, serveStatic, launch, ProflensPage } from './lib.mjs';

const LEVEL1 = path.join(REPO, '../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1');
// Geometry of ui/anomaly_view/timeline/draw.rs (CSS px).
const LABEL_W = 150;
const RIGHT = 10;
const BUBBLE_ROW_Y = 47; // bubble row 40..54
const LANES_TOP = 58;
const LANE_H = 22;

let server;
let browser;

before(async () => {
  assert.ok(fs.existsSync(LEVEL1), `fixture missing: ${LEVEL1}`);
  server = await serveStatic();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const span = (s) => { const [a, b] = s.split(',').map(Number); return [a, b, b - a]; };

test('timeline of level1 rank 0: lanes, keys, wheel, drag, a bubble and a kernel clicked', async () => {
  const context = await browser.newContext({ viewport: { width: 1500, height: 1100 } });
  const p = new ProflensPage(await context.newPage(), server.url);
  const page = p.page;
  await p.open();
  await p.openFolder(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  await page.getByTestId('tab-anomaly').click();
  const canvas = page.getByTestId('timeline-canvas');
  await canvas.waitFor();
  // Rank 0: streams 2, 3, hccl and 7 host threads (3 Python, 4 CANN) — cf. tests/timeline_fixture.rs.
  await page.waitForFunction(() => document.querySelector('[data-testid=timeline-canvas]')?.dataset.lanes === '10');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=timeline-canvas]')?.dataset.drawn) > 0);
  assert.equal(await canvas.getAttribute('data-steps'), '1');
  assert.ok(Number(await canvas.getAttribute('data-bubbles')) > 10);
  assert.ok(Number(await canvas.getAttribute('data-boxes')) > 50);
  const [f0, f1, full] = span(await canvas.getAttribute('data-view'));
  assert.equal(f0, 0);
  assert.ok(Math.abs(full - 154.483511) < 1e-5, `full range ${full} ms: last kernel end − step start (§13.1 service 154.48350 ± 0.001)`);
  await p.screenshot('timeline-01-level1-rank0');

  const box = await canvas.boundingBox();
  const pw = box.width - LABEL_W - RIGHT;
  const at = (x, y) => [box.x + x, box.y + y];

  // Keys (widgets::zoom): W zooms in around the centre (×0.8 each), D pans by 20 %, S zooms out (÷0.8), 0 resets.
  await canvas.focus();
  for (let i = 0; i < 5; i++) await page.keyboard.press('w');
  let [v0, v1, vs] = span(await canvas.getAttribute('data-view'));
  assert.ok(Math.abs(vs - full * 0.8 ** 5) < 1e-5, `view span ${vs}`);
  assert.ok(Math.abs((v0 + v1) / 2 - full / 2) < 1e-5);
  // The worker answers for the new view (view ± half a view).
  await page.waitForFunction((want) => {
    const r = document.querySelector('[data-testid=timeline-canvas]').dataset.range.split(',').map(Number);
    return Math.abs((r[1] - r[0]) - want) < 1e-3;
  }, 2 * vs);
  await page.keyboard.press('d');
  const [w0] = span(await canvas.getAttribute('data-view'));
  assert.ok(Math.abs(w0 - (v0 + 0.2 * vs)) < 1e-5, `pan right: ${w0}`);
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('s');
  assert.ok(Math.abs(span(await canvas.getAttribute('data-view'))[2] - vs * 1.25) < 1e-5);
  await p.screenshot('timeline-02-zoomed');
  // Frames while panning with the keys stay under 16 ms.
  const frames = [];
  for (let i = 0; i < 10; i++) {
    await page.keyboard.press(i % 2 ? 'a' : 'd');
    await page.waitForTimeout(40);
    frames.push(Number(await canvas.getAttribute('data-draw-ms')));
  }
  // 9 of 10 under 16 ms: one frame may catch a GC pause or a loaded shared machine.
  const sorted = [...frames].sort((a, b) => a - b);
  assert.ok(sorted[8] < 16, `frame times ${frames}`);
  fs.writeFileSync(path.join(REPO, 'test-output', 'timeline-frame-ms.txt'), frames.join(' ') + '\n');
  await page.keyboard.press('0');
  assert.equal(span(await canvas.getAttribute('data-view'))[2], full);

  // Wheel zooms around the cursor: the time under the pointer stays put.
  const tAt = (x, v) => v[0] + (x - LABEL_W) / pw * (v[1] - v[0]);
  const xw = LABEL_W + pw * 0.3;
  await page.mouse.move(...at(xw, LANES_TOP + 5));
  await page.mouse.wheel(0, -300);
  await page.waitForFunction((f) => {
    const r = document.querySelector('[data-testid=timeline-canvas]').dataset.view.split(',').map(Number);
    return r[1] - r[0] < f;
  }, full);
  const vw = span(await canvas.getAttribute('data-view'));
  assert.ok(vw[2] < full, 'wheel zoomed in');
  // Within a pixel (offsetX is whole CSS pixels).
  assert.ok(Math.abs(tAt(xw, vw) - tAt(xw, [0, full])) < full / pw, 'time under the cursor kept');
  // Drag pans: 200 px to the left moves the view later by 200 px worth of time.
  await page.mouse.move(...at(LABEL_W + pw * 0.6, LANES_TOP + 5));
  await page.mouse.down();
  await page.mouse.move(...at(LABEL_W + pw * 0.6 - 100, LANES_TOP + 5), { steps: 4 });
  await page.mouse.move(...at(LABEL_W + pw * 0.6 - 200, LANES_TOP + 5), { steps: 4 });
  await page.mouse.up();
  const vd = span(await canvas.getAttribute('data-view'));
  assert.ok(Math.abs((vd[0] - vw[0]) - 200 * vw[2] / pw) < 2 * vw[2] / pw, `drag pan ${vd} vs ${vw}`);
  await canvas.dblclick({ position: { x: LABEL_W + 5, y: 5 } });
  await page.waitForFunction((f) => document.querySelector('[data-testid=timeline-canvas]').dataset.view.split(',').map(Number)[1] === f, full);

  // A bubble: the prelaunch window [0, 17.9025 ms) (§13.1) is at the left of the bubble row.
  await page.mouse.click(...at(LABEL_W + pw * (5 / full), BUBBLE_ROW_Y));
  const panel = page.getByTestId('bubble-panel');
  await panel.getByTestId('bubble-id').waitFor();
  assert.equal(await panel.getByTestId('bubble-id').locator('code').innerText(), 'ProfilerStep#50:prelaunch:0');
  assert.match(await panel.getByTestId('bubble-window').innerText(), /17\.903 ms/);
  await p.screenshot('timeline-03-bubble-selected');

  // A kernel: scan the hccl lane (the third lane) for a box, hover shows a tooltip, click shows its row.
  const yh = LANES_TOP + 2 * LANE_H + LANE_H / 2;
  let found = false;
  for (let x = LABEL_W + 2; x < LABEL_W + pw; x += 6) {
    await page.mouse.move(...at(x, yh));
    // A box tooltip names its lane (over a bubble band without a box it describes the bubble).
    const tip = page.getByTestId('timeline-tooltip');
    if (await tip.count() && /stream hccl/.test(await tip.innerText())) {
      await page.mouse.click(...at(x, yh));
      found = true;
      break;
    }
  }
  assert.ok(found, 'a box in the hccl lane');
  const item = page.getByTestId('timeline-item');
  await item.waitFor();
  assert.match(await item.getByTestId('timeline-item-name').innerText(), /^hcom_allReduce__586_\d_1$/);
  const itemText = await item.innerText();
  assert.match(itemText, /stream\s+hccl/);
  assert.match(itemText, /HCCL/);
  assert.match(itemText, /ProfilerStep#50/);
  await p.screenshot('timeline-04-kernel-row');
  assert.deepEqual(p.consoleErrors, []);
  await context.close();
});
