// End-to-end test of the Ascend DB export in the page: a drop that holds a DB starts the DB
// worker (its own bundle, worker-db) and shows the same rows as the CLI; a drop without one
// never fetches that bundle; the single file, which carries no DB worker, says it does not
// read the DB. Screenshots go to test-output/.
//
// Run: scripts/build-release.sh, then `cd tests/e2e && node --test ascend_db.test.mjs`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO, DIST, serveStatic, launch, ProflensPage } from './lib.mjs';

const FIXTURES = path.join(REPO, '../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch');
// Two rank folders, each with ascend_pytorch_profiler_<rank>.db and analysis.db, no text files.
const DB_LEVEL1 = path.join(FIXTURES, 'db/level1');
// The same capture's text export.
const TEXT_LEVEL1 = path.join(FIXTURES, 'text/level1');
const DB_BUNDLE = /\/worker-db(\.js|_bg\.wasm)$/;

let server;
let browser;

before(async () => {
  for (const d of [DB_LEVEL1, TEXT_LEVEL1]) assert.ok(fs.existsSync(d), `fixture missing: ${d}`);
  server = await serveStatic();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function newPage(url = server.url) {
  const context = await browser.newContext({ viewport: { width: 1500, height: 1000 } });
  return new ProflensPage(await context.newPage(), url);
}

/** Waits until the release build's service worker has installed (it precaches the build). */
async function swReady(page) {
  await page.evaluate(() => ('serviceWorker' in navigator ? navigator.serviceWorker.ready.then(() => true) : true));
}

test('a text-only drop never fetches the DB worker', async () => {
  const p = await newPage();
  const start = server.requests.length;
  await p.open();
  await swReady(p.page);
  await p.openFolder(TEXT_LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('tab-memory').click();
  await p.page.getByTestId('event-row').first().waitFor();
  await p.page.waitForTimeout(300);
  const asked = [...new Set(server.requests.slice(start))].sort();
  assert.ok(asked.some((r) => r.endsWith('/worker_bg.wasm')), `the worker's wasm was fetched: ${asked}`);
  assert.deepEqual(asked.filter((r) => DB_BUNDLE.test(r)), [], `requests: ${asked}`);
  await p.screenshot('db-01-text-drop-memory');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('DB level1 drop: the DB worker reads both ranks, 184 memory rows each, one step', async () => {
  const p = await newPage();
  await p.open();
  const start = server.requests.length;
  await p.openFolder(DB_LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  const asked = [...new Set(server.requests.slice(start))];
  assert.ok(asked.some((r) => r.endsWith('/worker-db_bg.wasm')), `the DB worker's wasm was fetched: ${asked}`);

  const cards = p.page.getByTestId('rank-card');
  assert.equal(await cards.count(), 2);
  assert.match(await cards.first().innerText(), /ascend_pytorch_profiler_0\.db/);
  assert.doesNotMatch(await p.page.locator('body').innerText(), /does not read the DB export/);
  await p.screenshot('db-02-inventory');

  // Memory tab: `proflens memory DIR --format csv` gives 184 rows per rank.
  await p.page.getByTestId('tab-memory').click();
  assert.equal(await p.page.getByTestId('rank-summary-row').count(), 2);
  assert.deepEqual(await p.page.getByTestId('rank-rows').allInnerTexts(), ['184', '184']);
  await p.page.getByTestId('event-row').first().waitFor();
  assert.match(await p.page.getByTestId('row-count').innerText(), /^184 of 184 rows$/);
  await p.page.waitForTimeout(300); // let the chart draw
  await p.screenshot('db-03-memory-rank0');
  await p.page.getByTestId('rank-summary-row').nth(1).click();
  await p.page.waitForTimeout(200);
  await p.page.getByTestId('event-row').first().waitFor();
  assert.match(await p.page.getByTestId('row-count').innerText(), /^184 of 184 rows$/);

  // Steps tab: the capture's one step per rank (a step marker), both ranks in the table.
  await p.page.getByTestId('tab-anomaly').click();
  await p.page.getByTestId('anomaly-view').waitFor();
  await p.page.waitForFunction(() => document.querySelectorAll('[data-testid=anomaly-rank-row]').length === 2);
  await p.page.getByTestId('step-row').first().waitFor();
  assert.equal(await p.page.getByTestId('step-row').count(), 1);
  assert.match(await p.page.getByTestId('card-steps').innerText(), /^1\b/);
  await p.page.waitForTimeout(300);
  await p.screenshot('db-04-steps-rank0');
  assert.deepEqual(p.offOrigin, []);
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});

test('offline: a DB drop works once the DB worker was fetched online', async () => {
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  const p = new ProflensPage(await context.newPage(), server.url);
  await p.open();
  await swReady(p.page);
  await p.page.reload();
  await p.page.waitForFunction(() => !!navigator.serviceWorker.controller);
  // Online, the first DB drop fetches the DB worker through the service worker, which keeps it.
  await p.openFolder(DB_LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  const kept = await p.page.evaluate(async () => {
    const names = (await caches.keys()).filter((k) => k.startsWith('proflens-'));
    const c = await caches.open(names[0]);
    return (await c.keys()).map((r) => new URL(r.url).pathname).filter((u) => /worker-db/.test(u)).sort();
  });
  assert.deepEqual(kept.map((u) => u.replace(/^.*\//, '')), ['worker-db.js', 'worker-db_bg.wasm']);
  // Offline: the page and a new DB drop are served from the cache.
  await context.setOffline(true);
  await context.route('**/*', (route) => route.abort());
  const seen = server.requests.length;
  await p.page.reload();
  await p.page.getByTestId('drop-zone').waitFor();
  await p.openFolder(DB_LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('tab-memory').click();
  assert.deepEqual(await p.page.getByTestId('rank-rows').allInnerTexts(), ['184', '184']);
  assert.equal(server.requests.length, seen, 'the server saw no request while offline');
  await p.screenshot('db-06-offline-memory');
  await context.close();
});

test('single file (no DB worker): a DB drop says the DB export is not read', async () => {
  const single = path.join(DIST, 'proflens.html');
  assert.ok(fs.existsSync(single), `${single} missing: run scripts/build-release.sh`);
  const p = await newPage(pathToFileURL(single).href);
  await p.open();
  await p.openFolder(DB_LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  // The worker read the folders without their DB: the memory analysis names what it lacks, and
  // the Problems tab says, per rank, that this build does not read the DB export.
  assert.match(await p.page.getByTestId('rank-card').first().innerText(), /Memory failed: operator_memory\.csv not found/);
  await p.page.getByTestId('tab-problems').click();
  await p.page.getByTestId('problems').waitFor();
  const problems = await p.page.getByTestId('problems').innerText();
  // Once per rank (each of its analyses reports the folder's note: the run's list says it once),
  // with the way out.
  for (const r of [0, 1]) {
    assert.match(problems, new RegExp(`ascend_pytorch_profiler_${r}\\.db[^\\n]*does not read the DB export: open the hosted page or use the CLI`));
  }
  assert.equal(problems.match(/does not read the DB export/g).length, 2, problems);
  await p.screenshot('db-05-single-file-problems');
  assert.deepEqual(p.consoleErrors, []);
  await p.page.context().close();
});
