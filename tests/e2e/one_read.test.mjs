// Issue 9, browser half: a drop reads each input byte once. Every `Blob.slice` a worker makes
// is counted per file (the worker script is served with a counter in front of it), over a
// drop of the level1 `rank0_ascend_pt` folder (memory + anomaly on one rank): each file read
// is sliced exactly its size in total (the page used to run the two analyses as separate jobs
// and read `trace_view.json` twice), and the exports afterwards (memory CSV, anomaly JSON,
// both the CLI's bytes) slice nothing.
//
// Run: `bash scripts/build-release.sh && node --test tests/e2e/one_read.test.mjs`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO, OUT, serveStatic, launch, ProflensPage } from './lib.mjs';

const RANK0 = path.join(REPO,
  '../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1/rank0_ascend_pt');

// Prepended to the worker script: reports every slice as one console message, so slices of a
// worker terminated afterwards (a one-off export worker) are counted too.
const COUNTER = `(() => {
  const slice = Blob.prototype.slice;
  Blob.prototype.slice = function (a, b, t) {
    const part = slice.call(this, a, b, t);
    const name = this.webkitRelativePath || this.name || '(blob)';
    console.debug('proflens-slice ' + JSON.stringify([name, part.size]));
    return part;
  };
})();
`;

let server;
let browser;

before(async () => {
  assert.ok(fs.existsSync(RANK0), `fixture missing: ${RANK0}`);
  server = await serveStatic();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** Relative path (from the folder's parent, as webkitRelativePath) → size of every file. */
function sizes(dir) {
  const out = new Map();
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(path.relative(path.dirname(dir), p), fs.statSync(p).size);
    }
  };
  walk(dir);
  return out;
}

test('a drop slices each input byte once; exports slice nothing', async () => {
  const context = await browser.newContext({ acceptDownloads: true, serviceWorkers: 'block' });
  const page = await context.newPage();
  const sliced = new Map();
  page.on('console', (m) => {
    const t = m.text();
    if (!t.startsWith('proflens-slice ')) return;
    const [name, n] = JSON.parse(t.slice('proflens-slice '.length));
    sliced.set(name, (sliced.get(name) || 0) + n);
  });
  await page.route('**/worker_loader.js', async (route) => {
    const res = await route.fetch();
    route.fulfill({ response: res, body: COUNTER + (await res.text()) });
  });
  const p = new ProflensPage(page, server.url);
  await p.open();
  await p.openFolder(RANK0);
  assert.equal(await p.waitDone(), 'Done');
  const size = sizes(RANK0);
  assert.ok(sliced.size > 0, 'the counter saw no slice: was the worker script patched?');
  for (const [name, n] of sliced) {
    assert.ok(size.has(name), `sliced a file that is not in the drop: ${name}`);
    assert.equal(n, size.get(name), `${name}: ${n} bytes sliced for a file of ${size.get(name)} B`);
  }
  for (const must of ['trace_view.json', 'operator_memory.csv', 'kernel_details.csv',
    'communication.json', 'step_trace_time.csv']) {
    assert.ok([...sliced.keys()].some((k) => k.endsWith('/' + must)), `${must} not read: ${[...sliced.keys()]}`);
  }
  const afterDrop = JSON.stringify([...sliced]);

  // Exports: the CLI's bytes, written from the results the worker holds.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proflens-one-read-'));
  const cli = (...args) => execFileSync('cargo', ['run', '--quiet', '--bin', 'proflens', '--', ...args],
    { cwd: REPO, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] });
  const csv = cli('memory', RANK0, '--format', 'csv', '--quiet');
  cli('anomaly', RANK0, '--out', path.join(dir, 'cli.json'));
  const download = async (button) => {
    const [d] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }),
      page.getByTestId(button).click()]);
    fs.mkdirSync(OUT, { recursive: true });
    const file = path.join(OUT, `one-read-${d.suggestedFilename()}`);
    await d.saveAs(file);
    return fs.readFileSync(file);
  };
  await page.getByTestId('tab-memory').click();
  const webCsv = await download('export-csv');
  assert.ok(csv.length > 1000 && webCsv.equals(csv), `memory CSV: page ${webCsv.length} B, CLI ${csv.length} B`);
  await page.getByTestId('tab-anomaly').click();
  await page.getByTestId('anomaly-view').waitFor();
  const webJson = await download('anom-export-json');
  const cliJson = fs.readFileSync(path.join(dir, 'cli.json'));
  assert.ok(webJson.equals(cliJson), `anomaly JSON: page ${webJson.length} B, CLI ${cliJson.length} B`);
  assert.equal(JSON.stringify([...sliced]), afterDrop, 'exports read no file');
  assert.deepEqual(p.consoleErrors, []);
  await context.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
