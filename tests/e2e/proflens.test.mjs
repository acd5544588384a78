// End-to-end tests of the trunk-built page (dist/) in Debian's Chromium: the real level1
// fixture through the folder input, the built-in sample, exports against the CLI, and the
// "no network request" promise. Screenshots go to test-output/.
//
// Run: scripts/test.sh (builds dist/ first), or `node --test tests/e2e/` after `trunk build --release`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO, OUT, DIST, serveStatic, launch, ProflensPage } from './lib.mjs';

const LEVEL1 = path.join(REPO, '../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1');

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

async function newPage(opts = {}) {
  const context = await browser.newContext({ viewport: { width: 1500, height: 1000 }, acceptDownloads: true, ...opts });
  const page = await context.newPage();
  return new ProflensPage(page, server.url);
}

test('landing page states that files never leave the browser', async () => {
  const p = await newPage();
  await p.open();
  const text = await p.page.getByTestId('privacy-statement').innerText();
  assert.match(text, /never leave this browser/);
  await p.screenshot('01-landing');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('level1 folder: 2 ranks, 184 rows each, matched call stacks, no network', async () => {
  const p = await newPage();
  await p.open();
  const before = server.requests.length;
  await p.openFolder(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');

  // Inventory: both rank folders, with their files and readiness.
  const cards = p.page.getByTestId('rank-card');
  assert.equal(await cards.count(), 2);
  const cardText = await cards.first().innerText();
  assert.match(cardText, /level1 · rank 0/);
  assert.match(cardText, /Level1/);
  assert.match(cardText, /operator_memory\.csv/);
  await p.screenshot('02-inventory-level1');

  // Memory tab: one overview line per rank, 184 events each.
  await p.page.getByTestId('tab-memory').click();
  const rows = p.page.getByTestId('rank-summary-row');
  assert.equal(await rows.count(), 2);
  assert.deepEqual(await p.page.getByTestId('rank-rows').allInnerTexts(), ['184', '184']);
  await p.page.getByTestId('event-row').first().waitFor();
  assert.match(await p.page.getByTestId('row-count').innerText(), /^184 of 184 rows$/);
  await p.page.waitForTimeout(300); // let the chart draw
  await p.screenshot('03-memory-rank0');

  // A matched call stack: filter on the user frame, open the first row's stack.
  await p.page.getByTestId('row-filter').fill('main.py(354)');
  await p.page.waitForFunction(() => /^\d+ of 184 rows$/.test(document.querySelector('[data-testid=row-count]')?.innerText || '')
    && !/^184 of/.test(document.querySelector('[data-testid=row-count]').innerText));
  const firstRow = p.page.getByTestId('event-row').first();
  assert.match(await firstRow.innerText(), /main\.py\(354\): train/);
  await firstRow.click();
  const userFrame = p.page.locator('[data-testid=stack-panel] li.user');
  await userFrame.waitFor();
  assert.match(await userFrame.innerText(), /imagenet_script\/main\.py\(354\): train$/);
  const frames = await p.page.locator('[data-testid=stack-panel] ol.frames li').count();
  assert.ok(frames > 5, `full stack, one frame per line (got ${frames})`);
  await p.screenshot('04-memory-stack');

  // Rank 1 through the selector.
  await rows.nth(1).click();
  await p.page.getByTestId('event-row').first().waitFor();
  assert.match(await p.page.getByTestId('row-count').innerText(), /184 of 184 rows/);

  // Nothing but the page's own files was requested: no other origin, and after the page
  // loaded only files of this build (each new worker loads its script and wasm; the service
  // worker of the release build precaches the build's files once).
  assert.deepEqual(p.offOrigin, []);
  const own = new Set(['/', ...fs.readdirSync(DIST).map((f) => `/${f}`)]);
  const after = [...new Set(server.requests.slice(before))].sort();
  assert.deepEqual(after.filter((r) => !own.has(r)), [], `requests after the page loaded: ${after}`);
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('load sample: two synthetic ranks analysed', async () => {
  const p = await newPage({ colorScheme: 'dark' });
  await p.open();
  await p.page.getByTestId('load-sample').click();
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('tab-memory').click();
  assert.equal(await p.page.getByTestId('rank-summary-row').count(), 2);
  assert.deepEqual(await p.page.getByTestId('rank-rows').allInnerTexts(), ['24', '24']);
  await p.page.getByTestId('event-row').first().waitFor();
  await p.page.waitForTimeout(300);
  await p.screenshot('05-sample-dark');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});
