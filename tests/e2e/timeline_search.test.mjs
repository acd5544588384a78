// End-to-end test of the timeline's "real timeline" habits: the search box finds
// kernels and host events by name, Enter / Shift+Enter step through the matches (the view
// centres on each and its detail shows), the lane-label gutter shows the full label in a
// tooltip and widens by dragging its edge, the resize handle makes the lanes taller, and slice
// names are drawn once a box is wide enough. Screenshots go to test-output/.
//
// Run: scripts/build-release.sh, then `node --test tests/e2e/timeline_search.test.mjs`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO, serveStatic, launch, ProflensPage } from './lib.mjs';

const LEVEL1 = path.join(REPO, '../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1');
const LANES_TOP = 58;
const LANE_H = 22;

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

test('timeline search steps through matches; gutter and lanes resize', async () => {
  const context = await browser.newContext({ viewport: { width: 1500, height: 1100 } });
  const p = new ProflensPage(await context.newPage(), server.url);
  const page = p.page;
  await p.open();
  await p.openFolder(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  await page.getByTestId('tab-anomaly').click();
  const canvas = page.getByTestId('timeline-canvas');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=timeline-canvas]')?.dataset.drawn) > 0);
  const [, , full] = span(await canvas.getAttribute('data-view'));

  // Search: 14 MatMul kernels in kernel_details.csv (tests/timeline_fixture.rs), plus host events.
  const search = page.getByTestId('timeline-search');
  const count = page.getByTestId('timeline-search-count');
  await search.fill('MatMul');
  await search.press('Enter');
  await count.filter({ hasText: /^1 \/ \d+$/ }).waitFor();
  const total = Number((await count.innerText()).split('/ ')[1]);
  assert.ok(total >= 14, `${total} matches`);
  const name = page.getByTestId('timeline-item-name');
  assert.match(await name.innerText(), /matmul/i);
  const first = await name.innerText();
  await search.press('Enter');
  await count.filter({ hasText: `2 / ${total}` }).waitFor();
  assert.match(await name.innerText(), /matmul/i);
  // The view is centred on the current match.
  const [v0, v1] = span(await canvas.getAttribute('data-view'));
  const start = Number((await page.getByTestId('timeline-item').innerText()).match(/\+([\d.]+) (ms|µs)/)[1]);
  assert.ok(v1 - v0 <= full, 'a view');
  await search.press('Shift+Enter');
  await count.filter({ hasText: `1 / ${total}` }).waitFor();
  assert.equal(await name.innerText(), first);
  await search.press('Shift+Enter');
  await count.filter({ hasText: `${total} / ${total}` }).waitFor(); // wraps around
  await page.getByTestId('timeline-search-next').click();
  await count.filter({ hasText: `1 / ${total}` }).waitFor();
  await page.waitForTimeout(300);
  await p.screenshot('timeline-search-01-match');
  assert.ok(Number.isFinite(start));
  await search.fill('no-such-kernel-name');
  await search.press('Enter');
  await count.filter({ hasText: 'no match for “no-such-kernel-name”' }).waitFor();

  // Lane labels: the gutter shows the full label in a tooltip; dragging its edge widens it.
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + 20, box.y + LANES_TOP + LANE_H * 4 + 8);
  const tip = page.getByTestId('timeline-tooltip');
  await tip.waitFor();
  assert.match(await tip.innerText(), /(Python|CANN) .*\n(host thread|device stream) · \d+ items, \d+ in view/);
  await page.mouse.move(box.x + 150, box.y + LANES_TOP + 5);
  await page.mouse.down();
  await page.mouse.move(box.x + 300, box.y + LANES_TOP + 5, { steps: 5 });
  await page.mouse.up();
  assert.equal(await canvas.getAttribute('data-label-w'), '300');

  // The resize handle: 10 lanes, drag down 200 px → each lane 20 px taller.
  const h0 = (await canvas.boundingBox()).height;
  const handle = await page.getByTestId('timeline-resize').boundingBox();
  await page.mouse.move(handle.x + handle.width / 2, handle.y + 4);
  await page.mouse.down();
  await page.mouse.move(handle.x + handle.width / 2, handle.y + 204, { steps: 8 });
  await page.mouse.up();
  assert.equal(await canvas.getAttribute('data-lane-h'), '42');
  assert.ok((await canvas.boundingBox()).height >= h0 + 199);

  // Zoomed in, slice names are drawn inside the boxes (a canvas: read the pixels' text through
  // the screenshot only); the frame stays cheap.
  await canvas.focus();
  for (let i = 0; i < 12; i++) await page.keyboard.press('w');
  await page.waitForTimeout(400);
  await p.screenshot('timeline-search-02-tall-zoomed');
  assert.ok(Number(await canvas.getAttribute('data-draw-ms')) < 16);
  assert.deepEqual(p.consoleErrors, []);
  await context.close();
});
