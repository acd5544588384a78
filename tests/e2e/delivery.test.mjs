// Delivery tests (issue "Delivery"): the release dist/ served under a sub-path, offline after one
// visit through the service worker, the single-file proflens.html opened from file://, and the
// Content Security Policy. Needs dist/ from scripts/build-release.sh (trunk + scripts/postbuild.py).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO, DIST, serveStatic, launch, ProflensPage } from './lib.mjs';

const LEVEL1 = path.join(REPO, '../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1');
const SINGLE = path.join(DIST, 'proflens.html');

let server;
let browser;

before(async () => {
  assert.ok(fs.existsSync(path.join(DIST, 'sw.js')), 'dist/sw.js missing: build with scripts/build-release.sh');
  server = await serveStatic(DIST, '/proflens/');
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function analyseLevel1(p) {
  await p.openFolder(LEVEL1);
  assert.equal(await p.waitDone(), 'Done');
  await p.page.getByTestId('tab-memory').click();
  assert.deepEqual(await p.page.getByTestId('rank-rows').allInnerTexts(), ['184', '184']);
}

test('served under /proflens/: every asset URL is relative and the page analyses level1', async () => {
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  const p = new ProflensPage(await context.newPage(), server.url);
  await p.open();
  await analyseLevel1(p);
  const outside = server.requests.filter((r) => !r.startsWith('/proflens/'));
  assert.deepEqual(outside, [], `requests outside the sub-path: ${outside}`);
  assert.deepEqual(p.offOrigin, []);
  assert.deepEqual(p.consoleErrors, []);
  await p.screenshot('10-subpath-1366x768');
  await context.close();
});

test('offline after one visit: the service worker serves the page, wasm and worker', async () => {
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  const page = await context.newPage();
  const p = new ProflensPage(page, server.url);
  await p.open();
  // Wait until this build's worker has precached everything and controls the page.
  await page.evaluate(() => navigator.serviceWorker.ready);
  await page.reload();
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  const build = await page.evaluate(() => document.documentElement.dataset.build);
  assert.match(build, /^[0-9a-f]{12}$/);

  // Network off: every request to the server fails from now on.
  await context.setOffline(true);
  await context.route('**/*', (route) => route.abort());
  const seenBefore = server.requests.length;
  await page.reload();
  await p.page.getByTestId('drop-zone').waitFor();
  await analyseLevel1(p);
  assert.equal(server.requests.length, seenBefore, 'the server saw no request while offline');
  await p.screenshot('11-offline-second-visit');
  await context.close();
});

test('single file proflens.html from file:// analyses level1 with no server', async () => {
  assert.ok(fs.existsSync(SINGLE), 'dist/proflens.html missing');
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  const page = await context.newPage();
  const base = 'file://' + SINGLE;
  const p = new ProflensPage(page, base);
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(base);
  await page.getByTestId('drop-zone').waitFor();
  assert.equal(await page.evaluate(() => document.documentElement.dataset.singleFile), 'true');
  await analyseLevel1(p);
  // The view is kept in the hash on file:// too.
  await page.waitForFunction(() => /(^|[#&])tab=memory(&|$)/.test(location.hash));
  const foreign = requests.filter((u) => !u.startsWith(base) && !u.startsWith('blob:') && !u.startsWith('data:'));
  assert.deepEqual(foreign, [], `requests other than the file itself: ${foreign}`);
  assert.deepEqual(p.consoleErrors, []);
  await p.screenshot('12-single-file');
  await context.close();
});

test('Content Security Policy forbids other origins and unhashed inline scripts', async () => {
  for (const file of [path.join(DIST, 'index.html'), SINGLE]) {
    const html = fs.readFileSync(file, 'utf8');
    const m = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/);
    assert.ok(m, `${file}: no CSP meta`);
    const policy = Object.fromEntries(m[1].split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v]));
    assert.ok(!Object.values(policy).flat().some((v) => /^https?:/.test(v) || v === '*'), `${file}: third-party origin in ${m[1]}`);
    assert.ok(!policy['script-src'].includes("'unsafe-inline'"), 'inline scripts must be hashed');
    assert.ok(["'self'", "'none'"].includes(policy['connect-src'][0]) && policy['connect-src'].length === 1);
    // Every executable inline script is covered by a hash in the policy.
    const hashes = new Set(policy['script-src'].filter((v) => v.startsWith("'sha256-")));
    const crypto = await import('node:crypto');
    for (const s of html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)) {
      if (/src=/.test(s[1]) || /type="(application\/octet-stream|text\/plain)"/.test(s[1])) continue;
      const h = `'sha256-${crypto.createHash('sha256').update(s[2], 'utf8').digest('base64')}'`;
      assert.ok(hashes.has(h), `${file}: inline script without hash in the policy`);
    }
  }
});

test('zero network requests during analysis (served page and single file)', async () => {
  // Served page: before the drop only this site's own files; once the service worker controls
  // the page (first visit), the analysis makes no request that reaches the server and none
  // to another origin — workers and wasm come from the versioned cache.
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  const page = await context.newPage();
  const p = new ProflensPage(page, server.url);
  let phase = 'load';
  const seen = [];
  page.on('request', (r) => seen.push({ phase, url: r.url() }));
  await p.open();
  await page.evaluate(() => navigator.serviceWorker.ready);
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  const own = (u) => u.startsWith(server.url) || u.startsWith('blob:') || u.startsWith('data:');
  assert.deepEqual(seen.filter((r) => !own(r.url)), [], 'before the drop: same-origin files only');
  // The page starts its warm workers at load, one after the other. One started before the
  // service worker took control loads its wasm from the network, and on a loaded machine that
  // load can still be in flight at the drop: it belongs to the page load, not the analysis. So
  // the drop waits until every warm worker has its wasm (its message handler is installed).
  const warm = await page.evaluate(() => Math.min(2, navigator.hardwareConcurrency || 1));
  const readyWorkers = async () => {
    const ready = await Promise.all(page.workers().map((w) => w.evaluate(() => typeof self.onmessage === 'function').catch(() => false)));
    return ready.filter(Boolean).length;
  };
  for (const t0 = Date.now(); (await readyWorkers()) < warm; ) {
    assert.ok(Date.now() - t0 < 30000, `the page's ${warm} warm workers were not ready in 30 s`);
    await page.waitForTimeout(50);
  }
  phase = 'analysis';
  const atDrop = server.requests.length;
  await analyseLevel1(p);
  await page.getByTestId('event-row').first().waitFor();
  await page.getByTestId('row-filter').fill('main.py(354)');
  await page.getByTestId('event-row').first().click();
  await page.locator('[data-testid=stack-panel] li.user').waitFor();
  assert.deepEqual(server.requests.slice(atDrop), [], 'requests that reached the server during the analysis');
  assert.deepEqual(seen.filter((r) => r.phase === 'analysis' && !own(r.url)), [], 'requests to other origins');
  assert.deepEqual(p.offOrigin, []);
  await context.close();

  // Single file from file://: after the drop, not a single request but blob:/data: ones.
  const c2 = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  const page2 = await c2.newPage();
  const base = 'file://' + SINGLE;
  const p2 = new ProflensPage(page2, base);
  await page2.goto(base);
  await page2.getByTestId('drop-zone').waitFor();
  const after = [];
  page2.on('request', (r) => after.push(r.url()));
  await analyseLevel1(p2);
  assert.deepEqual(after.filter((u) => !u.startsWith('blob:') && !u.startsWith('data:')), []);
  assert.deepEqual(p2.consoleErrors, []);
  await c2.close();
});

const SNAPSHOT = path.join(REPO, '../shared/fixtures/torch_snapshots/ZidongLiu_DeComFL__memory.pickle');
const HAS_SNAPSHOT_VIEW = fs.existsSync(path.join(REPO, 'src/ui/snapshot_view'));

test('single file proflens.html from file:// analyses a snapshot pickle', { skip: !HAS_SNAPSHOT_VIEW && 'snapshot view not built yet' }, async () => {
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  const page = await context.newPage();
  const base = 'file://' + SINGLE;
  const p = new ProflensPage(page, base);
  await page.goto(base);
  await page.getByTestId('drop-zone').waitFor();
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.getByTestId('open-files').setInputFiles([SNAPSHOT]);
  assert.equal(await p.waitDone(), 'Done');
  await page.getByTestId('snapshot-view').waitFor();
  // EXPECTED.json: the global peak of this trace is entry 11205, 1,783,664,516 bytes active.
  await page.getByTestId('snap-peak-active').filter({ hasText: 'entry 11205' }).waitFor();
  const title = page.getByTestId('snap-live-title');
  await title.filter({ hasText: 'entry 11205' }).waitFor();
  assert.match(await title.innerText(), /1\.66 GiB/);
  // The view is in the hash: the snapshot tab and the selected file.
  await page.waitForFunction(() => /(^|[#&])tab=snapshot(&|$)/.test(location.hash) && /snap\.file=0/.test(location.hash));
  assert.deepEqual(requests.filter((u) => !u.startsWith('blob:') && !u.startsWith('data:')), []);
  assert.deepEqual(p.consoleErrors, []);
  await page.waitForTimeout(300);
  await p.screenshot('13-single-file-snapshot');
  await context.close();
});
