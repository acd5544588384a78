// A worker that dies (out of memory, a wasm trap) is reported for its rank while the other ranks
// finish ("a worker that fails … is reported for its rank while the other ranks
// finish"). The page is served from a copy of dist/ whose worker loader dies, the way a worker
// killed by an out-of-memory trap does (an uncaught error, then silence), on the first Run that
// names rank folder 1; rank 0 runs normally.
//
// Run: scripts/test.sh, or `node --test tests/e2e/worker_failure.test.mjs` after the release build.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO, DIST, ENVELOPE_JS, serveStatic, launch, ProflensPage } from './lib.mjs';

const FAULT = ENVELOPE_JS + `
let handler = null;
let dead = false;
Object.defineProperty(self, 'onmessage', { configurable: true, get() { return handler; }, set(f) { handler = f; } });
self.addEventListener('message', (ev) => {
  if (dead) return;
  const req = proflensEnvelope(ev.data, PROFLENS_REQUESTS);
  // A Run naming rank folder 1: Target::Rank(1).
  if (req && req.name === 'Run' && req.targets.some(([v, i]) => v === 0 && i === 1)) {
    dead = true;
    throw new Error('simulated out of memory (wasm memory.grow failed)');
  }
  if (handler) handler.call(self, ev);
});
`;

let server;
let browser;
let site;

before(async () => {
  site = fs.mkdtempSync(path.join(os.tmpdir(), 'proflens-faulty-dist-'));
  fs.cpSync(DIST, site, { recursive: true });
  const loader = path.join(site, 'worker_loader.js');
  fs.writeFileSync(loader, FAULT + fs.readFileSync(loader, 'utf8'));
  server = await serveStatic(site);
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
  fs.rmSync(site, { recursive: true, force: true });
});

test('a worker that dies is reported for its rank folder; the other rank folder finishes', async () => {
  const context = await browser.newContext({ viewport: { width: 1500, height: 1000 }, serviceWorkers: 'block' });
  const p = new ProflensPage(await context.newPage(), server.url);
  await p.open();
  await p.openFolder(path.join(REPO, 'fixtures/sample/sample_run'));
  assert.equal(await p.waitDone(60_000, ['Done']), 'Done');
  await p.page.getByTestId('tab-memory').click();
  const rows = p.page.getByTestId('rank-summary-row');
  await rows.first().waitFor();
  assert.equal(await rows.count(), 2);
  // Rank 0 has its rows; rank 1 says it failed and why.
  const rowsCell = p.page.getByTestId('rank-rows');
  assert.match(await rowsCell.nth(0).innerText(), /^\d+$/);
  assert.equal(await rowsCell.nth(1).innerText(), 'failed');
  assert.match(await rows.nth(1).getAttribute('title'), /worker stopped: .*simulated out of memory/);
  await rows.nth(1).click();
  assert.match(await p.page.locator('.notice.error').first().innerText(),
    /This rank folder failed: worker stopped: .*simulated out of memory/);
  await p.screenshot('worker-failure-memory');
  // The Problems tab lists both analyses of rank folder 1 as errors on that folder.
  await p.page.getByTestId('tab-problems').click();
  const text = await p.page.getByTestId('problems').innerText();
  for (const what of ['memory analysis', 'steps & bubbles analysis']) {
    assert.match(text, new RegExp(`TARGET-FAILED\\s+sample_run/rank1_ascend_pt[^\\n]*the ${what} did not finish: worker stopped`));
  }
  assert.doesNotMatch(text, /TARGET-FAILED\s+sample_run\/rank0/);
  await p.screenshot('worker-failure-problems');
  // The uncaught worker error is the only console error.
  assert.ok(p.consoleErrors.every((e) => /simulated out of memory/.test(e)), p.consoleErrors.join('\n'));
  await context.close();
});
